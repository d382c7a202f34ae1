/* One runner for every suite, so `make test` ends with one Check summary.
 * CK_RUN_SUITE=name runs a single suite (Check reads it itself). */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

#define DECLARE_(name) Suite *name##_suite(void);
CQ_SUITES(DECLARE_)

int main(void)
{
    SRunner *runner = srunner_create(NULL);
#define ADD_(name) srunner_add_suite(runner, name##_suite());
    CQ_SUITES(ADD_)
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
