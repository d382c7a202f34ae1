/* The writer's MessagePack mode against msgpuck, a separate
 * implementation: random trees of every kind and width written by the
 * writer must equal msgpuck's encoding byte for byte and decode back value
 * for value, and random contacts' fields likewise. */
#include <math.h>
#include <msgpuck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/encode.h"
#include "cqp/problem.h"
#include "number_util.h"
#include "testutil.h"
#include "write_mp_util.h"

Suite *proto_write_mp_random_suite(void);

/* ---- random trees against msgpuck ---- */

typedef enum tkind { T_NIL, T_BOOL, T_INT, T_UINT, T_NUM, T_STR, T_STRN, T_ARR, T_MAP, T_KINDS } tkind;

/* One value of a random tree; a map's members alternate key (a T_STR
 * node) and value in kids. */
typedef struct tnode {
    tkind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    char *s;
    size_t n; /* string bytes, or elements (a map's: members) */
    struct tnode *kids;
} tnode;

/* 64 random bits shifted right by a random amount, so every width occurs. */
static uint64_t random_width(tu_rng *rng)
{
    return gen_next(rng) >> (gen_next(rng) % 64);
}

/* A double from random bits (NaNs, infinities, subnormals included) or one
 * of the values the writer treats specially. */
static double random_double(tu_rng *rng)
{
    static const double special[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 1, -3, 0.5, 1e300, 5e-324};
    uint64_t pick = gen_next(rng) % 3, bits = gen_next(rng);
    if (pick == 0)
        return special[bits % (sizeof special / sizeof *special)];
    if (pick == 1)
        return tu_uniform(rng, -1e6, 1e6);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* A length at or about a header boundary, or a small random one. */
static size_t random_length(tu_rng *rng, bool big)
{
    static const size_t edges[] = {0, 1, 15, 16, 17, 31, 32, 33, 255, 256};
    size_t count = big ? sizeof edges / sizeof *edges : 5;
    if (gen_next(rng) % 2)
        return edges[gen_next(rng) % count];
    return gen_next(rng) % 24;
}

/* A string of n random bytes; NUL only when may_nul (cqp_strn). */
static char *random_bytes(tu_rng *rng, size_t n, bool may_nul)
{
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    for (size_t k = 0; k < n; k++) {
        s[k] = (char)(gen_next(rng) & 0xff);
        if (!may_nul && !s[k])
            s[k] = 'z';
    }
    s[n] = '\0';
    return s;
}

static void random_node(tu_rng *rng, tnode *t, int depth);

/* A container's elements, or a map's key and value pairs. */
static void random_kids(tu_rng *rng, tnode *t, int depth)
{
    t->n = random_length(rng, depth < 2);
    size_t slots = t->kind == T_MAP ? 2 * t->n : t->n;
    t->kids = calloc(slots ? slots : 1, sizeof *t->kids);
    ck_assert_ptr_nonnull(t->kids);
    for (size_t k = 0; k < slots; k++) {
        if (t->kind == T_MAP && k % 2 == 0) {
            tnode *key = &t->kids[k];
            key->kind = T_STR;
            key->n = gen_next(rng) % 40;
            key->s = random_bytes(rng, key->n, false);
        } else {
            random_node(rng, &t->kids[k], depth + 1);
        }
    }
}

static void random_node(tu_rng *rng, tnode *t, int depth)
{
    /* Deeper levels hold leaves only, so a tree stays a few thousand values. */
    t->kind = (tkind)(gen_next(rng) % (depth >= 4 ? T_ARR : T_KINDS));
    uint64_t bits = random_width(rng);
    switch (t->kind) {
    case T_BOOL: t->b = bits & 1; break;
    case T_INT: t->i = gen_next(rng) % 2 ? (int64_t)bits : -(int64_t)(bits >> 1) - 1; break;
    case T_UINT: t->u = bits; break;
    case T_NUM: t->d = random_double(rng); break;
    case T_STR:
    case T_STRN:
        t->n = random_length(rng, true);
        t->s = random_bytes(rng, t->n, t->kind == T_STRN);
        break;
    case T_ARR:
    case T_MAP: random_kids(rng, t, depth); break;
    default: break;
    }
}

static size_t kid_slots(const tnode *t)
{
    return t->kind == T_MAP ? 2 * t->n : t->kind == T_ARR ? t->n : 0;
}

static void free_node(tnode *t)
{
    for (size_t k = 0; k < kid_slots(t); k++)
        free_node(&t->kids[k]);
    free(t->kids);
    free(t->s);
}

/* The tree through the writer under test. */
static void write_node(cqp_writer *w, const tnode *t)
{
    switch (t->kind) {
    case T_NIL: cqp_null(w); break;
    case T_BOOL: cqp_bool(w, t->b); break;
    case T_INT: cqp_int(w, t->i); break;
    case T_UINT: cqp_uint(w, t->u); break;
    case T_NUM: cqp_num(w, t->d); break;
    case T_STR: cqp_str(w, t->s); break;
    case T_STRN: cqp_strn(w, t->s, t->n); break;
    case T_ARR:
        cqp_arr_begin(w);
        for (size_t k = 0; k < t->n; k++)
            write_node(w, &t->kids[k]);
        cqp_arr_end(w);
        break;
    case T_MAP:
        cqp_obj_begin(w);
        for (size_t k = 0; k < t->n; k++) {
            cqp_key(w, t->kids[2 * k].s);
            write_node(w, &t->kids[2 * k + 1]);
        }
        cqp_obj_end(w);
        break;
    default: break;
    }
}

/* The number the writer is to write: nil (false) for a non-finite one, +0
 * for -0 unless kept. */
static bool expected_double(double d, bool keep_negative_zero, double *out)
{
    if (!isfinite(d))
        return false;
    *out = d == 0 && !keep_negative_zero ? 0.0 : d;
    return true;
}

/* Oracle: msgpuck's encoding of the tree (its encoders pick the smallest
 * forms the spec allows, as write.h promises); returns the end. */
static char *mp_encode_node(char *p, const tnode *t, bool keep)
{
    double d;
    switch (t->kind) {
    case T_NIL: return mp_encode_nil(p);
    case T_BOOL: return mp_encode_bool(p, t->b);
    case T_INT: return t->i < 0 ? mp_encode_int(p, t->i) : mp_encode_uint(p, (uint64_t)t->i);
    case T_UINT: return mp_encode_uint(p, t->u);
    case T_NUM: return expected_double(t->d, keep, &d) ? mp_encode_double(p, d) : mp_encode_nil(p);
    case T_STR:
    case T_STRN: return mp_encode_str(p, t->s, (uint32_t)t->n);
    case T_ARR: p = mp_encode_array(p, (uint32_t)t->n); break;
    case T_MAP: p = mp_encode_map(p, (uint32_t)t->n); break;
    default: break;
    }
    for (size_t k = 0; k < kid_slots(t); k++)
        p = mp_encode_node(p, &t->kids[k], keep);
    return p;
}

/* An upper bound of the tree's encoded size. */
static size_t node_bound(const tnode *t)
{
    size_t n = 9 + (t->s ? t->n : 0);
    for (size_t k = 0; k < kid_slots(t); k++)
        n += node_bound(&t->kids[k]);
    return n;
}

/* Oracle: msgpuck's decoder reads the value at *p as t; advances *p. */
static void assert_decodes_as(const char **p, const tnode *t, bool keep)
{
    enum mp_type type = mp_typeof(**p);
    double d;
    uint32_t len;
    if (t->kind == T_NUM && !expected_double(t->d, keep, &d)) {
        nu_require(type == MP_NIL, "a non-finite number reads as type %d", type);
        mp_decode_nil(p);
        return;
    }
    switch (t->kind) {
    case T_NIL: nu_require(type == MP_NIL, "nil"); mp_decode_nil(p); return;
    case T_BOOL: nu_require(type == MP_BOOL && mp_decode_bool(p) == t->b, "bool"); return;
    case T_INT:
        if (t->i < 0)
            nu_require(type == MP_INT && mp_decode_int(p) == t->i, "int %lld", (long long)t->i);
        else
            nu_require(type == MP_UINT && mp_decode_uint(p) == (uint64_t)t->i, "int %lld", (long long)t->i);
        return;
    case T_UINT: nu_require(type == MP_UINT && mp_decode_uint(p) == t->u, "uint"); return;
    case T_NUM: nu_require(type == MP_DOUBLE && nu_same_bits(mp_decode_double(p), d), "double %a", d); return;
    case T_STR:
    case T_STRN: {
        nu_require(type == MP_STR, "str");
        const char *s = mp_decode_str(p, &len);
        nu_require(len == t->n && memcmp(s, t->s, len) == 0, "str of %zu bytes", t->n);
        return;
    }
    case T_ARR: nu_require(type == MP_ARRAY && mp_decode_array(p) == t->n, "array of %zu", t->n); break;
    case T_MAP: nu_require(type == MP_MAP && mp_decode_map(p) == t->n, "map of %zu", t->n); break;
    default: break;
    }
    for (size_t k = 0; k < kid_slots(t); k++)
        assert_decodes_as(p, &t->kids[k], keep);
}

START_TEST(random_trees)
{
    tu_rng rng = {20250607};
    for (int round = 0; round < 400; round++) {
        tnode root = {0};
        random_node(&rng, &root, 0);
        bool keep = round % 3 == 0;
        mdoc d;
        mdoc_init(&d);
        d.w.keep_negative_zero = keep;
        write_node(&d.w, &root);
        ck_assert(!d.buf.oom);
        ck_assert_int_eq(d.w.depth, 0);

        char *oracle = malloc(node_bound(&root));
        ck_assert_ptr_nonnull(oracle);
        size_t n = (size_t)(mp_encode_node(oracle, &root, keep) - oracle);
        ck_assert_uint_eq(d.buf.len, n);
        ck_assert_int_eq(memcmp(d.buf.data, oracle, n), 0);

        assert_one_value(d.buf.data, d.buf.len);
        const char *p = d.buf.data;
        assert_decodes_as(&p, &root, keep);
        ck_assert_ptr_eq(p, d.buf.data + d.buf.len);
        free(oracle);
        cqp_buf_free(&d.buf);
        free_node(&root);
    }
}
END_TEST

/* ---- contacts: the encoder's one-write path ---- */

/* A random double, now and then one the writer treats apart (zeros of
 * both signs, NaN, the infinities). */
static double random_number(tu_rng *r)
{
    static const double special[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 1e-310, -1e300};
    if (tu_uniform(r, 0, 1) < 0.15)
        return special[(int)tu_uniform(r, 0, 7)];
    return tu_uniform(r, -1e3, 1e3);
}

static cq_vec3 random_vec3(tu_rng *r) { return cq_v3(random_number(r), random_number(r), random_number(r)); }

static void random_contact(tu_rng *r, cq_contact *c)
{
    *c = (cq_contact){0};
    c->overlap = tu_uniform(r, 0, 1) < 0.5;
    c->has_normal = tu_uniform(r, 0, 1) < 0.8;
    c->has_distance = tu_uniform(r, 0, 1) < 0.5;
    c->distance = tu_uniform(r, 0, 1) < 0.3 ? 0 : random_number(r);
    c->depth = random_number(r);
    c->normal = random_vec3(r);
    c->witness_a = random_vec3(r);
    c->witness_b = random_vec3(r);
    c->point_count = (int)tu_uniform(r, -1, CQ_MAX_POINTS + 3); /* out of range too: held to 0..4 */
    for (int i = 0; i < CQ_MAX_POINTS; i++) {
        c->points[i].position = random_vec3(r);
        c->points[i].depth = random_number(r);
        c->points[i].feature = (cq_feature){(uint8_t)tu_uniform(r, 0, 4), (uint8_t)tu_uniform(r, 0, 4),
                                            (uint16_t)tu_uniform(r, 0, 70000), (uint16_t)tu_uniform(r, 0, 12)};
    }
    c->algorithm = (cq_algorithm)(int)tu_uniform(r, 0, CQ_ALG_COUNT);
    bool fell_back = tu_uniform(r, 0, 1) < 0.3;
    c->fallback_reason = fell_back ? (cq_fallback_reason)(int)tu_uniform(r, 0, CQ_FB_REASON_COUNT) : CQ_FB_NONE;
    c->fallback_action = fell_back ? (cq_fallback_action)(int)tu_uniform(r, 0, CQ_FBA_COUNT) : CQ_FBA_NONE;
    c->sat_axis = (int)tu_uniform(r, -1, CQ_SAT_AXIS_COUNT);
    c->sat_gap = random_number(r);
}

/* msgpuck's encoding of a number as write.h says the writer writes it. */
static char *mp_num(char *p, double v, bool keep)
{
    if (!isfinite(v))
        return mp_encode_nil(p);
    return mp_encode_double(p, v == 0 && !keep ? 0.0 : v);
}

static char *mp_vec3(char *p, cq_vec3 v, bool keep)
{
    p = mp_encode_array(p, 3);
    p = mp_num(p, v.x, keep);
    p = mp_num(p, v.y, keep);
    return mp_num(p, v.z, keep);
}

static char *mp_cstr(char *p, const char *s) { return mp_encode_str(p, s, (uint32_t)strlen(s)); }

/* Oracle: msgpuck encodes the fields of c in API.md section 1's order
 * (the members of a contact result; witness only when separated and
 * known, sat for box-box or a winning axis); returns their member count
 * in *members. */
static char *mp_contact_fields(char *p, const cq_contact *c, bool keep, uint32_t *members)
{
    bool witness = c->has_distance && c->distance > 0;
    bool sat = c->sat_axis >= 0 || c->algorithm == CQ_ALG_SAT_BOX_BOX;
    *members = 6 + c->has_normal + witness + sat;
    p = mp_encode_bool(mp_cstr(p, "overlap"), c->overlap);
    p = mp_num(mp_cstr(p, "distance"), c->distance, keep);
    p = mp_num(mp_cstr(p, "depth"), c->depth, keep);
    if (c->has_normal)
        p = mp_vec3(mp_cstr(p, "normal"), c->normal, keep);
    int count = c->point_count < 0 ? 0 : c->point_count > CQ_MAX_POINTS ? CQ_MAX_POINTS : c->point_count;
    p = mp_encode_array(mp_cstr(p, "points"), (uint32_t)count);
    for (int i = 0; i < count; i++) {
        char feature[32];
        p = mp_encode_map(p, 3);
        p = mp_vec3(mp_cstr(p, "position"), c->points[i].position, keep);
        p = mp_num(mp_cstr(p, "depth"), c->points[i].depth, keep);
        p = mp_cstr(mp_cstr(p, "feature"), cq_feature_format(c->points[i].feature, feature, sizeof feature));
    }
    if (witness) {
        p = mp_encode_map(mp_cstr(p, "witness"), 2);
        p = mp_vec3(mp_cstr(p, "a"), c->witness_a, keep);
        p = mp_vec3(mp_cstr(p, "b"), c->witness_b, keep);
    }
    p = mp_cstr(mp_cstr(p, "algorithm"), cq_algorithm_name(c->algorithm));
    p = mp_cstr(p, "fallback");
    if (c->fallback_reason == CQ_FB_NONE && c->fallback_action == CQ_FBA_NONE) {
        p = mp_encode_nil(p);
    } else {
        p = mp_encode_map(p, 2);
        p = mp_cstr(mp_cstr(p, "reason"), cq_fallback_reason_name(c->fallback_reason));
        p = mp_cstr(mp_cstr(p, "action"), cq_fallback_action_name(c->fallback_action));
    }
    if (sat) {
        p = mp_encode_map(mp_cstr(p, "sat"), 2);
        p = mp_cstr(mp_cstr(p, "axis"), cq_sat_axis_name(c->sat_axis));
        p = mp_num(mp_cstr(p, "gap"), c->sat_gap, keep);
    }
    return p;
}

/* Random contacts written as a contacts answer writes them, into a map
 * already holding `before` members (0..14, so the map's header widens to
 * map16 inside the contact's members now and then). Oracle: msgpuck's
 * encoding of the same map. */
START_TEST(contact_fields_random)
{
    tu_rng rng = {4471};
    for (int round = 0; round < 3000; round++) {
        cq_contact c;
        random_contact(&rng, &c);
        bool keep = round % 4 == 0;
        int before = (int)tu_uniform(&rng, 0, 15);
        mdoc d;
        mdoc_init(&d);
        d.w.keep_negative_zero = keep;
        cqp_obj_begin(&d.w);
        for (int i = 0; i < before; i++) {
            char key[16];
            snprintf(key, sizeof key, "k%d", i);
            cqp_key(&d.w, key);
            cqp_int(&d.w, i);
        }
        cqp_write_contact_fields(&d.w, &c, NULL);
        cqp_obj_end(&d.w);

        static char fields[2048], oracle[4096];
        uint32_t members;
        size_t fn = (size_t)(mp_contact_fields(fields, &c, keep, &members) - fields);
        char *p = mp_encode_map(oracle, (uint32_t)before + members);
        for (int i = 0; i < before; i++) {
            char key[16];
            snprintf(key, sizeof key, "k%d", i);
            p = mp_encode_uint(mp_cstr(p, key), (uint64_t)i);
        }
        memcpy(p, fields, fn);
        size_t n = (size_t)(p + fn - oracle);
        ck_assert_msg(d.buf.len == n && memcmp(d.buf.data, oracle, n) == 0, "round %d: %zu bytes, expected %zu",
                      round, d.buf.len, n);
        mdoc_check(&d, (const uint8_t *)oracle, n);
    }
}
END_TEST

/* Near the depth limit a contact is written call by call (its points nest
 * two levels down): up to the limit the bytes are msgpuck's, past it the
 * buffer is oom, as for any value nested too deep. */
START_TEST(contact_fields_deep)
{
    tu_rng rng = {99};
    cq_contact c;
    random_contact(&rng, &c);
    c.point_count = 2;
    for (int levels = CQP_WRITER_MAX_DEPTH - 4; levels < CQP_WRITER_MAX_DEPTH; levels++) {
        mdoc d;
        mdoc_init(&d);
        for (int i = 0; i < levels; i++)
            cqp_arr_begin(&d.w);
        cqp_obj_begin(&d.w);
        cqp_write_contact_fields(&d.w, &c, NULL);
        cqp_obj_end(&d.w);
        for (int i = 0; i < levels; i++)
            cqp_arr_end(&d.w);
        /* levels arrays, the map, the points array, a point's map, its
         * position: levels + 4 deep. */
        if (levels + 4 > CQP_WRITER_MAX_DEPTH) {
            ck_assert(d.buf.oom);
            cqp_buf_free(&d.buf);
            continue;
        }
        static char oracle[4096];
        char *p = oracle;
        for (int i = 0; i < levels; i++)
            p = mp_encode_array(p, 1);
        uint32_t members;
        char *fields = p + 1; /* a fixmap's header: fewer than 16 members */
        p = mp_contact_fields(fields, &c, false, &members);
        mp_encode_map(fields - 1, members);
        mdoc_check(&d, (const uint8_t *)oracle, (size_t)(p - oracle));
    }
}
END_TEST

Suite *proto_write_mp_random_suite(void)
{
    Suite *s = suite_create("proto_write_mp_random");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, random_trees);
    tcase_add_test(tc, contact_fields_random);
    tcase_add_test(tc, contact_fields_deep);
    suite_add_tcase(s, tc);
    return s;
}
