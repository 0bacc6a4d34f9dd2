/*
 * adround.c - policy=adaptive's machine (adaptive.c's header: "The machine"): where a ready process waits
 * - its gang entry, the queue of a hart of its share, or the filler FIFO - which process a hart runs in the
 * current slot, the SPACE slot's division into shares, and the round of slots switched by hart 0's
 * broadcast, and what a gang row would change for the SPACE slot's shares and quanta (ad_weigh_row, for
 * adrule.c's weighing). adaptive.c decides each job's regime and calls down into this file; this file never
 * decides one and never calls up (a job is told its new share through ad_repartition's hook). State: adaptive.h's
 * `ad` and the queues below, all guarded by sched_lock.
 */
#include "adaptive.h"
#include "../runq.h"
#include "../../syncstat.h"

static struct runq q[SL_MAX_HARTS]; /* READY part processes bound to each hart */
static struct runq fq;              /* READY filler processes */
static uint64_t fill_mask;          /* harts of the filler jobs' shares */
static uint64_t idle_mask;          /* harts with nothing of the current slot (all: switch early) */
static uint64_t switch_seq, acked_seq[SL_MAX_HARTS]; /* slot switches broadcast, and acted on per hart */

void ad_round_init(void) { idle_mask = ad.all_harts; }

/* ---- where a process waits ---- */

static int job_on_hart(struct job *j, int h)
{
    int n = 0;
    for (int i = 0; i < j->nprocs; i++)
        n += ad.members[j->id - 1][i] && ad.members[j->id - 1][i]->hart == h;
    return n;
}

/* The hart of j's share for one more process: fewest of j's there, then not this hart (it is busy creating
   the process: admitting the job, or running its creator, while another hart may be idle), then lowest. */
int ad_pick_hart(struct job *j)
{
    int best = -1, best_own = 0, me = mycpu()->id;
    for (int h = 0; h < ncpus; h++)
        if (aj(j)->mask >> h & 1) {
            int own = job_on_hart(j, h);
            if (best < 0 || own < best_own || (own == best_own && best == me))
                best = h, best_own = own;
        }
    return best < 0 ? 0 : best;
}

static int runnable(const struct proc *p) { return p && (p->state == P_READY || p->state == P_RUNNING); }

/* Where a part process that becomes ready waits (allot.h allot_wake_hart): its own hart, unless another
   runnable process of its job is there and a hart of its share has none. Process control resumes processes
   that slept bound where the job's others run now: when a share grew (another job left), they doubled up
   on a hart while the harts just gained stayed idle (partition levels every binding at each repartition for
   the same reason). A job with a
   runnable process on every hart of its share (time-sharing them) never moves. */
static int wake_hart(struct proc *p)
{
    uint64_t busy = 0;
    for (int i = 0; i < p->job->nprocs; i++) {
        struct proc *o = ad.members[p->job->id - 1][i];
        if (o != p && runnable(o) && o->hart >= 0)
            busy |= 1UL << o->hart;
    }
    int h = allot_wake_hart(aj(p->job)->mask, busy, p->hart);
    return h >= 0 ? h : ad_pick_hart(p->job);
}

/* Every idle hart looks at the filler FIFO again (one kicked hart may take something else first). */
static void kick_idle(void)
{
    for (int h = 0; h < ncpus; h++)
        if (!cpus[h].cur)
            sched_kick(h);
}

/* A READY p (on no queue) joins its regime's queue. */
void ad_place_ready(struct proc *p)
{
    struct ad_job *a = aj(p->job);
    if (a->rule.regime == R_GANG) {
        if (p->slot == ad.cur_slot) {
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
        if (ad.cur_slot == SPACE && c->cur && regime_of(c->cur) != R_PART)
            sched_preempt(c); /* its own share's slot: a hole's filler gives way */
        else
            sched_kick(p->hart);
        if (ad.cur_slot == SPACE && (c->cur || q[p->hart].head != p)) /* busy: an idle hart of its share pulls it */
            sched_kick_idle(a->mask & ~(1UL << p->hart));
        if (ad.cur_slot == SPACE)
            idle_mask &= ~(1UL << p->hart);
    } else {
        runq_push_back(&fq, p);
        if (ad.cur_slot == SPACE)
            idle_mask &= ~fill_mask;
        kick_idle();
    }
}

/* Take a READY p off whatever queue holds it. */
void ad_unqueue(struct proc *p)
{
    runq_remove(&fq, p);
    for (int h = 0; h < ncpus; h++)
        runq_remove(&q[h], p);
}

/* ---- the SPACE slot's division ---- */

/* What one more hart is worth to j (adrule.c ad_shape, from process 0's published units). */
static enum allot_shape shape_of(struct job *j, int *units)
{
    volatile struct sl_sync *st = syncstat_of(j, 0);
    return ad_shape(&aj(j)->rule, j->adaptive, j->nprocs, st ? st->units : 0, units);
}

/* Efficiency moves a share only when it changed by this much (per mille) since the share was set: a
   repartition moves processes, and a window's estimate is noisy. */
#define EFF_STEP 100

/* A job's shape, or its efficiency by EFF_STEP, changed since its share was computed: the shares are
   recomputed. */
int ad_shapes_changed(void)
{
    for (int i = 0; i < ad.nlive; i++) {
        struct ad_job *a = aj(ad.live[i]);
        int units;
        enum allot_shape sh = shape_of(ad.live[i], &units);
        int moved = a->rule.eff - a->eff_at > EFF_STEP || a->eff_at - a->rule.eff > EFF_STEP;
        if (a->rule.regime != R_GANG && (sh != a->shape || units != a->units || moved))
            return 1;
    }
    return 0;
}

/* The part and fill jobs into sp[] and their allotment requests into al[] (shape and units refreshed); how many. */
static int allot_requests(struct allot_job *al, struct job **sp)
{
    int n = 0;
    for (int i = 0; i < ad.nlive; i++)
        if (aj(ad.live[i])->rule.regime != R_GANG) {
            struct ad_job *a = aj(ad.live[i]);
            sp[n] = ad.live[i];
            a->shape = shape_of(ad.live[i], &a->units);
            a->eff_at = a->rule.eff;
            al[n++] = (struct allot_job){ .procs = ad.live[i]->nprocs,
                                          .adaptive = ad.live[i]->adaptive || a->rule.regime == R_FILL,
                                          .shape = a->shape, .units = a->units, .eff = a->rule.eff,
                                          .background = ad.live[i]->background, .prev = a->mask };
        }
    return n;
}

/* Part job j's processes off the harts its share `mask` no longer holds. */
static void off_lost_harts(struct job *j, uint64_t mask)
{
    for (int k = 0; k < j->nprocs; k++) {
        struct proc *p = ad.members[j->id - 1][k];
        if (!p || (mask >> p->hart & 1))
            continue;
        if (p->state == P_READY) {
            runq_remove(&q[p->hart], p);
            ad_place_ready(p); /* rebinds it */
        } else if (p->state == P_RUNNING) {
            sched_preempt(p->on_cpu); /* rebound when it is enqueued */
        }
    }
}

/* Divide the harts among the part and fill jobs (allot.h) and move part processes onto their shares, but
   those of `skip` (a job being moved: its caller places them). */
void ad_repartition(struct job *skip, void (*share_changed)(struct job *))
{
    struct allot_job al[NJOB];
    struct job *sp[NJOB];
    int n = allot_requests(al, sp);
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
            share_changed(sp[i]);
            trace_rec(mycpu()->id, TR_REP, sp[i]->id, 0, al[i].count);
        }
        if (a->rule.regime == R_PART && sp[i] != skip)
            off_lost_harts(sp[i], a->mask);
    }
}

/* ---- a row's cost to the SPACE slot's jobs ---- */

/* The rows in use, and whether job m (not in a row) would fit in the free entries of one of them. */
static int rows_used(const struct job *m, int *fits)
{
    int n = 0;
    *fits = 0;
    for (int r = 0; r < ad.table.nrows; r++)
        if (slots_used(&ad.table, r)) {
            n++;
            *fits |= ad.table.nfree[r] >= m->nprocs;
        }
    return n;
}

/* What job m in a gang row rather than in the SPACE slot does to the others' time and to its own (adrule.c
   ad_others_cost, returned, and ad_row_gain with rule state r, in *gain; per mille): the slot's shares with m
   in it and without (allot.h, as ad_repartition divides them), the quanta of the slot and of the round in each
   case (the slot lasts a quantum per job in it: adaptive.c ad_tick). Background jobs run until the others end,
   so their time is no cost. */
static long row_effect(struct job *m, const struct ad_rule *r, long *gain)
{
    static struct allot_job with[NJOB], without[NJOB]; /* off the stack: sched_lock guards them */
    static struct ad_other o[NJOB];
    struct job *sp[NJOB];
    int n = 0, k = 0, im = 0, fits;
    for (int i = 0; i < ad.nlive; i++) { /* arrival order, as ad_repartition: it breaks the allotment's ties */
        struct job *j = ad.live[i];
        struct ad_job *a = aj(j);
        if (j != m && a->rule.regime == R_GANG)
            continue;
        int units;
        enum allot_shape sh = shape_of(j, &units);
        with[n] = (struct allot_job){ .procs = j->nprocs, .shape = sh, .units = units, .eff = a->rule.eff,
                                      .adaptive = j->adaptive || (j != m && a->rule.regime == R_FILL),
                                      .background = j->background, .prev = a->mask };
        if (j == m)
            im = n;
        else
            sp[k] = j, without[k++] = with[n];
        n++;
    }
    allot_compute(ncpus, with, n);
    if (k)
        allot_compute(ncpus, without, k);
    int rows = rows_used(m, &fits), mine = aj(m)->rule.regime == R_GANG;
    int alone = mine && popc(ad.table.taken[aj(m)->row]) == popc(aj(m)->cols); /* its row holds only it */
    struct ad_round rd = { .space_p = k + 1, .round_p = rows - alone + k + 1,
                           .space_g = k, .round_g = rows + (!mine && !fits) + k };
    struct ad_mover mv = { .procs = m->nprocs, .harts = with[im].count, .own = n <= ncpus,
                           .quantum = sched_quantum, .omega = sched_wake_cost_ns() * plat.timebase_hz / 1000000000UL };
    *gain = ad_row_gain(r, &mv, &rd);
    int no = 0;
    for (int w = 0; w < k; w++)
        if (!sp[w]->background)
            o[no++] = (struct ad_other){ .part = with[w < im ? w : w + 1].count, .gang = without[w].count,
                                         .eff = aj(sp[w])->rule.eff, .eff_harts = aj(sp[w])->rule.eff_harts };
    return ad_others_cost(o, no, &rd);
}

int ad_weigh_row(struct job *m, struct ad_rule *r, int c, int margin)
{
    long gain = 0, cost = c == R_GANG ? row_effect(m, r, &gain) : 0;
    return ad_weigh(r, c, cost, gain, margin);
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
        for (int i = 0; i < ad.nlive; i++)
            if (aj(ad.live[i])->rule.regime != R_GANG)
                for (int k = 0; k < ad.live[i]->nprocs; k++)
                    if (runnable(ad.members[ad.live[i]->id - 1][k]))
                        return 1;
        return 0;
    }
    for (int h = 0; h < ncpus; h++)
        if (runnable(ad.matrix[s][h]))
            return 1;
    return 0;
}

/* The slot after s in the round: the used rows in order, then SPACE. */
static int next_slot(int s)
{
    int r = slots_next_used(&ad.table, s == SPACE ? -1 : s);
    if (s == SPACE)
        return r >= 0 ? r : SPACE;
    return r < 0 || r <= s ? SPACE : r;
}

/* Hart c acts on the latest switch: it leaves a process that is not of the current slot, and at every
   quantum a part or filler process gives its hart to the next in its queue (round robin). */
void ad_ack(struct cpu *c)
{
    if (acked_seq[c->id] == switch_seq)
        return;
    acked_seq[c->id] = switch_seq;
    trace_rec(c->id, TR_ACK, 0, -1, ad.cur_slot);
    struct proc *p = c->cur;
    if (!p)
        return;
    if (ad.cur_slot >= 0) {
        if (p != ad.matrix[ad.cur_slot][c->id])
            sched_preempt(c);
    } else if (regime_of(p) == R_GANG || q[c->id].head ||
               (fq.head && ((fill_mask >> c->id & 1) || regime_of(p) == R_FILL))) {
        sched_preempt(c);
    }
}

/* Switch to the next slot with something runnable (or stay); always broadcast, so every hart's round
   robin turns with the quantum. A row a job has just entered (row_next) comes first: the job moved there
   because it loses where it was, and waiting out the round behind the SPACE slot's quanta would lose it what
   the move gains. The round then goes on where it was left - a SPACE slot cut
   short comes back (its quanta anew), a row ended its quantum - so no other slot loses its turn, and the
   early turn takes the place of the row's next regular one (row_early), so the row gains none: every slot
   has one turn per round (two jobs that take rows at their admission while another row runs must not give
   the second row two quanta in a row while the SPACE slot waits for both). */
void ad_switch(enum trace_ev why, int stay)
{
    int s = ad.cur_slot;
    if (ad.row_next >= 0 && ad.row_next != ad.cur_slot && slot_runnable(ad.row_next)) {
        s = ad.row_next;
        if (ad.cur_slot == SPACE)
            ad.round_at = ad.table.nrows - 1; /* the maximal used row (slots.h): SPACE follows it */
        else
            ad.row_early[s] = 1;
    } else if (!stay) {
        int from = ad.round_at;
        for (int k = 0; k <= 2 * (ad.table.nrows + 1); k++) { /* twice round: row_early skips cleared */
            from = next_slot(from);
            if (from != SPACE && ad.row_early[from]) {
                ad.row_early[from] = 0; /* its turn this round was the early one */
                continue;
            }
            if (slot_runnable(from)) {
                s = from;
                break;
            }
        }
        if (why == TR_EARLY && s == ad.cur_slot)
            return;
        ad.round_at = s;
    }
    ad.row_next = -1;
    struct cpu *me = mycpu();
    if (s != ad.cur_slot)
        ad.space_quanta = 0;
    ad.cur_slot = s;
    switch_seq++;
    idle_mask = 0;
    trace_rec(me->id, why, 0, -1, s);
    sched_restart_tick(0);
    sched_ipi(ad.all_harts & ~(1UL << me->id));
    ad_ack(me);
}

/* A row entered at an admission runs at once, not after the SPACE slot's quanta. The job's first process is
   created after its admission, so the row is empty then: row_next stays pending until that process's first
   enqueue (switching at the admission would find the row empty and stay in SPACE). */
void ad_run_row_next(void)
{
    if (ad.row_next >= 0 && ad.cur_slot == SPACE && slot_runnable(ad.row_next))
        ad_switch(TR_SLOT, 0);
}

void ad_mark_idle(int h)
{
    idle_mask |= 1UL << h;
    if (idle_mask == ad.all_harts)
        ad_switch(TR_EARLY, 0);
}

/* A ready part process of a job whose share holds hart h, waiting on another hart of that share that is busy
   (an idle one was kicked and runs it itself: taking it would pile the job's processes on the fastest
   waker's hart, where they stay bound). */
static struct proc *pull_from_share(int h)
{
    for (int i = 0; i < ad.nlive; i++) {
        struct ad_job *a = aj(ad.live[i]);
        if (a->rule.regime != R_PART || !(a->mask >> h & 1))
            continue;
        for (int o = 0; o < ncpus; o++)
            for (struct proc *p = o != h && (a->mask >> o & 1) && cpus[o].cur ? q[o].head : 0; p; p = p->rq_next)
                if (p->job == ad.live[i]) {
                    runq_remove(&q[o], p);
                    p->hart = h;
                    ad.live[i]->nmigrate++;
                    return p;
                }
    }
    return 0;
}

struct proc *ad_pick(struct cpu *c)
{
    for (int tries = 0; tries < 2; tries++) {
        struct proc *p = 0;
        if (ad.cur_slot >= 0) {
            p = ad.matrix[ad.cur_slot][c->id];
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
        int before = ad.cur_slot;
        ad_mark_idle(c->id); /* may switch early */
        if (ad.cur_slot == before)
            break;
    }
    /* a hole: filler only - a process of a synchronizing job (gang or part) would run without its partners
       and spin or block on them (uncoordinated: F&R eq. 8) */
    return runq_pop(&fq);
}
