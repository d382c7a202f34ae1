/* The MessagePack backing of cqp/value.h (value_mp.c), for value.c's
 * dispatch. Every p points at a value inside bytes cqp_mp_check accepted,
 * so nothing here checks bounds again. */
#ifndef CQP_VALUE_INTERNAL_H
#define CQP_VALUE_INTERNAL_H

#include "cqp/value.h"

cqp_vtype cqp__mp_type(const char *p);
bool cqp__mp_bool(const char *p);
int64_t cqp__mp_int(const char *p);
double cqp__mp_number(const char *p);
const char *cqp__mp_string(const char *p, size_t *len);
/* Elements of an array, members of a map, else 0. */
size_t cqp__mp_size(const char *p);
/* The first element (array) or first key (map) after the header at p. */
const char *cqp__mp_first(const char *p);
/* The byte after the value at p. */
const char *cqp__mp_skip(const char *p);

#endif
