/// @file cqp/encode.h
/// Core values and whole answers (API.md) written through a cqp_writer,
/// in JSON or MessagePack: handlers call one encoder per body, so every
/// key and its order is written here only.
#ifndef CQP_ENCODE_H
#define CQP_ENCODE_H

#include "cq/collision.h"
#include "cq/fallback.h"
#include "cq/world.h"
#include "cqp/api.h"
#include "cqp/durability.h"
#include "cqp/write.h"

/// The fields of a contact result ("overlap", "distance", "depth",
/// "normal" unless undefined, "points", "witness" when separated and known,
/// "algorithm", "fallback", and for box-box "sat") into an object the
/// caller has opened. explain, when not NULL, is the box-box table of all
/// 15 axes, written as "axes".
CQP_API void cqp_write_contact_fields(cqp_writer *w, const cq_contact *c, const cq_sat_axis *explain);
/// The contact result as one object.
CQP_API void cqp_write_contact(cqp_writer *w, const cq_contact *c, const cq_sat_axis *explain);

/// A shape object as cqp_decode_shape reads it back: a convex shape as its
/// hull's vertices (and radius when not zero), a mesh as its vertices and
/// triangles.
CQP_API void cqp_write_shape(cqp_writer *w, const cq_shape *s);
/// A pose {"position", "axes"} (axes are exact; a quaternion would round).
CQP_API void cqp_write_pose(cqp_writer *w, const cq_xform *x);
/// A stored shape as export and GET give it: {"id", "shape", "pose",
/// "velocity", "layer", "mask"}.
CQP_API void cqp_write_body(cqp_writer *w, const char *id, const cq_world_body *b);
/// World settings {"skin", "capacity", "gjk_max_iterations",
/// "epa_max_iterations", "sweep_max_iterations", "durability"}: the core's
/// settings and the server's durability mode, read back by cqp_decode_world.
CQP_API void cqp_write_settings(cqp_writer *w, const cq_world_settings *s, cqp_durability durability);

/// A ray hit {"id", "distance", "point", "normal"} (id given by the caller).
CQP_API void cqp_write_ray_hit(cqp_writer *w, const char *id, const cq_ray_hit *h);
/// A sweep hit {"id", "time", "point", "normal"} (normal omitted when undefined).
CQP_API void cqp_write_sweep_hit(cqp_writer *w, const char *id, const cq_sweep_hit *h);
/// A CCD first impact {"id", "other", "time", "point", "normal"}.
CQP_API void cqp_write_toi(cqp_writer *w, const char *id, const char *other, const cq_world_toi *t);

/// What a world's summary shows: borrowed for the call.
typedef struct cqp_world_view {
    const char *name;
    const cq_world_settings *settings;
    const cq_world_stats *stats;
    cqp_durability durability;
} cqp_world_view;

/// A put's answer {"name", "settings", "shapes", "broadphase_pairs"}.
CQP_API void cqp_write_world_summary(cqp_writer *w, const cqp_world_view *v);
/// GET's answer: the summary's members and "stats", all of v->stats.
CQP_API void cqp_write_world_detail(cqp_writer *w, const cqp_world_view *v);
/// A listing's item {"name", "shapes", "durability"}.
CQP_API void cqp_write_world_entry(cqp_writer *w, const char *name, int shapes, cqp_durability durability);

/// Writes item i of a list (one value); nonzero stops the list (that
/// item failed: the caller answers with its problem instead).
typedef int (*cqp_item_writer)(void *ctx, cqp_writer *w, int i);
/// {key: [item 0, ..., item n-1]}, stopping at the first item that fails.
/// Returns 0, or that item's result (the body is then incomplete).
CQP_API int cqp_write_list(cqp_writer *w, const char *key, int n, cqp_item_writer item, void *ctx);

/// A batch's answer {"upserted", "moved", "removed", "shapes"}.
CQP_API void cqp_write_batch_counts(cqp_writer *w, int upserted, int moved, int removed, int shapes);
/// A world's export {"settings", "shapes": [body, ...]} of the n shapes
/// under h (as cq_world_list gives them), -0 kept: an import or a
/// recovery reads the stored values back bit for bit.
CQP_API void cqp_write_export(cqp_writer *w, const cq_world *world, const cq_world_handle *h, int n,
                              cqp_durability durability);
/// A probe's answer {"status": status}.
CQP_API void cqp_write_status(cqp_writer *w, const char *status);

/// One fallback log record as /metrics/fallbacks shows it; borrowed.
typedef struct cqp_fallback_view {
    const cq_fallback_record *rec;
    /// False when the record's label is unknown: time, world, tags and
    /// request id are then null.
    bool labelled;
    double time;            ///< Unix time
    const char *world;      ///< NULL for the stateless endpoints (the tags are indices)
    const char *id_a, *id_b; ///< in a world: the tags' ids, NULL once gone
    const char *request_id; ///< NULL for none
} cqp_fallback_view;
/// {"seq", "time", "world", "a", "b", "shapes", "iterations", "reason",
/// "action", "request_id"}.
CQP_API void cqp_write_fallback(cqp_writer *w, const cqp_fallback_view *v);

/// Broadphase's answer {"pairs": [[id, id], ...]}.
CQP_API void cqp_write_broadphase(cqp_writer *w, const cq_world *world, const cq_world_pair *p, int n);
/// The contacts answer {"pairs", "toi", "stats"}. No timing goes in it:
/// equal requests get equal bytes (the access log has the duration).
CQP_API void cqp_write_contacts(cqp_writer *w, const cq_world *world, const cq_world_contacts_out *out);
/// {"hits": [hit | null, ...]}: the closest hit of each of rays rays.
CQP_API void cqp_write_ray_hits(cqp_writer *w, const cq_world *world, const cq_world_ray_hit *hits, int rays);
/// {"hits": [[hit, ...], ...]}: ray i's hits are hits[first[i]..first[i+1]).
CQP_API void cqp_write_ray_hits_all(cqp_writer *w, const cq_world *world, const cq_world_ray_hit *hits,
                                    const int *first, int rays);
/// A sweep's answer {"hit": hit | null}.
CQP_API void cqp_write_sweep(cqp_writer *w, const cq_world *world, const cq_world_sweep_hit *h);
/// An overlap's answer {"ids": [id, ...]}.
CQP_API void cqp_write_overlap(cqp_writer *w, const cq_world *world, const cq_world_handle *ids, int n);

#endif
