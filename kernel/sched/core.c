/*
 * core.c - the scheduling core's kernel harts: per-hart dispatch loop, context switch, timers and IPIs.
 * What happens to processes and jobs - their states, the counts behind deadlock detection, accounting -
 * is the portable half of the core, life.h and life.c, which the simulator links too; this file calls it
 * and supplies the hart operation it asks for (hart_leave).
 *
 * Model. Every hart runs scheduler_loop() on its own stack. The loop asks the policy for a process
 * (pick_next), switches to it (dispatch), and gets control back when that process blocks, yields, is
 * preempted or exits; then it asks again. A hart with nothing to run waits for an interrupt (wfi) with
 * interrupts globally off and handles what woke it by polling sip. Processes run in U-mode and enter
 * the kernel only through traps (usertrap); the kernel itself is never interrupted.
 *
 * Locking. sched_lock guards all process states, policy queues and job states. It is handed over across
 * swtch: the loop holds it when it switches to a process, and the process releases it (in sched_resume
 * or sched_first_return); a process holds it when it switches back to the loop, which releases it.
 *
 * Timers and IPIs go through intr.c (Sstc and ACLINT SSWI, or the SBI). Each hart has a periodic
 * quantum tick (next_tick), first armed at a seeded random offset so that harts are not in phase (Feitelson & Rudolph's experiments used skewing threads for this); a policy
 * with one_timer (gang) has the tick on hart 0 only. next_tick changes only under sched_lock, so
 * a policy may restart another hart's quantum (sched_restart_tick). deadline_hart also wakes for the
 * deadline queue (../deadline.h: job arrivals, the watchdog, futex timeouts): the core asks the queue only,
 * and fires what is due without knowing whose it is.
 *
 * Layers (../LAYERS.md). The core calls nothing above it by name: what it needs from the process layer (a
 * new process's way to user mode, reaping a zombie, freeing a page table, ending a deadlocked job) it calls
 * through sched_up, which main.c fills in before any hart runs.
 *
 * Trace. With trace=on every switch in and out of a process, every wake-up and every idle period is
 * recorded on the hart's own ring (trace.h); the policies add their own events (slot switches).
 *
 * Address spaces. c->satp_job is the job whose page table the hart has loaded; each such hart holds a
 * reference (job->pt_refs counts them plus one for the live job), so a finished job's page tables are
 * freed only when no hart can still walk them. An idle hart keeps the table it had until the job is done
 * (idle_satp): every job's table maps the kernel too.
 */
#include "life.h"
#include "../info.h"
#include "../intr.h"
#include "../perturb.h"
#include "../deadline.h"

struct spinlock sched_lock = SPINLOCK_INIT("sched", LOCK_SCHED);
const struct sched_class *sched;
uint64_t sched_quantum;
uint64_t sched_seed;
long sched_opt[SCEN_MAX_OPTS];
struct sched_upcalls sched_up;
int idle_poll; /* idle=poll: idle harts never halt (sched_configure) */

void fpu_save(uint64_t *regs);
void fpu_restore(const uint64_t *regs);
void swtch(struct context *old, struct context *new);

uint64_t sched_rand(void)
{
    uint64_t z = (sched_seed += 0x9e3779b97f4a7c15UL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
    return z ^ (z >> 31);
}

/* ---- timers ---- */

static uint64_t timer_due(struct cpu *c)
{
    uint64_t when = c->next_tick;
    if (c->id == deadline_hart)
        when = MIN(when, deadline_next());
    return when;
}

static void arm_timer(struct cpu *c)
{
    intr_set_timer(vclock_timer(timer_due(c)));
}

/* deadline.c's hook (deadline_moved): an entry armed on this hart moved earlier, so deadline_hart's timer
   may have to be re-armed for it - here, or by an IPI (sched_soft_interrupt re-arms). Needed where nothing
   else re-arms that timer soon: a hart without a quantum tick (gang's one_timer leaves only hart 0 one, and
   deadline_hart is the boot hart, often another). Before deadline_hart has enabled its timer (the launcher
   arms its entries at t0) there is nothing to re-arm: sched_start_hart arms it from deadline_next. Called
   with the arming caller's locks held (futex_wait: sched_lock). */
static void deadline_moved_earlier(void)
{
    struct cpu *c = mycpu();
    if (c->id != deadline_hart)
        sched_ipi(1UL << deadline_hart);
    else if (csr_read(sie) & SIE_STIE)
        arm_timer(c);
}

void sched_timer_interrupt(struct cpu *c)
{
    uint64_t now = rdtime();
    /* next_tick changes only under sched_lock, and only ever later (sched_restart_tick): a stale read
       can only send us to the lock for nothing, never skip a due tick */
    if (now >= __atomic_load_n(&c->next_tick, __ATOMIC_RELAXED)) {
        acquire(&sched_lock);
        if (now >= c->next_tick) {
            while (c->next_tick <= now)
                c->next_tick += sched_quantum;
            if (c->cur)
                life_account(c->cur, now);
            hook_tick(c);
        }
        release(&sched_lock);
    }
    if (c->id == deadline_hart)
        deadline_run(now);
    arm_timer(c);
}

void sched_soft_interrupt(struct cpu *c)
{
    harts_recall_point(); /* the end of a scenario in a batch (cpu.h) */
    /* the mark first, then SSIP: an IPI marked before this store is one the hook below sees the cause of */
    if (clock_virtual)
        __atomic_store_n(&c->ipi_sent, 0, __ATOMIC_SEQ_CST);
    csr_clear(sip, SIP_SSIP);
    if (sched->ipi) {
        acquire(&sched_lock);
        hook_ipi(c);
        release(&sched_lock);
    }
    if (c->id == deadline_hart)
        arm_timer(c); /* an earlier deadline may have been armed (deadline_moved_earlier) */
}

/* ---- services for policies ---- */

void sched_ipi(uint64_t mask)
{
    intr_send_ipi(mask);
    perturb_point(PS_IPI); /* perturb=: the target may run before the sender goes on */
}

void sched_kick(int hart)
{
    struct cpu *c = &cpus[hart];
    if (hart == mycpu()->id || __atomic_load_n(&c->idle, __ATOMIC_RELAXED) == IDLE_NOT)
        return;
    __atomic_store_n(&c->poked, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&c->idle, __ATOMIC_SEQ_CST) == IDLE_HALT)
        sched_ipi(1UL << hart);
}

/* One hart of the mask that idles and nobody has kicked since: a policy that queued work a busy hart cannot
   take at once wakes one idle hart per such process to pull it (repeated calls spread over the idle ones). */
int sched_kick_idle(uint64_t mask)
{
    ASSERT_HELD(&sched_lock, "sched_kick_idle");
    for (int h = 0; h < ncpus; h++) {
        struct cpu *c = &cpus[h];
        if (!(mask >> h & 1) || h == mycpu()->id || __atomic_load_n(&c->idle, __ATOMIC_RELAXED) == IDLE_NOT ||
            __atomic_load_n(&c->poked, __ATOMIC_RELAXED))
            continue;
        sched_kick(h);
        return h;
    }
    return -1;
}

void sched_restart_tick(int hart)
{
    ASSERT_HELD(&sched_lock, "sched_restart_tick");
    cpus[hart].next_tick = rdtime() + sched_quantum;
    /* an earlier timer armed on that hart fires, finds no tick due and re-arms (sched_timer_interrupt) */
}

void sched_preempt(struct cpu *c)
{
    ASSERT_HELD(&sched_lock, "sched_preempt");
    c->need_resched = 1;
    if (c != mycpu())
        sched_ipi(1UL << c->id);
}

/* ---- address spaces ---- */

static void write_satp(struct job *j)
{
    csr_write(satp, vm_satp(j ? j->pt : kernel_pagetable));
    sfence_vma();
}

/* c holds j's page table (0: the kernel's) from now on: j gains c's reference. Returns the job whose table c
   held, whose reference c keeps until it has stopped walking that table (write_satp, then drop_satp). */
static struct job *hold_satp(struct cpu *c, struct job *j)
{
    ASSERT_HELD(&sched_lock, "hold_satp");
    struct job *old = c->satp_job;
    c->satp_job = j;
    if (j)
        j->pt_refs++;
    return old;
}

/* c no longer walks old's table: its reference goes. Returns old if that was the table's last user, for the
   caller to free after dropping sched_lock. Dropped any sooner - before c's write_satp - the job's end could
   free the table under the hart still walking it (life_job_finish takes the last reference then). */
static struct job *drop_satp(struct job *old)
{
    ASSERT_HELD(&sched_lock, "drop_satp");
    return old && --old->pt_refs == 0 ? old : 0;
}

static struct job *take_satp(struct cpu *c, struct job *j) { return drop_satp(hold_satp(c, j)); }

static struct job *load_satp(struct cpu *c, struct job *j)
{
    if (c->satp_job == j)
        return 0;
    struct job *dead = take_satp(c, j);
    write_satp(j);
    return dead;
}

/* An idle hart keeps the page table of the job it ran last, so that running that job again - the common
   case: a process of a job woken on the hart it blocked on - costs no satp write and no TLB flush (under
   QEMU a flush clears the whole softmmu TLB, and the refill is paid on every page touched after it). It
   lets go once the job is done, so the table can be freed (job_finish kicks the harts still holding it). */
static struct job *idle_satp(struct cpu *c)
{
    if (c->satp_job && c->satp_job->state == J_DONE)
        return load_satp(c, 0);
    return 0;
}

/* ---- switching ---- */

static void fpu_switch_in(struct cpu *c, struct proc *p)
{
    if (c->fpu_owner == p && p->fpu_cpu == c->id)
        return; /* the registers still hold p's values */
    csr_set(sstatus, SSTATUS_FS_INITIAL);
    fpu_restore(p->fpu);
    csr_clear(sstatus, SSTATUS_FS);
    csr_set(sstatus, SSTATUS_FS_CLEAN);
    c->fpu_owner = p;
    p->fpu_cpu = c->id;
}

static void fpu_switch_out(struct proc *p)
{
    if ((csr_read(sstatus) & SSTATUS_FS) == SSTATUS_FS_DIRTY) {
        fpu_save(p->fpu);
        csr_clear(sstatus, SSTATUS_FS);
        csr_set(sstatus, SSTATUS_FS_CLEAN);
    }
}

/* Run p on c until it gives the hart back: the core's bookkeeping (life_run), then the hart's own part.
   sched_lock held on entry and on return. Returns a job whose page table lost its last user, if any. */
static struct job *dispatch(struct cpu *c, struct proc *p)
{
    uint64_t now = rdtime();
    life_run(c, p, now);
    struct job *dead = 0;
    if (c->satp_job != p->job) {
        /* Under QEMU a TLB flush clears the whole softmmu TLB: too long to hold sched_lock over it, when a
           gang slot switch has every hart dispatching at once. p is RUNNING here, so no other hart takes
           it; what they may do meanwhile (preempt it, kill its job) it sees when it returns to user mode. */
        struct job *old = hold_satp(c, p->job);
        release(&sched_lock);
        write_satp(p->job);
        acquire(&sched_lock);
        dead = drop_satp(old);
    }
    fpu_switch_in(c, p);
    p->tf.kernel_tp = (uint64_t)c;
    info_set_running(p->job, p->idx, 1);
    swtch(&c->sched_ctx, &p->ctx);
    /* p is back in the loop (blocked, preempted, yielded or exited); we hold sched_lock */
    c->cur = 0;
    return dead;
}

/* The hart operation life.h asks for: p leaves the hart (its state set and its run time accounted by the
   core before its hook: the hook's own few instructions are nobody's). Returns when p runs again (maybe
   on another hart), still holding sched_lock. */
void hart_leave(struct proc *p)
{
    struct cpu *c = mycpu();
    hook_check_switch(c);
    info_set_running(p->job, p->idx, 0);
    fpu_switch_out(p);
    c->need_resched = 0;
    swtch(&p->ctx, &c->sched_ctx);
}

void sched_make_ready(struct proc *p, enum enq_how how) { life_ready(p, how); }

void sched_block(struct proc *p) { life_block(p); }

void sched_yield(struct proc *p)
{
    acquire(&sched_lock);
    life_requeue(p, ENQ_YIELD);
    release(&sched_lock);
}

/* sched_on_return (core.h) found need_resched set: switch away, the process still ready. */
void sched_preempt_on_return(struct proc *p)
{
    acquire(&sched_lock);
    mycpu()->need_resched = 0;
    life_requeue(p, ENQ_PREEMPT);
    release(&sched_lock);
}

void sched_exit(struct proc *p)
{
    life_exit(p);
    panic("a zombie ran again");
}

/* A new process's first return from swtch lands here (its ctx.ra). */
void sched_first_return(void)
{
    release(&sched_lock);
    sched_up.to_user(mycpu()->cur);
}

/* ---- the per-hart loop ---- */

/*
 * An idle hart first polls for IDLE_POLL_US, watching its `poked` word and sip, and only then halts in wfi.
 * Waking a halted hart costs an IPI through the SBI and, under QEMU, a host thread wake-up (tens of
 * microseconds); a polling hart is woken by a plain store. The hand-off is a Dekker pair, so a wake-up is
 * never lost: sched_kick stores poked, then reads idle (IPI if HALT); the hart stores idle = HALT, then
 * reads poked (skip wfi if set). Both use sequentially consistent fences. IDLE_POLL_US is in cpu.h (the
 * simulator models the two kinds of wake-up too).
 */

static void idle_wait(struct cpu *c)
{
    /* deterministic mode: no polling, which would keep the one host thread from the harts that could poke;
       idle=poll (the machine model's default): never halt, so a wake-up costs a store as on a real machine
       rather than QEMU's ~28 us vCPU wake-up */
    uint64_t t = rdtime(), poll_end = clock_virtual ? t : idle_poll ? ~0UL : t + us_to_ticks(IDLE_POLL_US);
    int unsliced = 0;
    while (!(csr_read(sip) & (SIP_SSIP | SIP_STIP)) && !__atomic_load_n(&c->poked, __ATOMIC_ACQUIRE)) {
        if (rdtime() < poll_end) {
            cpu_relax();
            continue;
        }
        __atomic_store_n(&c->idle, IDLE_HALT, __ATOMIC_SEQ_CST);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&c->poked, __ATOMIC_SEQ_CST))
            break;
        if (clock_virtual) { /* halted, no turns to cut: no slice until it wakes (vclock.h "The slices") */
            intr_set_timer(timer_due(c));
            unsliced = 1;
        }
        while (!(csr_read(sip) & (SIP_SSIP | SIP_STIP)))
            wfi();
        break;
    }
    __atomic_store_n(&c->idle, IDLE_NOT, __ATOMIC_RELAXED);
    __atomic_store_n(&c->poked, 0, __ATOMIC_RELAXED);
    c->idle_ticks += rdtime() - t;
    uint64_t sip = csr_read(sip);
    if (sip & SIP_SSIP)
        sched_soft_interrupt(c);
    if (sip & SIP_STIP)
        sched_timer_interrupt(c); /* re-arms, with a slice */
    else if (unsliced)
        arm_timer(c);
}

static void scheduler_loop(struct cpu *c)
{
    for (;;) {
        acquire(&sched_lock);
        struct proc *p = hook_pick_next(c), *zombie = 0;
        struct job *dead, *stuck = 0;
        if (p) {
            dead = dispatch(c, p);
            stuck = c->stuck_job;
            c->stuck_job = 0;
            /* Decided here, under sched_lock: once it is dropped, a p that left READY or BLOCKED may be
               picked by another hart, run and exit there - and that hart reaps it. Read after the release,
               p->state could be that other hart's ZOMBIE, reaped twice: its job's nlive would reach 0 while
               a process still runs (the job "ended without reporting a verdict"), its slot freed twice. */
            if (p->state == P_ZOMBIE)
                zombie = p;
        } else {
            __atomic_store_n(&c->idle, IDLE_POLL, __ATOMIC_RELAXED);
            if (!c->traced_idle) {
                trace_rec(c->id, TR_IDLE, 0, -1, 0);
                c->traced_idle = 1;
            }
            dead = idle_satp(c);
        }
        release(&sched_lock);
        if (dead)
            sched_up.put_pagetable(dead);
        if (stuck)
            sched_up.deadlocked(stuck); /* before the reap: a job is not done while it has a zombie */
        if (zombie)
            sched_up.reap(zombie);
        if (!p)
            idle_wait(c);
    }
}

void sched_init(void)
{
    uint64_t now = rdtime();
    for (int i = 0; i < ncpus; i++)
        cpus[i].next_tick =
            sched->one_timer ? (i ? ~0UL : now + sched_quantum) : now + sched_quantum + sched_rand() % sched_quantum;
    deadline_moved = deadline_moved_earlier;
    console_hook_printed = sched_hook_printed;
    hook_init();
}

void sched_start_hart(void)
{
    struct cpu *c = mycpu();
    csr_set(sstatus, SSTATUS_FS_INITIAL);
    csr_set(sie, SIE_SSIE | SIE_STIE);
    arm_timer(c);
    scheduler_loop(c);
    panic("scheduler loop returned");
}
