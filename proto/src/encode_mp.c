/* Contacts in MessagePack with one room check a contact instead of a
 * writer call per key and value: a contacts answer holds one contact per
 * touching pair (about 440 bytes each), and the calls cost about a
 * nanosecond a byte. The bytes are exactly those of encode.c's calls, in
 * API.md's key order (check_proto_write_mp.c compares the two). */
#include <string.h>

#include "encode_internal.h"
#include "writer_internal.h"

/* The most a contact takes but its names: keys with their headers,
 * numbers (9 bytes), vectors (28), container headers, str headers (5):
 * overlap 9, distance 18, depth 15, normal 35, points 8 + 4 x 66 (map
 * header, position, depth, feature), witness 69, algorithm 15, fallback
 * 34, sat 28: 495 in all. */
#define CONTACT_FIXED 512

/* The texts a contact's answer holds and their total length. */
typedef struct contact_names {
    char feature[CQ_MAX_POINTS][32];
    size_t feature_len[CQ_MAX_POINTS];
    const char *algorithm, *reason, *action, *axis;
    size_t bytes;
} contact_names;

static size_t name_len(const char *s) { return s ? strlen(s) : 0; }

/* The point count encode.c writes: point_count held to 0..CQ_MAX_POINTS. */
static int points_of(const cq_contact *c)
{
    return c->point_count < 0 ? 0 : c->point_count > CQ_MAX_POINTS ? CQ_MAX_POINTS : c->point_count;
}

static bool has_fallback(const cq_contact *c)
{
    return c->fallback_reason != CQ_FB_NONE || c->fallback_action != CQ_FBA_NONE;
}

static bool has_sat(const cq_contact *c) { return c->sat_axis >= 0 || c->algorithm == CQ_ALG_SAT_BOX_BOX; }

static bool has_witness(const cq_contact *c) { return c->has_distance && c->distance > 0; }

static void gather_names(const cq_contact *c, contact_names *n)
{
    n->bytes = 0;
    for (int i = 0; i < points_of(c); i++) {
        cq_feature_format(c->points[i].feature, n->feature[i], (int)sizeof n->feature[i]);
        n->bytes += n->feature_len[i] = strlen(n->feature[i]);
    }
    n->algorithm = cq_algorithm_name(c->algorithm);
    n->reason = has_fallback(c) ? cq_fallback_reason_name(c->fallback_reason) : NULL;
    n->action = has_fallback(c) ? cq_fallback_action_name(c->fallback_action) : NULL;
    n->axis = has_sat(c) ? cq_sat_axis_name(c->sat_axis) : NULL;
    n->bytes += name_len(n->algorithm) + name_len(n->reason) + name_len(n->action) + name_len(n->axis);
}

/* "points": [{"position", "depth", "feature"}, ...] */
static char *put_points(char *p, const cq_contact *c, const contact_names *n, bool keep)
{
    CQPW_KEY(p, "points");
    int count = points_of(c);
    *p++ = (char)(0x90 | count);
    for (int i = 0; i < count; i++) {
        const cq_contact_point *pt = &c->points[i];
        *p++ = (char)0x83;
        CQPW_KEY(p, "position");
        p = cqpw_put_vec3(p, pt->position, keep);
        CQPW_KEY(p, "depth");
        p = cqpw_put_num(p, pt->depth, keep);
        CQPW_KEY(p, "feature");
        p = cqpw_put_str(p, n->feature[i], n->feature_len[i]);
    }
    return p;
}

/* "witness" (when written), "algorithm", "fallback" and "sat" (when written). */
static char *put_tail(char *p, const cq_contact *c, const contact_names *n, bool keep)
{
    if (has_witness(c)) {
        CQPW_KEY(p, "witness");
        *p++ = (char)0x82;
        CQPW_KEY(p, "a");
        p = cqpw_put_vec3(p, c->witness_a, keep);
        CQPW_KEY(p, "b");
        p = cqpw_put_vec3(p, c->witness_b, keep);
    }
    CQPW_KEY(p, "algorithm");
    p = cqpw_put_str(p, n->algorithm, name_len(n->algorithm));
    CQPW_KEY(p, "fallback");
    if (!has_fallback(c)) {
        *p++ = (char)0xc0;
    } else {
        *p++ = (char)0x82;
        CQPW_KEY(p, "reason");
        p = cqpw_put_str(p, n->reason, name_len(n->reason));
        CQPW_KEY(p, "action");
        p = cqpw_put_str(p, n->action, name_len(n->action));
    }
    if (has_sat(c)) {
        CQPW_KEY(p, "sat");
        *p++ = (char)0x82;
        CQPW_KEY(p, "axis");
        p = cqpw_put_str(p, n->axis, name_len(n->axis));
        CQPW_KEY(p, "gap");
        p = cqpw_put_num(p, c->sat_gap, keep);
    }
    return p;
}

bool cqp__mp_contact_fields(cqp_writer *w, const cq_contact *c)
{
    // The points array, a point's map and its position's array nest two
    // levels below the open map: the writer's depth limit cannot be met.
    if (w->format != CQP_MSGPACK || w->after_key || w->depth < 1 || w->depth + 2 >= CQP_WRITER_MAX_DEPTH)
        return false;
    contact_names n;
    gather_names(c, &n);
    uint32_t members = 6 + c->has_normal + has_witness(c) + has_sat(c);
    char *p = cqp__mp_raw_begin(w, members, CONTACT_FIXED + n.bytes);
    if (!p)
        return true; // oom: the calls would have written nothing either
    bool keep = w->keep_negative_zero;
    CQPW_KEY(p, "overlap");
    *p++ = (char)(c->overlap ? 0xc3 : 0xc2);
    CQPW_KEY(p, "distance");
    p = cqpw_put_num(p, c->distance, keep);
    CQPW_KEY(p, "depth");
    p = cqpw_put_num(p, c->depth, keep);
    if (c->has_normal) {
        CQPW_KEY(p, "normal");
        p = cqpw_put_vec3(p, c->normal, keep);
    }
    p = put_points(p, c, &n, keep);
    cqp__mp_raw_end(w, put_tail(p, c, &n, keep));
    return true;
}
