/* Wire names of the core's enumerations, each from its one table. */
#include <string.h>

#include "cq/collision.h"

const char *cq_algorithm_name(cq_algorithm alg)
{
    static const char *const names[] = {
#define CQ_ALG_NAME_(name, wire) wire,
        CQ_ALGORITHM_TABLE(CQ_ALG_NAME_)
#undef CQ_ALG_NAME_
    };
    return (unsigned)alg < CQ_ALG_COUNT ? names[alg] : "unknown";
}

const char *cq_shape_type_name(cq_shape_type type)
{
    static const char *const names[CQ_SHAPE_TYPE_COUNT] = {
        [CQ_SPHERE] = "sphere", [CQ_CAPSULE] = "capsule", [CQ_BOX] = "box",
        [CQ_TRIANGLE] = "triangle", [CQ_PLANE] = "plane", [CQ_CONVEX] = "convex", [CQ_MESH] = "mesh",
    };
    return (unsigned)type < CQ_SHAPE_TYPE_COUNT ? names[type] : "unknown";
}

const char *cq_fallback_reason_name(cq_fallback_reason r)
{
    static const char *const names[CQ_FB_REASON_COUNT] = {
        [CQ_FB_NONE] = "none",
        [CQ_FB_COINCIDENT] = "coincident_features",
        [CQ_FB_GJK_ITERATION_LIMIT] = "gjk_iteration_limit",
        [CQ_FB_EPA_ITERATION_LIMIT] = "epa_iteration_limit",
        [CQ_FB_EPA_CAPACITY] = "epa_capacity",
        [CQ_FB_EPA_DEGENERATE] = "epa_degenerate",
    };
    return (unsigned)r < CQ_FB_REASON_COUNT ? names[r] : "unknown";
}

const char *cq_fallback_action_name(cq_fallback_action a)
{
    static const char *const names[CQ_FBA_COUNT] = {
        [CQ_FBA_NONE] = "none", [CQ_FBA_PREVIOUS_NORMAL] = "previous_normal", [CQ_FBA_DROPPED] = "dropped"};
    return (unsigned)a < CQ_FBA_COUNT ? names[a] : "unknown";
}

const char *cq_sat_axis_name(int axis)
{
    static const char *const names[CQ_SAT_AXIS_COUNT] = {
        "A0", "A1", "A2", "B0", "B1", "B2",
        "A0xB0", "A0xB1", "A0xB2", "A1xB0", "A1xB1", "A1xB2", "A2xB0", "A2xB1", "A2xB2",
    };
    return axis >= 0 && axis < CQ_SAT_AXIS_COUNT ? names[axis] : "none";
}

/* Decimal digits of u, written backwards ending at end; returns the first. */
static char *put_uint(unsigned u, char *end)
{
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    return end;
}

/* Formatted by hand rather than with snprintf (it is on every contact
 * point of every response), cut to size - 1 bytes as snprintf cuts. */
char *cq_feature_format(cq_feature f, char *buf, int size)
{
    static const char kinds[] = {'-', 'v', 'e', 'f'};
    char text[16]; /* "f65535.f65535" */
    char *end = text + sizeof text;
    char *p = put_uint(f.index_b, end);
    *--p = kinds[f.kind_b & 3];
    *--p = '.';
    p = put_uint(f.index_a, p);
    *--p = kinds[f.kind_a & 3];
    if (size <= 0)
        return buf;
    size_t n = (size_t)(end - p);
    if (n > (size_t)size - 1)
        n = (size_t)size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

const char *cq_counter_name(int slot)
{
    static const char *const gjk_buckets[CQ_GJK_BUCKETS] = {
        "gjk_iterations_le_2", "gjk_iterations_le_4", "gjk_iterations_le_8",
        "gjk_iterations_le_16", "gjk_iterations_le_32", "gjk_iterations_gt_32",
    };
    if (slot >= CQ_CTR_TESTS && slot < CQ_CTR_TESTS + CQ_ALG_COUNT)
        return cq_algorithm_name((cq_algorithm)(slot - CQ_CTR_TESTS));
    if (slot >= CQ_CTR_GJK_BUCKET && slot < CQ_CTR_GJK_BUCKET + CQ_GJK_BUCKETS)
        return gjk_buckets[slot - CQ_CTR_GJK_BUCKET];
    if (slot > CQ_CTR_REASONS && slot < CQ_CTR_REASONS + CQ_FB_REASON_COUNT)
        return cq_fallback_reason_name((cq_fallback_reason)(slot - CQ_CTR_REASONS));
    if (slot > CQ_CTR_ACTIONS && slot < CQ_CTR_ACTIONS + CQ_FBA_COUNT)
        return cq_fallback_action_name((cq_fallback_action)(slot - CQ_CTR_ACTIONS));
    switch (slot) {
    case CQ_CTR_SAT_AXES_SKIPPED:
        return "sat_axes_skipped";
    case CQ_CTR_ZERO_NORMALS:
        return "zero_normals_discarded";
    case CQ_CTR_GJK_CALLS:
        return "gjk_calls";
    case CQ_CTR_GJK_ITERATIONS:
        return "gjk_iterations";
    case CQ_CTR_EPA_CALLS:
        return "epa_calls";
    case CQ_CTR_EPA_ITERATIONS:
        return "epa_iterations";
    }
    return "unused";
}
