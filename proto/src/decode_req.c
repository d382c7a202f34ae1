/* Request bodies of the stateless pair tests and the world queries
 * (API.md section 2): pair, pairs, contacts, raycast, sweep, overlap. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"

static const char *const posed_fields[] = {"shape", "pose", NULL};
static const char *const pair_fields[] = {"a", "b", "skin", "explain", NULL};
static const char *const pairs_fields[] = {"pairs", NULL};
static const char *const contacts_fields[] = {"ids", "dt", NULL};
static const char *const raycast_fields[] = {"rays", "all", NULL};
static const char *const ray_fields[] = {"origin", "direction", "max_distance", "mask", NULL};
static const char *const sweep_fields[] = {"shape", "pose", "translation", "mask", NULL};
static const char *const overlap_fields[] = {"shape", "pose", "mask", NULL};

/* The default ray length: "unbounded", yet finite as cq_raycast wants. */
#define RAY_UNBOUNDED 1e300

/* body[key] as {"shape", "pose"?}. */
static int decode_posed(cqp_decoder *d, const json_t *body, const char *key, cqp_posed *out)
{
    const json_t *v;
    int mark;
    if (cqpd_enter(d, body, key, true, &v, &mark) < 0)
        return -1;
    int rc = -1;
    if (cqpd_object(d, v, posed_fields, "a posed shape") == 0 && cqpd_field_shape(d, v, "shape", &out->shape) > 0) {
        if (cqpd_field_pose(d, v, "pose", false, &out->pose) < 0)
            cqp_shape_release(&out->shape);
        else
            rc = 0;
    }
    cqpd_pop(d, mark);
    return rc;
}

void cqp_pair_req_release(cqp_pair_req *r)
{
    cqp_shape_release(&r->a.shape);
    cqp_shape_release(&r->b.shape);
    memset(r, 0, sizeof *r);
}

int cqp_decode_pair(cqp_decoder *d, const json_t *body, cqp_pair_req *out)
{
    memset(out, 0, sizeof *out);
    if (cqpd_object(d, body, pair_fields, "a pair request") || decode_posed(d, body, "a", &out->a))
        return -1;
    if (decode_posed(d, body, "b", &out->b) || cqpd_field_nonneg(d, body, "skin", false, &out->skin) < 0 ||
        cqpd_field_bool(d, body, "explain", &out->explain) < 0) {
        cqp_pair_req_release(out);
        return -1;
    }
    return 0;
}

void cqp_pairs_req_release(cqp_pairs_req *r)
{
    for (int i = 0; i < r->count; i++)
        cqp_pair_req_release(&r->items[i]);
    free(r->items);
    memset(r, 0, sizeof *r);
}

int cqp_decode_pairs(cqp_decoder *d, const json_t *body, cqp_pairs_req *out)
{
    const json_t *a;
    int mark;
    size_t n;
    memset(out, 0, sizeof *out);
    if (cqpd_object(d, body, pairs_fields, "a pairs request") || cqpd_enter(d, body, "pairs", true, &a, &mark) < 0)
        return -1;
    int rc = cqpd_array_limited(d, a, false, cqpd_limit(d->limits ? d->limits->pairs : 0, INT_MAX), "items", &n);
    if (rc == 0 && n > 0) {
        out->items = calloc(n, sizeof *out->items);
        if (!out->items)
            rc = cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        int inner = cqpd_push_index(d, i);
        rc = cqp_decode_pair(d, json_array_get(a, i), &out->items[i]);
        cqpd_pop(d, inner);
        if (rc == 0)
            out->count++;
    }
    cqpd_pop(d, mark);
    if (rc)
        cqp_pairs_req_release(out);
    return rc;
}

void cqp_contacts_req_release(cqp_contacts_req *r)
{
    free(r->ids);
    free(r->id_ptrs);
    memset(r, 0, sizeof *r);
}

/* "ids": kept non-NULL even when empty, since a present filter with no
 * ids selects no pair (NULL would select them all). */
static int decode_id_filter(cqp_decoder *d, const json_t *a, cqp_contacts_req *out)
{
    size_t n;
    if (cqpd_array_limited(d, a, false, INT_MAX, "ids", &n))
        return -1;
    out->ids = calloc(n ? n : 1, sizeof *out->ids);
    out->id_ptrs = calloc(n ? n : 1, sizeof *out->id_ptrs);
    if (!out->ids || !out->id_ptrs)
        return cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int mark = cqpd_push_index(d, i);
        int rc = cqp_decode_id(d, json_array_get(a, i), out->ids[i]);
        cqpd_pop(d, mark);
        if (rc)
            return -1;
        out->id_ptrs[i] = out->ids[i];
    }
    out->id_count = (int)n;
    return 0;
}

int cqp_decode_contacts(cqp_decoder *d, const json_t *body, cqp_contacts_req *out)
{
    const json_t *a;
    int mark;
    memset(out, 0, sizeof *out);
    if (cqpd_object(d, body, contacts_fields, "a contacts request"))
        return -1;
    int in = cqpd_enter(d, body, "ids", false, &a, &mark);
    if (in > 0) {
        int rc = decode_id_filter(d, a, out);
        cqpd_pop(d, mark);
        if (rc)
            in = -1;
    }
    if (in < 0 || cqpd_field_nonneg(d, body, "dt", false, &out->dt) < 0) {
        cqp_contacts_req_release(out);
        return -1;
    }
    return 0;
}

/* A ray direction of any non-zero length, made unit. Dividing by the
 * largest component first keeps huge and tiny vectors from overflowing or
 * underflowing the length. */
static int decode_direction(cqp_decoder *d, const json_t *ray, cq_vec3 *out)
{
    const json_t *v;
    int mark;
    cq_vec3 dir;
    if (cqpd_enter(d, ray, "direction", true, &v, &mark) < 0)
        return -1;
    int rc = cqpd_finite_vec3(d, v, &dir);
    if (rc == 0) {
        double m = fmax(fabs(dir.x), fmax(fabs(dir.y), fabs(dir.z)));
        if (m == 0) {
            rc = cqpd_fail(d, CQP_P_BAD_VALUE, "must be a non-zero vector");
        } else {
            dir = cq_v3(dir.x / m, dir.y / m, dir.z / m);
            *out = cq_scale(dir, 1 / cq_len(dir));
        }
    }
    cqpd_pop(d, mark);
    return rc;
}

/* A ray's length, >= 0; any length beyond RAY_UNBOUNDED (a client's way of
 * saying "no limit", such as float's maximum) means the same. */
static int decode_max_distance(cqp_decoder *d, const json_t *ray, double *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, ray, "max_distance", false, &v, &mark);
    if (in <= 0)
        return in;
    double x = 0;
    int rc = cqpd_finite(d, v, &x);
    if (rc == 0 && x < 0)
        rc = cqpd_fail(d, CQP_P_BAD_VALUE, "must be >= 0");
    if (rc == 0)
        *out = fmin(x, RAY_UNBOUNDED);
    cqpd_pop(d, mark);
    return rc;
}

static int decode_ray(cqp_decoder *d, const json_t *v, cq_world_ray *out)
{
    out->ray.max_distance = RAY_UNBOUNDED;
    out->mask = UINT32_MAX;
    if (cqpd_object(d, v, ray_fields, "a ray") || cqpd_field_vec3(d, v, "origin", true, &out->ray.origin) < 0 ||
        decode_direction(d, v, &out->ray.direction) || decode_max_distance(d, v, &out->ray.max_distance) < 0 ||
        cqpd_field_uint32(d, v, "mask", &out->mask) < 0)
        return -1;
    return 0;
}

void cqp_raycast_req_release(cqp_raycast_req *r)
{
    free(r->rays);
    memset(r, 0, sizeof *r);
}

int cqp_decode_raycast(cqp_decoder *d, const json_t *body, cqp_raycast_req *out)
{
    const json_t *a;
    int mark;
    size_t n;
    memset(out, 0, sizeof *out);
    if (cqpd_object(d, body, raycast_fields, "a raycast request") || cqpd_enter(d, body, "rays", true, &a, &mark) < 0)
        return -1;
    int rc = cqpd_array_limited(d, a, false, cqpd_limit(d->limits ? d->limits->rays : 0, INT_MAX), "rays", &n);
    if (rc == 0 && n > 0) {
        out->rays = calloc(n, sizeof *out->rays);
        if (!out->rays)
            rc = cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        int inner = cqpd_push_index(d, i);
        rc = decode_ray(d, json_array_get(a, i), &out->rays[i]);
        cqpd_pop(d, inner);
    }
    cqpd_pop(d, mark);
    out->count = rc ? 0 : (int)n;
    if (rc || cqpd_field_bool(d, body, "all", &out->all) < 0) {
        cqp_raycast_req_release(out);
        return -1;
    }
    return 0;
}

void cqp_shape_req_release(cqp_shape_req *r)
{
    cqp_shape_release(&r->shape);
    memset(r, 0, sizeof *r);
}

static int decode_shape_req(cqp_decoder *d, const json_t *body, bool sweep, cqp_shape_req *out)
{
    memset(out, 0, sizeof *out);
    out->pose = cq_xform_identity();
    out->mask = UINT32_MAX;
    if (cqpd_object(d, body, sweep ? sweep_fields : overlap_fields, sweep ? "a sweep request" : "an overlap request") ||
        cqpd_field_shape(d, body, "shape", &out->shape) < 0) {
        cqp_shape_req_release(out);
        return -1;
    }
    int rc = 0;
    if (sweep && out->shape.shape.type == CQ_PLANE) {
        int mark = cqpd_push_key(d, "shape");
        cqpd_push_key(d, "type");
        rc = cqpd_fail(d, CQP_P_BAD_VALUE, "must not be plane: a plane is static and cannot be swept");
        cqpd_pop(d, mark);
    }
    if (rc || cqpd_field_pose(d, body, "pose", false, &out->pose) < 0 ||
        (sweep && cqpd_field_vec3(d, body, "translation", true, &out->translation) < 0) ||
        cqpd_field_uint32(d, body, "mask", &out->mask) < 0) {
        cqp_shape_req_release(out);
        return -1;
    }
    return 0;
}

int cqp_decode_sweep(cqp_decoder *d, const json_t *body, cqp_shape_req *out)
{
    return decode_shape_req(d, body, true, out);
}

int cqp_decode_overlap(cqp_decoder *d, const json_t *body, cqp_shape_req *out)
{
    return decode_shape_req(d, body, false, out);
}
