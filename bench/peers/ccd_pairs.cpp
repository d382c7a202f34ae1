// libccd on cq-gen's OBB pairs given as 8-point hulls: GJK+EPA
// (ccdGJKPenetration) and MPR (ccdMPRPenetration). libccd has no distance
// query, so a separated pair costs it only GJK's (or MPR's) boolean answer.
#include <cstdio>

#include <ccd/ccd.h>

#include "peers.h"

namespace peers {

namespace {

// A hull of the box's corners in its local frame, with its pose.
struct Hull {
    ccd_vec3_t c;
    double axis[3][3]; // local axis i in world space
    double pt[8][3];
};

Hull hull(const Obb &o)
{
    Hull s{};
    ccdVec3Set(&s.c, o.c[0], o.c[1], o.c[2]);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            s.axis[i][k] = o.axis[i][k];
    for (int k = 0; k < 8; k++) {
        s.pt[k][0] = k & 1 ? -o.h[0] : o.h[0];
        s.pt[k][1] = k & 2 ? -o.h[1] : o.h[1];
        s.pt[k][2] = k & 4 ? -o.h[2] : o.h[2];
    }
    return s;
}

// The hull's farthest point along dir: dir into the local frame, the best
// of the eight points, back to world space.
void support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *out)
{
    const Hull &s = *static_cast<const Hull *>(obj);
    double d[3];
    for (int i = 0; i < 3; i++)
        d[i] = s.axis[i][0] * ccdVec3X(dir) + s.axis[i][1] * ccdVec3Y(dir) + s.axis[i][2] * ccdVec3Z(dir);
    int best = 0;
    double best_dot = -1e300;
    for (int k = 0; k < 8; k++) {
        double dot = s.pt[k][0] * d[0] + s.pt[k][1] * d[1] + s.pt[k][2] * d[2];
        if (dot > best_dot)
            best_dot = dot, best = k;
    }
    double w[3];
    for (int k = 0; k < 3; k++)
        w[k] = s.c.v[k] + s.axis[0][k] * s.pt[best][0] + s.axis[1][k] * s.pt[best][1] +
               s.axis[2][k] * s.pt[best][2];
    ccdVec3Set(out, w[0], w[1], w[2]);
}

void center(const void *obj, ccd_vec3_t *out)
{
    ccdVec3Copy(out, &static_cast<const Hull *>(obj)->c);
}

// The centre offset, the first direction Bullet and cq are given too.
void first_dir(const void *a, const void *b, ccd_vec3_t *dir)
{
    ccdVec3Sub2(dir, &static_cast<const Hull *>(b)->c, &static_cast<const Hull *>(a)->c);
}

typedef int (*penetration_fn)(const void *, const void *, const ccd_t *, ccd_real_t *, ccd_vec3_t *, ccd_vec3_t *);

// Nanoseconds per pair of fn, best of PAIR_PASSES, and its overlap count.
double time_penetration(penetration_fn fn, const std::vector<Hull> &ha, const std::vector<Hull> &hb, long &overlaps)
{
    ccd_t ccd;
    CCD_INIT(&ccd);
    ccd.support1 = ccd.support2 = support;
    ccd.center1 = ccd.center2 = center;
    ccd.first_dir = first_dir;
    ccd.max_iterations = 500; // FCL's setting: CCD_INIT's default is unbounded
    double t = best_of(PAIR_PASSES, [&] {
        overlaps = 0;
        for (size_t i = 0; i < ha.size(); i++) {
            ccd_real_t depth;
            ccd_vec3_t dir, pos;
            overlaps += fn(&ha[i], &hb[i], &ccd, &depth, &dir, &pos) == 0;
        }
    });
    return t * 1e9 / double(ha.size());
}

} // namespace

void ccd_pairs(const std::vector<Obb> &a, const std::vector<Obb> &b)
{
    std::vector<Hull> ha, hb;
    for (size_t i = 0; i < a.size(); i++)
        ha.push_back(hull(a[i])), hb.push_back(hull(b[i]));
    long gjk_overlaps, mpr_overlaps;
    double gjk = time_penetration(ccdGJKPenetration, ha, hb, gjk_overlaps);
    double mpr = time_penetration(ccdMPRPenetration, ha, hb, mpr_overlaps);
    std::printf("ccd_gjk_epa_ns %.1f\n", gjk);
    std::printf("ccd_gjk_epa_overlaps %ld\n", gjk_overlaps);
    std::printf("ccd_mpr_ns %.1f\n", mpr);
    std::printf("ccd_mpr_overlaps %ld\n", mpr_overlaps);
}

} // namespace peers
