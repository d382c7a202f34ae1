/* Object members in one call (cqp/write.h): what encoders write most is
 * a key and its value, and a call apiece doubled every encoder's length. */
#include "cqp/write.h"

void cqp_kv_str(cqp_writer *w, const char *key, const char *s)
{
    cqp_key(w, key);
    cqp_str(w, s);
}

void cqp_kv_str_or_null(cqp_writer *w, const char *key, const char *s)
{
    cqp_key(w, key);
    if (s)
        cqp_str(w, s);
    else
        cqp_null(w);
}

void cqp_kv_num(cqp_writer *w, const char *key, double v)
{
    cqp_key(w, key);
    cqp_num(w, v);
}

void cqp_kv_int(cqp_writer *w, const char *key, int64_t v)
{
    cqp_key(w, key);
    cqp_int(w, v);
}

void cqp_kv_uint(cqp_writer *w, const char *key, uint64_t v)
{
    cqp_key(w, key);
    cqp_uint(w, v);
}

void cqp_kv_bool(cqp_writer *w, const char *key, bool v)
{
    cqp_key(w, key);
    cqp_bool(w, v);
}

void cqp_kv_null(cqp_writer *w, const char *key)
{
    cqp_key(w, key);
    cqp_null(w);
}

void cqp_kv_vec3(cqp_writer *w, const char *key, cq_vec3 v)
{
    cqp_key(w, key);
    cqp_vec3(w, v);
}

void cqp_kv_obj(cqp_writer *w, const char *key)
{
    cqp_key(w, key);
    cqp_obj_begin(w);
}

void cqp_kv_arr(cqp_writer *w, const char *key)
{
    cqp_key(w, key);
    cqp_arr_begin(w);
}
