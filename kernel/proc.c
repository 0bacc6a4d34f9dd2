/*
 * proc.c - creating, ending and reaping processes; admitting, killing and finishing jobs.
 *
 * Invariants
 *   - A process slot is FREE, or belongs to exactly one job and is listed in job->procs[idx] until reaped.
 *   - job->nlive counts created, unreaped processes; the job finishes when it drops to 0 (proc_reap).
 *   - Changes to a job's page table (stacks, SYS_alloc) happen under job->lock. Pages are never unmapped
 *     while the job lives, so translating a user address needs no lock.
 */
#include "sched/hooks.h"
#include "info.h"
#include "ulog.h"

struct job jobs[NJOB];
int njobs;

static struct proc procs[NPROC];
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

/* job->lock held. Take bytes of j's memory limit; -1 (and the refusal noted) if they do not fit. */
int job_charge(struct job *j, uint64_t bytes)
{
    ASSERT_HELD(&j->lock, "job_charge");
    if (bytes > j->scen->mem_limit - j->mem_used) {
        j->mem_refused = 1;
        return -1;
    }
    j->mem_used += bytes;
    return 0;
}

/* Create process number job->ncreated of j, starting at entry(arg, idx). NULL when the job has all its
   processes or is being killed (*why = SL_ELIMIT), when no process slot is free (SL_ENOSLOT), when its
   stack would pass the job's memory limit (SL_EMEMLIMIT) or memory for it ran out (SL_ENOMEM). */
struct proc *proc_create(struct job *j, uint64_t entry, uint64_t arg, long *why)
{
    acquire(&j->lock);
    if (j->killed || j->ncreated >= j->nprocs) {
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
    memset(p, 0, offsetof(struct proc, kstack));
    p->job = j;
    p->idx = j->ncreated;
    p->hart = -1;
    p->slot = -1;
    p->fpu_cpu = -1;

    if (job_charge(j, SL_STACK_SIZE)) {
        release(&j->lock);
        proc_free(p);
        *why = SL_EMEMLIMIT;
        return 0;
    }
    acquire(&sched_lock);
    hook_proc_new(p); /* binding first, so the stack comes from the hart's node */
    release(&sched_lock);
    int node = p->hart >= 0 ? cpus[p->hart].node : 0;
    if (uvm_alloc(j->pt, stack_top(p->idx) - SL_STACK_SIZE, SL_STACK_SIZE, PTE_R | PTE_W, node) < 0) {
        acquire(&sched_lock);
        hook_abandoned(p);
        release(&sched_lock);
        j->mem_used -= SL_STACK_SIZE;
        release(&j->lock);
        proc_free(p);
        *why = SL_ENOMEM;
        return 0;
    }
    p->tf.epc = entry;
    p->tf.x[REG_SP] = stack_top(p->idx);
    p->tf.x[REG_A0] = arg;
    p->tf.x[REG_A1] = p->idx;
    p->tf.kernel_sp = (uint64_t)p->kstack + KSTACK_SIZE;
    p->ctx.ra = (uint64_t)sched_first_return;
    p->ctx.sp = p->tf.kernel_sp;
    j->procs[p->idx] = p;
    j->ncreated++;
    j->nlive++;
    release(&j->lock);

    acquire(&sched_lock);
    sched_make_ready(p, ENQ_NEW);
    release(&sched_lock);
    return p;
}

/* A process ends. A non-zero status (an app's sl_die) fails the job, and its other processes are stopped:
   they may be waiting for this one at a barrier, and would wait for ever. */
void proc_exit(struct proc *p, int status)
{
    struct job *j = p->job;
    if (status != 0 && !j->killed) {
        char reason[48];
        acquire(&j->lock);
        if (!j->exit_status)
            j->exit_status = status;
        release(&j->lock);
        int limit = j->mem_refused; /* the likely cause: the app could not get memory */
        if (limit)
            snprintf(reason, sizeof reason, "reason=memory-limit status=%d proc=%d", status, p->idx);
        else
            snprintf(reason, sizeof reason, "reason=exit-status-%d proc=%d", status, p->idx);
        if (job_kill(j, reason))
            kprintf("ERROR job %d (%s) ended: process %d exited with status %d%s; its other processes are stopped\n",
                    j->id, j->app->name, p->idx, status,
                    limit ? " after the kernel refused it memory beyond the job's limit (mem=)" : "");
    }
    acquire(&sched_lock);
    sched_exit(p);
}

static void job_finish(struct job *j);

/* On the scheduler stack of the hart p last ran on, after p became a zombie. */
void proc_reap(struct proc *p)
{
    struct job *j = p->job;
    acquire(&j->lock);
    j->cpu_ticks += p->run_ticks;
    j->blocked_ticks += p->blocked_ticks;
    j->nswitch += p->nswitch;
    j->nblock += p->nblock;
    j->npreempt += p->npreempt;
    j->procs[p->idx] = 0;
    int last = --j->nlive == 0;
    release(&j->lock);
    proc_free(p);
    if (last)
        job_finish(j);
}

void job_put_pagetable(struct job *j)
{
    ulog_job_unmap(j); /* the library's logs outlive the job until the trace dump */
    uvm_free(j->pt);   /* the info page is a leaf of it and goes too */
    j->pt = 0;
    j->info = 0;
}

static void job_finish(struct job *j)
{
    j->end = rdtime();
    acquire(&sched_lock);
    j->state = J_DONE;
    hook_job_done(j);
    for (int h = 0; h < ncpus; h++)
        if (cpus[h].satp_job == j)
            sched_kick(h); /* an idle hart still holding j's page table lets go of it (idle_satp) */
    release(&sched_lock);
    launcher_job_done(j);
    acquire(&sched_lock);
    int dead = --j->pt_refs == 0;
    release(&sched_lock);
    if (dead)
        job_put_pagetable(j);
}

/* The job arrives: address space, info page, the app's image, process 0. On failure the job is
   reported failed at once (it never ran), with its ERROR line. */
void job_admit(struct job *j)
{
    char err[160];
    j->arrive = rdtime();
    j->pt = uvm_create();
    if (!j->pt) {
        job_fail_early(j, "reason=out-of-memory what=address-space",
                       "no memory left for its address space (the jobs in memory took it: lower their mem= or "
                       "let it arrive later)");
        return;
    }
    j->pt_refs = 1; /* the live job's own reference */
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
    uint64_t entry = elf_load(j->pt, j->app, 0, err, sizeof err);
    if (!entry) {
        job_fail_early(j, "reason=load-failed", "%s", err);
        return;
    }
    acquire(&sched_lock);
    j->state = J_RUNNING;
    int refused = hook_job_admit(j);
    release(&sched_lock);
    if (refused) {
        job_fail_early(j, "reason=no-room what=the-policy-has-no-room-for-the-job",
                       "policy %s has no room for its %d process%s now (gang: no row of its matrix has room; "
                       "run fewer processes at once)",
                       sched->name, j->nprocs, j->nprocs == 1 ? "" : "es");
        return;
    }
    long why;
    if (!proc_create(j, entry, 0, &why)) {
        if (why == SL_ENOSLOT)
            job_fail_early(j, "reason=out-of-process-slots proc=0",
                           "no free process slot for its first process (the kernel's %d are all in use)", NPROC);
        else if (why == SL_EMEMLIMIT)
            job_fail_early(j, "reason=memory-limit proc=0",
                           "the stack of its first process would pass its memory limit of %lu KiB (mem=)",
                           j->scen->mem_limit >> 10);
        else
            job_fail_early(j, "reason=out-of-memory what=first-process", "no memory left for its first process");
    }
}

/* Admission failed before any process ran: the job is done, failed, with one ERROR line saying why (fmt),
   and its page table (if it got one) loses the job's own reference - no hart has loaded it, since nothing
   of the job ever ran. */
void job_fail_early(struct job *j, const char *reason, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    kprintf("ERROR job %d (%s) not started: %s\n", j->id, j->app->name, why);
    acquire(&j->lock);
    j->killed = 1;
    strlcpy(j->kill_reason, reason, sizeof j->kill_reason);
    release(&j->lock);
    acquire(&sched_lock);
    if (j->state == J_RUNNING)
        hook_job_done(j);
    j->state = J_DONE;
    release(&sched_lock);
    j->end = j->arrive;
    launcher_job_done(j);
    if (j->pt)
        job_put_pagetable(j);
}

/* Kill every process of j (a process faulted, exited with an error, ran the kernel out of a resource, or
   the job deadlocked). Each exits at its next return to U-mode; blocked ones are woken for it and running
   ones on other harts interrupted. The first reason given is the one kept; returns 1 for that first call,
   so its caller alone prints the job's one ERROR line. */
int job_kill(struct job *j, const char *reason)
{
    acquire(&j->lock);
    int first = !j->killed;
    if (first) {
        j->killed = 1;
        strlcpy(j->kill_reason, reason, sizeof j->kill_reason);
    }
    acquire(&sched_lock);
    for (int i = 0; i < j->ncreated; i++) {
        struct proc *p = j->procs[i];
        if (!p)
            continue;
        p->killed = 1;
        if (p->state == P_BLOCKED) {
            futex_cancel(p);
            sched_make_ready(p, ENQ_WAKE);
        } else if (p->state == P_RUNNING && p->on_cpu != mycpu()) {
            sched_preempt(p->on_cpu);
        }
    }
    release(&sched_lock);
    release(&j->lock);
    return first;
}

/* A process of j asked for a process or a stack the kernel could not give: the job cannot run as
   specified, so it ends (its processes stopped) and the others go on. */
void job_out_of(struct job *j, int idx, long why)
{
    char reason[96];
    snprintf(reason, sizeof reason, "reason=%s proc=%d",
             why == SL_EMEMLIMIT    ? "memory-limit"
                 : why == SL_ENOMEM ? "out-of-memory what=process-stack"
                                    : "out-of-process-slots",
             idx);
    if (!job_kill(j, reason))
        return;
    if (why == SL_EMEMLIMIT)
        kprintf("ERROR job %d (%s) ended: the stack of process %d would pass the job's memory limit of %lu KiB "
                "(mem=)\n",
                j->id, j->app->name, idx, j->scen->mem_limit >> 10);
    else if (why == SL_ENOMEM)
        kprintf("ERROR job %d (%s) ended: no memory for the stack of process %d\n", j->id, j->app->name, idx);
    else
        kprintf("ERROR job %d (%s) ended: no free process slot for process %d (the kernel's %d are all in use; "
                "run fewer processes at once)\n",
                j->id, j->app->name, idx, NPROC);
}

/* sched_lock held. Is j stuck for good: every process of it that has not exited blocked on a futex with
   no timeout? Only a process of j can wake j's futexes and nothing else wakes a waiter without a
   timeout, so such a job can never move again. O(1): sched/core.c keeps the two counts as processes are
   made ready, block and exit. A process being created implies a running one, so it never looks stuck. */
int job_stuck(struct job *j)
{
    ASSERT_HELD(&sched_lock, "job_stuck");
    return j->nforever > 0 && j->nforever == j->nactive;
}

/* j was found stuck (job_stuck) on the way into the scheduler loop: report it and end it. */
void job_deadlocked(struct job *j)
{
    char where[96] = "";
    acquire(&sched_lock);
    for (int i = 0, n = 0; i < j->ncreated && n < 4; i++) {
        struct proc *q = j->procs[i];
        if (q && q->job == j && q->state == P_BLOCKED)
            n++, snprintf(where + strlen(where), sizeof where - strlen(where), " %d@0x%lx", i, q->fx_addr);
    }
    int stuck = job_stuck(j); /* nothing can have changed, but never kill a job that moves */
    release(&sched_lock);
    if (stuck && job_kill(j, "reason=deadlock"))
        kprintf("ERROR deadlock: job %d (%s): every live process waits on a futex that no process of the job "
                "can wake (process@word:%s); the job is ended\n",
                j->id, j->app->name, where);
}
