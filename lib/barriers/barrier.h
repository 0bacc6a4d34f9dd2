/*
 * barrier.h - barriers: a shape (how arrivals are combined) times a wait
 * kind (how a participant waits, wait.h). Every shape works with every kind.
 *
 * A struct sl_barrier is a small read-only descriptor shared by all
 * participants; the shape keeps its mutable state in `state`, laid out by
 * the shape so that contended words sit in their own cache lines. Shapes:
 *   central      sense-reversing counter barrier (barrier_central.c)
 *   tree         4-ary arrival tree, binary release (wake-up) tree: no
 *                word is touched by more than 4 participants, and
 *                blocked waiters are woken in parallel down the tree
 *                (barrier_tree.c)
 *   combination  Axelrod's: a central barrier among the participants on one
 *                hart, the last of them joins a tree across harts
 *                (barrier_combination.c)
 * A new shape is a new file defining a struct sl_barrier_shape and a line
 * in barrier.c's table; nothing here changes.
 *
 * Participants. The n participants have ids 0..n-1; sl_barrier_wait uses
 * the caller's worker id (sl_worker_id(): the worker inside sl_run_workers,
 * else the process's index sl_self()), so a barrier of all the job's
 * workers or processes needs nothing more. Callers whose participants are something
 * else (user-level threads, a subset of processes) pass the id themselves
 * with sl_barrier_wait_as. The central shape accepts any n callers per
 * episode; tree and combination need distinct ids < n.
 *
 * Use: process 0 initialises the barrier before sl_run_procs; then each of
 * the n participants calls sl_barrier_wait once per episode. A participant
 * returns from episode e only after all n have called it for episode e, and
 * everything any participant wrote before arriving is visible to all after.
 */
#ifndef SL_BARRIER_H
#define SL_BARRIER_H

#include <stdint.h>
#include "schedlab.h"
#include "wait/wait.h"
#include "threads/uthread.h"
#include "base/eventlog.h"

struct sl_barrier;

struct sl_barrier_shape {
    const char *name;
    int  (*init)(struct sl_barrier *b);    /* set b->state; 0 or -1 (no memory) */
    void (*wait)(struct sl_barrier *b, uint32_t id);
    void (*destroy)(struct sl_barrier *b);
    /* wait, counting the arrival as an episode in the sync statistics - made by SL_BARRIER_COUNTED(wait)
       (barrier_impl.h) beside the shape. Required: where the job publishes, barriers take it for wait. */
    void (*counted_wait)(struct sl_barrier *b, uint32_t id);
};

struct sl_barrier {
    const struct sl_barrier_shape *shape;
    void        *state;      /* the shape's */
    uint32_t     n;          /* participants */
    enum sl_wait wait;
};

extern const struct sl_barrier_shape sl_barrier_central, sl_barrier_tree, sl_barrier_combination;

/* A central barrier; sl_die when out of memory. */
void sl_barrier_init(struct sl_barrier *b, uint32_t n, enum sl_wait wait);
void sl_barrier_init_shape(struct sl_barrier *b, const struct sl_barrier_shape *shape,
                           uint32_t n, enum sl_wait wait);
/* The shape named by the app key `shape_key` and the wait kind named by
   `wait_key` (e.g. "shape", "barrier"); sl_die on an unknown name. */
void sl_barrier_init_args(struct sl_barrier *b, uint32_t n, const char *shape_key, const char *wait_key);
void sl_barrier_destroy(struct sl_barrier *b);
/* Where the job publishes sync statistics (base/syncstat.h: policy=adaptive), barriers made from now on
   count each arrival as an episode; elsewhere nothing changes. Process 0, at start-up. */
void sl_barrier_stats_start(void);
/* The shape named `name` ("central", "tree", "combination"), or 0. */
const struct sl_barrier_shape *sl_barrier_shape_find(const char *name);
/* Shape number i (0, 1, ...), or 0 past the last: for listing them all. */
const struct sl_barrier_shape *sl_barrier_shape_at(unsigned i);

/* Every episode is an arrive and a release record in the event log (trace=on; eventlog.h). */
static inline void
sl_barrier_wait_as(struct sl_barrier *b, uint32_t id)
{
    sl_ulog(SL_UL_ARRIVE, (int32_t)id, (uint32_t)b->wait);
    sl_race_point(SL_RACE_ARRIVE);
    b->shape->wait(b, id);
    sl_ulog(SL_UL_RELEASE, (int32_t)id, (uint32_t)b->wait);
}

static inline void
sl_barrier_wait(struct sl_barrier *b)
{
    sl_barrier_wait_as(b, (uint32_t)sl_worker_id());
}

#endif
