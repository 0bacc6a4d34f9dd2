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
 * A grab is one successful sl_loop_next (the final empty one is not
 * counted); it is local when the chunk came from the caller's own share or
 * queue (static, afs) and remote otherwise (a central queue, a steal): the
 * synchronization operations of Markatos's Tables 5.3-5.5.
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
#include "spinlock.h"
#include "eventlog.h"

enum sl_loopsched {
    SL_LOOP_STATIC,
    SL_LOOP_SS,
    SL_LOOP_GSS,
    SL_LOOP_FACTORING,
    SL_LOOP_TRAPEZOID,
    SL_LOOP_AFS,
    SL_NLOOPSCHEDS
};

struct sl_chunk {
    int64_t start, len;     /* iterations [start, start + len) */
    int     local;          /* 1: from the caller's own share or queue */
};

struct sl_loopq {           /* per process, its own cache line */
    struct sl_spinlock lock;
    int64_t  next, end;     /* static, afs: the queue holds [next, end) */
    uint64_t local, remote; /* grabs by this process (only it writes them) */
} __attribute__((aligned(64)));

struct sl_loop {
    enum sl_loopsched kind;
    int      nprocs, k;
    int64_t  lo, hi;
    struct sl_spinlock lock __attribute__((aligned(64)));   /* factoring, trapezoid */
    int64_t  next;          /* central queue: first iteration not handed out */
    int64_t  batch_left;    /* factoring: chunks left in the batch */
    int64_t  chunk;         /* factoring: this batch's chunk; trapezoid: the next chunk */
    int64_t  delta;         /* trapezoid: the decrement */
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
