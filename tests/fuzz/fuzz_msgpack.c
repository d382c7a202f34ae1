/* Fuzz target: a MessagePack request body (docs/FUZZING.md).
 *
 * The input is one body. cqp_mp_check's verdict on it, at CQP_MP_MAX_DEPTH
 * and at a depth the last byte picks, must be mp_oracle.h's, a validator
 * written from the MessagePack specification that shares nothing with it;
 * a refusal is a malformed-msgpack problem, and accepted or refused the
 * check gives back all the scratch it took (even when its allocation is
 * made to fail). An accepted body then goes through every decoder of
 * cqp/decode.h, whose results must hold fuzz_decode.h's invariants: a
 * problem of a decoder's kind whose pointer names a place in the body (as
 * mp_oracle.h reads it), or finite, valid output; nothing leaks, also when
 * one of the decoder's allocations fails. Last, the body goes to the
 * stream transport in process (cqd_stream_answer), in a frame's envelope
 * to the route of a decoder, and the input alone as an envelope: each
 * reply must be one well-formed MessagePack frame, and where the decoder
 * refused the body, the reply must carry the decoder's problem. */
#include <msgpuck.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_TARGET "fuzz_msgpack"
#include "fuzz_check.h"
#include "fuzz_decode.h"
#include "fuzz_server.h"
#include "net/stream_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FNV-1a of the input: which allocation to fail, which route to take when
 * no decoder accepted the body, deterministically per input. */
static uint64_t input_hash(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 0x100000001b3u;
    return h;
}

/* ---- the check against the oracle -------------------------------------- */

/* cqp_mp_check at max_depth, with allocation number fail_at failed (-1:
 * none); returns its verdict and fills *p. Balanced whatever happens. */
static int checked(const uint8_t *data, size_t size, int max_depth, long fail_at, cqp_problem *p)
{
    long blocks = fz_blocks;
    fz_fail_at = fail_at;
    fz_failed = false;
    int rc = cqp_mp_check((const char *)data, size, max_depth, p);
    fz_fail_at = -1;
    check(rc == 0 || rc == -1, "cqp_mp_check returned neither 0 nor -1");
    check(fz_blocks == blocks, "cqp_mp_check did not give back its scratch");
    if (rc != 0) {
        check(p->kind == CQP_P_BAD_MSGPACK || (p->kind == CQP_P_BUSY && fz_failed),
              "cqp_mp_check refused with another kind than malformed-msgpack");
        check(p->pointer[0] == '\0', "cqp_mp_check's refusal has a pointer");
        check(p->detail[0] && mpo_utf8((const uint8_t *)p->detail, strlen(p->detail)),
              "cqp_mp_check's detail is empty or not UTF-8");
    }
    return rc;
}

/* The check and the oracle agree at max_depth; true when both accept. */
static bool check_agrees(const uint8_t *data, size_t size, int max_depth, uint64_t hash)
{
    int deepest;
    int oracle_depth = max_depth > CQP_MP_MAX_DEPTH ? CQP_MP_MAX_DEPTH : max_depth;
    bool oracle = mpo_check(data, size, oracle_depth, &deepest);
    cqp_problem p;
    long before = fz_allocs;
    int rc = checked(data, size, max_depth, -1, &p);
    if (oracle != (rc == 0))
        fprintf(stderr, "fuzz_msgpack: at max_depth %d the oracle %s, cqp_mp_check %s: %s\n", max_depth,
                oracle ? "accepts" : "refuses", rc == 0 ? "accepts" : "refuses", rc == 0 ? "" : p.detail);
    check(oracle == (rc == 0), "cqp_mp_check and the oracle disagree");
    long used = fz_allocs - before;
    if (used > 0) {
        // The same input without its scratch: refused, as out of memory.
        cqp_problem busy;
        int again = checked(data, size, max_depth, fz_allocs + (long)(hash % (uint64_t)used), &busy);
        check(again == -1 && busy.kind == CQP_P_BUSY, "cqp_mp_check without its scratch was not a 503");
    }
    return oracle;
}

/* cqp_body_open takes MessagePack exactly as the check does, but for the
 * empty body, which it opens as absent (no body, not a malformed one). */
static void check_body_open(const uint8_t *data, size_t size, bool accepted)
{
    cqp_body body;
    cqp_problem p;
    long blocks = fz_blocks;
    int rc = cqp_body_open(&body, CQP_MSGPACK, (const char *)data, size, &p);
    if (size == 0) {
        check(rc == 0 && !cqp_value_present(body.root), "cqp_body_open did not open an empty body as absent");
        return;
    }
    check((rc == 0) == accepted, "cqp_body_open and cqp_mp_check disagree");
    check(rc != 0 || (body.root.ref == (const void *)data && body.root.format == CQP_MSGPACK && !body.tree),
          "cqp_body_open's view is not of the body's bytes");
    cqp_body_close(&body);
    check(fz_blocks == blocks, "cqp_body_open leaked");
}

/* ---- the decoders ------------------------------------------------------- */

/* Decoder k again with one of the allocations it made (used of them)
 * failed: a 503 and nothing left allocated. */
static void decode_without_memory(int k, cqp_value body, long used, uint64_t hash)
{
    fz_results r;
    fz_fail_at = fz_allocs + (long)(hash % (uint64_t)used);
    fz_failed = false;
    fz_run_one(k, body, &r);
    fz_fail_at = -1;
    check(fz_failed, "a decoder made other allocations the second time");
    if (r.rc[k] != -1 || r.problem[k].kind != CQP_P_BUSY)
        fprintf(stderr, "fuzz_msgpack: decoder %s without allocation %ld of its %ld\n", fz_decoder_names[k],
                (long)(hash % (uint64_t)used), used);
    check(r.rc[k] == -1, "a decoder succeeded when an allocation failed");
    fz_check_result(k, &r);
    check(r.problem[k].kind == CQP_P_BUSY && r.problem[k].pointer[0] == '\0',
          "a failed allocation was not a 503 for the whole body");
    fz_failed = false;
}

/* Every decoder over the accepted body; r keeps the results (released). */
static void decode(const uint8_t *data, size_t size, uint64_t hash, fz_results *r)
{
    cqp_value body = cqp_value_mp((const char *)data);
    fz_doc doc = fz_mp_doc(data + size);
    long blocks = fz_blocks;
    for (int k = 0; k < FZ_DECODERS; k++) {
        long before = fz_allocs;
        fz_run_one(k, body, r);
        long used = fz_allocs - before;
        fz_check_result(k, r);
        if (r->rc[k] == 0)
            fz_release_one(k, r);
        if (used > 0)
            decode_without_memory(k, body, used, hash);
    }
    fz_check_pointers(r, &doc, data);
    check(fz_blocks == blocks, "a decoded request did not release all it held");
}

/* ---- the stream --------------------------------------------------------- */

/* The route whose handler runs decoder k. */
static const struct {
    const char *method, *path;
} routes[FZ_DECODERS] = {
    [FZ_PAIR] = {"POST", "/v1/pair"},
    [FZ_PAIRS] = {"POST", "/v1/pairs"},
    [FZ_SHAPE_PUT] = {"PUT", "/v1/worlds/arena/shapes/" FZ_PUT_ID},
    [FZ_BATCH] = {"POST", "/v1/worlds/arena/batch"},
    [FZ_WORLD] = {"PUT", "/v1/worlds/arena"},
    [FZ_CONTACTS] = {"POST", "/v1/worlds/arena/contacts"},
    [FZ_RAYCAST] = {"POST", "/v1/worlds/arena/raycast"},
    [FZ_SWEEP] = {"POST", "/v1/worlds/arena/sweep"},
    [FZ_OVERLAP] = {"POST", "/v1/worlds/arena/overlap"},
};

static bool allowed_status(int64_t status)
{
    static const int ok[] = {200, 201, 204, 400, 404, 405, 409, 413, 422, 429, 503};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (status == ok[i])
            return true;
    return false;
}

/* What a reply frame says, read by the oracle's reader. */
typedef struct reply {
    const uint8_t *end;
    const uint8_t *id, *body; /* the members' values */
    int64_t status;
} reply;

/* The member key of map m as a string, NUL-terminated into out (size
 * bytes), or false when it is absent or not a string. */
static bool member_text(const uint8_t *m, const uint8_t *end, const char *key, char *out, size_t size)
{
    const uint8_t *v = m ? mpo_member(m, end, key, strlen(key)) : NULL;
    if (!v || mpo_head_at(v, end).kind != MPO_STR)
        return false;
    size_t n;
    const uint8_t *s = mpo_str(v, end, &n);
    if (n >= size)
        n = size - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    return true;
}

/* out holds exactly one frame: 0xce, its length big-endian, one map
 * {"id", "status", "request_id", "body"} the oracle accepts, with an
 * allowed status; a problem body is a problem+msgpack map of that status. */
static reply check_frame(const cqp_buf *out)
{
    check(!out->oom, "out of memory");
    check(out->len > CQD_FRAME_PREFIX && (uint8_t)out->data[0] == CQD_FRAME_MARK, "a reply that is not a frame");
    const uint8_t *env = (const uint8_t *)out->data + CQD_FRAME_PREFIX;
    size_t n = out->len - CQD_FRAME_PREFIX;
    check(mpo_be((const uint8_t *)out->data + 1, 4) == n, "a reply frame's length is not its envelope's");
    int deepest;
    check(mpo_check(env, n, 64, &deepest), "a reply frame's envelope is not valid MessagePack");
    reply r = {.end = env + n};
    check(mpo_head_at(env, r.end).kind == MPO_MAP, "a reply envelope that is not a map");
    r.id = mpo_member(env, r.end, "id", 2);
    r.body = mpo_member(env, r.end, "body", 4);
    const uint8_t *status = mpo_member(env, r.end, "status", 6);
    char request_id[128];
    check(r.id && r.body && status && member_text(env, r.end, "request_id", request_id, sizeof request_id),
          "a reply envelope without id, status, request_id or body");
    check(mpo_head_at(status, r.end).kind == MPO_UINT, "a reply status that is not an integer");
    r.status = mpo_int(status);
    check(allowed_status(r.status), "a reply status outside the API's set");
    if (r.status >= 400) {
        char type[96], detail[8];
        const uint8_t *ps = mpo_member(r.body, r.end, "status", 6);
        check(member_text(r.body, r.end, "type", type, sizeof type) &&
                  strncmp(type, "urn:collisiond:problem:", 23) == 0 &&
                  member_text(r.body, r.end, "detail", detail, sizeof detail),
              "a refusal without a problem+msgpack body");
        check(ps && mpo_head_at(ps, r.end).kind == MPO_UINT && mpo_int(ps) == r.status,
              "a problem's status is not its reply's");
    }
    return r;
}

/* The envelope {"id": 7, "method", "path", "body": the body's bytes}. */
static char *envelope(int k, const uint8_t *body, size_t size, size_t *len)
{
    size_t method = strlen(routes[k].method), path = strlen(routes[k].path);
    char *e = malloc(64 + method + path + size), *w = e;
    if (!e)
        abort();
    w = mp_encode_map(w, 4);
    w = mp_encode_str(w, "id", 2);
    w = mp_encode_uint(w, 7);
    w = mp_encode_str(w, "method", 6);
    w = mp_encode_str(w, routes[k].method, (uint32_t)method);
    w = mp_encode_str(w, "path", 4);
    w = mp_encode_str(w, routes[k].path, (uint32_t)path);
    w = mp_encode_str(w, "body", 4);
    memcpy(w, body, size);
    *len = (size_t)(w - e) + size;
    return e;
}

/* A reply refusing a malformed frame: 400 malformed-msgpack, and the id
 * not trusted (nil). */
static void check_malformed(const reply *rep, const char *what)
{
    char type[96] = "";
    member_text(rep->body, rep->end, "type", type, sizeof type);
    check(rep->status == 400 && strcmp(type, "urn:collisiond:problem:malformed-msgpack") == 0, what);
    check(mpo_head_at(rep->id, rep->end).kind == MPO_NIL, "the reply to a malformed frame trusts its id");
}

/* The reply to a frame whose body a decoder refused (problem p) carries
 * that problem, pointer and detail included. A body that is not a map
 * the pipeline refuses before any decoder (request.c's open_body) as the
 * decoders would (400 wrong-type at ""), in its own words: only there the
 * detail differs. */
static void check_refusal(const reply *rep, const cqp_problem *p, bool map)
{
    char pointer[sizeof p->pointer], detail[sizeof p->detail];
    check(rep->status == cqp_problem_status(p->kind), "the stream's status is not the decoder's problem's");
    bool has_pointer = member_text(rep->body, rep->end, "pointer", pointer, sizeof pointer);
    check(has_pointer == (p->pointer[0] != '\0') && (!has_pointer || strcmp(pointer, p->pointer) == 0),
          "the stream's problem pointer is not the decoder's");
    bool same = member_text(rep->body, rep->end, "detail", detail, sizeof detail) &&
                (!map || strcmp(detail, p->detail) == 0);
    if (!same)
        fprintf(stderr, "fuzz_msgpack: the stream says \"%s\", the decoder \"%s\"\n", detail, p->detail);
    check(same, "the stream's problem detail is not the decoder's");
}

/* One request through the stream, from the starting state. */
static reply answer(cqd_server *srv, const char *request, size_t len, cqp_buf *out)
{
    fuzz_server_reset(srv);
    cqd_stream_answer(srv, CQP_MSGPACK, request, len, 0, out);
    return check_frame(out);
}

/* The body in a frame to decoder k's route (the first decoder that took
 * it, else one the hash picks). */
static void stream_body(cqd_server *srv, const uint8_t *data, size_t size, const fz_results *r, int deepest,
                        uint64_t hash)
{
    int k = 0;
    while (k < FZ_DECODERS && r->rc[k] != 0)
        k++;
    if (k == FZ_DECODERS)
        k = (int)(hash % FZ_DECODERS);
    size_t len;
    char *e = envelope(k, data, size, &len);
    cqp_buf out = {0};
    reply rep = answer(srv, e, len, &out);
    if (deepest >= CQP_MP_MAX_DEPTH) {
        // The envelope's own level takes the body past the limit.
        check_malformed(&rep, "a body nested to the limit was not a malformed frame");
    } else {
        check(mpo_head_at(rep.id, rep.end).kind == MPO_UINT && mpo_int(rep.id) == 7,
              "a reply does not echo the frame's id");
        // nil is the envelope's "no body", not the body the decoder saw.
        if (r->rc[k] != 0 && data[0] != 0xc0)
            check_refusal(&rep, &r->problem[k], mpo_head_at(data, data + size).kind == MPO_MAP);
    }
    cqp_buf_free(&out);
    free(e);
}

/* The input itself as a frame's envelope: where the oracle refuses it, a
 * malformed frame with no id trusted. */
static void stream_envelope(cqd_server *srv, const uint8_t *data, size_t size)
{
    int deepest;
    bool valid = mpo_check(data, size, CQP_MP_MAX_DEPTH, &deepest);
    cqp_buf out = {0};
    reply rep = answer(srv, (const char *)data, size, &out);
    if (!valid)
        check_malformed(&rep, "an invalid frame was not refused as malformed");
    cqp_buf_free(&out);
}

/* The one server, with fz_limits so the handlers decode as decode() did;
 * made on first use, after the counting allocators are in. */
static cqd_server *server(void)
{
    static cqd_server srv;
    static bool ready;
    if (!ready) {
        fz_install_allocators();
        fuzz_server_init(&srv, &fz_limits);
        ready = true;
    }
    return &srv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cqd_server *srv = server();
    uint64_t hash = input_hash(data, size);
    bool accepted = check_agrees(data, size, CQP_MP_MAX_DEPTH, hash);
    int depth = size ? data[size - 1] % (CQP_MP_MAX_DEPTH + 4) : 0; // beyond the limit too
    if (depth != CQP_MP_MAX_DEPTH)
        check_agrees(data, size, depth, hash);
    check_body_open(data, size, accepted);
    if (accepted) {
        fz_results r;
        int deepest;
        mpo_check(data, size, CQP_MP_MAX_DEPTH, &deepest);
        decode(data, size, hash, &r);
        stream_body(srv, data, size, &r, deepest, hash);
    }
    if (size > 0)
        stream_envelope(srv, data, size);
    return 0;
}
