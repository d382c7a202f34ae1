/* The MessagePack backing of the value view (value_internal.h), on
 * msgpuck's decoders. Every p lies inside bytes cqp_mp_check accepted, so
 * nothing here checks bounds, and bin, ext and 0xc1 never reach here. A
 * call made on the wrong kind of value answers as jansson does for JSON:
 * false, 0, NULL. */
#include <msgpuck.h>

#include "value_internal.h"

/* msgpuck's types as the view's (MP_BIN and MP_EXT: refused by the check). */
static const cqp_vtype vtype_of[] = {
    [MP_NIL] = CQP_V_NULL,     [MP_UINT] = CQP_V_INT,  [MP_INT] = CQP_V_INT,
    [MP_STR] = CQP_V_STRING,   [MP_BIN] = CQP_V_ABSENT, [MP_ARRAY] = CQP_V_ARRAY,
    [MP_MAP] = CQP_V_OBJECT,   [MP_BOOL] = CQP_V_BOOL, [MP_FLOAT] = CQP_V_REAL,
    [MP_DOUBLE] = CQP_V_REAL,  [MP_EXT] = CQP_V_ABSENT,
};

cqp_vtype cqp__mp_type(const char *p) { return vtype_of[mp_typeof(*p)]; }

bool cqp__mp_bool(const char *p) { return mp_typeof(*p) == MP_BOOL && mp_decode_bool(&p); }

int64_t cqp__mp_int(const char *p)
{
    switch (mp_typeof(*p)) {
    case MP_UINT: {
        // Above INT64_MAX clamps: every range check then refuses it as too large.
        uint64_t u = mp_decode_uint(&p);
        return u > INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    case MP_INT: return mp_decode_int(&p);
    case MP_NIL: case MP_STR: case MP_BIN: case MP_ARRAY: case MP_MAP: case MP_BOOL: case MP_FLOAT:
    case MP_DOUBLE: case MP_EXT: break; // no integer
    }
    return 0;
}

double cqp__mp_number(const char *p)
{
    switch (mp_typeof(*p)) {
    case MP_UINT: return (double)mp_decode_uint(&p);
    case MP_INT: return (double)mp_decode_int(&p);
    // Every float32 is exactly a double, NaN and the infinities included.
    case MP_FLOAT: return (double)mp_decode_float(&p);
    case MP_DOUBLE: return mp_decode_double(&p);
    case MP_NIL: case MP_STR: case MP_BIN: case MP_ARRAY: case MP_MAP: case MP_BOOL:
    case MP_EXT: break; // no number
    }
    return 0;
}

const char *cqp__mp_string(const char *p, size_t *len)
{
    if (mp_typeof(*p) != MP_STR) {
        *len = 0;
        return NULL;
    }
    uint32_t n;
    const char *s = mp_decode_str(&p, &n);
    *len = n;
    return s;
}

size_t cqp__mp_size(const char *p)
{
    switch (mp_typeof(*p)) {
    case MP_ARRAY: return mp_decode_array(&p);
    case MP_MAP: return mp_decode_map(&p);
    case MP_NIL: case MP_UINT: case MP_INT: case MP_STR: case MP_BIN: case MP_BOOL: case MP_FLOAT: case MP_DOUBLE:
    case MP_EXT: break; // no container
    }
    return 0;
}

const char *cqp__mp_first(const char *p)
{
    if (mp_typeof(*p) == MP_ARRAY)
        mp_decode_array(&p);
    else
        mp_decode_map(&p);
    return p;
}

const char *cqp__mp_skip(const char *p)
{
    mp_next(&p);
    return p;
}
