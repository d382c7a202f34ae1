/* What fuzz_msgpack and fuzz_differential share: every request decoder of
 * cqp/decode.h run over one body view, the invariants each result must
 * hold, a field-by-field comparison of two results (bit-identical
 * doubles), JSON pointers checked against the document they name, and a
 * counting allocator behind proto (cqp_set_alloc_funcs) and the core
 * (cq_set_allocator) that can also fail one chosen allocation. Define
 * FUZZ_TARGET and include fuzz_check.h first. */
#ifndef FUZZ_DECODE_H
#define FUZZ_DECODE_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/hull.h"
#include "cq/mesh.h"
#include "cqp/alloc.h"
#include "cqp/decode.h"
#include "cqp/problem.h"
#include "mp_oracle.h"

/* ---- counting allocator ------------------------------------------------ */

static long fz_blocks;       /* blocks proto and the core hold */
static long fz_allocs;       /* allocations asked for so far */
static long fz_fail_at = -1; /* the allocation (by fz_allocs) to fail; -1: none */
static bool fz_failed;       /* fz_fail_at was reached */

static inline void *fz_malloc(size_t n)
{
    if (fz_allocs++ == fz_fail_at) {
        fz_failed = true;
        return NULL;
    }
    void *p = malloc(n ? n : 1);
    if (p)
        fz_blocks++;
    return p;
}

static inline void fz_free(void *p)
{
    if (!p)
        return;
    fz_blocks--;
    free(p);
}

static inline void *fz_core_alloc(size_t n, void *ctx)
{
    (void)ctx;
    return fz_malloc(n);
}

static inline void fz_core_free(void *p, size_t n, void *ctx)
{
    (void)n;
    (void)ctx;
    fz_free(p);
}

/* Routes proto's and the core's allocations through the counter; once,
 * before any other proto or core call. */
static inline void fz_install_allocators(void)
{
    static const cq_allocator core = {fz_core_alloc, fz_core_free, NULL};
    static bool done;
    if (done)
        return;
    cqp_set_alloc_funcs(fz_malloc, fz_free);
    cq_set_allocator(&core);
    done = true;
}

/* ---- the decoders ------------------------------------------------------- */

/* Small limits, so the fuzzer reaches OVER_LIMIT with small inputs. */
static const cqp_limits fz_limits = {
    .pairs = 4, .rays = 8, .hull_points = 32, .mesh_triangles = 32,
    .batch_items = 16, .world_capacity = 1024, .hits = 16,
};

enum { FZ_PAIR, FZ_PAIRS, FZ_SHAPE_PUT, FZ_BATCH, FZ_WORLD, FZ_CONTACTS, FZ_RAYCAST, FZ_SWEEP, FZ_OVERLAP, FZ_DECODERS };

static const char *const fz_decoder_names[FZ_DECODERS] = {
    "pair", "pairs", "shape_put", "batch", "world", "contacts", "raycast", "sweep", "overlap",
};

/* The id cqp_decode_shape_put is given (the path's, valid). */
#define FZ_PUT_ID "probe"

/* Every decoder's return code, problem and output for one body. */
typedef struct fz_results {
    int rc[FZ_DECODERS];
    cqp_problem problem[FZ_DECODERS];
    cqp_pair_req pair;
    cqp_pairs_req pairs;
    cqp_batch put, batch;
    cqp_world_req world;
    cqp_contacts_req contacts;
    cqp_raycast_req raycast;
    cqp_shape_req sweep, overlap;
} fz_results;

static inline int fz_decode_one(int k, cqp_value body, fz_results *r)
{
    cqp_decoder d;
    memset(&r->problem[k], 0, sizeof r->problem[k]);
    cqp_decoder_init(&d, &fz_limits, &r->problem[k]);
    switch (k) {
    case FZ_PAIR: return cqp_decode_pair(&d, body, &r->pair);
    case FZ_PAIRS: return cqp_decode_pairs(&d, body, &r->pairs);
    case FZ_SHAPE_PUT: return cqp_decode_shape_put(&d, body, FZ_PUT_ID, &r->put);
    case FZ_BATCH: return cqp_decode_batch(&d, body, &r->batch);
    case FZ_WORLD: return cqp_decode_world(&d, body, &r->world);
    case FZ_CONTACTS: return cqp_decode_contacts(&d, body, &r->contacts);
    case FZ_RAYCAST: return cqp_decode_raycast(&d, body, &r->raycast);
    case FZ_SWEEP: return cqp_decode_sweep(&d, body, &r->sweep);
    default: return cqp_decode_overlap(&d, body, &r->overlap);
    }
}

/* Frees decoder k's output (only after it succeeded). */
static inline void fz_release_one(int k, fz_results *r)
{
    switch (k) {
    case FZ_PAIR: cqp_pair_req_release(&r->pair); break;
    case FZ_PAIRS: cqp_pairs_req_release(&r->pairs); break;
    case FZ_SHAPE_PUT: cqp_batch_release(&r->put); break;
    case FZ_BATCH: cqp_batch_release(&r->batch); break;
    case FZ_WORLD: cqp_world_req_release(&r->world); break;
    case FZ_CONTACTS: cqp_contacts_req_release(&r->contacts); break;
    case FZ_RAYCAST: cqp_raycast_req_release(&r->raycast); break;
    case FZ_SWEEP: cqp_shape_req_release(&r->sweep); break;
    default: cqp_shape_req_release(&r->overlap); break;
    }
}

static inline void fz_release(fz_results *r)
{
    for (int k = 0; k < FZ_DECODERS; k++)
        if (r->rc[k] == 0)
            fz_release_one(k, r);
}

/* Runs decoder k; a refusal must leave nothing allocated, whatever the
 * decoder had built before it failed. */
static inline void fz_run_one(int k, cqp_value body, fz_results *r)
{
    long before = fz_blocks;
    r->rc[k] = fz_decode_one(k, body, r);
    check(r->rc[k] == 0 || r->rc[k] == -1, "a decoder returned neither 0 nor -1");
    if (r->rc[k] != 0)
        check(fz_blocks == before, "a refused decode left memory allocated");
}

static inline void fz_decode_all(cqp_value body, fz_results *r)
{
    for (int k = 0; k < FZ_DECODERS; k++)
        fz_run_one(k, body, r);
}

/* ---- invariants of one result ------------------------------------------ */

static inline bool fz_finite(double x) { return x - x == 0; }

static inline bool fz_finite_n(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!fz_finite(x[i]))
            return false;
    return true;
}

static inline bool fz_vec_ok(cq_vec3 v) { return fz_finite_n(&v.x, 3); }

static inline bool fz_pose_ok(const cq_xform *x) { return fz_finite_n(&x->p.x, sizeof *x / sizeof(double)); }

static inline bool fz_hull_ok(const cq_hull *h)
{
    if (!h || h->vertex_count < 1 || h->vertex_count > CQ_HULL_MAX_POINTS || !fz_finite(h->radius) || h->radius < 0)
        return false;
    for (int i = 0; i < h->vertex_count; i++)
        if (!fz_vec_ok(h->vertices[i]))
            return false;
    for (int i = 0; i < h->face_count; i++)
        if (!fz_vec_ok(h->faces[i].normal) || !fz_finite(h->faces[i].offset))
            return false;
    return fz_vec_ok(h->centroid) && fz_vec_ok(h->aabb_min) && fz_vec_ok(h->aabb_max);
}

static inline bool fz_mesh_ok(const cq_mesh *m)
{
    if (!m || m->vertex_count < 1 || m->triangle_count < 1)
        return false;
    for (int i = 0; i < m->vertex_count; i++)
        if (!fz_vec_ok(m->vertices[i]))
            return false;
    for (int i = 0; i < m->triangle_count; i++)
        if (!fz_vec_ok(m->normals[i]))
            return false;
    return fz_vec_ok(m->aabb_min) && fz_vec_ok(m->aabb_max);
}

/* A decoded shape: finite, and owning exactly what its type needs. */
static inline void fz_check_shape(const cqp_shape *s)
{
    const cq_shape *c = &s->shape;
    bool ok = false;
    switch (c->type) {
    case CQ_SPHERE: ok = fz_finite(c->sphere.radius) && c->sphere.radius >= 0; break;
    case CQ_CAPSULE:
        ok = fz_finite(c->capsule.radius) && fz_finite(c->capsule.half_height) && c->capsule.radius >= 0 &&
             c->capsule.half_height >= 0;
        break;
    case CQ_BOX: ok = fz_vec_ok(c->box.half) && c->box.half.x >= 0 && c->box.half.y >= 0 && c->box.half.z >= 0; break;
    case CQ_TRIANGLE: ok = fz_finite_n(&c->triangle.v[0].x, 9); break;
    case CQ_PLANE: ok = fz_vec_ok(c->plane.normal) && fz_finite(c->plane.offset); break;
    case CQ_CONVEX: ok = s->hull && c->convex.hull == s->hull && fz_hull_ok(s->hull); break;
    case CQ_MESH: ok = s->mesh && c->mesh.mesh == s->mesh && fz_mesh_ok(s->mesh); break;
    default: break;
    }
    check(ok, "a decoded shape is not finite, not valid or not owned as its type needs");
    check(c->type == CQ_CONVEX || s->hull == NULL, "a shape other than convex owns a hull");
    check(c->type == CQ_MESH || s->mesh == NULL, "a shape other than a mesh owns a mesh");
}

static inline void fz_check_posed(const cqp_posed *p)
{
    fz_check_shape(&p->shape);
    check(fz_pose_ok(&p->pose), "a decoded pose is not finite");
}

static inline void fz_check_pair(const cqp_pair_req *r)
{
    fz_check_posed(&r->a);
    fz_check_posed(&r->b);
    check(fz_finite(r->skin) && r->skin >= 0, "a decoded skin is not finite and >= 0");
}

static inline void fz_check_batch(const cqp_batch *b)
{
    check(b->count == b->upserts + b->moves + b->removes && b->count <= fz_limits.batch_items,
          "a batch's counts do not add up or pass the limit");
    for (int i = 0; i < b->count; i++) {
        const cq_world_op *op = &b->ops[i];
        cq_world_op_kind want = i < b->upserts ? CQ_WORLD_UPSERT : i < b->upserts + b->moves ? CQ_WORLD_MOVE
                                                                                            : CQ_WORLD_REMOVE;
        check(op->kind == want, "a batch op of the wrong kind for its place");
        check(op->id == b->ids[i] && cqp_valid_id(b->ids[i]), "a batch op without its valid id");
        if (want == CQ_WORLD_REMOVE)
            continue;
        check(fz_pose_ok(&op->pose) && fz_vec_ok(op->velocity), "a batch op's pose or velocity is not finite");
        if (want == CQ_WORLD_UPSERT) {
            fz_check_shape(&b->shapes[i]);
            check(op->shape.type == b->shapes[i].shape.type, "an upsert's shape is not its shapes[] copy");
        }
    }
}

static inline void fz_check_shape_req(const cqp_shape_req *r, bool sweep)
{
    fz_check_shape(&r->shape);
    check(fz_pose_ok(&r->pose) && fz_vec_ok(r->translation), "a query's pose or translation is not finite");
    check(!sweep || r->shape.shape.type != CQ_PLANE, "a sweep of a plane was accepted");
}

static inline void fz_check_output(int k, const fz_results *r)
{
    switch (k) {
    case FZ_PAIR: fz_check_pair(&r->pair); break;
    case FZ_PAIRS:
        check(r->pairs.count <= fz_limits.pairs, "more pairs than the limit");
        for (int i = 0; i < r->pairs.count; i++)
            fz_check_pair(&r->pairs.items[i]);
        break;
    case FZ_SHAPE_PUT:
        check(r->put.count == 1 && r->put.upserts == 1 && strcmp(r->put.ids[0], FZ_PUT_ID) == 0,
              "a shape put is not one upsert under its id");
        fz_check_batch(&r->put);
        break;
    case FZ_BATCH: fz_check_batch(&r->batch); break;
    case FZ_WORLD: {
        const cq_world_settings *s = &r->world.settings;
        check(fz_finite(s->skin) && s->skin >= 0 && s->capacity >= 0 && s->capacity <= fz_limits.world_capacity,
              "decoded world settings out of range");
        check(s->gjk_max_iterations >= 0 && s->gjk_max_iterations <= CQP_MAX_ITERATION_CAP &&
                  s->epa_max_iterations >= 0 && s->epa_max_iterations <= CQP_MAX_ITERATION_CAP &&
                  s->sweep_max_iterations >= 0 && s->sweep_max_iterations <= CQP_MAX_ITERATION_CAP,
              "a decoded iteration cap out of range");
        check(r->world.durability >= 0 && r->world.durability < CQP_DURABILITY_COUNT &&
                  (r->world.durability_given || r->world.durability == CQP_DURABILITY_FULL),
              "a decoded durability out of range");
        check(r->world.import || r->world.batch.count == 0, "world settings with shapes");
        check(r->world.batch.upserts == r->world.batch.count, "an import holding other ops than upserts");
        fz_check_batch(&r->world.batch);
        break;
    }
    case FZ_CONTACTS:
        check(fz_finite(r->contacts.dt) && r->contacts.dt >= 0, "a decoded dt is not finite and >= 0");
        for (int i = 0; i < r->contacts.id_count; i++)
            check(r->contacts.id_ptrs[i] == r->contacts.ids[i] && cqp_valid_id(r->contacts.ids[i]),
                  "a contacts id is not valid");
        break;
    case FZ_RAYCAST:
        check(r->raycast.count <= fz_limits.rays, "more rays than the limit");
        for (int i = 0; i < r->raycast.count; i++) {
            const cq_ray *ray = &r->raycast.rays[i].ray;
            check(fz_vec_ok(ray->origin) && fz_vec_ok(ray->direction) && fz_finite(ray->max_distance),
                  "a decoded ray is not finite");
            check(fabs(cq_len(ray->direction) - 1) < 1e-9, "a decoded ray direction is not unit");
            check(ray->max_distance >= 0 && ray->max_distance <= 1e300, "a decoded max_distance out of range");
        }
        break;
    case FZ_SWEEP: fz_check_shape_req(&r->sweep, true); break;
    default: fz_check_shape_req(&r->overlap, false); break;
    }
}

/* RFC 6901 syntax: empty, or "/"-led segments where '~' is only "~0" or
 * "~1"; and, being a problem body's text, valid UTF-8. */
static inline bool fz_pointer_syntax(const char *p)
{
    size_t n = strlen(p);
    if (n > 0 && p[0] != '/')
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '~' && (i + 1 >= n || (p[i + 1] != '0' && p[i + 1] != '1')))
            return false;
    return mpo_utf8((const uint8_t *)p, n);
}

/* The kinds a decoder may report: never a parse error (the body was
 * parsed or checked before), never INTERNAL; BUSY only for an allocation
 * that failed. */
static inline bool fz_decoder_kind(cqp_problem_kind k)
{
    return k == CQP_P_BAD_TYPE || k == CQP_P_UNKNOWN_FIELD || k == CQP_P_MISSING_FIELD || k == CQP_P_BAD_VALUE ||
           k == CQP_P_OVER_LIMIT || (k == CQP_P_BUSY && fz_failed);
}

/* Checks decoder k's result: a problem of a decoder's kind with a
 * well-formed pointer and detail, or an output that holds its invariants. */
static inline void fz_check_result(int k, const fz_results *r)
{
    if (r->rc[k] == 0) {
        fz_check_output(k, r);
        return;
    }
    const cqp_problem *p = &r->problem[k];
    check(fz_decoder_kind(p->kind), "a decoder reported a kind it cannot have");
    int status = cqp_problem_status(p->kind);
    check(status >= 400 && status <= 599, "a problem kind that is not a 4xx or 5xx");
    check(memchr(p->pointer, '\0', sizeof p->pointer) && memchr(p->detail, '\0', sizeof p->detail),
          "a problem text without its NUL");
    check(fz_pointer_syntax(p->pointer), "a problem pointer that is not an RFC 6901 pointer in UTF-8");
    check(p->detail[0] != '\0' && mpo_utf8((const uint8_t *)p->detail, strlen(p->detail)),
          "a problem detail empty or not UTF-8");
}

/* ---- comparing two results field by field ------------------------------ */

/* n == 0 first: a point hull has no faces, and its arrays may be NULL. */
static inline bool fz_same_bits(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }

static inline bool fz_same_hull(const cq_hull *a, const cq_hull *b)
{
    if (a->dim != b->dim || a->vertex_count != b->vertex_count || a->face_count != b->face_count ||
        a->edge_count != b->edge_count || a->face_vertex_count != b->face_vertex_count ||
        !fz_same_bits(&a->radius, &b->radius, sizeof a->radius))
        return false;
    for (int i = 0; i < a->face_count; i++) { /* field by field: a face has padding */
        const cq_hull_face *fa = &a->faces[i], *fb = &b->faces[i];
        if (!fz_same_bits(&fa->normal, &fb->normal, sizeof fa->normal) ||
            !fz_same_bits(&fa->offset, &fb->offset, sizeof fa->offset) || fa->first != fb->first ||
            fa->count != fb->count)
            return false;
    }
    return fz_same_bits(a->vertices, b->vertices, (size_t)a->vertex_count * sizeof *a->vertices) &&
           fz_same_bits(a->face_vertices, b->face_vertices, (size_t)a->face_vertex_count * sizeof *a->face_vertices) &&
           fz_same_bits(a->edges, b->edges, (size_t)a->edge_count * sizeof *a->edges) &&
           fz_same_bits(&a->centroid, &b->centroid, sizeof a->centroid) &&
           fz_same_bits(&a->aabb_min, &b->aabb_min, sizeof a->aabb_min) &&
           fz_same_bits(&a->aabb_max, &b->aabb_max, sizeof a->aabb_max);
}

static inline bool fz_same_mesh(const cq_mesh *a, const cq_mesh *b)
{
    size_t nv = (size_t)a->vertex_count, nt = (size_t)a->triangle_count;
    return a->vertex_count == b->vertex_count && a->triangle_count == b->triangle_count &&
           fz_same_bits(a->vertices, b->vertices, nv * sizeof *a->vertices) &&
           fz_same_bits(a->triangles, b->triangles, nt * sizeof *a->triangles) &&
           fz_same_bits(a->normals, b->normals, nt * sizeof *a->normals) &&
           fz_same_bits(a->neighbours, b->neighbours, nt * sizeof *a->neighbours) &&
           fz_same_bits(a->edges, b->edges, nt * sizeof *a->edges) &&
           fz_same_bits(&a->aabb_min, &b->aabb_min, sizeof a->aabb_min) &&
           fz_same_bits(&a->aabb_max, &b->aabb_max, sizeof a->aabb_max);
}

static inline bool fz_same_shape(const cqp_shape *x, const cqp_shape *y)
{
    const cq_shape *a = &x->shape, *b = &y->shape;
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case CQ_SPHERE: return fz_same_bits(&a->sphere, &b->sphere, sizeof a->sphere);
    case CQ_CAPSULE: return fz_same_bits(&a->capsule, &b->capsule, sizeof a->capsule);
    case CQ_BOX: return fz_same_bits(&a->box, &b->box, sizeof a->box);
    case CQ_TRIANGLE: return fz_same_bits(&a->triangle, &b->triangle, sizeof a->triangle);
    case CQ_PLANE: return fz_same_bits(&a->plane, &b->plane, sizeof a->plane);
    case CQ_CONVEX: return fz_same_hull(x->hull, y->hull);
    case CQ_MESH: return fz_same_mesh(x->mesh, y->mesh);
    default: return false;
    }
}

static inline bool fz_same_pose(const cq_xform *a, const cq_xform *b) { return fz_same_bits(a, b, sizeof *a); }

static inline bool fz_same_vec(cq_vec3 a, cq_vec3 b) { return fz_same_bits(&a, &b, sizeof a); }

static inline bool fz_same_pair(const cqp_pair_req *a, const cqp_pair_req *b)
{
    return fz_same_shape(&a->a.shape, &b->a.shape) && fz_same_pose(&a->a.pose, &b->a.pose) &&
           fz_same_shape(&a->b.shape, &b->b.shape) && fz_same_pose(&a->b.pose, &b->b.pose) &&
           fz_same_bits(&a->skin, &b->skin, sizeof a->skin) && a->explain == b->explain;
}

static inline bool fz_same_op(const cq_world_op *a, const cq_world_op *b)
{
    return a->kind == b->kind && strcmp(a->id, b->id) == 0 && a->handle.index == b->handle.index &&
           a->handle.generation == b->handle.generation && fz_same_pose(&a->pose, &b->pose) &&
           fz_same_vec(a->velocity, b->velocity) && a->keep_velocity == b->keep_velocity && a->layer == b->layer &&
           a->mask == b->mask;
}

static inline bool fz_same_batch(const cqp_batch *a, const cqp_batch *b)
{
    if (a->count != b->count || a->upserts != b->upserts || a->moves != b->moves || a->removes != b->removes)
        return false;
    for (int i = 0; i < a->count; i++)
        if (!fz_same_op(&a->ops[i], &b->ops[i]) || (i < a->upserts && !fz_same_shape(&a->shapes[i], &b->shapes[i])))
            return false;
    return true;
}

static inline bool fz_same_settings(const cq_world_settings *a, const cq_world_settings *b)
{
    return fz_same_bits(&a->skin, &b->skin, sizeof a->skin) && a->capacity == b->capacity &&
           a->gjk_max_iterations == b->gjk_max_iterations && a->epa_max_iterations == b->epa_max_iterations &&
           a->sweep_max_iterations == b->sweep_max_iterations;
}

static inline bool fz_same_contacts(const cqp_contacts_req *a, const cqp_contacts_req *b)
{
    if ((a->ids == NULL) != (b->ids == NULL) || a->id_count != b->id_count ||
        !fz_same_bits(&a->dt, &b->dt, sizeof a->dt))
        return false;
    for (int i = 0; i < a->id_count; i++)
        if (strcmp(a->ids[i], b->ids[i]) != 0)
            return false;
    return true;
}

static inline bool fz_same_rays(const cqp_raycast_req *a, const cqp_raycast_req *b)
{
    if (a->count != b->count || a->all != b->all)
        return false;
    for (int i = 0; i < a->count; i++) {
        const cq_world_ray *x = &a->rays[i], *y = &b->rays[i];
        if (!fz_same_vec(x->ray.origin, y->ray.origin) || !fz_same_vec(x->ray.direction, y->ray.direction) ||
            !fz_same_bits(&x->ray.max_distance, &y->ray.max_distance, sizeof x->ray.max_distance) ||
            x->mask != y->mask)
            return false;
    }
    return true;
}

static inline bool fz_same_shape_req(const cqp_shape_req *a, const cqp_shape_req *b)
{
    return fz_same_shape(&a->shape, &b->shape) && fz_same_pose(&a->pose, &b->pose) &&
           fz_same_vec(a->translation, b->translation) && a->mask == b->mask;
}

/* Decoder k's outputs in a and b (both succeeded) are the same core values. */
static inline bool fz_same_output(int k, const fz_results *a, const fz_results *b)
{
    switch (k) {
    case FZ_PAIR: return fz_same_pair(&a->pair, &b->pair);
    case FZ_PAIRS:
        if (a->pairs.count != b->pairs.count)
            return false;
        for (int i = 0; i < a->pairs.count; i++)
            if (!fz_same_pair(&a->pairs.items[i], &b->pairs.items[i]))
                return false;
        return true;
    case FZ_SHAPE_PUT: return fz_same_batch(&a->put, &b->put);
    case FZ_BATCH: return fz_same_batch(&a->batch, &b->batch);
    case FZ_WORLD:
        return fz_same_settings(&a->world.settings, &b->world.settings) && a->world.import == b->world.import &&
               a->world.durability == b->world.durability && a->world.durability_given == b->world.durability_given &&
               fz_same_batch(&a->world.batch, &b->world.batch);
    case FZ_CONTACTS: return fz_same_contacts(&a->contacts, &b->contacts);
    case FZ_RAYCAST: return fz_same_rays(&a->raycast, &b->raycast);
    case FZ_SWEEP: return fz_same_shape_req(&a->sweep, &b->sweep);
    default: return fz_same_shape_req(&a->overlap, &b->overlap);
    }
}

/* ---- pointers against the document ------------------------------------- */

/* How a pointer names key[0..n): '~' as "~0", '/' as "~1", and a NUL (which
 * a C string cannot hold) as U+FFFD, as cqp_pointer_append documents. */
static inline size_t fz_escape_key(const char *key, size_t n, char *out, size_t cap)
{
    size_t w = 0;
    for (size_t i = 0; i < n && w + 3 < cap; i++) {
        if (key[i] == '~' || key[i] == '/') {
            out[w++] = '~';
            out[w++] = key[i] == '~' ? '0' : '1';
        } else if (key[i] == '\0') {
            memcpy(out + w, "\xEF\xBF\xBD", 3);
            w += 3;
        } else {
            out[w++] = key[i];
        }
    }
    out[w] = '\0';
    return w;
}

/* A pointer this long may have been cut inside its last key (the decoder's
 * path holds 255 bytes, and a cut drops up to 3 more to end on a whole
 * UTF-8 character and a whole escape). */
#define FZ_POINTER_CUT 250

/* True when segment seg[0..n) names key[0..klen): the same escaped text,
 * or, in a cut pointer's last segment, a prefix of it. */
static inline bool fz_segment_is(const char *seg, size_t n, const char *key, size_t klen, bool cut)
{
    char esc[3 * 256 + 4];
    size_t e = fz_escape_key(key, klen < 256 ? klen : 256, esc, sizeof esc);
    return cut ? n <= e && memcmp(seg, esc, n) == 0 : n == e && memcmp(seg, esc, n) == 0;
}

/* An array index segment: decimal digits without a leading zero. */
static inline bool fz_segment_index(const char *seg, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19 || (n > 1 && seg[0] == '0'))
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (seg[i] < '0' || seg[i] > '9')
            return false;
        x = x * 10 + (uint64_t)(seg[i] - '0');
    }
    *out = x;
    return true;
}

/* A document to walk: a node and how to step from it. */
typedef struct fz_doc {
    const void *(*member)(const void *node, const char *seg, size_t n, bool cut, const void *ctx);
    const void *(*element)(const void *node, uint64_t i, const void *ctx);
    bool (*is_object)(const void *node, const void *ctx);
    const void *ctx;
} fz_doc;

/* True when pointer p names a value of the document at root; for a
 * missing field (missing), its parent instead, an object that lacks the
 * last segment's key. */
static inline bool fz_pointer_names(const fz_doc *doc, const void *root, const char *p, bool missing)
{
    size_t len = strlen(p);
    const void *node = root;
    const char *s = p;
    while (*s == '/') {
        const char *seg = s + 1;
        size_t n = strcspn(seg, "/");
        bool last = seg[n] == '\0';
        bool cut = last && len >= FZ_POINTER_CUT;
        if (last && missing)
            return doc->is_object(node, doc->ctx) && !doc->member(node, seg, n, false, doc->ctx);
        const void *next = doc->member(node, seg, n, cut, doc->ctx);
        uint64_t i;
        if (!next && fz_segment_index(seg, n, &i))
            next = doc->element(node, i, doc->ctx);
        if (!next)
            return false;
        node = next;
        s = seg + n;
    }
    return !missing; /* a missing field's pointer names its key */
}

/* MessagePack bytes (accepted by mpo_check): a node is a value's first
 * byte, ctx its end. */
static inline const void *fz_mp_member(const void *node, const char *seg, size_t n, bool cut, const void *ctx)
{
    const uint8_t *p = node, *end = ctx;
    mpo_head h = mpo_head_at(p, end);
    if (h.kind != MPO_MAP)
        return NULL;
    const uint8_t *at = p + h.head;
    for (uint64_t i = 0; i < h.n; i++) {
        size_t klen;
        const uint8_t *k = mpo_str(at, end, &klen);
        if (fz_segment_is(seg, n, (const char *)k, klen, cut))
            return k + klen;
        at = mpo_skip(k + klen, end);
    }
    return NULL;
}

static inline const void *fz_mp_element(const void *node, uint64_t i, const void *ctx)
{
    return mpo_index(node, ctx, i);
}

static inline bool fz_mp_is_object(const void *node, const void *ctx) { return mpo_head_at(node, ctx).kind == MPO_MAP; }

static inline fz_doc fz_mp_doc(const uint8_t *end) { return (fz_doc){fz_mp_member, fz_mp_element, fz_mp_is_object, end}; }

/* A jansson tree. */
static inline const void *fz_json_member(const void *node, const char *seg, size_t n, bool cut, const void *ctx)
{
    (void)ctx;
    const char *key;
    json_t *v;
    if (!json_is_object((const json_t *)node))
        return NULL;
    json_object_foreach((json_t *)node, key, v)
        if (fz_segment_is(seg, n, key, strlen(key), cut))
            return v;
    return NULL;
}

static inline const void *fz_json_element(const void *node, uint64_t i, const void *ctx)
{
    (void)ctx;
    return json_is_array((const json_t *)node) ? json_array_get(node, (size_t)i) : NULL;
}

static inline bool fz_json_is_object(const void *node, const void *ctx)
{
    (void)ctx;
    return json_is_object((const json_t *)node);
}

static const fz_doc fz_json_doc = {fz_json_member, fz_json_element, fz_json_is_object, NULL};

/* Every failed decoder's pointer names a place in the document. */
static inline void fz_check_pointers(const fz_results *r, const fz_doc *doc, const void *root)
{
    for (int k = 0; k < FZ_DECODERS; k++) {
        if (r->rc[k] == 0 || r->problem[k].kind == CQP_P_BUSY)
            continue;
        bool missing = r->problem[k].kind == CQP_P_MISSING_FIELD;
        if (!fz_pointer_names(doc, root, r->problem[k].pointer, missing)) {
            fprintf(stderr, "%s: decoder %s: pointer \"%s\" (%s)\n", FUZZ_TARGET, fz_decoder_names[k],
                    r->problem[k].pointer, r->problem[k].detail);
            check(0, missing ? "a missing field's pointer does not name an object lacking that key"
                             : "a problem pointer names no value of the document");
        }
    }
}

#endif
