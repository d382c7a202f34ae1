/* Request bodies of the stateless pair tests and the world queries
 * (API.md section 2): pair, pairs, contacts, raycast, sweep, overlap. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cqp/alloc.h"
#include "decode_internal.h"

CQPD_FIELD_LIST(posed_fields, "shape", "pose");
CQPD_FIELD_LIST(pair_fields, "a", "b", "skin", "explain");
CQPD_FIELD_LIST(pairs_fields, "pairs");
CQPD_FIELD_LIST(contacts_fields, "ids", "dt");
CQPD_FIELD_LIST(raycast_fields, "rays", "all");
CQPD_FIELD_LIST(ray_fields, "origin", "direction", "max_distance", "mask");
CQPD_FIELD_LIST(sweep_fields, "shape", "pose", "translation", "mask");
CQPD_FIELD_LIST(overlap_fields, "shape", "pose", "mask");

/* The default ray length: "unbounded", yet finite as cq_raycast wants. */
#define RAY_UNBOUNDED 1e300

/* body[key] as {"shape", "pose"?}. */
static int decode_posed(cqp_decoder *d, const cqpd_fields *body, const char *key, cqp_posed *out)
{
    cqp_value v;
    cqpd_fields f;
    int mark;
    if (cqp__enter(d, body, key, true, &v, &mark) < 0)
        return -1;
    int rc = -1;
    if (cqp__object(d, v, posed_fields, "a posed shape", &f) == 0 &&
        cqp__field_shape(d, &f, "shape", &out->shape) > 0) {
        if (cqp__field_pose(d, &f, "pose", false, &out->pose) < 0)
            cqp_shape_release(&out->shape);
        else
            rc = 0;
    }
    cqp__pop(d, mark);
    return rc;
}

void cqp_pair_req_release(cqp_pair_req *r)
{
    cqp_shape_release(&r->a.shape);
    cqp_shape_release(&r->b.shape);
    memset(r, 0, sizeof *r);
}

int cqp_decode_pair(cqp_decoder *d, cqp_value body, cqp_pair_req *out)
{
    cqpd_fields f;
    memset(out, 0, sizeof *out);
    if (cqp__object(d, body, pair_fields, "a pair request", &f) || decode_posed(d, &f, "a", &out->a))
        return -1;
    if (decode_posed(d, &f, "b", &out->b) || cqp__field_nonneg(d, &f, "skin", false, &out->skin) < 0 ||
        cqp__field_bool(d, &f, "explain", &out->explain) < 0) {
        cqp_pair_req_release(out);
        return -1;
    }
    return 0;
}

void cqp_pairs_req_release(cqp_pairs_req *r)
{
    for (int i = 0; i < r->count; i++)
        cqp_pair_req_release(&r->items[i]);
    cqp_free(r->items);
    memset(r, 0, sizeof *r);
}

/* The n items of array a, each a pair request, into out->items. */
static int decode_pair_items(cqp_decoder *d, cqp_value a, size_t n, cqp_pairs_req *out)
{
    cqp_iter it;
    cqp_value v;
    if (n > 0 && !(out->items = cqp_calloc(n, sizeof *out->items)))
        return cqp__no_memory(d);
    cqp_value_iter_init(&it, a);
    while (cqp_value_next(&it, &v)) {
        int mark = cqp__push_index(d, (size_t)out->count);
        int rc = cqp_decode_pair(d, v, &out->items[out->count]);
        cqp__pop(d, mark);
        if (rc)
            return -1;
        out->count++;
    }
    return 0;
}

int cqp_decode_pairs(cqp_decoder *d, cqp_value body, cqp_pairs_req *out)
{
    cqpd_fields f;
    cqp_value a;
    int mark;
    size_t n;
    memset(out, 0, sizeof *out);
    if (cqp__object(d, body, pairs_fields, "a pairs request", &f) || cqp__enter(d, &f, "pairs", true, &a, &mark) < 0)
        return -1;
    size_t max = cqp__limit(d->limits ? d->limits->pairs : 0, INT_MAX);
    int rc = cqp__array_limited(d, a, false, max, "items", &n) || decode_pair_items(d, a, n, out) ? -1 : 0;
    cqp__pop(d, mark);
    if (rc)
        cqp_pairs_req_release(out);
    return rc;
}

void cqp_contacts_req_release(cqp_contacts_req *r)
{
    cqp_free(r->ids);
    cqp_free(r->id_ptrs);
    memset(r, 0, sizeof *r);
}

/* "ids": kept non-NULL even when empty, since a present filter with no
 * ids selects no pair (NULL would select them all). */
static int decode_id_filter(cqp_decoder *d, cqp_value a, cqp_contacts_req *out)
{
    cqp_iter it;
    cqp_value v;
    size_t n;
    // Bounded like a batch: each id takes 73 bytes here, one on the wire.
    if (cqp__array_limited(d, a, false, cqp__limit(d->limits ? d->limits->batch_items : 0, INT_MAX), "ids", &n))
        return -1;
    out->ids = cqp_calloc(n ? n : 1, sizeof *out->ids);
    out->id_ptrs = cqp_calloc(n ? n : 1, sizeof *out->id_ptrs);
    if (!out->ids || !out->id_ptrs)
        return cqp__no_memory(d);
    cqp_value_iter_init(&it, a);
    for (size_t i = 0; cqp_value_next(&it, &v); i++) {
        int mark = cqp__push_index(d, i);
        int rc = cqp_decode_id(d, v, out->ids[i]);
        cqp__pop(d, mark);
        if (rc)
            return -1;
        out->id_ptrs[i] = out->ids[i];
    }
    out->id_count = (int)n;
    return 0;
}

int cqp_decode_contacts(cqp_decoder *d, cqp_value body, cqp_contacts_req *out)
{
    cqpd_fields f;
    cqp_value a;
    int mark;
    memset(out, 0, sizeof *out);
    if (cqp__object(d, body, contacts_fields, "a contacts request", &f))
        return -1;
    int in = cqp__enter(d, &f, "ids", false, &a, &mark);
    if (in > 0) {
        int rc = decode_id_filter(d, a, out);
        cqp__pop(d, mark);
        if (rc)
            in = -1;
    }
    if (in < 0 || cqp__field_nonneg(d, &f, "dt", false, &out->dt) < 0) {
        cqp_contacts_req_release(out);
        return -1;
    }
    return 0;
}

/* A ray direction of any non-zero length, made unit. Dividing by the
 * largest component first keeps huge and tiny vectors from overflowing or
 * underflowing the length. */
static int decode_direction(cqp_decoder *d, const cqpd_fields *ray, cq_vec3 *out)
{
    cqp_value v;
    int mark;
    cq_vec3 dir;
    if (cqp__enter(d, ray, "direction", true, &v, &mark) < 0)
        return -1;
    int rc = cqp__finite_vec3(d, v, &dir);
    if (rc == 0) {
        double m = fmax(fabs(dir.x), fmax(fabs(dir.y), fabs(dir.z)));
        if (m == 0) {
            rc = cqp__fail(d, CQP_P_BAD_VALUE, "must be a non-zero vector");
        } else {
            dir = cq_v3(dir.x / m, dir.y / m, dir.z / m);
            *out = cq_scale(dir, 1 / cq_len(dir));
        }
    }
    cqp__pop(d, mark);
    return rc;
}

/* A ray's length, >= 0; any length beyond RAY_UNBOUNDED (a client's way of
 * saying "no limit", such as float's maximum) means the same. */
static int decode_max_distance(cqp_decoder *d, const cqpd_fields *ray, double *out)
{
    cqp_value v;
    int mark;
    int in = cqp__enter(d, ray, "max_distance", false, &v, &mark);
    if (in <= 0)
        return in;
    double x = 0;
    int rc = cqp__finite(d, v, &x);
    if (rc == 0 && x < 0)
        rc = cqp__fail(d, CQP_P_BAD_VALUE, "must be >= 0");
    if (rc == 0)
        *out = fmin(x, RAY_UNBOUNDED);
    cqp__pop(d, mark);
    return rc;
}

static int decode_ray(cqp_decoder *d, cqp_value v, cq_world_ray *out)
{
    cqpd_fields f;
    out->ray.max_distance = RAY_UNBOUNDED;
    out->mask = UINT32_MAX;
    if (cqp__object(d, v, ray_fields, "a ray", &f) || cqp__field_vec3(d, &f, "origin", true, &out->ray.origin) < 0 ||
        decode_direction(d, &f, &out->ray.direction) || decode_max_distance(d, &f, &out->ray.max_distance) < 0 ||
        cqp__field_uint32(d, &f, "mask", &out->mask) < 0)
        return -1;
    return 0;
}

void cqp_raycast_req_release(cqp_raycast_req *r)
{
    cqp_free(r->rays);
    memset(r, 0, sizeof *r);
}

/* The n rays of array a into out->rays. */
static int decode_rays(cqp_decoder *d, cqp_value a, size_t n, cqp_raycast_req *out)
{
    cqp_iter it;
    cqp_value v;
    if (n > 0 && !(out->rays = cqp_calloc(n, sizeof *out->rays)))
        return cqp__no_memory(d);
    cqp_value_iter_init(&it, a);
    for (size_t i = 0; cqp_value_next(&it, &v); i++) {
        int mark = cqp__push_index(d, i);
        int rc = decode_ray(d, v, &out->rays[i]);
        cqp__pop(d, mark);
        if (rc)
            return -1;
    }
    out->count = (int)n;
    return 0;
}

int cqp_decode_raycast(cqp_decoder *d, cqp_value body, cqp_raycast_req *out)
{
    cqpd_fields f;
    cqp_value a;
    int mark;
    size_t n;
    memset(out, 0, sizeof *out);
    if (cqp__object(d, body, raycast_fields, "a raycast request", &f) || cqp__enter(d, &f, "rays", true, &a, &mark) < 0)
        return -1;
    size_t max = cqp__limit(d->limits ? d->limits->rays : 0, INT_MAX);
    int rc = cqp__array_limited(d, a, false, max, "rays", &n) || decode_rays(d, a, n, out) ? -1 : 0;
    cqp__pop(d, mark);
    if (rc || cqp__field_bool(d, &f, "all", &out->all) < 0) {
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

/* A sweep's shape must be able to move: a plane cannot. */
static int check_sweepable(cqp_decoder *d, const cqp_shape *shape)
{
    if (shape->shape.type != CQ_PLANE)
        return 0;
    int mark = cqp__push_key(d, "shape");
    cqp__push_key(d, "type");
    cqp__fail(d, CQP_P_BAD_VALUE, "must not be plane: a plane is static and cannot be swept");
    cqp__pop(d, mark);
    return -1;
}

static int decode_shape_req(cqp_decoder *d, cqp_value body, bool sweep, cqp_shape_req *out)
{
    cqpd_fields f;
    memset(out, 0, sizeof *out);
    out->pose = cq_xform_identity();
    out->mask = UINT32_MAX;
    if (cqp__object(d, body, sweep ? sweep_fields : overlap_fields, sweep ? "a sweep request" : "an overlap request",
                    &f) ||
        cqp__field_shape(d, &f, "shape", &out->shape) < 0 || (sweep && check_sweepable(d, &out->shape)) ||
        cqp__field_pose(d, &f, "pose", false, &out->pose) < 0 ||
        (sweep && cqp__field_vec3(d, &f, "translation", true, &out->translation) < 0) ||
        cqp__field_uint32(d, &f, "mask", &out->mask) < 0) {
        cqp_shape_req_release(out);
        return -1;
    }
    return 0;
}

int cqp_decode_sweep(cqp_decoder *d, cqp_value body, cqp_shape_req *out)
{
    return decode_shape_req(d, body, true, out);
}

int cqp_decode_overlap(cqp_decoder *d, cqp_value body, cqp_shape_req *out)
{
    return decode_shape_req(d, body, false, out);
}
