/* The durability modes' wire names (cqp/durability.h). */
#include "cqp/durability.h"

#include <string.h>

static const char *const names[CQP_DURABILITY_COUNT] = {
#define CQP_DURABILITY_NAME_(name, wire) wire,
    CQP_DURABILITY_TABLE(CQP_DURABILITY_NAME_)
#undef CQP_DURABILITY_NAME_
};

/* The names joined, built by the preprocessor from the same table. */
#define CQP_DURABILITY_LIST_(name, wire) ", " wire
static const char all[] = CQP_DURABILITY_TABLE(CQP_DURABILITY_LIST_);
#undef CQP_DURABILITY_LIST_

const char *cqp_durability_name(cqp_durability d)
{
    return d >= 0 && d < CQP_DURABILITY_COUNT ? names[d] : "?";
}

bool cqp_durability_named(const char *s, size_t len, cqp_durability *out)
{
    for (int k = 0; s && k < CQP_DURABILITY_COUNT; k++) {
        if (strlen(names[k]) == len && memcmp(s, names[k], len) == 0) {
            *out = (cqp_durability)k;
            return true;
        }
    }
    return false;
}

const char *cqp_durability_names(void) { return all + 2; }
