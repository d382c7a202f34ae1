/// @file server/record/record_line.c
/// Writing and reading one line of a --record file (record_line.h). The
/// reader locates members by a scan of the text instead of parsing the
/// line into a tree, because a raw body must come back as its exact bytes
/// (a tree would rewrite numbers and spacing).
#include "record_line.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api/router.h"
#include "cq/world.h"
#include "cqp/decode.h"
#include "cqp/scan.h"

/* ---- writing ----------------------------------------------------------- */

/// True when s[0..n) may be embedded as is: a JSON object or array that
/// jansson reads (so the line stays valid JSON and duplicate-free), on one
/// line, with nothing around it the reader's scan would drop.
static bool raw_json_ok(const char *s, size_t n)
{
    if (n < 2 || (s[0] != '{' && s[0] != '[') || (s[n - 1] != '}' && s[n - 1] != ']'))
        return false;
    if (memchr(s, '\n', n) || memchr(s, '\r', n))
        return false;
    json_t *v = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL);
    json_decref(v);
    return v != NULL;
}

/// Names of the members written as base64, for the final "base64" array.
typedef struct b64_list {
    const char *names[8];
    int count;
} b64_list;

/// ,"key":<text>: a JSON string when s is UTF-8, else base64 (listed).
static void put_text(cqp_buf *out, const char *key, const char *s, size_t n, b64_list *b64)
{
    cqp_buf_printf(out, ",\"%s\":", key);
    if (cqd_utf8_valid(s, n)) {
        cqd_json_put_string(out, s, n);
        return;
    }
    cqp_buf_append(out, "\"", 1);
    cqd_base64_encode(out, s, n);
    cqp_buf_append(out, "\"", 1);
    b64->names[b64->count++] = key;
}

/// ,"key":<bytes>: null when empty, raw when allowed and possible, else text.
static void put_bytes(cqp_buf *out, const char *key, const char *s, size_t n, bool may_be_raw, b64_list *b64)
{
    if (!s || n == 0) {
        cqp_buf_printf(out, ",\"%s\":null", key);
    } else if (may_be_raw && raw_json_ok(s, n)) {
        cqp_buf_printf(out, ",\"%s\":", key);
        cqp_buf_append(out, s, n);
    } else {
        put_text(out, key, s, n, b64);
    }
}

/// ,"key":<bytes> for bytes of format f: a MessagePack body always as
/// base64 (listed), whatever its bytes: one that happens to be UTF-8 (a
/// lone fixint is ASCII) is binary all the same. Else as put_bytes.
static void put_body(cqp_buf *out, const char *key, const char *s, size_t n, cqp_format f, bool may_be_raw,
                     b64_list *b64)
{
    if (f != CQP_MSGPACK || !s || n == 0) {
        put_bytes(out, key, s, n, may_be_raw, b64);
        return;
    }
    cqp_buf_printf(out, ",\"%s\":\"", key);
    cqd_base64_encode(out, s, n);
    cqp_buf_append(out, "\"", 1);
    b64->names[b64->count++] = key;
}

/// ,"key":"msgpack" when f is MessagePack; nothing for JSON, so a line of
/// a JSON session reads as lines always did (and old lines as JSON).
static void put_format(cqp_buf *out, const char *key, cqp_format f)
{
    if (f == CQP_MSGPACK)
        cqp_buf_printf(out, ",\"%s\":\"msgpack\"", key);
}

/// Whether a response's bytes are MessagePack, from its content type
/// (application/msgpack, application/problem+msgpack).
static bool response_is_msgpack(const cqd_response *resp)
{
    return resp->content_type && strstr(resp->content_type, "msgpack");
}

static void put_cstr(cqp_buf *out, const char *key, const char *s, b64_list *b64)
{
    if (s)
        put_text(out, key, s, strlen(s), b64);
    else
        cqp_buf_printf(out, ",\"%s\":null", key);
}

size_t cqd_record_format_head(char out[CQD_RECORD_HEAD_MAX], uint64_t seq, double time)
{
    int n = snprintf(out, CQD_RECORD_HEAD_MAX, "{\"seq\":%llu,\"time\":%.6f", (unsigned long long)seq, time);
    return n < 0 ? 0 : n >= CQD_RECORD_HEAD_MAX ? CQD_RECORD_HEAD_MAX - 1 : (size_t)n;
}

void cqd_record_format_tail(cqp_buf *out, const cqd_request *req, const cqd_response *resp)
{
    b64_list b64 = {.count = 0};
    put_cstr(out, "transport", req->transport, &b64);
    put_cstr(out, "method", req->method, &b64);
    put_cstr(out, "path", req->path, &b64);
    put_cstr(out, "query", req->query, &b64);
    put_cstr(out, "request_id", resp->request_id, &b64);
    cqp_buf_printf(out, ",\"authorization\":%s", req->authorization ? "\"redacted\"" : "null");
    put_format(out, "accept", req->accept);
    put_body(out, "body", req->body, req->body_len, req->body_format, true, &b64);
    put_format(out, "body_format", req->body_format);
    cqp_buf_printf(out, ",\"status\":%d,\"duration_us\":%llu", resp->status,
                   (unsigned long long)(resp->duration_ns / 1000));
    cqp_format rf = response_is_msgpack(resp) ? CQP_MSGPACK : CQP_JSON;
    bool json = rf == CQP_JSON && resp->content_type && strstr(resp->content_type, "json");
    put_body(out, "response", resp->body.data, resp->body.len, rf, json, &b64);
    put_format(out, "response_format", rf);
    if (b64.count) {
        cqp_buf_puts(out, ",\"base64\":[");
        for (int i = 0; i < b64.count; i++)
            cqp_buf_printf(out, "%s\"%s\"", i ? "," : "", b64.names[i]);
        cqp_buf_puts(out, "]");
    }
    cqp_buf_puts(out, "}\n");
}

/* ---- reading ----------------------------------------------------------- */

/// A scalar member's value read by jansson (NUL allowed in strings), or NULL.
static json_t *scalar(const char *s, size_t n)
{
    return json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

/// Copies a string member into out; absent for null. Returns 0, or -1.
static int take_string(const char *s, size_t n, cqp_buf *out, bool *present)
{
    json_t *v = scalar(s, n);
    int rc = 0;
    if (json_is_string(v)) {
        cqp_buf_append(out, json_string_value(v), json_string_length(v));
        if (present)
            *present = true;
    } else if (!json_is_null(v)) {
        rc = -1;
    }
    json_decref(v);
    return rc;
}

/// A "body" or "response" member: raw JSON is taken verbatim, a string decoded.
static int take_bytes(const char *s, size_t n, cqp_buf *out)
{
    if (n > 0 && (s[0] == '{' || s[0] == '[')) {
        cqp_buf_append(out, s, n);
        return 0;
    }
    return take_string(s, n, out, NULL);
}

/// A format member: "json" or "msgpack" (null: JSON). Returns 0, or -1.
static int take_format(const char *s, size_t n, cqp_format *out)
{
    json_t *v = scalar(s, n);
    const char *name = json_string_value(v);
    int rc = 0;
    if (name && strcmp(name, "msgpack") == 0)
        *out = CQP_MSGPACK;
    else if ((name && strcmp(name, "json") == 0) || json_is_null(v))
        *out = CQP_JSON;
    else
        rc = -1;
    json_decref(v);
    return rc;
}

static int take_int(const char *s, size_t n, long long *out)
{
    json_t *v = scalar(s, n);
    int rc = json_is_integer(v) ? 0 : -1;
    if (rc == 0)
        *out = json_integer_value(v);
    json_decref(v);
    return rc;
}

/// The member's buffer for a name the "base64" array may list, or NULL.
static cqp_buf *named_buf(cqd_record_entry *e, const char *name)
{
    static const char *const names[] = {"transport", "method", "path", "query", "request_id", "body", "response"};
    cqp_buf *bufs[] = {&e->transport, &e->method, &e->path, &e->query, &e->request_id, &e->body, &e->response};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return bufs[i];
    return NULL;
}

/// Replaces each member the "base64" array names by its decoded bytes.
static int decode_base64_members(const char *s, size_t n, cqd_record_entry *e, char *err, size_t err_size)
{
    json_t *list = json_loadb(s, n, 0, NULL);
    int rc = json_is_array(list) ? 0 : -1;
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        cqp_buf *b = json_is_string(item) ? named_buf(e, json_string_value(item)) : NULL;
        cqp_buf decoded = {0};
        if (!b || cqd_base64_decode(&decoded, b->data ? b->data : "", b->len) < 0) {
            cqp_buf_free(&decoded);
            rc = -1;
            break;
        }
        cqp_buf_free(b);
        *b = decoded;
    }
    json_decref(list);
    if (rc < 0)
        snprintf(err, err_size, "a member listed in \"base64\" is not base64");
    return rc;
}

/// Dispatches one member; returns 0, or -1 with err set.
static int take_member(const char *key, const char *v, size_t vn, cqd_record_entry *e, bool *seen, char *err,
                       size_t err_size)
{
    int rc = 0;
    if (strcmp(key, "seq") == 0) {
        rc = take_int(v, vn, &e->seq);
        seen[0] = true;
    } else if (strcmp(key, "status") == 0) {
        long long st = 0;
        rc = take_int(v, vn, &st) < 0 || st < 100 || st > 999 ? -1 : 0;
        e->status = (int)st;
        seen[1] = true;
    } else if (strcmp(key, "method") == 0) {
        rc = take_string(v, vn, &e->method, &seen[2]);
    } else if (strcmp(key, "path") == 0) {
        rc = take_string(v, vn, &e->path, &seen[3]);
    } else if (strcmp(key, "transport") == 0) {
        rc = take_string(v, vn, &e->transport, NULL);
    } else if (strcmp(key, "query") == 0) {
        rc = take_string(v, vn, &e->query, &e->has_query);
    } else if (strcmp(key, "request_id") == 0) {
        rc = take_string(v, vn, &e->request_id, NULL);
    } else if (strcmp(key, "authorization") == 0) {
        e->authorization = !(vn == 4 && memcmp(v, "null", 4) == 0);
    } else if (strcmp(key, "body") == 0) {
        rc = take_bytes(v, vn, &e->body);
    } else if (strcmp(key, "response") == 0) {
        rc = take_bytes(v, vn, &e->response);
    } else if (strcmp(key, "body_format") == 0) {
        rc = take_format(v, vn, &e->body_format);
    } else if (strcmp(key, "accept") == 0) {
        rc = take_format(v, vn, &e->accept);
    } else if (strcmp(key, "response_format") == 0) {
        rc = take_format(v, vn, &e->response_format);
    }
    if (rc < 0)
        snprintf(err, err_size, "member \"%s\" has the wrong type", key);
    return rc;
}

/// What the member walk of cqd_record_parse gathers.
typedef struct parse_ctx {
    cqd_record_entry *e;
    bool seen[4]; // seq, status, method, path
    json_t *keys; // every member name so far (an object used as a set)
    const char *b64;
    size_t b64_len;
    char *err;
    size_t err_size;
} parse_ctx;

/// Writes s[0..n) into out (size bytes) as printable ASCII: other bytes as
/// \xHH, cut to fit. For quoting what a record holds in a message.
static void quoted(char *out, size_t size, const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n && w + 5 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[w++] = (char)c;
        else
            w += (size_t)snprintf(out + w, size - w, "\\x%02x", c);
    }
    out[w] = '\0';
}

/// Adds the member name key (key_len bytes) to p->keys. 0, or -1 with
/// p->err set: a name seen before (the recorder never writes one twice,
/// and which of the two would count is anybody's guess), or holding NUL.
static int note_key(parse_ctx *p, const char *key, size_t key_len)
{
    char shown[80];
    quoted(shown, sizeof shown, key, key_len);
    if (memchr(key, '\0', key_len)) {
        snprintf(p->err, p->err_size, "the member name \"%s\" holds a NUL byte", shown);
        return -1;
    }
    if (json_object_get(p->keys, key)) {
        snprintf(p->err, p->err_size, "member \"%s\" appears twice", shown);
        return -1;
    }
    if (json_object_set_new(p->keys, key, json_null()) < 0) {
        snprintf(p->err, p->err_size, "out of memory");
        return -1;
    }
    return 0;
}

static int take_member_text(const cqp_member *m, void *arg)
{
    parse_ctx *p = arg;
    json_t *k = scalar(m->key, m->key_len);
    if (!json_is_string(k) || note_key(p, json_string_value(k), json_string_length(k)) < 0) {
        if (!json_is_string(k))
            snprintf(p->err, p->err_size, "a member name is not a string");
        json_decref(k);
        return 1;
    }
    char key[32];
    snprintf(key, sizeof key, "%s", json_string_value(k));
    json_decref(k);
    if (strcmp(key, "base64") == 0) {
        p->b64 = m->value;
        p->b64_len = m->value_len;
        return 0;
    }
    return take_member(key, m->value, m->value_len, p->e, p->seen, p->err, p->err_size) < 0 ? 1 : 0;
}

bool cqd_request_id_valid(const char *id, size_t n, char *why, size_t why_size)
{
    if (n > CQD_REQUEST_ID_MAX) {
        snprintf(why, why_size, "is %zu bytes long (at most %d)", n, CQD_REQUEST_ID_MAX);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!cq_world_id_char(id[i])) {
            snprintf(why, why_size, "has the byte 0x%02X at offset %zu (only [A-Za-z0-9._:-])", (unsigned char)id[i],
                     i);
            return false;
        }
    }
    return true;
}

/// True when some route takes method (HEAD: any GET route).
static bool routed_method(const char *method)
{
    int count;
    const cqd_route *routes = cqd_routes(&count);
    for (int i = 0; i < count; i++)
        if (strcmp(routes[i].method, method) == 0 || (strcmp(method, "HEAD") == 0 && strcmp(routes[i].method, "GET") == 0))
            return true;
    return false;
}

/// The statuses a request whose method no route takes can be answered
/// with: refused by the transport (400 framing, 413, 503), 401 before
/// routing, 404 for an unknown path, 405 for a known one.
static bool unrouted_status(int status)
{
    return status == 400 || status == 401 || status == 404 || status == 405 || status == 413 || status == 503;
}

/// The method and path the server could have recorded: a method some route
/// takes, any other only with an answer such a method gets (a stream
/// request may have had any method: one that is no HTTP token is then
/// reported, never sent, by replay_one), and an origin-form path, never an
/// absolute URI. 0, or -1 with err.
static int check_target(const cqd_record_entry *e, char *err, size_t err_size)
{
    char shown[80];
    quoted(shown, sizeof shown, e->method.data, e->method.len);
    if (!routed_method(e->method.data) && !unrouted_status(e->status)) {
        snprintf(err, err_size, "no route takes the method \"%s\", yet status %d was recorded", shown, e->status);
        return -1;
    }
    if (e->path.data[0] != '/') {
        quoted(shown, sizeof shown, e->path.data, e->path.len);
        snprintf(err, err_size, "the path \"%s\" does not start with '/'", shown);
        return -1;
    }
    return 0;
}

/// Refuses a record whose fields the recorder could not have written, so
/// nothing replay sends comes from a line edited or made by hand: text
/// cut at a NUL (every one was a C string), or a request id outside the
/// server's rule (the one value that goes into a header). 0, or -1 with err.
static int check_fields(const cqd_record_entry *e, char *err, size_t err_size)
{
    static const char *const names[] = {"transport", "method", "path", "query", "request_id"};
    const cqp_buf *text[] = {&e->transport, &e->method, &e->path, &e->query, &e->request_id};
    for (size_t k = 0; k < sizeof text / sizeof text[0]; k++) {
        const char *nul = text[k]->len ? memchr(text[k]->data, '\0', text[k]->len) : NULL;
        if (nul) {
            snprintf(err, err_size, "\"%s\" holds a NUL byte at offset %zu", names[k], (size_t)(nul - text[k]->data));
            return -1;
        }
    }
    char why[96];
    if (!cqd_request_id_valid(e->request_id.data, e->request_id.len, why, sizeof why)) {
        char shown[80];
        quoted(shown, sizeof shown, e->request_id.data, e->request_id.len);
        snprintf(err, err_size, "the request id \"%s\" %s, which the server never writes", shown, why);
        return -1;
    }
    return check_target(e, err, err_size);
}

int cqd_record_parse(const char *s, size_t n, cqd_record_entry *e, char *err, size_t err_size)
{
    memset(e, 0, sizeof *e);
    parse_ctx p = {.e = e, .keys = json_object(), .err = err, .err_size = err_size};
    if (!p.keys) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    size_t at = 0;
    int rc = cqp_scan_object(s, n, take_member_text, &p, &at);
    json_decref(p.keys);
    if (rc != 0) {
        if (rc < 0)
            snprintf(err, err_size, "not a well-formed JSON object (at byte %zu)", at);
        cqd_record_entry_free(e);
        return -1;
    }
    bool *seen = p.seen;
    size_t b64_len = p.b64_len;
    if (!seen[0] || !seen[1] || !seen[2] || !seen[3]) {
        snprintf(err, err_size, "a record needs \"seq\", \"method\", \"path\" and \"status\"");
        cqd_record_entry_free(e);
        return -1;
    }
    if (b64_len && !(b64_len == 4 && memcmp(p.b64, "null", 4) == 0) &&
        decode_base64_members(p.b64, b64_len, e, err, err_size) < 0) {
        cqd_record_entry_free(e);
        return -1;
    }
    cqp_buf *all[] = {&e->transport, &e->method, &e->path, &e->query, &e->request_id, &e->body, &e->response};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        cqp_buf_append(all[k], "", 0); // NUL-terminated even when empty
        if (all[k]->oom) {
            snprintf(err, err_size, "out of memory");
            cqd_record_entry_free(e);
            return -1;
        }
    }
    if (check_fields(e, err, err_size) < 0) {
        cqd_record_entry_free(e);
        return -1;
    }
    return 0;
}

void cqd_record_entry_free(cqd_record_entry *e)
{
    cqp_buf *all[] = {&e->transport, &e->method, &e->path, &e->query, &e->request_id, &e->body, &e->response};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        cqp_buf_free(all[k]);
}
