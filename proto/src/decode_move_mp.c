/* A batch's move in MessagePack in one forward pass (decode_internal.h):
 * the form a game tick sends 10,000 of, {"id", "pose": {"position",
 * "rotation"}, "velocity"?}, members in any order. Through the view each
 * of its 21 values is a call, and each map is walked twice, once by
 * cqp__object to find its members and again by the iteration skipping past
 * it; here every byte is read once and the item's end comes out for free.
 * It takes only what the view-based decode_move would accept, decoded to
 * the same bits: anything else (another form, or any fault) is left to
 * decode_move, which then reports the problem as it always has. */
#include <math.h>

#include "decode_internal.h"
#include "mp_read.h"

/* A number as cqp__number takes it, stored straight where it goes: read
 * into a local array and then copied, each vector would be written in 8
 * bytes and read back in 16, which the processor cannot forward. */
__attribute__((always_inline)) static inline bool number(const unsigned char **p, double *out)
{
    // One test refuses NaN and the infinities too.
    return mpr_number(p, out) && fabs(*out) <= CQPD_NUMBER_MAX;
}

/* The header of an array of exactly n elements. */
static inline bool array_of(const unsigned char **p, uint32_t n)
{
    uint32_t have;
    return mpr_array(p, &have) && have == n;
}

static inline bool vec3(const unsigned char **p, cq_vec3 *out)
{
    return array_of(p, 3) && number(p, &out->x) && number(p, &out->y) && number(p, &out->z);
}

static inline bool quat(const unsigned char **p, cq_quat *out)
{
    return array_of(p, 4) && number(p, &out->x) && number(p, &out->y) && number(p, &out->z) && number(p, &out->w);
}

/* A string id (cqp_decode_id's; an integer id is left to it). */
static inline bool id_of(const unsigned char **p, char id[CQ_WORLD_ID_MAX + 1])
{
    const char *s;
    uint32_t n;
    if (!mpr_str(p, &s, &n) || !cq_world_id_valid(s, n))
        return false;
    memcpy(id, s, n);
    id[n] = '\0';
    return true;
}

/* A pose of "position" and "rotation", either absent, as cqp_decode_pose
 * reads them (a pose of nil, or with "axes", is left to it): raw->rotation
 * stays the identity when absent. */
static inline bool pose_of(const unsigned char **p, cq_quat_pose *raw)
{
    uint32_t n;
    if (!mpr_map(p, &n) || n > 2)
        return false;
    unsigned seen = 0;
    raw->position = cq_v3(0, 0, 0);
    raw->rotation = (cq_quat){0, 0, 0, 1};
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
            if (!quat(p, &raw->rotation))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

/* The float64 at the lead byte q, stored at *out; whether it is a number
 * cqp__number takes (one test refuses NaN and the infinities too). */
__attribute__((always_inline)) static inline bool form_number(const unsigned char *q, double *out)
{
    uint64_t u = mpr_be64(q + 1);
    memcpy(out, &u, 8);
    return fabs(*out) <= CQPD_NUMBER_MAX;
}

/* The bytes of the move at q when it is of the tick's exact form with an
 * id (mpr_move_form_as), else 0. Only its bytes are read, and only once they
 * are known to be there: the move's map of three members begins with
 * "id" and a fixstr of n bytes, so at least 9 + n bytes are the move's,
 * and `after` values, a byte each at least, follow it. */
static inline size_t form_size(const unsigned char *q, size_t after)
{
    // q[0] a map of three: q[1..5] are there (its first key and value at least).
    return q[0] == 0x83 ? mpr_move_form_as(q, 9 + (size_t)(q[4] & 0x1f) + after, true) : 0;
}

/* A move of the tick's exact form, size bytes at q, decoded as the member
 * by member path below decodes it: every byte's place is known, so its
 * ten numbers are read straight from their offsets. NULL for an invalid
 * number (that path refuses it too, and the view then reports it); an
 * invalid id is not of the form, and goes that path from the start. */
static const char *form_move(const unsigned char *q, size_t size, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op,
                             cq_quat_pose *raw)
{
    size_t n = q[4] & 0x1f; // an id: mpr_move_form tested it
    memcpy(id, q + MPR_MOVE_HEAD, n);
    id[n] = '\0';
    const unsigned char *t = q + MPR_MOVE_HEAD + n;
    bool ok = form_number(t + MPR_AT_POSITION, &raw->position.x);
    ok &= form_number(t + MPR_AT_POSITION + 9, &raw->position.y);
    ok &= form_number(t + MPR_AT_POSITION + 18, &raw->position.z);
    ok &= form_number(t + MPR_AT_ROTATION, &raw->rotation.x);
    ok &= form_number(t + MPR_AT_ROTATION + 9, &raw->rotation.y);
    ok &= form_number(t + MPR_AT_ROTATION + 18, &raw->rotation.z);
    ok &= form_number(t + MPR_AT_ROTATION + 27, &raw->rotation.w);
    ok &= form_number(t + MPR_AT_VELOCITY, &op->velocity.x);
    ok &= form_number(t + MPR_AT_VELOCITY + 9, &op->velocity.y);
    ok &= form_number(t + MPR_AT_VELOCITY + 18, &op->velocity.z);
    if (!ok)
        return NULL;
    op->handle = (cq_world_handle){0, 0};
    memset(&op->shape, 0, sizeof op->shape);
    op->layer = 0;
    op->mask = 0;
    op->kind = CQ_WORLD_MOVE;
    op->keep_velocity = false;
    return (const char *)q + size;
}

const char *cqp__move_mp(const char *at, size_t after, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op,
                         cq_quat_pose *raw)
{
    const unsigned char *p = (const unsigned char *)at;
    size_t size = form_size(p, after);
    if (size > 0)
        return form_move(p, size, id, op, raw);
    uint32_t n;
    if (!mpr_map(&p, &n) || n > 3)
        return NULL;
    // What decode_move leaves zero, field by field: a memset of the whole op is rep stos, slow to start.
    op->handle = (cq_world_handle){0, 0};
    memset(&op->shape, 0, sizeof op->shape);
    op->velocity = cq_v3(0, 0, 0);
    op->layer = 0;
    op->mask = 0;
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
