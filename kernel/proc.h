/*
 * proc.h - jobs and processes.
 *
 * A job owns an address space, its info page and up to `procs` processes. A process is created READY,
 * runs, may block on a futex (BLOCKED) and is woken READY again, and ends as a ZOMBIE that the hart it
 * last ran on reaps (frees its slot) after switching away from its kernel stack. The job is done when its
 * last process has been reaped: then its RESULT is printed and its address space freed.
 *
 * Locking: each struct's fields are grouped by what guards them (the lock order is in kernel.h).
 */
#ifndef PROC_H
#define PROC_H

#include "kernel.h"
#include "scenario.h"

/* Saved user registers; x1..x31 in order, then sepc. Offsets are used by vectors.S. */
struct trapframe {
    uint64_t x[31];         /* x[i-1] = register xi */
    uint64_t epc;
    uint64_t kernel_sp;     /* top of this process's kernel stack */
    uint64_t kernel_tp;     /* struct cpu * of the hart it runs on */
};
_Static_assert(__builtin_offsetof(struct trapframe, epc) == TF_EPC, "TF_EPC");
_Static_assert(__builtin_offsetof(struct trapframe, kernel_sp) == TF_KSP, "TF_KSP");
_Static_assert(__builtin_offsetof(struct trapframe, kernel_tp) == TF_KTP, "TF_KTP");
#define REG_SP 1            /* x[REG_SP] = x2 */
#define REG_A0 9            /* x[REG_A0] = x10 */
#define REG_A1 10
#define REG_A7 16
#define REG_RA 0

/* Callee-saved registers for swtch (sched/swtch.S). */
struct context {
    uint64_t ra, sp, s[12];
};

/* Words of private storage a policy has in every struct proc and struct job (SCHED_PRIV, sched.h). */
#define SCHED_PRIV_WORDS 8

/* P_FREE is 0: a zeroed struct proc (proc_create's memset, a static table) is FREE, never READY. (Making
   P_READY 0 saved one instruction in life_run's check and let a zeroed slot read as READY: a deterministic
   gang boot at 4 harts dispatched one and crashed on its garbage context.) */
enum pstate { P_FREE, P_READY, P_RUNNING, P_BLOCKED, P_ZOMBIE };

struct cpu;

struct proc {
    /* the process's own: touched only by the hart running it (or, before it first runs, its creator) */
    struct trapframe tf;        /* must be first: sscratch points here */
    struct context ctx;

    /* fixed at creation */
    struct job *job;
    int idx;                    /* index within the job: 0..procs-1 */

    /* sched_lock */
    enum pstate state;
    int hart;                   /* the hart the policy bound it to (-1: none yet) */
    int slot;                   /* its gang slot (row of the matrix); -1 outside gang */
    int killed;                 /* its job was killed: exit at the next return to user */
    struct cpu *on_cpu;         /* while RUNNING */
    struct proc *rq_next;       /* policy-owned run-queue link */
    struct proc *fx_next;       /* futex wait */
    uint64_t fx_addr;
    uint64_t fx_deadline;       /* time CSR; 0 = none */
    long fx_result;
    uint64_t sched_priv[SCHED_PRIV_WORDS];  /* the running policy's own (SCHED_PRIV, sched.h): zero when
                                               proc_new(p) is called; nothing else touches it */

    /* floating point: the registers are saved here whenever the process leaves a hart with FS dirty */
    uint64_t fpu[33];
    int fpu_cpu;                /* hart whose FP registers hold this process's values (-1: none) */

    /* accounting (time CSR ticks). While p runs, run_ticks covers its time on harts up to dispatched_at;
       the core brings both up to now before the policy's tick, enqueue (preempt, yield), blocked and
       exited hooks see p, so a policy reads p's attained service there as run_ticks. */
    uint64_t run_ticks, blocked_ticks;
    uint64_t dispatched_at, blocked_at;
    uint64_t nswitch, nblock, npreempt;
};

enum jstate { J_EMPTY, J_WAITING, J_RUNNING, J_DONE };

struct job {
    /* set by the launcher before the harts start; read-only after */
    int id;                         /* 1-based, scenario order */
    const struct scen_job *scen;    /* its job= token as parsed: args, at_us, mem_limit (scenario.h) */
    const struct app *app;
    int nprocs;                     /* scen->procs, and the two below, kept here for the scheduler's paths */
    int background;                 /* the app's spec says SL_APP_BACKGROUND */
    int adaptive;                   /* scen->adaptive: follows its allotment (process control) */

    /* sched_lock */
    enum jstate state;
    int pt_refs;                    /* harts with pt loaded, +1 until the job is done */
    uint64_t nmigrate;              /* processes moved to another hart by the policy */
    int nactive;                    /* processes made ready at creation and not exited */
    int nforever;                   /* of those, blocked on a futex with no timeout (sched_job_stuck) */
    uint64_t start;                 /* time CSR of its first dispatch */
    uint64_t sched_priv[SCHED_PRIV_WORDS];  /* the running policy's own (SCHED_PRIV, sched.h): zero when
                                               job_admit(j) is called (jobs[] is in .bss and each entry holds
                                               one job of the run); nothing else touches it */

    /* job->lock */
    struct spinlock lock;
    uint64_t heap_next;             /* SYS_alloc cursor */
    uint64_t mem_used;              /* bytes it has taken so far; never given back while it lives */
    int mem_refused;                /* a request was refused for the limit */
    struct proc *procs[SL_MAX_PROCS];
    int ncreated;                   /* processes created so far */
    int nlive;                      /* created and not yet reaped */
    uint64_t cpu_ticks, blocked_ticks, nswitch, nblock, npreempt;   /* of its reaped processes */
    int exit_status;                /* first non-zero SYS_exit status of any process */
    int result_set, result_ok;
    int result_refused;             /* a SYS_result was refused (resultkeys.h): said in its ERROR */
    char result_keys[SL_RESULT_MAX + 1];
    int killed;
    char kill_reason[160];

    /* set at admission before any process exists, cleared after the last: no lock needed to read */
    pagetable_t pt;
    struct sl_info *info;           /* kernel address of the info page */
    uint64_t arrive, end;           /* time CSR: admitted, last process reaped */
};

extern struct job jobs[NJOB];
extern int njobs;

struct proc *proc_create(struct job *j, uint64_t entry, uint64_t arg, long *why);
void proc_exit(struct proc *p, int status) __attribute__((noreturn));
void proc_reap(struct proc *p);
void job_admit(struct job *j);
void job_fail_early(struct job *j, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* the portable core's (sched/life.c) */
int job_kill(struct job *j, const char *reason);
void job_out_of(struct job *j, int idx, long why);
void job_deadlocked(struct job *j);
#define SL_ENOSLOT (-100)   /* kernel-internal: proc_create found no free process slot */
#define SL_EMEMLIMIT (-101) /* kernel-internal: the stack would pass the job's memory limit */
int job_charge(struct job *j, uint64_t bytes);
void job_put_pagetable(struct job *j);
uint64_t user_heap_limit(void);
int stack_guard_of(uint64_t va);
struct proc *myproc(void);

#endif
