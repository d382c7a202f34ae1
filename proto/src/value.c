/* The value view's dispatch and its jansson backing (cqp/value.h); the
 * MessagePack backing is value_mp.c. */
#include <string.h>

#include "value_internal.h"

cqp_value cqp_value_json(const json_t *v) { return (cqp_value){.ref = v, .format = CQP_JSON}; }

cqp_value cqp_value_mp(const char *p) { return (cqp_value){.ref = p, .format = CQP_MSGPACK}; }

static cqp_vtype type_of_json(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return CQP_V_OBJECT;
    case JSON_ARRAY: return CQP_V_ARRAY;
    case JSON_STRING: return CQP_V_STRING;
    case JSON_INTEGER: return CQP_V_INT;
    case JSON_REAL: return CQP_V_REAL;
    case JSON_TRUE:
    case JSON_FALSE: return CQP_V_BOOL;
    case JSON_NULL: return CQP_V_NULL;
    }
    return CQP_V_ABSENT;
}

cqp_vtype cqp_value_type(cqp_value v)
{
    if (!v.ref)
        return CQP_V_ABSENT;
    return v.format == CQP_MSGPACK ? cqp__mp_type(v.ref) : type_of_json(v.ref);
}

bool cqp_value_bool(cqp_value v)
{
    if (v.format == CQP_MSGPACK)
        return cqp__mp_bool(v.ref);
    return json_is_true((const json_t *)v.ref);
}

int64_t cqp_value_int(cqp_value v)
{
    if (v.format == CQP_MSGPACK)
        return cqp__mp_int(v.ref);
    return json_integer_value(v.ref);
}

bool cqp_value_int_saturated(cqp_value v)
{
    if (v.format != CQP_MSGPACK || cqp_value_type(v) != CQP_V_INT)
        return false;
    /* Only MessagePack's uint 64 (0xcf, then 8 bytes big-endian) holds a
     * value above INT64_MAX: its top bit is set. */
    const unsigned char *p = v.ref;
    return p[0] == 0xcf && (p[1] & 0x80);
}

double cqp_value_number(cqp_value v)
{
    if (v.format == CQP_MSGPACK)
        return cqp__mp_number(v.ref);
    return json_number_value(v.ref);
}

static size_t numbers_of_mp(const char *p, double *out, size_t n)
{
    if (cqp__mp_type(p) != CQP_V_ARRAY)
        return 0;
    if (cqp__mp_size(p) < n)
        n = cqp__mp_size(p);
    p = cqp__mp_first(p);
    size_t k = 0;
    for (; k < n; k++) {
        cqp_vtype t = cqp__mp_type(p);
        if (t != CQP_V_INT && t != CQP_V_REAL)
            break;
        out[k] = cqp__mp_number(p);
        if (k + 1 < n)
            p = cqp__mp_skip(p);
    }
    return k;
}

static size_t numbers_of_json(const json_t *a, double *out, size_t n)
{
    size_t k = 0;
    for (; k < n && k < json_array_size(a); k++) {
        const json_t *x = json_array_get(a, k);
        if (!json_is_number(x))
            break;
        out[k] = json_number_value(x);
    }
    return k;
}

size_t cqp_value_numbers(cqp_value array, double *out, size_t n)
{
    if (!array.ref)
        return 0;
    if (array.format == CQP_MSGPACK)
        return numbers_of_mp(array.ref, out, n);
    return numbers_of_json(array.ref, out, n);
}

const char *cqp_value_string(cqp_value v, size_t *len)
{
    if (v.format == CQP_MSGPACK)
        return cqp__mp_string(v.ref, len);
    *len = json_string_length(v.ref);
    return json_string_value(v.ref);
}

size_t cqp_value_size(cqp_value v)
{
    if (!v.ref)
        return 0;
    if (v.format == CQP_MSGPACK)
        return cqp__mp_size(v.ref);
    if (json_is_array((const json_t *)v.ref))
        return json_array_size(v.ref);
    return json_is_object((const json_t *)v.ref) ? json_object_size(v.ref) : 0;
}

void cqp_value_iter_init(cqp_iter *it, cqp_value v)
{
    *it = (cqp_iter){.of = v, .count = cqp_value_size(v)};
    if (it->count == 0)
        return;
    if (v.format == CQP_MSGPACK)
        it->at = cqp__mp_first(v.ref);
    else if (json_is_object((const json_t *)v.ref))
        it->json_iter = json_object_iter((json_t *)v.ref);
}

/* A MessagePack iteration steps past an element only when the next one is
 * asked for: it->at is the element last returned (a member's value), or
 * before the first call the first element (key). Skipping is a walk of the
 * whole value, and the last element of an array or map (a body's one list
 * of 10,000 items, say) is then never walked just to find its end. */
bool cqp_value_next(cqp_iter *it, cqp_value *elem)
{
    if (it->index >= it->count)
        return false;
    if (it->of.format == CQP_MSGPACK) {
        if (it->index > 0)
            it->at = cqp__mp_skip(it->at);
        *elem = cqp_value_mp(it->at);
    } else {
        *elem = cqp_value_json(json_array_get(it->of.ref, it->index));
    }
    it->index++;
    return true;
}

bool cqp_value_next_member(cqp_iter *it, const char **key, size_t *key_len, cqp_value *value)
{
    if (it->index >= it->count)
        return false;
    if (it->of.format == CQP_MSGPACK) {
        if (it->index > 0)
            it->at = cqp__mp_skip(it->at);
        /* A key is a string (cqp_mp_check saw to it): its value follows
         * its bytes. */
        *key = cqp__mp_string(it->at, key_len);
        it->at = *key + *key_len;
        *value = cqp_value_mp(it->at);
    } else {
        *key = json_object_iter_key(it->json_iter);
        *key_len = json_object_iter_key_len(it->json_iter);
        *value = cqp_value_json(json_object_iter_value(it->json_iter));
        it->json_iter = json_object_iter_next((json_t *)it->of.ref, it->json_iter);
    }
    it->index++;
    return true;
}

cqp_value cqp_value_get(cqp_value obj, const char *key)
{
    if (cqp_value_type(obj) != CQP_V_OBJECT)
        return cqp_value_absent();
    if (obj.format == CQP_JSON)
        return cqp_value_json(json_object_get(obj.ref, key));
    cqp_iter it;
    const char *k;
    size_t n;
    cqp_value v;
    cqp_value_iter_init(&it, obj);
    while (cqp_value_next_member(&it, &k, &n, &v))
        if (cqp_value_key_is(k, n, key))
            return v;
    return cqp_value_absent();
}
