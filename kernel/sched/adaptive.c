/*
 * adaptive.c - each job scheduled the way its measured synchronization calls for: coscheduled in a gang
 * row, in a space partition with process control, or as time-shared filler (Flexible CoScheduling's idea,
 * Frachtenberg et al. 2003, on this project's three mechanisms).
 *
 * The machine. An Ousterhout matrix (slots.h) whose rows are switched by hart 0's quantum timer with one
 * broadcast IPI, as gang.c does, plus one more slot, SPACE, visited once per round after the used rows.
 *   gang  (R_GANG) the job's processes take entries of one row (n <= H; never split): coscheduled.
 *   part  (R_PART) the job holds a share of the harts in the SPACE slot (allot.h's fair shares, z-rule for
 *         adapt=no), published in its info page: an adapt=yes job suspends processes to match it (Tucker &
 *         Gupta's process control) and its workers fold onto the ones left (Markatos 3.4.3). Its processes
 *         are bound to its harts (partition.c's rules: moved when a hart is lost, pulled within the share).
 *   fill  (R_FILL) the job holds a share in the SPACE slot too, but its processes wait in one global FIFO:
 *         a hart of a filler share takes the head in the SPACE slot, and every hart takes it in a hole - a
 *         gang entry that is empty or blocked (FCS's filler). Its info page says
 *         every hart: no process control, every process stays runnable.
 * A hart with nothing of the current slot runs the filler FIFO; never a process of a synchronizing job out
 * of its slot (it would spin or block on partners that are not running: F&R eq. 8). When every hart has
 * nothing of the current slot, the slot switches early.
 * With no gang job the round is SPACE alone (partition with filler); with only gang jobs it is gang.
 *
 * Shares by speedup. The SPACE slot's harts are divided as partition.c divides them (allot.h), but each
 * job's shape is told, so the harts an equal division leaves over go where they take the most time off
 * (Markatos 3.5.3: partitions win on sublinear speedup). A job whose workers synchronize (a window had
 * episodes) and that runs a fixed number of pinned workers (the library's units: abi.h) runs each step in
 * ceil(units / harts) rounds, and a hart that takes no round off is worth nothing to it (the z-rule,
 * extended to adaptive jobs); stealing threads, workers that never meet and fillers speed up with every
 * hart; a background job (it runs until the others end) takes spare harts last. Simulated, 8 harts, the
 * holdout mix: mean slowdown 2.72 under partition, 2.40 here, the makespan the same (279 ms).
 *
 * Measurement, the rule and its models, hysteresis, hostile statistics: adrule.c's header (the rule is
 * pure arithmetic there, host-tested). This file gathers each window's sums (judge) and moves jobs: every
 * window= quanta for every job, and every quantum of a new job's first window (probe: a decisive loss
 * need not wait out a window).
 *
 * Explained. Every move is a trace event `regime J old arg` (arg: new | wait % << 2 | min(t_p us, 2^22-1)
 * << 9), on the Perfetto trace's "regime" track; RESULT adds regime= (the last), gang_us=, part_us=,
 * fill_us= (time in each) and regime_moves=.
 *
 * All state below is guarded by sched_lock.
 */
#include "sched.h"
#include "runq.h"
#include "slots.h"
#include "allot.h"
#include "adrule.h"
#include "../info.h"
#include "../syncstat.h"

#define OPTIONS(X)                                                                                      \
    X(window, .min = 1, .max = 100, .def = 4, .help = "quanta per measurement window")              \
    X(confirm, .min = 1, .max = 20, .def = 2, .help = "consecutive windows past the threshold before a job moves") \
    X(margin, .min = 0, .max = 400, .def = 25, .help = "hysteresis: percent past the threshold that counts") \
    X(decisive, .min = 0, .max = 1000, .def = 8, .help = "a loss per episode this many block+wakes moves a job at once (0: never)")
SCHED_OPTIONS(OPTIONS);

static const char *const regime_name[NREGIMES] = { "part", "gang", "fill" };
#define SPACE (-1) /* cur_slot of the space-sharing slot */

struct ad_job {
    struct ad_rule rule; /* its regime, last window and hysteresis (adrule.h) */
    int row;          /* gang: its row */
    uint64_t cols;    /* gang: its columns, in process order */
    uint64_t mask;    /* part and fill: its harts in the SPACE slot */
    uint64_t since, in[NREGIMES];
    uint64_t exited_run, exited_blocked; /* run_ticks and blocked_ticks of its exited processes */
    uint64_t off;     /* ticks its processes waited for a hart after a preemption inside a wait */
    enum allot_shape shape; /* what one more hart is worth to it, as last allotted (allot.h) */
    int units;
    int probing;      /* in its first window: probed every quantum (probe) */
    uint64_t judged_at; /* its last window's end, or its admission: where its next window starts */
};

static struct slot_table table;
static struct proc *matrix[SLOTS_MAX_ROWS][SL_MAX_HARTS];
static struct runq q[SL_MAX_HARTS]; /* READY part processes bound to each hart */
static struct runq fq;              /* READY filler processes */
static struct ad_job ajobs[NJOB];
static struct proc *members[NJOB][SL_MAX_PROCS];
static struct job *live[NJOB]; /* admitted, not done, in arrival order */
static int nlive;
static uint64_t fill_mask, all_harts, idle_mask, switch_seq, acked_seq[SL_MAX_HARTS];
static int cur_slot = SPACE, quanta, space_quanta;

struct ad_proc {
    uint64_t off_since; /* preempted inside a wait at this time (0: not) */
};

static struct ad_job *aj(const struct job *j) { return &ajobs[j->id - 1]; }
static enum ad_regime regime_of(const struct proc *p) { return ajobs[p->job->id - 1].rule.regime; }
static int popc(uint64_t x) { int n = 0; for (; x; x &= x - 1) n++; return n; }
static uint64_t ns_ticks(uint64_t ns) { return ns * plat.timebase_hz / 1000000000UL; }

static void ad_init(void)
{
    slots_init(&table, ncpus, SLOT_FIT_FIRST);
    all_harts = ncpus == 64 ? ~0UL : (1UL << ncpus) - 1;
    idle_mask = all_harts;
}

/* ---- where a process waits and runs ---- */

static int job_on_hart(struct job *j, int h)
{
    int n = 0;
    for (int i = 0; i < j->nprocs; i++)
        n += members[j->id - 1][i] && members[j->id - 1][i]->hart == h;
    return n;
}

/* The hart of j's share for one more process: fewest of j's there, then lowest. */
static int pick_hart(struct job *j)
{
    int best = -1, best_own = 0;
    for (int h = 0; h < ncpus; h++)
        if (aj(j)->mask >> h & 1) {
            int own = job_on_hart(j, h);
            if (best < 0 || own < best_own)
                best = h, best_own = own;
        }
    return best < 0 ? 0 : best;
}

static int runnable(const struct proc *p) { return p && (p->state == P_READY || p->state == P_RUNNING); }

/* Where a part process that becomes ready waits (allot.h allot_wake_hart): its own hart, unless another
   runnable process of its job is there and a hart of its share has none. Process control resumes processes
   that slept bound where the job's others run now: when a share grew (another job left), they doubled up
   on a hart while the harts just gained stayed idle (blocking oddeven at 12 harts, 4 then 6 harts: 84 ms
   against partition's 68, simulated; partition levels every binding at each repartition). A job with a
   runnable process on every hart of its share (time-sharing them) never moves. */
static int wake_hart(struct proc *p)
{
    uint64_t busy = 0;
    for (int i = 0; i < p->job->nprocs; i++) {
        struct proc *o = members[p->job->id - 1][i];
        if (o != p && runnable(o) && o->hart >= 0)
            busy |= 1UL << o->hart;
    }
    int h = allot_wake_hart(aj(p->job)->mask, busy, p->hart);
    return h >= 0 ? h : pick_hart(p->job);
}

/* Every idle hart looks at the filler FIFO again (one kicked hart may take something else first). */
static void kick_idle(void)
{
    for (int h = 0; h < ncpus; h++)
        if (!cpus[h].cur)
            sched_kick(h);
}

/* A READY p (on no queue) joins its regime's queue. */
static void place_ready(struct proc *p)
{
    struct ad_job *a = aj(p->job);
    if (a->rule.regime == R_GANG) {
        if (p->slot == cur_slot) {
            idle_mask &= ~(1UL << p->hart);
            struct cpu *c = &cpus[p->hart];
            if (c->cur && c->cur != p)
                sched_preempt(c); /* a hole's filler gives the entry back */
            else
                sched_kick(p->hart);
        } else {
            sched_kick(p->hart); /* an idle hart may run it as an alternate */
        }
    } else if (a->rule.regime == R_PART) {
        int h = wake_hart(p);
        if (h != p->hart) {
            p->hart = h;
            p->job->nmigrate++;
        }
        runq_push_back(&q[p->hart], p);
        struct cpu *c = &cpus[p->hart];
        if (cur_slot == SPACE && c->cur && regime_of(c->cur) != R_PART)
            sched_preempt(c); /* its own share's slot: a hole's filler gives way */
        else
            sched_kick(p->hart);
        if (cur_slot == SPACE && (c->cur || q[p->hart].head != p)) /* busy: an idle hart of its share pulls it */
            sched_kick_idle(a->mask & ~(1UL << p->hart));
        if (cur_slot == SPACE)
            idle_mask &= ~(1UL << p->hart);
    } else {
        runq_push_back(&fq, p);
        if (cur_slot == SPACE)
            idle_mask &= ~fill_mask;
        kick_idle();
    }
}

/* Take a READY p off whatever queue holds it. */
static void unqueue(struct proc *p)
{
    runq_remove(&fq, p);
    for (int h = 0; h < ncpus; h++)
        runq_remove(&q[h], p);
}

/* ---- the SPACE slot's division ---- */

static int judge(struct job *j, struct ad_rule *r, uint64_t wticks, uint64_t *tp_us, int *wait_pct);
static void restart_window(struct job *j);

static void publish(struct job *j)
{
    struct ad_job *a = aj(j);
    if (a->rule.regime == R_GANG)
        info_set_allotment(j, popc(a->cols), a->cols);
    else if (a->rule.regime == R_PART)
        info_set_allotment(j, popc(a->mask), a->mask);
    else
        info_set_allotment(j, ncpus, all_harts); /* filler: no process control */
    /* its waits time themselves only where the rule reads them (abi.h sync_timed): folded onto its share
       or on dedicated harts, a job is judged by its episodes alone */
    int timed = ad_reads_waits(a->rule.regime, j->adaptive, popc(a->mask), j->nprocs);
    if (!info_set_sync_timed(j, timed) && timed && rdtime() - a->judged_at > sched_quantum / 8)
        restart_window(j); /* the window so far had its waits untimed (unless they turn on as it begins:
                              its admission, or a judgment) */
}

/* j's window starts again now, what it measured so far dropped: a settling window carries no evidence, and
   ad_judge takes its sums as the next window's start. (Skipping the whole window instead left gauss fine,
   whose share shrank to one hart 2 ms after it arrived, time-sharing it for a window its probes could not
   judge.) */
static void restart_window(struct job *j)
{
    struct ad_job *a = aj(j);
    uint64_t tp_us;
    int wait_pct;
    a->rule.settle = 1;
    judge(j, &a->rule, 0, &tp_us, &wait_pct);
    a->judged_at = rdtime();
}

/* What one more hart is worth to j (adrule.c ad_shape, from process 0's published units). */
static enum allot_shape shape_of(struct job *j, int *units)
{
    volatile struct sl_sync *st = syncstat_of(j, 0);
    return ad_shape(&aj(j)->rule, j->adaptive, j->nprocs, st ? st->units : 0, units);
}

/* A job's shape changed since its share was computed: the shares are recomputed. */
static int shapes_changed(void)
{
    for (int i = 0; i < nlive; i++) {
        int units;
        enum allot_shape sh = shape_of(live[i], &units);
        if (aj(live[i])->rule.regime != R_GANG && (sh != aj(live[i])->shape || units != aj(live[i])->units))
            return 1;
    }
    return 0;
}

/* Divide the harts among the part and fill jobs (allot.h) and move part processes onto their shares, but
   those of `skip` (a job being moved: its caller places them). */
static void repartition(struct job *skip)
{
    struct allot_job al[NJOB];
    struct job *sp[NJOB];
    int n = 0;
    for (int i = 0; i < nlive; i++)
        if (aj(live[i])->rule.regime != R_GANG) {
            struct ad_job *a = aj(live[i]);
            sp[n] = live[i];
            a->shape = shape_of(live[i], &a->units);
            al[n++] = (struct allot_job){ .procs = live[i]->nprocs,
                                          .adaptive = live[i]->adaptive || a->rule.regime == R_FILL,
                                          .shape = a->shape, .units = a->units,
                                          .background = live[i]->background, .prev = a->mask };
        }
    if (n)
        allot_compute(ncpus, al, n);
    fill_mask = 0;
    for (int i = 0; i < n; i++) {
        struct ad_job *a = aj(sp[i]);
        int changed = a->mask != al[i].mask;
        a->mask = al[i].mask;
        if (a->rule.regime == R_FILL)
            fill_mask |= a->mask;
        if (changed) {
            publish(sp[i]);
            trace_rec(mycpu()->id, TR_REP, sp[i]->id, 0, al[i].count);
        }
        if (a->rule.regime != R_PART || sp[i] == skip)
            continue;
        for (int k = 0; k < sp[i]->nprocs; k++) { /* off harts the job lost */
            struct proc *p = members[sp[i]->id - 1][k];
            if (!p || (a->mask >> p->hart & 1))
                continue;
            if (p->state == P_READY) {
                runq_remove(&q[p->hart], p);
                place_ready(p); /* rebinds it */
            } else if (p->state == P_RUNNING) {
                sched_preempt(p->on_cpu); /* rebound when it is enqueued */
            }
        }
    }
}

/* ---- moving a job between regimes ---- */

static void leave_gang(struct ad_job *a)
{
    slots_free(&table, a->row, a->cols);
    for (int h = 0; h < ncpus; h++)
        if (a->cols >> h & 1)
            matrix[a->row][h] = 0;
    a->cols = 0;
    a->row = -1;
}

/* Take n entries of one row for j's processes; 0 or -1 (no room: it stays where it is). */
static int enter_gang(struct job *j)
{
    struct ad_job *a = aj(j);
    uint64_t cols;
    int row = slots_alloc(&table, j->nprocs, &cols);
    if (row < 0)
        return -1;
    a->row = row;
    a->cols = cols;
    for (int i = 0, h = 0; i < j->nprocs; i++, h++) {
        while (!(cols >> h & 1))
            h++;
        struct proc *p = members[j->id - 1][i];
        if (p) {
            p->hart = h;
            p->slot = row;
            matrix[row][h] = p; /* a process not created yet takes its entry in proc_new */
        }
    }
    return 0;
}

static void move(struct job *j, enum ad_regime to, uint64_t tp_us, int wait_pct)
{
    struct ad_job *a = aj(j);
    enum ad_regime from = a->rule.regime;
    struct proc **m = members[j->id - 1];
    if (to == R_GANG && enter_gang(j) < 0)
        return;
    for (int i = 0; i < j->nprocs; i++)
        if (m[i] && m[i]->state == P_READY)
            unqueue(m[i]);
    if (from == R_GANG)
        leave_gang(a);
    uint64_t now = rdtime();
    a->in[from] += now - a->since;
    a->since = now;
    ad_moved(&a->rule, from, to);
    if (to != R_GANG)
        for (int i = 0; i < j->nprocs; i++)
            if (m[i])
                m[i]->slot = -1;
    a->mask = 0;
    trace_rec(mycpu()->id, TR_REGIME, j->id, from,
              (int)to | (wait_pct & 127) << 2 | (int)(tp_us < (1 << 22) - 1 ? tp_us : (1 << 22) - 1) << 9);
    repartition(j);
    publish(j);
    for (int i = 0; i < j->nprocs; i++) {
        if (!m[i])
            continue;
        if (m[i]->state == P_READY)
            place_ready(m[i]);
        else if (m[i]->state == P_RUNNING)
            sched_preempt(m[i]->on_cpu); /* it is placed by its regime when it is enqueued */
    }
}

/* ---- measuring and deciding ---- */

/* Another live job holds a gang row. */
static int gang_row_besides(const struct job *j)
{
    for (int i = 0; i < nlive; i++)
        if (live[i] != j && aj(live[i])->rule.regime == R_GANG)
            return 1;
    return 0;
}

/* One window of job j, judged with rule state r (adrule.c decides): its sums now, the kernel's run and blocked time and the
   library's counts, each field of the page read once (the job may be rewriting it). */
static int judge(struct job *j, struct ad_rule *r, uint64_t wticks, uint64_t *tp_us, int *wait_pct)
{
    struct ad_job *a = aj(j);
    if (!syncstat_of(j, 0))
        return -1;
    struct ad_sums now = { .run = a->exited_run, .sleep = a->exited_blocked, .off = a->off };
    uint64_t t = rdtime();
    for (int i = 0; i < j->nprocs; i++) {
        struct proc *p = members[j->id - 1][i];
        if (p) { /* run_ticks and blocked_ticks cover a running or blocked process up to its last change */
            now.run += p->run_ticks + (p->state == P_RUNNING && t > p->dispatched_at ? t - p->dispatched_at : 0);
            now.sleep += p->blocked_ticks + (p->state == P_BLOCKED && t > p->blocked_at ? t - p->blocked_at : 0);
        }
        volatile struct sl_sync *st = syncstat_of(j, i);
        now.episodes += st->episodes; /* counts wrap: the rule takes deltas modulo 2^32 */
        now.wait += st->wait_ticks;
    }
    struct ad_env e = {
        .wticks = wticks, .quantum = sched_quantum,
        .omega = ns_ticks(sched_wake_cost_ns()), .reload = ns_ticks(sched_reload_cost_ns()),
        .timebase_hz = plat.timebase_hz, .margin = (int)SCHED_OPT(margin), .decisive = (int)SCHED_OPT(decisive), .nprocs = j->nprocs,
        .ncpus = ncpus, .harts = popc(a->mask), .adaptive = j->adaptive, .holes = gang_row_besides(j),
    };
    return ad_judge(r, &now, &e, tp_us, wait_pct);
}

/* Job j's window since it was last judged (window= quanta, or less for a job admitted since) judged; it
   moves when the hysteresis says so. A window shorter than a quantum is not judged: its sums carry into
   the next one (a window is all the time since the last, so a job admitted late in one is judged on the
   rest: cut at a fixed length, a job time-sharing a hart with three others ran less than a quarter of it,
   and the window said nothing). */
static void decide(struct job *j)
{
    struct ad_job *a = aj(j);
    uint64_t now = rdtime(), tp_us = ~0UL;
    if (now - a->judged_at < sched_quantum)
        return;
    int wait_pct = 0, c = judge(j, &a->rule, now - a->judged_at, &tp_us, &wait_pct);
    a->judged_at = now;
    a->probing = 0;
    if (ad_confirm(&a->rule, c, (int)SCHED_OPT(confirm)))
        move(j, (enum ad_regime)c, tp_us, wait_pct);
}

static void window_end(void)
{
    for (int i = 0; i < nlive; i++)
        decide(live[i]);
    if (shapes_changed())
        repartition(0);
}

/* Every quantum of a job's first window, that window so far is judged without closing it, and only a
   decisive loss acts on it: it shows in a quantum (gauss fine time-sharing one hart beside a hog loses 65x
   its time alone), and waiting out the window cost such a job most of its slowdown (QEMU, 2 harts: 40 of
   its 109 ms). Anything less waits for the window, as every later one does. */
static void probe(void)
{
    uint64_t now = rdtime();
    for (int i = 0; i < nlive; i++) {
        struct ad_job *a = aj(live[i]);
        if (!a->probing || now - a->judged_at < sched_quantum)
            continue;
        struct ad_rule seen = a->rule; /* the window so far, judged on a copy: the window goes on */
        uint64_t tp_us = ~0UL;
        int wait_pct = 0, c = judge(live[i], &seen, now - a->judged_at, &tp_us, &wait_pct);
        if (c >= 0 && c != (int)a->rule.regime && seen.decisive) {
            a->rule = seen;
            a->judged_at = now;
            a->probing = 0;
            ad_confirm(&a->rule, c, (int)SCHED_OPT(confirm)); /* decisive: it confirms */
            move(live[i], (enum ad_regime)c, tp_us, wait_pct);
        }
    }
}

/* ---- the round ---- */

static int slot_runnable(int s)
{
    if (s == SPACE) {
        if (fq.head)
            return 1;
        for (int h = 0; h < ncpus; h++)
            if (q[h].head)
                return 1;
        for (int i = 0; i < nlive; i++)
            if (aj(live[i])->rule.regime != R_GANG)
                for (int k = 0; k < live[i]->nprocs; k++)
                    if (runnable(members[live[i]->id - 1][k]))
                        return 1;
        return 0;
    }
    for (int h = 0; h < ncpus; h++)
        if (runnable(matrix[s][h]))
            return 1;
    return 0;
}

/* The slot after s in the round: the used rows in order, then SPACE. */
static int next_slot(int s)
{
    int r = slots_next_used(&table, s == SPACE ? -1 : s);
    if (s == SPACE)
        return r >= 0 ? r : SPACE;
    return r < 0 || r <= s ? SPACE : r;
}

/* Hart c acts on the latest switch: it leaves a process that is not of the current slot, and at every
   quantum a part or filler process gives its hart to the next in its queue (round robin). */
static void ad_ack(struct cpu *c)
{
    if (acked_seq[c->id] == switch_seq)
        return;
    acked_seq[c->id] = switch_seq;
    trace_rec(c->id, TR_ACK, 0, -1, cur_slot);
    struct proc *p = c->cur;
    if (!p)
        return;
    if (cur_slot >= 0) {
        if (p != matrix[cur_slot][c->id])
            sched_preempt(c);
    } else if (regime_of(p) == R_GANG || q[c->id].head ||
               (fq.head && ((fill_mask >> c->id & 1) || regime_of(p) == R_FILL))) {
        sched_preempt(c);
    }
}

/* Switch to the next slot with something runnable (or stay); always broadcast, so every hart's round
   robin turns with the quantum. */
static void ad_switch(enum trace_ev why, int stay)
{
    int s = cur_slot;
    for (int k = 0; k <= table.nrows + 1 && !stay; k++) {
        s = next_slot(s);
        if (slot_runnable(s) || s == cur_slot)
            break;
    }
    if (why == TR_EARLY && s == cur_slot)
        return;
    struct cpu *me = mycpu();
    if (s != cur_slot)
        space_quanta = 0;
    cur_slot = s;
    switch_seq++;
    idle_mask = 0;
    trace_rec(me->id, why, 0, -1, s);
    sched_restart_tick(0);
    sched_ipi(all_harts & ~(1UL << me->id));
    ad_ack(me);
}

static void mark_idle(int h)
{
    idle_mask |= 1UL << h;
    if (idle_mask == all_harts)
        ad_switch(TR_EARLY, 0);
}

/* A ready part process of a job whose share holds hart h, waiting on another hart of that share that is busy
   (an idle one was kicked and runs it itself: taking it would pile the job's processes on the fastest
   waker's hart, where they stay bound). */
static struct proc *pull_from_share(int h)
{
    for (int i = 0; i < nlive; i++) {
        struct ad_job *a = aj(live[i]);
        if (a->rule.regime != R_PART || !(a->mask >> h & 1))
            continue;
        for (int o = 0; o < ncpus; o++)
            for (struct proc *p = o != h && (a->mask >> o & 1) && cpus[o].cur ? q[o].head : 0; p; p = p->rq_next)
                if (p->job == live[i]) {
                    runq_remove(&q[o], p);
                    p->hart = h;
                    live[i]->nmigrate++;
                    return p;
                }
    }
    return 0;
}

static struct proc *pick(struct cpu *c);
static struct proc *took(struct cpu *c, struct proc *p);
static struct proc *ad_pick_next(struct cpu *c) { return took(c, pick(c)); }

static struct proc *pick(struct cpu *c)
{
    for (int tries = 0; tries < 2; tries++) {
        struct proc *p = 0;
        if (cur_slot >= 0) {
            p = matrix[cur_slot][c->id];
            if (p && p->state == P_READY)
                return p;
            p = 0;
        } else {
            p = runq_pop(&q[c->id]);
            if (!p)
                p = pull_from_share(c->id);
            if (!p && (fill_mask >> c->id & 1))
                p = runq_pop(&fq);
            if (p)
                return p;
        }
        int before = cur_slot;
        mark_idle(c->id); /* may switch early */
        if (cur_slot == before)
            break;
    }
    /* a hole: filler only - a process of a synchronizing job (gang or part) would run without its partners
       and spin or block on them (uncoordinated: F&R eq. 8) */
    return runq_pop(&fq);
}

/* ---- the hooks ---- */

/* A job arrived: what each job lost where may be less than it would lose there now (one more job to share
   the harts with), and a memory that underestimates would send a job where it loses more. A departure
   keeps them: a regime can only have become cheaper, and forgetting then sent gauss fine, in a gang row
   at its last steps (t_w 3.5 us, a block + wake 2.9), back to time-sharing a partition, where its first
   quantum had lost 266 us per episode (simulated, 24 harts, beside a synth and a knary that had ended:
   slowdown 4.74, 2.74 in the row). */
static void forget_losses(void)
{
    for (int i = 0; i < nlive; i++)
        memset(aj(live[i])->rule.loss, 0, sizeof aj(live[i])->rule.loss);
}

static int ad_job_admit(struct job *j)
{
    struct ad_job *a = aj(j);
    memset(a, 0, sizeof *a);
    a->row = -1;
    a->rule.regime = a->rule.cand = R_PART;
    a->since = rdtime();
    a->probing = 1;
    a->judged_at = a->since;
    live[nlive++] = j;
    forget_losses();
    repartition(0);
    publish(j);
    return 0;
}

static void ad_job_done(struct job *j)
{
    struct ad_job *a = aj(j);
    int k = 0;
    for (int i = 0; i < nlive; i++)
        if (live[i] != j)
            live[k++] = live[i];
    if (k == nlive)
        return;
    nlive = k; /* the memories stay: see forget_losses */
    if (a->rule.regime == R_GANG && a->row >= 0)
        leave_gang(a);
    uint64_t end = j->end ? j->end : rdtime();
    a->in[a->rule.regime] += end > a->since ? end - a->since : 0;
    a->since = end;
    a->mask = 0;
    repartition(0);
}

static void ad_proc_new(struct proc *p)
{
    struct ad_job *a = aj(p->job);
    members[p->job->id - 1][p->idx] = p;
    p->slot = -1;
    if (a->rule.regime == R_GANG) {
        int h = 0;
        for (int m = p->idx; h < ncpus; h++)
            if ((a->cols >> h & 1) && m-- == 0)
                break;
        p->hart = h;
        p->slot = a->row;
        matrix[a->row][h] = p;
    } else {
        p->hart = pick_hart(p->job);
    }
}

/* A process preempted inside a wait (its record's in_wait) is off its hart in the middle of the wait: that
   time is in the library's wait_ticks but was not spinning, and gang rows make it a whole round. */
static void ad_enqueue(struct proc *p, enum enq_how how)
{
    volatile struct sl_sync *st = syncstat_of(p->job, p->idx);
    if ((how == ENQ_PREEMPT || how == ENQ_YIELD) && st && st->in_wait)
        SCHED_PRIV(p, struct ad_proc)->off_since = rdtime();
    place_ready(p);
}

/* p (or NULL) is what hart c runs next: a gang entry of c's column or a process bound to c already; a
   filler process from the FIFO is bound to c now (it may run anywhere). */
static struct proc *took(struct cpu *c, struct proc *p)
{
    if (!p)
        return 0;
    struct ad_proc *ap = SCHED_PRIV(p, struct ad_proc);
    if (ap->off_since) {
        aj(p->job)->off += rdtime() - ap->off_since;
        ap->off_since = 0;
    }
    p->hart = c->id;
    return p;
}

static void ad_blocked(struct proc *p)
{
    if (regime_of(p) == R_GANG && p->slot == cur_slot)
        mark_idle(p->hart);
}

static void ad_exited(struct proc *p)
{
    struct ad_job *a = aj(p->job);
    members[p->job->id - 1][p->idx] = 0;
    a->exited_run += p->run_ticks;
    a->exited_blocked += p->blocked_ticks;
    if (a->rule.regime == R_GANG && p->slot >= 0 && matrix[p->slot][p->hart] == p) {
        matrix[p->slot][p->hart] = 0;
        if (p->slot == cur_slot)
            mark_idle(p->hart);
    }
}

/* Hart 0 only (one_timer): the quantum is over; every window= quanta, the measurements. The SPACE slot
   lasts one quantum per job sharing it, so that each of them gets what a gang job gets from its row:
   H harts for a quantum per round (a fair share whatever the regimes). */
static void ad_tick(struct cpu *c)
{
    if (++quanta % SCHED_OPT(window) == 0)
        window_end();
    else
        probe();
    int nspace = 0;
    for (int i = 0; i < nlive; i++)
        nspace += aj(live[i])->rule.regime != R_GANG;
    if (cur_slot == SPACE && ++space_quanta < nspace)
        ad_switch(TR_SLOT, 1); /* stay: the broadcast turns every hart's round robin */
    else
        ad_switch(TR_SLOT, 0);
}

static void ad_ipi(struct cpu *c) { ad_ack(c); }

/* RESULT's keys (sched.h result; resultkeys.h lists them): the last regime and the time in each. */
static void ad_result(const struct job *j, char *buf, size_t len)
{
    struct ad_job *a = aj(j);
    uint64_t us[NREGIMES];
    for (int r = 0; r < NREGIMES; r++)
        us[r] = a->in[r] * 1000000 / plat.timebase_hz;
    snprintf(buf, len, "regime=%s gang_us=%lu part_us=%lu fill_us=%lu regime_moves=%d", regime_name[a->rule.regime],
             us[R_GANG], us[R_PART], us[R_FILL], a->rule.moves);
}

const struct sched_class adaptive_class = {
    .order = 5,
    .name = "adaptive",
    .options = SCHED_OPTION_TABLE(OPTIONS),
    .one_timer = 1,
    .allots = 1,
    .syncstat = 1,
    .init = ad_init,
    .job_admit = ad_job_admit,
    .job_done = ad_job_done,
    .proc_new = ad_proc_new,
    .enqueue = ad_enqueue,
    .pick_next = ad_pick_next,
    .blocked = ad_blocked,
    .exited = ad_exited,
    .abandoned = ad_exited,
    .tick = ad_tick,
    .ipi = ad_ipi,
    .result = ad_result,
};
SCHED_CLASS(adaptive_class);
