/* One runner for every suite, so `make test` ends with one Check summary.
 * CK_RUN_SUITE=name runs a single suite (Check reads it itself). */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

/* A runner of some suites alone is built with -D'CQ_RUN_SUITES(X)=...'
 * (mk/test.mk's scalar build of the box suites). */
#ifndef CQ_RUN_SUITES
#define CQ_RUN_SUITES(X) CQ_SUITES(X)
#endif

#define DECLARE_(name) Suite *name##_suite(void);
CQ_RUN_SUITES(DECLARE_)

int main(void)
{
    SRunner *runner = srunner_create(NULL);
#define ADD_(name) srunner_add_suite(runner, name##_suite());
    CQ_RUN_SUITES(ADD_)
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
