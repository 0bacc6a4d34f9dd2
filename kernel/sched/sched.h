/*
 * sched.h - the scheduling core's interface to the policies, in the manner of Linux's struct sched_class
 * (and sched_ext's optional callbacks).
 *
 * The core (sched/core.c) owns the per-hart dispatch loop, the context switch, the timers and IPIs, and
 * process state. A policy decides placement and order only: it keeps its own queues and answers
 * pick_next(). Adding a policy = one file that defines a struct sched_class, declares its scenario options
 * and per-job keys in it, and registers it with SCHED_CLASS (no table to edit).
 *
 * The contract, checked in code: classes.c checks every policy built at boot, chosen or not, and names the
 * policy and what is wrong in a PANIC line; sched/hooks.h calls every hook through a wrapper whose run-time
 * asserts (a PANIC naming the policy and the hook) a checked kernel has (make KCHECKS=1, as make test builds):
 *   - enqueue and pick_next are mandatory; every other hook may be left NULL, and the core then does what
 *     the hook's line below says. No empty functions.
 *   - A policy that sets proc_new sets abandoned too (exited if that undoes proc_new).
 *   - Every hook but init runs with sched_lock held (asserted), on the hart named (pick_next, tick, ipi)
 *     or any hart (the others), and must not block or print: a hook that reaches the switch out of a
 *     process (sched_block, sched_exit) or kprintf panics naming the policy and the hook. panic() is the
 *     one line a hook may print (its own invariant checks).
 *   - pick_next(c) returns NULL or a READY process p that runs on c: p->hart == c->id (a policy that
 *     binds picks among what is bound to c, or rebinds p to c first; one that does not sets p->hart =
 *     c->id). Anything else (a process still running on a hart, a blocked one, one bound elsewhere) panics
 *     naming the policy, the process and its state.
 *
 * What a hook may call: the services of core.h that say "sched_lock held" (sched_preempt, sched_kick, sched_kick_idle,
 * sched_ipi, sched_rand, sched_restart_tick), trace_proc / trace_rec, info_set_allotment (a policy with
 * allots), info_set_sync_timed and syncstat_of and the cost estimates of ../syncstat.h (a policy with syncstat), the helpers of runq.h, slots.h and allot.h, its own static functions, and panic. Not: acquire
 * or release any lock (sched_lock is held; the lock order, spinlock.h, forbids the ones before it),
 * sched_make_ready / sched_block / sched_yield / sched_exit (the core's, which call hooks themselves),
 * kprintf, or anything that waits.
 *
 * Process life as a policy sees it, and what a NULL hook means:
 *   init()                once, on the boot hart before any job, without sched_lock; NULL: nothing to set
 *                         up (its static state starts zeroed)
 *   job_admit(j)          j arrived (before its first process); -1 refuses it (no room), and it fails;
 *                         NULL: every job is admitted
 *   job_done(j)           j's last process was reaped, or its admission failed after job_admit; NULL: nothing
 *   proc_new(p)           p was created; choose p->hart (binding) and p->slot if the policy uses them;
 *                         NULL: p->hart is the creating hart (whose NUMA node its stack comes from), no binding
 *   enqueue(p, how)       p is runnable and not running: after proc_new, after preemption or yield,
 *                         or after a wake-up (how = ENQ_WAKE). Mandatory
 *   pick_next(c)          take the process hart c should run next (see above), or NULL to idle. Mandatory
 *   blocked(p) / exited(p)  the running p stopped running until woken / for good; NULL: nothing (p is on
 *                         none of the policy's queues while it runs)
 *   abandoned(p)          proc_new(p) was called but p never became ready (its stack could not be had):
 *                         undo what proc_new did; p never ran and is never enqueued. NULL: nothing to undo
 *                         (only without proc_new: classes.c)
 *   tick(c)               hart c's quantum timer fired; call sched_preempt(c) to end the current quantum.
 *                         Every hart ticks, at seeded random phases, unless the policy sets one_timer:
 *                         then only hart 0 does (gang), and sched_restart_tick starts a full quantum anew.
 *                         NULL: the quantum never preempts (run to block, yield or exit)
 *   ipi(c)                an IPI the policy sent (sched_ipi) arrived on hart c; NULL: nothing (the IPI only
 *                         woke the hart, which then looks at pick_next)
 *   result(j, buf, len)   done job j's RESULT line is being printed: the policy's own keys about it
 *                         ("key=value ..." into buf, each key listed in resultkeys.h), after its job keys.
 *                         Runs after job_done(j), without sched_lock (j is no longer the policy's: it
 *                         reads only what it kept of j); may not block. NULL: no keys
 *
 * What a policy may keep and read:
 *   options               settings for the whole run (quantum-like: name=value tokens), each a choice list
 *                         ("off|on": value 0 or 1) or a whole number in [min, max]. Declared as one list
 *                         that makes both the table and the names (so they cannot drift apart):
 *                           #define OPTIONS(X) X(wakeboost, .choices = "off|on", .help = "...") \
 *                                              X(turn, .min = 1, .max = 100, .def = 1, .help = "...")
 *                           SCHED_OPTIONS(OPTIONS);                      (the names: OPT_wakeboost, ...)
 *                           ... .options = SCHED_OPTION_TABLE(OPTIONS) in its struct sched_class
 *                         and read as SCHED_OPT(wakeboost): a choice's index or the number. At most
 *                         SCEN_MAX_OPTS (8), checked at compile time.
 *   per-job keys          the same for keys given in a job token (job=gauss:tickets=3): SCHED_JOB_KEYS(KEYS),
 *                         .job_keys = SCHED_OPTION_TABLE(KEYS), read as SCHED_JOB_KEY(j, tickets) (the job's
 *                         value, its default if not given). Checked against the chosen policy (another
 *                         policy's key is an ERROR), shown in the job's RESULT line. At most
 *                         SCEN_MAX_JOB_KEYS (4). Names: at most 23 characters, C identifiers, not
 *                         procs/at/adapt/mem nor an app's key name; choice lists at most 63 characters.
 *   syncstat              set to 1: every job gets the library's sync statistics page (kernel/syncstat.h,
 *                         abi.h "sync statistics"), which the policy reads with syncstat_of(j, i); 0: no job
 *                         has one, and the library publishes nothing (its waits cost what they did)
 *   private storage       SCHED_PRIV(p, struct mine) and SCHED_PRIV(j, struct mine): SCHED_PRIV_WORDS
 *                         words in every struct proc and struct job that only the running policy uses,
 *                         zero when proc_new(p) / job_admit(j) is called (a larger struct fails to compile).
 *                         The storage is uint64_t[]: a field narrower than 64 bits used straight through the
 *                         macro (SCHED_PRIV(p, struct mine)->count with an int count) fails
 *                         -Werror=strict-aliasing; 64-bit fields, or a pointer taken first, compile.
 *   accounting            p->run_ticks (time CSR ticks on harts so far) is current in tick (for c->cur),
 *                         in enqueue after a preemption or yield, and in blocked and exited: a policy that
 *                         ranks by attained service reads it there as is.
 */
#ifndef SCHED_H
#define SCHED_H

#include "core.h"
#include "../scenario.h"
#include "../trace.h"

struct sched_class {
    const char *name;
    int order;                              /* place in the BOOT line's list (the built-in four: 1..4) */
    struct scen_option options[SCEN_MAX_OPTS];   /* SCHED_OPTION_TABLE: its scenario options (SCHED_OPT) */
    struct scen_option job_keys[SCEN_MAX_JOB_KEYS];   /* SCHED_OPTION_TABLE: its per-job keys (SCHED_JOB_KEY) */
    int one_timer;                          /* only hart 0 has the quantum timer */
    int allots;                             /* sets each job's allotment (info page); adapt=yes jobs follow it */
    int syncstat;                           /* maps each job's sync statistics page (kernel/syncstat.h) */
    /* the hooks (see the header for when each runs and what NULL means; called only through hooks.h) */
    void (*init)(void);                                 /* optional */
    int (*job_admit)(struct job *j);                    /* optional: admit */
    void (*job_done)(struct job *j);                    /* optional */
    void (*proc_new)(struct proc *p);                   /* optional: p->hart = the creating hart */
    void (*enqueue)(struct proc *p, enum enq_how how);  /* mandatory */
    struct proc *(*pick_next)(struct cpu *c);           /* mandatory: a READY p with p->hart == c->id */
    void (*blocked)(struct proc *p);                    /* optional */
    void (*exited)(struct proc *p);                     /* optional */
    void (*abandoned)(struct proc *p);                  /* optional without proc_new, else mandatory */
    void (*tick)(struct cpu *c);                        /* optional: no preemption by the quantum */
    void (*ipi)(struct cpu *c);                         /* optional */
    void (*result)(const struct job *j, char *buf, size_t len); /* optional: RESULT keys, no sched_lock */
};

extern const struct sched_class *sched;

/* scenario knobs the policies read */
extern uint64_t sched_quantum;          /* ticks */
extern uint64_t sched_seed;
extern long sched_opt[SCEN_MAX_OPTS];   /* the running policy's options, in its options[] order: a choice's
                                           index or the number; read them with SCHED_OPT(name) */

/* The boot hart, before the other harts start (the launcher, from the scenario): the running policy and the
   knobs above, with idle=poll (cpu.h), which the core and the policies read without a lock from then on; the
   only writer of them in the kernel. Inline: the boot path's instructions stay those of plain stores. */
static inline void sched_configure(const struct sched_class *cls, uint64_t quantum_ticks, uint64_t seed,
                                   const long opt[SCEN_MAX_OPTS], int poll)
{
    sched = cls;
    sched_quantum = quantum_ticks;
    sched_seed = seed;
    idle_poll = poll;
    for (int i = 0; i < SCEN_MAX_OPTS; i++)
        sched_opt[i] = opt[i];
}

/* Job j's value of the running policy's per-job key i (its job_keys[] order), its default if not given;
   read it with SCHED_JOB_KEY(j, name). */
static inline long sched_job_key(const struct job *j, int i) { return j->scen->pkey[i]; }

/* Options and per-job keys by name. A policy lists them once, as X(name, designated initializers of struct
   scen_option but .name) lines of a macro LIST (see the header); from that one list SCHED_OPTIONS(LIST) /
   SCHED_JOB_KEYS(LIST) make the constants OPT_<name> / KEY_<name> (the index of each in the table, which
   cannot drift from the table) and SCHED_OPTION_TABLE(LIST) the table itself. A name read that the list
   lacks is a compile error; so is a list longer than the table. */
#define SCHED_OPT_ENTRY_(id, ...) { .name = #id, __VA_ARGS__ },
#define SCHED_OPT_ENUM_(id, ...) OPT_##id,
#define SCHED_KEY_ENUM_(id, ...) KEY_##id,
#define SCHED_OPTION_TABLE(LIST) { LIST(SCHED_OPT_ENTRY_) }
#define SCHED_OPTIONS(LIST)                     \
    enum { LIST(SCHED_OPT_ENUM_) OPT_COUNT_ };  \
    _Static_assert(OPT_COUNT_ <= SCEN_MAX_OPTS, "more options than SCEN_MAX_OPTS (scenario.h)")
#define SCHED_JOB_KEYS(LIST)                    \
    enum { LIST(SCHED_KEY_ENUM_) KEY_COUNT_ };  \
    _Static_assert(KEY_COUNT_ <= SCEN_MAX_JOB_KEYS, "more per-job keys than SCEN_MAX_JOB_KEYS (scenario.h)")
#define SCHED_OPT(name) (sched_opt[OPT_##name])
#define SCHED_JOB_KEY(j, name) sched_job_key((j), KEY_##name)

/* The policy's private storage in a struct proc or struct job as its own struct type, which must fit. */
#define SCHED_PRIV(obj, type) \
    ((type *)((obj)->sched_priv + 0 * sizeof(char[sizeof(type) <= sizeof((obj)->sched_priv) ? 1 : -1])))

/* A policy registers itself: SCHED_CLASS(x) puts a pointer to its struct sched_class in the kernel's
   .sched_classes section (linker/kernel.ld), where sched/classes.c finds every policy built. */
#define SCHED_CLASS(cls) \
    static const struct sched_class *const cls##_entry __attribute__((used, section(".sched_classes"))) = &cls

/* Record a trace event about p on the calling hart. */
static inline void trace_proc(enum trace_ev ev, struct proc *p, int arg)
{
    trace_rec(mycpu()->id, ev, p->job->id, p->idx, arg);
}

#endif
