/* The MessagePack backing of cqp/value.h (value_mp.c), for value.c's
 * dispatch. Every p points at a value inside bytes cqp_mp_check accepted,
 * so nothing here checks bounds again. */
#ifndef CQP_VALUE_INTERNAL_H
#define CQP_VALUE_INTERNAL_H

#include "cqp/value.h"

cqp_vtype cqpv_mp_type(const char *p);
bool cqpv_mp_bool(const char *p);
int64_t cqpv_mp_int(const char *p);
double cqpv_mp_number(const char *p);
const char *cqpv_mp_string(const char *p, size_t *len);
/* Elements of an array, members of a map, else 0. */
size_t cqpv_mp_size(const char *p);
/* The first element (array) or first key (map) after the header at p. */
const char *cqpv_mp_first(const char *p);
/* The byte after the value at p. */
const char *cqpv_mp_skip(const char *p);

#endif
