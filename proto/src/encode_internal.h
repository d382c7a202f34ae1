/* proto's encoders' own fast paths (encode_mp.c), called by encode.c. */
#ifndef CQP_ENCODE_INTERNAL_H
#define CQP_ENCODE_INTERNAL_H

#include <stdbool.h>

#include "cqp/encode.h"

/* Writes cqp_write_contact_fields(w, c, NULL) in MessagePack in one raw
 * write, byte for byte what the writer's calls write; false, with nothing
 * written, where it does not apply (JSON, a key pending, too little depth
 * left before CQP_WRITER_MAX_DEPTH): the caller makes the calls then. */
bool cqp__mp_contact_fields(cqp_writer *w, const cq_contact *c);

#endif
