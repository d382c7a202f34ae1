/* Shapes and poses from a request value (API.md section 1). Types and
 * fields are checked here; sizes, finiteness and unit normals by
 * cq_shape_validate, rotations by cq_pose_from_*, whose faults become
 * pointers below the shape or pose. Convex hulls and meshes are built here
 * (by the core's allocator: they outlive the request) and owned by the
 * cqp_shape until released or handed over. */
#include <stdio.h>
#include <string.h>

#include "cq/hull.h"
#include "cq/mesh.h"
#include "cqp/alloc.h"
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

/* A type's wire name is the core's (cq_shape_type_name); the table's order
 * is the order the "must be one of" detail lists them in. */
typedef struct shape_kind {
    cq_shape_type type;
    const char *what; /* for "is not a field of ..." */
    const char *const *fields;
} shape_kind;

CQPD_FIELD_LIST(sphere_fields, "type", "radius");
CQPD_FIELD_LIST(capsule_fields, "type", "radius", "half_height");
CQPD_FIELD_LIST(box_fields, "type", "half_extents");
CQPD_FIELD_LIST(convex_fields, "type", "points", "radius");
CQPD_FIELD_LIST(triangle_fields, "type", "vertices");
CQPD_FIELD_LIST(plane_fields, "type", "normal", "offset");
CQPD_FIELD_LIST(mesh_fields, "type", "vertices", "triangles");

static const shape_kind kinds[] = {
    {CQ_SPHERE, "a sphere", sphere_fields},
    {CQ_CAPSULE, "a capsule", capsule_fields},
    {CQ_BOX, "a box", box_fields},
    {CQ_CONVEX, "a convex shape", convex_fields},
    {CQ_TRIANGLE, "a triangle", triangle_fields},
    {CQ_PLANE, "a plane", plane_fields},
    {CQ_MESH, "a mesh", mesh_fields},
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

/* The kind named by string t (its bytes: a NUL inside names no kind). */
static const shape_kind *kind_named(cqp_value t)
{
    size_t len;
    const char *s = cqp_value_string(t, &len);
    for (size_t k = 0; k < KIND_COUNT; k++)
        if (cqp_value_key_is(s, len, cq_shape_type_name(kinds[k].type)))
            return &kinds[k];
    return NULL;
}

/* "sphere, capsule, ...": every kind's name, in the table's order. */
static const char *kind_names(char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t k = 0; k < KIND_COUNT && n < size; k++)
        n += (size_t)snprintf(out + n, size - n, "%s%s", k ? ", " : "", cq_shape_type_name(kinds[k].type));
    return out;
}

/* The kind of shape object v. Its "type" is looked up alone, before the
 * one pass over the members, since the type decides which fields belong. */
static const shape_kind *shape_kind_of(cqp_decoder *d, cqp_value v)
{
    cqp_value t = cqp_value_get(v, "type");
    if (!cqp_value_present(t)) {
        cqp__missing(d, "type");
        return NULL;
    }
    int mark = cqp__push_key(d, "type");
    const shape_kind *found = NULL;
    char names[96];
    if (cqp_value_type(t) != CQP_V_STRING)
        cqp__fail(d, CQP_P_BAD_TYPE, "must be a string");
    else if (!(found = kind_named(t)))
        cqp__fail(d, CQP_P_BAD_VALUE, "must be one of %s", kind_names(names, sizeof names));
    cqp__pop(d, mark);
    return found;
}

/* An array of exactly n items at the current path (noun for the detail). */
static int exact_array(cqp_decoder *d, cqp_value v, size_t n, const char *noun)
{
    if (cqp_value_type(v) != CQP_V_ARRAY)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be an array of %zu %s", n, noun);
    size_t have = cqp_value_size(v);
    if (have != n)
        return cqp__fail(d, CQP_P_BAD_VALUE, "must have %zu %s, not %zu", n, noun, have);
    return 0;
}

/* The items of array v (at the current path, its size checked) as points. */
static int decode_points(cqp_decoder *d, cqp_value v, cq_vec3 *out)
{
    cqp_iter it;
    cqp_value x;
    size_t i = 0;
    cqp_value_iter_init(&it, v);
    for (; cqp_value_next(&it, &x); i++) {
        int mark = cqp__push_index(d, i);
        int rc = cqp_decode_vec3(d, x, &out[i]);
        cqp__pop(d, mark);
        if (rc)
            return -1;
    }
    return 0;
}

static int decode_triangle(cqp_decoder *d, const cqpd_fields *f, cq_shape *s)
{
    cqp_value a;
    int mark;
    if (cqp__enter(d, f, "vertices", true, &a, &mark) < 0)
        return -1;
    int rc = exact_array(d, a, 3, "vertices") || decode_points(d, a, s->triangle.v) ? -1 : 0;
    cqp__pop(d, mark);
    return rc;
}

/* The core's failure to build a hull or mesh from checked input. */
static int build_failed(cqp_decoder *d, int status)
{
    if (status == CQ_ENO_MEMORY)
        return cqp__no_memory(d);
    return cqp__fail(d, CQP_P_BAD_VALUE, "is invalid: %s", cq_strerror(status));
}

static int decode_convex(cqp_decoder *d, const cqpd_fields *f, cqp_shape *out)
{
    cq_vec3 points[CQ_HULL_MAX_POINTS];
    size_t max = cqp__limit(d->limits ? d->limits->hull_points : 0, CQ_HULL_MAX_POINTS);
    cqp_value a;
    int mark;
    size_t n;
    if (cqp__enter(d, f, "points", true, &a, &mark) < 0)
        return -1;
    int rc = cqp__array_limited(d, a, true, max, "points", &n) || decode_points(d, a, points) ? -1 : 0;
    cqp__pop(d, mark);
    double radius = 0;
    if (rc || cqp__field_nonneg(d, f, "radius", false, &radius) < 0)
        return -1;
    int status = cq_hull_build(points, (int)n, radius, &out->hull);
    if (status != CQ_OK) {
        mark = cqp__push_key(d, "points");
        build_failed(d, status);
        cqp__pop(d, mark);
        return -1;
    }
    out->shape.convex.hull = out->hull;
    return 0;
}

/* Triangle t's three indices (array item, size checked) below nv. */
static int decode_index_triple(cqp_decoder *d, cqp_value item, size_t nv, int tri[3])
{
    cqp_iter it;
    cqp_value x;
    int rc = 0;
    cqp_value_iter_init(&it, item);
    for (size_t k = 0; rc == 0 && cqp_value_next(&it, &x); k++) {
        int mark = cqp__push_index(d, k);
        if (cqp_value_type(x) != CQP_V_INT)
            rc = cqp__fail(d, CQP_P_BAD_TYPE, "must be an integer");
        else if (cqp_value_int(x) < 0 || (uint64_t)cqp_value_int(x) >= nv)
            rc = cqp__fail(d, CQP_P_BAD_VALUE, "must be a vertex index from 0 to %zu", nv - 1);
        else
            tri[k] = (int)cqp_value_int(x);
        cqp__pop(d, mark);
    }
    return rc;
}

static int decode_indices(cqp_decoder *d, cqp_value a, size_t nv, int (*tri)[3])
{
    cqp_iter it;
    cqp_value item;
    size_t t = 0;
    cqp_value_iter_init(&it, a);
    for (; cqp_value_next(&it, &item); t++) {
        int mark = cqp__push_index(d, t);
        int rc = exact_array(d, item, 3, "vertex indices") || decode_index_triple(d, item, nv, tri[t]);
        cqp__pop(d, mark);
        if (rc)
            return -1;
    }
    return 0;
}

/* f's "vertices": at most max points, into a new block (request memory,
 * cqp_calloc: the core copies them into its mesh). */
static int mesh_vertices(cqp_decoder *d, const cqpd_fields *f, size_t max, cq_vec3 **out, size_t *n)
{
    cqp_value a;
    int mark;
    if (cqp__enter(d, f, "vertices", true, &a, &mark) < 0)
        return -1;
    int rc = cqp__array_limited(d, a, true, max, "vertices", n);
    if (rc == 0 && !(*out = cqp_calloc(*n, sizeof **out)))
        rc = cqp__no_memory(d);
    if (rc == 0)
        rc = decode_points(d, a, *out);
    cqp__pop(d, mark);
    return rc;
}

/* f's "triangles": at most max index triples below nv, into a new block;
 * the path stays at "triangles" (*mark to pop), where a failed build is told. */
static int mesh_triangles(cqp_decoder *d, const cqpd_fields *f, size_t max, size_t nv, int (**out)[3], size_t *n,
                          int *mark)
{
    cqp_value a;
    if (cqp__enter(d, f, "triangles", true, &a, mark) < 0)
        return -1;
    int rc = cqp__array_limited(d, a, true, max, "triangles", n);
    if (rc == 0 && !(*out = cqp_calloc(*n, sizeof **out)))
        rc = cqp__no_memory(d);
    if (rc == 0)
        rc = decode_indices(d, a, nv, *out);
    if (rc)
        cqp__pop(d, *mark);
    return rc;
}

static int decode_mesh(cqp_decoder *d, const cqpd_fields *f, cqp_shape *out)
{
    size_t max = cqp__limit(d->limits ? d->limits->mesh_triangles : 0, CQ_MESH_MAX_ITEMS);
    size_t nv = 0, nt = 0;
    cq_vec3 *vertices = NULL;
    int (*tri)[3] = NULL;
    int mark;
    int rc = mesh_vertices(d, f, max, &vertices, &nv) || mesh_triangles(d, f, max, nv, &tri, &nt, &mark) ? -1 : 0;
    if (rc == 0) {
        int status = cq_mesh_build(vertices, (int)nv, (const int(*)[3])tri, (int)nt, &out->mesh);
        if (status != CQ_OK)
            rc = build_failed(d, status);
        else
            out->shape.mesh.mesh = out->mesh;
        cqp__pop(d, mark);
    }
    cqp_free(vertices);
    cqp_free(tri);
    return rc;
}

/* The fields of a kind whose values are plain numbers and vectors; their
 * ranges are cq_shape_validate's to check. */
static int decode_fields(cqp_decoder *d, const cqpd_fields *f, cqp_shape *out)
{
    cq_shape *s = &out->shape;
    switch (s->type) {
    case CQ_SPHERE:
        return cqp__field_number(d, f, "radius", true, &s->sphere.radius) < 0 ? -1 : 0;
    case CQ_CAPSULE:
        return cqp__field_number(d, f, "radius", true, &s->capsule.radius) < 0 ||
                       cqp__field_number(d, f, "half_height", true, &s->capsule.half_height) < 0
                   ? -1
                   : 0;
    case CQ_BOX:
        return cqp__field_vec3(d, f, "half_extents", true, &s->box.half) < 0 ? -1 : 0;
    case CQ_TRIANGLE:
        return decode_triangle(d, f, s);
    case CQ_PLANE:
        return cqp__field_vec3(d, f, "normal", true, &s->plane.normal) < 0 ||
                       cqp__field_number(d, f, "offset", true, &s->plane.offset) < 0
                   ? -1
                   : 0;
    case CQ_CONVEX:
        return decode_convex(d, f, out);
    case CQ_MESH:
        return decode_mesh(d, f, out);
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return cqp__fail(d, CQP_P_INTERNAL, "has a shape type without a decoder");
}

int cqp_decode_shape(cqp_decoder *d, cqp_value v, cqp_shape *out)
{
    cqpd_fields f;
    memset(out, 0, sizeof *out);
    if (cqp_value_type(v) != CQP_V_OBJECT)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be an object");
    const shape_kind *kind = shape_kind_of(d, v);
    if (!kind || cqp__object(d, v, kind->fields, kind->what, &f))
        return -1;
    out->shape.type = kind->type;
    if (decode_fields(d, &f, out)) {
        cqp_shape_release(out);
        return -1;
    }
    cq_fault fault = cq_shape_validate(&out->shape);
    if (fault.status != CQ_OK) {
        cqp_shape_release(out);
        return cqp__fault(d, fault);
    }
    return 0;
}

CQPD_FIELD_LIST(pose_fields, "position", "rotation", "axes");

/* A leaf (cqp__leaf): [x, y, z, w] into the cq_quat at out. */
static int decode_quat(cqp_decoder *d, cqp_value v, void *out)
{
    double c[4];
    if (exact_array(d, v, 4, "numbers (x, y, z, w)") || cqp__numbers(d, v, false, c, 4))
        return -1;
    *(cq_quat *)out = (cq_quat){c[0], c[1], c[2], c[3]};
    return 0;
}

/* A leaf: three axes into the cq_vec3[3] at out. */
static int decode_axes(cqp_decoder *d, cqp_value v, void *out)
{
    return exact_array(d, v, 3, "axes") || decode_points(d, v, out) ? -1 : 0;
}

/* The rotation of a pose given as three axes (the matrix's columns). */
static int pose_from_axes(cqp_decoder *d, cqp_value axes, cq_vec3 position, cq_xform *out)
{
    cq_vec3 ax[3];
    if (cqp__leaf(d, "axes", decode_axes, axes, ax))
        return -1;
    cq_fault f = cq_pose_from_axes(position, ax, out);
    return f.status != CQ_OK ? cqp__fault(d, f) : 0;
}

/* The rotation of a pose given as a quaternion, absent the identity. */
static int pose_from_quat(cqp_decoder *d, cqp_value rotation, cq_vec3 position, cq_xform *out)
{
    cq_quat q = {0, 0, 0, 1};
    if (cqp_value_present(rotation) && cqp__leaf(d, "rotation", decode_quat, rotation, &q))
        return -1;
    cq_fault f = cq_pose_from_quat(position, q, out);
    return f.status != CQ_OK ? cqp__fault(d, f) : 0;
}

int cqp_decode_pose(cqp_decoder *d, cqp_value v, cq_xform *out)
{
    cqpd_fields f;
    cqp_vtype t = cqp_value_type(v);
    if (t == CQP_V_ABSENT || t == CQP_V_NULL) {
        *out = cq_xform_identity();
        return 0;
    }
    if (cqp__object(d, v, pose_fields, "a pose", &f))
        return -1;
    cq_vec3 position = cq_v3(0, 0, 0);
    if (cqp__field_vec3(d, &f, "position", false, &position) < 0)
        return -1;
    cqp_value rotation = cqp__get(&f, "rotation");
    cqp_value axes = cqp__get(&f, "axes");
    if (cqp_value_present(rotation) && cqp_value_present(axes))
        return cqp__fail(d, CQP_P_BAD_VALUE, "must give rotation or axes, not both");
    if (cqp_value_present(axes))
        return pose_from_axes(d, axes, position, out);
    return pose_from_quat(d, rotation, position, out);
}
