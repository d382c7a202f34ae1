/* Shapes and poses from JSON (API.md section 1). Types and fields are
 * checked here; sizes, finiteness and unit normals by cq_shape_validate,
 * rotations by cq_pose_from_*, whose faults become pointers below the
 * shape or pose. Convex hulls and meshes are built here and owned by the
 * cqp_shape until released or handed over. */
#include <stdlib.h>
#include <string.h>

#include "cq/hull.h"
#include "cq/mesh.h"
#include "decode_internal.h"

void cqp_shape_release(cqp_shape *s)
{
    cq_hull_free(s->hull);
    cq_mesh_free(s->mesh);
    memset(s, 0, sizeof *s);
}

void cqp_shape_disown(cqp_shape *s)
{
    s->hull = NULL;
    s->mesh = NULL;
}

typedef struct shape_kind {
    const char *name;
    cq_shape_type type;
    const char *what; /* for "is not a field of ..." */
    const char *const *fields;
} shape_kind;

static const char *const sphere_fields[] = {"type", "radius", NULL};
static const char *const capsule_fields[] = {"type", "radius", "half_height", NULL};
static const char *const box_fields[] = {"type", "half_extents", NULL};
static const char *const convex_fields[] = {"type", "points", "radius", NULL};
static const char *const triangle_fields[] = {"type", "vertices", NULL};
static const char *const plane_fields[] = {"type", "normal", "offset", NULL};
static const char *const mesh_fields[] = {"type", "vertices", "triangles", NULL};

static const shape_kind kinds[] = {
    {"sphere", CQ_SPHERE, "a sphere", sphere_fields},
    {"capsule", CQ_CAPSULE, "a capsule", capsule_fields},
    {"box", CQ_BOX, "a box", box_fields},
    {"convex", CQ_CONVEX, "a convex shape", convex_fields},
    {"triangle", CQ_TRIANGLE, "a triangle", triangle_fields},
    {"plane", CQ_PLANE, "a plane", plane_fields},
    {"mesh", CQ_MESH, "a mesh", mesh_fields},
};

static const shape_kind *shape_kind_of(cqp_decoder *d, const json_t *v)
{
    const json_t *t;
    int mark;
    if (cqpd_enter(d, v, "type", true, &t, &mark) < 0)
        return NULL;
    const shape_kind *found = NULL;
    if (!json_is_string(t)) {
        cqpd_fail(d, CQP_P_BAD_TYPE, "must be a string");
    } else {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && !found; k++)
            if (strcmp(json_string_value(t), kinds[k].name) == 0)
                found = &kinds[k];
        if (!found)
            cqpd_fail(d, CQP_P_BAD_VALUE, "must be one of sphere, capsule, box, convex, triangle, plane, mesh");
    }
    cqpd_pop(d, mark);
    return found;
}

/* An array of exactly n items at the current path (noun for the detail). */
static int exact_array(cqp_decoder *d, const json_t *v, size_t n, const char *noun)
{
    size_t have;
    if (!json_is_array(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be an array of %zu %s", n, noun);
    have = json_array_size(v);
    if (have != n)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must have %zu %s, not %zu", n, noun, have);
    return 0;
}

/* The items of array v (at the current path) as points. */
static int decode_points(cqp_decoder *d, const json_t *v, cq_vec3 *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int mark = cqpd_push_index(d, i);
        int rc = cqp_decode_vec3(d, json_array_get(v, i), &out[i]);
        cqpd_pop(d, mark);
        if (rc)
            return -1;
    }
    return 0;
}

static int decode_triangle(cqp_decoder *d, const json_t *v, cq_shape *s)
{
    const json_t *a;
    int mark;
    if (cqpd_enter(d, v, "vertices", true, &a, &mark) < 0)
        return -1;
    int rc = exact_array(d, a, 3, "vertices") || decode_points(d, a, s->triangle.v, 3) ? -1 : 0;
    cqpd_pop(d, mark);
    return rc;
}

/* The core's failure to build a hull or mesh from checked input. */
static int build_failed(cqp_decoder *d, int status)
{
    if (status == CQ_ENO_MEMORY)
        return cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
    return cqpd_fail(d, CQP_P_BAD_VALUE, "is invalid: %s", cq_strerror(status));
}

static int decode_convex(cqp_decoder *d, const json_t *v, cqp_shape *out)
{
    cq_vec3 points[CQ_HULL_MAX_POINTS];
    size_t max = cqpd_limit(d->limits ? d->limits->hull_points : 0, CQ_HULL_MAX_POINTS);
    const json_t *a;
    int mark;
    size_t n;
    if (cqpd_enter(d, v, "points", true, &a, &mark) < 0)
        return -1;
    int rc = cqpd_array_limited(d, a, true, max, "points", &n) || decode_points(d, a, points, n) ? -1 : 0;
    cqpd_pop(d, mark);
    double radius = 0;
    if (rc || cqpd_field_nonneg(d, v, "radius", false, &radius) < 0)
        return -1;
    int status = cq_hull_build(points, (int)n, radius, &out->hull);
    if (status != CQ_OK) {
        mark = cqpd_push_key(d, "points");
        build_failed(d, status);
        cqpd_pop(d, mark);
        return -1;
    }
    out->shape.convex.hull = out->hull;
    return 0;
}

static int decode_indices(cqp_decoder *d, const json_t *a, size_t nt, size_t nv, int (*tri)[3])
{
    for (size_t t = 0; t < nt; t++) {
        int mark = cqpd_push_index(d, t);
        const json_t *item = json_array_get(a, t);
        int rc = exact_array(d, item, 3, "vertex indices");
        for (size_t k = 0; k < 3 && !rc; k++) {
            int inner = cqpd_push_index(d, k);
            const json_t *x = json_array_get(item, k);
            if (!json_is_integer(x))
                rc = cqpd_fail(d, CQP_P_BAD_TYPE, "must be an integer");
            else if (json_integer_value(x) < 0 || (size_t)json_integer_value(x) >= nv)
                rc = cqpd_fail(d, CQP_P_BAD_VALUE, "must be a vertex index from 0 to %zu", nv - 1);
            else
                tri[t][k] = (int)json_integer_value(x);
            cqpd_pop(d, inner);
        }
        cqpd_pop(d, mark);
        if (rc)
            return -1;
    }
    return 0;
}

static int decode_mesh(cqp_decoder *d, const json_t *v, cqp_shape *out)
{
    size_t max = cqpd_limit(d->limits ? d->limits->mesh_triangles : 0, CQ_MESH_MAX_ITEMS);
    const json_t *a;
    int mark;
    size_t nv, nt;
    cq_vec3 *vertices = NULL;
    int (*tri)[3] = NULL;
    int rc = -1;

    if (cqpd_enter(d, v, "vertices", true, &a, &mark) < 0)
        return -1;
    if (cqpd_array_limited(d, a, true, max, "vertices", &nv) == 0) {
        vertices = malloc(sizeof *vertices * nv);
        if (!vertices)
            cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
        else
            rc = decode_points(d, a, vertices, nv);
    }
    cqpd_pop(d, mark);
    if (rc)
        goto done;
    rc = -1;
    if (cqpd_enter(d, v, "triangles", true, &a, &mark) < 0)
        goto done;
    if (cqpd_array_limited(d, a, true, max, "triangles", &nt) == 0) {
        tri = malloc(sizeof *tri * nt);
        if (!tri)
            cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
        else
            rc = decode_indices(d, a, nt, nv, tri);
    }
    if (rc == 0) {
        int status = cq_mesh_build(vertices, (int)nv, (const int(*)[3])tri, (int)nt, &out->mesh);
        if (status != CQ_OK)
            rc = build_failed(d, status);
        else
            out->shape.mesh.mesh = out->mesh;
    }
    cqpd_pop(d, mark);
done:
    free(vertices);
    free(tri);
    return rc;
}

/* The fields of a kind whose values are plain numbers and vectors; their
 * ranges are cq_shape_validate's to check. */
static int decode_fields(cqp_decoder *d, const json_t *v, cqp_shape *out)
{
    cq_shape *s = &out->shape;
    switch (s->type) {
    case CQ_SPHERE:
        return cqpd_field_number(d, v, "radius", true, &s->sphere.radius) < 0 ? -1 : 0;
    case CQ_CAPSULE:
        return cqpd_field_number(d, v, "radius", true, &s->capsule.radius) < 0 ||
                       cqpd_field_number(d, v, "half_height", true, &s->capsule.half_height) < 0
                   ? -1
                   : 0;
    case CQ_BOX:
        return cqpd_field_vec3(d, v, "half_extents", true, &s->box.half) < 0 ? -1 : 0;
    case CQ_TRIANGLE:
        return decode_triangle(d, v, s);
    case CQ_PLANE:
        return cqpd_field_vec3(d, v, "normal", true, &s->plane.normal) < 0 ||
                       cqpd_field_number(d, v, "offset", true, &s->plane.offset) < 0
                   ? -1
                   : 0;
    case CQ_CONVEX:
        return decode_convex(d, v, out);
    case CQ_MESH:
        return decode_mesh(d, v, out);
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return cqpd_fail(d, CQP_P_INTERNAL, "has a shape type without a decoder");
}

int cqp_decode_shape(cqp_decoder *d, const json_t *v, cqp_shape *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be an object");
    const shape_kind *kind = shape_kind_of(d, v);
    if (!kind || cqpd_object(d, v, kind->fields, kind->what))
        return -1;
    out->shape.type = kind->type;
    if (decode_fields(d, v, out)) {
        cqp_shape_release(out);
        return -1;
    }
    cq_fault f = cq_shape_validate(&out->shape);
    if (f.status != CQ_OK) {
        cqp_shape_release(out);
        return cqpd_fault(d, f);
    }
    return 0;
}

static const char *const pose_fields[] = {"position", "rotation", "axes", NULL};

static int decode_quat(cqp_decoder *d, const json_t *v, cq_quat *q)
{
    double c[4];
    if (exact_array(d, v, 4, "numbers (x, y, z, w)"))
        return -1;
    for (size_t k = 0; k < 4; k++) {
        int mark = cqpd_push_index(d, k);
        int rc = cqpd_number(d, json_array_get(v, k), &c[k]);
        cqpd_pop(d, mark);
        if (rc)
            return -1;
    }
    *q = (cq_quat){c[0], c[1], c[2], c[3]};
    return 0;
}

int cqp_decode_pose(cqp_decoder *d, const json_t *v, cq_xform *out)
{
    if (!v || json_is_null(v)) {
        *out = cq_xform_identity();
        return 0;
    }
    if (cqpd_object(d, v, pose_fields, "a pose"))
        return -1;
    cq_vec3 position = cq_v3(0, 0, 0);
    if (cqpd_field_vec3(d, v, "position", false, &position) < 0)
        return -1;
    const json_t *rotation = json_object_get(v, "rotation");
    const json_t *axes = json_object_get(v, "axes");
    if (rotation && axes)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must give rotation or axes, not both");
    cq_fault f;
    int mark;
    if (axes) {
        cq_vec3 ax[3];
        mark = cqpd_push_key(d, "axes");
        int rc = exact_array(d, axes, 3, "axes") || decode_points(d, axes, ax, 3);
        cqpd_pop(d, mark);
        if (rc)
            return -1;
        f = cq_pose_from_axes(position, ax, out);
    } else {
        cq_quat q = {0, 0, 0, 1};
        if (rotation) {
            mark = cqpd_push_key(d, "rotation");
            int rc = decode_quat(d, rotation, &q);
            cqpd_pop(d, mark);
            if (rc)
                return -1;
        }
        f = cq_pose_from_quat(position, q, out);
    }
    return f.status != CQ_OK ? cqpd_fault(d, f) : 0;
}
