/* Bounding-volume hierarchy: binned-SAH build with a median fallback that
 * bounds the depth, O(n) refit, and stack-based box, ray and sweep queries.
 *
 * Build: binned SAH (16 bins on each axis of the centroid bounds, a node
 * test weighted like an item test, leaves of at most CQ_BVH_LEAF_MAX
 * items). Where an SAH split could push a leaf past the depth bound, or
 * where the centroids do not spread along any axis, the node is split at
 * the median centroid of its longest centroid axis instead (at the middle
 * of the range when all centroids coincide); that halves the count, so
 * every leaf has depth < CQ_BVH_MAX_DEPTH and the build and the queries
 * walk with fixed stacks of that size.
 *
 * Items whose box has an infinite coordinate (planes) have no useful
 * centroid, so they stay out of the tree in a separate list that every
 * query tests first, in ascending item order. */
#include "bvh.h"

#include <float.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && !defined(CQ_NO_SIMD)
#include <emmintrin.h>
#endif

#include "cq/alloc.h"
#include "cq/status.h"

#define BINS 16
/* SAH weight of one node test relative to one item test. */
#define TRAVERSAL_COST 1.0
/* The pairs start on a cache line, so each visit reads one line. */
#define PAIR_ALIGN 64

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* ---- build ---- */

/* Working state of one build: per slot an item, its box and its centroid,
 * permuted together (so every pass reads memory in order); nodes are
 * appended in pre-order (children after parents). */
typedef struct builder {
    cq_aabb *boxes;
    cq_vec3 *centroids;
    int *items;
    cq_bvh_node *nodes;
    int node_count;
} builder;

static const cq_aabb empty_box = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};

static bool box_finite(const cq_aabb *b) { return cq_v3_finite(b->min) && cq_v3_finite(b->max); }

static bool box_has_nan(const cq_aabb *b)
{
    return isnan(b->min.x) || isnan(b->min.y) || isnan(b->min.z) || isnan(b->max.x) || isnan(b->max.y) ||
           isnan(b->max.z);
}

/* Half the surface area; an overflowing product (inf * 0) counts as infinite. */
static double half_area(const cq_aabb *b)
{
    cq_vec3 e = cq_sub(b->max, b->min);
    double a = e.x * e.y + e.y * e.z + e.z * e.x;
    return isnan(a) ? INFINITY : a;
}

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* How centroids map to bins: bin = (c - origin) * scale on each axis; a
 * zero scale marks an axis the centroids do not spread along (or whose
 * spread under- or overflows). */
typedef struct binning {
    double origin[3], scale[3];
} binning;

static binning make_binning(const cq_aabb *cbounds)
{
    binning g;
    for (int a = 0; a < 3; a++) {
        g.origin[a] = cq_comp(cbounds->min, a);
        double ext = cq_comp(cbounds->max, a) - g.origin[a], scale = BINS / ext;
        g.scale[a] = ext > 0 && isfinite(ext) && isfinite(scale) ? scale : 0;
    }
    return g;
}

static int bin_of(const binning *g, int axis, double c)
{
    int k = (int)((c - g->origin[axis]) * g->scale[axis]); /* in [0, BINS] after rounding */
    return k < BINS ? k : BINS - 1;
}

typedef struct bin {
    cq_aabb box;
    int count;
} bin;

typedef struct split {
    int axis, bin; /* left = bins [0, bin) */
    double cost;   /* sum of area * count over both sides */
    int imbalance; /* |left - right|, the tie-break that keeps zero-area sets balanced */
} split;

/* Improves *best with the splits between the bins of one axis. */
static void scan_axis(const bin bins[BINS], int axis, split *best)
{
    double right_area[BINS];
    int right_n[BINS];
    cq_aabb acc = empty_box;
    int cnt = 0;
    for (int k = BINS - 1; k > 0; k--) {
        acc = cq_aabb_union(acc, bins[k].box);
        cnt += bins[k].count;
        right_area[k] = half_area(&acc);
        right_n[k] = cnt;
    }
    acc = empty_box;
    cnt = 0;
    for (int k = 1; k < BINS; k++) {
        acc = cq_aabb_union(acc, bins[k - 1].box);
        cnt += bins[k - 1].count;
        if (cnt == 0 || right_n[k] == 0)
            continue;
        double cost = half_area(&acc) * cnt + right_area[k] * right_n[k];
        int imbalance = cnt > right_n[k] ? cnt - right_n[k] : right_n[k] - cnt;
        if (best->axis < 0 || cost < best->cost || (cost == best->cost && imbalance < best->imbalance))
            *best = (split){axis, k, cost, imbalance};
    }
}

/* Best binned-SAH split of slots [lo, hi) over the three axes (one pass
 * bins all three); axis -1 when no axis has centroids in two bins. */
static split best_split(const builder *b, int lo, int hi, const binning *g)
{
    bin bins[3][BINS];
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < BINS; k++)
            bins[a][k] = (bin){empty_box, 0};
    for (int s = lo; s < hi; s++) {
        const cq_aabb *box = &b->boxes[s];
        for (int a = 0; a < 3; a++) {
            if (g->scale[a] == 0)
                continue;
            bin *k = &bins[a][bin_of(g, a, cq_comp(b->centroids[s], a))];
            k->count++;
            k->box = cq_aabb_union(k->box, *box);
        }
    }
    split best = {-1, 0, INFINITY, 0};
    for (int a = 0; a < 3; a++)
        if (g->scale[a] != 0)
            scan_axis(bins[a], a, &best);
    return best;
}

static void swap_slots(builder *b, int i, int j)
{
    int t = b->items[i];
    b->items[i] = b->items[j];
    b->items[j] = t;
    cq_vec3 c = b->centroids[i];
    b->centroids[i] = b->centroids[j];
    b->centroids[j] = c;
    cq_aabb box = b->boxes[i];
    b->boxes[i] = b->boxes[j];
    b->boxes[j] = box;
}

/* Moves the slots left of the split to the front; returns the first right slot. */
static int partition_bins(builder *b, int lo, int hi, const binning *g, split sp)
{
    int mid = lo;
    for (int s = lo; s < hi; s++)
        if (bin_of(g, sp.axis, cq_comp(b->centroids[s], sp.axis)) < sp.bin)
            swap_slots(b, s, mid++);
    return mid;
}

/* Slot i sorts before slot j on axis: by centroid, then item index, a
 * total order, so the selection below is deterministic. */
static bool slot_less(const builder *b, int axis, int i, int j)
{
    double ci = cq_comp(b->centroids[i], axis), cj = cq_comp(b->centroids[j], axis);
    return ci < cj || (ci == cj && b->items[i] < b->items[j]);
}

/* Reorders slots [lo, hi) so that slot k holds the k-th smallest on axis,
 * with smaller ones before it and larger ones after (quickselect with a
 * median-of-three pivot, so sorted input stays linear). */
static void select_nth(builder *b, int axis, int lo, int hi, int k)
{
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2, last = hi - 1;
        if (slot_less(b, axis, mid, lo))
            swap_slots(b, mid, lo);
        if (slot_less(b, axis, last, lo))
            swap_slots(b, last, lo);
        if (slot_less(b, axis, last, mid))
            swap_slots(b, last, mid);
        swap_slots(b, mid, last); /* the median of three is the pivot */
        int store = lo;
        for (int s = lo; s < last; s++)
            if (slot_less(b, axis, s, last))
                swap_slots(b, s, store++);
        swap_slots(b, store, last);
        if (store == k)
            return;
        if (k < store)
            hi = store;
        else
            lo = store + 1;
    }
}

/* Splits slots [lo, hi) in two halves by count: at the median centroid of
 * the longest centroid axis, or at the middle when all centroids coincide. */
static int median_split(builder *b, int lo, int hi, const cq_aabb *cbounds)
{
    cq_vec3 e = cq_sub(cbounds->max, cbounds->min);
    int axis = e.y > e.x ? (e.z > e.y ? 2 : 1) : (e.z > e.x ? 2 : 0);
    int mid = lo + (hi - lo) / 2;
    if (cq_comp(e, axis) > 0)
        select_nth(b, axis, lo, hi, mid);
    return mid;
}

/* Where to split slots [lo, hi) of a node at depth: the first right slot,
 * or -1 for a leaf; *box gets the node's box. The SAH split is only taken
 * when it keeps depth + ceil_log2(count) < CQ_BVH_MAX_DEPTH for both
 * children; the median split keeps that by itself, so every leaf stays
 * above the depth bound. */
static int choose_split(builder *b, int lo, int hi, int depth, cq_aabb *box)
{
    int n = hi - lo;
    cq_aabb cbounds = {b->centroids[lo], b->centroids[lo]};
    *box = empty_box;
    for (int s = lo; s < hi; s++) {
        *box = cq_aabb_union(*box, b->boxes[s]);
        cbounds = cq_aabb_union(cbounds, (cq_aabb){b->centroids[s], b->centroids[s]});
    }
    if (n == 1)
        return -1;
    if (depth + 1 + ceil_log2(n) < CQ_BVH_MAX_DEPTH) {
        binning g = make_binning(&cbounds);
        split sp = best_split(b, lo, hi, &g);
        double area = half_area(box);
        bool leaf_cheaper = !(area * TRAVERSAL_COST + sp.cost < area * n);
        if (n <= CQ_BVH_LEAF_MAX && (sp.axis < 0 || leaf_cheaper))
            return -1;
        if (sp.axis >= 0)
            return partition_bins(b, lo, hi, &g, sp);
    }
    return n <= CQ_BVH_LEAF_MAX ? -1 : median_split(b, lo, hi, &cbounds);
}

/* Builds the tree over slots [0, count) depth first without recursion;
 * nodes are numbered in pre-order, the two children of a node side by
 * side. The stack holds one pending right child per level. */
static void build_tree(builder *b, int count)
{
    typedef struct task {
        int node, lo, hi, depth;
    } task;
    task stack[CQ_BVH_MAX_DEPTH], t = {0, 0, count, 0};
    int top = 0;
    b->node_count = 1;
    for (;;) {
        cq_aabb box;
        int mid = choose_split(b, t.lo, t.hi, t.depth, &box);
        if (mid >= 0) {
            int left = b->node_count;
            b->node_count += 2;
            b->nodes[t.node] = (cq_bvh_node){box, left, 0};
            stack[top++] = (task){left + 1, mid, t.hi, t.depth + 1};
            t = (task){left, t.lo, mid, t.depth + 1};
            continue;
        }
        b->nodes[t.node] = (cq_bvh_node){box, t.lo, t.hi - t.lo};
        if (top == 0)
            return;
        t = stack[--top];
    }
}

/* Puts the finite items first (in item order) and the infinite ones after. */
static int order_items(const cq_aabb *boxes, int count, int *items)
{
    int finite = 0;
    for (int i = 0; i < count; i++)
        if (box_finite(&boxes[i]))
            items[finite++] = i;
    int slot = finite;
    for (int i = 0; i < count; i++)
        if (!box_finite(&boxes[i]))
            items[slot++] = i;
    return finite;
}

/* Allocates the final block for node_count nodes (and their pairs) and
 * count slots, zeroed so that the padding before the aligned pairs is
 * deterministic too. */
static int alloc_tree(cq_bvh *bvh, int node_count, int count)
{
    size_t pairs = (size_t)(node_count / 2) * sizeof(cq_bvh_pair), pad = PAIR_ALIGN - 1;
    size_t nodes = (size_t)node_count * sizeof(cq_bvh_node), boxes = (size_t)count * sizeof(cq_aabb);
    size_t size = pad + pairs + nodes + boxes + (size_t)count * sizeof(int);
    char *block = cq_alloc(size);
    if (!block)
        return CQ_ENO_MEMORY;
    memset(block, 0, size);
    char *at = block + (PAIR_ALIGN - (uintptr_t)block % PAIR_ALIGN) % PAIR_ALIGN;
    *bvh = (cq_bvh){(cq_bvh_node *)(at + pairs), (cq_bvh_pair *)at, (cq_aabb *)(at + pairs + nodes),
                    (int *)(at + pairs + nodes + boxes), node_count, count, 0, block, size};
    return CQ_OK;
}

/* A float at or below d (NaN stays NaN): d lowered by 2^-22 of itself and
 * by 2^-148 outweighs every rounding on the way (2^-24 relative or half the
 * float subnormal step 2^-149), with no branch on the rounding direction.
 * Below -2^127 the margin could leave the float range, so -INFINITY. */
static float float_below(double d)
{
    if (d < -0x1p127)
        return -INFINITY;
    if (d > FLT_MAX)
        return FLT_MAX;
    return (float)(d - fabs(d) * 0x1p-22 - 0x1p-148);
}

/* A float at or above d, the mirror of float_below. */
static float float_above(double d) { return -float_below(-d); }

/* Copies node i (> 0) into its side of its pair. An inverted axis
 * (min > max) is stored sorted: the slab test treats it like the sorted
 * one, or (parallel) rejects it, so that only lets more through. */
static void pack_node(cq_bvh *bvh, int i)
{
    const cq_bvh_node *n = &bvh->nodes[i];
    cq_bvh_pair *p = &bvh->pairs[(i - 1) / 2];
    int side = (i - 1) % 2;
    for (int a = 0; a < 3; a++) {
        double lo = cq_comp(n->box.min, a), hi = cq_comp(n->box.max, a);
        p->min[a][side] = float_below(hi < lo ? hi : lo);
        p->max[a][side] = float_above(hi < lo ? lo : hi);
    }
    p->first[side] = n->first;
    p->count[side] = n->count;
}

int cq__bvh_build(cq_bvh *bvh, const cq_aabb *boxes, int count)
{
    *bvh = (cq_bvh){0};
    if (count < 0 || count > CQ_BVH_MAX_ITEMS)
        return CQ_ERANGE;
    for (int i = 0; i < count; i++)
        if (box_has_nan(&boxes[i]))
            return CQ_ENOT_FINITE;
    if (count == 0)
        return CQ_OK;
    /* Scratch: the worst-case 2n - 1 nodes and the slots; the tree is then
     * copied into a block of its exact size. */
    size_t max_nodes = 2 * (size_t)count - 1;
    size_t nodes_size = max_nodes * sizeof(cq_bvh_node), boxes_size = (size_t)count * sizeof(cq_aabb);
    size_t centroids_size = (size_t)count * sizeof(cq_vec3);
    size_t scratch_size = nodes_size + boxes_size + centroids_size + (size_t)count * sizeof(int);
    char *scratch = cq_alloc(scratch_size);
    if (!scratch)
        return CQ_ENO_MEMORY;
    builder b = {(cq_aabb *)(scratch + nodes_size), (cq_vec3 *)(scratch + nodes_size + boxes_size),
                 (int *)(scratch + nodes_size + boxes_size + centroids_size), (cq_bvh_node *)scratch, 0};
    int finite = order_items(boxes, count, b.items);
    for (int s = 0; s < count; s++) {
        const cq_aabb *box = &boxes[b.items[s]];
        b.boxes[s] = *box;
        b.centroids[s] = cq_add(cq_scale(box->min, 0.5), cq_scale(box->max, 0.5)); /* no overflow */
    }
    if (finite > 0)
        build_tree(&b, finite);
    int status = alloc_tree(bvh, b.node_count, count);
    if (status == CQ_OK) {
        memcpy(bvh->nodes, b.nodes, (size_t)b.node_count * sizeof(cq_bvh_node));
        memcpy(bvh->boxes, b.boxes, boxes_size);
        memcpy(bvh->items, b.items, (size_t)count * sizeof(int));
        bvh->finite_count = finite;
        for (int i = 1; i < b.node_count; i++)
            pack_node(bvh, i);
    }
    cq_free(scratch, scratch_size);
    return status;
}

void cq__bvh_refit(cq_bvh *bvh, const cq_aabb *boxes)
{
    for (int s = 0; s < bvh->count; s++)
        bvh->boxes[s] = boxes[bvh->items[s]];
    for (int i = bvh->node_count - 1; i >= 0; i--) {
        cq_bvh_node *node = &bvh->nodes[i];
        if (node->count == 0) {
            node->box = cq_aabb_union(bvh->nodes[node->first].box, bvh->nodes[node->first + 1].box);
        } else {
            cq_aabb box = bvh->boxes[node->first];
            for (int s = node->first + 1; s < node->first + node->count; s++)
                box = cq_aabb_union(box, bvh->boxes[s]);
            node->box = box;
        }
        if (i > 0)
            pack_node(bvh, i);
    }
}

void cq__bvh_free(cq_bvh *bvh)
{
    cq_free(bvh->block, bvh->block_size);
    *bvh = (cq_bvh){0};
}

double cq__bvh_cost(const cq_bvh *bvh)
{
    if (bvh->node_count == 0)
        return 0;
    double root = half_area(&bvh->nodes[0].box), sum = 0;
    if (!isfinite(root))
        return INFINITY;
    for (int i = 0; i < bvh->node_count; i++) {
        const cq_bvh_node *node = &bvh->nodes[i];
        /* A flat root (every box in one line or point) weighs all nodes alike. */
        double p = root > 0 ? half_area(&node->box) / root : 1;
        sum += p * (node->count ? node->count : TRAVERSAL_COST);
    }
    return sum;
}

/* ---- box query ---- */

void cq__bvh_query_aabb(const cq_bvh *bvh, const cq_aabb *box, cq_bvh_visit visit, void *ctx)
{
    for (int s = bvh->finite_count; s < bvh->count; s++)
        if (cq_aabb_overlap(&bvh->boxes[s], box) && !visit(ctx, bvh->items[s]))
            return;
    if (bvh->node_count == 0)
        return;
    int stack[CQ_BVH_MAX_DEPTH], top = 0;
    int node = 0;
    for (;;) {
        const cq_bvh_node *n = &bvh->nodes[node];
        if (cq_aabb_overlap(&n->box, box)) {
            if (n->count == 0) {
                stack[top++] = n->first + 1;
                node = n->first;
                continue;
            }
            for (int s = n->first; s < n->first + n->count; s++)
                if (cq_aabb_overlap(&bvh->boxes[s], box) && !visit(ctx, bvh->items[s]))
                    return;
        }
        if (top == 0)
            return;
        node = stack[--top];
    }
}

/* ---- ray and sweep queries ---- */

/* A box swept along t dir: a ray from 0 tested against each box grown by
 * it. A ray is a sweep of the point box at its origin. */
typedef struct cast {
    cq_aabb moving;
    cq_vec3 inv; /* 1 / dir, or 0 for a parallel axis */
    bool parallel[3];
} cast;

static cast make_cast(const cq_aabb *moving, cq_vec3 dir)
{
    cast c = {*moving, cq_v3(0, 0, 0), {false, false, false}};
    double inv[3];
    for (int a = 0; a < 3; a++) {
        inv[a] = 1.0 / cq_comp(dir, a);
        c.parallel[a] = !isfinite(inv[a]); /* zero or subnormal: no 0 * inf below */
        inv[a] = c.parallel[a] ? 0 : inv[a];
    }
    c.inv = cq_v3(inv[0], inv[1], inv[2]);
    return c;
}

/* Clips [*enter, *exit] by the times t with lo <= t dir <= hi on one axis;
 * false when a parallel axis misses. */
static inline bool slab(double lo, double hi, double inv, bool parallel, double *enter, double *exit)
{
    if (parallel)
        return lo <= 0 && hi >= 0;
    double t0 = lo * inv, t1 = hi * inv;
    double near = t0 < t1 ? t0 : t1, far = t0 < t1 ? t1 : t0;
    *enter = near > *enter ? near : *enter;
    *exit = far < *exit ? far : *exit;
    return true;
}

/* The entry time of the cast into box within [0, tmax], or -1 on a miss. */
static inline double cast_enter(const cast *c, const cq_aabb *box, double tmax)
{
    double enter = 0, exit = tmax;
    const cq_aabb *m = &c->moving;
    bool hit = slab(box->min.x - m->max.x, box->max.x - m->min.x, c->inv.x, c->parallel[0], &enter, &exit) &&
               slab(box->min.y - m->max.y, box->max.y - m->min.y, c->inv.y, c->parallel[1], &enter, &exit) &&
               slab(box->min.z - m->max.z, box->max.z - m->min.z, c->inv.z, c->parallel[2], &enter, &exit);
    return hit && enter <= exit ? enter : -1;
}

/* Visits slot s if the cast reaches it; false when the visitor stopped. */
static bool cast_slot(const cq_bvh *bvh, const cast *c, int s, double *tmax, cq_bvh_ray_visit visit, void *ctx)
{
    if (cast_enter(c, &bvh->boxes[s], *tmax) < 0)
        return true;
    double t = visit(ctx, bvh->items[s], *tmax);
    if (!(t >= 0))
        return false;
    if (t < *tmax)
        *tmax = t;
    return true;
}

/* Which children of pair p the cast enters within [0, tmax] (bit 0 the
 * left, bit 1 the right), with their entry times in t: lane by lane the
 * same double operations, in the same order, as cast_enter on the pair's
 * (outward-rounded) boxes. Rounding is monotone, so a box that holds a
 * child's box enters no later and leaves no earlier: a pair never rejects
 * what its nodes would let through. */
#if defined(__SSE2__) && !defined(CQ_NO_SIMD)
/* Two adjacent floats widened to doubles (__m128i loads may alias). */
static inline __m128d load_floats(const float f[2])
{
    return _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)f)));
}

/* One axis of pair_enter: clips both lanes' [enter, exit], or for an axis
 * the cast runs parallel to, clears the lanes whose slab misses from ok. */
static inline void pair_slab(const cast *c, const cq_bvh_pair *p, int a, __m128d *enter, __m128d *exit, __m128d *ok)
{
    __m128d lo = _mm_sub_pd(load_floats(p->min[a]), _mm_set1_pd(cq_comp(c->moving.max, a)));
    __m128d hi = _mm_sub_pd(load_floats(p->max[a]), _mm_set1_pd(cq_comp(c->moving.min, a)));
    if (c->parallel[a]) {
        *ok = _mm_and_pd(*ok, _mm_and_pd(_mm_cmple_pd(lo, _mm_setzero_pd()), _mm_cmpge_pd(hi, _mm_setzero_pd())));
        return;
    }
    __m128d s = _mm_set1_pd(cq_comp(c->inv, a)), t0 = _mm_mul_pd(lo, s), t1 = _mm_mul_pd(hi, s);
    /* minpd/maxpd return their second operand on NaN, as slab's ternaries do */
    *enter = _mm_max_pd(_mm_min_pd(t0, t1), *enter);
    *exit = _mm_min_pd(_mm_max_pd(t1, t0), *exit);
}

static inline int pair_enter(const cast *c, const cq_bvh_pair *p, double tmax, double t[2])
{
    __m128d enter = _mm_setzero_pd(), exit = _mm_set1_pd(tmax), ok = _mm_cmpeq_pd(enter, enter);
    pair_slab(c, p, 0, &enter, &exit, &ok);
    pair_slab(c, p, 1, &enter, &exit, &ok);
    pair_slab(c, p, 2, &enter, &exit, &ok);
    _mm_storeu_pd(t, enter);
    return _mm_movemask_pd(_mm_and_pd(ok, _mm_cmple_pd(enter, exit)));
}
#else
static inline int pair_enter(const cast *c, const cq_bvh_pair *p, double tmax, double t[2])
{
    int mask = 0;
    for (int side = 0; side < 2; side++) {
        double enter = 0, exit = tmax;
        bool ok = true;
        for (int a = 0; a < 3; a++)
            ok &= slab(p->min[a][side] - cq_comp(c->moving.max, a), p->max[a][side] - cq_comp(c->moving.min, a),
                       cq_comp(c->inv, a), c->parallel[a], &enter, &exit);
        t[side] = enter;
        mask |= (ok && enter <= exit) << side;
    }
    return mask;
}
#endif

/* A node still to visit: its leaf slots or child pair, and its entry time. */
typedef struct pending {
    int first, count;
    double enter;
} pending;

/* Pushes the children of pair p that the cast enters, the farther below
 * the nearer so it is visited first and a closest hit prunes the other
 * (ties: left first). Written without branches on which children were
 * hit, which a ray's walk cannot predict. */
static inline int push_children(const cq_bvh *bvh, const cast *c, const cq_bvh_pair *p, double tmax,
                                pending *stack, int top)
{
    for (int side = 0; side < 2; side++) /* start loading the children's pairs (pair 0 for a leaf) */
        PREFETCH(&bvh->pairs[p->count[side] ? 0 : p->first[side] / 2]);
    double t[2];
    int hit = pair_enter(c, p, tmax, t);
    int near = t[1] < t[0], far = !near; /* the order only matters when both are hit */
    stack[top] = (pending){p->first[far], p->count[far], t[far]};
    top += hit >> far & 1;
    stack[top] = (pending){p->first[near], p->count[near], t[near]};
    return top + (hit >> near & 1);
}

static void cast_query(const cq_bvh *bvh, const cast *c, double tmax, cq_bvh_ray_visit visit, void *ctx)
{
    for (int s = bvh->finite_count; s < bvh->count; s++)
        if (!cast_slot(bvh, c, s, &tmax, visit, ctx))
            return;
    if (bvh->node_count == 0)
        return;
    /* One pending sibling per level of the path, plus the top's twin. */
    pending stack[CQ_BVH_MAX_DEPTH + 1];
    stack[0] = (pending){bvh->nodes[0].first, bvh->nodes[0].count, cast_enter(c, &bvh->nodes[0].box, tmax)};
    int top = stack[0].enter >= 0;
    while (top > 0) {
        pending n = stack[--top];
        if (n.enter > tmax)
            continue;
        if (n.count == 0) {
            top = push_children(bvh, c, &bvh->pairs[n.first / 2], tmax, stack, top); /* pair (first - 1) / 2 */
            continue;
        }
        for (int s = n.first; s < n.first + n.count; s++)
            if (!cast_slot(bvh, c, s, &tmax, visit, ctx))
                return;
    }
}

void cq__bvh_query_ray(const cq_bvh *bvh, cq_vec3 origin, cq_vec3 dir, double tmax, cq_bvh_ray_visit visit,
                       void *ctx)
{
    cast c = make_cast(&(cq_aabb){origin, origin}, dir);
    cast_query(bvh, &c, tmax, visit, ctx);
}

void cq__bvh_query_sweep(const cq_bvh *bvh, const cq_aabb *box, cq_vec3 d, double tmax, cq_bvh_ray_visit visit,
                         void *ctx)
{
    cast c = make_cast(box, d);
    cast_query(bvh, &c, tmax, visit, ctx);
}
