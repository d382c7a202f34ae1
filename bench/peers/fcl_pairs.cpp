// FCL's box-box collide with contacts on cq-gen's OBB pairs (FCL 0.7 answers
// box-box with its port of ODE's dBoxBox under the default libccd solver).
#include <cstdio>
#include <memory>

#include <fcl/narrowphase/collision.h>
#include <fcl/geometry/shape/box.h>

#include "peers.h"

namespace peers {

namespace {

fcl::Transform3d pose(const Obb &o)
{
    fcl::Transform3d t = fcl::Transform3d::Identity();
    for (int i = 0; i < 3; i++) {
        t.translation()[i] = o.c[i];
        for (int k = 0; k < 3; k++)
            t.linear()(k, i) = o.axis[i][k]; // columns: the local axes
    }
    return t;
}

} // namespace

void fcl_box_box(const std::vector<Obb> &a, const std::vector<Obb> &b)
{
    size_t n = a.size();
    std::vector<std::unique_ptr<fcl::Boxd>> sa, sb;
    std::vector<fcl::Transform3d> ta(n), tb(n);
    for (size_t i = 0; i < n; i++) {
        // FCL's Box takes side lengths, not half extents.
        sa.push_back(std::make_unique<fcl::Boxd>(2 * a[i].h[0], 2 * a[i].h[1], 2 * a[i].h[2]));
        sb.push_back(std::make_unique<fcl::Boxd>(2 * b[i].h[0], 2 * b[i].h[1], 2 * b[i].h[2]));
        ta[i] = pose(a[i]);
        tb[i] = pose(b[i]);
    }
    fcl::CollisionRequestd req(4, true); // up to four contacts, with contact data
    long overlaps = 0, points = 0;
    double t = best_of(PAIR_PASSES, [&] {
        overlaps = points = 0;
        for (size_t i = 0; i < n; i++) {
            fcl::CollisionResultd res;
            fcl::collide(sa[i].get(), ta[i], sb[i].get(), tb[i], req, res);
            overlaps += res.isCollision();
            points += long(res.numContacts());
        }
    });
    std::printf("fcl_box_box_ns %.1f\n", t * 1e9 / double(n));
    std::printf("fcl_box_box_overlaps %ld\n", overlaps);
    std::printf("fcl_box_box_contact_points %ld\n", points);
}

} // namespace peers
