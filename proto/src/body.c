/* Request bodies opened for decoding (cqp/value.h): JSON parsed into a
 * jansson tree, MessagePack checked where it lies and viewed in place. */
#include "cqp/decode.h"
#include "cqp/value.h"

int cqp_body_open(cqp_body *b, cqp_format f, const char *data, size_t len, cqp_problem *p)
{
    *b = (cqp_body){0};
    // Absent, not malformed: each decoder says which fields it misses.
    if (len == 0)
        return 0;
    if (f == CQP_MSGPACK) {
        if (cqp_mp_check(data, len, CQP_MP_MAX_DEPTH, p))
            return -1;
        b->root = cqp_value_mp(data);
        return 0;
    }
    b->tree = cqp_parse(data, len, p);
    if (!b->tree)
        return -1;
    b->root = cqp_value_json(b->tree);
    return 0;
}

void cqp_body_close(cqp_body *b)
{
    json_decref(b->tree);
    *b = (cqp_body){0};
}
