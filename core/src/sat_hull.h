/* Internal: hull-hull penetration by the separating-axis test (sat_hull.c):
 * face normals of both hulls by support queries, and the edge pairs that
 * form a face of the Minkowski difference (the Gauss-map test). The
 * general convex path (convex_pair.c) runs it first on two suitable hulls:
 * where their cores overlap it answers instead of GJK and EPA, and where
 * an axis shows them apart GJK measures the distance. */
#ifndef CQ_SAT_HULL_H
#define CQ_SAT_HULL_H

#include <stdbool.h>
#include <stddef.h>

#include "cq/collision.h"
#include "cq/hull.h"

/* Most faces a hull may have for the SAT path. Measured by callgrind on
 * overlapping random hulls of points on a sphere (triangulated faces, where
 * EPA is at its cheapest): the SAT's instructions a pair against GJK+EPA's
 * were 0.87 at 6 faces, 0.89 at 8, 1.01 at 10, 1.11 at 12, 1.42 at 16 and
 * 1.81 at 20 (its edge pairs grow as the product of the edge counts);
 * boxes (6 faces) 0.42 of EPA's path. Past 10 EPA answers. */
#define CQ_SAT_HULL_MAX_FACES 10

/* One axis of the answer. */
typedef struct cq_hull_axis {
    double gap;        /* the cores' separation along the axis (negative: overlap) */
    cq_vec3 normal;    /* world, unit, from A to B */
    cq_vec3 witness_b; /* a point of B's core on the contact line: the deepest
                        * vertex, a face point under A's deepest vertex, or
                        * the closest point of B's edge */
    int axis;          /* the axis's identity, for the pair cache */
} cq_hull_axis;

/* The answer: the chosen axis (faces preferred, the previous face kept),
 * and the axis of least penetration (the same unless a preference chose):
 * where the chosen face's clip keeps no point, its witness need not lie on
 * A's surface, and the least one answers instead. */
typedef struct cq_hull_sat {
    cq_hull_axis chosen, least;
    /* Where they differ: whether a corner of the other hull's incident
     * face (the one most against the chosen face) lies on or under that
     * face, inside its sides. The face's clip then keeps that corner, so
     * it answers without the clip being run to find out; false says
     * nothing, and the clip decides. */
    bool chosen_holds;
    /* Where an axis shows the cores apart: GJK's start, apart_count
     * pairs of hull vertex indices of the features supporting that axis. */
    int apart_count;
    uint16_t apart_a[3], apart_b[3];
} cq_hull_sat;

/* The bytes cq_hull_build lays out behind hull h for the SAT (0 where the
 * SAT never takes h), and their filling: h complete but for sat_data. */
size_t cq__hull_sat_bytes(const cq_hull *h);
void cq__hull_sat_prepare(const cq_hull *h, void *block);

/* Whether the SAT path answers hulls a and b (solids of at most
 * CQ_SAT_HULL_MAX_FACES faces each). */
bool cq__hull_sat_suits(const cq_hull *a, const cq_hull *b);

/* The SAT of the cores of a (posed xa) and b (posed xb), both
 * cq__hull_sat_suits. False when an axis shows them apart (a gap above
 * zero; only out->apart_* are then set): the test ends at
 * that axis. Otherwise true,
 * with the axis of least penetration in out->least and the contact's
 * axis in out->chosen: face axes are preferred to edge axes by a relative
 * margin, and the previous face axis prev (from a cq_hull_axis's axis, any
 * value accepted; -1 none), tried first, is kept while its penetration
 * stays within the hysteresis band of the best one. */
bool cq__hull_sat_run(const cq_hull *a, const cq_xform *xa, const cq_hull *b, const cq_xform *xb, int prev,
                      cq_hull_sat *out);

/* An axis identity named from the other hull (A's face i <-> B's face i,
 * edge pair (i, j) <-> (j, i)); a negative value stays -1. */
int cq__hull_axis_swap(int axis);

#endif
