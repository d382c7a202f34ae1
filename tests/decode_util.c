/* The shared helpers of the decoder suites (decode_util.h). */
#include "decode_util.h"

#include <check.h>
#include <math.h>
#include <msgpuck.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/alloc.h"

const cqp_limits du_small = {
    .pairs = 3, .rays = 2, .hull_points = 8, .mesh_triangles = 4, .batch_items = 4, .world_capacity = 100};
const cqp_limits du_roomy = {.hull_points = 1000};

cqp_format du_format = CQP_JSON;

char *du_dq(const char *s)
{
    char *out = strdup(s);
    for (char *p = out; *p; p++)
        if (*p == '\'')
            *p = '"';
    return out;
}

json_t *du_parse(const char *doc, cqp_problem *p)
{
    char *text = du_dq(doc);
    json_t *v = cqp_parse(text, strlen(text), p);
    free(text);
    return v;
}

/* ---- the test-side MessagePack writer ---------------------------------- */

/* Each put_* writes at o and returns the bytes written, or with o NULL
 * returns the bytes it would write (msgpuck's mp_sizeof_*), so one walk
 * sizes the buffer and a second fills it. */
#define PUT(o, sizeof_expr, encode_expr) ((o) ? (size_t)((encode_expr) - (o)) : (size_t)(sizeof_expr))

static size_t put_value(char *o, const json_t *v, bool markers);

/* A marker string's number ("!nan", ...), or 0 when s is no marker. */
static size_t put_marker(char *o, const char *s)
{
    if (strcmp(s, "!nan") == 0)
        return PUT(o, mp_sizeof_double(NAN), mp_encode_double(o, NAN));
    if (strcmp(s, "!inf") == 0)
        return PUT(o, mp_sizeof_double(INFINITY), mp_encode_double(o, INFINITY));
    if (strcmp(s, "!-inf") == 0)
        return PUT(o, mp_sizeof_double(-INFINITY), mp_encode_double(o, -INFINITY));
    if (strcmp(s, "!u64max") == 0)
        return PUT(o, mp_sizeof_uint(UINT64_MAX), mp_encode_uint(o, UINT64_MAX));
    if (strncmp(s, "!f32:", 5) == 0) {
        float x = strtof(s + 5, NULL);
        return PUT(o, mp_sizeof_float(x), mp_encode_float(o, x));
    }
    return 0;
}

static size_t put_string(char *o, const char *s, size_t len, bool markers)
{
    size_t n = markers ? put_marker(o, s) : 0;
    return n ? n : PUT(o, mp_sizeof_str((uint32_t)len), mp_encode_str(o, s, (uint32_t)len));
}

/* A marked key as written: without a "!dup" suffix, each \u0001 a NUL
 * (jansson holds no NUL in a key). Returns its length in buf. */
static size_t marked_key(const char *key, size_t len, char *buf, size_t size)
{
    if (len >= 4 && memcmp(key + len - 4, "!dup", 4) == 0)
        len -= 4;
    ck_assert_uint_le(len, size);
    for (size_t i = 0; i < len; i++)
        buf[i] = key[i] == '\x01' ? '\0' : key[i];
    return len;
}

static size_t put_object(char *o, const json_t *v, bool markers)
{
    size_t n = PUT(o, mp_sizeof_map((uint32_t)json_object_size(v)), mp_encode_map(o, (uint32_t)json_object_size(v)));
    const char *key;
    size_t len;
    json_t *x;
    char buf[512];
    json_object_keylen_foreach((json_t *)v, key, len, x) {
        /* key itself steps the iteration: the marked copy goes elsewhere. */
        const char *k = key;
        size_t klen = len;
        if (markers) {
            klen = marked_key(key, len, buf, sizeof buf);
            k = buf;
        }
        char *at = o ? o + n : NULL;
        n += PUT(at, mp_sizeof_str((uint32_t)klen), mp_encode_str(at, k, (uint32_t)klen));
        n += put_value(o ? o + n : NULL, x, markers);
    }
    return n;
}

static size_t put_array(char *o, const json_t *v, bool markers)
{
    size_t n = PUT(o, mp_sizeof_array((uint32_t)json_array_size(v)), mp_encode_array(o, (uint32_t)json_array_size(v)));
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
        n += put_value(o ? o + n : NULL, x, markers);
    return n;
}

static size_t put_value(char *o, const json_t *v, bool markers)
{
    json_int_t i;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return put_object(o, v, markers);
    case JSON_ARRAY:
        return put_array(o, v, markers);
    case JSON_STRING:
        return put_string(o, json_string_value(v), json_string_length(v), markers);
    case JSON_INTEGER:
        i = json_integer_value(v);
        if (i < 0)
            return PUT(o, mp_sizeof_int(i), mp_encode_int(o, i));
        return PUT(o, mp_sizeof_uint((uint64_t)i), mp_encode_uint(o, (uint64_t)i));
    case JSON_REAL:
        return PUT(o, mp_sizeof_double(json_real_value(v)), mp_encode_double(o, json_real_value(v)));
    case JSON_TRUE:
    case JSON_FALSE:
        return PUT(o, mp_sizeof_bool(json_is_true(v)), mp_encode_bool(o, json_is_true(v)));
    case JSON_NULL:
        return PUT(o, mp_sizeof_nil(), mp_encode_nil(o));
    }
    return 0;
}

char *du_mp_of(const json_t *v, bool markers, size_t *len)
{
    *len = put_value(NULL, v, markers);
    char *out = malloc(*len);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(put_value(out, v, markers), *len);
    return out;
}

char *du_mp_checked(const json_t *v, size_t *len)
{
    char *out = du_mp_of(v, false, len);
    cqp_problem p;
    ck_assert_msg(cqp_mp_check(out, *len, CQP_MP_MAX_DEPTH, &p) == 0, "cqp_mp_check: %s", p.detail);
    return out;
}

/* ---- bodies --------------------------------------------------------------- */

static void wrap_in(du_body *b, cqp_format f, json_t *tree)
{
    memset(b, 0, sizeof *b);
    b->tree = tree;
    if (f == CQP_JSON) {
        b->root = cqp_value_json(tree);
        return;
    }
    b->mp = du_mp_checked(tree, &b->mp_len);
    b->root = cqp_value_mp(b->mp);
}

void du_wrap(du_body *b, json_t *tree) { wrap_in(b, du_format, tree); }

int du_open_in(du_body *b, cqp_format f, const char *doc, cqp_problem *p)
{
    memset(b, 0, sizeof *b);
    if (!doc)
        return 0;
    json_t *tree = du_parse(doc, p);
    if (!tree)
        return -1;
    wrap_in(b, f, tree);
    return 0;
}

int du_open(du_body *b, const char *doc, cqp_problem *p) { return du_open_in(b, du_format, doc, p); }

void du_open_marked(du_body *b, const char *doc)
{
    json_error_t e;
    char *text = du_dq(doc);
    memset(b, 0, sizeof *b);
    b->tree = json_loads(text, JSON_ALLOW_NUL, &e);
    free(text);
    ck_assert_msg(b->tree, "%s: %s", doc, e.text);
    b->mp = du_mp_of(b->tree, true, &b->mp_len);
    b->root = cqp_value_mp(b->mp);
}

void du_close(du_body *b)
{
    json_decref(b->tree);
    free(b->mp);
    memset(b, 0, sizeof *b);
}

/* ---- running decoders ----------------------------------------------------- */

int du_run(du_which w, cqp_decoder *d, cqp_value body, du_decoded *o)
{
    switch (w) {
    case D_PAIR:
        return cqp_decode_pair(d, body, &o->pair);
    case D_PAIRS:
        return cqp_decode_pairs(d, body, &o->pairs);
    case D_PUT:
        return cqp_decode_shape_put(d, body, "s1", &o->batch);
    case D_BATCH:
        return cqp_decode_batch(d, body, &o->batch);
    case D_WORLD:
        return cqp_decode_world(d, body, &o->world);
    case D_CONTACTS:
        return cqp_decode_contacts(d, body, &o->contacts);
    case D_RAYCAST:
        return cqp_decode_raycast(d, body, &o->raycast);
    case D_SWEEP:
        return cqp_decode_sweep(d, body, &o->shape);
    case D_OVERLAP:
        return cqp_decode_overlap(d, body, &o->shape);
    }
    return 0;
}

void du_release(du_decoded *o)
{
    cqp_pair_req_release(&o->pair);
    cqp_pairs_req_release(&o->pairs);
    cqp_batch_release(&o->batch);
    cqp_world_req_release(&o->world);
    cqp_contacts_req_release(&o->contacts);
    cqp_raycast_req_release(&o->raycast);
    cqp_shape_req_release(&o->shape);
}

void du_decode_ok(du_which w, const char *doc, const cqp_limits *limits, du_decoded *o)
{
    cqp_problem p = {0};
    du_body b;
    ck_assert_msg(du_open(&b, doc, &p) == 0, "parse: %s", p.detail);
    cqp_decoder d;
    cqp_decoder_init(&d, limits, &p);
    memset(o, 0, sizeof *o);
    int rc = du_run(w, &d, b.root, o);
    ck_assert_msg(rc == 0, "rejected (%s): %s at %s", du_format == CQP_JSON ? "JSON" : "MessagePack", p.detail,
                  p.pointer);
    ck_assert_str_eq(d.path, "");
    du_close(&b);
}

cqp_problem du_decode_bad(du_which w, const char *doc, const cqp_limits *limits)
{
    cqp_problem p = {0};
    du_body b;
    ck_assert_int_eq(du_open(&b, doc, &p), 0);
    cqp_decoder d;
    cqp_decoder_init(&d, limits, &p);
    du_decoded o;
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(du_run(w, &d, b.root, &o), -1);
    du_close(&b);
    return p;
}

/* ---- counting proto's allocations ----------------------------------------- */

static long du_allocs_live;
static bool du_allocs_fail;

static void *counting_malloc(size_t size)
{
    if (du_allocs_fail)
        return NULL;
    void *p = malloc(size);
    if (p)
        du_allocs_live++;
    return p;
}

static void counting_free(void *ptr)
{
    du_allocs_live--;
    free(ptr);
}

void du_count_allocs(bool fail)
{
    du_allocs_live = 0;
    du_allocs_fail = fail;
    cqp_set_alloc_funcs(counting_malloc, counting_free);
}

long du_live_allocs(void) { return du_allocs_live; }

void du_uncount_allocs(void) { cqp_set_alloc_funcs(NULL, NULL); }

void du_decode_marked(du_which w, const char *doc, du_decoded *o)
{
    cqp_problem p;
    cqp_decoder d;
    du_body b;
    du_open_marked(&b, doc);
    cqp_decoder_init(&d, &du_small, &p);
    memset(o, 0, sizeof *o);
    ck_assert_msg(du_run(w, &d, b.root, o) == 0, "rejected: %s at %s", p.detail, p.pointer);
    du_close(&b);
}
