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
 * Measurement (per job, every window= quanta, on hart 0's tick). The kernel counts each process's run time
 * (run_ticks) itself; spinning is invisible to it, so the library publishes per process, in the job's sync
 * statistics page (abi.h struct sl_sync, syncstat.h): barrier episodes, waits, ticks waited and the part of
 * them asleep. Over the window, summed over the job's processes:
 *   e   = episodes (worker barrier arrivals)     W = ticks waited, S = of those asleep (not burning a hart)
 *   t_p = (run - (W - S)) / e   compute per worker between synchronizations (the grain: F&R's t_p)
 *   t_w = W / e                 wait per episode (F&R's t_w: the imbalance a gang spins away)
 *
 * The rule and its models. Per window, the job's loss per synchronization episode where it is is compared
 * with what it would lose elsewhere:
 *   - No barrier episode in the window: fill. A job that does not synchronize loses nothing to being
 *     time-shared (F&R: only synchronizing gangs suffer uncoordinated scheduling; Blumofe & Papadopoulos:
 *     work stealing with yields runs well multiprogrammed), so it fills what the others leave.
 *   - A job in a partition with process control (adapt=yes) folds its workers onto as many processes as it
 *     has harts: a waiting worker hands its process to the next by a user-level switch, no process spins
 *     on a descheduled partner, and folding recovers the imbalance a gang would spin away - Markatos 3.5.3
 *     (partitions win on sublinear speedup, no cache corruption) and 3.6.2 (coscheduling pays only for
 *     "very fine-grain, linear-speedup" applications, where the two tie). A job whose share covers its
 *     processes runs dedicated. Either way a gang row could only add the other rows' time and the refills:
 *     such a job stays in part.
 *   - A job that cannot fold (adapt=no) and has fewer harts than processes time-shares them: each episode
 *     it loses t_w to partners that are not running (F&R eq. 8 when it spins), where blocking would lose
 *     omega = alpha tau_s, the block + cross-hart wake the calibration measured (sched_wake_cost_ns: 2
 *     syscalls + 2 switches + an IPI; eq. 12). When t_w > omega, a gang row (eq. 6: all partners run, only
 *     the job's own imbalance is lost) is worth it: gang.
 *   - In a gang row the job loses gang_loss = t_w + t_p R / tau_q per episode: its imbalance spun away and,
 *     after every other slot, the refill of the private cache the other rows corrupted (Tucker & Gupta's
 *     cause 4: R = the machine model's lines x miss cycles, sched_reload_cost_ns; 0 without a model; R /
 *     tau_q of its compute). When gang_loss > omega, blocking in a partition loses less (F&R's crossover,
 *     eqs. 15/16: gang + spin wins while t_w is below alpha tau_s): part. When t_w > t_p the imbalance is
 *     the job's own (F&R: blocking then beats spinning): it leaves and never comes back (sticky, so it
 *     cannot cycle). A job of more processes than harts is never gang (a gang cannot exceed H: F&R), nor
 *     any job on one hart.
 *   Each job remembers the loss it last measured in gang and in part, and returns to a regime only if that
 *   loss was higher than what it loses now (by the margin): a job that loses in both settles in the lesser
 *   instead of cycling. An arrival or departure forgets the memories (the mix, and so the losses, changed).
 *   The grain enters through t_w (an imbalance grows with the work between barriers) and the refill term.
 * Hysteresis. A move needs the comparison past the threshold by margin= percent (t_w > omega (1+m) to
 * enter gang, gang_loss > omega (1+m) to leave it) in confirm= consecutive windows with evidence; the
 * count restarts after every move, and the window after a move is skipped (it straddles two regimes and
 * process control's reaction), so a job moves at most once per confirm= + 1 windows whatever its
 * measurements do. A window in which the job ran less than a quarter of a window, or whose statistics ran
 * backwards, carries no evidence either way. New jobs start in part (no interference, no spinning).
 *
 * Hostile statistics. The page is the job's to scribble on: each field is read once, deltas that run
 * backwards void the window, W is clamped to processes x window and S to W. Whatever it writes, a job can
 * only move itself between regimes, each of which gives it at most a fair share (one row of the round, or
 * a fair share of the SPACE slot), and at most once per confirm= windows.
 *
 * Explained. Every move is a trace event `regime J old arg` (arg: new | wait % << 2 | min(t_p us, 2^22-1)
 * << 9), on the Perfetto trace's "regime" track; RESULT adds regime= (the last), gang_us=, part_us=,
 * fill_us= (time in each) and regime_moves=.
 *
 * All state below is guarded by sched_lock.
 */
#include "runq.h"
#include "slots.h"
#include "allot.h"
#include "../info.h"
#include "../syncstat.h"

enum { OPT_WINDOW, OPT_CONFIRM, OPT_MARGIN }; /* index in adaptive_class.options */
enum regime { R_PART, R_GANG, R_FILL, NREGIMES };
static const char *const regime_name[NREGIMES] = { "part", "gang", "fill" };
#define SPACE (-1) /* cur_slot of the space-sharing slot */

struct ad_job {
    enum regime regime, cand;
    int streak, moves, demoted;
    int settle;       /* windows to skip: they straddle a move (process control still catching up) */
    int imbalanced;   /* the current candidate is part because of t_w > t_p in a gang row */
    uint64_t loss[NREGIMES]; /* its last loss per episode measured in gang and in part (0: none since the
                                mix last changed): it returns only to a regime that lost less */
    int row;          /* gang: its row */
    uint64_t cols;    /* gang: its columns, in process order */
    uint64_t mask;    /* part and fill: its harts in the SPACE slot */
    uint64_t since, in[NREGIMES];
    uint64_t exited_run;            /* run_ticks of its exited processes */
    uint64_t off;     /* ticks its processes waited for a hart after a preemption inside a wait */
    uint64_t run0, ep0, wait0, sleep0, off0; /* the last window's sums */
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

static struct ad_job *aj(struct job *j) { return &ajobs[j->id - 1]; }
static enum regime regime_of(const struct proc *p) { return ajobs[p->job->id - 1].regime; }
static int popc(uint64_t x) { int n = 0; for (; x; x &= x - 1) n++; return n; }
static uint64_t ns_ticks(uint64_t ns) { return ns * plat.timebase_hz / 1000000000UL; }

static void ad_init(void)
{
    slots_init(&table, ncpus, SLOT_FIT_FIRST);
    all_harts = ncpus == 64 ? ~0UL : (1UL << ncpus) - 1;
    idle_mask = all_harts;
    syncstat_enabled = 1;
    extern void ad_result(struct job *j, char *buf, unsigned long len);
    sched_result_extra = ad_result;
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
    if (a->regime == R_GANG) {
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
    } else if (a->regime == R_PART) {
        if (!(a->mask >> p->hart & 1)) {
            p->hart = pick_hart(p->job);
            p->job->nmigrate++;
        }
        runq_push_back(&q[p->hart], p);
        struct cpu *c = &cpus[p->hart];
        if (cur_slot == SPACE && c->cur && regime_of(c->cur) != R_PART)
            sched_preempt(c); /* its own share's slot: a hole's filler gives way */
        else
            sched_kick(p->hart);
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

static void publish(struct job *j)
{
    struct ad_job *a = aj(j);
    if (a->regime == R_GANG)
        info_set_allotment(j, popc(a->cols), a->cols);
    else if (a->regime == R_PART)
        info_set_allotment(j, popc(a->mask), a->mask);
    else
        info_set_allotment(j, ncpus, all_harts); /* filler: no process control */
}

/* Divide the harts among the part and fill jobs (allot.h) and move part processes onto their shares, but
   those of `skip` (a job being moved: its caller places them). */
static void repartition(struct job *skip)
{
    struct allot_job al[NJOB];
    struct job *sp[NJOB];
    int n = 0;
    for (int i = 0; i < nlive; i++)
        if (aj(live[i])->regime != R_GANG) {
            sp[n] = live[i];
            al[n++] = (struct allot_job){ .procs = live[i]->nprocs,
                                          .adaptive = live[i]->adaptive || aj(live[i])->regime == R_FILL,
                                          .prev = aj(live[i])->mask };
        }
    if (n)
        allot_compute(ncpus, al, n);
    fill_mask = 0;
    for (int i = 0; i < n; i++) {
        struct ad_job *a = aj(sp[i]);
        int changed = a->mask != al[i].mask;
        a->mask = al[i].mask;
        if (a->regime == R_FILL)
            fill_mask |= a->mask;
        if (changed) {
            publish(sp[i]);
            trace_rec(mycpu()->id, TR_REP, sp[i]->id, 0, al[i].count);
        }
        if (a->regime != R_PART || sp[i] == skip)
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

static void move(struct job *j, enum regime to, uint64_t tp_us, int wait_pct)
{
    struct ad_job *a = aj(j);
    enum regime from = a->regime;
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
    a->regime = to;
    a->moves++;
    a->streak = 0;
    a->settle = 1;
    a->demoted |= from == R_GANG && to == R_PART && a->imbalanced;
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

/* One window of job j: its candidate regime, or -1 when the window carries no evidence. */
static int judge(struct job *j, uint64_t wticks, uint64_t *tp_us, int *wait_pct)
{
    struct ad_job *a = aj(j);
    volatile struct sl_sync *st = syncstat_of(j);
    if (!st)
        return -1;
    uint64_t run = a->exited_run, wt = 0, sl = 0;
    uint32_t ep = 0; /* counts wrap: their deltas are taken modulo 2^32 */
    uint64_t now = rdtime();
    for (int i = 0; i < j->nprocs; i++) {
        struct proc *p = members[j->id - 1][i];
        if (p) /* run_ticks covers a running process's time up to its dispatch only */
            run += p->run_ticks + (p->state == P_RUNNING && now > p->dispatched_at ? now - p->dispatched_at : 0);
        ep += st[i].episodes; /* each field read once: the job may be rewriting it */
        wt += st[i].wait_ticks;
        sl += st[i].sleep_ticks;
    }
    int back = wt < a->wait0 || sl < a->sleep0 || run < a->run0;
    uint64_t drun = run - a->run0, dep = (uint32_t)(ep - (uint32_t)a->ep0), dwt = wt - a->wait0, dsl = sl - a->sleep0;
    uint64_t doff = a->off - a->off0;
    a->run0 = run, a->ep0 = ep, a->wait0 = wt, a->sleep0 = sl, a->off0 = a->off;
    if (back || drun < wticks / 4 || a->settle) {
        a->settle = 0;
        return -1;
    }
    uint64_t cap = (uint64_t)j->nprocs * wticks;
    dwt = MIN(dwt, cap);
    dsl = MIN(dsl, dwt);
    doff = MIN(doff, dwt - dsl);
    dwt -= doff; /* on-hart waiting only */
    dep = MIN(dep, cap);
    if (dep == 0)
        return R_FILL;
    /* Folded (a part job running fewer processes than workers): a waiting worker first runs the others of
       its process, so its wait holds their compute, not spinning - t_w cannot be told apart, and the run
       time is compute (an upper bound of it) */
    int folded = a->regime == R_PART && j->adaptive && popc(a->mask) < j->nprocs;
    uint64_t spin = folded ? 0 : dwt - dsl, compute = drun > spin ? drun - spin : 0;
    uint64_t tp = compute / dep, tw = folded ? 0 : dwt / dep, m = 100 + (uint64_t)sched_opt[OPT_MARGIN];
    *tp_us = tp * 1000000 / plat.timebase_hz;
    *wait_pct = (int)(tw * 100 / (tp + tw + 1));
    /* Losses per episode (the header's rule): a gang row's is t_w + t_p R / tau_q; a partition's is what
       the job measures there now, t_w, against omega, the block + wake it could pay instead. */
    uint64_t omega = ns_ticks(sched_wake_cost_ns());
    uint64_t gang_loss = tw + tp * ns_ticks(sched_reload_cost_ns()) / (sched_quantum + 1);
    if (a->regime == R_GANG) {
        a->imbalanced = tw * 100 > tp * m; /* its own imbalance: partitions recover it (F&R 15/16, Markatos 3.6.2) */
        a->loss[R_GANG] = gang_loss;
        int worse = gang_loss * 100 > omega * m && (!a->loss[R_PART] || gang_loss * 100 > a->loss[R_PART] * m);
        return a->imbalanced || worse ? R_PART : R_GANG;
    }
    int timeshared = !j->adaptive && popc(a->mask) < j->nprocs;
    if (!timeshared || j->nprocs > ncpus || ncpus == 1 || a->demoted)
        return R_PART; /* folded or dedicated: a gang row can only add the other rows' time and refills */
    a->loss[R_PART] = tw;
    return tw * 100 > omega * m && (!a->loss[R_GANG] || tw * 100 > a->loss[R_GANG] * m) ? R_GANG : R_PART;
}

static void window_end(void)
{
    uint64_t wticks = (uint64_t)sched_opt[OPT_WINDOW] * sched_quantum;
    for (int i = 0; i < nlive; i++) {
        struct job *j = live[i];
        struct ad_job *a = aj(j);
        uint64_t tp_us = ~0UL;
        int wait_pct = 0, c = judge(j, wticks, &tp_us, &wait_pct);
        if (c < 0)
            continue;
        if (c == (int)a->regime) {
            a->streak = 0;
        } else if (c == (int)a->cand && a->streak > 0) {
            a->streak++;
        } else {
            a->cand = c;
            a->streak = 1;
        }
        if (a->streak >= sched_opt[OPT_CONFIRM])
            move(j, c, tp_us, wait_pct);
    }
}

/* ---- the round ---- */

static int runnable(const struct proc *p) { return p && (p->state == P_READY || p->state == P_RUNNING); }

static int slot_runnable(int s)
{
    if (s == SPACE) {
        if (fq.head)
            return 1;
        for (int h = 0; h < ncpus; h++)
            if (q[h].head)
                return 1;
        for (int i = 0; i < nlive; i++)
            if (aj(live[i])->regime != R_GANG)
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
        if (a->regime != R_PART || !(a->mask >> h & 1))
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
static struct proc *took(struct proc *p);
static struct proc *ad_pick_next(struct cpu *c) { return took(pick(c)); }

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

/* The mix changed: what each job lost where is no longer what it would lose there. */
static void forget_losses(void)
{
    for (int i = 0; i < nlive; i++)
        memset(aj(live[i])->loss, 0, sizeof aj(live[i])->loss);
}

static int ad_job_admit(struct job *j)
{
    struct ad_job *a = aj(j);
    memset(a, 0, sizeof *a);
    a->row = -1;
    a->regime = a->cand = R_PART;
    a->since = rdtime();
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
    nlive = k;
    forget_losses();
    if (a->regime == R_GANG && a->row >= 0)
        leave_gang(a);
    uint64_t end = j->end ? j->end : rdtime();
    a->in[a->regime] += end > a->since ? end - a->since : 0;
    a->since = end;
    a->mask = 0;
    repartition(0);
}

static void ad_proc_new(struct proc *p)
{
    struct ad_job *a = aj(p->job);
    members[p->job->id - 1][p->idx] = p;
    p->slot = -1;
    if (a->regime == R_GANG) {
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
    volatile struct sl_sync *st = syncstat_of(p->job);
    if ((how == ENQ_PREEMPT || how == ENQ_YIELD) && st && st[p->idx].in_wait)
        SCHED_PRIV(p, struct ad_proc)->off_since = rdtime();
    place_ready(p);
}

static struct proc *took(struct proc *p)
{
    struct ad_proc *ap = p ? SCHED_PRIV(p, struct ad_proc) : 0;
    if (ap && ap->off_since) {
        aj(p->job)->off += rdtime() - ap->off_since;
        ap->off_since = 0;
    }
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
    if (a->regime == R_GANG && p->slot >= 0 && matrix[p->slot][p->hart] == p) {
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
    if (++quanta % sched_opt[OPT_WINDOW] == 0)
        window_end();
    int nspace = 0;
    for (int i = 0; i < nlive; i++)
        nspace += aj(live[i])->regime != R_GANG;
    if (cur_slot == SPACE && ++space_quanta < nspace)
        ad_switch(TR_SLOT, 1); /* stay: the broadcast turns every hart's round robin */
    else
        ad_switch(TR_SLOT, 0);
}

static void ad_ipi(struct cpu *c) { ad_ack(c); }

/* RESULT's keys (syncstat.h sched_result_extra): the last regime and the time in each. */
void ad_result(struct job *j, char *buf, unsigned long len)
{
    struct ad_job *a = aj(j);
    uint64_t us[NREGIMES];
    for (int r = 0; r < NREGIMES; r++)
        us[r] = a->in[r] * 1000000 / plat.timebase_hz;
    snprintf(buf, len, "regime=%s gang_us=%lu part_us=%lu fill_us=%lu regime_moves=%d", regime_name[a->regime],
             us[R_GANG], us[R_PART], us[R_FILL], a->moves);
}

const struct sched_class adaptive_class = {
    .order = 5,
    .name = "adaptive",
    .options = { { "window", "", 4, "quanta per measurement window", 1, 100 },
                 { "confirm", "", 2, "consecutive windows past the threshold before a job moves", 1, 20 },
                 { "margin", "", 25, "hysteresis: percent past the threshold that counts", 0, 400 } },
    .one_timer = 1,
    .allots = 1,
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
};
SCHED_CLASS(adaptive_class);
