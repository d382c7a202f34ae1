/* Convex shapes as GJK proxies: the fewest points whose hull, inflated by a
 * radius, is the shape. Round shapes keep their radius instead of being
 * sampled, so GJK stays exact for them. */
#include "cq/proxy.h"

static void cq_box_corners(cq_vec3 h, cq_vec3 out[8])
{
    for (int k = 0; k < 8; k++)
        out[k] = cq_v3(k & 1 ? -h.x : h.x, k & 2 ? -h.y : h.y, k & 4 ? -h.z : h.z);
}

int cq_shape_proxy(const cq_shape *shape, cq_vec3 storage[CQ_PROXY_STORAGE], cq_proxy *out)
{
    switch (shape->type) {
    case CQ_SPHERE:
        storage[0] = cq_v3(0, 0, 0);
        *out = (cq_proxy){storage, 1, shape->sphere.radius};
        return CQ_OK;
    case CQ_CAPSULE:
        storage[0] = cq_v3(0, shape->capsule.half_height, 0);
        storage[1] = cq_v3(0, -shape->capsule.half_height, 0);
        *out = (cq_proxy){storage, 2, shape->capsule.radius};
        return CQ_OK;
    case CQ_BOX:
        cq_box_corners(shape->box.half, storage);
        *out = (cq_proxy){storage, 8, 0};
        return CQ_OK;
    case CQ_TRIANGLE:
        for (int i = 0; i < 3; i++)
            storage[i] = shape->triangle.v[i];
        *out = (cq_proxy){storage, 3, 0};
        return CQ_OK;
    case CQ_CONVEX: {
        const cq_hull *h = shape->convex.hull;
        if (!h || h->vertex_count < 1)
            return CQ_EUNSUPPORTED;
        *out = (cq_proxy){h->vertices, h->vertex_count, h->radius};
        return CQ_OK;
    }
    case CQ_MESH:
    case CQ_PLANE:
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return CQ_EUNSUPPORTED;
}
