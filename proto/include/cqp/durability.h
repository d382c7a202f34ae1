/// @file cqp/durability.h
/// A world's durability (docs/API.md, "Durability"): what of it survives
/// a restart. Chosen when the world is created, reported with its
/// settings, and never changed afterwards.
#ifndef CQP_DURABILITY_H
#define CQP_DURABILITY_H

#include <stdbool.h>
#include <stddef.h>

#include "cqp/api.h"

/// X(name, wire): the modes, the default first (its value is 0, so a
/// zeroed setting is the safe one).
#define CQP_DURABILITY_TABLE(X)                                                            \
    X(FULL, "full")     /* every change journaled: a restart gives back all of it */      \
    X(SHAPES, "shapes") /* all but batches that only move shapes: poses as of the         \
                         * later of the last snapshot and the shape's last journaled change */ \
    X(NONE, "none")     /* ephemeral: never journaled nor snapshotted, gone after a restart */

typedef enum cqp_durability {
#define CQP_DURABILITY_ENUM_(name, wire) CQP_DURABILITY_##name,
    CQP_DURABILITY_TABLE(CQP_DURABILITY_ENUM_)
#undef CQP_DURABILITY_ENUM_
    CQP_DURABILITY_COUNT
} cqp_durability;

/// The wire name of a mode ("full"); static string, "?" out of range.
CQP_API const char *cqp_durability_name(cqp_durability d);
/// The mode named by s[0..len) (its bytes: a NUL inside names none), or false.
CQP_API bool cqp_durability_named(const char *s, size_t len, cqp_durability *out);
/// "full, shapes, none": every wire name, for a problem's detail; static string.
CQP_API const char *cqp_durability_names(void);

#endif
