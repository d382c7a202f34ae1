/* Fuzz target: one body in both wire formats (docs/FUZZING.md).
 *
 * The decoders are written once over the value view (cqp/value.h), so a
 * JSON body and its MessagePack translation must decode to the same core
 * values, or fail with the same problem: kind, pointer and detail.
 *
 * Input that jansson parses (cqp_parse) is translated here into
 * MessagePack with msgpuck (integers as ints, reals as float64, objects as
 * maps with jansson's key order). cqp_mp_check must accept the
 * translation, but for one documented difference: JSON nests as deep as
 * jansson allows (2048), MessagePack to CQP_MP_MAX_DEPTH (32); deeper, the
 * translation must be refused as malformed-msgpack and every decoder must
 * refuse the JSON body too (no request nests that deep). Otherwise every
 * decoder runs on both views, and the results must match field by field,
 * doubles bit for bit, hulls and meshes array by array.
 *
 * Input that is MessagePack instead (no JSON text is also MessagePack but
 * a lone digit, which both read as the same number) goes the other way
 * when every value in it has a JSON spelling (finite floats, strings
 * without NUL, integers within int64): it is written as JSON text here,
 * which jansson must parse, and compared the same way. */
#include <jansson.h>
#include <msgpuck.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_TARGET "fuzz_differential"
#include "cqp/write.h"
#include "fuzz_check.h"
#include "fuzz_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- JSON to MessagePack ------------------------------------------------ */

static size_t mp_size_of(const json_t *v)
{
    const char *key;
    json_t *m;
    size_t n = 0;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        n = mp_sizeof_map((uint32_t)json_object_size(v));
        json_object_foreach((json_t *)v, key, m)
            n += mp_sizeof_str((uint32_t)strlen(key)) + mp_size_of(m);
        return n;
    case JSON_ARRAY:
        n = mp_sizeof_array((uint32_t)json_array_size(v));
        for (size_t i = 0; i < json_array_size(v); i++)
            n += mp_size_of(json_array_get(v, i));
        return n;
    case JSON_STRING: return mp_sizeof_str((uint32_t)json_string_length(v));
    case JSON_INTEGER: {
        json_int_t x = json_integer_value(v);
        return x >= 0 ? mp_sizeof_uint((uint64_t)x) : mp_sizeof_int(x);
    }
    case JSON_REAL: return mp_sizeof_double(json_real_value(v));
    case JSON_TRUE:
    case JSON_FALSE: return mp_sizeof_bool(true);
    default: return mp_sizeof_nil();
    }
}

static char *mp_encode_json(char *w, const json_t *v)
{
    const char *key;
    json_t *m;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        w = mp_encode_map(w, (uint32_t)json_object_size(v));
        json_object_foreach((json_t *)v, key, m) {
            w = mp_encode_str(w, key, (uint32_t)strlen(key));
            w = mp_encode_json(w, m);
        }
        return w;
    case JSON_ARRAY:
        w = mp_encode_array(w, (uint32_t)json_array_size(v));
        for (size_t i = 0; i < json_array_size(v); i++)
            w = mp_encode_json(w, json_array_get(v, i));
        return w;
    case JSON_STRING: return mp_encode_str(w, json_string_value(v), (uint32_t)json_string_length(v));
    case JSON_INTEGER: {
        json_int_t x = json_integer_value(v);
        return x >= 0 ? mp_encode_uint(w, (uint64_t)x) : mp_encode_int(w, x);
    }
    case JSON_REAL: return mp_encode_double(w, json_real_value(v));
    case JSON_TRUE: return mp_encode_bool(w, true);
    case JSON_FALSE: return mp_encode_bool(w, false);
    default: return mp_encode_nil(w);
    }
}

/* Arrays and objects nested in v, v itself counted (a scalar is 0). */
static int json_depth(const json_t *v)
{
    const char *key;
    json_t *m;
    int deepest = 0;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            int d = json_depth(json_array_get(v, i));
            deepest = d > deepest ? d : deepest;
        }
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, m) {
            int d = json_depth(m);
            deepest = d > deepest ? d : deepest;
        }
    } else {
        return 0;
    }
    return deepest + 1;
}

/* ---- MessagePack to JSON ------------------------------------------------ */

/* True when every value of the accepted MessagePack at p has a JSON
 * spelling jansson reads back as the same view: finite floats, strings and
 * keys without NUL, integers within int64. */
static bool json_spellable(const uint8_t *p, const uint8_t *end)
{
    mpo_head h = mpo_head_at(p, end);
    const uint8_t *at = p + h.head;
    switch (h.kind) {
    case MPO_FLOAT: return fz_finite(mpo_float(p));
    case MPO_UINT: return !(p[0] == 0xcf && (p[1] & 0x80)); /* a uint 64 above INT64_MAX */
    case MPO_STR: return memchr(at, '\0', (size_t)h.n) == NULL;
    case MPO_ARRAY:
    case MPO_MAP:
        for (uint64_t i = 0; i < (h.kind == MPO_MAP ? 2 * h.n : h.n); i++) {
            if (!json_spellable(at, end))
                return false;
            at = mpo_skip(at, end);
        }
        return true;
    default: return true;
    }
}

static void put_json_string(cqp_buf *b, const uint8_t *s, size_t n)
{
    cqp_buf_append(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            cqp_buf_printf(b, "\\%c", s[i]);
        else if (s[i] < 0x20)
            cqp_buf_printf(b, "\\u%04x", s[i]);
        else
            cqp_buf_append(b, (const char *)&s[i], 1);
    }
    cqp_buf_append(b, "\"", 1);
}

/* A double as JSON text that reads back as the same bits and as a real
 * (jansson makes "1" an integer: the fraction keeps it a real). */
static void put_json_real(cqp_buf *b, double d)
{
    char text[40];
    snprintf(text, sizeof text, "%.17g", d);
    cqp_buf_puts(b, text);
    if (!strpbrk(text, ".e"))
        cqp_buf_puts(b, ".0");
}

/* Writes the accepted (and spellable) MessagePack value at p as JSON. */
static void put_json(cqp_buf *b, const uint8_t *p, const uint8_t *end)
{
    mpo_head h = mpo_head_at(p, end);
    const uint8_t *at = p + h.head;
    switch (h.kind) {
    case MPO_NIL: cqp_buf_puts(b, "null"); return;
    case MPO_BOOL: cqp_buf_puts(b, p[0] == 0xc3 ? "true" : "false"); return;
    case MPO_UINT:
    case MPO_INT: cqp_buf_printf(b, "%lld", (long long)mpo_int(p)); return;
    case MPO_FLOAT: put_json_real(b, mpo_float(p)); return;
    case MPO_STR: put_json_string(b, at, (size_t)h.n); return;
    case MPO_ARRAY:
    case MPO_MAP: break;
    default: check(0, "a value the oracle refuses in accepted bytes"); return;
    }
    bool map = h.kind == MPO_MAP;
    cqp_buf_puts(b, map ? "{" : "[");
    for (uint64_t i = 0; i < h.n; i++) {
        if (i > 0)
            cqp_buf_puts(b, ",");
        if (map) {
            size_t n;
            const uint8_t *k = mpo_str(at, end, &n);
            put_json_string(b, k, n);
            cqp_buf_puts(b, ":");
            at = k + n;
        }
        put_json(b, at, end);
        at = mpo_skip(at, end);
    }
    cqp_buf_puts(b, map ? "}" : "]");
}

/* ---- the comparison ---------------------------------------------------- */

static void report(int k, const char *what, const cqp_problem *a, int rc_a, const cqp_problem *b, int rc_b)
{
    fprintf(stderr, "fuzz_differential: decoder %s %s:\n  JSON: %s kind %s pointer \"%s\" detail \"%s\"\n"
                    "  MessagePack: %s kind %s pointer \"%s\" detail \"%s\"\n",
            fz_decoder_names[k], what, rc_a ? "refused" : "accepted", rc_a ? cqp_problem_slug(a->kind) : "-",
            rc_a ? a->pointer : "", rc_a ? a->detail : "", rc_b ? "refused" : "accepted",
            rc_b ? cqp_problem_slug(b->kind) : "-", rc_b ? b->pointer : "", rc_b ? b->detail : "");
}

/* Decoder k agreed across the formats: a (JSON) and b (MessagePack). */
static void check_same(int k, const fz_results *a, const fz_results *b)
{
    const cqp_problem *pa = &a->problem[k], *pb = &b->problem[k];
    if (a->rc[k] != b->rc[k]) {
        report(k, "differs", pa, a->rc[k], pb, b->rc[k]);
        check(0, "a decoder accepts one format and refuses the other");
    }
    if (a->rc[k] == 0) {
        check(fz_same_output(k, a, b), "a decoder's outputs differ between the formats");
        return;
    }
    if (pa->kind != pb->kind || strcmp(pa->pointer, pb->pointer) != 0 || strcmp(pa->detail, pb->detail) != 0) {
        report(k, "refuses differently", pa, a->rc[k], pb, b->rc[k]);
        check(0, "a decoder refuses the two formats with different problems");
    }
}

/* Every decoder on the JSON tree and on the MessagePack bytes mp[0..n). */
static void compare(const json_t *tree, const uint8_t *mp, size_t n)
{
    fz_results a, b;
    fz_doc mp_doc = fz_mp_doc(mp + n);
    long blocks = fz_blocks;
    fz_decode_all(cqp_value_json(tree), &a);
    fz_decode_all(cqp_value_mp((const char *)mp), &b);
    for (int k = 0; k < FZ_DECODERS; k++) {
        fz_check_result(k, &a);
        fz_check_result(k, &b);
        check_same(k, &a, &b);
    }
    fz_check_pointers(&a, &fz_json_doc, tree);
    fz_check_pointers(&b, &mp_doc, mp);
    fz_release(&a);
    fz_release(&b);
    check(fz_blocks == blocks, "a decoded request did not release all it held");
}

/* A body nested past CQP_MP_MAX_DEPTH in JSON: refused by every decoder. */
static void check_too_deep(const json_t *tree)
{
    fz_results a;
    fz_decode_all(cqp_value_json(tree), &a);
    for (int k = 0; k < FZ_DECODERS; k++) {
        check(a.rc[k] != 0, "a decoder accepted a body nested past CQP_MP_MAX_DEPTH");
        fz_check_result(k, &a);
    }
    fz_check_pointers(&a, &fz_json_doc, tree);
}

/* JSON parsed into tree: its MessagePack translation against it. */
static void from_json(const json_t *tree)
{
    size_t n = mp_size_of(tree);
    char *mp = malloc(n);
    if (!mp)
        abort();
    check(mp_encode_json(mp, tree) == mp + n, "the translation's size is not its sizeof");
    cqp_problem p;
    long blocks = fz_blocks;
    int rc = cqp_mp_check(mp, n, CQP_MP_MAX_DEPTH, &p);
    check(fz_blocks == blocks, "cqp_mp_check did not give back its scratch");
    if (json_depth(tree) > CQP_MP_MAX_DEPTH) {
        check(rc != 0 && p.kind == CQP_P_BAD_MSGPACK, "cqp_mp_check accepted a body nested past its limit");
        check_too_deep(tree);
    } else {
        if (rc != 0)
            fprintf(stderr, "fuzz_differential: %s\n", p.detail);
        check(rc == 0, "cqp_mp_check refused the translation of a body jansson parsed");
        compare(tree, (const uint8_t *)mp, n);
    }
    free(mp);
}

/* Accepted MessagePack: its JSON text, if it has one, against it. */
static void from_msgpack(const uint8_t *data, size_t size)
{
    if (!json_spellable(data, data + size))
        return;
    cqp_buf text = {0};
    put_json(&text, data, data + size);
    check(!text.oom, "out of memory");
    cqp_problem p;
    json_t *tree = cqp_parse(text.data, text.len, &p);
    if (!tree)
        fprintf(stderr, "fuzz_differential: %s in %.*s\n", p.detail, (int)(text.len > 400 ? 400 : text.len),
                text.data);
    check(tree != NULL, "jansson refused the JSON text of a MessagePack body cqp_mp_check accepted");
    compare(tree, data, size);
    json_decref(tree);
    cqp_buf_free(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_install_allocators();
    cqp_problem p;
    json_t *tree = size ? cqp_parse((const char *)data, size, &p) : NULL;
    if (tree) {
        from_json(tree);
        json_decref(tree);
        return 0;
    }
    int deepest;
    if (mpo_check(data, size, CQP_MP_MAX_DEPTH, &deepest) &&
        cqp_mp_check((const char *)data, size, CQP_MP_MAX_DEPTH, &p) == 0)
        from_msgpack(data, size);
    return 0;
}
