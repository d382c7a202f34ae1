#include "testutil.h"

Suite *tri_tri_suite(void)
{
    return suite_create("tri_tri");
}
