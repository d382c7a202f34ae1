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

cqp_vtype cqpv_type(cqp_value v)
{
    if (!v.ref)
        return CQP_V_ABSENT;
    return v.format == CQP_MSGPACK ? cqpv_mp_type(v.ref) : type_of_json(v.ref);
}

bool cqpv_bool(cqp_value v)
{
    if (v.format == CQP_MSGPACK)
        return cqpv_mp_bool(v.ref);
    return json_is_true((const json_t *)v.ref);
}

int64_t cqpv_int(cqp_value v)
{
    if (v.format == CQP_MSGPACK)
        return cqpv_mp_int(v.ref);
    return json_integer_value(v.ref);
}

double cqpv_number(cqp_value v)
{
    if (v.format == CQP_MSGPACK)
        return cqpv_mp_number(v.ref);
    return json_number_value(v.ref);
}

const char *cqpv_string(cqp_value v, size_t *len)
{
    if (v.format == CQP_MSGPACK)
        return cqpv_mp_string(v.ref, len);
    *len = json_string_length(v.ref);
    return json_string_value(v.ref);
}

size_t cqpv_size(cqp_value v)
{
    if (!v.ref)
        return 0;
    if (v.format == CQP_MSGPACK)
        return cqpv_mp_size(v.ref);
    if (json_is_array((const json_t *)v.ref))
        return json_array_size(v.ref);
    return json_is_object((const json_t *)v.ref) ? json_object_size(v.ref) : 0;
}

void cqpv_iter_init(cqp_iter *it, cqp_value v)
{
    *it = (cqp_iter){.of = v, .count = cqpv_size(v)};
    if (it->count == 0)
        return;
    if (v.format == CQP_MSGPACK)
        it->at = cqpv_mp_first(v.ref);
    else if (json_is_object((const json_t *)v.ref))
        it->json_iter = json_object_iter((json_t *)v.ref);
}

/* A MessagePack iteration steps past an element only when the next one is
 * asked for: it->at is the element last returned (a member's value), or
 * before the first call the first element (key). Skipping is a walk of the
 * whole value, and the last element of an array or map (a body's one list
 * of 10,000 items, say) is then never walked just to find its end. */
bool cqpv_next(cqp_iter *it, cqp_value *elem)
{
    if (it->index >= it->count)
        return false;
    if (it->of.format == CQP_MSGPACK) {
        if (it->index > 0)
            it->at = cqpv_mp_skip(it->at);
        *elem = cqp_value_mp(it->at);
    } else {
        *elem = cqp_value_json(json_array_get(it->of.ref, it->index));
    }
    it->index++;
    return true;
}

bool cqpv_next_member(cqp_iter *it, const char **key, size_t *key_len, cqp_value *value)
{
    if (it->index >= it->count)
        return false;
    if (it->of.format == CQP_MSGPACK) {
        if (it->index > 0)
            it->at = cqpv_mp_skip(it->at);
        /* A key is a string (cqp_mp_check saw to it): its value follows
         * its bytes. */
        *key = cqpv_mp_string(it->at, key_len);
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

cqp_value cqpv_get(cqp_value obj, const char *key)
{
    if (cqpv_type(obj) != CQP_V_OBJECT)
        return cqp_value_absent();
    if (obj.format == CQP_JSON)
        return cqp_value_json(json_object_get(obj.ref, key));
    cqp_iter it;
    const char *k;
    size_t n;
    cqp_value v;
    cqpv_iter_init(&it, obj);
    while (cqpv_next_member(&it, &k, &n, &v))
        if (cqpv_key_is(k, n, key))
            return v;
    return cqp_value_absent();
}
