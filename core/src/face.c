/* The feature of any convex shape that faces a direction, as a world-space
 * clipping polygon: what the general convex path clips once GJK/EPA have
 * found the normal. Hull features: face f, vertex v (hull vertex index),
 * edge = the face-loop slot that starts it (a half-edge id). */
#include "box.h"

/* The face of a solid hull (dim 3) or one side of a flat one (dim 2) whose
 * world normal is most aligned with dir. */
static int cq_hull_face_toward(const cq_hull *h, const cq_xform *x, cq_vec3 dir)
{
    cq_vec3 local = cq_mul_mtv(&x->r, dir);
    int best = 0;
    double best_dot = cq_dot(h->faces[0].normal, local);
    for (int f = 1; f < h->face_count; f++) {
        double d = cq_dot(h->faces[f].normal, local);
        best = d > best_dot ? f : best;
        best_dot = d > best_dot ? d : best_dot;
    }
    return best;
}

static bool cq_hull_feature(const cq_hull *h, const cq_xform *x, cq_vec3 dir, cq_face *out)
{
    if (h->dim < 2) { /* a point or a segment: all of it */
        out->count = h->vertex_count;
        for (int k = 0; k < h->vertex_count; k++) {
            out->v[k] = cq_xform_point(x, h->vertices[k]);
            out->vid[k] = (uint16_t)k, out->eid[k] = 0;
        }
        out->normal = dir, out->fid = 0;
        return true;
    }
    int f = cq_hull_face_toward(h, x, dir);
    const cq_hull_face *face = &h->faces[f];
    if (face->count > CQ_FACE_MAX)
        return false;
    out->count = face->count;
    for (int k = 0; k < face->count; k++) {
        uint16_t v = h->face_vertices[face->first + k];
        out->v[k] = cq_xform_point(x, h->vertices[v]);
        out->vid[k] = v, out->eid[k] = (uint16_t)(face->first + k);
    }
    out->normal = cq_mul_mv(&x->r, face->normal), out->fid = (uint16_t)f;
    return true;
}

void cq__box_face_compact(cq_face *f, cq_vec3 dir)
{
    int m = 0; /* compacted in place: m <= k */
    for (int k = 0; k < f->count; k++) {
        if (m > 0 && cq_coincident(f->v[k], f->v[m - 1])) {
            f->eid[m - 1] = f->eid[k]; /* the edge that leaves this corner */
            continue;
        }
        f->v[m] = f->v[k], f->vid[m] = f->vid[k], f->eid[m] = f->eid[k];
        m++;
    }
    if (m > 1 && cq_coincident(f->v[m - 1], f->v[0]))
        m--;
    f->count = m;
    if (m < 3)
        f->normal = dir;
}

/* A box face keeps its distinct vertices only: a zero width, or one so
 * small that the corners round together (half 1e-20), makes it the
 * segment (or point) it is, and a segment's rules apply to it (a polygon
 * with coincident corners has no sides). Decided from the computed
 * corners, not the extents: a normal face passes unchanged. */
static void cq_box_feature(const cq_shape *s, const cq_xform *x, cq_vec3 dir, cq_face *out)
{
    cq_obb o = cq_obb_from_box(s, x);
    cq__box_face(&o, cq__box_face_toward(&o, &dir), out);
    cq__box_face_compact(out, dir);
}

bool cq__shape_face(const cq_shape *s, const cq_xform *x, cq_vec3 dir, cq_face *out)
{
    switch (s->type) {
    case CQ_SPHERE:
        *out = (cq_face){.count = 1, .v = {x->p}, .normal = dir};
        return true;
    case CQ_CAPSULE: {
        cq_vec3 h = cq_scale(x->r.c[1], s->capsule.half_height);
        *out = (cq_face){.count = 2, .v = {cq_add(x->p, h), cq_sub(x->p, h)}, .vid = {0, 1}, .normal = dir};
        return true;
    }
    case CQ_BOX:
        cq_box_feature(s, x, dir, out);
        return true;
    case CQ_TRIANGLE: {
        cq_vec3 t[3], n;
        for (int i = 0; i < 3; i++)
            t[i] = cq_xform_point(x, s->triangle.v[i]);
        bool flat = !cq_normalize(cq_cross(cq_sub(t[1], t[0]), cq_sub(t[2], t[0])), 1e-300, &n);
        *out = cq__triangle_face(t, cq_dot(n, dir) < 0 ? cq_neg(n) : n, flat);
        return true;
    }
    case CQ_CONVEX:
        return cq_hull_feature(s->convex.hull, x, dir, out);
    case CQ_MESH:
    case CQ_PLANE:
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return false;
}
