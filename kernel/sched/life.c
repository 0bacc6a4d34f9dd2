/*
 * life.c - the cold half of the process and job state machine (the model is in life.h): creating and
 * reaping processes, admitting, finishing and killing jobs, the deadlock report, memory accounting.
 * Portable: the kernel, the simulator and the host tests link this same file.
 *
 * Invariants
 *   - job->nlive counts created, unreaped processes; the job finishes when it drops to 0 (life_reap).
 *   - job->nactive counts processes made ready at creation and not exited; job->nforever those of them
 *     BLOCKED with no timeout (fx_deadline 0). Both change only under sched_lock, in life.h.
 *   - job->mem_used only grows while the job lives, under job->lock, and never past scen->mem_limit.
 * Lock order: job->lock before sched_lock (kernel.h).
 */
#include "life.h"

struct life_hooks life_hooks;

/* ---- memory ---- */

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

/* ---- processes ---- */

int life_may_create(struct job *j)
{
    ASSERT_HELD(&j->lock, "life_may_create");
    return !j->killed && j->ncreated < j->nprocs;
}

/* p (zeroed) becomes process number j->ncreated of j: the policy binds it (proc_new) and its stack is
   charged. 0, or SL_EMEMLIMIT when the stack would pass the job's memory limit (p is then untouched by
   the policy). */
long life_proc_new(struct job *j, struct proc *p)
{
    p->job = j;
    p->idx = j->ncreated;
    p->hart = -1;
    p->slot = -1;
    p->fpu_cpu = -1;
    if (job_charge(j, SL_STACK_SIZE))
        return SL_EMEMLIMIT;
    acquire(&sched_lock);
    hook_proc_new(p); /* binding first, so the kernel takes the stack from the hart's node */
    release(&sched_lock);
    return 0;
}

void life_proc_abandon(struct proc *p)
{
    ASSERT_HELD(&p->job->lock, "life_proc_abandon");
    acquire(&sched_lock);
    hook_abandoned(p);
    release(&sched_lock);
    p->job->mem_used -= SL_STACK_SIZE;
}

void life_proc_start(struct proc *p)
{
    struct job *j = p->job;
    ASSERT_HELD(&j->lock, "life_proc_start");
    j->procs[p->idx] = p;
    j->ncreated++;
    j->nlive++;
}

void life_start(struct proc *p)
{
    acquire(&sched_lock);
    life_ready(p, ENQ_NEW);
    release(&sched_lock);
}

/* A process ends with status. A non-zero status (an app's sl_die) fails the job, and its other processes
   are stopped: they may be waiting for this one at a barrier, and would wait for ever. The caller then
   takes sched_lock and calls life_exit. */
void life_exit_status(struct proc *p, int status)
{
    struct job *j = p->job;
    if (status == 0 || j->killed)
        return;
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
                j->id, j->scen->app, p->idx, status,
                limit ? " after the kernel refused it memory beyond the job's limit (mem=)" : "");
}

/* p, a ZOMBIE no hart runs on any more: its counts go to its job, its place in the job is free. */
int life_reap(struct proc *p)
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
    return last;
}

/* ---- jobs ---- */

void life_arrive(struct job *j)
{
    j->arrive = rdtime();
    j->pt_refs = 1; /* the live job's own reference (harts that load its table add theirs) */
}

int life_admit(struct job *j)
{
    acquire(&sched_lock);
    j->state = J_RUNNING;
    int refused = hook_job_admit(j);
    release(&sched_lock);
    if (!refused)
        return 0;
    life_fail_early(j, "reason=no-room what=the-policy-has-no-room-for-the-job",
                    "policy %s has no room for its %d process%s now (gang: no row of its matrix has room; "
                    "run fewer processes at once)",
                    sched->name, j->nprocs, j->nprocs == 1 ? "" : "es");
    return -1;
}

int life_job_finish(struct job *j)
{
    j->end = rdtime();
    acquire(&sched_lock);
    j->state = J_DONE;
    hook_job_done(j);
    for (int h = 0; h < ncpus; h++)
        if (cpus[h].satp_job == j)
            sched_kick(h); /* an idle hart still holding j's page table lets go of it */
    release(&sched_lock);
    life_hooks.job_done(j);
    acquire(&sched_lock);
    int dead = --j->pt_refs == 0;
    release(&sched_lock);
    return dead;
}

/* Admission failed before any process ran: the job is done, failed, with one ERROR line saying why (fmt).
   The caller frees what it had given the job (nothing of it ever ran). */
void life_vfail_early(struct job *j, const char *reason, const char *fmt, va_list ap)
{
    char why[200];
    vsnprintf(why, sizeof why, fmt, ap);
    kprintf("ERROR job %d (%s) not started: %s\n", j->id, j->scen->app, why);
    acquire(&j->lock);
    j->killed = 1;
    snprintf(j->kill_reason, sizeof j->kill_reason, "%s", reason);
    release(&j->lock);
    acquire(&sched_lock);
    if (j->state == J_RUNNING)
        hook_job_done(j);
    j->state = J_DONE;
    release(&sched_lock);
    j->end = j->arrive;
    life_hooks.job_done(j);
}

void life_fail_early(struct job *j, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    life_vfail_early(j, reason, fmt, ap);
    va_end(ap);
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
        snprintf(j->kill_reason, sizeof j->kill_reason, "%s", reason);
    }
    acquire(&sched_lock);
    for (int i = 0; i < j->ncreated; i++) {
        struct proc *p = j->procs[i];
        if (!p)
            continue;
        p->killed = 1;
        if (p->state == P_BLOCKED) {
            life_hooks.unwait(p);
            life_ready(p, ENQ_WAKE);
        } else if (p->state == P_RUNNING && p->on_cpu != mycpu()) {
            sched_preempt(p->on_cpu);
        }
    }
    release(&sched_lock);
    release(&j->lock);
    return first;
}

/* A process of j asked for a process or a stack the system could not give: the job cannot run as
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
                j->id, j->scen->app, idx, j->scen->mem_limit >> 10);
    else if (why == SL_ENOMEM)
        kprintf("ERROR job %d (%s) ended: no memory for the stack of process %d\n", j->id, j->scen->app, idx);
    else
        kprintf("ERROR job %d (%s) ended: no free process slot for process %d (the kernel's %d are all in use; "
                "run fewer processes at once)\n",
                j->id, j->scen->app, idx, NPROC);
}

/* Process idx of j could not be created (why: SL_ENOSLOT, SL_EMEMLIMIT or SL_ENOMEM, as from
   life_proc_new and the kernel's proc_create). Process 0, at admission: the job fails before it started
   (life_fail_early; the caller frees what it gave the job). A later one: the job ends (job_out_of). */
void life_create_failed(struct job *j, int idx, long why)
{
    if (idx > 0)
        job_out_of(j, idx, why);
    else if (why == SL_ENOSLOT)
        life_fail_early(j, "reason=out-of-process-slots proc=0",
                        "no free process slot for its first process (the kernel's %d are all in use)", NPROC);
    else if (why == SL_EMEMLIMIT)
        life_fail_early(j, "reason=memory-limit proc=0",
                        "the stack of its first process would pass its memory limit of %lu KiB (mem=)",
                        j->scen->mem_limit >> 10);
    else
        life_fail_early(j, "reason=out-of-memory what=first-process", "no memory left for its first process");
}

/* j was found stuck (c->stuck_job) on the way into a hart's scheduler loop: report it and end it. */
void job_deadlocked(struct job *j)
{
    /* every blocked process and its word, as many as fit (a process@word is at most 24 characters):
       where each one waits is what tells a lost wake-up from a program that waits for itself */
    char where[400] = "";
    int shown = 0, blocked = 0;
    acquire(&sched_lock);
    for (int i = 0; i < j->ncreated; i++) {
        struct proc *q = j->procs[i];
        if (!q || q->job != j || q->state != P_BLOCKED)
            continue;
        blocked++;
        size_t used = strlen(where);
        if (used + 24 < sizeof where - 16)
            shown++, snprintf(where + used, sizeof where - used, " %d@0x%lx", i, q->fx_addr);
    }
    if (shown < blocked)
        snprintf(where + strlen(where), sizeof where - strlen(where), " +%d more", blocked - shown);
    int stuck = sched_job_stuck(j); /* nothing can have changed, but never kill a job that moves */
    release(&sched_lock);
    if (stuck && job_kill(j, "reason=deadlock"))
        kprintf("ERROR deadlock: job %d (%s): every live process waits on a futex that no process of the job "
                "can wake (process@word:%s); the job is ended\n",
                j->id, j->scen->app, where);
}
