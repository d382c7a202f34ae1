/* A batch's move in MessagePack in one forward pass (decode_internal.h):
 * the form a game tick sends 10,000 of, {"id", "pose": {"position",
 * "rotation"}, "velocity"?}, members in any order. Through the view each
 * of its 21 values is a call, and each map is walked twice, once by
 * cqpd_object to find its members and again by the iteration skipping past
 * it; here every byte is read once and the item's end comes out for free.
 * It takes only what the view-based decode_move would accept, decoded to
 * the same bits: anything else (another form, or any fault) is left to
 * decode_move, which then reports the problem as it always has. */
#include <math.h>

#include "decode_internal.h"
#include "mp_read.h"

/* An array of exactly n numbers, each as cqpd_number takes it. */
static inline bool numbers(const unsigned char **p, double *out, uint32_t n)
{
    uint32_t have;
    if (!mpr_array(p, &have) || have != n)
        return false;
    for (uint32_t k = 0; k < n; k++)
        // One test refuses NaN and the infinities too.
        if (!mpr_number(p, &out[k]) || !(fabs(out[k]) <= CQPD_NUMBER_MAX))
            return false;
    return true;
}

static inline bool vec3(const unsigned char **p, cq_vec3 *out)
{
    double c[3];
    if (!numbers(p, c, 3))
        return false;
    *out = cq_v3(c[0], c[1], c[2]);
    return true;
}

/* A string id (cqp_decode_id's; an integer id is left to it). */
static inline bool id_of(const unsigned char **p, char id[CQ_WORLD_ID_MAX + 1])
{
    const char *s;
    uint32_t n;
    if (!mpr_str(p, &s, &n) || n == 0 || n > CQ_WORLD_ID_MAX)
        return false;
    for (uint32_t k = 0; k < n; k++)
        if (!cqpd_id_char(s[k]))
            return false;
    memcpy(id, s, n);
    id[n] = '\0';
    return true;
}

/* A pose of "position" and "rotation", either absent, as cqp_decode_pose
 * reads them (a pose of nil, or with "axes", is left to it): raw->rotation
 * stays the identity when absent. */
static inline bool pose_of(const unsigned char **p, cqpd_move_raw *raw)
{
    uint32_t n;
    if (!mpr_map(p, &n) || n > 2)
        return false;
    double q[4] = {0, 0, 0, 1};
    unsigned seen = 0;
    raw->position = cq_v3(0, 0, 0);
    for (uint32_t i = 0; i < n; i++) {
        const char *k;
        uint32_t len;
        if (!mpr_str(p, &k, &len)) // never so: cqp_mp_check saw every key is a string
            return false;
        if (mpr_is(k, len, "position", 8) && !(seen & 1)) {
            seen |= 1;
            if (!vec3(p, &raw->position))
                return false;
        } else if (mpr_is(k, len, "rotation", 8) && !(seen & 2)) {
            seen |= 2;
            if (!numbers(p, q, 4))
                return false;
        } else {
            return false;
        }
    }
    raw->rotation = (cq_quat){q[0], q[1], q[2], q[3]};
    return true;
}

const char *cqpd_move_mp(const char *at, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op, cqpd_move_raw *raw)
{
    const unsigned char *p = (const unsigned char *)at;
    uint32_t n;
    if (!mpr_map(&p, &n) || n > 3)
        return NULL;
    memset(op, 0, sizeof *op);
    unsigned seen = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *k;
        uint32_t len;
        if (!mpr_str(&p, &k, &len))
            return NULL;
        bool ok;
        if (mpr_is(k, len, "id", 2) && !(seen & 1)) {
            seen |= 1;
            ok = id_of(&p, id);
        } else if (mpr_is(k, len, "pose", 4) && !(seen & 2)) {
            seen |= 2;
            ok = pose_of(&p, raw);
        } else if (mpr_is(k, len, "velocity", 8) && !(seen & 4)) {
            seen |= 4;
            ok = vec3(&p, &op->velocity);
        } else {
            ok = false;
        }
        if (!ok)
            return NULL;
    }
    if ((seen & 3) != 3)
        return NULL;
    op->kind = CQ_WORLD_MOVE;
    op->keep_velocity = !(seen & 4);
    return (const char *)p;
}
