/// @file server/api/fault.h
/// One mapping from the core's refusal of a change or a query (a cq_status
/// the decoder could not foresee) to the problem the client gets: its kind
/// and the field it points at. Handlers look the fault up and tell it;
/// none guesses its own pointer.
#ifndef CQD_FAULT_H
#define CQD_FAULT_H

#include "cq/world.h"
#include "request.h"

/// Where the refused values came from: that decides the field to blame.
typedef enum cqd_fault_site {
    CQD_SITE_WORLD,       ///< PUT of a world's settings (fields at the root)
    CQD_SITE_IMPORT,      ///< PUT of an export (settings under /settings)
    CQD_SITE_BATCH,       ///< a shape batch or a single shape put, as a whole
    CQD_SITE_CONTACTS,    ///< a contacts query (its dt)
    CQD_SITE_SHAPE_QUERY, ///< a sweep or an overlap query (its shape)
    CQD_SITE_COUNT
} cqd_fault_site;

/// The problem a fault is told as.
typedef enum cqd_fault_kind {
    CQD_FAULT_SERVER,   ///< the server's failure (cqd_h_server_fail: 503 or 500)
    CQD_FAULT_BUDGET,   ///< 422: past --max-shapes-total (cqd_h_over_budget)
    CQD_FAULT_PAIRS,    ///< 422: past --max-world-pairs (cqd_h_over_pairs)
    CQD_FAULT_SHAPES,   ///< 422: past CQ_WORLD_MAX_SHAPES shapes
    CQD_FAULT_CAPACITY, ///< 400: a capacity above CQ_WORLD_MAX_SHAPES
    CQD_FAULT_VALUE,    ///< 400: the field's value, told by cq_strerror
    CQD_FAULT_STATIC,   ///< 400: a static shape type cannot be swept
} cqd_fault_kind;

/// A fault's telling: static, never freed.
typedef struct cqd_fault {
    cqd_fault_kind kind;
    const char *pointer; ///< the field to blame; NULL for none
    const char *label;   ///< CQD_FAULT_VALUE: the detail's "label: " prefix; NULL for none
} cqd_fault;

/// The telling of status refused at site. asked, when not NULL, is the
/// settings a world put asked for: a refusal is the capacity's fault
/// only when one was given (a budget) or it is too large (a range). A
/// status the table does not hold is the server's.
const cqd_fault *cqd_fault_of(cqd_fault_site site, int status, const cq_world_settings *asked);

/// What a handler knows of a refusal, to tell it.
typedef struct cqd_refusal {
    cqd_fault_site site;
    int status;                       ///< the core's cq_status
    const cq_world_settings *asked;   ///< as for cqd_fault_of
    const char *what;                 ///< the step, for a server failure ("creating the world")
    cq_shape_type shape;              ///< CQD_FAULT_STATIC: the query shape's type
} cqd_refusal;

/// Fills c's problem for r as cqd_fault_of tells it. Returns -1.
int cqd_h_refused(cqd_call *c, const cqd_refusal *r);

#endif
