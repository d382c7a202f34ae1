/* Internal: the pair functions behind cq_collide's dispatch table, and the
 * small geometric primitives they share. Not installed, not exported. */
#ifndef CQ_NARROW_H
#define CQ_NARROW_H

#include "cq/collision.h"
#include "cq/gjk.h"

/* A pair function. q is in canonical order (q->a->type <= q->b->type) and its
 * cache, if any, is oriented the same way. out arrives zeroed with
 * sat_axis = -1; the function fills the geometry (the dispatcher sets the
 * algorithm and counts the test). A row of collide.c's table marked whole
 * (box-box) is the exception: its function gets the caller's query as it
 * is and does all of that itself. */
typedef void (*cq_pair_fn)(const cq_pair_query *q, cq_contact *out);

/* Whether cq_collide runs the pair B first (collide.c): the canonical order,
 * which anything reporting the same numbers as a contact must share. */
bool cq__b_first(const cq_pair_query *q);

/* cq_collide's wrapper around a pair function, in its three steps, for a
 * caller that runs pair functions itself (box_box.c): begin resets out
 * for the path alg; canon gives q with A and B swapped (canon and cache
 * are the caller's storage; the cache's normal and axis named from the
 * other shape) for a pair cq__b_first runs B first; finish applies the
 * normal's guard and skip_manifold, mirrors a swapped result back and
 * counts the test under the path that answered. */
void cq__collide_begin(cq_contact *out, cq_algorithm alg);
const cq_pair_query *cq__collide_canon(const cq_pair_query *q, cq_algorithm alg, cq_pair_query *canon,
                                       cq_pair_cache *cache);
void cq__collide_finish(const cq_pair_query *q, bool b_first, cq_contact *out);

/* A box-box SAT axis named from the other box: A_i <-> B_i, AixBj -> AjxBi
 * (collide.c). -1 stays -1. */
int cq__sat_axis_swap(int axis);

/* Closed forms (closed.c, plane.c). */
void cq__sphere_sphere(const cq_pair_query *q, cq_contact *out);
void cq__sphere_capsule(const cq_pair_query *q, cq_contact *out);
void cq__sphere_box(const cq_pair_query *q, cq_contact *out);
void cq__sphere_triangle(const cq_pair_query *q, cq_contact *out);
void cq__sphere_plane(const cq_pair_query *q, cq_contact *out);
void cq__capsule_capsule(const cq_pair_query *q, cq_contact *out);
void cq__capsule_plane(const cq_pair_query *q, cq_contact *out);
void cq__box_plane(const cq_pair_query *q, cq_contact *out);
void cq__triangle_plane(const cq_pair_query *q, cq_contact *out);

/* The general convex path: GJK/EPA with fallbacks (convex_pair.c), and a
 * hull against a plane (plane.c). */
void cq__convex_pair(const cq_pair_query *q, cq_contact *out);
void cq__convex_plane(const cq_pair_query *q, cq_contact *out);
/* cq__convex_pair with EPA for every overlapping pair, the hull SAT never
 * taken: the reference the SAT path is tested against (check_sat_hull). */
void cq__convex_pair_epa(const cq_pair_query *q, cq_contact *out);

/* A convex shape against a static mesh (mesh_pair.c). */
void cq__mesh_pair(const cq_pair_query *q, cq_contact *out);

/* SAT paths (box_box.c, tri_box.c, tri_tri.c). cq__box_box is the whole
 * cq_collide of two boxes, q in the caller's order (its table row says so):
 * the wrapper's steps are its own, so a pair apart on a face axis is
 * answered without the canonical copy of q. */
void cq__box_box(const cq_pair_query *q, cq_contact *out);
void cq__box_triangle(const cq_pair_query *q, cq_contact *out);
void cq__triangle_triangle(const cq_pair_query *q, cq_contact *out);

/* For a pair a SAT found separated: its Euclidean distance, witnesses and
 * closest-point normal by GJK (distance.c). Returns GJK's status; nothing
 * is set unless it is CQ_GJK_SEPARATED. The caller owns what a failure
 * means (counting or answering it). */
cq_gjk_status cq__pair_distance(const cq_pair_query *q, cq_contact *out);

/* n, a GJK or EPA normal of the pair q, with the components that are below
 * the path's precision (rounding noise where the exact answer is zero) set
 * to zero and made unit again; every other normal unchanged (distance.c). */
cq_vec3 cq__gjk_snap_normal(const cq_pair_query *q, cq_vec3 n);

/* No direction is defined (closed.c): the pair's previous normal if it has
 * one (true, fallback "previous_normal"), else the contact is dropped and
 * counted (false, "dropped"). Never an invented normal. */
bool cq__previous_normal(const cq_pair_query *q, cq_contact *out);

/* Fills a contact for two round cores (points or segments) whose closest
 * points are pa (on A's core) and pb (on B's core), inflated by radii ra and
 * rb. When the cores touch (|pb - pa| tiny) the direction is undefined: the
 * cache's previous normal is used if present (fallback "previous_normal"),
 * otherwise the contact is reported with fallback "dropped" and no normal.
 * Writes one manifold point on B's surface. Shared by every sphere/capsule
 * pair. */
void cq__round_contact(cq_vec3 pa, cq_vec3 pb, double ra, double rb, const cq_pair_query *q, cq_contact *out);

/* A bound on |x - pose origin| over the points of shape s (0 for a plane
 * or a mesh), from its sizes alone (surface.c). */
double cq__shape_extent(const cq_shape *s);

/* The first point of posed shape s (not a plane or a mesh) on the line
 * through p along unit dir, coming from -dir (surface.c): where a shape
 * whose core p lies in is met by a contact's line. False when the line
 * misses it (rounding at a grazing line); *out is then unset. */
bool cq__surface_on_line(const cq_shape *s, const cq_xform *x, cq_vec3 p, cq_vec3 dir, cq_vec3 *out);

#endif
