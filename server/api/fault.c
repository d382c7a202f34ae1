/* The core's refusals as problems (fault.h): one row a site and status. */
#include "fault.h"

#include "h_common.h"

/* When a row applies beyond its status: the settings asked decide whether
 * the capacity is to blame. */
typedef enum when {
    ANY,           /* always */
    CAPACITY_SET,  /* a capacity was asked for */
    CAPACITY_OVER, /* the capacity asked for is above CQ_WORLD_MAX_SHAPES */
} when;

typedef struct fault_row {
    cqd_fault_site site;
    int status;
    when when;
    cqd_fault fault;
} fault_row;

/* First match wins: a conditional row comes before its status's ANY row. */
static const fault_row rows[] = {
    {CQD_SITE_WORLD, CQ_EBUDGET, CAPACITY_SET, {CQD_FAULT_BUDGET, "/capacity", NULL}},
    {CQD_SITE_WORLD, CQ_EBUDGET, ANY, {CQD_FAULT_BUDGET, NULL, NULL}},
    {CQD_SITE_WORLD, CQ_ELIMIT, ANY, {CQD_FAULT_PAIRS, "/skin", NULL}},
    {CQD_SITE_WORLD, CQ_ENOT_FINITE, ANY, {CQD_FAULT_VALUE, "/skin", "skin"}},
    {CQD_SITE_WORLD, CQ_ENEGATIVE, ANY, {CQD_FAULT_VALUE, "/skin", "skin"}},
    {CQD_SITE_WORLD, CQ_ERANGE, CAPACITY_OVER, {CQD_FAULT_CAPACITY, "/capacity", NULL}},
    {CQD_SITE_WORLD, CQ_ERANGE, ANY, {CQD_FAULT_SHAPES, "/shapes", NULL}},

    {CQD_SITE_IMPORT, CQ_EBUDGET, CAPACITY_SET, {CQD_FAULT_BUDGET, "/settings/capacity", NULL}},
    {CQD_SITE_IMPORT, CQ_EBUDGET, ANY, {CQD_FAULT_BUDGET, NULL, NULL}},
    {CQD_SITE_IMPORT, CQ_ELIMIT, ANY, {CQD_FAULT_PAIRS, "/shapes", NULL}},
    {CQD_SITE_IMPORT, CQ_ENOT_FINITE, ANY, {CQD_FAULT_VALUE, "/settings/skin", "skin"}},
    {CQD_SITE_IMPORT, CQ_ENEGATIVE, ANY, {CQD_FAULT_VALUE, "/settings/skin", "skin"}},
    {CQD_SITE_IMPORT, CQ_ERANGE, CAPACITY_OVER, {CQD_FAULT_CAPACITY, "/settings/capacity", NULL}},
    {CQD_SITE_IMPORT, CQ_ERANGE, ANY, {CQD_FAULT_SHAPES, "/shapes", NULL}},

    /* a batch that did not fit as a whole: no one field is to blame */
    {CQD_SITE_BATCH, CQ_ELIMIT, ANY, {CQD_FAULT_PAIRS, NULL, NULL}},
    {CQD_SITE_BATCH, CQ_EBUDGET, ANY, {CQD_FAULT_BUDGET, NULL, NULL}},
    {CQD_SITE_BATCH, CQ_ERANGE, ANY, {CQD_FAULT_SHAPES, NULL, NULL}},

    {CQD_SITE_CONTACTS, CQ_ENOT_FINITE, ANY, {CQD_FAULT_VALUE, "/dt", "dt"}},
    {CQD_SITE_CONTACTS, CQ_ENEGATIVE, ANY, {CQD_FAULT_VALUE, "/dt", "dt"}},

    /* the decoder passed the shape: what the world refuses is the shape's,
     * but for the server's own failures */
    {CQD_SITE_SHAPE_QUERY, CQ_EUNSUPPORTED, ANY, {CQD_FAULT_STATIC, "/shape/type", NULL}},
    {CQD_SITE_SHAPE_QUERY, CQ_ENOT_FINITE, ANY, {CQD_FAULT_VALUE, NULL, NULL}},
    {CQD_SITE_SHAPE_QUERY, CQ_ENO_MEMORY, ANY, {CQD_FAULT_SERVER, NULL, NULL}},
    {CQD_SITE_SHAPE_QUERY, CQ_ECANCELED, ANY, {CQD_FAULT_SERVER, NULL, NULL}},
};

/* Any other status at a shape query is the shape's. */
static const cqd_fault shape_other = {CQD_FAULT_VALUE, "/shape", NULL};
static const cqd_fault server = {CQD_FAULT_SERVER, NULL, NULL};

static bool holds(when w, const cq_world_settings *asked)
{
    switch (w) {
    case ANY:
        return true;
    case CAPACITY_SET:
        return asked && asked->capacity > 0;
    case CAPACITY_OVER:
        return asked && asked->capacity > CQ_WORLD_MAX_SHAPES;
    }
    return false;
}

const cqd_fault *cqd_fault_of(cqd_fault_site site, int status, const cq_world_settings *asked)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].site == site && rows[i].status == status && holds(rows[i].when, asked))
            return &rows[i].fault;
    return site == CQD_SITE_SHAPE_QUERY ? &shape_other : &server;
}

static int value_fault(cqd_call *c, const cqd_fault *f, int status)
{
    if (f->label)
        return cqp_fail(&c->problem, CQP_P_BAD_VALUE, f->pointer, "%s: %s", f->label, cq_strerror(status));
    return cqp_fail(&c->problem, CQP_P_BAD_VALUE, f->pointer, "%s", cq_strerror(status));
}

int cqd_h_refused(cqd_call *c, const cqd_refusal *r)
{
    const cqd_fault *f = cqd_fault_of(r->site, r->status, r->asked);
    switch (f->kind) {
    case CQD_FAULT_SERVER:
        return cqd_h_server_fail(c, r->status, r->what);
    case CQD_FAULT_BUDGET:
        return cqd_h_over_budget(c, f->pointer);
    case CQD_FAULT_PAIRS:
        return cqd_h_over_pairs(c, f->pointer);
    case CQD_FAULT_SHAPES:
        return cqp_fail(&c->problem, CQP_P_OVER_LIMIT, f->pointer, "a world holds at most %d shapes",
                        CQ_WORLD_MAX_SHAPES);
    case CQD_FAULT_CAPACITY:
        return cqp_fail(&c->problem, CQP_P_BAD_VALUE, f->pointer, "capacity must be <= %d", CQ_WORLD_MAX_SHAPES);
    case CQD_FAULT_VALUE:
        return value_fault(c, f, r->status);
    case CQD_FAULT_STATIC:
        return cqp_fail(&c->problem, CQP_P_BAD_VALUE, f->pointer, "a %s is static and cannot be swept",
                        cq_shape_type_name(r->shape));
    }
    return cqd_h_server_fail(c, r->status, r->what);
}
