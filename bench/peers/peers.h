// cq-peers: the peers of cq-bench (Bullet, libccd, FCL) on the same cq-gen
// inputs, printing `key value` lines that bench/table.py sets beside
// cq-bench's. Each figure is computed the way a user of that library would
// ask for it; the comments at each call say what the library is asked.
#ifndef CQ_PEERS_H
#define CQ_PEERS_H

#include <vector>

namespace peers {

// One oriented box of cq-gen's pairs file: centre, half extents and its
// local axes in world space (axis[i] is the world direction of local axis i).
struct Obb {
    double c[3], h[3], axis[3][3];
};

// One box of cq-gen's scene file: centre, half extents, unit quaternion
// (x, y, z, w) and velocity.
struct SceneBox {
    double c[3], h[3], q[4], v[3];
};

struct Scene {
    double L = 0, dt = 0; // the cube's half-size and the time step
    std::vector<SceneBox> boxes;
};

// One ray of cq-gen's rays file: origin, unit direction, maximum distance.
struct Ray {
    double o[3], d[3], max;
};

// Readers for cq-gen's files; false when the file is missing or malformed.
bool read_pairs(const char *path, std::vector<Obb> &a, std::vector<Obb> &b);
bool read_scene(const char *path, Scene &s);
bool read_rays(const char *path, std::vector<Ray> &r);

// cq-gen's motion rule for one frame: move by v dt; a coordinate that would
// leave [-L, L] reverses that velocity component and moves by it instead.
void advance(Scene &s);

// Seconds on the monotonic clock.
double now();

// Best (smallest) wall time in seconds of `passes` calls of fn.
template <class F> double best_of(int passes, F fn)
{
    double best = 1e300;
    for (int p = 0; p < passes; p++) {
        double t0 = now();
        fn();
        double t = now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

// Passes per pair figure, as in cq-bench pairs (best of fifteen).
constexpr int PAIR_PASSES = 15;
// Passes of the ray batch, as in cq-bench world (best of five).
constexpr int RAY_PASSES = 5;

// Each prints its `key value` lines for the pairs a[i], b[i].
void bullet_box_box(const std::vector<Obb> &a, const std::vector<Obb> &b);
void bullet_gjk_epa(const std::vector<Obb> &a, const std::vector<Obb> &b);
void ccd_pairs(const std::vector<Obb> &a, const std::vector<Obb> &b);
void fcl_box_box(const std::vector<Obb> &a, const std::vector<Obb> &b);

// Prints the world figures of `frames` frames of the scene (after `warmup`
// untimed ones), then the rays' (none when rays is empty).
void bullet_world(Scene &s, const std::vector<Ray> &rays, int frames, int warmup);

} // namespace peers

#endif
