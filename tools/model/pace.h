/*
 * pace.h - paced harts: each hart executes at most R instructions per wall-second (tools/model/README.md,
 * "Pacing"). Pure arithmetic, no QEMU: plugin.c feeds it instruction counts and the wall clock and does the
 * sleeping it asks for; tests/host/test_pace.c drives it with a fake clock.
 *
 * Model. From the moment pacing starts (the kernel's model_pace_start, just before the calibration card and
 * t0), a hart has a model time: its instructions times 1/R, plus the stall cycles the machine model charges,
 * each also 1/R. The guest's time CSR follows the host's clock, so a hart whose model time runs ahead of the
 * wall clock sleeps until the wall catches up: wall time becomes model time, at any number of harts whose
 * total rate the host can carry. A hart lets its model time lead by less than `lead` before it sleeps (each
 * sleep costs a system call; a hart is never more than `lead` plus one check ahead when it reads the clock).
 *
 * A hart that falls behind the wall clock (its host thread waited for a core) catches up by running unpaced
 * while it is less than `bound` behind; past that it is a fidelity event: counted, its lag added up, and its
 * model time moved to the wall clock (the lost time is not made up by running fast). A hart that waited for an
 * interrupt (wfi) is behind by design: it resynchronises with no event.
 *
 * Concurrency: a struct pace_hart is its vCPU's own (one host thread); struct pace is read-only once paced.
 */
#ifndef MODEL_PACE_H
#define MODEL_PACE_H

#include <stdint.h>

#define PACE_LEAD_NS_DEFAULT   200000      /* sleep once 200 us ahead (a spec's lead=<us> sets it) */
#define PACE_LEAD_NS_MIN       10000
#define PACE_LEAD_NS_MAX       10000000
#define PACE_BOUND_NS_DEFAULT  500000      /* a hart 500 us behind the wall clock is a fidelity event */
#define PACE_RATE_MIN          1000        /* instructions per second: below this a boot would take hours */
#define PACE_RATE_MAX          10000000000ULL

struct pace {
    uint64_t rate;                 /* R: instructions per wall-second per hart */
    uint64_t lead_ns, bound_ns;
};

/* Fidelity events of one hart, or of one job (the plugin adds each event to the job the hart ran). */
struct pace_count {
    uint64_t events;               /* times the hart fell more than bound behind */
    uint64_t lag_ns;               /* their lag, added up: model time the host lost */
};

struct pace_hart {
    uint64_t model_ps;             /* model time since pacing started */
    uint64_t rem;                  /* remainder of cycles * 1e12 / rate not yet in model_ps */
    uint64_t pending;              /* cycles (instructions + stall cycles) not yet in model_ps */
    uint64_t insns, stall_cycles;  /* while paced */
    uint64_t slept_ns;             /* what the plugin slept for this hart */
    struct pace_count count;
    int started;                   /* 0 until this hart's first check after pacing started */
    int idle;                      /* waited for an interrupt since the last check */
};

/* The picoseconds of `cycles` cycles of 1/rate, with the remainder carried in *rem (exact over any sum). */
uint64_t pace_cycles_ps(uint64_t cycles, uint64_t rate, uint64_t *rem);

/* Counted instructions and stall cycles (not yet in the model time: pace_check adds them). */
static inline void pace_add(struct pace_hart *h, uint64_t insns, uint64_t stall_cycles)
{
    h->pending += insns + stall_cycles;
    h->insns += insns;
    h->stall_cycles += stall_cycles;
}

/* Where the hart stands at wall time wall_ns (ns since pacing started): folds the pending cycles into its model
   time, resynchronises after an idle wait, counts a fidelity event into h->count and *job (may be NULL). Returns
   how many ns the hart must sleep now: 0, or its lead once that is at least `lead` (`lead` 0: any lead). */
uint64_t pace_check(struct pace_hart *h, const struct pace *p, uint64_t wall_ns, uint64_t lead_ns,
                    struct pace_count *job);

/* Validate a rate (plugin argument pace=R); 0 if fine, else -1 with a message in err. */
int pace_rate_ok(uint64_t rate, char *err, unsigned long errlen);

#endif
