/* Typed access for the decoders through the value view (cqp/value.h), the
 * same for a jansson tree and a MessagePack body: objects read in one pass
 * into a field table, numbers checked for type, finiteness and magnitude,
 * integers, booleans, arrays and their limits, and the field helpers that
 * enter a member, decode it and leave (API.md sections 1 and 3). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "decode_internal.h"

size_t cqp__limit(int lim, size_t hard)
{
    return lim > 0 && (size_t)lim < hard ? (size_t)lim : hard;
}

/* The index of key[0..len) in names, or -1. */
static int field_index(const char *const *names, const char *key, size_t len)
{
    for (int k = 0; names[k]; k++)
        if (cqp_value_key_is(key, len, names[k]))
            return k;
    return -1;
}

/* An unknown or repeated key, at its own pointer. */
static int member_fail(cqp_decoder *d, const char *key, size_t len, bool repeated, const char *what)
{
    int mark = cqp__push_keyn(d, key, len);
    if (repeated)
        cqp__fail(d, CQP_P_BAD_VALUE, "is a duplicate key (each key may appear once)");
    else
        cqp__fail(d, CQP_P_UNKNOWN_FIELD, "is not a field of %s", what);
    cqp__pop(d, mark);
    return -1;
}

/* One pass into a table: a MessagePack map is read front to back, so
 * looking each field up in it would walk it once per field (and skip
 * every value before the key); one pass, then lookups in this small
 * table, walk it once. */
int cqp__object(cqp_decoder *d, cqp_value v, const char *const *names, const char *what, cqpd_fields *f)
{
    f->names = names;
    for (int k = 0; names[k]; k++)
        f->v[k] = cqp_value_absent();
    if (!cqp_value_present(v))
        return 0;
    if (cqp_value_type(v) != CQP_V_OBJECT)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be an object");
    cqp_iter it;
    const char *key;
    size_t len;
    cqp_value x;
    cqp_value_iter_init(&it, v);
    while (cqp_value_next_member(&it, &key, &len, &x)) {
        int k = field_index(names, key, len);
        if (k < 0 || cqp_value_present(f->v[k]))
            return member_fail(d, key, len, k >= 0, what);
        f->v[k] = x;
    }
    return 0;
}

cqp_value cqp__get(const cqpd_fields *f, const char *key)
{
    /* Callers pass the same literal as the field list, which the compiler
     * usually merges: the pointer test mostly spares the strcmp. */
    for (int k = 0; f->names[k]; k++)
        if (f->names[k] == key)
            return f->v[k];
    for (int k = 0; f->names[k]; k++)
        if (strcmp(f->names[k], key) == 0)
            return f->v[k];
    return cqp_value_absent();
}

int cqp__enter(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, cqp_value *v, int *mark)
{
    cqp_value x = cqp__get(f, key);
    if (!cqp_value_present(x)) {
        if (required)
            cqp__missing(d, key);
        return required ? -1 : 0;
    }
    *mark = cqp__push_key(d, key);
    *v = x;
    return 1;
}

/* What is wrong with number x (NULL: nothing): it must be finite (JSON
 * cannot spell NaN or Inf, but MessagePack floats can), and within +-1e50
 * unless any magnitude will do. Queries square and multiply coordinates
 * (a cross product's squared length is a fourth power, a swept box's a
 * product of velocity, time and size), and every such product must stay
 * a finite double: 1e50 keeps sixth powers finite while leaving room for
 * any real scene (and for float's maximum, 3.4e38, as a "no limit" ray
 * length). */
static const char *number_fault(double x, bool any_magnitude)
{
    if (!isfinite(x))
        return "must be a finite number";
    if (!any_magnitude && fabs(x) > CQPD_NUMBER_MAX)
        return "must be within -1e50..1e50";
    return NULL;
}

static int number_of(cqp_decoder *d, cqp_value v, bool any_magnitude, double *out)
{
    if (!cqp_value_is_number(v))
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be a number");
    double x = cqp_value_number(v);
    const char *fault = number_fault(x, any_magnitude);
    if (fault)
        return cqp__fail(d, CQP_P_BAD_VALUE, "%s", fault);
    *out = x;
    return 0;
}

int cqp__finite(cqp_decoder *d, cqp_value v, double *out) { return number_of(d, v, true, out); }

int cqp__number(cqp_decoder *d, cqp_value v, double *out) { return number_of(d, v, false, out); }

int cqp__nonneg(cqp_decoder *d, cqp_value v, double *out)
{
    double x = 0;
    if (cqp__number(d, v, &x))
        return -1;
    if (x < 0)
        return cqp__fail(d, CQP_P_BAD_VALUE, "must be >= 0");
    *out = x;
    return 0;
}

int cqp__integer(cqp_decoder *d, cqp_value v, int64_t lo, int64_t hi, int64_t *out)
{
    if (cqp_value_type(v) != CQP_V_INT)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be an integer");
    int64_t x = cqp_value_int(v);
    if (x < lo)
        return cqp__fail(d, CQP_P_BAD_VALUE, "must be >= %" PRId64, lo);
    if (x > hi)
        return cqp__fail(d, CQP_P_BAD_VALUE, "must be <= %" PRId64, hi);
    *out = x;
    return 0;
}

int cqp__uint32(cqp_decoder *d, cqp_value v, uint32_t *out)
{
    int64_t x = 0;
    if (cqp__integer(d, v, 0, UINT32_MAX, &x))
        return -1;
    *out = (uint32_t)x;
    return 0;
}

int cqp__bool(cqp_decoder *d, cqp_value v, bool *out)
{
    if (cqp_value_type(v) != CQP_V_BOOL)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be true or false");
    *out = cqp_value_bool(v);
    return 0;
}

int cqp__array(cqp_decoder *d, cqp_value v, size_t *n)
{
    if (cqp_value_type(v) != CQP_V_ARRAY)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be an array");
    *n = cqp_value_size(v);
    return 0;
}

int cqp__array_limited(cqp_decoder *d, cqp_value v, bool nonempty, size_t max, const char *noun, size_t *n)
{
    if (cqp__array(d, v, n))
        return -1;
    if (*n > max)
        return cqp__fail(d, CQP_P_OVER_LIMIT, "has %zu %s; the limit is %zu", *n, noun, max);
    if (nonempty && *n == 0)
        return cqp__fail(d, CQP_P_BAD_VALUE, "must not be empty");
    return 0;
}

int cqp__numbers(cqp_decoder *d, cqp_value a, bool any_magnitude, double *out, size_t n)
{
    /* Numbers are most of a large body: read in one call, checked as
     * doubles, with the path pushed only for a bad one. */
    size_t got = cqp_value_numbers(a, out, n);
    for (size_t k = 0; k < n; k++) {
        const char *fault = k < got ? number_fault(out[k], any_magnitude) : "must be a number";
        if (!fault)
            continue;
        int mark = cqp__push_index(d, k);
        cqp__fail(d, k < got ? CQP_P_BAD_VALUE : CQP_P_BAD_TYPE, "%s", fault);
        cqp__pop(d, mark);
        return -1;
    }
    return 0;
}

static int vec3_of(cqp_decoder *d, cqp_value v, bool any_magnitude, cq_vec3 *out)
{
    if (cqp_value_type(v) != CQP_V_ARRAY)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be an array of 3 numbers");
    size_t n = cqp_value_size(v);
    if (n != 3)
        return cqp__fail(d, CQP_P_BAD_VALUE, "must have 3 numbers, not %zu", n);
    double c[3];
    if (cqp__numbers(d, v, any_magnitude, c, 3))
        return -1;
    *out = cq_v3(c[0], c[1], c[2]);
    return 0;
}

int cqp_decode_vec3(cqp_decoder *d, cqp_value v, cq_vec3 *out) { return vec3_of(d, v, false, out); }

int cqp__finite_vec3(cqp_decoder *d, cqp_value v, cq_vec3 *out) { return vec3_of(d, v, true, out); }


static int leaf_number(cqp_decoder *d, cqp_value v, void *out) { return cqp__number(d, v, out); }
static int leaf_nonneg(cqp_decoder *d, cqp_value v, void *out) { return cqp__nonneg(d, v, out); }
static int leaf_vec3(cqp_decoder *d, cqp_value v, void *out) { return cqp_decode_vec3(d, v, out); }
static int leaf_uint32(cqp_decoder *d, cqp_value v, void *out) { return cqp__uint32(d, v, out); }
static int leaf_bool(cqp_decoder *d, cqp_value v, void *out) { return cqp__bool(d, v, out); }
static int leaf_id(cqp_decoder *d, cqp_value v, void *out) { return cqp_decode_id(d, v, out); }
static int leaf_pose(cqp_decoder *d, cqp_value v, void *out) { return cqp_decode_pose(d, v, out); }

int cqp__leaf(cqp_decoder *d, const char *key, cqpd_leaf_fn leaf, cqp_value v, void *out)
{
    if (leaf(d, v, out) == 0)
        return 0;
    int mark = cqp__push_key(d, key);
    leaf(d, v, out);
    cqp__pop(d, mark);
    return -1;
}

/* f's member key through leaf: 1 present, 0 absent, -1 failed. */
static int leaf_field(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, cqpd_leaf_fn leaf,
                      void *out)
{
    cqp_value v = cqp__get(f, key);
    if (!cqp_value_present(v)) {
        if (required)
            cqp__missing(d, key);
        return required ? -1 : 0;
    }
    return cqp__leaf(d, key, leaf, v, out) ? -1 : 1;
}

int cqp__field_number(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, double *out)
{
    return leaf_field(d, f, key, required, leaf_number, out);
}

int cqp__field_nonneg(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, double *out)
{
    return leaf_field(d, f, key, required, leaf_nonneg, out);
}

int cqp__field_vec3(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, cq_vec3 *out)
{
    return leaf_field(d, f, key, required, leaf_vec3, out);
}

int cqp__field_uint32(cqp_decoder *d, const cqpd_fields *f, const char *key, uint32_t *out)
{
    return leaf_field(d, f, key, false, leaf_uint32, out);
}

int cqp__field_bool(cqp_decoder *d, const cqpd_fields *f, const char *key, bool *out)
{
    return leaf_field(d, f, key, false, leaf_bool, out);
}

int cqp__field_integer(cqp_decoder *d, const cqpd_fields *f, const char *key, int64_t lo, int64_t hi,
                       int64_t *out)
{
    cqp_value v;
    int mark;
    int in = cqp__enter(d, f, key, false, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqp__integer(d, v, lo, hi, out);
    cqp__pop(d, mark);
    return rc ? -1 : 1;
}

int cqp__field_id(cqp_decoder *d, const cqpd_fields *f, const char *key, char out[CQ_WORLD_ID_MAX + 1])
{
    return leaf_field(d, f, key, true, leaf_id, out);
}

int cqp__field_pose(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, cq_xform *out)
{
    int in = leaf_field(d, f, key, required, leaf_pose, out);
    if (in == 0)
        *out = cq_xform_identity();
    return in;
}

/* Not a leaf: a shape may build a hull or mesh, which may fail for memory
 * once and not twice. */
int cqp__field_shape(cqp_decoder *d, const cqpd_fields *f, const char *key, cqp_shape *out)
{
    cqp_value v;
    int mark;
    int in = cqp__enter(d, f, key, true, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqp_decode_shape(d, v, out);
    cqp__pop(d, mark);
    return rc ? -1 : 1;
}
