/* Box features. Vertex ids set bit k when local coordinate k is negative;
 * an edge along axis k is 4k + the sign bits of the other two coordinates,
 * lower axis first. */
#include "box.h"

static uint16_t cq_vertex_id(const double sign[3])
{
    return (uint16_t)((sign[0] < 0) | (sign[1] < 0) << 1 | (sign[2] < 0) << 2);
}

static uint16_t cq_edge_id(int k, const double sign[3])
{
    int lo = k == 0 ? 1 : 0, hi = k == 2 ? 1 : 2;
    return (uint16_t)(4 * k + ((sign[lo] < 0) | (sign[hi] < 0) << 1));
}

static cq_vec3 cq_box_point(const cq_obb *box, const double sign[3])
{
    cq_vec3 p = box->center;
    for (int k = 0; k < 3; k++)
        p = cq_mad(p, box->axes.c[k], sign[k] * cq_comp(box->half, k));
    return p;
}

void cq_box_face(const cq_obb *box, int id, cq_face *out)
{
    int k = id / 2, u = (k + 1) % 3, v = (k + 2) % 3;
    double s = (id & 1) ? -1 : 1;
    /* Around the face: (+u,+v) (-u,+v) (-u,-v) (+u,-v); edge m runs from
     * vertex m to m+1 and varies u for even m, v for odd m. */
    static const double su[4] = {1, -1, -1, 1}, sv[4] = {1, 1, -1, -1};
    out->count = 4;
    for (int m = 0; m < 4; m++) {
        double sign[3];
        sign[k] = s, sign[u] = su[m], sign[v] = sv[m];
        out->v[m] = cq_box_point(box, sign);
        out->vid[m] = cq_vertex_id(sign);
        out->eid[m] = cq_edge_id(m % 2 == 0 ? u : v, sign);
    }
    out->normal = cq_scale(box->axes.c[k], s);
    out->fid = (uint16_t)id;
}

int cq_box_face_toward(const cq_obb *box, cq_vec3 dir)
{
    int best = 0;
    double best_dot = -INFINITY;
    for (int k = 0; k < 3; k++) {
        double d = cq_dot(box->axes.c[k], dir);
        if (fabs(d) > best_dot)
            best_dot = fabs(d), best = cq_box_face_id(k, d);
    }
    return best;
}

uint16_t cq_box_edge_toward(const cq_obb *box, int k, cq_vec3 dir, cq_vec3 *p, cq_vec3 *q)
{
    double sign[3];
    for (int m = 0; m < 3; m++)
        sign[m] = cq_dot(box->axes.c[m], dir) < 0 ? -1 : 1;
    sign[k] = 1;
    *p = cq_box_point(box, sign);
    sign[k] = -1;
    *q = cq_box_point(box, sign);
    return cq_edge_id(k, sign);
}
