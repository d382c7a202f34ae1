/* Shared helpers for the Check suites: a seeded generator (the SplitMix64
 * of the project's input generator, bench/gen/splitmix.h), random
 * rotations, vector asserts. */
#ifndef CQ_TESTUTIL_H
#define CQ_TESTUTIL_H

#include <check.h>
#include <stdint.h>

#include "cq/collision.h"
#include "splitmix.h"

typedef gen_rng tu_rng;

/* A uniform double in [lo, hi). */
double tu_uniform(tu_rng *rng, double lo, double hi);
/* A uniformly distributed random rotation (columns = axes). */
cq_mat3 tu_rotation(tu_rng *rng);
/* A random pose with position in [-r, r]^3. */
cq_xform tu_pose(tu_rng *rng, double r);
/* A rotation by angle (radians) about a unit axis. */
cq_mat3 tu_axis_angle(cq_vec3 axis, double angle);

/* Reads the 30-number OBB pairs of `cq-gen pairs` output; returns the count
 * read (up to max) or -1 when the file cannot be opened. Path from
 * $CQ_PAIRS_FILE. */
int tu_read_pairs(cq_obb *a, cq_obb *b, int max);

/* Oracle: the documented hull tolerance, bounded above from the input
 * points alone: 2e-6 of the half-extent about the bounding box's centre
 * plus 64 ulps of the largest coordinate. */
double tu_hull_tol(const cq_vec3 *p, int n);

/* The eight corners of an OBB. */
void tu_obb_corners(const cq_obb *box, cq_vec3 out[8]);

/* Oracle: the interval of a box's eight corners projected on unit l. */
void tu_obb_interval(const cq_obb *o, cq_vec3 l, double *lo, double *hi);

/* Oracle: the least overlap of two boxes over the 15 SAT axes, from corner
 * projections (the minimum translation when they overlap). */
double tu_obb_min_penetration(const cq_obb *a, const cq_obb *b);
/* Oracle: SAT axis k (0..14, cq_sat_axis_name's numbering) of boxes a and b
 * as a unit vector, and the pair's penetration along it from the corners'
 * intervals (negative: apart). NAN for a degenerate cross axis. */
cq_vec3 tu_obb_axis(const cq_obb *a, const cq_obb *b, int k);
double tu_obb_axis_penetration(const cq_obb *a, const cq_obb *b, int k);

/* Oracle distances: point to segment, and point to triangle (the
 * projection's barycentric coordinates from the 2x2 Gram system, else the
 * nearest edge). */
double tu_dist_point_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b);
double tu_dist_point_triangle(cq_vec3 p, const cq_vec3 t[3]);

#define tu_assert_vec_eq_tol(v, ex, tol)                                       \
    do {                                                                       \
        cq_vec3 v_ = (v), e_ = (ex);                                           \
        ck_assert_double_eq_tol(v_.x, e_.x, (tol));                            \
        ck_assert_double_eq_tol(v_.y, e_.y, (tol));                            \
        ck_assert_double_eq_tol(v_.z, e_.z, (tol));                            \
    } while (0)

/* A contact whose numbers are all finite and whose normal (when present) is unit. */
#define tu_assert_contact_sane(c)                                              \
    do {                                                                       \
        const cq_contact *c_ = &(c);                                           \
        ck_assert(isfinite(c_->distance) && c_->distance >= 0);                \
        ck_assert(isfinite(c_->depth) && c_->depth >= 0);                      \
        ck_assert(c_->point_count >= 0 && c_->point_count <= CQ_MAX_POINTS);   \
        if (c_->has_normal) {                                                  \
            ck_assert(cq_v3_finite(c_->normal));                               \
            ck_assert_double_eq_tol(cq_len(c_->normal), 1.0, 1e-9);            \
        }                                                                      \
        for (int k_ = 0; k_ < c_->point_count; k_++) {                         \
            ck_assert(cq_v3_finite(c_->points[k_].position));                  \
            ck_assert(isfinite(c_->points[k_].depth));                         \
        }                                                                      \
    } while (0)

#endif
