/* The problem table's lookups, cqp_fail, and the problem+json body. */
#include <stdarg.h>
#include <stdio.h>

#include "cqp/problem.h"

/* The URI prefix of every problem type. */
#define CQP_PROBLEM_URN "urn:collisiond:problem:"

static const struct {
    int status;
    const char *slug;
    const char *title;
} kinds[CQP_P_COUNT] = {
#define CQP_PROBLEM_ROW_(name, status, slug, title) [CQP_P_##name] = {status, slug, title},
    CQP_PROBLEM_TABLE(CQP_PROBLEM_ROW_)
#undef CQP_PROBLEM_ROW_
};

/* An out-of-range kind is a caller bug; it is reported as internal. */
static cqp_problem_kind known(cqp_problem_kind kind)
{
    return (unsigned)kind < CQP_P_COUNT ? kind : CQP_P_INTERNAL;
}

int cqp_problem_status(cqp_problem_kind kind) { return kinds[known(kind)].status; }
const char *cqp_problem_slug(cqp_problem_kind kind) { return kinds[known(kind)].slug; }
const char *cqp_problem_title(cqp_problem_kind kind) { return kinds[known(kind)].title; }

int cqp_fail(cqp_problem *p, cqp_problem_kind kind, const char *pointer, const char *fmt, ...)
{
    p->kind = known(kind);
    snprintf(p->pointer, sizeof p->pointer, "%s", pointer ? pointer : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    return -1;
}

void cqp_write_problem(cqp_writer *w, const cqp_problem *p)
{
    cqp_problem_kind kind = known(p->kind);
    char type[sizeof CQP_PROBLEM_URN + 32];
    snprintf(type, sizeof type, CQP_PROBLEM_URN "%s", kinds[kind].slug);
    cqp_obj_begin(w);
    cqp_kv_str(w, "type", type);
    cqp_kv_str(w, "title", kinds[kind].title);
    cqp_kv_int(w, "status", kinds[kind].status);
    cqp_kv_str(w, "detail", p->detail);
    if (p->pointer[0])
        cqp_kv_str(w, "pointer", p->pointer);
    cqp_obj_end(w);
}
