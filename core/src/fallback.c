/* The fallback log: a single-writer ring read by a per-slot seqlock. The
 * record is packed into atomic words so a concurrent read is never a data
 * race; the stamp tells the reader whether the words belong to the push it
 * wants, and a second look after an acquire fence whether they changed. */
#include "cq/fallback.h"

cq_fallback_reason cq_fallback_from_epa(cq_epa_status s)
{
    switch (s) {
    case CQ_EPA_OK:
        return CQ_FB_NONE;
    case CQ_EPA_ITERATION_LIMIT:
        return CQ_FB_EPA_ITERATION_LIMIT;
    case CQ_EPA_CAPACITY:
        return CQ_FB_EPA_CAPACITY;
    case CQ_EPA_DEGENERATE:
        break;
    }
    return CQ_FB_EPA_DEGENERATE;
}

void cq_fallback_report(cq_counters *counters, cq_fallback_log *log, const cq_fallback_record *rec)
{
    cq_count(counters, CQ_CTR_REASONS + rec->reason, 1);
    cq_count(counters, CQ_CTR_ACTIONS + rec->action, 1);
    cq_count(counters, CQ_CTR_ZERO_NORMALS, 1);
    if (log)
        cq_fallback_log_push(log, rec);
}

int cq_fallback_log_init(cq_fallback_log *log, cq_fallback_slot *slots, int capacity,
                         _Atomic uint64_t *clock)
{
    if (!slots || capacity < 1)
        return CQ_ERANGE;
    for (int i = 0; i < capacity; i++) {
        atomic_init(&slots[i].stamp, 0);
        for (int k = 0; k < 4; k++)
            atomic_init(&slots[i].word[k], 0);
    }
    log->slots = slots;
    log->capacity = (uint64_t)capacity;
    log->clock = clock;
    atomic_init(&log->pushed, 0);
    return CQ_OK;
}

static void cq_pack(const cq_fallback_record *r, uint64_t seq, uint64_t w[4])
{
    w[0] = seq;
    w[1] = (uint64_t)r->reason | (uint64_t)r->action << 8 | (uint64_t)r->shape_a << 16 |
           (uint64_t)r->shape_b << 24 | (uint64_t)r->iterations << 32;
    w[2] = r->tag_a;
    w[3] = r->tag_b;
}

static cq_fallback_record cq_unpack(const uint64_t w[4])
{
    return (cq_fallback_record){
        .seq = w[0],
        .reason = (uint8_t)w[1],
        .action = (uint8_t)(w[1] >> 8),
        .shape_a = (uint8_t)(w[1] >> 16),
        .shape_b = (uint8_t)(w[1] >> 24),
        .iterations = (uint16_t)(w[1] >> 32),
        .tag_a = w[2],
        .tag_b = w[3],
    };
}

uint64_t cq_fallback_log_push(cq_fallback_log *log, const cq_fallback_record *rec)
{
    /* Only this thread writes pushed, so a relaxed read sees its own last store. */
    uint64_t i = atomic_load_explicit(&log->pushed, memory_order_relaxed);
    uint64_t seq = log->clock ? atomic_fetch_add_explicit(log->clock, 1, memory_order_relaxed) + 1 : i + 1;
    uint64_t w[4];
    cq_pack(rec, seq, w);
    cq_fallback_slot *s = &log->slots[i % log->capacity];
    atomic_store_explicit(&s->stamp, 2 * i + 1, memory_order_relaxed);
    /* Orders the odd stamp before the words: a reader that sees a new word
     * then sees a stamp other than the one it wants. */
    atomic_thread_fence(memory_order_release);
    for (int k = 0; k < 4; k++)
        atomic_store_explicit(&s->word[k], w[k], memory_order_relaxed);
    atomic_store_explicit(&s->stamp, 2 * i + 2, memory_order_release);
    atomic_store_explicit(&log->pushed, i + 1, memory_order_release);
    return seq;
}

/* Copies push number i (0-based) if slot still holds it, whole. */
static bool cq_read_slot(const cq_fallback_slot *s, uint64_t i, cq_fallback_record *out)
{
    uint64_t want = 2 * i + 2;
    if (atomic_load_explicit(&s->stamp, memory_order_acquire) != want)
        return false;
    uint64_t w[4];
    for (int k = 0; k < 4; k++)
        w[k] = atomic_load_explicit(&s->word[k], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->stamp, memory_order_relaxed) != want)
        return false;
    *out = cq_unpack(w);
    return true;
}

int cq_fallback_log_read(const cq_fallback_log *log, cq_fallback_record *out, int max)
{
    uint64_t n = atomic_load_explicit(&log->pushed, memory_order_acquire);
    uint64_t oldest = n > log->capacity ? n - log->capacity : 0;
    int k = 0;
    for (uint64_t i = n; i > oldest && k < max; i--)
        if (cq_read_slot(&log->slots[(i - 1) % log->capacity], i - 1, &out[k]))
            k++;
    return k;
}
