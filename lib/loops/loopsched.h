/*
 * loopsched.h - loop schedulers: how the iterations [lo, hi) of a parallel
 * loop are handed out to P processes in chunks (Markatos chapter 5).
 *
 *   static     process p takes its share [lo + N p/P, lo + N (p+1)/P) in one
 *              grab, and nothing else
 *   ss         self-scheduling: one iteration per grab from a central queue
 *   gss        guided self-scheduling: floor(R/P) (at least 1) of the R remaining
 *   factoring  in batches: at the start of a batch, R remain; the batch is P
 *              chunks of floor(R/(2P)) (at least 1) each - the thesis's rounding,
 *              as its grab counts show (loopsched.c)
 *   trapezoid  Tzen & Ni: chunks shrink linearly from f = floor(N/(2P)) to
 *              1: n = ceil(2N/(f+1)) chunks, each delta = floor((f-1)/(n-1))
 *              smaller than the one before
 *   afs        affinity scheduling: a queue per process, first holding its
 *              static share; a process takes ceil(R/k) of the R left in its
 *              own queue (k = P unless set); when that is empty it steals
 *              ceil(R/P) of the R left in the most loaded queue (from its
 *              end, so the owner's next iterations stay contiguous)
 *   mod-factoring  Markatos 5.2.3: factoring's batches, but in each batch
 *              process i takes the i-th chunk if it is still there, else
 *              the first chunk left (so a loop run again gives process i
 *              the same iterations while nobody falls behind)
 *   best-static  Markatos 5.4.1's BEST-STATIC: a static assignment the app
 *              makes from its knowledge of the input - contiguous parts
 *              given by sl_loop_set_split (sl_loop_split_weighted cuts
 *              parts of equal total work); without a split, static's shares
 * A grab is one successful sl_loop_next (the final empty one is not
 * counted); it is local when the chunk came from the caller's own share or
 * queue (static, best-static, afs; mod-factoring: the caller's own i-th
 * chunk of a batch) and remote otherwise (a central queue, a steal, another
 * process's chunk): the synchronization operations of Markatos's Tables
 * 5.3-5.5. How many grabs a loop takes depends only on its N and P, for
 * every scheduler - AFS with k = P too, as an owner's grab and a theft both
 * leave R - ceil(R/P) in a queue; which of them are local may not.
 *
 * Concurrency: any number of processes may call sl_loop_next at once (the
 * central queues use a CAS or a spinlock, AFS a spinlock per queue).
 * sl_loop_start must not run while anyone is inside sl_loop_next on the
 * same loop, and must happen-before the next grabs (e.g. reset the loop
 * for step k+1 during step k, and pass a barrier in between; apps keep two
 * loops and alternate). Pure logic: no allocation, no system call except a
 * yield in the spinlock; it builds for the kernel and for the host.
 */
#ifndef SL_LOOPSCHED_H
#define SL_LOOPSCHED_H

#include <stddef.h>
#include <stdint.h>
#include "base/spinlock.h"
#include "base/eventlog.h"

enum sl_loopsched {
    SL_LOOP_STATIC,
    SL_LOOP_SS,
    SL_LOOP_GSS,
    SL_LOOP_FACTORING,
    SL_LOOP_TRAPEZOID,
    SL_LOOP_AFS,
    SL_LOOP_MODFACTORING,
    SL_LOOP_BESTSTATIC,
    SL_NLOOPSCHEDS
};

struct sl_chunk {
    int64_t start, len;     /* iterations [start, start + len) */
    int     local;          /* 1: from the caller's own share or queue */
};

struct sl_loopq {           /* per process, its own cache line */
    struct sl_spinlock lock;
    int64_t  next, end;     /* static, best-static, afs: the queue holds [next, end) */
    int64_t  split;         /* best-static: the first iteration of this process's part (-1: none set) */
    uint64_t local, remote; /* grabs by this process (only it writes them) */
} __attribute__((aligned(64)));

struct sl_loop {
    enum sl_loopsched kind;
    int      nprocs, k;
    int64_t  lo, hi;
    struct sl_spinlock lock __attribute__((aligned(64)));   /* factoring, trapezoid, mod-factoring */
    int64_t  next;          /* central queue: first iteration not handed out */
    int64_t  batch_left;    /* factoring: chunks left in the batch */
    int64_t  chunk;         /* (mod-)factoring: this batch's chunk; trapezoid: the next chunk */
    int64_t  delta;         /* trapezoid: the decrement */
    int64_t  batch_start;   /* mod-factoring: the batch's chunk j is [batch_start + j chunk, + chunk) */
    int      batch_chunks;  /* mod-factoring: chunks in the batch (P, fewer at the end) */
    int64_t  split_end;     /* best-static: the end of the last part (sl_loop_set_split) */
    uint64_t taken[(SL_MAX_PROCS + 63) / 64]; /* mod-factoring: bit j set once chunk j is handed out */
    struct sl_loopq q[];    /* nprocs */
};

/* Bytes for a loop of nprocs processes (allocate them 64-byte aligned). */
size_t sl_loop_bytes(int nprocs);
/* Once, before any use. k: AFS takes 1/k of its local queue (0 = nprocs). */
void sl_loop_init(struct sl_loop *l, enum sl_loopsched kind, int nprocs, int k);
/* A new loop over [lo, hi); keeps the grab counts. */
void sl_loop_start(struct sl_loop *l, int64_t lo, int64_t hi);
/* Process proc's next chunk: 1 and *c filled, or 0 when the loop is done
   (for proc: a static process is done after its share). */
int  sl_loop_next(struct sl_loop *l, int proc, struct sl_chunk *c);
/* sl_loop_next, and a grab record in the event log (trace=on; eventlog.h): what apps call. */
static inline int sl_loop_grab(struct sl_loop *l, int proc, struct sl_chunk *c)
{
    int got = sl_loop_next(l, proc, c);

    if (got)
        sl_ulog(SL_UL_GRAB, (int32_t)c->len, !c->local);
    return got;
}
/* best-static: process i's part is [first[i], first[i+1]) of every loop
   (first[0..nprocs], non-decreasing), clipped to the loop's [lo, hi); set
   it before sl_loop_start. Returns 0, or -1 (nothing changed) if first is
   not non-decreasing or l is not best-static. */
int  sl_loop_set_split(struct sl_loop *l, const int64_t *first);
/* Cut [0, n) into p contiguous parts of about equal total weight: part i
   is [first[i], first[i+1]), first[0] = 0, first[p] = n; part i ends where
   the running sum of w first reaches (i+1)/p of the total. Every part gets
   at least one iteration while n >= p. */
void sl_loop_split_weighted(const uint64_t *w, int64_t n, int p, int64_t *first);
/* Grabs so far, summed over the processes. */
void sl_loop_grabs(const struct sl_loop *l, uint64_t *local, uint64_t *remote);

/* The deterministic simulation: start l over [0, n), then let the
   processes take one chunk each in turn, 0, 1, ..., P-1, 0, ... (skipping
   those that are done) until all are done; chunk(ctx, proc, c) sees every
   chunk in that order. Returns the number of chunks. */
uint64_t sl_loop_simulate(struct sl_loop *l, int64_t n,
                          void (*chunk)(void *ctx, int proc, const struct sl_chunk *c), void *ctx);

/* The scheduler named `name` ("static", "ss", ...), or -1; and back. */
int         sl_loop_parse(const char *name);
const char *sl_loop_name(enum sl_loopsched kind);

#endif
