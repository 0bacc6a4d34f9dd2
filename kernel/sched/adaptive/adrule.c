/*
 * adrule.c - policy=adaptive's rule (adrule.h; the regimes' mechanics are adaptive.c and adround.c): from
 * one window of a job's statistics, its grain t_p and wait per episode t_w, the loss per episode where it
 * is against the loss elsewhere, and the hysteresis. Pure arithmetic, host-tested (tests/host/test_adrule.c).
 * What the rules were measured against, build by build, is docs/notes/adaptive-history.md.
 *
 * Measurement (per job, every window= quanta, on hart 0's tick). The kernel counts each process's run time
 * (run_ticks) itself; spinning is invisible to it, so the library publishes per process, in the job's sync
 * statistics page (abi.h struct sl_sync, syncstat.h): barrier episodes, waits and ticks waited; the part
 * of them asleep is the kernel's own count (the time a process blocked while its record said it was inside a
 * wait: admeasure.c ad_asleep). Over the window, summed over the job's processes:
 *   e   = episodes (worker barrier arrivals, and the idle streaks of placed threads: a process out of threads
 *         waits for its partners; lib/threads/uthread.c)   W = ticks waited, S = of those asleep
 *   Y   = yields inside waits (the kernel's count: SYS_yield while the record is in a wait; an idle thread
 *         process yields its hart every few failed polls, lib/threads/uthread.c pause_vp)
 *   t_p = (run - (W - S)) / e   compute per worker between synchronizations (the grain: F&R's t_p)
 *   t_w = W / e                 wait per episode (F&R's t_w: the imbalance a gang spins away)
 *   omega = alpha tau_s         a block + cross-hart wake, as the calibration measured it
 *                               (sched_wake_cost_ns: 2 syscalls + 2 switches + an IPI; F&R eq. 12)
 *
 * The rules, one function each below, in the order ad_judge applies them:
 *   evidence       a window counts only when its sums ran forwards, the job ran a quarter of it, and it
 *                  does not straddle a move (window_of);
 *   start-up       a prior's guess is not judged on its workers' start barrier (startup);
 *   no sync        a job without barrier episodes fills holes of gang rows, else holds a share (unsynced);
 *   the grain      t_p and t_w, a folded job's waits counted as compute (grain_of);
 *   in a gang row  leave for part when blocking there loses less (F&R's crossover), or for good on the
 *                  job's own imbalance (in_gang, with asleep, part_lesser, own_imbalance); and note whether
 *                  its waits yield (yield_spin: what the weighing guesses time-sharing costs it);
 *   in part        enter a gang row when time-sharing harts it cannot fold onto loses more than a block +
 *                  wake per episode (F&R eq. 8 against eq. 6) (in_part, with may_gang, part_loss).
 * Before those, every window with evidence in part or fill gives the job's efficiency (efficiency: the share
 * of its held hart time that was progress), which weights where spare harts go and never decides a regime.
 * Each job remembers the loss it last measured in gang and in part, and returns to a regime only if that
 * loss was higher than what it loses now (by the margin): a job that loses in both settles in the lesser
 * instead of cycling. An arrival forgets the memories (the losses may have grown: adaptive.c forget_losses).
 *
 * Hysteresis (ad_confirm). A move needs the comparison past the threshold by margin= percent in confirm=
 * consecutive windows with evidence - or in one window when the loss is past omega decisive= times
 * (decisive): a job on the threshold is noise to filter, one that loses many block-and-wakes per episode is
 * not, and every window it waits costs it most. The count restarts after every move, and the window after
 * a move is skipped (it straddles two regimes and process control's reaction), so a job moves at most once
 * per confirm= + 1 windows whatever its measurements do. New jobs start in part (no interference, no
 * spinning), and every quantum of their first window that window so far is judged too (adaptive.c probe): a
 * decisive loss moves them then, anything else waits for the window's end.
 *
 * The prior (prior=gang, the default; ad_prior_gang). A job with no judged window yet that cannot fold and
 * would time-share (adapt=no, fewer harts than processes, a row can hold it) goes to a gang row at once: by
 * F&R eq. 8 it would lose its partners' quanta time-sharing if it synchronizes, and coscheduled it loses
 * nothing if it does not (the same hart time; no episodes take it to fill or part after a window). Such a
 * job (primed) has never measured part, so it leaves its row only for a part it has measured to lose less,
 * or when its waits sleep and its share there would be its own - or when it stops synchronizing. Its row
 * being a guess, it is probed every quantum and as soon as a process of it sleeps inside a wait (adaptive.c
 * probe_guess), and its first evidence moves it with no confirmation and no margin: a guess has no measured
 * choice behind it for the hysteresis to keep. prior=part measures it in part first (probed every quantum).
 *
 * The others' cost (ad_weigh, with ad_others_cost and ad_row_gain). A job's gang row takes a quantum of the
 * round from the SPACE slot's jobs as well as giving one to the job, so a move into a row, or a stay in one, is
 * judged by its effect on every job in one unit: the relative change of each job's time, from its rate of
 * progress - quanta a round x its speed on the harts it holds. With n other jobs in the SPACE slot and R rows,
 * a job k there holds c_k^p harts for n + 1 quanta of a round of R + n + 1 while the mover shares the slot,
 * and c_k^g >= c_k^p for n quanta of R' + n while the mover has a row (R' = R + 1 for a row of its own, the
 * same hart time; R when it fits in another row's free entries). The row costs it rate_p / rate_g - 1 of its
 * time: on more harts for fewer quanta, the same hart time costs it only through its speedup - nothing if
 * linear, the more the more sublinear (Markatos 3.5.3: partitions win because applications use fewer
 * processors better; McCann, Vaswani and Zahorjan 1993: processors go where the jobs' measured efficiency says
 * they are used). A speed S(h) is read from the job's measured efficiency E on the harts it held through
 * Amdahl's law, E(h) = 1 / (1 + s (h - 1)) with s fitted at the measured point (ad_speed); unmeasured, linear.
 * The mover's own rate in its row is its processes' harts for one quantum at its row's efficiency (t_p /
 * (t_p + t_w): a gang spins only its imbalance, F&R eq. 6), and in the slot its share for n + 1 quanta at its
 * efficiency measured there - or, never measured there since the mix changed (the prior's guess), its row's
 * efficiency extrapolated to the share and divided by what time-sharing harts it cannot fold onto loses
 * (timeshare_factor: F&R eqs. 8, 12 and 13; Tucker & Gupta: more processes than processors lose to
 * preempted partners). Its gain is 1 - rate_p / rate_g. To first order the mean slowdown falls when the
 * mover's gain exceeds the sum of the others' costs: a row is entered only when it does, and kept only while
 * the cost is not past the gain, each by the margin= (percent of the other side), so a job between the two
 * does not cycle. A guessed row that loses is left at once, as the prior's rules leave one.
 *
 * Shape (ad_shape, for allot.h). A job's speedup signal: rounds of its published units once a window has
 * shown its episodes, its processes for adapt=no, else linear; it sets where the spare harts of the space
 * slot go (adaptive.c's header), never a job's regime.
 *
 * Hostile statistics. The page is the job's to scribble on: each field is read once, deltas that run
 * backwards void the window, W is clamped to processes x window and S to W. Whatever it writes, a job can
 * only move itself between regimes, each of which gives it at most a fair share (one row of the round, or
 * a fair share of the SPACE slot), and at most once per two windows. Its units only decide where spare
 * harts go - at most one beyond its equal share (the remainder), or harts a rounds job would not use - and
 * are read when shares are recomputed (a window's end, an arrival or departure, a move): rewriting them
 * moves spare harts at most once a window between those. Its efficiency, from the same clamped window, only
 * ranks it for those same spare harts: understating its waits wins it at most the remainder's one hart. In
 * the others' cost it can only make another job's row look dearer or cheaper: that job then time-shares or
 * is coscheduled, either of which is still a fair share of the round, and the liar's own share is the same.
 * Its yields are the kernel's count, inside a wait by the page's word: a job that yields inside claimed waits
 * only makes its own row look cheaper to leave.
 */
#include "adrule.h"

static uint64_t min_u(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* One window's deltas of a job's sums, clamped (hostile statistics: the header). */
struct window {
    uint64_t run;      /* its processes' run time */
    uint64_t wait;     /* W on its harts: ticks waited, less the time off its harts inside waits */
    uint64_t wait_off; /* W with the time its processes waited off their harts inside waits */
    uint64_t sleep;    /* S: of W, asleep */
    uint64_t idle;     /* its own share's harts idle */
    uint64_t episodes; /* e */
    uint64_t yields;   /* Y: yields inside waits */
};

/* The grain and the losses a window shows (F&R's t_p and t_w; gang_loss; m = 100 + margin=). */
struct grain {
    uint64_t tp, tw, gang_loss, m;
};

/* Rule: a loss per episode past omega decisive= times moves a job in one window (the hysteresis; 0 or no
   omega: never). Filtering is for a job near the threshold; one far past it loses most while it waits. */
static int decisive(const struct ad_env *e, uint64_t loss)
{
    return e->decisive && e->omega && loss > e->omega * (uint64_t)e->decisive;
}

/* It time-shares harts it cannot fold onto: adapt=no, fewer harts than processes. */
static int timeshares(int adaptive, int harts, int nprocs) { return !adaptive && harts < nprocs; }

/* Folded: an adapt=yes job on fewer harts than processes runs several workers per process. */
static int folded(int adaptive, int harts, int nprocs) { return adaptive && harts < nprocs; }

int ad_reads_waits(enum ad_regime regime, int adaptive, int harts, int nprocs)
{
    if (regime == R_GANG)
        return 1;
    return regime == R_PART ? !folded(adaptive, harts, nprocs) : timeshares(adaptive, harts, nprocs);
}

/* Rule (evidence): a window whose sums ran backwards, in which the job ran less than a quarter of the window,
   or which straddles a move (settle) carries no evidence either way: 0. Else 1 and its deltas clamped - W to
   processes x window, S to W, the time off the harts to what is not asleep, e to processes x window. The
   window's sums become the next window's start either way. */
static int window_of(struct ad_rule *r, const struct ad_sums *now, const struct ad_env *e, struct window *w)
{
    const struct ad_sums *o = &r->last;
    int back = now->wait < o->wait || now->sleep < o->sleep || now->run < o->run || now->off < o->off ||
               now->idle < o->idle || now->yields < o->yields;
    uint64_t drun = now->run - o->run, dwt = now->wait - o->wait, dsl = now->sleep - o->sleep;
    uint64_t didle = min_u(now->idle - o->idle, (uint64_t)e->harts * e->wticks);
    uint64_t dep = (uint32_t)(now->episodes - o->episodes), doff = now->off - o->off;
    uint64_t dyield = now->yields - o->yields;
    r->last = *now;
    r->decisive = 0;
    if (back || drun < e->wticks / 4 || r->settle) {
        r->settle = 0;
        return 0;
    }
    uint64_t cap = (uint64_t)e->nprocs * e->wticks;
    dwt = min_u(dwt, cap);
    dsl = min_u(dsl, dwt);
    doff = min_u(doff, dwt - dsl);
    *w = (struct window){ .run = drun, .wait = dwt - doff, .wait_off = dwt, .sleep = dsl, .idle = didle,
                          .episodes = min_u(dep, cap), .yields = dyield };
    return 1;
}

/* Rule (start-up): a prior's row not judged yet ignores a window of no more episodes than processes - the
   workers' start barrier is no grain, and its processes wait out a serial set-up there - or, judged early
   (at its first waits that sleep, just past its first barriers), of no more than EARLY_EPISODES per process:
   a few episodes past the start show no imbalance yet. */
static int startup(const struct ad_rule *r, const struct ad_env *e, uint64_t episodes)
{
    return r->primed && !r->judged && episodes <= (uint64_t)e->nprocs * (e->early ? EARLY_EPISODES : 1);
}

/* Rule (no sync): a job with no barrier episode in the window loses nothing to being time-shared (F&R: only
   synchronizing gangs suffer uncoordinated scheduling; Blumofe & Papadopoulos: work stealing with yields
   runs well multiprogrammed), so it fills the holes another job's gang row leaves - entries no process of
   it holds, or processes asleep inside waits (FCS's filler; adaptive.c holes_besides). With no holes a
   filler gains nothing, and the filler FIFO shares its harts by processes, not jobs: it holds a fair share
   of its own in part. */
static int unsynced(const struct ad_env *e) { return e->holes ? R_FILL : R_PART; }

/* Rule (the grain): t_p = (run - spinning) / e and t_w = W / e on the harts, and a gang row's loss per
   episode, gang_loss = t_w + t_p R / tau_q: its imbalance spun away and, after every other slot, the refill
   of the private cache the other rows corrupted (Tucker & Gupta's cause 4: R = the machine model's lines x
   miss cycles, sched_reload_cost_ns; 0 without a model). Folded (a part job running fewer processes than
   workers: adapt=yes on fewer harts than processes), a waiting worker first runs the others of its process,
   so its wait holds their compute, not spinning: t_w cannot be told apart, and the run time is compute (an
   upper bound of it). */
static void grain_of(const struct ad_rule *r, const struct ad_env *e, const struct window *w, struct grain *g)
{
    int fold = r->regime == R_PART && folded(e->adaptive, e->harts, e->nprocs);
    uint64_t spin = fold ? 0 : w->wait - w->sleep, compute = w->run > spin ? w->run - spin : 0;
    g->tp = compute / w->episodes;
    g->tw = fold ? 0 : w->wait / w->episodes;
    g->m = 100 + (uint64_t)e->margin;
    g->gang_loss = g->tw + g->tp * e->reload / (e->quantum + 1);
}

/* Rule (waits that sleep): most of the waiting asleep, or what is not asleep within a block + wake per
   episode - a short blocking wait is about half its own block and wake. */
static int asleep(const struct ad_env *e, const struct window *w)
{
    return w->sleep * 2 > w->wait || (w->sleep && w->wait - w->sleep <= e->omega * w->episodes);
}

/* Rule (waits that yield): a waiter that yields its hart inside the wait (Y: a thread program's idle process,
   lib/threads/uthread.c, yields every few failed polls) holds it at most until its next yield. In a gang row
   the yield comes straight back - its column has nothing else of the slot - so its time off the hart does not
   show it, and the wait reads as spinning; the kernel's count of those yields tells it apart. Its waits yield
   when there is a yield per episode or more (most waits reach one); a wait then holds its hart for the spin
   per yield, (W - S) / Y, at most the wait itself: the result, at least 1 tick. 0: they do not yield. Only
   the weighing reads it (timeshare_factor), where the share the job would time-share is known. */
static uint64_t yield_spin(const struct window *w, const struct grain *g)
{
    if (!w->yields || w->yields < w->episodes)
        return 0;
    uint64_t s = min_u((w->wait - w->sleep) / w->yields, g->tw);
    return s ? s : 1;
}

/* Rule (part is the lesser loss): with a memory of part, part loses less when the row's loss is past it by
   the margin. With none, part is taken for the lesser - except by a job that came by the prior and cannot
   fold: it has never measured part, where time-sharing would lose its partners' quanta (F&R eq. 8), unless
   its waits sleep and its share there would be its own (its partners take its hart while it sleeps; on a
   hart shared with another job, that job's processes would take it for whole quanta). */
static int part_lesser(const struct ad_rule *r, const struct ad_env *e, const struct window *w,
                       const struct grain *g)
{
    if (r->loss[R_PART])
        return g->gang_loss * 100 > r->loss[R_PART] * g->m;
    return e->adaptive || !r->primed || (asleep(e, w) && e->own_share);
}

/* Rule (its own imbalance): t_w past t_p is the job's own imbalance, where blocking beats spinning (F&R eqs.
   15/16) - past a block + wake too (below omega spinning wins whatever the grain), and only where part is
   the lesser loss. It is a sticky reason to leave (adrule.h demoted: it never returns, so it cannot cycle). */
static int own_imbalance(const struct ad_env *e, const struct grain *g, int lesser)
{
    return g->tw * 100 > g->tp * g->m && g->tw * 100 > e->omega * g->m && lesser;
}

/* Rule (in a gang row): leave for part when the row loses more than a block + wake per episode by the
   margin (F&R's crossover, eqs. 15/16: gang + spin wins while t_w is below alpha tau_s) and part is the
   lesser loss, or on its own imbalance. The prior's guess has no measured choice behind it: its first
   evidence counts with no margin and moves it at once; an imbalance otherwise waits for confirmation. */
static int in_gang(struct ad_rule *r, const struct ad_env *e, const struct window *w, const struct grain *g,
                   int guess)
{
    int lesser = part_lesser(r, e, w, g);
    int worse = g->gang_loss * 100 > e->omega * (guess ? 100 : g->m) && lesser;
    r->imbalanced = own_imbalance(e, g, lesser);
    r->loss[R_GANG] = g->gang_loss;
    r->eff_row = g->tp + g->tw ? (int)(g->tp * 1000 / (g->tp + g->tw)) : 1000;
    r->eff_row = r->eff_row < EFF_FLOOR ? EFF_FLOOR : r->eff_row;
    r->cycle = g->tp + g->tw;
    r->row_sleeps = asleep(e, w);
    r->row_yield = yield_spin(w, g);
    r->decisive = worse && (!r->imbalanced || r->primed) && (decisive(e, g->gang_loss) || guess);
    return r->imbalanced || worse ? R_PART : R_GANG;
}

/* Rule (a row can help): only a job that time-shares harts it cannot fold onto, on more than one hart, with
   no more processes than harts (a gang cannot exceed H: F&R), and not demoted for its own imbalance. A job
   in a partition with process control folds its workers onto its harts - no process spins on a descheduled
   partner, and folding recovers the imbalance a gang would spin away (Markatos 3.5.3: partitions win on
   sublinear speedup; 3.6.2: coscheduling pays only for very fine-grain, linear-speedup applications, where
   the two tie) - and a job whose share covers its processes runs dedicated: either way a gang row could
   only add the other rows' time and the refills. */
static int may_gang(const struct ad_rule *r, const struct ad_env *e)
{
    return timeshares(e->adaptive, e->harts, e->nprocs) && e->nprocs <= e->ncpus && e->ncpus > 1 &&
           !r->demoted;
}

/* Rule (the loss time-sharing): a wait lasts until the partner it waits for has run (F&R eq. 8), so the
   whole wait is loss, the time off its hart inside it too (a waiter that yields queues behind every other
   process of its hart). On a share of its own (no other job's processes on its harts) a waiter asleep or
   queued leaves the hart to its partners: there the loss is its spinning and the share's harts idling
   (admeasure.c ad_share_idle). */
static uint64_t part_loss(const struct ad_env *e, const struct window *w)
{
    return (e->own_share ? w->wait - w->sleep + w->idle : w->wait_off) / w->episodes;
}

/* Rule (in part): a gang row (F&R eq. 6: all partners run, only the job's own imbalance is lost) is worth it
   when time-sharing loses more than a block + wake per episode (F&R eq. 12: what blocking would lose) by the
   margin, and more than it lost in its row when it was last there. */
static int in_part(struct ad_rule *r, const struct ad_env *e, const struct window *w, const struct grain *g)
{
    if (!may_gang(r, e))
        return R_PART;
    uint64_t loss = part_loss(e, w);
    r->loss[R_PART] = loss;
    int gang = loss * 100 > e->omega * g->m && (!r->loss[R_GANG] || loss * 100 > r->loss[R_GANG] * g->m);
    r->decisive = gang && decisive(e, loss);
    return gang ? R_GANG : R_PART;
}

/* Rule (efficiency: the speedup signal). The share of the hart time a job held in the space slot that was
   progress: held = its run time + its own share's idle time, lost = the share's idle time + what its processes
   spent in waits on their harts - a barrier's or a condition's spin, or a stealing process with no ready
   thread (lib/threads/uthread.c: published as a wait) - but asleep (a sleeper leaves its hart: idle time if
   nothing of the job runs there). Folded, a wait runs the process's other workers (its library's switch) and
   counts nothing: only the idle time is lost (Tucker & Gupta: process control leaves no process waiting on a
   descheduled one). The equipartition literature's signal (McCann, Vaswani and Zahorjan 1993: a job's harts
   that idle are better used by another; Brecht and Guha 1996: efficiency, not the count of processes, says
   which job gains most from a processor), read per window; Markatos 3.5.3's sublinear speedup is what it
   shows. It only weights where spare harts go (allot.h .eff), never a regime. */
static void efficiency(struct ad_rule *r, const struct ad_env *e, const struct window *w)
{
    if (r->regime == R_GANG)
        return;
    uint64_t spin = folded(e->adaptive, e->harts, e->nprocs) ? 0 : min_u(w->wait - w->sleep, w->run);
    uint64_t held = w->run + w->idle, lost = spin + w->idle;
    if (held)
        r->eff = (int)((held - min_u(lost, held)) * 1000 / held);
    if (r->eff < EFF_FLOOR)
        r->eff = EFF_FLOOR;
    r->eff_harts = e->harts;
}

int ad_judge(struct ad_rule *r, const struct ad_sums *now, const struct ad_env *e, uint64_t *tp_us, int *wait_pct)
{
    struct window w;
    if (!window_of(r, now, e, &w))
        return -1;
    efficiency(r, e, &w);
    if (startup(r, e, w.episodes))
        return -1;
    int guess = r->primed && !r->judged; /* the first evidence on the prior's guess */
    r->judged = 1;
    r->syncs |= w.episodes > 0;
    if (w.episodes == 0)
        return unsynced(e);
    struct grain g;
    grain_of(r, e, &w, &g);
    *tp_us = e->timebase_hz ? g.tp * 1000000 / e->timebase_hz : 0;
    *wait_pct = (int)(g.tw * 100 / (g.tp + g.tw + 1));
    return r->regime == R_GANG ? in_gang(r, e, &w, &g, guess) : in_part(r, e, &w, &g);
}

int ad_prior_gang(const struct ad_rule *r, int adaptive, int harts, int nprocs, int ncpus)
{
    return r->regime == R_PART && !r->judged && !r->moves && timeshares(adaptive, harts, nprocs) &&
           nprocs <= ncpus && ncpus > 1;
}

/* A job whose workers meet at barriers and are a fixed number of pinned workers (the library's units) runs each
   step in ceil(units / harts) rounds: a hart that takes no round off is worth nothing to it (Markatos's z-rule
   argument). Stealing threads, workers that never meet and fillers speed up with every hart. */
enum allot_shape ad_shape(const struct ad_rule *r, int adaptive, int nprocs, uint32_t published, int *units)
{
    *units = !adaptive ? nprocs : published < (uint32_t)nprocs ? (int)published : nprocs;
    if (r->regime == R_FILL || *units == 0 || (adaptive && !r->syncs)) {
        *units = 0;
        return ALLOT_LINEAR;
    }
    return ALLOT_ROUNDS;
}

int ad_confirm(struct ad_rule *r, int c, int confirm)
{
    if (c < 0)
        return 0;
    if (c == (int)r->regime) {
        r->streak = 0;
        return 0;
    }
    if (c == (int)r->cand && r->streak > 0) {
        r->streak++;
    } else {
        r->cand = (enum ad_regime)c;
        r->streak = 1;
    }
    return r->streak >= confirm || r->decisive;
}

void ad_moved(struct ad_rule *r, enum ad_regime from, enum ad_regime to)
{
    r->demoted |= from == R_GANG && to == R_PART && r->imbalanced;
    r->regime = to;
    r->moves++;
    r->streak = 0;
    r->settle = !(r->primed && !r->judged); /* the prior's move skips nothing: its start-up is no evidence */
}

uint64_t ad_speed(int h, int eff, int eff_harts)
{
    if (h <= 0)
        return 0;
    if (eff <= 0 || eff >= 1000)
        return (uint64_t)h * 1000; /* nothing known of its speedup, or none lost: linear */
    if (eff_harts <= 1)
        return (uint64_t)h * (uint64_t)eff; /* lost on one hart: not speedup's (time-sharing's), flat */
    /* E(h) = 1 / (1 + s (h - 1)), s = (1000 / eff - 1) / (eff_harts - 1) = lost / fit */
    uint64_t lost = (uint64_t)(1000 - eff), fit = (uint64_t)eff * (uint64_t)(eff_harts - 1);
    return (uint64_t)h * 1000 * fit / (fit + lost * (uint64_t)(h - 1));
}

/* How much longer a time of num / den is than 1, per mille, bounded to [-1000, 1000] (a job counts at most
   its whole time); den 0 (its rate falls to nothing): 1000. */
static long growth(uint64_t num, uint64_t den)
{
    if (!den)
        return 1000;
    uint64_t r = num * 1000 / den;
    return (long)(r > 2000 ? 2000 : r) - 1000;
}

long ad_others_cost(const struct ad_other *o, int n, const struct ad_round *rd)
{
    long cost = 0;
    for (int k = 0; k < n; k++) {
        uint64_t sp = ad_speed(o[k].part, o[k].eff, o[k].eff_harts), sg = ad_speed(o[k].gang, o[k].eff, o[k].eff_harts);
        uint64_t num = (uint64_t)rd->space_p * (uint64_t)rd->round_g * sp;
        uint64_t den = (uint64_t)rd->space_g * (uint64_t)rd->round_p * sg;
        cost += growth(num, den);
    }
    return cost;
}

/* Rule (time-sharing's loss): how much longer an episode of a job that cannot fold takes time-shared r =
   ceil(procs / harts) processes a hart than coscheduled, per mille, at least 1. Its waits spinning, or its
   harts shared with other jobs' processes (that take them for whole quanta while it waits: F&R eq. 13), a
   wait lasts until its partners have had their quanta: r^(procs-1) times longer, capped at a quantum an
   episode (F&R eq. 8 and its cap, (tau_q + tau_s) l an iteration): min(r^(procs-1), quantum / (t_p + t_w)).
   Its waits asleep on a share of its own, a waiter leaves the hart to its partners, and an episode loses a
   block + wake (F&R eq. 12): (t_p + t_w + omega) / (t_p + t_w). Its waits yielding on a share of its own
   (yield_spin), a waiter leaves its hart after its spin up to a yield and the yield's switch (at most
   omega): eq. 12's case, but the partner it waits for may be queued behind the r - 1 others of its hart,
   each polling up to its own yield, so an episode loses up to (r - 1) (spin + omega): (t_p + t_w + (r - 1)
   (spin + omega)) / (t_p + t_w) - never more than eq. 8's, which holds a hart no longer. */
static uint64_t timeshare_factor(const struct ad_rule *r, const struct ad_mover *m)
{
    if (m->harts <= 0 || m->harts >= m->procs || !r->cycle)
        return 1000;
    if (r->row_sleeps && m->own)
        return (r->cycle + m->omega) * 1000 / r->cycle;
    uint64_t n = (uint64_t)((m->procs + m->harts - 1) / m->harts), pow = 1000;
    for (int i = 1; i < m->procs && pow < (1ULL << 40); i++)
        pow *= n;
    uint64_t cap = m->quantum * 1000 / r->cycle;
    cap = cap < pow ? cap : pow;
    if (r->row_yield && m->own)
        cap = min_u(cap, (r->cycle + (n - 1) * (r->row_yield + m->omega)) * 1000 / r->cycle);
    return cap > 1000 ? cap : 1000;
}

long ad_row_gain(const struct ad_rule *r, const struct ad_mover *m, const struct ad_round *rd)
{
    /* in its row: its procs harts one quantum a round, at the row's measured efficiency (unmeasured since the
       mix changed, and coming from part: all progress - a gang spins only its own imbalance, F&R eq. 6) */
    int row = r->eff_row && (r->regime == R_GANG || r->loss[R_GANG]) ? r->eff_row : 1000;
    /* in the SPACE slot: its share for the slot's quanta - its efficiency measured there, or, never measured
       since the mix changed, its row's extrapolated to the share and divided by time-sharing's loss */
    uint64_t in_part;
    if (r->eff && (r->regime != R_GANG || r->loss[R_PART]))
        in_part = ad_speed(m->harts, r->eff, r->eff_harts);
    else
        in_part = ad_speed(m->harts, row, m->procs) * 1000 / timeshare_factor(r, m);
    /* rates: quanta a round x speed; the row gives one quantum of round_g, the slot space_p of round_p */
    uint64_t num = in_part * (uint64_t)rd->space_p * (uint64_t)rd->round_g;
    uint64_t den = ad_speed(m->procs, row, m->procs) * (uint64_t)rd->round_p;
    return -growth(num, den); /* num / den: its time in the row over its time in the slot */
}

int ad_weigh(struct ad_rule *r, int c, long cost, long gain, int margin)
{
    if (c != R_GANG)
        return c;
    long mc = cost < 0 ? -cost : cost, mg = gain < 0 ? -gain : gain;
    if (r->regime == R_PART) /* entering: its gain past the others' cost (a tie leaves ad_judge's rule) */
        return gain * 100 >= cost * 100 + mc * margin ? R_GANG : R_PART;
    if (r->regime != R_GANG || cost * 100 <= gain * 100 + mg * margin)
        return c;
    /* staying costs more than it gains: leave - a guess at once, as the prior's rules leave one */
    r->decisive |= r->primed && !r->loss[R_PART];
    return R_PART;
}
