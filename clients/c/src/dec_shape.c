/* A stored shape's reply (GET .../shapes/{id}): the pose comes back as
 * axes, a convex's hull and a mesh's arrays in arrays the library owns. */
#include "cqc_int.h"

static const char *const type_names[] = {"sphere", "capsule", "box", "convex", "triangle", "plane", "mesh"};

/* A list of [x, y, z] into a new array of 3 doubles each. */
static bool points(cqc_rd *r, const double **out, size_t *count)
{
    uint32_t n;
    if (!cqc__rd_arr(r, &n) || *out)
        return cqc__fail(r);
    double *p = n ? cqc__realloc(NULL, (size_t)n * 3 * sizeof *p) : NULL;
    if (n && !p)
        return (r->oom = true) && cqc__fail(r);
    *out = p;
    *count = n;
    for (uint32_t i = 0; i < n; i++)
        if (!cqc__rd_vec(r, p + 3 * i, 3))
            return false;
    return true;
}

static bool triangles(cqc_rd *r, cqc_shape *s)
{
    uint32_t n, k;
    if (!cqc__rd_arr(r, &n) || s->triangles)
        return cqc__fail(r);
    uint32_t *t = n ? cqc__realloc(NULL, (size_t)n * 3 * sizeof *t) : NULL;
    if (n && !t)
        return (r->oom = true) && cqc__fail(r);
    s->triangles = t;
    s->triangle_count = n;
    for (uint32_t i = 0; i < 3 * n; i += 3) {
        if (!cqc__rd_arr(r, &k) || k != 3)
            return cqc__fail(r);
        for (int j = 0; j < 3; j++) {
            uint64_t v;
            if (!cqc__rd_uint(r, &v) || v > UINT32_MAX)
                return cqc__fail(r);
            t[i + (uint32_t)j] = (uint32_t)v;
        }
    }
    return true;
}

static bool type_member(cqc_rd *r, cqc_shape *s)
{
    const char *k;
    uint32_t kn;
    if (!cqc__rd_str(r, &k, &kn))
        return false;
    for (int t = 0; t <= CQC_MESH; t++)
        if (kn == strlen(type_names[t]) && memcmp(k, type_names[t], kn) == 0) {
            s->type = (cqc_shape_type)t;
            return true;
        }
    return cqc__fail(r);
}

static bool shape_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_shape *s = out;
    if (CQC_KEY(k, kn, "type"))
        return type_member(r, s);
    if (CQC_KEY(k, kn, "radius"))
        return cqc__rd_num(r, &s->radius);
    if (CQC_KEY(k, kn, "half_height"))
        return cqc__rd_num(r, &s->half_height);
    if (CQC_KEY(k, kn, "half_extents"))
        return cqc__rd_vec(r, s->half_extents, 3);
    if (CQC_KEY(k, kn, "normal"))
        return cqc__rd_vec(r, s->normal, 3);
    if (CQC_KEY(k, kn, "offset"))
        return cqc__rd_num(r, &s->offset);
    if (CQC_KEY(k, kn, "points") || CQC_KEY(k, kn, "vertices"))
        return points(r, &s->points, &s->point_count);
    if (CQC_KEY(k, kn, "triangles"))
        return triangles(r, s);
    return cqc__rd_skip(r);
}

static bool axes(cqc_rd *r, double *m)
{
    uint32_t n;
    if (!cqc__rd_arr(r, &n) || n != 3)
        return cqc__fail(r);
    for (int i = 0; i < 3; i++)
        if (!cqc__rd_vec(r, m + 3 * i, 3))
            return false;
    return true;
}

static bool pose_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_stored *s = out;
    if (CQC_KEY(k, kn, "position"))
        return cqc__rd_vec(r, s->position, 3);
    if (CQC_KEY(k, kn, "axes"))
        return axes(r, s->axes);
    return cqc__rd_skip(r);
}

static bool u32(cqc_rd *r, uint32_t *out)
{
    uint64_t v;
    if (!cqc__rd_uint(r, &v) || v > UINT32_MAX)
        return cqc__fail(r);
    *out = (uint32_t)v;
    return true;
}

static bool stored_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_stored *s = out;
    if (CQC_KEY(k, kn, "id"))
        return cqc__rd_strcpy(r, s->id, sizeof s->id);
    if (CQC_KEY(k, kn, "shape"))
        return cqc__rd_each(r, shape_member, &s->shape);
    if (CQC_KEY(k, kn, "pose"))
        return cqc__rd_each(r, pose_member, s);
    if (CQC_KEY(k, kn, "velocity"))
        return cqc__rd_vec(r, s->velocity, 3);
    if (CQC_KEY(k, kn, "layer"))
        return u32(r, &s->layer);
    if (CQC_KEY(k, kn, "mask"))
        return u32(r, &s->mask);
    return cqc__rd_skip(r);
}

void cqc_stored_release(cqc_stored *x)
{
    cqc__free((void *)x->shape.points);
    cqc__free((void *)x->shape.triangles);
    x->shape.points = NULL;
    x->shape.triangles = NULL;
    x->shape.point_count = x->shape.triangle_count = 0;
}

/* A triangle's three vertices go to its fixed array, not the heap. */
bool cqc__dec_stored(cqc_rd *r, cqc_stored *s)
{
    *s = (cqc_stored){.axes = {1, 0, 0, 0, 1, 0, 0, 0, 1}};
    bool ok = cqc__rd_each(r, stored_member, s);
    if (ok && s->shape.type == CQC_TRIANGLE) {
        ok = s->shape.point_count == 3;
        if (ok)
            memcpy(s->shape.vertices, s->shape.points, sizeof s->shape.vertices);
        cqc__free((void *)s->shape.points);
        s->shape.points = NULL;
        s->shape.point_count = 0;
    }
    if (!ok)
        cqc_stored_release(s);
    return ok;
}
