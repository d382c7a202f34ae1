/* The project's deterministic inputs for tests and benchmarks (cq-gen).
 * Every number is printed with "%.17g", space-separated, one record a line,
 * so every reader parses the doubles that were drawn.
 *
 * pairs: 30 numbers a line, box A then box B, each
 *   cx cy cz  hx hy hz  ax_x ax_y ax_z  ay_x ay_y ay_z  az_x az_y az_z
 *   (centre, half extents, the three local unit axes in world space).
 * scene: a first line "L DT" (the cube's half-size, the time step), then
 *   cx cy cz  hx hy hz  qx qy qz qw  vx vy vz  a box a line. A frame moves
 *   every centre by v*DT; a coordinate that would leave [-L, L] reverses
 *   that velocity component and moves by the reversed velocity instead.
 * rays: ox oy oz  dx dy dz  max_distance  a ray a line (d unit length). */
#ifndef GEN_GEN_H
#define GEN_GEN_H

#include <stdint.h>
#include <stdio.h>

/// The half-size L of the cube a scene of n boxes fills: 2 n^(1/3), so the
/// cube holds one box per 8 cubic units whatever n is.
double gen_scene_half(long n);

/// Writes n pairs of oriented boxes drawn from seed: centres U(-2, 2), half
/// extents U(0.2, 2), rotations Rz(yaw) Ry(pitch) Rx(roll) with yaw and
/// roll U(-pi, pi) and pitch U(-pi/2, pi/2). Returns 0, or -1 when writing
/// to out failed.
int gen_pairs(FILE *out, long n, uint64_t seed);

/// Writes a scene of n moving boxes drawn from seed: half extents a quarter
/// of U(0.2, 2), the pairs' rotations as unit quaternions, centres U(-L, L)
/// with L = gen_scene_half(n), velocities U(-3, 3), time step 1/60.
/// Returns 0, or -1 when writing to out failed.
int gen_scene(FILE *out, long n, uint64_t seed);

/// Writes n rays drawn from seed: origins U(-half, half), directions
/// U(-1, 1)^3 normalised (a zero draw stays zero), reach half / 2.
/// Returns 0, or -1 when writing to out failed.
int gen_rays(FILE *out, long n, uint64_t seed, double half);

#endif
