/*
 * trace.h - the schedule trace: what every hart did, when (scenario token trace=on).
 *
 * Each hart appends 16-byte records (time, event, job, process, arg) to its own ring of pages. Only the
 * hart itself writes its ring, so recording takes no lock: it is a time read, four stores and an index
 * bump (trace_rec is inline and does nothing when tracing is off). When the ring is full the oldest
 * records are overwritten and counted as dropped. The policy's decisions (slot, early, rep, regime) are
 * also kept in a second, small ring of each hart, from which the dump puts back those the big ring lost,
 * ahead of it: they are a few per quantum, so they outlive the dispatches around them, and a long run's
 * trace still explains every regime move and share from its start (at 32 harts a mix of a few hundred ms
 * had overwritten its first regime moves). A trace that dropped nothing is dumped as before. At the end
 * of the run the launcher stops recording
 * and dumps every ring on the console (trace_dump); tools/schedlab trace turns the dump into a
 * Chrome/Perfetto trace and a Gantt chart. The dump format is part of the console contract (README).
 *
 * Events and their arg:
 *   run    dispatched job.proc            arg: the process's gang slot, -1 outside gang
 *   pre    preempted (still runnable)     yld  yielded         blk  blocked          exit  exited
 *   new    created                        arg: its hart (-1 unbound); recorded by the creating hart
 *   wake   woken                          arg: its hart; recorded by the waking hart
 *   idle   this hart has nothing to run (recorded once per idle period)
 *   slot / early   this hart started a gang slot switch to slot arg, at the quantum's end / early
 *   ack    this hart acted on the switch to slot arg
 *   rep    (partition) job's allotment became arg harts
 *   regime (adaptive) job moved from regime proc (0 part, 1 gang, 2 fill) to arg & 3; arg >> 2 & 127 is its
 *          wait as a percent of compute + wait, arg >> 9 its grain t_p in us (4194303: none or more)
 *   stop   (perturb=) this hart stopped for arg us of virtual time from here, as a preempted vCPU: what it
 *          ran and was about to do waits that long (perturb.h)
 */
#ifndef TRACE_H
#define TRACE_H

#include "kernel.h"
#include "schedlab/model.h"

enum trace_ev { TR_RUN, TR_PRE, TR_YLD, TR_BLK, TR_EXIT, TR_NEW, TR_WAKE, TR_IDLE, TR_SLOT, TR_EARLY, TR_ACK,
                TR_REP, TR_REGIME, TR_STOP, TR_HELD, TR_NEVENTS };

struct trace_rec {
    uint64_t t;         /* time CSR */
    int32_t arg;
    uint16_t job;       /* 0: none */
    int8_t proc;        /* -1: none; indices 0..SL_MAX_PROCS-1 */
    uint8_t ev;
};
_Static_assert(sizeof(struct trace_rec) == 16, "trace records are 16 bytes");
_Static_assert(SL_MAX_PROCS - 1 <= 127, "process indices must fit trace_rec.proc");

#define TRACE_PAGE_RECS (PAGE_SIZE / sizeof(struct trace_rec))
#define TRACE_MAX_PAGES 256                      /* per hart: 65536 records, 1 MiB */
#define TRACE_BUDGET_BYTES (16UL << 20)          /* all harts together at most */
#define TRACE_DECISION_PAGES 8                   /* per hart: the last 2048 decisions, beside the budget */

struct trace_ring {
    struct trace_rec *page[TRACE_MAX_PAGES];
    uint64_t cap;       /* records: npages * TRACE_PAGE_RECS, a power of two */
    uint64_t n;         /* records ever written; the newest cap are kept */
};

/* trace_enabled's bits: TRACE_ON records (trace=on); TRACE_MODEL tells the machine-model plugin which job a
   hart runs (model.c). Both hang off the one load-and-branch every record site already pays, so with neither
   set no path runs an instruction more than without them. */
#define TRACE_ON    1
#define TRACE_MODEL 2
extern int trace_enabled;
/* model.c: under the machine model, the mark (and the record, with trace=on too), out of line */
void trace_model_rec(int hart, uint64_t t, enum trace_ev ev, int job, int proc, int arg);
extern const char *trace_header_extra; /* appended to the TRACE begin line; set through trace_configure */
/* The boot hart, before t0: the TRACE begin line says clock=virtual. */
static inline void trace_configure(int clock_virtual)
{
    if (clock_virtual)
        trace_header_extra = " clock=virtual";
}
extern struct trace_ring trace_rings[SL_MAX_HARTS];
extern struct trace_ring trace_decisions[SL_MAX_HARTS]; /* each hart's decision records (above) */
extern void (*trace_dump_extra)(uint64_t t0); /* after TRACE end: the library's logs (ulog.c) */

int trace_init(char *err, size_t errlen);   /* boot hart, before t0: allocate the rings; 0 or -1 */
void trace_stop(void);                      /* stop recording (before the dump) */
void trace_dump(uint64_t t0, const char *policy, uint64_t quantum_us);
uint64_t trace_bytes(int nharts);           /* memory trace_init takes */

/* The policy's decisions, kept in their own ring too (above); ev is a constant at every record site. */
static inline int trace_decision(enum trace_ev ev)
{
    return ev == TR_SLOT || ev == TR_EARLY || ev == TR_REP || ev == TR_REGIME;
}

/* Where record number k (of all ever written) of ring r is, or was. */
static inline struct trace_rec *trace_ring_at(const struct trace_ring *r, uint64_t k)
{
    uint64_t i = k & (r->cap - 1);
    return &r->page[i / TRACE_PAGE_RECS][i % TRACE_PAGE_RECS];
}

/* Append one record to ring r (the calling hart's own). */
static inline void trace_ring_append(struct trace_ring *r, uint64_t t, enum trace_ev ev, int job, int proc, int arg)
{
    struct trace_rec *rec = trace_ring_at(r, r->n);
    rec->t = t;
    rec->arg = arg;
    rec->job = (uint16_t)job;
    rec->proc = (int8_t)proc;
    rec->ev = (uint8_t)ev;
    __atomic_store_n(&r->n, r->n + 1, __ATOMIC_RELEASE);   /* the dump reads only published records */
}

/* Record on `hart`'s rings: the calling hart's own. */
static inline void trace_ring_put(int hart, uint64_t t, enum trace_ev ev, int job, int proc, int arg)
{
    trace_ring_append(&trace_rings[hart], t, ev, job, proc, arg);
    if (trace_decision(ev))
        trace_ring_append(&trace_decisions[hart], t, ev, job, proc, arg);
}

/* The events that change which process a hart runs: the machine model marks them (model.c). new and wake
   are about other processes. ev is a constant at every record site, so elsewhere the model's branch folds
   away. */
static inline int model_marks_event(enum trace_ev ev)
{
    return ev == TR_RUN || ev == TR_PRE || ev == TR_YLD || ev == TR_BLK || ev == TR_EXIT;
}

/* Record on the calling hart's ring at time t (the caller read the clock anyway). `hart` must be the
   caller's own index. Under the machine model a marked event's whole path is model.c's, out of line, so that
   without a model every record site compiles exactly as it did before the model existed (an inline mark made
   gcc load the record's arguments ahead of the branch, and a call in a leaf function gave it a frame). */
static inline void trace_rec_at(int hart, uint64_t t, enum trace_ev ev, int job, int proc, int arg)
{
    if (!trace_enabled)
        return;
    if (trace_enabled & TRACE_MODEL) {
        if (model_marks_event(ev)) {
            trace_model_rec(hart, t, ev, job, proc, arg);
            return;
        }
        if (!(trace_enabled & TRACE_ON))
            return;
    }
    trace_ring_put(hart, t, ev, job, proc, arg);
}

/* The same, now: with tracing off it costs a load and a branch, not a clock read. */
static inline void trace_rec(int hart, enum trace_ev ev, int job, int proc, int arg)
{
    if (trace_enabled)
        trace_rec_at(hart, rdtime(), ev, job, proc, arg);
}

#endif
