/// @file cq/status.h
/// Status codes shared by every fallible core function: CQ_OK (0) or a
/// negative code from the one table below, which also drives cq_strerror.
#ifndef CQ_STATUS_H
#define CQ_STATUS_H

#include "cq/api.h"

/// X(name, code, message) for every failure.
#define CQ_STATUS_TABLE(X)                                                     \
    X(NOT_FINITE, -1, "value is not a finite number")                          \
    X(NEGATIVE, -2, "value must be >= 0")                                      \
    X(NOT_UNIT, -3, "vector or quaternion is not of unit length")              \
    X(NOT_ORTHOGONAL, -4, "axes are not mutually orthogonal")                  \
    X(MIRROR, -5, "axes are left-handed (a mirror is not a rotation)")         \
    X(RANGE, -6, "count or index out of range")                                \
    X(UNSUPPORTED, -7, "no algorithm for this pair of shape types")            \
    X(NO_MEMORY, -8, "out of memory")                                          \
    X(NOT_FOUND, -9, "no such id")                                             \
    X(CANCELED, -10, "stopped: the caller's deadline passed")                  \
    X(LIMIT, -11, "a limit of the world would be crossed")                     \
    X(BUDGET, -12, "the slot budget the world is charged to would be exceeded")

/// CQ_OK or a negative CQ_E... code.
typedef enum cq_status {
    CQ_OK = 0,
#define CQ_STATUS_ENUM_(name, code, msg) CQ_E##name = code,
    CQ_STATUS_TABLE(CQ_STATUS_ENUM_)
#undef CQ_STATUS_ENUM_
} cq_status;

/// A human-readable message for a status (static string, never NULL).
CQ_API const char *cq_strerror(int status);
/// The symbolic name without prefix, e.g. "NOT_FINITE" (static, never NULL).
CQ_API const char *cq_err_name(int status);

#endif
