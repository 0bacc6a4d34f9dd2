/*
 * cpu.h - a hart as the kernel keeps it: one struct cpu per hart, numbered 0..H-1 in ascending firmware
 * hart-id order; tp points at the running hart's own in S-mode (mycpu()). Fields are the hart's own
 * (touched by that hart only) unless marked: the scheduling fields are read by other harts under
 * sched_lock or with the atomics named in sched/core.c.
 */
#ifndef CPU_H
#define CPU_H

#include "kernel.h"
#include "proc.h"

enum { IDLE_NOT, IDLE_POLL, IDLE_HALT };
#define IDLE_POLL_US 100 /* an idle hart polls this long before it halts in wfi (sched/core.c, idle_wait) */
extern int idle_poll;       /* idle=poll: an idle hart polls and never halts (core.c, set by sched_configure) */

/* One per hart; tp points at it in S-mode. */
struct cpu {
    struct spin_hart locks;     /* first: the locks it holds, which spinlock.h reaches through tp */
    int id;                     /* hart index 0..H-1 */
    uint64_t hartid;            /* firmware hart id */
    int node;                   /* NUMA node */
    struct proc *cur;           /* RUNNING here, or NULL while the hart idles in its scheduler loop */
    struct job *satp_job;       /* whose page table is loaded */
    struct context sched_ctx;   /* the scheduler loop's context */
    struct proc *fpu_owner;     /* whose values the FP registers hold */
    int idle;                   /* IDLE_NOT, or IDLE_POLL / IDLE_HALT while it has nothing to run */
    int poked;                  /* sched_kick's wake-up for a polling hart */
    int ipi_sent;               /* deterministic mode: an IPI was sent here since the last handling (vclock.h) */
    int need_resched;           /* leave the current process at the next return to user */
    uint64_t next_tick;         /* time of the next quantum tick */
    uint64_t idle_ticks, idle_since;
    int traced_idle;            /* an idle record was written since the last dispatch */
    void *policy;               /* per-hart policy state */
    struct job *stuck_job;      /* the process that just left this hart found its job stuck (sched_job_stuck) */
    const char *hook;           /* the policy hook running on this hart (sched/hooks.h), or NULL */
};
_Static_assert(__builtin_offsetof(struct cpu, locks) == 0, "spinlock.h finds a hart's locks at its tp");

extern struct cpu cpus[SL_MAX_HARTS]; /* cpu.c */
extern int ncpus;

/* The recall of every hart at the end of a scenario in a batch (the boot layer's batch.c): once harts_recalled
   is set, each hart calls recall_hook at its next look at its IPIs (sched_soft_interrupt) or spin pause
   (vclock_relax), which does not return. batch.c stores the hook, then the flag (seq_cst); the relaxed load here
   is enough because batches exist only in deterministic mode, where QEMU runs one hart at a time on one host
   thread, and it keeps every other boot's IPI and spin paths at one load and branch. */
extern int harts_recalled;
extern void (*recall_hook)(void);
static inline void harts_recall_point(void)
{
    if (__builtin_expect(__atomic_load_n(&harts_recalled, __ATOMIC_RELAXED), 0))
        recall_hook();
}

static inline struct cpu *mycpu(void) { return (struct cpu *)read_tp(); }

#endif
