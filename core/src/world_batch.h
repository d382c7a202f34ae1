/* Internal to world_batch.c (checks, cq_world_prepare) and world_commit.c
 * (cq_world_commit): one batch's records, kept in the world's batch
 * scratch between the two. */
#ifndef CQ_WORLD_BATCH_H
#define CQ_WORLD_BATCH_H

#include "world_internal.h"

/* What the batch made of one registration. */
typedef struct batch_rec {
    const char *id;  /* new registrations: the op's id (borrowed) */
    int32_t id_len;
    uint32_t hash;   /* new registrations: world_id_hash of id */
    int32_t slot;    /* the world slot it had, -1 for a new registration */
    int32_t upsert;  /* op of the last upsert, -1: the stored shape */
    int32_t pose;    /* op that last set the pose, -1: stored */
    int32_t vel;     /* op that last set the velocity, -1: stored */
    bool present;
} batch_rec;

/* A hull or mesh a shape refers to (see world_owned). */
typedef struct owned_ref {
    const void *block;
    cq_shape_type type; /* picks the free function */
    int32_t op;         /* the upsert that gave it, -1: stored */
} owned_ref;

/* The scratch of one batch, carved from w->batch_block. */
typedef struct batch {
    batch_rec *rec;
    int n;             /* records */
    int news;          /* new registrations among them */
    int32_t *ntable;   /* new registrations by id: record or -1 (filled in with the first) */
    uint32_t nmask;
    owned_ref *finals; /* hulls and meshes the batch leaves in use */
    owned_ref *cands;  /* hulls and meshes the batch may leave unused */
    int32_t *fresh;    /* slots of new registrations */
    cq_aabb *box;      /* per record, when boxed: the final box (not fattened) */
    bool boxed;        /* the pair cap's check computed every record's box */
    grid_rec *grec;    /* per changed record, when gridded: its new pair grid record */
    int32_t *gchg;     /* the records whose grid record the batch changes */
    int ngchg;
    bool gridded;      /* the check entered those changes in the world's grid */
    bool probing;      /* check_all probes each move against the kept grid */
    int unprobed;      /* ops it could not probe: then the check makes its own pass */
} batch;

/* How far ahead of the op (or record) at hand the loops over a batch
 * prefetch the cells, names and entries they will read: a batch of moves
 * in a large world misses the cache at every one of them, and waiting for
 * each in turn made a move cost 3x more at 100,000 shapes than at 10,000. */
#define WORLD_AHEAD 16

/* A macro, not a function: GCC finds a function doing nothing but
 * prefetch free of side effects and drops the calls to it. */
#if defined(__GNUC__)
#define world_prefetch(p) __builtin_prefetch(p)
#else
#define world_prefetch(p) ((void)(p))
#endif

/* world_batch.c: frees the candidates not in use, each once. */
void cq__batch_free_owned(batch *b, int nc, int nf);

/* world_paircap.c: the pair cap's check enters a batch's changes in the
 * world's grid (b->gridded), so a passed batch's commit only stores the
 * changed records: live says whether it does (else the grid is made
 * afresh, or dropped, at the end), records stores those of the batch's
 * registrations that had a slot, and the commit stores a new
 * registration's b->grec entry itself; finish ends the commit's changes.
 * undo takes a gridded batch's changes out again (a refusal, an
 * abandoned batch). None can fail. */
bool cq__world_pair_grid_live(const cq_world *w, const batch *b);
void cq__world_pair_grid_records(cq_world *w, const batch *b);
/* world_paircap.c: the slot's kept shape data, from its stored shape
 * (the commit calls it for every slot an upsert gave a shape). */
void cq__world_pair_grid_shape(cq_world *w, int slot);
void cq__world_pair_grid_finish(cq_world *w, bool live);
void cq__world_pair_grid_undo(cq_world *w, batch *b);

/* world_paircap.c, for check_all while the op's lines are in cache: a
 * move op of a box that opened record r of a slot gets its box (into
 * b->box[r]) from the kept half extents and is tested against its cells;
 * one that leaves them is noted (b->gchg) for the check. An op of any
 * other kind, or on a record an op opened before, counts in b->unprobed.
 * probe_start says whether to probe at all. */
bool cq__world_pair_grid_probe_start(const cq_world *w);
void cq__world_pair_grid_probe(const cq_world *w, batch *b, int r, const cq_world_op *op);

/* world_paircap.c: CQ_ELIMIT when the world after batch b (its slot marks
 * set; NULL: the world as it is), its broadphase boxes fattened by skin / 2,
 * would hold more pairs than cap allows (cap <= 0: no cap); CQ_ENO_MEMORY.
 * May fill b->box and set b->boxed, for the commit; on CQ_OK may have
 * entered the batch in the grid (b->gridded), which a caller that then
 * drops the batch undoes. */
int cq__world_check_pair_cap(cq_world *w, batch *b, const cq_world_op *ops, double skin, long cap);

/* world_commit.c: applies the records (cannot fail). */
void cq__batch_commit(cq_world *w, batch *b, const cq_world_op *ops, int nc, int nf);

#endif
