/* Closed-form pairs and closest-point primitives (stub, being written). */
#include "testutil.h"

Suite *closed_suite(void)
{
    return suite_create("closed");
}
