/* Answer room (room.h): an answer's items are counted against the limit
 * at the size of their smallest encoding, measured by the encoders
 * themselves so that the bound follows the wire format wherever it goes. */
#include "room.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cqp/encode.h"
#include "state/server.h"

/* The smallest touching pair with algorithm alg: the shortest ids,
 * zeros (one byte in either format), no normal, points, witness,
 * fallback or SAT member. */
static void write_min_contact(cqp_writer *w, cq_algorithm alg)
{
    cq_contact k;
    memset(&k, 0, sizeof k);
    k.overlap = true;
    k.algorithm = alg;
    k.sat_axis = -1;
    cqp_obj_begin(w);
    cqp_kv_str(w, "a", "x");
    cqp_kv_str(w, "b", "x");
    cqp_write_contact_fields(w, &k, NULL);
    cqp_obj_end(w);
}

static void write_min_item(cqp_writer *w, cqd_item kind, int variant)
{
    static const cq_world_toi toi;
    static const cq_ray_hit hit = {.hit = true};
    switch (kind) {
    case CQD_ITEM_CONTACT:
        write_min_contact(w, (cq_algorithm)variant);
        break;
    case CQD_ITEM_TOI:
        cqp_write_toi(w, "x", "x", &toi);
        break;
    case CQD_ITEM_PAIR:
        cqp_arr_begin(w);
        cqp_str(w, "x");
        cqp_str(w, "x");
        cqp_arr_end(w);
        break;
    case CQD_ITEM_HIT:
        cqp_write_ray_hit(w, "x", &hit);
        break;
    case CQD_ITEM_ID:
        cqp_str(w, "x");
        break;
    }
}

/* One variant's size; SIZE_MAX when the scratch buffer failed. */
static size_t item_size(cqp_format f, cqd_item kind, int variant)
{
    cqp_buf b = {0};
    cqp_writer w;
    cqp_writer_init_format(&w, &b, f, false);
    write_min_item(&w, kind, variant);
    size_t n = b.oom ? SIZE_MAX : cqp_buf_size(&b);
    cqp_buf_free(&b);
    return n;
}

/* The sizes never change while the daemon runs: measured once per format
 * and kind (0: not yet; two threads racing store the same value), so a
 * tick's contacts query pays a load, not 16 encodes. */
static _Atomic size_t known[CQP_MSGPACK + 1][CQD_ITEM_ID + 1];

size_t cqd_room_item_min(const cqd_call *c, cqd_item kind)
{
    cqp_format f = c->req->accept == CQP_MSGPACK ? CQP_MSGPACK : CQP_JSON;
    size_t least = atomic_load_explicit(&known[f][kind], memory_order_relaxed);
    if (least)
        return least;
    /* a contact's algorithm name is its only variable-length member */
    int variants = kind == CQD_ITEM_CONTACT ? CQ_ALG_COUNT : 1;
    least = SIZE_MAX;
    for (int v = 0; v < variants; v++) {
        size_t n = item_size(f, kind, v);
        least = n < least ? n : least;
    }
    /* out of memory for a few bytes of scratch: one byte an item still
     * bounds, and the next request measures again */
    if (least == SIZE_MAX || least == 0)
        return 1;
    atomic_store_explicit(&known[f][kind], least, memory_order_relaxed);
    return least;
}

int cqd_room_items(const cqd_call *c, cqd_item kind)
{
    size_t limit = c->resp->body.limit;
    if (limit == 0)
        return INT_MAX;
    size_t most = limit / cqd_room_item_min(c, kind) + 1;
    return most > INT_MAX ? INT_MAX : (int)most;
}

int cqd_room_refuse(cqd_call *c, cqd_item kind, long long count)
{
    size_t each = cqd_room_item_min(c, kind), most = c->srv->cfg.max_response;
    unsigned long long want = count > 0 && (unsigned long long)count > ULLONG_MAX / each
                                  ? ULLONG_MAX
                                  : (unsigned long long)(count > 0 ? count : 0) * each;
    if (want > most)
        return cqp_fail(&c->problem, CQP_P_OVER_LIMIT, NULL,
                        "the answer would be at least %llu bytes; this server sends at most %zu (--max-response)",
                        want, most);
    return cqp_fail(&c->problem, CQP_P_BUSY, NULL,
                    "the answer would be at least %llu bytes; at most %zu are sent while unsent replies fill %s; "
                    "retry shortly", want, c->resp->body.limit, cqd_request_short_by(c->req));
}
