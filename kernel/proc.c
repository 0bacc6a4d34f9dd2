/*
 * proc.c - the kernel's side of a process's and a job's life: process slots, kernel stacks, user stacks
 * and trap frames, address spaces and info pages. The state machine itself (states, counts, deadlock,
 * memory accounting, kill) is the portable core's, sched/life.[ch], which the simulator links too.
 *
 * Invariants
 *   - A process slot is FREE, or belongs to exactly one job and is listed in job->procs[idx] until reaped.
 *   - job->nlive counts created, unreaped processes; the job finishes when it drops to 0 (proc_reap).
 *   - Changes to a job's page table (stacks, SYS_alloc) happen under job->lock. Pages are never unmapped
 *     while the job lives, so translating a user address needs no lock.
 */
#include "sched/life.h"
#include "info.h"
#include "ulog.h"
#include "syncstat.h"

struct job jobs[NJOB];
int njobs;

static struct proc procs[NPROC];
/* procs[i]'s kernel stack; not cleared at boot (linker/kernel.ld's .kstacks) */
static uint8_t kstacks[NPROC][KSTACK_SIZE] __attribute__((aligned(16), section(".bss.kstacks")));
static struct spinlock proc_table_lock = SPINLOCK_INIT("proctable", LOCK_PROCTABLE);
static int proc_used[NPROC]; /* proc_table_lock */

struct proc *myproc(void) { return mycpu()->cur; }

static struct proc *proc_alloc(void)
{
    acquire(&proc_table_lock);
    for (int i = 0; i < NPROC; i++) {
        if (!proc_used[i]) {
            proc_used[i] = 1;
            release(&proc_table_lock);
            return &procs[i];
        }
    }
    release(&proc_table_lock);
    return 0;
}

static void proc_free(struct proc *p)
{
    acquire(&proc_table_lock);
    p->state = P_FREE;
    proc_used[p - procs] = 0;
    release(&proc_table_lock);
}

/* Process idx's stack is the top SL_STACK_SIZE bytes of its SL_STACK_STRIDE window below SL_STACK_TOP; the
   rest of the window is an unmapped guard, so overrunning a stack by less than the guard faults instead of
   writing into the next process's stack. */
static uint64_t stack_top(int idx) { return SL_STACK_TOP - (uint64_t)idx * SL_STACK_STRIDE; }

uint64_t user_heap_limit(void) { return stack_top(SL_MAX_PROCS); }

/* The process whose stack guard holds va, or -1. */
int stack_guard_of(uint64_t va)
{
    if (va >= SL_STACK_TOP || va < user_heap_limit())
        return -1;
    uint64_t off = SL_STACK_TOP - 1 - va; /* 0 = the top byte of process 0's stack */
    return off % SL_STACK_STRIDE >= SL_STACK_SIZE ? (int)(off / SL_STACK_STRIDE) : -1;
}

/* Create process number job->ncreated of j, starting at entry(arg, idx). NULL when the job has all its
   processes or is being killed (*why = SL_ELIMIT), when no process slot is free (SL_ENOSLOT), when its
   stack would pass the job's memory limit (SL_EMEMLIMIT) or memory for it ran out (SL_ENOMEM). */
struct proc *proc_create(struct job *j, uint64_t entry, uint64_t arg, long *why)
{
    acquire(&j->lock);
    if (!life_may_create(j)) {
        release(&j->lock);
        *why = SL_ELIMIT;
        return 0;
    }
    struct proc *p = proc_alloc();
    if (!p) {
        release(&j->lock);
        *why = SL_ENOSLOT;
        return 0;
    }
    memset(p, 0, sizeof *p);
    if ((*why = life_proc_new(j, p)) != 0) {
        release(&j->lock);
        proc_free(p);
        return 0;
    }
    int node = p->hart >= 0 ? cpus[p->hart].node : 0;
    if (uvm_alloc(j->pt, stack_top(p->idx) - SL_STACK_SIZE, SL_STACK_SIZE, PTE_R | PTE_W, node) < 0) {
        life_proc_abandon(p);
        release(&j->lock);
        proc_free(p);
        *why = SL_ENOMEM;
        return 0;
    }
    p->tf.epc = entry;
    p->tf.x[REG_SP] = stack_top(p->idx);
    p->tf.x[REG_A0] = arg;
    p->tf.x[REG_A1] = p->idx;
    p->tf.kernel_sp = (uint64_t)kstacks[p - procs] + KSTACK_SIZE;
    p->ctx.ra = (uint64_t)sched_first_return;
    p->ctx.sp = p->tf.kernel_sp;
    life_proc_start(p);
    release(&j->lock);
    life_start(p);
    return p;
}

/* A process ends (status != 0 fails its job: life_exit_status). */
void proc_exit(struct proc *p, int status)
{
    life_exit_status(p, status);
    acquire(&sched_lock);
    sched_exit(p);
}

static void job_finish(struct job *j);

/* On the scheduler stack of the hart p last ran on, after p became a zombie. */
void proc_reap(struct proc *p)
{
#ifdef KCHECKS
    /* exactly once, by that hart: a second reap would count p out of its job twice (the job ends while a
       process still runs) and free its slot twice (sched/core.c decides under sched_lock whom to reap) */
    if (p->state != P_ZOMBIE || p->on_cpu != mycpu())
        panic("hart %d reaps process %d.%d in state %d, last run on hart %d: only the hart it exited on reaps a "
              "zombie, once", mycpu()->id, p->job ? p->job->id : -1, p->idx, (int)p->state,
              p->on_cpu ? p->on_cpu->id : -1);
#endif
    int last = life_reap(p);
    struct job *j = p->job;
    proc_free(p);
    if (last)
        job_finish(j);
}

void job_put_pagetable(struct job *j)
{
    ulog_job_unmap(j); /* the library's logs outlive the job until the trace dump */
    syncstat_job_put(j); /* its sync statistics page is a leaf of the table: it goes with it */
    uvm_free(j->pt);   /* the info page is a leaf of it and goes too */
    j->pt = 0;
    j->info = 0;
}

static void job_finish(struct job *j)
{
    if (life_job_finish(j))
        job_put_pagetable(j);
}

/* The job arrives: address space, info page, the app's image, process 0. On failure the job is
   reported failed at once (it never ran), with its ERROR line. */
void job_admit(struct job *j)
{
    char err[160];
    life_arrive(j);
    j->pt = uvm_create();
    if (!j->pt) {
        job_fail_early(j, "reason=out-of-memory what=address-space",
                       "no memory left for its address space (the jobs in memory took it: lower their mem= or "
                       "let it arrive later)");
        return;
    }
    j->info = kalloc_page(0);
    if (!j->info || uvm_map(j->pt, SL_INFO_VA, (uint64_t)j->info, PTE_R) < 0) {
        if (j->info)
            kfree_page(j->info);
        j->info = 0;
        job_fail_early(j, "reason=out-of-memory what=info-page", "no memory left for its info page");
        return;
    }
    memset(j->info, 0, PAGE_SIZE);
    j->heap_next = SL_HEAP_VA;
    info_init(j);
    ulog_job_init(j);
    syncstat_job_init(j);
    uint64_t entry = elf_load(j->pt, j->app, 0, err, sizeof err);
    if (!entry) {
        job_fail_early(j, "reason=load-failed", "%s", err);
        return;
    }
    if (life_admit(j)) {
        job_put_pagetable(j);
        return;
    }
    long why;
    if (!proc_create(j, entry, 0, &why)) {
        life_create_failed(j, 0, why);
        job_put_pagetable(j);
    }
}

/* Admission failed before any process ran: the job is done, failed, with one ERROR line saying why (fmt,
   life_vfail_early), and its page table (if it got one) loses the job's own reference - no hart has loaded
   it, since nothing of the job ever ran. */
void job_fail_early(struct job *j, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    life_vfail_early(j, reason, fmt, ap);
    va_end(ap);
    if (j->pt)
        job_put_pagetable(j);
}

