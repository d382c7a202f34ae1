/* Every Check suite, one per core module: X(name) declares Suite *name_suite(void). */
#define CQ_SUITES(X) \
    X(math)          \
    X(shape)         \
    X(sat)           \
    X(box_box)       \
    X(geom)          \
    X(closed)        \
    X(tri_box)       \
    X(tri_tri)       \
    X(dispatch)      \
    X(aabb)          \
    X(bvh)           \
    X(gjk)           \
    X(epa)           \
    X(convex)        \
    X(regress)       \
    X(hull)          \
    X(raycast)       \
    X(raycast_hull)  \
    X(sweep)         \
    X(sweep_random)  \
    X(sap)           \
    X(world)         \
    X(world_contacts) \
    X(world_query)   \
    X(mesh)          \
    X(proto_write)   \
    X(proto_number)  \
    X(proto_read)    \
    X(proto_values)  \
    X(server_unit)   \
    X(config)        \
    X(metrics)       \
    X(registry)      \
    X(stream)
