/*
 * sim_core.c - the simulated harts: the services kernel/sched/core.h promises the policies (sched_preempt,
 * sched_kick, sched_ipi, sched_rand, sched_restart_tick), the hart operation the portable core asks for
 * (hart_leave, kernel/sched/life.h), the dispatch a hart does on its way back to user, and the
 * discrete-event engine that drives it (see sim.h for the model). The life of processes and jobs - their
 * states, counts, deadlock detection, memory accounting - is the kernel's own kernel/sched/life.[ch],
 * called with sched_lock held where the kernel holds it.
 *
 * Only the services the policies call are defined here, with the kernel's semantics: a policy file that
 * calls anything else of the core (or of the kernel) fails to link in `make sim`, naming the symbol.
 *
 * Invariants (checked): a hart's cur is RUNNING with on_cpu == that hart; a READY process is on no hart;
 * an event of a process carries the process's gen when posted and is dropped if gen moved since.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim.h"
#include "sim_mem.h"
#include "../../kernel/info.h"
#include "../../kernel/perturb.h"
#include "../../kernel/sched/life.h"
#include "../../kernel/ticks.h"

struct cpu cpus[SL_MAX_HARTS];
int ncpus;
struct spinlock sched_lock = SPINLOCK_INIT("sched", LOCK_SCHED);
const struct sched_class *sched;
uint64_t sched_quantum;
uint64_t sched_seed;
uint64_t sim_seed; /* seed= itself (sched_seed advances as the policies draw from it) */
long sched_opt[SCEN_MAX_OPTS];
struct platform plat;
uintptr_t sim_tp;
uint64_t sim_now;
uint64_t sim_makespan, sim_events;
int sim_all_done;

static uint64_t tick_posted[SL_MAX_HARTS]; /* the time of the tick event posted for each hart */

/* ---- the event heap: (t, seq) order, seq = posting order, so ties are deterministic ---- */

static struct sim_event *heap;
static size_t nheap, capheap;
static uint64_t seq;
static size_t nwork; /* EV_STEP, EV_TIMEOUT and EV_ARRIVE events in the heap (stale ones included) */

static int is_work(int kind) { return kind != EV_TICK && kind != EV_IPI; }

static int before(const struct sim_event *a, const struct sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void sim_post(uint64_t t, int kind, int hart, struct sproc *sp, struct job *j)
{
    if (nheap == capheap) {
        capheap = capheap ? 2 * capheap : 1024;
        heap = realloc(heap, capheap * sizeof *heap);
        if (!heap)
            panic("sim: out of memory for events");
    }
    struct sim_event e = { t, seq++, kind, hart, sp, sp ? sp->gen : 0, j };
    nwork += is_work(kind);
    size_t i = nheap++;
    while (i > 0 && before(&e, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = e;
}

static struct sim_event pop(void)
{
    struct sim_event top = heap[0], last = heap[--nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < nheap && before(&heap[l], &last))
            m = l;
        if (l + 1 < nheap && before(&heap[l + 1], m == i ? &last : &heap[l]))
            m = l + 1;
        if (m == i)
            break;
        heap[i] = heap[m];
        i = m;
    }
    if (nheap)
        heap[i] = last;
    return top;
}

/* ---- services for the policies (core.h) ---- */

static uint64_t ipi_ns(void) { return (uint64_t)(calib.futex_cross - calib.futex_same); }
static uint64_t switch_ns(void) { return (uint64_t)(calib.yield - calib.syscall); }

static void on_hart(int h, uint64_t t)
{
    sim_tp = (uintptr_t)&cpus[h];
    sim_now = t;
}

/* The kernel's splitmix64 over sched_seed (sched/core.c): the same sequence for the same seed=. */
uint64_t sched_rand(void) { return sl_mix64(sched_seed += 0x9e3779b97f4a7c15UL); }

static uint64_t ipis_sent; /* kicks and IPIs to other harts so far (core_wake reports whether it sent one) */

void sched_ipi(uint64_t mask)
{
    for (int h = 0; h < ncpus; h++)
        if (mask >> h & 1) {
            ipis_sent += h != mycpu()->id;
            sim_post(sim_now + ipi_ns(), EV_IPI, h, 0, 0);
        }
}

void sched_preempt(struct cpu *c)
{
    c->need_resched = 1;
    if (c != mycpu())
        sched_ipi(1UL << c->id);
}

/* A same-hart futex hand-off (kbench) is the waker's futex_wake and futex_wait (two system calls), the switch
   (yield - syscall), and the rest of the kernel's block and wake-up path, which the woken process pays on its
   way back from futex_wait: that rest is futex_same - yield - syscall. */
uint64_t core_unblock_ns(void)
{
    double ns = calib.futex_same - calib.yield - calib.syscall;
    return ns > 0 ? (uint64_t)ns : 0;
}

/* An idle hart is woken by a store while it still polls (IDLE_POLL_US since it went idle), by an IPI and,
   under QEMU, a host thread wake-up once halted: the woken process runs wake_poll or wake_halt after the
   wake (kbench's wake_ns), of which the dispatch's switch and the woken's core_unblock_ns are the last part. */
void sched_kick(int hart)
{
    struct cpu *c = &cpus[hart];
    if (hart == mycpu()->id || c->idle == IDLE_NOT || c->poked)
        return;
    c->poked = 1;
    ipis_sent++;
    double wake = sim_now - c->idle_since < IDLE_POLL_US * 1000UL ? calib.wake_poll : calib.wake_halt;
    uint64_t sw = switch_ns() + core_unblock_ns();
    sim_post(sim_now + ((uint64_t)wake > sw ? (uint64_t)wake - sw : 0), EV_IPI, hart, 0, 0);
}

/* The kernel's sched_kick_idle (kernel/sched/core.c): one idle hart of the mask not kicked yet. */
int sched_kick_idle(uint64_t mask)
{
    for (int h = 0; h < ncpus; h++)
        if ((mask >> h & 1) && h != mycpu()->id && cpus[h].idle != IDLE_NOT && !cpus[h].poked) {
            sched_kick(h);
            return h;
        }
    return -1;
}

static void post_tick(int h)
{
    if (tick_posted[h] != cpus[h].next_tick) {
        tick_posted[h] = cpus[h].next_tick;
        sim_post(cpus[h].next_tick, EV_TICK, h, 0, 0);
    }
}

void sched_restart_tick(int hart)
{
    cpus[hart].next_tick = sim_now + sched_quantum;
    post_tick(hart);
}

void info_set_allotment(struct job *j, int count, uint64_t mask) { sjobs[j->id - 1].allot = count; }
int info_set_sync_timed(struct job *j, int on)
{
    int was = sjobs[j->id - 1].sync_timed;
    sjobs[j->id - 1].sync_timed = on != 0;
    return was;
}

/* A bug - of a policy (its own checks call this, as in the kernel) or of the simulator - never bad input:
   the kernel's PANIC line (trap.c) on the console and its exit status, 3. */
void panic(const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("PANIC %d panic 0x0 0x0 %s\n", mycpu() ? mycpu()->id : -1, buf);
    fflush(stdout);
    exit(3);
}

/* The kernel's race points (kernel/perturb.h): perturb= is deterministic QEMU's, refused without
   clock=virtual; the simulator is deterministic by construction and never perturbs, so perturb_on stays 0. */
int perturb_on;
void perturb_hit(enum perturb_site site) { panic("sim: a perturbed race point (perturb= is QEMU's only)"); }

/* A lock rule broken (kernel/spinlock.h): the simulator takes the kernel's locks where the kernel does. */
void spin_panic(const struct spinlock *l, const char *what) { panic("lock %s: %s", l->name, what); }
void spin_acquire_contended(struct spinlock *l) { spin_panic(l, "contended on the simulator's one thread"); }

uint64_t time_us(uint64_t ticks) { return ticks_to_us_tb(ticks, plat.timebase_hz); }
uint64_t us_to_ticks(uint64_t us) { return us_to_ticks_tb(us, plat.timebase_hz); }

/* The core's hooks (life.h): a done job's RESULT (sim_main.c); a killed waiter's timeout made stale. */
void sim_unwait(struct proc *p)
{
    sproc_of(p)->gen++;
    p->fx_result = SL_EINVAL;
}

/* ---- dispatch: what a hart does on its way back to user ---- */

static uint64_t vclock_from[SL_MAX_HARTS]; /* the running process's dispatch or last timer trap (kern_vclock) */

/* The hart operation of life.h: p's state is set and its run time accounted; its compute segment stops
   advancing and its hart is free. sched_lock held. */
void hart_leave(struct proc *p)
{
    struct sproc *sp = sproc_of(p);
    struct cpu *c = p->on_cpu;
    if (sp->act == A_COMPUTE) {
        uint64_t done = sim_now > sp->seg_start ? sim_now - sp->seg_start : 0;
        sp->left -= done < sp->left ? done : sp->left;
    }
    sp->gen++;
    kern_vclock(sp, c->id, vclock_from[c->id], sim_now, 0); /* deterministic mode's traps (sim_kernel.c) */
    start_leave(sp, c->id); /* its kernel state saved (sim_start.c) */
    kern_leave(sp, c->id);  /* its kernel stack, the scheduler's lines (sim_kernel.c) */
    c->cur = 0;
    c->need_resched = 0;
    p->on_cpu = 0;
    if (sjob_of(p->job)->app->descheduled)
        sjob_of(p->job)->app->descheduled(sp, sim_now); /* its job's others may re-decide their waits */
}

/* sp has a hart again from t: it goes on with what it was doing. */
static void resume(struct sproc *sp, uint64_t t)
{
    const struct sim_app *app = sjob_of(sp->p.job)->app;
    switch (sp->act) {
    case A_COMPUTE:
        sp->seg_start = t;
        sim_post(t + sp->left, EV_STEP, -1, sp, 0);
        return;
    case A_SPIN:
        if (!app->spins || !app->spins(sp)) /* its wait may be over, or is re-decided */
            sim_post(t, EV_STEP, -1, sp, 0);
        return;
    case A_BLOCKED:
        sp->act = A_COMPUTE; /* back from futex_wait: the rest of the block path (core_unblock_ns) */
        sp->left = core_unblock_ns();
        sim_post(t + sp->left, EV_STEP, -1, sp, 0);
        return;
    case A_EXIT: panic("sim: an exited process was dispatched");
    }
}

static void dispatch(struct cpu *c, uint64_t t)
{
    acquire(&sched_lock);
    struct proc *p = hook_pick_next(c);
    if (!p) {
        if (c->idle == IDLE_NOT) {
            c->idle = IDLE_HALT;
            c->idle_since = t;
            trace_rec(c->id, TR_IDLE, 0, -1, 0);
        }
        release(&sched_lock);
        return;
    }
    c->idle = IDLE_NOT;
    c->poked = 0;
    life_run(c, p, t);
    vclock_from[c->id] = t;
    release(&sched_lock);
    struct sproc *sp = sproc_of(p);
    sp->gen++;
    if (p->killed) /* its job was killed while it waited: it exits on its way back to user */
        core_compute(sp, t, switch_ns());
    else
        /* its kernel state read (sim_start.c), its kernel stack and the lock's release (sim_kernel.c) */
        resume(sp, t + switch_ns() + start_dispatch(sp, c->id) + kern_dispatch(sp, c->id));
}

/* A job found stuck for good (life.h: a hart's stuck_job) is reported and ended, as the kernel's scheduler
   loop does once it has dropped sched_lock. */
static void end_stuck_jobs(void)
{
    for (int h = 0; h < ncpus; h++) {
        struct job *j = cpus[h].stuck_job;
        if (j) {
            cpus[h].stuck_job = 0;
            job_deadlocked(j);
        }
    }
}

static void after_event(struct cpu *c, uint64_t t)
{
    on_hart(c->id, t);
    end_stuck_jobs();
    if (c->cur && c->cur->killed) /* as usertrap: a killed process exits at its next return to user */
        core_exit(sproc_of(c->cur), t);
    if (c->cur && c->need_resched) {
        acquire(&sched_lock);
        life_requeue(c->cur, ENQ_PREEMPT);
        release(&sched_lock);
    }
    c->need_resched = 0;
    if (!c->cur)
        dispatch(c, t);
}

/* ---- the services the app models ask of the core (sim.h) ---- */

int core_running(const struct sproc *sp) { return sp->p.state == P_RUNNING; }

void core_compute(struct sproc *sp, uint64_t t, uint64_t ns)
{
    sp->act = A_COMPUTE;
    sp->left = ns;
    sp->seg_start = t;
    sp->gen++;
    sim_post(t + ns, EV_STEP, -1, sp, 0);
}

void core_spin(struct sproc *sp, uint64_t t) { sp->act = A_SPIN; }

void core_release_spinner(struct sproc *sp, uint64_t t)
{
    if (core_running(sp))
        sim_post(t, EV_STEP, -1, sp, 0);
}

/* The running sp yields its hart at t (SYS_yield): it is queued again (ENQ_YIELD) and its hart runs what the
   policy picks, sp itself when nothing else is ready. The dispatch pays the switch and sp the system call
   when it runs again (together calib.yield, kbench what=yield); then its app is stepped. */
void core_yield(struct sproc *sp, uint64_t t)
{
    sp->act = A_COMPUTE;
    sp->left = (uint64_t)calib.syscall;
    sp->seg_start = t;
    acquire(&sched_lock);
    life_requeue(&sp->p, ENQ_YIELD);
    release(&sched_lock);
}

/* The running sp waits on a futex, for ever or until timeout_ns have passed. The simulator has no user
   addresses: its futex words are 0x0 (in the deadlock report too), so the run stays the same bytes. */
void core_block(struct sproc *sp, uint64_t t, uint64_t timeout_ns)
{
    struct proc *p = &sp->p;
    p->fx_deadline = timeout_ns ? t + timeout_ns : 0;
    p->fx_addr = 0;
    sp->act = A_BLOCKED;
    acquire(&sched_lock);
    life_block(p);
    release(&sched_lock);
    if (timeout_ns)
        sim_post(t + timeout_ns, EV_TIMEOUT, -1, sp, 0);
}

int core_wake(struct sproc *sp, uint64_t t)
{
    struct proc *p = &sp->p;
    uint64_t sent = ipis_sent;
    if (p->state != P_BLOCKED)
        return 0;
    sp->gen++;
    acquire(&sched_lock);
    life_ready(p, ENQ_WAKE);
    release(&sched_lock);
    return ipis_sent != sent;
}

void core_exit(struct sproc *sp, uint64_t t)
{
    struct proc *p = &sp->p;
    struct job *j = p->job;
    sp->act = A_EXIT;
    acquire(&sched_lock);
    life_exit(p);
    release(&sched_lock);
    if (life_reap(p)) {
        sim_makespan = t;
        life_job_finish(j);
    }
}

/* ---- jobs ---- */

void core_admit(struct job *j, uint64_t t)
{
    life_arrive(j);
    if (life_admit(j) == 0)
        core_spawn(j, t);
}

/* The next process of j comes to life at t: at admission (process 0) or by process 0's proc_create (the
   others), as kernel/proc.c's proc_create does it, minus the machine. */
void core_spawn(struct job *j, uint64_t t)
{
    acquire(&j->lock);
    if (!life_may_create(j)) {
        release(&j->lock);
        return; /* killed meanwhile: the kernel's SL_ELIMIT */
    }
    struct sproc *sp = calloc(1, sizeof *sp);
    if (!sp)
        panic("sim: out of memory for processes");
    long why = life_proc_new(j, &sp->p);
    if (why) {
        int idx = sp->p.idx;
        release(&j->lock);
        free(sp);
        return life_create_failed(j, idx, why);
    }
    life_proc_start(&sp->p);
    release(&j->lock);
    sprocs[j->id - 1][sp->p.idx] = sp;
    sp->act = A_COMPUTE; /* nothing left: its first dispatch starts the program */
    sp->left = 0;
    if (sjob_of(j)->app->start)
        sjob_of(j)->app->start(sp, t);
    life_start(&sp->p);
}

/* ---- the engine ---- */

void core_init(int harts, const struct sched_class *cls, uint64_t quantum_ns, uint64_t seed)
{
    ncpus = harts;
    sched = cls;
    sched_quantum = quantum_ns;
    sched_seed = sim_seed = seed;
    plat.timebase_hz = 1000000000UL;
    for (int i = 0; i < ncpus; i++) {
        cpus[i].id = i;
        cpus[i].hartid = (uint64_t)i;
        cpus[i].idle = IDLE_HALT;
        cpus[i].idle_since = SIM_T0;
        cpus[i].next_tick = sched->one_timer ? (i ? ~0UL : SIM_T0 + sched_quantum)
                                             : SIM_T0 + sched_quantum + sched_rand() % sched_quantum;
        if (cpus[i].next_tick != ~0UL)
            post_tick(i);
    }
    on_hart(0, SIM_T0);
    hook_init();
}

static void handle(const struct sim_event *e)
{
    struct cpu *c;
    switch (e->kind) {
    case EV_TICK:
        c = &cpus[e->hart];
        if (e->t != c->next_tick)
            return; /* the quantum was restarted: a later event stands for it */
        on_hart(e->hart, e->t);
        while (c->next_tick <= e->t)
            c->next_tick += sched_quantum;
        acquire(&sched_lock);
        if (c->cur) { /* run_ticks current in the hook, as the kernel's (proc.h); its work progress is not */
            life_account(c->cur, e->t);
            kern_vclock(sproc_of(c->cur), c->id, vclock_from[c->id], e->t, 1);
            kern_tick(sproc_of(c->cur), c->id); /* the trap's kernel lines (sim_kernel.c) */
            vclock_from[c->id] = e->t;
        }
        hook_tick(c);
        release(&sched_lock);
        post_tick(e->hart);
        after_event(c, e->t);
        return;
    case EV_IPI:
        c = &cpus[e->hart];
        on_hart(e->hart, e->t);
        c->poked = 0;
        if (sched->ipi) {
            acquire(&sched_lock);
            hook_ipi(c);
            release(&sched_lock);
        }
        after_event(c, e->t);
        return;
    case EV_STEP:
        if (e->gen != e->sp->gen || !core_running(e->sp))
            return;
        c = e->sp->p.on_cpu;
        on_hart(c->id, e->t);
        if (e->sp->act == A_COMPUTE)
            e->sp->left = 0;
        if (e->sp->p.killed)
            core_exit(e->sp, e->t);
        else
            sjob_of(e->sp->p.job)->app->step(e->sp, e->t);
        after_event(c, e->t);
        return;
    case EV_TIMEOUT:
        if (e->gen != e->sp->gen || e->sp->p.state != P_BLOCKED)
            return;
        on_hart(0, e->t); /* futex timeouts are the launcher hart's (hart 0 here) */
        core_wake(e->sp, e->t);
        after_event(&cpus[0], e->t);
        return;
    case EV_ARRIVE:
        on_hart(0, e->t);
        core_admit(e->job, e->t);
        after_event(&cpus[0], e->t);
        return;
    }
}

static double host_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Nothing but ticks and IPIs can change anything: no hart runs a process and no step, timeout or arrival
   is pending, so only a policy's pick can start something again. */
static int idle_everywhere(void)
{
    if (nwork)
        return 0;
    for (int h = 0; h < ncpus; h++)
        if (cpus[h].cur)
            return 0;
    return 1;
}

/* Handle events in order until every job is done (sim_all_done). Stops early, with the simulated time of
   the last event handled in sim_now, when the next event lies past limit_ns (the scenario's timeout=),
   when host_limit_s seconds of host time have passed (if > 0; checked every 64 Ki events, so it costs
   nothing and the run stays the same bytes up to there), or when the run is stuck: idle_everywhere()
   for SIM_STUCK_QUANTA quanta of ticks, or no event left at all. None of these is a verdict on a valid
   scenario's length: a job may arrive at any time the parser allows and run as long as it needs. */
enum sim_end sim_run(uint64_t limit_ns, double host_limit_s)
{
    enum sim_end end = SIM_DONE;
    double started = host_limit_s > 0 ? host_seconds() : 0;
    uint64_t stuck_since = 0;
    int stuck = 0;
    while (!sim_all_done) {
        if (!nheap) {
            end = SIM_STUCK; /* jobs not done and not one event left: nothing will ever happen */
            break;
        }
        struct sim_event e = pop();
        nwork -= is_work(e.kind);
        if (e.t > limit_ns) {
            end = SIM_TIMEOUT;
            sim_now = limit_ns;
            break;
        }
        sim_events++;
        handle(&e);
        if (!idle_everywhere() || sim_all_done)
            stuck = 0;
        else if (!stuck) {
            stuck = 1;
            stuck_since = e.t;
        } else if (e.t - stuck_since >= SIM_STUCK_QUANTA * sched_quantum) {
            end = SIM_STUCK;
            break;
        }
        if (host_limit_s > 0 && (sim_events & 0xffff) == 0 && host_seconds() - started > host_limit_s) {
            end = SIM_HOST_LIMIT;
            break;
        }
    }
    free(heap);
    heap = 0;
    nheap = capheap = 0;
    nwork = 0;
    return end;
}
