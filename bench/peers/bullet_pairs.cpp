// Bullet's pair queries on cq-gen's OBB pairs: btBoxBoxDetector (ODE's
// dBoxBox, the box-box algorithm of Bullet's default dispatcher) and
// btGjkEpaSolver2 on the boxes given as 8-point convex hulls.
#include <cstdio>
#include <memory>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/CollisionDispatch/btBoxBoxDetector.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpa2.h>

#include "peers.h"

namespace peers {

namespace {

// The box's pose: the basis's columns are its local axes in world space.
btTransform pose(const Obb &o)
{
    const double(*x)[3] = o.axis;
    btMatrix3x3 r(x[0][0], x[1][0], x[2][0], x[0][1], x[1][1], x[2][1], x[0][2], x[1][2], x[2][2]);
    return btTransform(r, btVector3(o.c[0], o.c[1], o.c[2]));
}

// Counts the points the detector reports; a pair overlaps when it reports any.
struct CountingResult : btDiscreteCollisionDetectorInterface::Result {
    long points = 0;
    void setShapeIdentifiersA(int, int) override {}
    void setShapeIdentifiersB(int, int) override {}
    void addContactPoint(const btVector3 &, const btVector3 &, btScalar) override { points++; }
};

// The box's eight corners in its local frame.
std::unique_ptr<btConvexHullShape> hull(const Obb &o)
{
    auto s = std::make_unique<btConvexHullShape>();
    for (int k = 0; k < 8; k++)
        s->addPoint(btVector3(k & 1 ? -o.h[0] : o.h[0], k & 2 ? -o.h[1] : o.h[1], k & 4 ? -o.h[2] : o.h[2]),
                    k == 7);
    s->setMargin(0); // the exact box, as cq's hull: no rounding margin
    return s;
}

} // namespace

void bullet_box_box(const std::vector<Obb> &a, const std::vector<Obb> &b)
{
    size_t n = a.size();
    std::vector<std::unique_ptr<btBoxShape>> sa, sb;
    std::vector<btDiscreteCollisionDetectorInterface::ClosestPointInput> in(n);
    for (size_t i = 0; i < n; i++) {
        sa.push_back(std::make_unique<btBoxShape>(btVector3(a[i].h[0], a[i].h[1], a[i].h[2])));
        sb.push_back(std::make_unique<btBoxShape>(btVector3(b[i].h[0], b[i].h[1], b[i].h[2])));
        in[i].m_transformA = pose(a[i]);
        in[i].m_transformB = pose(b[i]);
    }
    long overlaps = 0, points = 0;
    // The detector always builds the full manifold (up to 4 points): Bullet
    // has no boolean-only box-box test, so this one time is the peer of both
    // cq's boolean test and its contact query.
    double t = best_of(PAIR_PASSES, [&] {
        overlaps = points = 0;
        for (size_t i = 0; i < n; i++) {
            btBoxBoxDetector det(sa[i].get(), sb[i].get());
            CountingResult r;
            det.getClosestPoints(in[i], r, nullptr);
            overlaps += r.points > 0;
            points += r.points;
        }
    });
    std::printf("bullet_scalar_bytes %zu\n", sizeof(btScalar));
    std::printf("bullet_box_box_ns %.1f\n", t * 1e9 / double(n));
    std::printf("bullet_box_box_overlaps %ld\n", overlaps);
    std::printf("bullet_box_box_contact_points %ld\n", points);
}

void bullet_gjk_epa(const std::vector<Obb> &a, const std::vector<Obb> &b)
{
    size_t n = a.size();
    std::vector<std::unique_ptr<btConvexHullShape>> ha, hb;
    std::vector<btTransform> ta(n), tb(n);
    for (size_t i = 0; i < n; i++) {
        ha.push_back(hull(a[i]));
        hb.push_back(hull(b[i]));
        ta[i] = pose(a[i]);
        tb[i] = pose(b[i]);
    }
    long overlaps = 0, failures = 0;
    // Distance (GJK) when separated, else Penetration (EPA) without margins:
    // what btGjkEpaSolver2::SignedDistance does, with the centre offset as
    // the first direction.
    double t = best_of(PAIR_PASSES, [&] {
        overlaps = failures = 0;
        for (size_t i = 0; i < n; i++) {
            btGjkEpaSolver2::sResults r;
            btVector3 guess = tb[i].getOrigin() - ta[i].getOrigin();
            if (btGjkEpaSolver2::Distance(ha[i].get(), ta[i], hb[i].get(), tb[i], guess, r))
                continue;
            overlaps++;
            failures += !btGjkEpaSolver2::Penetration(ha[i].get(), ta[i], hb[i].get(), tb[i], guess, r, false);
        }
    });
    std::printf("bullet_gjk_epa_ns %.1f\n", t * 1e9 / double(n));
    std::printf("bullet_gjk_epa_overlaps %ld\n", overlaps);
    std::printf("bullet_gjk_epa_failures %ld\n", failures);
}

} // namespace peers
