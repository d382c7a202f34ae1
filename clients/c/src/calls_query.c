/* The query calls: pair tests, broadphase pairs, contacts, ray casts,
 * sweeps and overlaps. None is a mutation (contacts updates only the
 * world's pair cache, which a repeat recomputes). */
#include <math.h>

#include "cqc_int.h"

static void w_item(cqc_w *w, const cqc_shape *s, const cqc_pose *p)
{
    cqc__w_map(w, 2);
    cqc__w_str(w, "shape");
    cqc__w_shape(w, s);
    cqc__w_str(w, "pose");
    cqc__w_pose(w, p);
}

static void w_pair(cqc_w *w, const cqc_pair *p)
{
    cqc__w_map(w, 3);
    cqc__w_str(w, "a");
    w_item(w, &p->a, &p->pose_a);
    cqc__w_str(w, "b");
    w_item(w, &p->b, &p->pose_b);
    cqc__w_str(w, "skin");
    cqc__w_dbl(w, p->skin);
}

static bool pair_ok(const cqc_pair *p)
{
    return cqc__shape_ok(&p->a) && cqc__shape_ok(&p->b);
}

cqc_status cqc_q_pair(cqc_conn *c, const cqc_pair *p, cqc_contact *out)
{
    if (!p || !out || !pair_ok(p))
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "POST", "/v1/pair", NULL, NULL, NULL, true);
    if (s)
        return s;
    w_pair(&w, p);
    return cqc__end(c, &w, CQC_K_CONTACT, false, out, 0);
}

cqc_status cqc_q_pairs(cqc_conn *c, const cqc_pair *pairs, size_t n, cqc_contact *out)
{
    if ((n && (!pairs || !out)) || n > UINT32_MAX)
        return CQC_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!pair_ok(&pairs[i]))
            return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "POST", "/v1/pairs", NULL, NULL, NULL, true);
    if (s)
        return s;
    cqc__w_map(&w, 1);
    cqc__w_str(&w, "pairs");
    cqc__w_arr(&w, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        w_pair(&w, &pairs[i]);
    return cqc__end(c, &w, CQC_K_CONTACTS_N, false, out, n);
}

cqc_status cqc_q_broadphase(cqc_conn *c, const char *world, cqc_id_pairs *out)
{
    if (!out)
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "GET", "/v1/worlds/", world, "/pairs", NULL, false);
    return s ? s : cqc__end(c, &w, CQC_K_ID_PAIRS, false, out, 0);
}

cqc_status cqc_q_contacts(cqc_conn *c, const char *world, const cqc_contacts_query *q, cqc_contacts *out)
{
    if (!out || (q && q->ids_count && !q->ids) || (q && q->ids_count > UINT32_MAX))
        return CQC_EINVAL;
    for (size_t i = 0; q && i < q->ids_count; i++)
        if (!q->ids[i])
            return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "POST", "/v1/worlds/", world, "/contacts", NULL, true);
    if (s)
        return s;
    bool filter = q && q->ids, dt = q && q->has_dt;
    cqc__w_map(&w, (uint32_t)filter + dt);
    if (filter) {
        cqc__w_str(&w, "ids");
        cqc__w_arr(&w, (uint32_t)q->ids_count);
        for (size_t i = 0; i < q->ids_count; i++)
            cqc__w_str(&w, q->ids[i]);
    }
    if (dt) {
        cqc__w_str(&w, "dt");
        cqc__w_dbl(&w, q->dt);
    }
    return cqc__end(c, &w, CQC_K_CONTACTS, false, out, 0);
}

static void w_ray(cqc_w *w, const cqc_ray *r)
{
    bool bounded = r->max_distance > 0 && isfinite(r->max_distance);
    cqc__w_map(w, 3u + bounded);
    cqc__w_str(w, "origin");
    cqc__w_vec(w, r->origin, 3);
    cqc__w_str(w, "direction");
    cqc__w_vec(w, r->direction, 3);
    if (bounded) {
        cqc__w_str(w, "max_distance");
        cqc__w_dbl(w, r->max_distance);
    }
    cqc__w_str(w, "mask");
    cqc__w_uint(w, r->mask ? r->mask : UINT32_MAX);
}

cqc_status cqc_q_raycast(cqc_conn *c, const char *world, const cqc_ray *rays, size_t n, cqc_ray_hit *out)
{
    if ((n && (!rays || !out)) || n > UINT32_MAX)
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "POST", "/v1/worlds/", world, "/raycast", NULL, true);
    if (s)
        return s;
    cqc__w_map(&w, 1);
    cqc__w_str(&w, "rays");
    cqc__w_arr(&w, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        w_ray(&w, &rays[i]);
    return cqc__end(c, &w, CQC_K_HITS, false, out, n);
}

cqc_status cqc_q_sweep(cqc_conn *c, const char *world, const cqc_sweep *q, cqc_sweep_hit *out)
{
    if (!q || !out || !cqc__shape_ok(&q->shape))
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "POST", "/v1/worlds/", world, "/sweep", NULL, true);
    if (s)
        return s;
    cqc__w_map(&w, 4);
    cqc__w_str(&w, "shape");
    cqc__w_shape(&w, &q->shape);
    cqc__w_str(&w, "pose");
    cqc__w_pose(&w, &q->pose);
    cqc__w_str(&w, "translation");
    cqc__w_vec(&w, q->translation, 3);
    cqc__w_str(&w, "mask");
    cqc__w_uint(&w, q->mask ? q->mask : UINT32_MAX);
    return cqc__end(c, &w, CQC_K_SWEEP, false, out, 0);
}

cqc_status cqc_q_overlap(cqc_conn *c, const char *world, const cqc_overlap *q, cqc_ids *out)
{
    if (!q || !out || !cqc__shape_ok(&q->shape))
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "POST", "/v1/worlds/", world, "/overlap", NULL, true);
    if (s)
        return s;
    cqc__w_map(&w, 3);
    cqc__w_str(&w, "shape");
    cqc__w_shape(&w, &q->shape);
    cqc__w_str(&w, "pose");
    cqc__w_pose(&w, &q->pose);
    cqc__w_str(&w, "mask");
    cqc__w_uint(&w, q->mask ? q->mask : UINT32_MAX);
    return cqc__end(c, &w, CQC_K_IDS, false, out, 0);
}

cqc_status cqc_pair_test(cqc_conn *c, const cqc_pair *p, cqc_contact *out) { CQC_BLOCK(c, cqc_q_pair(c, p, out)); }
cqc_status cqc_pairs_test(cqc_conn *c, const cqc_pair *pairs, size_t n, cqc_contact *out)
{
    CQC_BLOCK(c, cqc_q_pairs(c, pairs, n, out));
}
cqc_status cqc_broadphase(cqc_conn *c, const char *world, cqc_id_pairs *out)
{
    CQC_BLOCK(c, cqc_q_broadphase(c, world, out));
}
cqc_status cqc_contacts_get(cqc_conn *c, const char *world, const cqc_contacts_query *q, cqc_contacts *out)
{
    CQC_BLOCK(c, cqc_q_contacts(c, world, q, out));
}
cqc_status cqc_raycast(cqc_conn *c, const char *world, const cqc_ray *rays, size_t n, cqc_ray_hit *out)
{
    CQC_BLOCK(c, cqc_q_raycast(c, world, rays, n, out));
}
cqc_status cqc_sweep_test(cqc_conn *c, const char *world, const cqc_sweep *q, cqc_sweep_hit *out)
{
    CQC_BLOCK(c, cqc_q_sweep(c, world, q, out));
}
cqc_status cqc_overlap_test(cqc_conn *c, const char *world, const cqc_overlap *q, cqc_ids *out)
{
    CQC_BLOCK(c, cqc_q_overlap(c, world, q, out));
}

void cqc_quat_axis_angle(const double axis[3], double angle, double q[4])
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (!(n > 0)) {
        q[0] = q[1] = q[2] = 0;
        q[3] = 1;
        return;
    }
    double s = sin(angle / 2) / n;
    q[0] = axis[0] * s;
    q[1] = axis[1] * s;
    q[2] = axis[2] * s;
    q[3] = cos(angle / 2);
}

void cqc_quat_mul(const double a[4], const double b[4], double q[4])
{
    double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    q[0] = x, q[1] = y, q[2] = z, q[3] = w;
}
