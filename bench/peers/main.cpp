// cq-peers MODE ARGS...: the same modes and files as cq-bench (see peers.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "peers.h"

using namespace peers;

static int pairs_mode(int argc, char **argv)
{
    std::vector<Obb> a, b;
    if (argc < 1 || !read_pairs(argv[0], a, b)) {
        std::fprintf(stderr, "cq-peers pairs: cannot read pairs from %s\n", argc ? argv[0] : "(none)");
        return 1;
    }
    std::printf("pairs %zu\n", a.size());
    bullet_box_box(a, b);
    bullet_gjk_epa(a, b);
    ccd_pairs(a, b);
    fcl_box_box(a, b);
    return 0;
}

static int world_mode(int argc, char **argv)
{
    Scene s;
    std::vector<Ray> rays;
    int frames = argc >= 3 ? std::atoi(argv[2]) : 0, warmup = argc >= 4 ? std::atoi(argv[3]) : 0;
    bool no_rays = argc >= 2 && std::strcmp(argv[1], "-") == 0;
    if (argc < 3 || frames < 1 || warmup < 0 || !read_scene(argv[0], s) || !(no_rays || read_rays(argv[1], rays))) {
        std::fprintf(stderr, "cq-peers world: cannot read the scene and rays, or FRAMES < 1\n");
        return 1;
    }
    bullet_world(s, rays, frames, warmup);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && std::strcmp(argv[1], "pairs") == 0)
        return pairs_mode(argc - 2, argv + 2);
    if (argc >= 2 && std::strcmp(argv[1], "world") == 0)
        return world_mode(argc - 2, argv + 2);
    std::fprintf(stderr, "usage: cq-peers pairs FILE            (cq-gen pairs N SEED)\n"
                         "       cq-peers world SCENE RAYS|- FRAMES [WARMUP] (cq-gen scene N SEED, rays N SEED L; -: no rays)\n");
    return 2;
}
