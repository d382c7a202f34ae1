#include "world_oracle.h"

#include <stdlib.h>
#include <string.h>

#include "aabb.h"
#include "cq/hull.h"

void wo_apply(cq_world *w, const cq_world_op *ops, int n)
{
    int bad = -2;
    int rc = cq_world_apply(w, ops, n, &bad);
    if (rc != CQ_OK)
        ck_abort_msg("batch failed: %s at op %d", cq_err_name(rc), bad);
    ck_assert_int_eq(bad, -1);
}

cq_shape_type wo_random_type(tu_rng *rng, bool with_convex)
{
    static const cq_shape_type types[] = {CQ_SPHERE, CQ_BOX, CQ_CAPSULE, CQ_TRIANGLE, CQ_CONVEX};
    return types[(int)tu_uniform(rng, 0, with_convex ? 5 : 4)];
}

cq_shape wo_random_shape(tu_rng *rng, cq_shape_type t, double size)
{
    switch (t) {
    case CQ_SPHERE:
        return wo_sphere(tu_uniform(rng, 0.3, 1) * size);
    case CQ_CAPSULE:
        return wo_capsule(tu_uniform(rng, 0.2, 0.6) * size, tu_uniform(rng, 0, 1) * size);
    case CQ_BOX:
        return wo_box(tu_uniform(rng, 0.2, 1) * size, tu_uniform(rng, 0.2, 1) * size, tu_uniform(rng, 0.2, 1) * size);
    case CQ_TRIANGLE: {
        cq_shape s = {.type = CQ_TRIANGLE};
        for (int k = 0; k < 3; k++)
            s.triangle.v[k] = cq_v3(tu_uniform(rng, -size, size), tu_uniform(rng, -size, size),
                                    tu_uniform(rng, -size, size));
        return s;
    }
    case CQ_CONVEX: {
        cq_vec3 p[12];
        for (int k = 0; k < 12; k++)
            p[k] = cq_v3(tu_uniform(rng, -size, size), tu_uniform(rng, -size, size), tu_uniform(rng, -size, size));
        cq_hull *h = NULL;
        ck_assert_int_eq(cq_hull_build(p, 12, tu_uniform(rng, 0, 0.2) * size, &h), CQ_OK);
        return (cq_shape){.type = CQ_CONVEX, .convex = {h}};
    }
    case CQ_PLANE: {
        cq_vec3 n = cq_v3(tu_uniform(rng, -0.3, 0.3), 1, tu_uniform(rng, -0.3, 0.3));
        return wo_plane(cq_scale(n, 1 / cq_len(n)), tu_uniform(rng, -1, 0) * size);
    }
    default:
        break;
    }
    ck_abort_msg("no such type");
    return wo_sphere(1);
}

int wo_items(const cq_world *w, wo_item **out)
{
    int n = cq_world_count(w), got = -1;
    cq_world_handle *h = malloc(sizeof *h * (size_t)(n + 1));
    *out = malloc(sizeof **out * (size_t)(n + 1));
    ck_assert(h && *out);
    ck_assert_int_eq(cq_world_list(w, h, n, &got), CQ_OK);
    ck_assert_int_eq(got, n);
    for (int k = 0; k < n; k++) {
        wo_item *it = &(*out)[k];
        it->h = h[k];
        const char *id = cq_world_id(w, h[k]);
        ck_assert(id != NULL && strlen(id) <= CQ_WORLD_ID_MAX);
        strcpy(it->id, id);
        ck_assert_int_eq(cq_world_get(w, h[k], &it->body), CQ_OK);
        if (k > 0)
            ck_assert(strcmp((*out)[k - 1].id, it->id) < 0);
    }
    free(h);
    return n;
}

static bool vec_eq(cq_vec3 a, cq_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

static bool shape_eq(const cq_shape *a, const cq_shape *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case CQ_SPHERE:
        return a->sphere.radius == b->sphere.radius;
    case CQ_CAPSULE:
        return a->capsule.radius == b->capsule.radius && a->capsule.half_height == b->capsule.half_height;
    case CQ_BOX:
        return vec_eq(a->box.half, b->box.half);
    case CQ_TRIANGLE:
        return vec_eq(a->triangle.v[0], b->triangle.v[0]) && vec_eq(a->triangle.v[1], b->triangle.v[1]) &&
               vec_eq(a->triangle.v[2], b->triangle.v[2]);
    case CQ_CONVEX:
        return a->convex.hull == b->convex.hull;
    case CQ_PLANE:
        return vec_eq(a->plane.normal, b->plane.normal) && a->plane.offset == b->plane.offset;
    default:
        return false;
    }
}

static bool body_eq(const cq_world_body *a, const cq_world_body *b)
{
    return shape_eq(&a->shape, &b->shape) && vec_eq(a->pose.p, b->pose.p) && vec_eq(a->pose.r.c[0], b->pose.r.c[0]) &&
           vec_eq(a->pose.r.c[1], b->pose.r.c[1]) && vec_eq(a->pose.r.c[2], b->pose.r.c[2]) &&
           vec_eq(a->velocity, b->velocity) && a->layer == b->layer && a->mask == b->mask;
}

int wo_brute_count(const cq_world *w, double skin, bool filters)
{
    wo_item *items;
    int n = wo_items(w, &items);
    for (int k = 0; k < n && !filters; k++)
        items[k].body.layer = items[k].body.mask = ~0u;
    int(*pairs)[2];
    int np = wo_brute_pairs(items, n, skin, &pairs);
    free(pairs);
    free(items);
    return np;
}

static int listing_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

void wo_check_listing(const cq_world *w, const char *ids, size_t stride, const bool *alive, int pool)
{
    wo_item *items;
    int n = wo_items(w, &items), nm = 0;
    const char **want = malloc(sizeof *want * (size_t)(pool > 0 ? pool : 1));
    ck_assert(want != NULL);
    for (int k = 0; k < pool; k++)
        if (alive[k])
            want[nm++] = ids + (size_t)k * stride;
    qsort(want, (size_t)nm, sizeof *want, listing_cmp);
    ck_assert_int_eq(n, nm);
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(items[i].id, want[i]);
    free(want);
    free(items);
}

bool wo_items_equal(const wo_item *a, int na, const wo_item *b, int nb)
{
    if (na != nb)
        return false;
    for (int k = 0; k < na; k++)
        if (strcmp(a[k].id, b[k].id) != 0 || a[k].h.index != b[k].h.index ||
            a[k].h.generation != b[k].h.generation || !body_eq(&a[k].body, &b[k].body))
            return false;
    return true;
}

int wo_brute_pairs(const wo_item *items, int n, double skin, int (**out)[2])
{
    int cap = 64, count = 0;
    *out = malloc(sizeof **out * (size_t)cap);
    ck_assert(*out != NULL);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const cq_world_body *a = &items[i].body, *b = &items[j].body;
            if (a->shape.type == CQ_PLANE && b->shape.type == CQ_PLANE)
                continue;
            if (!(a->layer & b->mask) || !(b->layer & a->mask))
                continue;
            cq_aabb ba = cq_aabb_fatten(cq__shape_aabb(&a->shape, &a->pose), skin / 2);
            cq_aabb bb = cq_aabb_fatten(cq__shape_aabb(&b->shape, &b->pose), skin / 2);
            if (!cq_aabb_overlap(&ba, &bb))
                continue;
            if (count == cap) {
                cap *= 2;
                *out = realloc(*out, sizeof **out * (size_t)cap);
                ck_assert(*out != NULL);
            }
            (*out)[count][0] = i;
            (*out)[count][1] = j;
            count++;
        }
    return count;
}

cq_world_handle wo_handle(const cq_world *w, const char *id)
{
    cq_world_handle h = {0, 0};
    ck_assert_int_eq(cq_world_find(w, id, &h), CQ_OK);
    return h;
}

int wo_find(const wo_item *items, int n, cq_world_handle h)
{
    for (int k = 0; k < n; k++)
        if (items[k].h.index == h.index && items[k].h.generation == h.generation)
            return k;
    return -1;
}

void wo_check_pairs(const cq_world *w, double skin)
{
    wo_item *items;
    int n = wo_items(w, &items);
    int (*want)[2];
    int nw = wo_brute_pairs(items, n, skin, &want);
    cq_world_pair *got = malloc(sizeof *got * (size_t)(nw + 1));
    int ng = -1;
    ck_assert_int_eq(cq_world_pairs(w, got, nw + 1, &ng), CQ_OK);
    ck_assert_int_eq(ng, nw);
    for (int k = 0; k < ng; k++)
        if (wo_find(items, n, got[k].a) != want[k][0] || wo_find(items, n, got[k].b) != want[k][1])
            ck_abort_msg("pair %d differs", k);
    if (nw > 0)
        ck_assert_int_eq(cq_world_pairs(w, got, nw - 1, &ng), CQ_ERANGE);
    free(got);
    free(want);
    free(items);
}

void *wo_probe_alloc(size_t size, void *ctx)
{
    wo_alloc_probe *p = ctx;
    ++p->calls;
    return p->fail_from && p->calls >= p->fail_from ? NULL : malloc(size);
}

void wo_probe_free(void *ptr, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}
