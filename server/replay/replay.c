/// @file server/replay/replay.c
/// The replay subcommand (replay.h): reads the recording line by line,
/// re-sends each request with its recorded X-Request-Id, compares, reports.
#include "replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "record/record_line.h"

#define PROGRAM "collisiond replay"

/// Seconds one send or receive may take before the replay gives up.
#define REPLAY_TIMEOUT_S 60

/// Sent for a request whose recorded header was refused (a recorded 401),
/// so the refusal replays; no real token is ever written down.
#define REJECTED_TOKEN "Bearer collisiond-replay-refused-token"

typedef struct replay_opts {
    const char *file;
    const char *url;
    const char *token; ///< --token or COLLISIOND_TOKEN, or NULL
    bool strict;
    bool stop_on_first;
} replay_opts;

static void usage(FILE *to)
{
    fprintf(to,
            "Usage: collisiond replay FILE --against http://HOST:PORT [--token TOKEN] [--strict] [--stop-on-first]\n\n"
            "Re-sends every request of a --record FILE (\"-\": standard input), in order, over one\n"
            "keep-alive connection, and reports each response whose status or body differs.\n\n"
            "  --against URL     the daemon to replay against\n"
            "  --token TOKEN     bearer token for the requests recorded with an Authorization header\n"
            "                    (default: $COLLISIOND_TOKEN)\n"
            "  --strict          compare everything; by default the bodies of GET /metrics and\n"
            "                    GET /metrics/fallbacks and every \"duration_us\" number are not compared\n"
            "  --stop-on-first   stop at the first difference\n"
            "  -h, --help        print this help and exit\n\n"
            "Exit status: 0 no difference, 1 differences, 2 usage, file or connection error.\n");
}

/// The value of --name VALUE or --name=VALUE at argv[*i], advancing *i;
/// NULL when argv[*i] is not --name. *missing is set when the value is.
static const char *option_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

/// Fills o from argv. Returns -1 (exit 2, message printed), 0 (run), 1 (--help printed).
static int parse_args(int argc, char **argv, replay_opts *o)
{
    *o = (replay_opts){.token = getenv("COLLISIOND_TOKEN")};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(a, "--strict") == 0) {
            o->strict = true;
        } else if (strcmp(a, "--stop-on-first") == 0) {
            o->stop_on_first = true;
        } else if ((v = option_value(argc, argv, &i, "--against", &missing)) != NULL) {
            o->url = v;
        } else if ((v = option_value(argc, argv, &i, "--token", &missing)) != NULL) {
            o->token = v;
        } else if (missing) {
            fprintf(stderr, PROGRAM ": %s needs a value\n", a);
            return -1;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, PROGRAM ": unknown option '%s' (see --help)\n", a);
            return -1;
        } else if (o->file) {
            fprintf(stderr, PROGRAM ": one recording at a time ('%s' and '%s')\n", o->file, a);
            return -1;
        } else {
            o->file = a;
        }
    }
    if (!o->file || !o->url) {
        fprintf(stderr, PROGRAM ": %s is required\n", o->file ? "--against URL" : "a recording FILE");
        usage(stderr);
        return -1;
    }
    if (o->token && !o->token[0])
        o->token = NULL;
    for (const char *p = o->token; p && *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) { // it goes into a header: a CR or LF would end it
            fprintf(stderr, PROGRAM ": the token holds a control character (byte 0x%02X)\n", (unsigned char)*p);
            return -1;
        }
    }
    return 0;
}

/// Prints up to n bytes of s from off, escaping what is not printable ASCII.
static void print_excerpt(const char *label, const char *s, size_t len, size_t off)
{
    size_t from = off > 24 ? off - 24 : 0, to = len - off > 40 ? off + 40 : len;
    printf("    %-9s %s", label, from > 0 ? "..." : "");
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            putchar(c);
        else
            printf("\\x%02x", c);
    }
    printf("%s\n", to < len ? "..." : "");
}

/// A request's path and query as printable text (at most 200 bytes of each).
static void print_target(const cqd_record_entry *e)
{
    const cqp_buf *parts[2] = {&e->path, e->has_query ? &e->query : NULL};
    for (int p = 0; p < 2 && parts[p]; p++) {
        if (p)
            putchar('?');
        for (size_t i = 0; i < parts[p]->len && i < 200; i++) {
            unsigned char c = (unsigned char)parts[p]->data[i];
            if (c > 0x20 && c < 0x7f)
                putchar(c);
            else
                printf("%%%02X", c);
        }
    }
}

/// Longest excerpt of a differing MessagePack value, as JSON text.
#define VALUE_EXCERPT 64

/// Prints a MessagePack value as JSON text (whose writer escaped every
/// control character).
static void print_value(const char *label, const char *value)
{
    cqp_buf text = {0};
    cqd_replay_value_text(&text, value, VALUE_EXCERPT);
    printf("    %-9s %s\n", label, text.data ? text.data : "");
    cqp_buf_free(&text);
}

/// How the bodies compared: the same, or first different where.
typedef struct body_diff {
    bool differs;
    bool as_values;          ///< MessagePack compared as values (else bytes)
    size_t eo, go;           ///< the first difference's offset in each
    cqd_replay_where where;  ///< as_values: the place
} body_diff;

/// Compares the bodies: as values when the recorded response was
/// MessagePack and both are well-formed, else byte for byte.
static body_diff compare_bodies(const replay_opts *o, const cqd_record_entry *e, const char *exp, const char *gd,
                                size_t got_len)
{
    body_diff d = {0};
    if (e->response_format == CQP_MSGPACK) {
        cqd_replay_values v = cqd_replay_same_values(exp, e->response.len, gd, got_len, !o->strict, &d.where);
        if (v != CQD_REPLAY_NOT_MSGPACK) {
            d.as_values = true;
            d.differs = v == CQD_REPLAY_DIFFERENT_VALUES;
            d.eo = d.where.exp_off;
            d.go = d.where.got_off;
            return d;
        }
    }
    d.differs = !cqd_replay_same(exp, e->response.len, gd, got_len, !o->strict, &d.eo, &d.go);
    return d;
}

/// The body's lines of a report: where, then an excerpt of each side (the
/// differing MessagePack values as JSON text).
static void print_body_diff(const body_diff *d, const char *exp, size_t exp_len, const char *gd, size_t got_len)
{
    if (d->as_values) {
        printf("  body (MessagePack, compared as values): first difference at %s (byte %zu",
               d->where.pointer[0] ? d->where.pointer : "the root", d->eo);
        if (d->go != d->eo)
            printf(", byte %zu of the reply", d->go);
        printf("); expected %zu bytes, got %zu\n", exp_len, got_len);
        print_value("expected:", exp + d->eo);
        print_value("got:", gd + d->go);
        return;
    }
    printf("  body: first difference at byte %zu", d->eo);
    if (d->go != d->eo)
        printf(" (byte %zu of the reply)", d->go);
    printf("; expected %zu bytes, got %zu\n", exp_len, got_len);
    print_excerpt("expected:", exp, exp_len, d->eo);
    print_excerpt("got:", gd, got_len, d->go);
}

/// Compares one replayed response with its record; prints the report and
/// returns true when it differs.
static bool report(const replay_opts *o, const cqd_record_entry *e, int status, const cqp_buf *got)
{
    bool status_differs = status != e->status;
    // HTTP sends no body with a HEAD response, whatever the pipeline wrote.
    bool compare_body = strcmp(e->method.data, "HEAD") != 0 &&
                        (o->strict || !cqd_replay_body_varies(e->method.data, e->path.data));
    const char *exp = e->response.data ? e->response.data : "", *gd = got->data ? got->data : "";
    body_diff d = {0};
    if (compare_body)
        d = compare_bodies(o, e, exp, gd, got->len);
    if (!status_differs && !d.differs)
        return false;
    printf("seq %lld: %s ", e->seq, e->method.data);
    print_target(e);
    printf(" (request id %s)\n", e->request_id.len ? e->request_id.data : "none");
    if (status_differs)
        printf("  status: expected %d, got %d\n", e->status, status);
    if (d.differs)
        print_body_diff(&d, exp, e->response.len, gd, got->len);
    return true;
}

/// Re-sends one record. Returns 0 (same), 1 (differs) or -1 (error printed).
static int replay_one(const replay_opts *o, cqd_hc *hc, cqd_record_entry *e, cqp_buf *got)
{
    if (!cqd_hc_is_token(e->method.data)) { // a stream request may have had any method
        printf("seq %lld: ", e->seq);
        print_target(e);
        printf(" (request id %s)\n  method cannot be sent over HTTP\n",
               e->request_id.len ? e->request_id.data : "none");
        return 1;
    }
    const char *auth = NULL;
    char bearer[600];
    if (e->authorization && e->status == 401) {
        auth = REJECTED_TOKEN;
    } else if (e->authorization && o->token) {
        snprintf(bearer, sizeof bearer, "Bearer %s", o->token);
        auth = bearer;
    }
    bool stream = e->transport.data && strcmp(e->transport.data, "stream") == 0;
    const char *query = NULL;
    if (e->has_query)
        query = stream ? cqd_replay_drop_pretty(e->query.data) : e->query.data;
    if (query && stream && !query[0])
        query = NULL;
    cqd_hc_request rq = {.method = e->method.data,
                         .path = e->path.data,
                         .query = query,
                         .request_id = e->request_id.data,
                         .authorization = auth,
                         .content_type = e->body_format == CQP_MSGPACK ? cqp_format_media_type(CQP_MSGPACK) : NULL,
                         .accept = e->accept == CQP_MSGPACK ? cqp_format_media_type(CQP_MSGPACK) : NULL,
                         .body = e->body.data ? e->body.data : "",
                         .body_len = e->body.len};
    int status = 0;
    char err[300];
    if (cqd_hc_exchange(hc, &rq, &status, got, err, sizeof err) < 0) {
        fprintf(stderr, PROGRAM ": seq %lld: %s\n", e->seq, err);
        return -1;
    }
    return report(o, e, status, got) ? 1 : 0;
}

/// Reads and replays the whole recording; returns the exit status.
static int run(const replay_opts *o, FILE *in, cqd_hc *hc)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long long lineno = 0, replayed = 0, differing = 0;
    int status = 0;
    cqp_buf got = {0};
    while ((n = getline(&line, &cap, in)) >= 0) {
        lineno++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (n == 0)
            continue;
        cqd_record_entry e;
        char err[200];
        if (cqd_record_parse(line, (size_t)n, &e, err, sizeof err) < 0) {
            fprintf(stderr, PROGRAM ": %s:%lld: not a record: %s\n", o->file, lineno, err);
            status = 2;
            break;
        }
        int rc = replay_one(o, hc, &e, &got);
        cqd_record_entry_free(&e);
        if (rc < 0) {
            status = 2;
            break;
        }
        replayed++;
        differing += rc;
        if (rc && o->stop_on_first)
            break;
    }
    if (status == 0 && ferror(in)) {
        fprintf(stderr, PROGRAM ": cannot read %s: %s\n", o->file, strerror(errno));
        status = 2;
    }
    free(line);
    cqp_buf_free(&got);
    printf("replayed %lld, differing %lld\n", replayed, differing);
    return status ? status : differing ? 1 : 0;
}

int cqd_replay_main(int argc, char **argv)
{
    replay_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 2 : 0;
    cqd_hc hc;
    char err[300];
    if (cqd_hc_init(&hc, o.url, REPLAY_TIMEOUT_S, err, sizeof err) < 0) {
        fprintf(stderr, PROGRAM ": --against: %s\n", err);
        return 2;
    }
    FILE *in = strcmp(o.file, "-") == 0 ? stdin : fopen(o.file, "r");
    if (!in) {
        fprintf(stderr, PROGRAM ": cannot open %s: %s\n", o.file, strerror(errno));
        cqd_hc_free(&hc);
        return 2;
    }
    int status = run(&o, in, &hc);
    if (in != stdin)
        fclose(in);
    cqd_hc_free(&hc);
    return status;
}
