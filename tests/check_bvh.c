/* The BVH against brute force over all boxes: box, ray and sweep queries
 * give exactly the brute-force item sets (oracles: a separating-interval
 * overlap test, Liang-Barsky clipping of the ray against the six face
 * planes, and for sweeps the same clipping from the moving box's centre
 * against each box grown by its half extents), closest-hit pruning finds
 * the brute-force minimum, and a tree walk checks the structure (every
 * item once, every node box the exact union below it, the depth bound). */
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "cq/alloc.h"
#include "cq/status.h"
#include "testutil.h"

Suite *bvh_suite(void);

/* ---- box sets ---- */

typedef enum set_kind { UNIFORM, CLUSTERED, IDENTICAL, POINTS, WITH_INFINITE, SET_KINDS } set_kind;

static cq_aabb centred(cq_vec3 c, cq_vec3 h) { return (cq_aabb){cq_sub(c, h), cq_add(c, h)}; }

static cq_vec3 rand_vec(tu_rng *rng, double lo, double hi)
{
    return cq_v3(tu_uniform(rng, lo, hi), tu_uniform(rng, lo, hi), tu_uniform(rng, lo, hi));
}

/* Plane-like boxes: unbounded on some sides, never NaN. */
static cq_aabb infinite_box(int k)
{
    switch (k % 3) {
    case 0: /* the half-space y <= 2 */
        return (cq_aabb){cq_v3(-INFINITY, -INFINITY, -INFINITY), cq_v3(INFINITY, 2, INFINITY)};
    case 1: /* a tilted plane: unbounded everywhere */
        return (cq_aabb){cq_v3(-INFINITY, -INFINITY, -INFINITY), cq_v3(INFINITY, INFINITY, INFINITY)};
    default: /* a slab infinite in x only */
        return (cq_aabb){cq_v3(-INFINITY, 10, -5), cq_v3(INFINITY, 12, 5)};
    }
}

static void make_set(set_kind kind, tu_rng *rng, cq_aabb *out, int n)
{
    cq_vec3 clusters[6];
    for (int k = 0; k < 6; k++)
        clusters[k] = rand_vec(rng, -100, 100);
    for (int i = 0; i < n; i++) {
        switch (kind) {
        case CLUSTERED: {
            cq_vec3 c = cq_add(clusters[i % 6], rand_vec(rng, -3, 3));
            out[i] = centred(c, rand_vec(rng, 0, 0.5));
            break;
        }
        case IDENTICAL:
            out[i] = centred(cq_v3(1, 2, 3), cq_v3(4, 0.5, 2));
            break;
        case POINTS: /* zero-size boxes on an integer grid, many duplicates */
            out[i] = centred(cq_v3(floor(tu_uniform(rng, -8, 8)), floor(tu_uniform(rng, -8, 8)),
                                   floor(tu_uniform(rng, -8, 8))),
                             cq_v3(0, 0, 0));
            break;
        default:
            out[i] = centred(rand_vec(rng, -100, 100), rand_vec(rng, 0, 4));
            if (kind == WITH_INFINITE && i % 97 == 5)
                out[i] = infinite_box(i / 97);
        }
    }
}

/* ---- structure ---- */

typedef struct walk {
    const cq_bvh *bvh;
    int *slot_seen;
    int nodes_seen, max_depth;
} walk;

static bool box_eq(cq_aabb a, cq_aabb b)
{
    return a.min.x == b.min.x && a.min.y == b.min.y && a.min.z == b.min.z && a.max.x == b.max.x &&
           a.max.y == b.max.y && a.max.z == b.max.z;
}

/* The exact union of the subtree (recomputed from the slot boxes). */
static cq_aabb walk_node(walk *w, int node, int depth)
{
    const cq_bvh *bvh = w->bvh;
    ck_assert(node >= 0 && node < bvh->node_count);
    ck_assert_int_lt(depth, CQ_BVH_MAX_DEPTH);
    w->nodes_seen++;
    w->max_depth = depth > w->max_depth ? depth : w->max_depth;
    const cq_bvh_node *n = &bvh->nodes[node];
    cq_aabb u;
    if (n->count == 0) {
        ck_assert_int_gt(n->first, node); /* children after parents: refit order */
        cq_aabb l = walk_node(w, n->first, depth + 1), r = walk_node(w, n->first + 1, depth + 1);
        u = cq_aabb_union(l, r);
    } else {
        ck_assert(n->count >= 1 && n->count <= CQ_BVH_LEAF_MAX);
        ck_assert(n->first >= 0 && n->first + n->count <= bvh->finite_count);
        u = bvh->boxes[n->first];
        for (int s = n->first; s < n->first + n->count; s++) {
            w->slot_seen[s]++;
            u = cq_aabb_union(u, bvh->boxes[s]);
        }
    }
    ck_assert(box_eq(n->box, u));
    return u;
}

static bool finite_box(cq_aabb b) { return cq_v3_finite(b.min) && cq_v3_finite(b.max); }

/* Checks the tree against the input boxes; returns its depth. After a
 * refit (fresh false) an item may have changed finiteness since the build. */
static int validate_tree(const cq_bvh *bvh, const cq_aabb *boxes, int n, bool fresh)
{
    ck_assert_int_eq(bvh->count, n);
    int finite = bvh->finite_count;
    if (fresh) {
        finite = 0;
        for (int i = 0; i < n; i++)
            finite += finite_box(boxes[i]);
        ck_assert_int_eq(bvh->finite_count, finite);
    }
    int *item_seen = calloc((size_t)n + 1, sizeof(int)), *slot_seen = calloc((size_t)n + 1, sizeof(int));
    for (int s = 0; s < n; s++) {
        int item = bvh->items[s];
        ck_assert(item >= 0 && item < n);
        ck_assert_int_eq(item_seen[item]++, 0);
        ck_assert(box_eq(bvh->boxes[s], boxes[item]));
        ck_assert(!fresh || finite_box(boxes[item]) == (s < finite));
        if (s > finite)
            ck_assert_int_lt(bvh->items[s - 1], item); /* the infinite list is in item order */
    }
    walk w = {bvh, slot_seen, 0, 0};
    if (finite > 0)
        walk_node(&w, 0, 0);
    ck_assert_int_eq(w.nodes_seen, bvh->node_count);
    for (int s = 0; s < finite; s++)
        ck_assert_int_eq(slot_seen[s], 1);
    free(item_seen);
    free(slot_seen);
    return w.max_depth;
}

static int validate(const cq_bvh *bvh, const cq_aabb *boxes, int n) { return validate_tree(bvh, boxes, n, true); }

/* ---- oracles ---- */

static bool oracle_overlap(cq_aabb a, cq_aabb b)
{
    return !(a.max.x < b.min.x || b.max.x < a.min.x || a.max.y < b.min.y || b.max.y < a.min.y ||
             a.max.z < b.min.z || b.max.z < a.min.z);
}

/* Liang-Barsky: the segment o + t d, t in [0, tmax], clipped by the six
 * face half-spaces of b; the entry t, or -1 when nothing is left. */
static double oracle_clip(cq_vec3 o, cq_vec3 d, double tmax, cq_aabb b)
{
    double p[6] = {-d.x, d.x, -d.y, d.y, -d.z, d.z};
    double q[6] = {o.x - b.min.x, b.max.x - o.x, o.y - b.min.y, b.max.y - o.y, o.z - b.min.z, b.max.z - o.z};
    double enter = 0, exit = tmax;
    for (int k = 0; k < 6; k++) {
        if (p[k] == 0) {
            if (q[k] < 0)
                return -1;
            continue;
        }
        double r = q[k] / p[k];
        if (p[k] < 0)
            enter = r > enter ? r : enter;
        else
            exit = r < exit ? r : exit;
    }
    return enter <= exit ? enter : -1;
}

/* The sweep oracle: from the moving box's centre against b grown by its half extents. */
static double oracle_sweep(cq_aabb moving, cq_vec3 d, double tmax, cq_aabb b)
{
    cq_vec3 c = cq_scale(cq_add(moving.min, moving.max), 0.5), h = cq_scale(cq_sub(moving.max, moving.min), 0.5);
    return oracle_clip(c, d, tmax, (cq_aabb){cq_sub(b.min, h), cq_add(b.max, h)});
}

/* ---- visitors ---- */

typedef struct collect {
    int *items;
    int count, stop_after;
} collect;

static bool collect_visit(void *ctx, int item)
{
    collect *c = ctx;
    c->items[c->count++] = item;
    return c->stop_after == 0 || c->count < c->stop_after;
}

static double collect_ray(void *ctx, int item, double tmax)
{
    return collect_visit(ctx, item) ? tmax : -1;
}

/* Records the visits and shortens tmax to the oracle entry of the item. */
typedef struct closest {
    const cq_aabb *boxes;
    cq_aabb moving; /* the swept box; a point for rays */
    cq_vec3 origin, dir;
    bool sweep;
    double best;
    int visits;
} closest;

static double closest_entry(const closest *c, int item, double tmax)
{
    return c->sweep ? oracle_sweep(c->moving, c->dir, tmax, c->boxes[item])
                    : oracle_clip(c->origin, c->dir, tmax, c->boxes[item]);
}

static double closest_visit(void *ctx, int item, double tmax)
{
    closest *c = ctx;
    c->visits++;
    double t = closest_entry(c, item, tmax);
    if (t >= 0 && t < c->best)
        c->best = t;
    return t >= 0 ? t : tmax;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The visited items, sorted, equal the brute-force list (ascending). */
static void assert_same_set(collect *got, const int *want, int want_count)
{
    qsort(got->items, (size_t)got->count, sizeof(int), cmp_int);
    ck_assert_int_eq(got->count, want_count);
    for (int k = 0; k < want_count; k++)
        ck_assert_int_eq(got->items[k], want[k]);
}

/* ---- query checks ---- */

/* A direction with a random subset of exact zero components. */
static cq_vec3 rand_dir(tu_rng *rng, double scale)
{
    cq_vec3 d = rand_vec(rng, -scale, scale);
    int zeros = (int)tu_uniform(rng, 0, 8);
    return cq_v3(zeros & 1 ? 0 : d.x, zeros & 2 ? 0 : d.y, zeros & 4 ? 0 : d.z);
}

static void check_box_queries(const cq_bvh *bvh, const cq_aabb *boxes, int n, tu_rng *rng, int queries)
{
    int *want = malloc(((size_t)n + 1) * sizeof(int)), *got = malloc(((size_t)n + 1) * sizeof(int));
    for (int q = 0; q < queries; q++) {
        cq_aabb box = centred(rand_vec(rng, -110, 110), rand_vec(rng, 0, q % 4 == 0 ? 40 : 8));
        if (q % 7 == 0) /* exactly one of the set: touching boundaries */
            box = boxes[(int)tu_uniform(rng, 0, n)];
        int wc = 0;
        for (int i = 0; i < n; i++)
            if (oracle_overlap(box, boxes[i]))
                want[wc++] = i;
        collect c = {got, 0, 0};
        cq__bvh_query_aabb(bvh, &box, collect_visit, &c);
        assert_same_set(&c, want, wc);
    }
    free(want);
    free(got);
}

/* A ray (sweep when moving is non-NULL) against brute force: the same hit
 * set with tmax kept, and the brute-force minimum with closest-hit pruning
 * (compared exactly: the visitor computes its distances with the same
 * oracle, so only a pruned-away closer box could change the minimum). */
static void check_cast(const cq_bvh *bvh, const cq_aabb *boxes, int n, const cq_aabb *moving, cq_vec3 o, cq_vec3 d,
                       double tmax, int *want, int *got)
{
    int wc = 0;
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        double t = moving ? oracle_sweep(*moving, d, tmax, boxes[i]) : oracle_clip(o, d, tmax, boxes[i]);
        if (t >= 0) {
            want[wc++] = i;
            best = t < best ? t : best;
        }
    }
    collect c = {got, 0, 0};
    if (moving)
        cq__bvh_query_sweep(bvh, moving, d, tmax, collect_ray, &c);
    else
        cq__bvh_query_ray(bvh, o, d, tmax, collect_ray, &c);
    assert_same_set(&c, want, wc);

    closest cl = {boxes, moving ? *moving : (cq_aabb){o, o}, o, d, moving != NULL, INFINITY, 0};
    if (moving)
        cq__bvh_query_sweep(bvh, moving, d, tmax, closest_visit, &cl);
    else
        cq__bvh_query_ray(bvh, o, d, tmax, closest_visit, &cl);
    ck_assert(cl.best == best);
    ck_assert_int_le(cl.visits, wc);
}

static void check_ray_queries(const cq_bvh *bvh, const cq_aabb *boxes, int n, tu_rng *rng, int queries)
{
    int *want = malloc(((size_t)n + 1) * sizeof(int)), *got = malloc(((size_t)n + 1) * sizeof(int));
    static const double tmaxes[] = {INFINITY, 60, 400};
    for (int q = 0; q < queries; q++) {
        cq_vec3 o = rand_vec(rng, -120, 120), d = rand_dir(rng, 1);
        if (q % 5 == 0) { /* grid-aligned: origins on faces, exact axis directions */
            o = cq_v3(floor(tu_uniform(rng, -9, 9)), floor(tu_uniform(rng, -9, 9)), floor(tu_uniform(rng, -9, 9)));
            d = cq_v3(floor(tu_uniform(rng, -2, 3)), floor(tu_uniform(rng, -2, 3)), floor(tu_uniform(rng, -2, 3)));
        }
        check_cast(bvh, boxes, n, NULL, o, d, tmaxes[q % 3], want, got);
    }
    free(want);
    free(got);
}

static void check_sweep_queries(const cq_bvh *bvh, const cq_aabb *boxes, int n, tu_rng *rng, int queries)
{
    int *want = malloc(((size_t)n + 1) * sizeof(int)), *got = malloc(((size_t)n + 1) * sizeof(int));
    for (int q = 0; q < queries; q++) {
        /* half extents in quarter units, so the centre form of the oracle is exact */
        cq_vec3 h = cq_scale(cq_v3(floor(tu_uniform(rng, 0, 20)), floor(tu_uniform(rng, 0, 20)),
                                   floor(tu_uniform(rng, 0, 20))),
                             0.25);
        cq_aabb moving = centred(rand_vec(rng, -110, 110), h);
        cq_vec3 d = rand_dir(rng, 80);
        check_cast(bvh, boxes, n, &moving, cq_v3(0, 0, 0), d, q % 2 ? 1.0 : 0.5, want, got);
    }
    free(want);
    free(got);
}

static void check_all_queries(const cq_bvh *bvh, const cq_aabb *boxes, int n, tu_rng *rng, int queries)
{
    check_box_queries(bvh, boxes, n, rng, queries);
    check_ray_queries(bvh, boxes, n, rng, queries);
    check_sweep_queries(bvh, boxes, n, rng, queries);
}

/* ---- tests ---- */

START_TEST(test_empty)
{
    size_t before = cq_alloc_bytes();
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, NULL, 0), CQ_OK);
    ck_assert_int_eq(bvh.count, 0);
    ck_assert_int_eq(bvh.node_count, 0);
    ck_assert(cq_alloc_bytes() == before);
    int got[1];
    collect c = {got, 0, 0};
    cq_aabb all = {cq_v3(-INFINITY, -INFINITY, -INFINITY), cq_v3(INFINITY, INFINITY, INFINITY)};
    cq__bvh_query_aabb(&bvh, &all, collect_visit, &c);
    cq__bvh_query_ray(&bvh, cq_v3(0, 0, 0), cq_v3(1, 0, 0), INFINITY, collect_ray, &c);
    cq__bvh_query_sweep(&bvh, &(cq_aabb){cq_v3(0, 0, 0), cq_v3(1, 1, 1)}, cq_v3(1, 0, 0), 1, collect_ray, &c);
    ck_assert_int_eq(c.count, 0);
    cq__bvh_refit(&bvh, NULL);
    ck_assert_double_eq(cq__bvh_cost(&bvh), 0);
    cq__bvh_free(&bvh);
    cq__bvh_free(&bvh); /* an empty tree frees twice */
}
END_TEST

/* 1 and 2 items: a single leaf, hit and missed from every side. */
START_TEST(test_tiny)
{
    tu_rng rng = {11};
    cq_aabb boxes[2] = {centred(cq_v3(0, 0, 0), cq_v3(1, 1, 1)), centred(cq_v3(5, 0, 0), cq_v3(1, 2, 3))};
    for (int n = 1; n <= 2; n++) {
        cq_bvh bvh;
        ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
        ck_assert_int_le(validate(&bvh, boxes, n), n - 1); /* SAH: two apart boxes get two leaves */
        int got[2];
        collect c = {got, 0, 0};
        cq__bvh_query_ray(&bvh, cq_v3(-10, 0, 0), cq_v3(1, 0, 0), INFINITY, collect_ray, &c);
        ck_assert_int_eq(c.count, n);
        c.count = 0;
        cq__bvh_query_ray(&bvh, cq_v3(-10, 1.5, 0), cq_v3(1, 0, 0), INFINITY, collect_ray, &c);
        ck_assert_int_eq(c.count, n - 1); /* only the taller box */
        c.count = 0;
        cq__bvh_query_ray(&bvh, cq_v3(-10, 0, 0), cq_v3(1, 0, 0), 9, collect_ray, &c);
        ck_assert_int_eq(c.count, 1); /* the first box starts at t = 9: touching counts */
        c.count = 0;
        cq__bvh_query_ray(&bvh, cq_v3(-10, 0, 0), cq_v3(1, 0, 0), 8.99, collect_ray, &c);
        ck_assert_int_eq(c.count, 0);
        check_all_queries(&bvh, boxes, n, &rng, 200);
        cq__bvh_free(&bvh);
    }
}
END_TEST

/* Every kind of set, built, checked, queried against brute force. */
START_TEST(test_sets)
{
    set_kind kind = (set_kind)_i;
    int n = 1000;
    tu_rng rng = {100 + (uint64_t)kind};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    make_set(kind, &rng, boxes, n);
    size_t before = cq_alloc_bytes();
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
    ck_assert(cq_alloc_bytes() == before + bvh.block_size);
    int depth = validate(&bvh, boxes, n);
    ck_assert_int_le(depth, 40);
    check_all_queries(&bvh, boxes, n, &rng, 300);
    cq__bvh_free(&bvh);
    ck_assert(cq_alloc_bytes() == before);
    free(boxes);
}
END_TEST

START_TEST(test_large)
{
    int n = 20000;
    tu_rng rng = {200};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    make_set(WITH_INFINITE, &rng, boxes, n);
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
    validate(&bvh, boxes, n);
    check_all_queries(&bvh, boxes, n, &rng, 150);
    cq__bvh_free(&bvh);
    free(boxes);
}
END_TEST

/* Moves every box, refits, and queries again against brute force; the SAH
 * cost grows a little for small motion and a lot when boxes swap places. */
START_TEST(test_refit)
{
    int n = 4000;
    tu_rng rng = {300};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    make_set(WITH_INFINITE, &rng, boxes, n);
    cq_bvh bvh, fresh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
    double built = cq__bvh_cost(&bvh);
    size_t bytes = cq_alloc_bytes();
    for (int step = 0; step < 3; step++) {
        for (int i = 0; i < n; i++) { /* small motion: up to 1 unit, and +-10% in size */
            if (!finite_box(boxes[i]))
                continue;
            cq_vec3 c = cq_scale(cq_add(boxes[i].min, boxes[i].max), 0.5);
            cq_vec3 h = cq_scale(cq_sub(boxes[i].max, boxes[i].min), 0.5 * tu_uniform(&rng, 0.9, 1.1));
            boxes[i] = centred(cq_add(c, rand_vec(&rng, -1, 1)), h);
        }
        cq__bvh_refit(&bvh, boxes);
        ck_assert(cq_alloc_bytes() == bytes);
        validate_tree(&bvh, boxes, n, false);
        check_all_queries(&bvh, boxes, n, &rng, 60);
    }
    double moved = cq__bvh_cost(&bvh);
    ck_assert_double_lt(moved, 1.3 * built);

    for (int i = 0; i < n; i++) /* scramble: every box jumps anywhere */
        if (finite_box(boxes[i]))
            boxes[i] = centred(rand_vec(&rng, -100, 100), rand_vec(&rng, 0, 4));
    boxes[1] = infinite_box(1); /* a finite item turns infinite: ancestors grow, queries stay exact */
    cq__bvh_refit(&bvh, boxes);
    validate_tree(&bvh, boxes, n, false);
    check_all_queries(&bvh, boxes, n, &rng, 60);
    ck_assert(cq__bvh_cost(&bvh) == INFINITY);
    boxes[1] = centred(cq_v3(0, 0, 0), cq_v3(1, 1, 1));
    cq__bvh_refit(&bvh, boxes);
    double scrambled = cq__bvh_cost(&bvh);
    ck_assert_int_eq(cq__bvh_build(&fresh, boxes, n), CQ_OK);
    double rebuilt = cq__bvh_cost(&fresh);
    ck_assert_double_gt(scrambled, 3 * rebuilt);
    ck_assert_double_lt(rebuilt, 1.3 * built);
    cq__bvh_free(&fresh);
    cq__bvh_free(&bvh);
    free(boxes);
}
END_TEST

/* The cost from a recursive walk: probability of reaching a node times its tests. */
static double walk_cost(const cq_bvh *bvh, int node, double root_area)
{
    const cq_bvh_node *n = &bvh->nodes[node];
    cq_vec3 e = cq_sub(n->box.max, n->box.min);
    double p = (e.x * e.y + e.y * e.z + e.z * e.x) / root_area;
    if (n->count)
        return p * n->count;
    return p + walk_cost(bvh, n->first, root_area) + walk_cost(bvh, n->first + 1, root_area);
}

START_TEST(test_cost)
{
    int n = 3000;
    tu_rng rng = {350};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    make_set(UNIFORM, &rng, boxes, n);
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
    cq_vec3 e = cq_sub(bvh.nodes[0].box.max, bvh.nodes[0].box.min);
    double cost = walk_cost(&bvh, 0, e.x * e.y + e.y * e.z + e.z * e.x);
    ck_assert_double_eq_tol(cq__bvh_cost(&bvh), cost, 1e-9 * cost);
    /* a good tree over n uniform boxes tests O(log n) boxes per ray, far below n */
    ck_assert_double_lt(cost, 150);
    ck_assert_double_gt(cost, 1);
    cq__bvh_free(&bvh);
    free(boxes);
}
END_TEST

/* A query that stops early gets no more visits. */
START_TEST(test_early_stop)
{
    int n = 1000;
    tu_rng rng = {400};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    for (int i = 0; i < n; i++) /* along the x axis, so the ray and the sweep meet most of them */
        boxes[i] = i % 97 == 5 ? infinite_box(i / 97)
                               : centred(cq_v3(tu_uniform(&rng, -100, 100), tu_uniform(&rng, -1, 1),
                                               tu_uniform(&rng, -1, 1)),
                                         cq_v3(1, 1, 1));
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
    int got[1000];
    cq_aabb all = {cq_v3(-1000, -1000, -1000), cq_v3(1000, 1000, 1000)};
    for (int stop = 1; stop <= 40; stop += 13) { /* stops inside the infinite list and inside the tree */
        collect c = {got, 0, stop};
        cq__bvh_query_aabb(&bvh, &all, collect_visit, &c);
        ck_assert_int_eq(c.count, stop);
        c.count = 0;
        cq__bvh_query_ray(&bvh, cq_v3(-150, 0, 0), cq_v3(1, 0.01, 0.02), INFINITY, collect_ray, &c);
        ck_assert_int_eq(c.count, stop);
        c.count = 0;
        cq__bvh_query_sweep(&bvh, &(cq_aabb){cq_v3(-150, -20, -20), cq_v3(-140, 20, 20)}, cq_v3(300, 0, 0), 1,
                            collect_ray, &c);
        ck_assert_int_eq(c.count, stop);
    }
    cq__bvh_free(&bvh);
    free(boxes);
}
END_TEST

/* Separated boxes on a line: near-child-first order means a closest-hit
 * ray from either end visits only its first leaf. */
START_TEST(test_near_first)
{
    enum { N = 256 };
    cq_aabb boxes[N];
    for (int i = 0; i < N; i++)
        boxes[i] = centred(cq_v3(3.0 * ((i * 37) % N), 0, 0), cq_v3(1, 1, 1)); /* shuffled order */
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, N), CQ_OK);
    for (int side = -1; side <= 1; side += 2) {
        cq_vec3 o = cq_v3(side < 0 ? -10 : 3.0 * (N - 1) + 10, 0.3, -0.2), d = cq_v3(-side, 0, 0);
        closest c = {boxes, {o, o}, o, d, false, INFINITY, 0};
        cq__bvh_query_ray(&bvh, o, d, INFINITY, closest_visit, &c);
        ck_assert_double_eq_tol(c.best, 9, 1e-12);
        ck_assert_int_le(c.visits, CQ_BVH_LEAF_MAX);
    }
    cq__bvh_free(&bvh);
}
END_TEST

/* Inputs that defeat the SAH: the depth stays bounded and queries exact. */
START_TEST(test_depth_bound)
{
    int n = 3000;
    tu_rng rng = {500};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    for (int variant = 0; variant < 3; variant++) {
        for (int i = 0; i < n; i++) {
            if (variant == 0) /* all centroids equal, sizes differ */
                boxes[i] = centred(cq_v3(5, 5, 5), cq_v3(i % 7, i % 11, 0.5));
            else if (variant == 1) /* sorted on a line at powers of two: each bin split peels off one */
                boxes[i] = (cq_aabb){cq_v3(ldexp(1, i / 3), 0, 0), cq_v3(ldexp(1.001, i / 3), 1, 1)};
            else /* a sorted line of nested boxes growing geometrically */
                boxes[i] = centred(cq_v3(pow(1.25, i / 12.0), 0, 0), cq_v3(pow(1.25, i / 12.0), 1, 1));
        }
        cq_bvh bvh;
        ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
        int depth = validate(&bvh, boxes, n);
        ck_assert_int_lt(depth, CQ_BVH_MAX_DEPTH);
        check_all_queries(&bvh, boxes, n, &rng, 60);
        cq__bvh_free(&bvh);
    }
    free(boxes);
}
END_TEST

/* An allocator that fails after a number of successes. */
static int allocs_left;

static void *failing_alloc(size_t size, void *ctx)
{
    (void)ctx;
    return allocs_left-- > 0 ? malloc(size) : NULL;
}

static void plain_free(void *ptr, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}

START_TEST(test_no_memory)
{
    int n = 500;
    tu_rng rng = {600};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    make_set(WITH_INFINITE, &rng, boxes, n);
    size_t before = cq_alloc_bytes();
    cq_set_allocator(&(cq_allocator){failing_alloc, plain_free, NULL});
    for (int ok = 0; ok < 2; ok++) { /* the scratch fails, then the tree */
        allocs_left = ok;
        cq_bvh bvh;
        ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_ENO_MEMORY);
        ck_assert(cq_alloc_bytes() == before);
        ck_assert_int_eq(bvh.count, 0);
        ck_assert_int_eq(bvh.node_count, 0);
        cq__bvh_free(&bvh);
    }
    allocs_left = 2;
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, n), CQ_OK);
    validate(&bvh, boxes, n);
    cq__bvh_free(&bvh);
    ck_assert(cq_alloc_bytes() == before);
    cq_set_allocator(NULL);
    free(boxes);
}
END_TEST

START_TEST(test_bad_input)
{
    cq_aabb boxes[3] = {centred(cq_v3(0, 0, 0), cq_v3(1, 1, 1)), centred(cq_v3(0, 0, 0), cq_v3(1, 1, 1)),
                        centred(cq_v3(0, 0, 0), cq_v3(1, 1, 1))};
    size_t before = cq_alloc_bytes();
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, -1), CQ_ERANGE);
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, CQ_BVH_MAX_ITEMS + 1), CQ_ERANGE);
    boxes[2].max.y = NAN;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, 3), CQ_ENOT_FINITE);
    ck_assert_int_eq(bvh.count, 0);
    ck_assert(cq_alloc_bytes() == before);
}
END_TEST

/* The same input twice gives the same tree byte for byte, and the same visit order. */
START_TEST(test_deterministic)
{
    int n = 5000;
    tu_rng rng = {700};
    cq_aabb *boxes = malloc((size_t)n * sizeof(cq_aabb));
    make_set(CLUSTERED, &rng, boxes, n);
    for (int i = 0; i < n; i += 50)
        boxes[i] = boxes[i + 1]; /* some duplicates */
    cq_bvh a, b;
    ck_assert_int_eq(cq__bvh_build(&a, boxes, n), CQ_OK);
    ck_assert_int_eq(cq__bvh_build(&b, boxes, n), CQ_OK);
    ck_assert_int_eq(a.node_count, b.node_count);
    ck_assert(a.block_size == b.block_size);
    ck_assert_int_eq(memcmp(a.block, b.block, a.block_size), 0);
    int *ga = malloc((size_t)n * sizeof(int)), *gb = malloc((size_t)n * sizeof(int));
    collect ca = {ga, 0, 0}, cb = {gb, 0, 0};
    cq__bvh_query_ray(&a, cq_v3(-150, 1, 2), cq_v3(1, 0.1, 0.05), INFINITY, collect_ray, &ca);
    cq__bvh_query_ray(&b, cq_v3(-150, 1, 2), cq_v3(1, 0.1, 0.05), INFINITY, collect_ray, &cb);
    ck_assert_int_eq(ca.count, cb.count);
    ck_assert_int_eq(memcmp(ga, gb, (size_t)ca.count * sizeof(int)), 0);
    free(ga);
    free(gb);
    cq__bvh_free(&a);
    cq__bvh_free(&b);
    free(boxes);
}
END_TEST

/* Only infinite items: no tree, the list answers alone. */
START_TEST(test_only_infinite)
{
    cq_aabb boxes[3] = {infinite_box(0), infinite_box(1), infinite_box(2)};
    cq_bvh bvh;
    ck_assert_int_eq(cq__bvh_build(&bvh, boxes, 3), CQ_OK);
    ck_assert_int_eq(bvh.node_count, 0);
    validate(&bvh, boxes, 3);
    tu_rng rng = {800};
    check_all_queries(&bvh, boxes, 3, &rng, 200);
    cq__bvh_free(&bvh);
}
END_TEST

Suite *bvh_suite(void)
{
    Suite *s = suite_create("bvh");
    TCase *tc = tcase_create("build");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_tiny);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_no_memory);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_depth_bound);
    tcase_add_test(tc, test_cost);
    suite_add_tcase(s, tc);
    tc = tcase_create("queries");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_sets, 0, SET_KINDS);
    tcase_add_test(tc, test_large);
    tcase_add_test(tc, test_only_infinite);
    tcase_add_test(tc, test_early_stop);
    tcase_add_test(tc, test_near_first);
    tcase_add_test(tc, test_refit);
    suite_add_tcase(s, tc);
    return s;
}
