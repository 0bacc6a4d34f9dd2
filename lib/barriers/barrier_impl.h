/*
 * barrier_impl.h - private to the barrier shapes (barrier*.c): what they
 * share besides the ops table.
 *
 * Per-participant records. Every shape keeps one struct sl_bpart per
 * participant, in its own cache line, written only by that participant
 * (combination's set-up writes `group` once, before anyone reads it). The
 * adaptive wait kind reads them to learn whom a waiter still needs:
 *   mark  (episode + 1) & SL_WAIT_VALUE once the participant has passed its
 *         arrival on to whoever waits for it; a participant whose mark is
 *         not the current episode's is "missing"
 *   proc  the process that last ran it (the running[] index)
 * Both are kept only when the barrier's wait kind is adaptive, so the other
 * kinds pay nothing for them.
 *
 * The tree core (barrier_tree.c) is shared by the tree shape (one node per
 * participant) and the combination shape (one node per hart group).
 */
#ifndef SL_BARRIER_IMPL_H
#define SL_BARRIER_IMPL_H

#include "schedlab.h"
#include "barriers/barrier.h"
#include "base/syncstat.h"

/* A shape's counted wait, SL_BARRIER_COUNTED(fn) -> fn_counted, for its table entry: the episode (three
   accesses: the record's address, the count, its store) and a direct tail call of fn - no frame and no
   load of fn through a table, since under the machine model each access costs host time (barrier.c). */
#define SL_BARRIER_COUNTED(fn)                                 \
    static void fn##_counted(struct sl_barrier *b, uint32_t id) \
    {                                                           \
        sl_sync_episode();                                      \
        fn(b, id);                                              \
    }

#define SL_LINE 64

struct sl_bpart {
    uint32_t mark;
    uint32_t proc;
    uint32_t hart;      /* combination: the hart it ran on at its first episode */
    uint32_t group;     /* combination: its hart group */
} __attribute__((aligned(SL_LINE)));

/* Zeroed, cache-line-aligned memory; *raw is what to sl_free. */
void *sl_bar_alloc(size_t bytes, void **raw);
/* parts[0..n): proc = index (the usual guess until each participant has
   arrived once), mark = 0. */
void sl_bpart_init(struct sl_bpart *parts, uint32_t n);
/* 1 if every participant j in [lo, hi), j != self, whose mark is not next
   is running now (adaptive's running() for most waits). */
int  sl_bpart_running(const struct sl_bpart *parts, uint32_t lo, uint32_t hi,
                      uint32_t self, uint32_t next);

/* Adaptive bookkeeping at arrival: remember which process runs this id. */
static inline void
sl_bpart_enter(struct sl_bpart *p)
{
    uint32_t me = (uint32_t)sl_self();

    if (__atomic_load_n(&p->proc, __ATOMIC_RELAXED) != me)
        __atomic_store_n(&p->proc, me, __ATOMIC_RELAXED);
}

static inline void
sl_bpart_mark(struct sl_bpart *p, uint32_t next)
{
    __atomic_store_n(&p->mark, next, __ATOMIC_RELAXED);
}

/* ---- the tree core: 4-ary arrival, binary release, over m nodes ---- */
struct sl_tnode {
    uint32_t arrive;    /* children's arrivals so far (a counter, sl_wait_add) */
    uint32_t release;   /* episodes released so far (sl_wait_set by the release parent) */
    uint32_t ep;        /* episodes this node has completed; only its current owner touches it */
    uint32_t nkids;     /* arrival children */
} __attribute__((aligned(SL_LINE)));

/* Nodes 0..m-1 (node 0 is the root). */
void sl_tree_init(struct sl_tnode *t, uint32_t m);
/* One episode at node i: wait for the arrival children, report to the
   arrival parent, wait for the release, release the release children.
   The episode's number plus one is (t[i].ep + 1) & SL_WAIT_VALUE, which the
   caller (the node's owner) may read before to build its sl_waitfors.
   `mark` (may be null) gets that value once node i's arrival has been
   passed on (adaptive). wf_arrive and wf_release are whom the two waits
   need (adaptive; null otherwise). */
void sl_tree_pass(struct sl_tnode *t, uint32_t m, uint32_t i, enum sl_wait kind,
                  struct sl_bpart *mark,
                  const struct sl_waitfor *wf_arrive, const struct sl_waitfor *wf_release);

static inline uint32_t sl_tree_arrival_parent(uint32_t i) { return (i - 1) / 4; }
static inline uint32_t sl_tree_release_parent(uint32_t i) { return (i - 1) / 2; }

#endif
