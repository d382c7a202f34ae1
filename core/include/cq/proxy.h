/// @file cq/proxy.h
/// Convex shapes as GJK proxies (point sets inflated by a radius).
#ifndef CQ_PROXY_H
#define CQ_PROXY_H

#include "cq/api.h"
#include "cq/gjk.h"
#include "cq/shape.h"

/// Points of caller storage cq_shape_proxy may fill (a box's 8 corners).
#define CQ_PROXY_STORAGE 8

/// Turns a convex shape into a proxy in the shape's local frame: a sphere is
/// its centre + radius, a capsule its 2 segment ends + radius, a box its 8
/// corners (corner k has coordinate i negative when bit i of k is set), a
/// triangle its 3 vertices, a convex shape its hull's vertices (borrowed,
/// not copied) + the hull's rounding radius. storage must hold
/// CQ_PROXY_STORAGE points and outlive *out. Returns CQ_OK, or
/// CQ_EUNSUPPORTED for a plane (not a bounded convex set) or an unknown
/// type, with *out untouched.
CQ_API int cq_shape_proxy(const cq_shape *shape, cq_vec3 storage[CQ_PROXY_STORAGE], cq_proxy *out);

#endif
