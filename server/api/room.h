/// @file server/api/room.h
/// Room for an answer built from an array the world sizes (contacts,
/// broadphase pairs, every ray hit, overlap ids): the most items whose
/// smallest encoding still fits the request's answer limit, so a handler
/// allocates for no more than that and refuses a larger answer before
/// building it, whatever the world holds.
#ifndef CQD_ROOM_H
#define CQD_ROOM_H

#include <stddef.h>

#include "request.h"

/// The kinds of item an answer lists.
typedef enum cqd_item {
    CQD_ITEM_CONTACT, ///< a touching pair of a contacts answer
    CQD_ITEM_TOI,     ///< a first impact of a contacts answer
    CQD_ITEM_PAIR,    ///< a broadphase pair [id, id]
    CQD_ITEM_HIT,     ///< a ray hit of an "all" cast
    CQD_ITEM_ID,      ///< an id of an overlap answer
} cqd_item;

/// The fewest bytes one item of kind takes in c's answer format (its
/// compact form, ids of one character, every optional member left out).
size_t cqd_room_item_min(const cqd_call *c, cqd_item kind);

/// The most items of kind an answer of c may list before its smallest
/// encoding passes the answer limit: one more than fit, so that a count
/// above it proves the answer too long. At most INT_MAX.
int cqd_room_items(const cqd_call *c, cqd_item kind);

/// Refuses an answer of count items of kind before it is built: 422
/// over-limit "the answer would be at least N bytes ... (--max-response)"
/// when the smallest encoding passes --max-response, else (past the
/// stream's tighter limit only) 503 with Retry-After. Returns -1.
int cqd_room_refuse(cqd_call *c, cqd_item kind, long long count);

#endif
