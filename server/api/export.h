/// @file server/api/export.h
/// A world in the export format: what GET /v1/worlds/{world}/export
/// answers, what PUT /v1/worlds/{world} imports back, and what a snapshot
/// stores per world.
#ifndef CQD_EXPORT_H
#define CQD_EXPORT_H

#include "cq/world.h"
#include "cqp/durability.h"
#include "cqp/write.h"

/// Writes {"settings", "shapes"} (shapes sorted by id; the settings with
/// the world's durability, so that an import of the document makes a
/// world of the same durability) through out. The caller holds the
/// world's lock (shared is enough). CQ_OK, or CQ_ENO_MEMORY with nothing
/// written.
int cqd_write_export(cqp_writer *out, const cq_world *world, cqp_durability durability);

#endif
