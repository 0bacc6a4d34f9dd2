/*
 * proc.h - jobs and processes.
 *
 * A job owns an address space, its info page and up to `procs` processes. A process is created READY,
 * runs, may block on a futex (BLOCKED) and is woken READY again, and ends as a ZOMBIE that the hart it
 * last ran on reaps (frees its slot) after switching away from its kernel stack. The job is done when its
 * last process has been reaped: then its RESULT is printed and its address space freed.
 *
 * Locking: p->state, the run-queue links and everything the policy keeps are guarded by sched_lock.
 * job->lock guards the job's process list, heap cursor and result fields.
 */
#ifndef PROC_H
#define PROC_H

#include "kernel.h"

/* Saved user registers; x1..x31 in order, then sepc. Offsets are used by trap.S. */
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

/* Callee-saved registers for swtch (trap.S). */
struct context {
    uint64_t ra, sp, s[12];
};

enum pstate { P_FREE, P_READY, P_RUNNING, P_BLOCKED, P_ZOMBIE };

struct cpu;

struct proc {
    struct trapframe tf;        /* must be first: sscratch points here */
    struct context ctx;
    enum pstate state;
    struct job *job;
    int idx;                    /* index within the job: 0..procs-1 */
    int hart;                   /* the hart the policy bound it to (-1: none yet) */
    int slot;                   /* its gang slot (row of the matrix); -1 outside gang */
    int killed;                 /* its job was killed: exit at the next return to user */
    struct cpu *on_cpu;         /* while RUNNING */

    /* policy-owned links (sched_lock) */
    struct proc *rq_next;
    /* futex wait (sched_lock) */
    struct proc *fx_next;
    uint64_t fx_addr;
    uint64_t fx_deadline;       /* time CSR; 0 = none */
    long fx_result;

    /* floating point: the registers are saved here whenever the process leaves a hart with FS dirty */
    uint64_t fpu[33];
    int fpu_cpu;                /* hart whose FP registers hold this process's values (-1: none) */

    /* accounting (time CSR ticks) */
    uint64_t run_ticks, blocked_ticks;
    uint64_t dispatched_at, blocked_at;
    uint64_t nswitch, nblock, npreempt;

    uint8_t kstack[KSTACK_SIZE] __attribute__((aligned(16)));
};

enum jstate { J_EMPTY, J_WAITING, J_RUNNING, J_DONE };

struct job {
    struct spinlock lock;
    enum jstate state;
    int id;                         /* 1-based, scenario order */
    const struct app *app;
    int nprocs;                     /* the job's `procs` */
    uint64_t at_us;                 /* arrival time after t0 */
    char args[SL_ARGS_MAX];         /* app keys with defaults, "k=v,k=v" */
    int background;
    int adaptive;                   /* adapt=yes: follows its allotment (process control) */

    pagetable_t pt;
    int pt_refs;                    /* harts with pt loaded, +1 until the job is done (sched_lock) */
    struct sl_info *info;           /* kernel address of the info page */
    uint64_t heap_next;             /* SYS_alloc cursor */

    struct proc *procs[SL_MAX_PROCS];
    int ncreated;                   /* processes created so far */
    int nlive;                      /* created and not yet reaped */

    uint64_t arrive, start, end;    /* time CSR */
    uint64_t cpu_ticks, blocked_ticks, nswitch, nblock, npreempt;
    uint64_t nmigrate;              /* processes moved to another hart by the policy (sched_lock) */
    int exit_status;                /* first non-zero SYS_exit status of any process */
    int result_set, result_ok;
    char result_keys[SL_RESULT_MAX + 1];
    int killed;
    char kill_reason[160];
};

extern struct job jobs[NJOB];
extern int njobs;

struct proc *proc_create(struct job *j, uint64_t entry, uint64_t arg, long *why);
void proc_exit(struct proc *p, int status) __attribute__((noreturn));
void proc_reap(struct proc *p);
void job_admit(struct job *j);
void job_fail_early(struct job *j, const char *reason);
int job_kill(struct job *j, const char *reason);   /* 1 if this call killed it (the first) */
void job_put_pagetable(struct job *j);
uint64_t user_heap_limit(void);
struct proc *myproc(void);

#endif
