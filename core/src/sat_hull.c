/* Hull-hull SAT (Gregorius, "The Separating Axis Test between Convex
 * Polyhedra", GDC 2013, and "Robust Contact Creation for Physics
 * Simulations", GDC 2015). Everything runs in A's local frame: B's
 * vertices and face planes are moved there once, A's are read as stored.
 * A face axis's gap is a support query (the deepest vertex of the other
 * hull below the face's plane); an edge pair is an axis only where the two
 * edges' arcs cross on the Gauss map (they form a face of the Minkowski
 * difference A - B), which prunes most of the |EA| x |EB| pairs before any
 * root is taken. The least penetration over the candidates is the cores'
 * penetration depth: the support gap along every candidate is a lower
 * bound of the signed distance, and the Minkowski faces' normals include
 * the direction that reaches it. */
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "geom.h"
#include "sat_hull.h"

/* An edge axis replaces the best face axis only when its gap is larger by
 * this fraction of the face gap (seed 002: prefer face axes; the box SAT's
 * CQ_EDGE_PREFERENCE): nearly equal axes resolve to the face, whose clip
 * gives a stable multi-point manifold. */
#define CQ_HULL_EDGE_PREFERENCE 0.05
/* A previous face axis is kept while its penetration stays within this
 * factor of the best axis's (the box SAT's CQ_FACE_HYSTERESIS). */
#define CQ_HULL_HYSTERESIS 1.5
/* Edge pairs this close to parallel (squared sine) give no axis: their
 * cross product is rounding, and the face axes of the faces they bound
 * cover the direction. */
#define CQ_HULL_PARALLEL_SIN2 1e-12

/* A solid of F faces has at most 2F - 4 vertices and 3F - 6 edges (Euler,
 * every face at least a triangle, every vertex of degree three or more). */
#define CQ_HULL_SAT_MAX_VERTICES (2 * CQ_SAT_HULL_MAX_FACES - 4)
#define CQ_EDGES_MAX (3 * CQ_SAT_HULL_MAX_FACES - 6)

/* Axis identities: the kind in the low two bits, then the index (a face)
 * or A's edge in bits 2..11 and B's above (an edge pair; every hull has
 * fewer than 1024 edges). */
enum { CQ_HULL_AXIS_FACE_A, CQ_HULL_AXIS_FACE_B, CQ_HULL_AXIS_EDGES };
#define CQ_HULL_EDGE_BITS 10

static int cq_axis_face(int kind, int f) { return f << 2 | kind; }

static int cq_axis_edges(int ea, int eb) { return (eb << CQ_HULL_EDGE_BITS | ea) << 2 | CQ_HULL_AXIS_EDGES; }

int cq__hull_axis_swap(int axis)
{
    if (axis < 0)
        return -1;
    int kind = axis & 3, rest = axis >> 2, mask = (1 << CQ_HULL_EDGE_BITS) - 1;
    if (kind == CQ_HULL_AXIS_FACE_A || kind == CQ_HULL_AXIS_FACE_B)
        return cq_axis_face(kind ^ 1, rest);
    return kind == CQ_HULL_AXIS_EDGES ? cq_axis_edges(rest >> CQ_HULL_EDGE_BITS, rest & mask) : -1;
}

/* Whether the SAT takes hull h at all: a solid within the limits. */
static bool cq_hull_sat_own(const cq_hull *h)
{
    return h->dim == 3 && h->face_count <= CQ_SAT_HULL_MAX_FACES && h->vertex_count <= CQ_HULL_SAT_MAX_VERTICES &&
           h->edge_count <= CQ_EDGES_MAX;
}

bool cq__hull_sat_suits(const cq_hull *a, const cq_hull *b) { return a->sat_data && b->sat_data; }

/* What cq_hull_build lays out for the SAT behind a hull (sat_data): only
 * what the hull's own arrays do not hold, so that a pair's two blocks stay
 * few cache lines (with many hulls they are rarely in cache, and their
 * misses were most of a pair's time): of0[g], of1[g], the edges whose face
 * f0 (f1) is g, as bit masks. The rest the query copies from the hull's
 * own arrays into its stack or derives there: the vertices and face
 * normals as coordinate arrays, the edges' arc plane normals (from the
 * face normals), an edge's direction and offset (from its vertices, for
 * the edge pairs measured). The same operations on the same doubles as
 * when they were stored: the same bits. */
typedef struct cq_pre {
    const uint32_t *of0, *of1;
} cq_pre;

_Static_assert(CQ_EDGES_MAX <= 32, "an edge mask is 32 bits");

size_t cq__hull_sat_bytes(const cq_hull *h)
{
    return cq_hull_sat_own(h) ? 2 * (size_t)h->face_count * sizeof(uint32_t) : 0;
}

static cq_pre cq_pre_of(const cq_hull *h, const void *p)
{
    const uint32_t *masks = p;
    return (cq_pre){masks, masks + h->face_count};
}

/* Writes the three coordinates of v[0..n) to x, y, z, and the last again
 * at n: the SSE2 loops read pairs, and a repeated entry changes no lowest
 * value and no sign bit they keep. */
static void cq_soa(const cq_vec3 *v, int n, double *x, double *y, double *z)
{
    for (int k = 0; k < n; k++)
        x[k] = v[k].x, y[k] = v[k].y, z[k] = v[k].z;
    x[n] = x[n - 1], y[n] = y[n - 1], z[n] = z[n - 1];
}

void cq__hull_sat_prepare(const cq_hull *h, void *block)
{
    uint32_t *of0 = block, *of1 = of0 + h->face_count;
    for (int g = 0; g < h->face_count; g++)
        of0[g] = of1[g] = 0;
    for (int i = 0; i < h->edge_count; i++)
        of0[h->edges[i].f0] |= (uint32_t)1 << i, of1[h->edges[i].f1] |= (uint32_t)1 << i;
}

/* The pair in A's frame: A's edge masks and its vertices copied as
 * coordinate arrays, and B's vertices moved there as coordinate arrays
 * like A's (the support loops run over plain doubles, two at a time; an
 * odd count repeats its last vertex, which changes no lowest value), with
 * B's face normals and plane offsets. */
typedef struct cq_hsat {
    const cq_hull *a, *b;
    cq_pre pa; /* A's edge masks */
    double ax[CQ_HULL_SAT_MAX_VERTICES + 1], ay[CQ_HULL_SAT_MAX_VERTICES + 1], az[CQ_HULL_SAT_MAX_VERTICES + 1];
    double bx[CQ_HULL_SAT_MAX_VERTICES + 1], by[CQ_HULL_SAT_MAX_VERTICES + 1], bz[CQ_HULL_SAT_MAX_VERTICES + 1];
    cq_vec3 nb[CQ_SAT_HULL_MAX_FACES];
    double ob[CQ_SAT_HULL_MAX_FACES];
} cq_hsat;

/* A candidate: its gap and identity. */
typedef struct cq_hcand {
    double gap;
    int axis;
} cq_hcand;

static cq_vec3 cq_vertex_b(const cq_hsat *s, int k) { return cq_v3(s->bx[k], s->by[k], s->bz[k]); }

static void cq_hsat_init(cq_hsat *s, const cq_hull *a, const cq_xform *xa, const cq_hull *b, const cq_xform *xb)
{
    s->a = a, s->b = b;
    cq_mat3 r = cq_mul_mtm(&xa->r, &xb->r);
    cq_vec3 t = cq_mul_mtv(&xa->r, cq_sub(xb->p, xa->p));
    s->pa = cq_pre_of(a, a->sat_data);
    cq_soa(a->vertices, a->vertex_count, s->ax, s->ay, s->az);
    for (int k = 0; k < b->vertex_count; k++) {
        cq_vec3 v = cq_add(cq_mul_mv(&r, b->vertices[k]), t);
        s->bx[k] = v.x, s->by[k] = v.y, s->bz[k] = v.z;
    }
    for (int f = 0; f < b->face_count; f++) {
        s->nb[f] = cq_mul_mv(&r, b->faces[f].normal);
        s->ob[f] = b->faces[f].offset + cq_dot(s->nb[f], t);
    }
    int kb = b->vertex_count;
    s->bx[kb] = s->bx[kb - 1], s->by[kb] = s->by[kb - 1], s->bz[kb] = s->bz[kb - 1];
}

/* The lowest of n . v over the count vertices in x, y, z (padded to an
 * even count). Each product rounds as the scalar form would, and a
 * minimum is exact: the same double either way. */
#if defined(__SSE2__)
static double cq_lowest(const double *x, const double *y, const double *z, int count, cq_vec3 n)
{
    __m128d nx = _mm_set1_pd(n.x), ny = _mm_set1_pd(n.y), nz = _mm_set1_pd(n.z), lo = _mm_set1_pd(INFINITY);
    for (int k = 0; k < count; k += 2) {
        __m128d d = _mm_add_pd(_mm_mul_pd(nx, _mm_loadu_pd(x + k)), _mm_mul_pd(ny, _mm_loadu_pd(y + k)));
        lo = _mm_min_pd(lo, _mm_add_pd(d, _mm_mul_pd(nz, _mm_loadu_pd(z + k))));
    }
    return _mm_cvtsd_f64(_mm_min_sd(lo, _mm_unpackhi_pd(lo, lo)));
}
#else
static double cq_lowest(const double *x, const double *y, const double *z, int count, cq_vec3 n)
{
    double lo = INFINITY;
    for (int k = 0; k < count; k++) {
        double d = n.x * x[k] + n.y * y[k] + n.z * z[k];
        lo = d < lo ? d : lo;
    }
    return lo;
}
#endif

/* Where that lowest is (the first of ties). */
static int cq_lowest_at(const double *x, const double *y, const double *z, int count, cq_vec3 n)
{
    double lo = INFINITY;
    int at = 0;
    for (int k = 0; k < count; k++) {
        double d = n.x * x[k] + n.y * y[k] + n.z * z[k];
        at = d < lo ? k : at;
        lo = d < lo ? d : lo;
    }
    return at;
}

/* Gap of A's face f: how far B's deepest vertex lies above its plane. */
static double cq_face_a(const cq_hsat *s, int f)
{
    const cq_hull_face *face = &s->a->faces[f];
    return cq_lowest(s->bx, s->by, s->bz, s->b->vertex_count, face->normal) - face->offset;
}

/* Gap of B's face f: how far A's deepest vertex lies above its plane. */
static double cq_face_b(const cq_hsat *s, int f)
{
    return cq_lowest(s->ax, s->ay, s->az, s->a->vertex_count, s->nb[f]) - s->ob[f];
}

/* The largest gap over the faces of one hull (ties keep the lower face),
 * or the first gap above zero: the cores are then apart. */
static cq_hcand cq_best_face(const cq_hsat *s, int kind)
{
    int count = kind == CQ_HULL_AXIS_FACE_B ? s->b->face_count : s->a->face_count;
    cq_hcand best = {-INFINITY, -1};
    for (int f = 0; f < count && !(best.gap > 0); f++) {
        double g = kind == CQ_HULL_AXIS_FACE_B ? cq_face_b(s, f) : cq_face_a(s, f);
        /* Selects, not a branch: which face is the deepest is a coin
         * toss. The gap's form is maxsd's, the axis's a mask. */
        int keep = -(int)(g > best.gap);
        best.axis = (best.axis & ~keep) | (cq_axis_face(kind, f) & keep);
        best.gap = g > best.gap ? g : best.gap;
    }
    return best;
}

/* The support gap along unit n (A's frame, pointing from A to B): B's
 * lowest vertex minus A's highest. A lower bound of the signed distance
 * along every direction. */
static double cq_support_gap(const cq_hsat *s, cq_vec3 n)
{
    double lo_b = cq_lowest(s->bx, s->by, s->bz, s->b->vertex_count, n);
    return lo_b + cq_lowest(s->ax, s->ay, s->az, s->a->vertex_count, cq_neg(n));
}

/* The index of m's lowest set bit (m != 0). */
static inline int cq_lowest_bit(uint64_t m)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(m);
#else
    int i = 0;
    for (; !(m & 1); m >>= 1)
        i++;
    return i;
#endif
}

/* The signs of n . v over the count vectors in x, y, z (padded to an even
 * count), as bits: bit k set where it is above zero (positive) or below
 * zero (else). Exact signs of the same products either way. */
#if defined(__SSE2__)
static uint64_t cq_sign_bits(const double *x, const double *y, const double *z, int count, cq_vec3 n, bool positive)
{
    __m128d nx = _mm_set1_pd(n.x), ny = _mm_set1_pd(n.y), nz = _mm_set1_pd(n.z), zero = _mm_setzero_pd();
    uint64_t bits = 0;
    for (int k = 0; k < count; k += 2) {
        __m128d d = _mm_add_pd(_mm_mul_pd(nx, _mm_loadu_pd(x + k)), _mm_mul_pd(ny, _mm_loadu_pd(y + k)));
        d = _mm_add_pd(d, _mm_mul_pd(nz, _mm_loadu_pd(z + k)));
        bits |= (uint64_t)_mm_movemask_pd(positive ? _mm_cmpgt_pd(d, zero) : _mm_cmplt_pd(d, zero)) << k;
    }
    return bits;
}
#else
static uint64_t cq_sign_bits(const double *x, const double *y, const double *z, int count, cq_vec3 n, bool positive)
{
    uint64_t bits = 0;
    for (int k = 0; k < count; k++) {
        double d = n.x * x[k] + n.y * y[k] + n.z * z[k];
        bits |= (uint64_t)(positive ? d > 0 : d < 0) << k;
    }
    return bits;
}
#endif

/* B's edges in A's frame, and the Gauss-map test in bit masks over A's
 * edges (a hull the SAT takes has at most 24), so each of B's edges tests
 * all of A's at once. An edge's arc runs between its faces' normals (B's
 * negated: the Minkowski difference's). below[f]: the A edges whose arc
 * plane has B's face f's negated normal c on its positive side,
 * c . (b x a) > 0. A's face normals (fx, fy, fz) and its edges' arc plane
 * normals b x a (arc_x, arc_y, arc_z) as coordinate arrays, padded: only
 * the pairs that reach the edge test need them. */
typedef struct cq_hedges {
    uint64_t below[CQ_SAT_HULL_MAX_FACES];
    double fx[CQ_SAT_HULL_MAX_FACES + 1], fy[CQ_SAT_HULL_MAX_FACES + 1], fz[CQ_SAT_HULL_MAX_FACES + 1];
    double arc_x[CQ_EDGES_MAX + 1], arc_y[CQ_EDGES_MAX + 1], arc_z[CQ_EDGES_MAX + 1];
    cq_vec3 pb[CQ_EDGES_MAX], db[CQ_EDGES_MAX];
    double lb[CQ_EDGES_MAX]; /* squared lengths */
} cq_hedges;

/* A's face normals as coordinate arrays, padded (the padding face's bit
 * is masked off where they are read). */
static void cq_hedges_faces(const cq_hull *a, cq_hedges *e)
{
    for (int g = 0; g < a->face_count; g++)
        e->fx[g] = a->faces[g].normal.x, e->fy[g] = a->faces[g].normal.y, e->fz[g] = a->faces[g].normal.z;
    int n = a->face_count;
    e->fx[n] = e->fx[n - 1], e->fy[n] = e->fy[n - 1], e->fz[n] = e->fz[n - 1];
}

/* A's arcs n(f1) x n(f0), from the face normals' arrays, padded with the
 * last: two edges at a time in SSE2 (the products and differences of the
 * scalar cross product, so the same bits). */
#if defined(__SSE2__)
static void cq_hedges_arcs(const cq_hull *a, cq_hedges *e)
{
    for (int i = 0; i < a->edge_count; i += 2) {
        int l = i + 1 < a->edge_count ? i + 1 : i; /* an odd count's padding: the last again */
        int u0 = a->edges[i].f1, u1 = a->edges[l].f1, v0 = a->edges[i].f0, v1 = a->edges[l].f0;
        __m128d ux = _mm_set_pd(e->fx[u1], e->fx[u0]), uy = _mm_set_pd(e->fy[u1], e->fy[u0]);
        __m128d uz = _mm_set_pd(e->fz[u1], e->fz[u0]), vx = _mm_set_pd(e->fx[v1], e->fx[v0]);
        __m128d vy = _mm_set_pd(e->fy[v1], e->fy[v0]), vz = _mm_set_pd(e->fz[v1], e->fz[v0]);
        _mm_storeu_pd(e->arc_x + i, _mm_sub_pd(_mm_mul_pd(uy, vz), _mm_mul_pd(uz, vy)));
        _mm_storeu_pd(e->arc_y + i, _mm_sub_pd(_mm_mul_pd(uz, vx), _mm_mul_pd(ux, vz)));
        _mm_storeu_pd(e->arc_z + i, _mm_sub_pd(_mm_mul_pd(ux, vy), _mm_mul_pd(uy, vx)));
    }
}
#else
static void cq_hedges_arcs(const cq_hull *a, cq_hedges *e)
{
    for (int i = 0; i < a->edge_count + 1; i++) {
        int k = i < a->edge_count ? i : a->edge_count - 1;
        cq_vec3 arc = cq_cross(a->faces[a->edges[k].f1].normal, a->faces[a->edges[k].f0].normal);
        e->arc_x[i] = arc.x, e->arc_y[i] = arc.y, e->arc_z[i] = arc.z;
    }
}
#endif

static void cq_hedges_init(const cq_hsat *s, cq_hedges *e)
{
    const cq_hull *a = s->a, *b = s->b;
    cq_hedges_faces(a, e);
    cq_hedges_arcs(a, e);
    /* A padding arc's bit lies past A's edges: of0 and of1 never have it,
     * so no crossing mask does. */
    for (int f = 0; f < b->face_count; f++)
        e->below[f] = cq_sign_bits(e->arc_x, e->arc_y, e->arc_z, a->edge_count, s->nb[f], false);
    for (int j = 0; j < b->edge_count; j++) {
        const cq_hull_edge *eb = &b->edges[j];
        e->pb[j] = cq_vertex_b(s, eb->v0), e->db[j] = cq_sub(cq_vertex_b(s, eb->v1), e->pb[j]);
        e->lb[j] = cq_len2(e->db[j]);
    }
}

/* The A edges whose arcs cross B's edge j's: c and d on opposite sides of
 * the plane of a-b, a and b on opposite sides of that of c-d, and
 * c . (b x a) of the sign of b . (d x c), so the arcs share a hemisphere
 * (Gregorius 2013: the two edges then form a Minkowski face). */
static uint64_t cq_crossing_edges(const cq_hsat *s, const cq_hedges *e, int j)
{
    const cq_hull_edge *eb = &s->b->edges[j];
    cq_vec3 dxc = cq_cross(s->nb[eb->f1], s->nb[eb->f0]); /* (-d) x (-c) = d x c */
    uint64_t faces = cq_sign_bits(e->fx, e->fy, e->fz, s->a->face_count, dxc, true), over0 = 0, over1 = 0;
    faces &= ((uint64_t)1 << s->a->face_count) - 1; /* not the padding face's bit */
    for (; faces; faces &= faces - 1) { /* A's faces on the positive side of j's arc plane */
        int g = cq_lowest_bit(faces);
        over0 |= s->pa.of0[g], over1 |= s->pa.of1[g];
    }
    uint64_t c = e->below[eb->f0], d = e->below[eb->f1];
    return (c ^ d) & (over0 ^ over1) & ~(c ^ over1);
}

/* v negated where flip is set, without a branch: each component's sign
 * bit toggled (exactly what negation does). */
static cq_vec3 cq_flip(cq_vec3 v, bool flip)
{
    uint64_t m = (uint64_t)flip << 63, b[3];
    memcpy(b, &v, sizeof b);
    b[0] ^= m, b[1] ^= m, b[2] ^= m;
    memcpy(&v, b, sizeof b);
    return v;
}

/* The edge pair's gap along its axis (the distance between the two edges'
 * lines, the axis oriented away from A's centroid), and the unit axis;
 * false for edges too near parallel to have one. A's edge's direction
 * and offset are derived here, for the few pairs measured, rather than
 * stored in the hull's block. */
static bool cq_edge_gap(const cq_hsat *s, const cq_hedges *e, int i, int j, double *gap, cq_vec3 *axis)
{
    const cq_hull_edge *ea = &s->a->edges[i];
    cq_vec3 va = s->a->vertices[ea->v0], d = cq_sub(s->a->vertices[ea->v1], va);
    cq_vec3 n = cq_cross(d, e->db[j]);
    double l2 = cq_len2(n);
    if (!(l2 > CQ_HULL_PARALLEL_SIN2 * cq_len2(d) * e->lb[j]))
        return false;
    /* Oriented by a sign flip rather than a branch: the side of A's
     * centroid is a coin toss from pair to pair, and n (-k) is -(n k)
     * exactly, so the same bits as scaling by -k. */
    n = cq_flip(cq_scale(n, 1 / sqrt(l2)), cq_dot(n, cq_sub(va, s->a->centroid)) < 0);
    *gap = cq_dot(n, cq_sub(e->pb[j], va));
    *axis = n;
    return true;
}

#if defined(__SSE2__)
/* Two of A's edges (i0, i1) against B's edge j, one in each lane: each
 * lane the operations of cq_edge_gap in its order (the orientation's sign
 * flip the same exact negation), so each gap is the same double. The
 * lanes where the edges are too near parallel hold -INFINITY, as does
 * lane 1 without has1: those never win. */
static __m128d cq_edge_gaps2(const cq_hsat *s, const cq_hedges *e, int i0, int i1, bool has1, int j)
{
    const cq_hull *a = s->a;
    cq_vec3 p0 = a->vertices[a->edges[i0].v0], q0 = a->vertices[a->edges[i0].v1];
    cq_vec3 p1 = a->vertices[a->edges[i1].v0], q1 = a->vertices[a->edges[i1].v1];
    __m128d vx = _mm_set_pd(p1.x, p0.x), vy = _mm_set_pd(p1.y, p0.y), vz = _mm_set_pd(p1.z, p0.z);
    __m128d dx = _mm_sub_pd(_mm_set_pd(q1.x, q0.x), vx), dy = _mm_sub_pd(_mm_set_pd(q1.y, q0.y), vy);
    __m128d dz = _mm_sub_pd(_mm_set_pd(q1.z, q0.z), vz);
    __m128d bx = _mm_set1_pd(e->db[j].x), by = _mm_set1_pd(e->db[j].y), bz = _mm_set1_pd(e->db[j].z);
    __m128d nx = _mm_sub_pd(_mm_mul_pd(dy, bz), _mm_mul_pd(dz, by));
    __m128d ny = _mm_sub_pd(_mm_mul_pd(dz, bx), _mm_mul_pd(dx, bz));
    __m128d nz = _mm_sub_pd(_mm_mul_pd(dx, by), _mm_mul_pd(dy, bx));
    __m128d l2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(nx, nx), _mm_mul_pd(ny, ny)), _mm_mul_pd(nz, nz));
    __m128d d2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(dx, dx), _mm_mul_pd(dy, dy)), _mm_mul_pd(dz, dz));
    __m128d ok = _mm_cmpgt_pd(l2, _mm_mul_pd(_mm_mul_pd(_mm_set1_pd(CQ_HULL_PARALLEL_SIN2), d2),
                                             _mm_set1_pd(e->lb[j])));
    ok = _mm_and_pd(ok, _mm_castsi128_pd(_mm_set_epi64x(-(int64_t)has1, -1)));
    /* The side of A's centroid, on the unscaled product as cq_edge_gap. */
    cq_vec3 c = a->centroid;
    __m128d wx = _mm_sub_pd(vx, _mm_set1_pd(c.x)), wy = _mm_sub_pd(vy, _mm_set1_pd(c.y));
    __m128d wz = _mm_sub_pd(vz, _mm_set1_pd(c.z));
    __m128d side = _mm_add_pd(_mm_add_pd(_mm_mul_pd(nx, wx), _mm_mul_pd(ny, wy)), _mm_mul_pd(nz, wz));
    __m128d flip = _mm_and_pd(_mm_cmplt_pd(side, _mm_setzero_pd()), _mm_set1_pd(-0.0));
    __m128d k = _mm_div_pd(_mm_set1_pd(1), _mm_sqrt_pd(l2));
    nx = _mm_xor_pd(_mm_mul_pd(nx, k), flip), ny = _mm_xor_pd(_mm_mul_pd(ny, k), flip);
    nz = _mm_xor_pd(_mm_mul_pd(nz, k), flip);
    __m128d ux = _mm_sub_pd(_mm_set1_pd(e->pb[j].x), vx), uy = _mm_sub_pd(_mm_set1_pd(e->pb[j].y), vy);
    __m128d uz = _mm_sub_pd(_mm_set1_pd(e->pb[j].z), vz);
    __m128d g = _mm_add_pd(_mm_add_pd(_mm_mul_pd(nx, ux), _mm_mul_pd(ny, uy)), _mm_mul_pd(nz, uz));
    return _mm_or_pd(_mm_and_pd(ok, g), _mm_andnot_pd(ok, _mm_set1_pd(-INFINITY)));
}

/* One candidate gap (g's low lane) against the best so far, in selects:
 * the axis where g is larger, the larger gap (maxsd keeps best on ties
 * and against NaN, as `g > best` does). */
static void cq_edge_take(__m128d g, int axis, __m128d *best, int *best_axis)
{
    int take = -(_mm_movemask_pd(_mm_cmpgt_sd(g, *best)) & 1);
    *best_axis = (*best_axis & ~take) | (axis & take);
    *best = _mm_max_sd(g, *best);
}

/* cq_scan_edges without verify, the edge pairs of each B edge two at a
 * time: the one or two A edges whose arcs cross a box edge's (half the
 * edges each) made the bit loop's end a coin toss, and so was whether a
 * pair improves; here neither is a branch. The same candidates in the
 * same order, so the same winner; its normal is cq_edge_gap's. */
static cq_hcand cq_scan_edges_trusting(const cq_hsat *s, const cq_hedges *e, cq_vec3 *normal)
{
    __m128d best = _mm_set_sd(-INFINITY);
    int axis = -1;
    for (int j = 0; j < s->b->edge_count && !(_mm_cvtsd_f64(best) > 0); j++) {
        uint64_t m = cq_crossing_edges(s, e, j);
        while (m) {
            int i0 = cq_lowest_bit(m);
            m &= m - 1;
            bool has1 = m != 0;
            int i1 = cq_lowest_bit(m | (uint64_t)1 << 63); /* 63 where there is none: then i0 again */
            i1 = i0 ^ ((i1 ^ i0) & -(int)has1);
            m &= m - 1;
            __m128d g = cq_edge_gaps2(s, e, i0, i1, has1, j);
            cq_edge_take(g, cq_axis_edges(i0, j), &best, &axis);
            cq_edge_take(_mm_unpackhi_pd(g, g), cq_axis_edges(i1, j), &best, &axis);
        }
    }
    cq_hcand out = {_mm_cvtsd_f64(best), axis};
    if (axis >= 0) {
        int mask = (1 << CQ_HULL_EDGE_BITS) - 1;
        cq_edge_gap(s, e, axis >> 2 & mask, axis >> (2 + CQ_HULL_EDGE_BITS), &out.gap, normal);
    }
    return out;
}
#endif

/* The best edge pair of the Minkowski faces. With verify, each pair that
 * would improve is measured as a support gap and that value kept;
 * otherwise the lines' distance is trusted (exact for a Minkowski face)
 * and the caller verifies the winner. Stops at a gap above zero. */
static cq_hcand cq_scan_edges(const cq_hsat *s, const cq_hedges *e, bool verify, cq_vec3 *normal)
{
    cq_hcand best = {-INFINITY, -1};
    for (int j = 0; j < s->b->edge_count && !(best.gap > 0); j++) {
        for (uint64_t m = cq_crossing_edges(s, e, j); m; m &= m - 1) {
            int i = cq_lowest_bit(m);
            double g;
            cq_vec3 n;
            if (!cq_edge_gap(s, e, i, j, &g, &n) || !(g > best.gap))
                continue;
            if (verify && !((g = cq_support_gap(s, n)) > best.gap))
                continue;
            best = (cq_hcand){g, cq_axis_edges(i, j)}, *normal = n;
        }
    }
    return best;
}

/* The best edge pair, its gap a support gap: the winner of the trusting
 * scan verified once; only where rounding in the Gauss-map test let a
 * non-face pair win (its lines' distance above the support gap) is the
 * scan repeated measuring every improvement. */
static cq_hcand cq_best_edges(const cq_hsat *s, double tol, cq_vec3 *normal)
{
    cq_hedges e;
    cq_hedges_init(s, &e);
#if defined(__SSE2__)
    cq_hcand best = cq_scan_edges_trusting(s, &e, normal);
#else
    cq_hcand best = cq_scan_edges(s, &e, false, normal);
#endif
    if (best.axis < 0 || best.gap > 0)
        return best;
    double g = cq_support_gap(s, *normal);
    if (g >= best.gap - tol)
        return (cq_hcand){g, best.axis};
    return cq_scan_edges(s, &e, true, normal);
}

/* The candidate prev names, measured again, or gap -INFINITY when it names
 * no face of this pair (a cache is input, not trusted; edge axes are not
 * kept: their edges may no longer neighbour on the Minkowski difference). */
static cq_hcand cq_previous(const cq_hsat *s, int prev)
{
    cq_hcand none = {-INFINITY, -1};
    if (prev < 0)
        return none;
    int kind = prev & 3, f = prev >> 2;
    if (kind == CQ_HULL_AXIS_FACE_A && f < s->a->face_count)
        return (cq_hcand){cq_face_a(s, f), prev};
    if (kind == CQ_HULL_AXIS_FACE_B && f < s->b->face_count)
        return (cq_hcand){cq_face_b(s, f), prev};
    return none;
}

/* A face axis's normal and witness, in world space. */
static void cq_face_answer(const cq_hsat *s, cq_hcand c, const cq_xform *xa, const cq_xform *xb, cq_hull_axis *out)
{
    int f = c.axis >> 2;
    out->gap = c.gap, out->axis = c.axis;
    if ((c.axis & 3) == CQ_HULL_AXIS_FACE_A) {
        int v = cq_lowest_at(s->bx, s->by, s->bz, s->b->vertex_count, s->a->faces[f].normal);
        out->normal = cq_mul_mv(&xa->r, s->a->faces[f].normal);
        out->witness_b = cq_xform_point(xb, s->b->vertices[v]);
        return;
    }
    /* B's face: its outward normal points at A. A's vertex lies gap above
     * its plane; the foot on the plane is B's point. */
    int v = cq_lowest_at(s->ax, s->ay, s->az, s->a->vertex_count, s->nb[f]);
    out->normal = cq_neg(cq_mul_mv(&xb->r, s->b->faces[f].normal));
    out->witness_b = cq_mad(cq_xform_point(xa, s->a->vertices[v]), out->normal, c.gap);
}

/* An edge axis's witness: the closest point of B's edge to A's. */
static void cq_edge_answer(const cq_hsat *s, cq_hcand c, cq_vec3 n, const cq_xform *xa, cq_hull_axis *out)
{
    int mask = (1 << CQ_HULL_EDGE_BITS) - 1, i = c.axis >> 2 & mask, j = c.axis >> (2 + CQ_HULL_EDGE_BITS);
    const cq_hull_edge *ea = &s->a->edges[i], *eb = &s->b->edges[j];
    double u, w;
    cq_vec3 ca, cb;
    cq__closest_segments(s->a->vertices[ea->v0], s->a->vertices[ea->v1], cq_vertex_b(s, eb->v0),
                         cq_vertex_b(s, eb->v1), &u, &w, &ca, &cb);
    out->gap = c.gap, out->axis = c.axis;
    out->normal = cq_mul_mv(&xa->r, n);
    out->witness_b = cq_xform_point(xa, cb);
}

static void cq_answer(const cq_hsat *s, cq_hcand c, cq_vec3 edge_n, const cq_xform *xa, const cq_xform *xb,
                      cq_hull_axis *out)
{
    if ((c.axis & 3) == CQ_HULL_AXIS_EDGES)
        cq_edge_answer(s, c, edge_n, xa, out);
    else
        cq_face_answer(s, c, xa, xb, out);
}

/* A face of A or B (of_b) in A's frame: its loop, outward normal and
 * plane offset. */
typedef struct cq_hface {
    const uint16_t *loop;
    int count;
    bool of_b;
    cq_vec3 n;
    double offset;
} cq_hface;

static cq_hface cq_hface_of(const cq_hsat *s, bool of_b, int f)
{
    const cq_hull *h = of_b ? s->b : s->a;
    const cq_hull_face *face = &h->faces[f];
    return (cq_hface){h->face_vertices + face->first, face->count, of_b, of_b ? s->nb[f] : face->normal,
                      of_b ? s->ob[f] : face->offset};
}

static cq_vec3 cq_hface_vertex(const cq_hsat *s, const cq_hface *f, int k)
{
    return f->of_b ? cq_vertex_b(s, f->loop[k]) : s->a->vertices[f->loop[k]];
}

/* The face of B (of_b) or A most against n, as the clip picks its
 * incident face (the first of ties). */
static int cq_face_against(const cq_hsat *s, bool of_b, cq_vec3 n)
{
    int count = of_b ? s->b->face_count : s->a->face_count, best = 0;
    double lo = INFINITY;
    for (int g = 0; g < count; g++) {
        double d = cq_dot(of_b ? s->nb[g] : s->a->faces[g].normal, n);
        best = d < lo ? g : best;
        lo = d < lo ? d : lo;
    }
    return best;
}

/* The most corners a face of a hull the SAT takes has: each of its edges
 * borders another face, so a face has fewer corners than the hull has
 * faces (a pyramid's base reaches that). */
#define CQ_HULL_LOOP_MAX (CQ_SAT_HULL_MAX_FACES - 1)

/* The reference face's corners r, the incident face's i, both in A's
 * frame, and each incident corner's height above the reference plane
 * (h) and its place against each reference side k (side[j][k], at least
 * zero inside; the loops run counter-clockwise seen from outside, so
 * cross(n, edge) points inward). All are affine along an incident edge. */
typedef struct cq_hclip {
    int nr, ni;
    cq_vec3 n, r[CQ_HULL_LOOP_MAX], i[CQ_HULL_LOOP_MAX];
    double h[CQ_HULL_LOOP_MAX], side[CQ_HULL_LOOP_MAX][CQ_HULL_LOOP_MAX];
} cq_hclip;

/* Fills c; true as soon as an incident corner lies on or under the
 * reference plane inside every side. */
static bool cq_hclip_corners(const cq_hsat *s, const cq_hface *ref, const cq_hface *inc, cq_hclip *c)
{
    c->nr = ref->count, c->ni = inc->count, c->n = ref->n;
    cq_vec3 in[CQ_HULL_LOOP_MAX];
    double off[CQ_HULL_LOOP_MAX];
    for (int k = 0; k < c->nr; k++)
        c->r[k] = cq_hface_vertex(s, ref, k);
    for (int k = 0; k < c->nr; k++) {
        in[k] = cq_cross(c->n, cq_sub(c->r[k + 1 == c->nr ? 0 : k + 1], c->r[k]));
        off[k] = cq_dot(in[k], c->r[k]);
    }
    for (int j = 0; j < c->ni; j++) {
        c->i[j] = cq_hface_vertex(s, inc, j);
        c->h[j] = cq_dot(c->n, c->i[j]) - ref->offset;
        bool inside = c->h[j] <= 0;
        for (int k = 0; k < c->nr; k++) {
            c->side[j][k] = cq_dot(in[k], c->i[j]) - off[k];
            inside &= c->side[j][k] >= 0;
        }
        if (inside)
            return true;
    }
    return false;
}

/* Whether an incident edge crosses a reference side on or under the
 * reference plane, inside the other sides: read off the table, as
 * heights and sides are affine along the edge. */
static bool cq_hclip_crossings(const cq_hclip *c)
{
    for (int j = 0; j < c->ni; j++) {
        int l = j + 1 == c->ni ? 0 : j + 1;
        for (int k = 0; k < c->nr; k++) {
            double a = c->side[j][k], b = c->side[l][k];
            if (!(a * b < 0))
                continue;
            double t = a / (a - b);
            bool inside = c->h[j] + t * (c->h[l] - c->h[j]) <= 0;
            for (int m = 0; m < c->nr && inside; m++)
                inside = m == k || c->side[j][m] + t * (c->side[l][m] - c->side[j][m]) >= 0;
            if (inside)
                return true;
        }
    }
    return false;
}

/* Whether a reference corner lies on or under the incident face's plane
 * and, seen along n, inside the incident face (whose loop runs clockwise
 * seen along n). */
static bool cq_hclip_covered(const cq_hclip *c, const cq_hface *inc)
{
    for (int k = 0; k < c->nr; k++) {
        bool inside = cq_dot(inc->n, c->r[k]) - inc->offset <= 0;
        for (int j = 0; j < c->ni && inside; j++) {
            cq_vec3 e = cq_sub(c->i[j + 1 == c->ni ? 0 : j + 1], c->i[j]);
            inside = cq_dot(cq_cross(c->n, e), cq_sub(c->r[k], c->i[j])) <= 0;
        }
        if (inside)
            return true;
    }
    return false;
}

/* Whether face axis c's clip keeps a point for certain: the overlap of
 * the reference face (c's) and the incident face (the other hull's face
 * most against it) seen along the normal reaches the reference plane.
 * That overlap's corners are incident corners inside the reference,
 * reference corners inside the incident and edge crossings; height is
 * affine over it, so its lowest point is one of them, and the clip keeps
 * every corner up to the skin (>= 0) above the plane. The clip's
 * reference is this face (its normal is the contact normal; a parallel
 * incident face clips to the same overlap either way): in exact
 * arithmetic this is the clip's verdict at height zero. */
static bool cq_face_holds(const cq_hsat *s, cq_hcand c)
{
    if ((c.axis & 3) == CQ_HULL_AXIS_EDGES)
        return false;
    cq_hface ref = cq_hface_of(s, (c.axis & 3) == CQ_HULL_AXIS_FACE_B, c.axis >> 2);
    cq_hface inc = cq_hface_of(s, !ref.of_b, cq_face_against(s, !ref.of_b, ref.n));
    cq_hclip clip;
    return cq_hclip_corners(s, &ref, &inc, &clip) || cq_hclip_crossings(&clip) || cq_hclip_covered(&clip, &inc);
}

/* The contact axis: the best face, an edge pair if better by the margin,
 * the previous face while nearly as good; and the least penetration. */
static void cq_choose(const cq_hsat *s, cq_hcand face, cq_hcand edge, int prev, double tol, cq_hcand *best,
                      cq_hcand *least)
{
    *least = edge.axis >= 0 && edge.gap > face.gap + tol ? edge : face;
    *best = face;
    if (edge.axis >= 0 && edge.gap > face.gap + CQ_HULL_EDGE_PREFERENCE * fabs(face.gap) + tol)
        *best = edge;
    cq_hcand kept = cq_previous(s, prev);
    if (kept.axis >= 0 && kept.axis != best->axis && -kept.gap <= CQ_HULL_HYSTERESIS * fmax(-best->gap, 0) + tol)
        *best = kept;
}

/* GJK's start where the SAT hands a pair on: the features that support
 * the separating axis c, as pairs of hull vertex indices (A's, B's). A
 * face's first three corners against the other hull's vertex farthest
 * back along it; an edge pair's ends. Usually the closest features, or
 * next to them. */
static void cq_apart(const cq_hsat *s, cq_hcand c, cq_hull_sat *out)
{
    int kind = c.axis & 3, f = c.axis >> 2, mask = (1 << CQ_HULL_EDGE_BITS) - 1;
    out->apart_count = 3;
    if (kind == CQ_HULL_AXIS_FACE_A) {
        const uint16_t *loop = s->a->face_vertices + s->a->faces[f].first;
        int v = cq_lowest_at(s->bx, s->by, s->bz, s->b->vertex_count, s->a->faces[f].normal);
        for (int k = 0; k < 3; k++)
            out->apart_a[k] = loop[k], out->apart_b[k] = (uint16_t)v;
    } else if (kind == CQ_HULL_AXIS_FACE_B) {
        const uint16_t *loop = s->b->face_vertices + s->b->faces[f].first;
        int v = cq_lowest_at(s->ax, s->ay, s->az, s->a->vertex_count, s->nb[f]);
        for (int k = 0; k < 3; k++)
            out->apart_a[k] = (uint16_t)v, out->apart_b[k] = loop[k];
    } else {
        const cq_hull_edge *ea = &s->a->edges[f & mask], *eb = &s->b->edges[f >> CQ_HULL_EDGE_BITS];
        out->apart_a[0] = ea->v0, out->apart_a[1] = ea->v1, out->apart_a[2] = ea->v0;
        out->apart_b[0] = eb->v0, out->apart_b[1] = eb->v0, out->apart_b[2] = eb->v1;
    }
}

/* Every axis in turn, ending at the first that shows the cores apart. */
static bool cq_hull_sat_axes(const cq_hsat *s, int prev, cq_hcand *face, cq_hcand *edge, cq_vec3 *n,
                             cq_hull_sat *out)
{
    /* The previous axis first: a pair that was apart usually still is. */
    cq_hcand c = cq_previous(s, prev);
    if (!(c.gap > 0))
        c = cq_best_face(s, CQ_HULL_AXIS_FACE_A);
    cq_hcand fa = c;
    if (!(c.gap > 0))
        c = cq_best_face(s, CQ_HULL_AXIS_FACE_B);
    cq_hcand fb = c;
    double size = cq_len(cq_sub(s->a->aabb_max, s->a->aabb_min)) + cq_len(cq_sub(s->b->aabb_max, s->b->aabb_min));
    if (!(c.gap > 0))
        c = cq_best_edges(s, 1e-9 * size, n);
    if (c.gap > 0) {
        cq_apart(s, c, out);
        return false;
    }
    *face = fb.gap > fa.gap ? fb : fa, *edge = c;
    return true;
}

bool cq__hull_sat_run(const cq_hull *a, const cq_xform *xa, const cq_hull *b, const cq_xform *xb, int prev,
                      cq_hull_sat *out)
{
    cq_hsat s;
    cq_hsat_init(&s, a, xa, b, xb);
    cq_hcand face, edge, best, least;
    cq_vec3 n = cq_v3(0, 0, 0);
    if (!cq_hull_sat_axes(&s, prev, &face, &edge, &n, out))
        return false;
    double tol = 1e-9 * (cq_len(cq_sub(a->aabb_max, a->aabb_min)) + cq_len(cq_sub(b->aabb_max, b->aabb_min)));
    cq_choose(&s, face, edge, prev, tol, &best, &least);
    cq_answer(&s, best, n, xa, xb, &out->chosen);
    out->chosen_holds = false;
    if (least.axis == best.axis) {
        out->least = out->chosen;
        return true;
    }
    cq_answer(&s, least, n, xa, xb, &out->least);
    out->chosen_holds = cq_face_holds(&s, best);
    return true;
}
