#include "testutil.h"

Suite *tri_box_suite(void)
{
    return suite_create("tri_box");
}
