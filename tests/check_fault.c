/* The core's refusals as problems (server/api/fault.c): every cell of the
 * table checked against the kind and pointer API.md gives, written out
 * by hand here, and a status no row holds told as the server's. */
#include <check.h>
#include <string.h>

#include "api/fault.h"

typedef struct cell {
    cqd_fault_site site;
    int status;
    int capacity; /* the settings' capacity; -1: no settings given */
    cqd_fault_kind kind;
    const char *pointer;
    const char *label;
} cell;

#define OVER (CQ_WORLD_MAX_SHAPES + 1)

static const cell cells[] = {
    /* PUT /v1/worlds/{w} with settings at the root */
    {CQD_SITE_WORLD, CQ_EBUDGET, 100, CQD_FAULT_BUDGET, "/capacity", NULL},
    {CQD_SITE_WORLD, CQ_EBUDGET, 0, CQD_FAULT_BUDGET, NULL, NULL},
    {CQD_SITE_WORLD, CQ_EBUDGET, -1, CQD_FAULT_BUDGET, NULL, NULL},
    {CQD_SITE_WORLD, CQ_ELIMIT, 0, CQD_FAULT_PAIRS, "/skin", NULL},
    {CQD_SITE_WORLD, CQ_ENOT_FINITE, 0, CQD_FAULT_VALUE, "/skin", "skin"},
    {CQD_SITE_WORLD, CQ_ENEGATIVE, 0, CQD_FAULT_VALUE, "/skin", "skin"},
    {CQD_SITE_WORLD, CQ_ERANGE, OVER, CQD_FAULT_CAPACITY, "/capacity", NULL},
    {CQD_SITE_WORLD, CQ_ERANGE, CQ_WORLD_MAX_SHAPES, CQD_FAULT_SHAPES, "/shapes", NULL},
    {CQD_SITE_WORLD, CQ_ENO_MEMORY, 0, CQD_FAULT_SERVER, NULL, NULL},
    {CQD_SITE_WORLD, CQ_ENOT_FOUND, 0, CQD_FAULT_SERVER, NULL, NULL},
    /* an import: the settings under /settings, the shapes under /shapes */
    {CQD_SITE_IMPORT, CQ_EBUDGET, 100, CQD_FAULT_BUDGET, "/settings/capacity", NULL},
    {CQD_SITE_IMPORT, CQ_EBUDGET, 0, CQD_FAULT_BUDGET, NULL, NULL},
    {CQD_SITE_IMPORT, CQ_ELIMIT, 0, CQD_FAULT_PAIRS, "/shapes", NULL},
    {CQD_SITE_IMPORT, CQ_ENOT_FINITE, 0, CQD_FAULT_VALUE, "/settings/skin", "skin"},
    {CQD_SITE_IMPORT, CQ_ENEGATIVE, 0, CQD_FAULT_VALUE, "/settings/skin", "skin"},
    {CQD_SITE_IMPORT, CQ_ERANGE, OVER, CQD_FAULT_CAPACITY, "/settings/capacity", NULL},
    {CQD_SITE_IMPORT, CQ_ERANGE, 10, CQD_FAULT_SHAPES, "/shapes", NULL},
    {CQD_SITE_IMPORT, CQ_ENO_MEMORY, 0, CQD_FAULT_SERVER, NULL, NULL},
    /* a batch as a whole: no field */
    {CQD_SITE_BATCH, CQ_ELIMIT, -1, CQD_FAULT_PAIRS, NULL, NULL},
    {CQD_SITE_BATCH, CQ_EBUDGET, -1, CQD_FAULT_BUDGET, NULL, NULL},
    {CQD_SITE_BATCH, CQ_ERANGE, -1, CQD_FAULT_SHAPES, NULL, NULL},
    {CQD_SITE_BATCH, CQ_ENOT_FINITE, -1, CQD_FAULT_SERVER, NULL, NULL},
    {CQD_SITE_BATCH, CQ_ENO_MEMORY, -1, CQD_FAULT_SERVER, NULL, NULL},
    /* contacts: only dt can be refused */
    {CQD_SITE_CONTACTS, CQ_ENOT_FINITE, -1, CQD_FAULT_VALUE, "/dt", "dt"},
    {CQD_SITE_CONTACTS, CQ_ENEGATIVE, -1, CQD_FAULT_VALUE, "/dt", "dt"},
    {CQD_SITE_CONTACTS, CQ_ERANGE, -1, CQD_FAULT_SERVER, NULL, NULL},
    {CQD_SITE_CONTACTS, CQ_ECANCELED, -1, CQD_FAULT_SERVER, NULL, NULL},
    /* sweeps and overlaps: the shape's, but for the server's own failures */
    {CQD_SITE_SHAPE_QUERY, CQ_EUNSUPPORTED, -1, CQD_FAULT_STATIC, "/shape/type", NULL},
    {CQD_SITE_SHAPE_QUERY, CQ_ENOT_FINITE, -1, CQD_FAULT_VALUE, NULL, NULL},
    {CQD_SITE_SHAPE_QUERY, CQ_ENO_MEMORY, -1, CQD_FAULT_SERVER, NULL, NULL},
    {CQD_SITE_SHAPE_QUERY, CQ_ECANCELED, -1, CQD_FAULT_SERVER, NULL, NULL},
    {CQD_SITE_SHAPE_QUERY, CQ_ERANGE, -1, CQD_FAULT_VALUE, "/shape", NULL},
    {CQD_SITE_SHAPE_QUERY, CQ_ENEGATIVE, -1, CQD_FAULT_VALUE, "/shape", NULL},
};

static bool same_str(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

START_TEST(test_cell)
{
    const cell *k = &cells[_i];
    cq_world_settings s = {.capacity = k->capacity};
    const cqd_fault *f = cqd_fault_of(k->site, k->status, k->capacity < 0 ? NULL : &s);
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(f->kind == k->kind, "cell %d: kind %d, want %d", _i, (int)f->kind, (int)k->kind);
    ck_assert_msg(same_str(f->pointer, k->pointer), "cell %d: pointer %s, want %s", _i,
                  f->pointer ? f->pointer : "(none)", k->pointer ? k->pointer : "(none)");
    ck_assert_msg(same_str(f->label, k->label), "cell %d: label %s, want %s", _i, f->label ? f->label : "(none)",
                  k->label ? k->label : "(none)");
}
END_TEST

/* A status outside the table, at every site, is the server's (or, at a
 * shape query, the shape's). */
START_TEST(test_unknown_status)
{
    for (int site = 0; site < CQD_SITE_COUNT; site++) {
        const cqd_fault *f = cqd_fault_of((cqd_fault_site)site, -12345, NULL);
        cqd_fault_kind want = site == CQD_SITE_SHAPE_QUERY ? CQD_FAULT_VALUE : CQD_FAULT_SERVER;
        ck_assert_int_eq(f->kind, want);
    }
}
END_TEST

Suite *fault_suite(void)
{
    Suite *s = suite_create("fault");
    TCase *tc = tcase_create("table");
    tcase_add_loop_test(tc, test_cell, 0, (int)(sizeof cells / sizeof cells[0]));
    tcase_add_test(tc, test_unknown_status);
    suite_add_tcase(s, tc);
    return s;
}
