/* The tick's request bodies in MessagePack (msgpuck's mp_encode_*), with the
 * same schema as the JSON ones: the same keys, doubles as float64. */
#include <string.h>

#include <jansson.h>
#include <msgpuck.h>

#include "tick.h"

/* Room for the largest single item written below (a key, a number, a
 * header); the callers reserve it before each mp_encode_* call. */
#define ITEM_MAX 64

static void str(tk_buf *b, const char *s)
{
    size_t n = strlen(s);
    char *at = tk_buf_reserve(b, n + 8);
    b->len += (size_t)(mp_encode_str(at, s, (uint32_t)n) - at);
}

static void dbl(tk_buf *b, double v)
{
    char *at = tk_buf_reserve(b, ITEM_MAX);
    b->len += (size_t)(mp_encode_double(at, v) - at);
}

static void map(tk_buf *b, uint32_t n)
{
    char *at = tk_buf_reserve(b, ITEM_MAX);
    b->len += (size_t)(mp_encode_map(at, n) - at);
}

static void arr(tk_buf *b, uint32_t n)
{
    char *at = tk_buf_reserve(b, ITEM_MAX);
    b->len += (size_t)(mp_encode_array(at, n) - at);
}

static void uint_(tk_buf *b, uint64_t v)
{
    char *at = tk_buf_reserve(b, ITEM_MAX);
    b->len += (size_t)(mp_encode_uint(at, v) - at);
}

static void vec(tk_buf *b, const double *v, uint32_t n)
{
    arr(b, n);
    for (uint32_t i = 0; i < n; i++)
        dbl(b, v[i]);
}

/* "pose": {...}, "velocity": [...]: two map entries. */
static void pose_velocity(tk_buf *b, const tk_box *x)
{
    str(b, "pose");
    map(b, 2);
    str(b, "position");
    vec(b, x->c, 3);
    str(b, "rotation");
    vec(b, x->q, 4);
    str(b, "velocity");
    vec(b, x->v, 3);
}

void tk_mp_import(tk_buf *b, const tk_scene *s)
{
    map(b, 2);
    str(b, "settings");
    map(b, 2);
    str(b, "skin");
    dbl(b, 0);
    str(b, "capacity");
    uint_(b, (uint64_t)s->n);
    str(b, "shapes");
    arr(b, (uint32_t)s->n);
    for (int k = 0; k < s->n; k++) {
        map(b, 4);
        str(b, "id");
        str(b, s->ids[k]);
        str(b, "shape");
        map(b, 2);
        str(b, "type");
        str(b, "box");
        str(b, "half_extents");
        vec(b, s->boxes[k].h, 3);
        pose_velocity(b, &s->boxes[k]);
    }
}

void tk_mp_moves(tk_buf *b, const tk_scene *s)
{
    map(b, 1);
    str(b, "move");
    arr(b, (uint32_t)s->n);
    for (int k = 0; k < s->n; k++) {
        map(b, 3);
        str(b, "id");
        str(b, s->ids[k]);
        pose_velocity(b, &s->boxes[k]);
    }
}

void tk_mp_contacts(tk_buf *b, double dt)
{
    map(b, 1);
    str(b, "dt");
    dbl(b, dt);
}

static bool value_to_mp(const json_t *v, tk_buf *out)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        map(out, (uint32_t)json_object_size(v));
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)v, key, item) {
            str(out, key);
            if (!value_to_mp(item, out))
                return false;
        }
        return true;
    }
    case JSON_ARRAY: {
        arr(out, (uint32_t)json_array_size(v));
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item) if (!value_to_mp(item, out)) return false;
        return true;
    }
    case JSON_STRING: {
        char *at = tk_buf_reserve(out, json_string_length(v) + 8);
        out->len += (size_t)(mp_encode_str(at, json_string_value(v), (uint32_t)json_string_length(v)) - at);
        return true;
    }
    case JSON_INTEGER: {
        json_int_t i = json_integer_value(v);
        char *at = tk_buf_reserve(out, ITEM_MAX);
        out->len += (size_t)((i < 0 ? mp_encode_int(at, i) : mp_encode_uint(at, (uint64_t)i)) - at);
        return true;
    }
    case JSON_REAL:
        dbl(out, json_real_value(v));
        return true;
    case JSON_TRUE:
    case JSON_FALSE: {
        char *at = tk_buf_reserve(out, ITEM_MAX);
        out->len += (size_t)(mp_encode_bool(at, json_is_true(v)) - at);
        return true;
    }
    case JSON_NULL: {
        char *at = tk_buf_reserve(out, ITEM_MAX);
        out->len += (size_t)(mp_encode_nil(at) - at);
        return true;
    }
    }
    return false;
}

bool tk_json_to_mp(const char *json, size_t len, tk_buf *out)
{
    /* Keys in document order, so the MessagePack reads as the JSON does. */
    json_t *v = json_loadb(json, len, JSON_DECODE_ANY | JSON_PRESERVE_ORDER, NULL);
    bool ok = v && value_to_mp(v, out);
    json_decref(v);
    return ok;
}
