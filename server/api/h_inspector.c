/// @file server/api/h_inspector.c
/// GET /inspect/ and its files. The routes are open (a browser cannot send
/// a bearer header when it navigates), so they serve only the compiled-in
/// static files; every API call the page makes carries the token itself.
#include <string.h>

#include "handlers.h"
#include "inspector.h"

/// What every inspector file is sent with: scripts and styles from this
/// origin only (no inline code, nothing elsewhere, no framing), no type
/// sniffing, and revalidation on each load, as the file names carry no
/// version and a daemon upgrade must not mix old and new scripts.
static const char *const asset_headers[] = {
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options", "nosniff",
    "Cache-Control", "no-cache",
    "Referrer-Policy", "no-referrer",
    NULL,
};

/// Relative, so the page still resolves behind a proxy that mounts the
/// daemon under a prefix.
static const char *const redirect_headers[] = {"Location", "inspect/", "Cache-Control", "no-cache", NULL};

typedef struct content_type {
    const char *suffix;
    const char *type;
} content_type;

static const content_type content_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
};

/// The type for name by its suffix (the table lists every suffix the
/// build embeds; anything else is sent as bytes).
static const char *type_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof content_types / sizeof content_types[0]; i++) {
        size_t m = strlen(content_types[i].suffix);
        if (n > m && strcmp(name + n - m, content_types[i].suffix) == 0)
            return content_types[i].type;
    }
    return "application/octet-stream";
}

static const cqd_asset *find_asset(const char *name)
{
    for (int i = 0; i < cqd_inspector_asset_count; i++)
        if (strcmp(cqd_inspector_assets[i].name, name) == 0)
            return &cqd_inspector_assets[i];
    return NULL;
}

/// Copies the file into the response (the buffer is the response's).
static int send_asset(cqd_call *c, const char *name)
{
    const cqd_asset *a = find_asset(name);
    if (!a)
        // The name is not echoed: {file} keeps no rule, so it may hold
        // any byte, and no file name of ours needs quoting back.
        return cqp_fail(&c->problem, CQP_P_NOT_FOUND, NULL, "the inspector has no file of that name");
    cqp_buf_append(c->out.buf, (const char *)a->data, a->len);
    c->resp->content_type = type_of(a->name);
    c->resp->headers = asset_headers;
    return 200;
}

int cqd_h_inspector_redirect(cqd_call *c)
{
    static const char note[] = "the inspector is at /inspect/\n";
    cqp_buf_append(c->out.buf, note, sizeof note - 1);
    c->resp->content_type = "text/plain; charset=utf-8";
    c->resp->headers = redirect_headers;
    return 301;
}

int cqd_h_inspector_index(cqd_call *c) { return send_asset(c, "index.html"); }

int cqd_h_inspector_asset(cqd_call *c) { return send_asset(c, c->file); }
