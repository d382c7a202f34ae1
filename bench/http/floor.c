/* http-floor: the least any daemon built on the libraries issue 5 names can
 * spend on `POST /v1/pair`. It runs libmicrohttpd exactly as the daemon does
 * (server/net/http.c: epoll, an internal pool of threads, the same per-connection
 * memory) and answers every POST with a fixed body read from a file; with
 * --parse it first parses the request body with jansson as the daemon does
 * (proto/src/decode.c: JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, from a bump
 * arena as server/net/json_arena.c gives it). No routing, no validation, no
 * geometry, no metrics, no logging. run.sh drives it with the same wrk
 * settings as the daemon and nginx, so the table shows how much of nginx's
 * rate the libraries alone leave.
 *
 *   http-floor PORT_FILE ANSWER_FILE THREADS [--parse]
 *
 * Listens on an ephemeral 127.0.0.1 port, writes the port to PORT_FILE and
 * serves until SIGTERM or SIGINT. */
#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The request body is kept up to this size; bench requests are far
 * smaller, and a larger one just drops the connection (no 413 here). */
#define BODY_CAP 4096
/* jansson's allocations for one parse come from a per-thread arena of this size. */
#define ARENA_CAP (64 * 1024)

static const char *answer;
static size_t answer_len;
static bool parse;

/* A bump arena per thread: every parse starts it empty (see answer_request),
 * so a free is nothing. A parse that outgrows it fails, and the request is
 * answered 500, which wrk counts. */
static _Thread_local struct {
    size_t used;
    _Alignas(16) unsigned char mem[ARENA_CAP];
} arena;

static void *arena_alloc(size_t n)
{
    if (n > ARENA_CAP)
        return NULL;
    n = (n + 15) & ~(size_t)15;
    if (n > ARENA_CAP - arena.used)
        return NULL;
    void *p = arena.mem + arena.used;
    arena.used += n;
    return p;
}

static void arena_free(void *p) { (void)p; }

/* One request's body, in MHD's per-request pointer. */
typedef struct body {
    size_t len;
    char data[BODY_CAP];
} body;

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* The whole body has arrived: parse it if asked, then the fixed answer. */
static enum MHD_Result answer_request(struct MHD_Connection *conn, const body *b)
{
    if (parse) {
        arena.used = 0;
        json_error_t e;
        json_t *v = json_loadb(b->data, b->len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
        if (!v)
            return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "{}", 2);
        json_decref(v);
    }
    return reply(conn, MHD_HTTP_OK, answer, answer_len);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version;
    body *b = *con_cls;
    if (!b) {
        b = malloc(sizeof *b);
        if (!b)
            return MHD_NO;
        b->len = 0;
        *con_cls = b;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        if (n > BODY_CAP - b->len)
            return MHD_NO;
        memcpy(b->data + b->len, upload_data, n);
        b->len += n;
        *upload_data_size = 0;
        return MHD_YES;
    }
    return answer_request(conn, b);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    (void)cls, (void)conn, (void)code;
    free(*con_cls);
    *con_cls = NULL;
}

/* Reads the whole of path into a new buffer; NULL on failure. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) != NULL) {
            *len = fread(s, 1, (size_t)n, f);
            s[*len] = '\0';
        }
    }
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "--parse") != 0)) {
        fprintf(stderr, "usage: http-floor PORT_FILE ANSWER_FILE THREADS [--parse]\n");
        return 2;
    }
    parse = argc == 5;
    answer = slurp(argv[2], &answer_len);
    int threads = atoi(argv[3]);
    if (!answer || threads < 1) {
        fprintf(stderr, "http-floor: cannot read %s, or bad thread count %s\n", argv[2], argv[3]);
        return 1;
    }
    json_set_alloc_funcs(arena_alloc, arena_free);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* MHD's threads inherit the mask */
    /* The daemon's own settings (server/net/http.c), with its defaults
     * (--max-connections, --max-connections-per-ip, --timeout). */
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_CONNECTION_LIMIT, 1024, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 16384, NULL},
        {threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL,
                                            NULL, on_access, NULL, MHD_OPTION_ARRAY, options,
                                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "http-floor: cannot start libmicrohttpd\n");
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    FILE *pf = fopen(argv[1], "w");
    if (!info || !pf || fprintf(pf, "%u\n", (unsigned)info->port) < 0 || fclose(pf) != 0) {
        fprintf(stderr, "http-floor: cannot write the port to %s\n", argv[1]);
        MHD_stop_daemon(d);
        return 1;
    }
    int sig;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    free((void *)answer);
    return 0;
}
