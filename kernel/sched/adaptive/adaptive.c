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
 * hart; a background job (it runs until the others end) takes spare harts last; a hart that speeds no
 * job up stays with the job it came from (allot.c redistribute). Among the jobs a spare hart would speed
 * up, it goes by measured efficiency, not arrival: each window in the SPACE slot says what share of the
 * hart time a job held was progress - not spun in a wait, not its share's harts idling, not a stealing
 * process finding no thread (adrule.c efficiency; the library publishes that time as a wait) - and the
 * shape's gain is weighted by it (allot.h .eff; Brecht & Guha 1996). A change of efficiency repartitions
 * at a window's end only past EFF_STEP (adround.c).
 *
 * Measurement, the rule and its models, hysteresis, hostile statistics: adrule.c's header (the rule is
 * pure arithmetic there, host-tested). This file gathers each window's sums (judge) and moves jobs: every
 * window= quanta for every job, and every quantum of a new job's first window (probe: a decisive loss
 * need not wait out a window) - a prior's row as soon as its waits sleep (probe_guess).
 *
 * Explained. Every move is a trace event `regime J old arg` (arg: new | wait % << 2 | min(t_p us, 2^22-1)
 * << 9), on the Perfetto trace's "regime" track; RESULT adds regime= (the last), gang_us=, part_us=,
 * fill_us= (time in each) and regime_moves=.
 *
 * What each rule was measured against is docs/notes/adaptive-history.md; the comments state the rules.
 *
 * The files. This one is the policy: each job's regime, judging and moving it, and the hooks. admeasure.c
 * keeps what the kernel counts of each job and sums a window (the hooks call in there); adround.c is the
 * machine above, which it drives through adaptive.h (where a ready process waits, what a hart runs, the
 * shares, the round); neither decides a regime, and adrule.c is the rule. All their state (adaptive.h's
 * `ad`, adround.c's queues, admeasure.c's stretches) is guarded by sched_lock.
 */
#include "adaptive.h"
#include "../../info.h"
#include "../../syncstat.h"

#define OPTIONS(X)                                                                                      \
    X(window, .min = 1, .max = 100, .def = 4, .help = "quanta per measurement window")              \
    X(confirm, .min = 1, .max = 20, .def = 2, .help = "consecutive windows past the threshold before a job moves") \
    X(margin, .min = 0, .max = 400, .def = 25, .help = "hysteresis: percent past the threshold that counts") \
    X(decisive, .min = 0, .max = 1000, .def = 8, .help = "a loss per episode this many block+wakes moves a job at once (0: never)") \
    X(prior, .choices = "part|gang", .def = 1, .help = "where a job not measured yet that cannot fold and would time-share starts")
SCHED_OPTIONS(OPTIONS);

static const char *const regime_name[NREGIMES] = { "part", "gang", "fill" };
struct ad_state ad = { .cur_slot = SPACE, .round_at = SPACE, .row_next = -1 };
static int quanta; /* quanta since boot (hart 0's tick): every window= of them, a window ends */

static uint64_t ns_ticks(uint64_t ns) { return ns * plat.timebase_hz / 1000000000UL; }

static void ad_init(void)
{
    slots_init(&ad.table, ncpus, SLOT_FIT_FIRST);
    ad.all_harts = ncpus == 64 ? ~0UL : (1UL << ncpus) - 1;
    ad_round_init();
}

/* ---- what a job is told ---- */

static void restart_window(struct job *j);

/* What job j is told in its info page: its allotment, and whether its waits are timed. */
static void publish(struct job *j)
{
    struct ad_job *a = aj(j);
    if (a->rule.regime == R_GANG)
        info_set_allotment(j, popc(a->cols), a->cols);
    else if (a->rule.regime == R_PART)
        info_set_allotment(j, popc(a->mask), a->mask);
    else
        info_set_allotment(j, ncpus, ad.all_harts); /* filler: no process control */
    /* its waits time themselves only where the rule reads them (abi.h sync_timed): folded onto its share
       or on dedicated harts, a job is judged by its episodes alone */
    int timed = ad_reads_waits(a->rule.regime, j->adaptive, popc(a->mask), j->nprocs);
    if (!info_set_sync_timed(j, timed) && timed && rdtime() - a->judged_at > sched_quantum / 8)
        restart_window(j); /* the window so far had its waits untimed (unless they turn on as it begins:
                              its admission, or a judgment) */
}


/* ---- moving a job between regimes ---- */

static void leave_gang(struct ad_job *a)
{
    slots_free(&ad.table, a->row, a->cols);
    if (ad.row_next == a->row)
        ad.row_next = -1;
    if (!slots_used(&ad.table, a->row))
        ad.row_early[a->row] = 0; /* a job that takes the row later takes a row with its turns */
    for (int h = 0; h < ncpus; h++)
        if (a->cols >> h & 1)
            ad.matrix[a->row][h] = 0;
    a->cols = 0;
    a->row = -1;
}

/* Take n entries of one row for j's processes; 0 or -1 (no room: it stays where it is). */
static int enter_gang(struct job *j)
{
    struct ad_job *a = aj(j);
    uint64_t cols;
    int row = slots_alloc(&ad.table, j->nprocs, &cols);
    if (row < 0)
        return -1;
    a->row = row;
    a->cols = cols;
    for (int i = 0, h = 0; i < j->nprocs; i++, h++) {
        while (!(cols >> h & 1))
            h++;
        struct proc *p = ad.members[j->id - 1][i];
        if (p) {
            p->hart = h;
            p->slot = row;
            ad.matrix[row][h] = p; /* a process not created yet takes its entry in proc_new */
        }
    }
    return 0;
}

static void move(struct job *j, enum ad_regime to, uint64_t tp_us, int wait_pct)
{
    struct ad_job *a = aj(j);
    enum ad_regime from = a->rule.regime;
    struct proc **m = ad.members[j->id - 1];
    if (to == R_GANG && enter_gang(j) < 0)
        return;
    if (to == R_GANG)
        ad.row_next = a->row; /* its row comes next (adround.c ad_switch) */
    for (int i = 0; i < j->nprocs; i++)
        if (m[i] && m[i]->state == P_READY)
            ad_unqueue(m[i]);
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
    ad_repartition(j, publish);
    publish(j);
    for (int i = 0; i < j->nprocs; i++) {
        if (!m[i])
            continue;
        if (m[i]->state == P_READY)
            ad_place_ready(m[i]);
        else if (m[i]->state == P_RUNNING)
            sched_preempt(m[i]->on_cpu); /* it is placed by its regime when it is enqueued */
    }
}

/* ---- measuring and deciding ---- */

/* Another live job's gang row leaves holes for a filler (FCS): entries no live process of it holds (fewer
   processes than harts, or some exited), or processes that sleep inside waits there. A full row of spinners
   leaves none, and a filler there only shares the SPACE slot's harts by processes, not jobs. */
static int holes_besides(const struct job *j)
{
    for (int i = 0; i < ad.nlive; i++) {
        struct ad_job *a = aj(ad.live[i]);
        if (ad.live[i] == j || a->rule.regime != R_GANG)
            continue;
        int held = 0;
        for (int h = 0; h < ncpus; h++)
            held += ad.matrix[a->row][h] != 0;
        if (held < ncpus || a->slept)
            return 1;
    }
    return 0;
}

/* j's window starts again now, what it measured so far dropped: a window whose first part its probes
   cannot judge (its waits untimed, or a guessed row) is restarted, not skipped whole, so a job whose share
   shrinks is judged within a window. A pending post-move skip stays pending. */
static void restart_window(struct job *j)
{
    struct ad_sums now;
    if (ad_sums_of(j, &now) == 0)
        aj(j)->rule.last = now;
    aj(j)->judged_at = rdtime();
}

/* One window of job j, judged with rule state r (adrule.c decides). */
static int judge(struct job *j, struct ad_rule *r, uint64_t wticks, int early, uint64_t *tp_us, int *wait_pct)
{
    struct ad_job *a = aj(j);
    struct ad_sums now;
    if (ad_sums_of(j, &now) < 0)
        return -1;
    struct ad_env e = {
        .wticks = wticks, .quantum = sched_quantum,
        .omega = ns_ticks(sched_wake_cost_ns()), .reload = ns_ticks(sched_reload_cost_ns()),
        .timebase_hz = plat.timebase_hz, .margin = (int)SCHED_OPT(margin),
        .decisive = (int)SCHED_OPT(decisive), .nprocs = j->nprocs, .ncpus = ncpus, .harts = popc(a->mask),
        .adaptive = j->adaptive, .holes = holes_besides(j), .own_share = ad_own_share(j), .early = early,
    };
    return ad_judge(r, &now, &e, tp_us, wait_pct);
}

/* Judge job j's window - the time since it was last judged: window= quanta, or less for a job admitted
   since - and move it when the hysteresis says so. A window shorter than a quantum is not judged: its sums carry into
   the next one (a window is all the time since the last, so a job admitted late in one is judged on the
   rest: cut at a fixed length, a job time-sharing a hart with three others ran less than a quarter of it,
   and the window said nothing). */
static void decide(struct job *j)
{
    struct ad_job *a = aj(j);
    uint64_t now = rdtime(), tp_us = ~0UL;
    if (now - a->judged_at < sched_quantum)
        return;
    int wait_pct = 0, c = judge(j, &a->rule, now - a->judged_at, 0, &tp_us, &wait_pct);
    c = ad_weigh_row(j, &a->rule, c, (int)SCHED_OPT(margin)); /* a row's cost to the others too (adrule.c) */
    a->judged_at = now;
    a->probing = 0;
    if (ad_confirm(&a->rule, c, (int)SCHED_OPT(confirm)))
        move(j, (enum ad_regime)c, tp_us, wait_pct);
}

/* prior=gang: jobs not measured yet that cannot fold and time-share now (an arrival or a move into the
   SPACE slot shrank their share) go to a gang row at once (adrule.c's header, "The prior"); their window
   restarts there. Called where shares change: an admission, and each quantum's judgments. */
static void coschedule_unmeasured(void)
{
    if (!SCHED_OPT(prior))
        return;
    for (int i = 0; i < ad.nlive; i++) {
        struct job *j = ad.live[i];
        struct ad_job *a = aj(j);
        if (ad_prior_gang(&a->rule, j->adaptive, popc(a->mask), j->nprocs, ncpus)) {
            a->rule.primed = 1;
            move(j, R_GANG, ~0UL, 0);
            restart_window(j);
            a->probing = 1; /* its guess is probed every quantum (adrule.c: its first evidence moves it) */
        }
    }
}

static void window_end(void)
{
    for (int i = 0; i < ad.nlive; i++)
        decide(ad.live[i]);
    if (ad_shapes_changed())
        ad_repartition(0, publish);
}

/* Every quantum of a job's first window, that window so far is judged without closing it, and only a
   decisive loss acts on it: it shows in a quantum, and waiting out the window would cost such a job most
   of its slowdown. Anything less waits for the window, as every later one does. */
static void probe_job(struct job *j, uint64_t now, int early)
{
    struct ad_job *a = aj(j);
    struct ad_rule seen = a->rule; /* the window so far, judged on a copy: the window goes on */
    uint64_t tp_us = ~0UL;
    int wait_pct = 0, c = judge(j, &seen, now - a->judged_at, early, &tp_us, &wait_pct);
    c = ad_weigh_row(j, &seen, c, (int)SCHED_OPT(margin));
    a->probed_at = now;
    if (c >= 0 && c != (int)a->rule.regime && seen.decisive) {
        a->rule = seen;
        a->judged_at = now;
        a->probing = 0;
        ad_confirm(&a->rule, c, (int)SCHED_OPT(confirm)); /* decisive: it confirms */
        move(j, (enum ad_regime)c, tp_us, wait_pct);
    }
}

/* Every quantum: each job still in its first window. */
static void probe(void)
{
    uint64_t now = rdtime();
    for (int i = 0; i < ad.nlive; i++) {
        struct ad_job *a = aj(ad.live[i]);
        if (a->probing && now - a->judged_at >= sched_quantum)
            probe_job(ad.live[i], now, 0);
    }
}

/* A row that is the prior's guess (nothing measured yet) is checked as soon as the evidence that can
   refute it shows - a process of it asleep inside a wait (adrule.c: its first evidence that its waits
   sleep moves it) - once a quarter quantum of it has run, and no more often: a wrong guess holds every hart
   of its row while the other jobs wait to start. A right guess loses nothing: the judgment finds no reason
   to move, and the row keeps its quantum. Judged at its first sleeps, the window ends just past its first
   barriers, so it needs more evidence than a tick's judgment (adrule.h EARLY_EPISODES). */
static void probe_guess(struct job *j)
{
    struct ad_job *a = aj(j);
    uint64_t now = rdtime();
    if (a->probing && a->rule.primed && !a->rule.judged && a->rule.regime == R_GANG &&
        now - a->judged_at >= sched_quantum / 4 && now - a->probed_at >= sched_quantum / 4)
        probe_job(j, now, 1);
}

/* ---- the hooks ---- */

static struct proc *took(struct cpu *c, struct proc *p);
static struct proc *ad_pick_next(struct cpu *c)
{
    struct proc *p = ad_pick(c);
    ad_share_idle(c->id, p);
    return took(c, p);
}

/* A job arrived: what each job lost where may be less than it would lose there now (one more job to share
   the harts with), and a memory that underestimates would send a job where it loses more. A departure
   keeps them: a regime can only have become cheaper, and forgetting then would send a job at its last
   fine steps in a gang row back to where it measured a far larger loss. */
static void forget_losses(void)
{
    for (int i = 0; i < ad.nlive; i++)
        memset(aj(ad.live[i])->rule.loss, 0, sizeof aj(ad.live[i])->rule.loss);
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
    ad.live[ad.nlive++] = j;
    forget_losses();
    ad_repartition(0, publish);
    publish(j);
    coschedule_unmeasured();
    ad_run_row_next(); /* a row it took (or another job took) runs now, or at its first process (ad_enqueue) */
    return 0;
}

static void ad_job_done(struct job *j)
{
    struct ad_job *a = aj(j);
    int k = 0;
    for (int i = 0; i < ad.nlive; i++)
        if (ad.live[i] != j)
            ad.live[k++] = ad.live[i];
    if (k == ad.nlive)
        return;
    ad.nlive = k; /* the memories stay: see forget_losses */
    ad_close_idle(j);
    if (a->rule.regime == R_GANG && a->row >= 0)
        leave_gang(a);
    uint64_t end = j->end ? j->end : rdtime();
    a->in[a->rule.regime] += end > a->since ? end - a->since : 0;
    a->since = end;
    a->mask = 0;
    ad_repartition(0, publish);
}

static void ad_proc_new(struct proc *p)
{
    struct ad_job *a = aj(p->job);
    ad.members[p->job->id - 1][p->idx] = p;
    p->slot = -1;
    if (a->rule.regime == R_GANG) {
        int h = 0;
        for (int m = p->idx; h < ncpus; h++)
            if ((a->cols >> h & 1) && m-- == 0)
                break;
        p->hart = h;
        p->slot = a->row;
        ad.matrix[a->row][h] = p;
    } else {
        p->hart = ad_pick_hart(p->job);
    }
}

/* p is READY: its wait bookkeeping (admeasure.c), then its regime's queue. */
static void ad_enqueue(struct proc *p, enum enq_how how)
{
    volatile struct sl_sync *st = syncstat_of(p->job, p->idx);
    ad_ready(p, how != ENQ_NEW && st && st->in_wait, how == ENQ_YIELD);
    ad_place_ready(p);
    if (how == ENQ_NEW && p->slot >= 0 && p->slot == ad.row_next)
        ad_run_row_next(); /* the first process of a row entered at admission */
}

/* p (or NULL) is what hart c runs next: a gang entry of c's column or a process bound to c already; a
   filler process from the FIFO is bound to c now (it may run anywhere). */
static struct proc *took(struct cpu *c, struct proc *p)
{
    if (!p)
        return 0;
    ad_dispatched(p);
    p->hart = c->id;
    return p;
}

static void ad_blocked(struct proc *p)
{
    volatile struct sl_sync *st = syncstat_of(p->job, p->idx);
    int asleep = st && st->in_wait;
    if (asleep) {
        ad_asleep(p);
        aj(p->job)->slept |= regime_of(p) == R_GANG;
    }
    if (regime_of(p) == R_GANG && p->slot == ad.cur_slot)
        ad_mark_idle(p->hart);
    if (asleep)
        probe_guess(p->job);
}

static void ad_exited(struct proc *p)
{
    struct ad_job *a = aj(p->job);
    ad.members[p->job->id - 1][p->idx] = 0;
    ad_gone(p);
    if (a->rule.regime == R_GANG && p->slot >= 0 && ad.matrix[p->slot][p->hart] == p) {
        ad.matrix[p->slot][p->hart] = 0;
        if (p->slot == ad.cur_slot)
            ad_mark_idle(p->hart);
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
    coschedule_unmeasured();
    int nspace = 0;
    for (int i = 0; i < ad.nlive; i++)
        nspace += aj(ad.live[i])->rule.regime != R_GANG;
    if (ad.cur_slot == SPACE && ++ad.space_quanta < nspace)
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
