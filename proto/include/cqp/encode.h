/// @file cqp/encode.h
/// Core values to JSON (API.md section 1), written through a cqp_writer.
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

#endif
