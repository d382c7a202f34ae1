/* A batch's moves: MessagePack's one-pass reader (decode_move_mp.c)
 * against the shared decoder's JSON path, on random batches with and
 * without faults: the same ops, or the same refusal at the same pointer;
 * and its numbers at every width. The other decoders' values:
 * check_proto_values.c. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "decode_util.h"
#include "testutil.h"

#define TOL 1e-15
#define ck_vec(v, ex, ey, ez)                                                                                         \
    do {                                                                                                              \
        cq_vec3 v_ = (v);                                                                                             \
        ck_assert_double_eq_tol(v_.x, (ex), TOL);                                                                     \
        ck_assert_double_eq_tol(v_.y, (ey), TOL);                                                                     \
        ck_assert_double_eq_tol(v_.z, (ez), TOL);                                                                     \
    } while (0)

Suite *proto_moves_suite(void);

/* A document being written, with room for a batch of 40 moves, or of
 * 300 in the tick's form. */
typedef struct doc {
    char text[131072];
    size_t len;
} doc;

static void put(doc *d, const char *s)
{
    size_t n = strlen(s);
    ck_assert(d->len + n < sizeof d->text);
    memcpy(d->text + d->len, s, n + 1);
    d->len += n;
}

/* True once in `in` draws. */
static bool one_in(tu_rng *rng, int in) { return tu_uniform(rng, 0, in) < 1; }

/* A number: mostly x in 17 digits, now and then (ints) an integer, and
 * with faults a value every decoder refuses. */
static void put_number(doc *d, tu_rng *rng, double x, bool ints, bool faults)
{
    char buf[40];
    if (faults && one_in(rng, 150))
        snprintf(buf, sizeof buf, one_in(rng, 2) ? "1e51" : "'x'");
    else if (ints && one_in(rng, 10))
        snprintf(buf, sizeof buf, "%d", (int)tu_uniform(rng, -300, 70000));
    else
        snprintf(buf, sizeof buf, "%.17g", x);
    put(d, buf);
}

static void put_numbers(doc *d, tu_rng *rng, const double *x, int n, bool ints, bool faults)
{
    if (faults && one_in(rng, 150))
        n--; // an array one short
    put(d, "[");
    for (int k = 0; k < n; k++) {
        if (k)
            put(d, ",");
        put_number(d, rng, x[k], ints, faults);
    }
    put(d, "]");
}

static void put_vec(doc *d, tu_rng *rng, double r, bool faults)
{
    double x[3] = {tu_uniform(rng, -r, r), tu_uniform(rng, -r, r), tu_uniform(rng, -r, r)};
    put_numbers(d, rng, x, 3, true, faults);
}

/* A rotation: a unit quaternion (now and then one of length 2: a fault). */
static void put_rotation(doc *d, tu_rng *rng, bool faults)
{
    double q[4], len = 0;
    for (int k = 0; k < 4; k++) {
        q[k] = tu_uniform(rng, -1, 1);
        len += q[k] * q[k];
    }
    len = sqrt(len) / (faults && one_in(rng, 150) ? 2 : 1);
    for (int k = 0; k < 4; k++)
        q[k] /= len;
    put_numbers(d, rng, q, 4, false, faults);
}

/* Members in a random order: put[k] writes the k-th of n. */
typedef void (*member_fn)(doc *d, tu_rng *rng, bool faults, int item);

static void put_members(doc *d, tu_rng *rng, bool faults, int item, member_fn *m, int n)
{
    for (int k = n - 1; k > 0; k--) {
        int j = (int)tu_uniform(rng, 0, k + 0.999);
        member_fn t = m[k];
        m[k] = m[j];
        m[j] = t;
    }
    put(d, "{");
    for (int k = 0; k < n; k++) {
        if (k)
            put(d, ",");
        m[k](d, rng, faults, item);
    }
    put(d, "}");
}

static void m_position(doc *d, tu_rng *rng, bool faults, int item)
{
    (void)item;
    put(d, "'position':");
    put_vec(d, rng, 100, faults);
}

static void m_rotation(doc *d, tu_rng *rng, bool faults, int item)
{
    (void)item;
    put(d, "'rotation':");
    put_rotation(d, rng, faults);
}

static void m_axes(doc *d, tu_rng *rng, bool faults, int item)
{
    (void)rng, (void)faults, (void)item;
    put(d, "'axes':[[0,1,0],[-1,0,0],[0,0,1]]");
}

static void m_scale(doc *d, tu_rng *rng, bool faults, int item)
{
    (void)rng, (void)faults, (void)item;
    put(d, "'scale':2");
}

static void m_id(doc *d, tu_rng *rng, bool faults, int item)
{
    char buf[96];
    if (faults && one_in(rng, 100))
        snprintf(buf, sizeof buf, "'id':'%s'", one_in(rng, 3) ? "a/b" : one_in(rng, 2) ? "" : ID65);
    else if (one_in(rng, 10))
        snprintf(buf, sizeof buf, "'id':%d", item);
    else
        snprintf(buf, sizeof buf, "'id':'m-%d.x_%d'", item, (int)tu_uniform(rng, 0, 1e6));
    put(d, buf);
}

/* A pose: position and rotation (each now and then absent), now and then
 * null or axes, and with faults an unknown member or no object at all. */
static void m_pose(doc *d, tu_rng *rng, bool faults, int item)
{
    put(d, "'pose':");
    if (one_in(rng, 20)) {
        put(d, "null");
        return;
    }
    if (faults && one_in(rng, 200)) {
        put(d, "'upright'");
        return;
    }
    member_fn m[3];
    int n = 0;
    if (!one_in(rng, 10))
        m[n++] = m_position;
    m[n++] = one_in(rng, 20) ? m_axes : m_rotation;
    if (m[n - 1] == m_rotation && one_in(rng, 10))
        n--;
    if (faults && one_in(rng, 200))
        m[n++] = m_scale;
    put_members(d, rng, faults, item, m, n);
}

static void m_velocity(doc *d, tu_rng *rng, bool faults, int item)
{
    (void)item;
    put(d, "'velocity':");
    put_vec(d, rng, 5, faults);
}

static void m_shape(doc *d, tu_rng *rng, bool faults, int item)
{
    (void)rng, (void)faults, (void)item;
    put(d, "'shape':" SPH);
}

/* A move of the form a tick sends, now and then another one, and with
 * faults one a decoder refuses (a member missing, unknown or bad). */
static void put_move(doc *d, tu_rng *rng, bool faults, int item)
{
    member_fn m[4];
    int n = 0;
    if (!(faults && one_in(rng, 200)))
        m[n++] = m_id;
    if (!(faults && one_in(rng, 200)))
        m[n++] = m_pose;
    if (!one_in(rng, 4))
        m[n++] = m_velocity;
    if (faults && one_in(rng, 200))
        m[n++] = m_shape;
    put_members(d, rng, faults, item, m, n);
}

/* A batch of moves, at times after an upsert and before a remove (so the
 * moves start at another op). */
static void put_batch(doc *d, tu_rng *rng, bool faults)
{
    d->len = 0;
    put(d, "{");
    if (one_in(rng, 4))
        put(d, "'upsert':[{'id':'u','shape':" SPH "}],");
    put(d, "'move':[");
    int n = (int)tu_uniform(rng, 1, 40);
    for (int i = 0; i < n; i++) {
        if (i)
            put(d, ",");
        put_move(d, rng, faults, i);
    }
    put(d, "]");
    if (one_in(rng, 4))
        put(d, ",'remove':['u']");
    put(d, "}");
}

/* text in format f through the batch decoder under limits. */
static int decode_batch_in(cqp_format f, const char *text, const cqp_limits *limits, cqp_problem *p,
                           du_decoded *o)
{
    du_body b;
    cqp_decoder d;
    ck_assert_int_eq(du_open_in(&b, f, text, p), 0);
    cqp_decoder_init(&d, limits, p);
    memset(o, 0, sizeof *o);
    int rc = du_run(D_BATCH, &d, b.root, o);
    du_close(&b);
    return rc;
}

static const cqp_limits small_limits = {.batch_items = 100};

/* Two decoded batches hold the same ops, bit for bit. */
static void same_batch(const cqp_batch *a, const cqp_batch *b, const char *text)
{
    ck_assert_msg(a->count == b->count && a->upserts == b->upserts && a->moves == b->moves, "counts of %s", text);
    for (int i = 0; i < a->count; i++) {
        const cq_world_op *x = &a->ops[i], *y = &b->ops[i];
        ck_assert_msg(x->kind == y->kind && strcmp(x->id, y->id) == 0 && x->keep_velocity == y->keep_velocity &&
                          x->layer == y->layer && x->mask == y->mask,
                      "op %d of %s", i, text);
        ck_assert_msg(memcmp(&x->pose, &y->pose, sizeof x->pose) == 0, "pose %d of %s", i, text);
        ck_assert_msg(memcmp(&x->velocity, &y->velocity, sizeof x->velocity) == 0, "velocity %d of %s", i, text);
    }
}

/* text decoded as JSON and as MessagePack under limits (name in failures):
 * the same ops bit for bit, or the same problem at the same pointer.
 * Whether it was accepted. */
static bool same_in_both(const char *text, const cqp_limits *limits, const char *name)
{
    cqp_problem pj = {0}, pm = {0};
    du_decoded oj, om;
    int rj = decode_batch_in(CQP_JSON, text, limits, &pj, &oj);
    int rm = decode_batch_in(CQP_MSGPACK, text, limits, &pm, &om);
    ck_assert_msg(rj == rm, "JSON %d, MessagePack %d: %s", rj, rm, name);
    if (rj == 0)
        same_batch(&oj.batch, &om.batch, name);
    else
        ck_assert_msg(pj.kind == pm.kind && strcmp(pj.pointer, pm.pointer) == 0 && strcmp(pj.detail, pm.detail) == 0,
                      "%s: JSON '%s' at %s, MessagePack '%s' at %s", name, pj.detail, pj.pointer, pm.detail,
                      pm.pointer);
    du_release(&oj);
    du_release(&om);
    return rj == 0;
}

/* MessagePack moves take a one-pass decoder of their own
 * (decode_move_mp.c), which leaves every other form and every fault to
 * the view. Whatever a batch of moves holds, MessagePack must decode it as
 * JSON does through the view (the same doubles: the MessagePack is
 * written from the JSON tree): the same ops bit for bit, or the same
 * problem at the same pointer. */
START_TEST(test_moves_as_json)
{
    tu_rng rng = {20261202};
    static doc d;
    int refused = 0, trials = 3000;
    for (int t = 0; t < trials; t++) {
        put_batch(&d, &rng, t % 2 == 1);
        char *text = du_dq(d.text);
        refused += !same_in_both(text, &small_limits, text);
        free(text);
    }
    // Both kinds of batch must have been seen many times.
    ck_assert_int_gt(refused, trials / 8);
    ck_assert_int_lt(refused, trials / 2);
}
END_TEST

/* The one pass reads every number MessagePack spells as the view does:
 * float32 widened, integers of every width. */
START_TEST(test_moves_msgpack_numbers)
{
    du_decoded o;
    du_decode_marked(D_BATCH,
                  "{'move':[{'id':'a','pose':{'position':['!f32:1.1',-200,-40000],"
                  "'rotation':[0,0,'!f32:0.6','!f32:0.8']},'velocity':[70000,-3000000000,'!f32:-2.5']},"
                  "{'velocity':[1,2,3],'pose':{'rotation':[0,0,0,1],'position':[5000000000,255,-32]},'id':'b'}]}",
                  &o);
    const cq_world_op *a = &o.batch.ops[0], *b = &o.batch.ops[1];
    ck_vec(a->pose.p, (double)1.1f, -200, -40000);
    ck_vec(a->velocity, 70000, -3000000000.0, -2.5);
    cq_xform want;
    ck_assert_int_eq(cq_pose_from_quat(a->pose.p, (cq_quat){0, 0, (double)0.6f, (double)0.8f}, &want).status, CQ_OK);
    ck_assert(memcmp(&want, &a->pose, sizeof want) == 0);
    ck_vec(b->pose.p, 5000000000.0, 255, -32);
    ck_vec(b->velocity, 1, 2, 3);
    ck_assert_str_eq(b->id, "b");
    du_release(&o);
}

/* An id of 1 to 31 characters (a fixstr, so of the tick's form) that is
 * one now and then, else with one byte just outside the ranges of id
 * characters (or a space) at any place: the form's test of the id, a word
 * at a time, must draw the same line as the rule. Each character next to
 * a range's end is among the valid ones. */
static const char *near_id(tu_rng *rng)
{
    static const char valid[] = "-.09:AZ_az", invalid[] = ",/;@[^`{ ~";
    static char id[32];
    int n = 1 + (int)tu_uniform(rng, 0, 31);
    n = n > 31 ? 31 : n;
    for (int k = 0; k < n; k++)
        id[k] = valid[(int)tu_uniform(rng, 0, sizeof valid - 1) % (int)(sizeof valid - 1)];
    if (!one_in(rng, 4))
        id[(int)tu_uniform(rng, 0, n) % n] = invalid[(int)tu_uniform(rng, 0, sizeof invalid - 1) % (int)(sizeof invalid - 1)];
    id[n] = '\0';
    return id;
}

/* A batch of n moves in the exact form a tick sends ({"id", "pose":
 * {"position", "rotation"}, "velocity"} in that order, every number a
 * real, so a float64 in MessagePack), which decode_move_mp.c reads from
 * fixed offsets once enough of the list follows a move to hold the form's
 * bytes; with faults, now and then an id or a number every decoder
 * refuses, or a move of another form. */
static void put_form_batch(doc *d, tu_rng *rng, int n, bool faults)
{
    d->len = 0;
    put(d, "{'move':[");
    for (int i = 0; i < n; i++) {
        if (i)
            put(d, ",");
        if (faults && one_in(rng, 300)) {
            put_move(d, rng, false, i);
            continue;
        }
        char buf[128];
        if (faults && one_in(rng, 300))
            snprintf(buf, sizeof buf, "{'id':'%s','pose':{'position':",
                     one_in(rng, 3) ? "a/b" : one_in(rng, 2) ? "" : ID65);
        else if (faults && one_in(rng, 100))
            snprintf(buf, sizeof buf, "{'id':'%s','pose':{'position':", near_id(rng));
        else
            snprintf(buf, sizeof buf, "{'id':'b%d.%d','pose':{'position':", i, (int)tu_uniform(rng, 0, 1e6));
        put(d, buf);
        double x[3] = {tu_uniform(rng, -100, 100), tu_uniform(rng, -100, 100), tu_uniform(rng, -100, 100)};
        put_numbers(d, rng, x, 3, false, faults && one_in(rng, 20));
        put(d, ",'rotation':");
        put_rotation(d, rng, faults && one_in(rng, 20));
        put(d, "},'velocity':");
        double v[3] = {tu_uniform(rng, -5, 5), tu_uniform(rng, -5, 5), tu_uniform(rng, -5, 5)};
        put_numbers(d, rng, v, 3, false, faults && one_in(rng, 20));
        put(d, "}");
    }
    put(d, "]}");
}

static const cqp_limits form_limits = {.batch_items = 1000};

/* Batches long enough for the tick's form to be read from its offsets:
 * MessagePack decodes them as JSON does through the view, bit for bit, or
 * refuses them with the same problem at the same pointer, wherever in the
 * list the fault is (the last moves, too near the list's end for the
 * form's bytes to be known there, go member by member). */
START_TEST(test_moves_form_as_json)
{
    tu_rng rng = {20261204};
    static doc d;
    int refused = 0, trials = 200;
    for (int t = 0; t < trials; t++) {
        put_form_batch(&d, &rng, (int)tu_uniform(&rng, 130, 300), t % 2 == 1);
        char *text = du_dq(d.text);
        // Trial t named, not its text: 40 KB is more than a failure's message holds.
        char name[32];
        snprintf(name, sizeof name, "trial %d", t);
        refused += !same_in_both(text, &form_limits, name);
        free(text);
    }
    ck_assert_int_gt(refused, trials / 8);
    ck_assert_int_lt(refused, trials * 3 / 4);
}
END_TEST

/* NaN and the infinities, which JSON cannot spell, refused in a move of
 * the tick's form at the number's pointer, wherever the move stands. */
START_TEST(test_moves_form_nan)
{
    static const char *const spell[3] = {"!nan", "!inf", "!-inf"};
    static doc d;
    for (int at = 0; at < 200; at += 199)
        for (int field = 0; field < 10; field++) {
            d.len = 0;
            put(&d, "{'move':[");
            for (int i = 0; i < 200; i++) {
                char num[10][16];
                for (int k = 0; k < 10; k++)
                    snprintf(num[k], sizeof num[k], "%s", k >= 3 && k < 7 ? "0.5" : "1.25");
                if (i == at)
                    snprintf(num[field], sizeof num[field], "'%s'", spell[field % 3]);
                char buf[320];
                snprintf(buf, sizeof buf,
                         "%s{'id':'m%d','pose':{'position':[%s,%s,%s],'rotation':[%s,%s,%s,%s]},"
                         "'velocity':[%s,%s,%s]}",
                         i ? "," : "", i, num[0], num[1], num[2], num[3], num[4], num[5], num[6], num[7], num[8],
                         num[9]);
                put(&d, buf);
            }
            put(&d, "]}");
            char *text = du_dq(d.text);
            du_body b;
            du_open_marked(&b, text);
            cqp_problem p = {0};
            cqp_decoder dec;
            cqp_decoder_init(&dec, &form_limits, &p);
            du_decoded o = {0};
            ck_assert_int_ne(du_run(D_BATCH, &dec, b.root, &o), 0);
            static const char *const where[10] = {"pose/position/0", "pose/position/1", "pose/position/2",
                                                  "pose/rotation/0", "pose/rotation/1", "pose/rotation/2",
                                                  "pose/rotation/3", "velocity/0",      "velocity/1",
                                                  "velocity/2"};
            char want[64];
            snprintf(want, sizeof want, "/move/%d/%s", at, where[field]);
            ck_assert_msg(strcmp(p.pointer, want) == 0, "%s at %s, want %s", p.detail, p.pointer, want);
            du_release(&o);
            du_close(&b);
            free(text);
        }
}
END_TEST

Suite *proto_moves_suite(void)
{
    Suite *s = suite_create("proto_moves");
    TCase *tc = tcase_create("moves");
    tcase_set_timeout(tc, 60); /* seconds: the 10,000-move body under the sanitizers or a loaded host */
    tcase_add_test(tc, test_moves_as_json);
    tcase_add_test(tc, test_moves_msgpack_numbers);
    tcase_add_test(tc, test_moves_form_as_json);
    tcase_add_test(tc, test_moves_form_nan);
    suite_add_tcase(s, tc);
    return s;
}
