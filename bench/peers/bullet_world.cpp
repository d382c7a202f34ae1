// Bullet's btCollisionWorld on cq-gen's scene: dbvt broadphase, the default
// dispatcher and configuration (box-box pairs go to btBoxBoxDetector), one
// collision object per box. A frame is cq-gen's motion rule applied to every
// object's transform, then performDiscreteCollisionDetection (AABB update,
// broadphase, narrow phase into the persistent manifolds), as cq-bench world
// times cq_world_apply then cq_world_contacts. Then closest-hit rays on the
// final state, as cq-bench casts them (none when the rays file is "-":
// bench/tick/run.py times only the frames, after untimed warm-up frames).
#include <cstdio>
#include <memory>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>

#include "peers.h"

namespace peers {

namespace {

struct World {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btDbvtBroadphase broadphase;
    btCollisionWorld world{&dispatcher, &broadphase, &config};
    std::vector<std::unique_ptr<btBoxShape>> shapes;
    std::vector<std::unique_ptr<btCollisionObject>> objects;

    explicit World(const Scene &s)
    {
        for (const SceneBox &x : s.boxes) {
            shapes.push_back(std::make_unique<btBoxShape>(btVector3(x.h[0], x.h[1], x.h[2])));
            objects.push_back(std::make_unique<btCollisionObject>());
            btCollisionObject &o = *objects.back();
            o.setCollisionShape(shapes.back().get());
            o.setWorldTransform(btTransform(btQuaternion(x.q[0], x.q[1], x.q[2], x.q[3]),
                                            btVector3(x.c[0], x.c[1], x.c[2])));
            world.addCollisionObject(&o);
        }
    }

    ~World()
    {
        for (auto &o : objects)
            world.removeCollisionObject(o.get());
    }
};

// Pairs whose manifold holds a point, those with a point at depth >= 0
// after Bullet's refresh, and all points.
struct Touching {
    long pairs = 0, penetrating = 0, points = 0;
};

Touching touching(btCollisionDispatcher &d)
{
    Touching t;
    for (int i = 0; i < d.getNumManifolds(); i++) {
        const btPersistentManifold *m = d.getManifoldByIndexInternal(i);
        bool deep = false;
        for (int k = 0; k < m->getNumContacts(); k++)
            deep = deep || m->getContactPoint(k).getDistance() <= 0;
        t.pairs += m->getNumContacts() > 0;
        t.penetrating += deep;
        t.points += m->getNumContacts();
    }
    return t;
}

// Rays per second of closest-hit rayTest, best of RAY_PASSES, and the hits.
// flags 0 is Bullet's default ray-convex test, btSubsimplexConvexCast
// ("approximate but faster", says btRaycastCallback.h); the GJK flag asks
// for btGjkConvexCast instead.
double cast_rays(btCollisionWorld &world, const std::vector<Ray> &rays, unsigned flags, long &hits)
{
    double best = best_of(RAY_PASSES, [&] {
        hits = 0;
        for (const Ray &r : rays) {
            btVector3 from(r.o[0], r.o[1], r.o[2]);
            btVector3 to = from + r.max * btVector3(r.d[0], r.d[1], r.d[2]);
            btCollisionWorld::ClosestRayResultCallback cb(from, to);
            cb.m_flags = flags;
            world.rayTest(from, to, cb);
            hits += cb.hasHit();
        }
    });
    return double(rays.size()) / best;
}

} // namespace

void bullet_world(Scene &s, const std::vector<Ray> &rays, int frames, int warmup)
{
    auto w = std::make_unique<World>(s);
    double t_move = 0, t_collide = 0;
    for (int f = -warmup; f < frames; f++) {
        if (f == 0) // the warm-up frames build the pair cache and manifolds, untimed
            t_move = t_collide = 0;
        double t0 = now();
        advance(s);
        for (size_t k = 0; k < s.boxes.size(); k++) {
            const double *c = s.boxes[k].c;
            w->objects[k]->getWorldTransform().setOrigin(btVector3(c[0], c[1], c[2]));
        }
        double t1 = now();
        w->world.performDiscreteCollisionDetection();
        t_move += t1 - t0;
        t_collide += now() - t1;
    }
    Touching t = touching(w->dispatcher);
    std::printf("shapes %zu\nframes %d\n", s.boxes.size(), frames);
    std::printf("bullet_world_frame_ms %.4f\n", 1e3 * (t_move + t_collide) / frames);
    std::printf("bullet_move_ms %.4f\nbullet_collide_ms %.4f\n", 1e3 * t_move / frames, 1e3 * t_collide / frames);
    std::printf("bullet_broadphase_pairs %d\n", w->world.getPairCache()->getNumOverlappingPairs());
    std::printf("bullet_touching_pairs %ld\nbullet_penetrating_pairs %ld\nbullet_contacts %ld\n", t.pairs,
                t.penetrating, t.points);
    if (rays.empty())
        return;

    long hits, gjk_hits;
    double rate = cast_rays(w->world, rays, 0, hits);
    double gjk_rate = cast_rays(w->world, rays, btTriangleRaycastCallback::kF_UseGjkConvexCastRaytest, gjk_hits);
    std::printf("rays %zu\nbullet_rays_per_s %.0f\nbullet_ray_hits %ld\n", rays.size(), rate, hits);
    std::printf("bullet_gjk_rays_per_s %.0f\nbullet_gjk_ray_hits %ld\n", gjk_rate, gjk_hits);
}

} // namespace peers
