/*
 * adrule.c - policy=adaptive's rule (adrule.h; the regimes' mechanics are adaptive.c and adround.c): from
 * one window of a job's statistics, its grain t_p and wait per episode t_w, the loss per episode where it
 * is against the loss elsewhere, and the hysteresis. Pure: it trusts nothing it is given (the library's
 * counts are the job's to scribble on) - sums that run backwards void the window, the wait is clamped to
 * processes x window and the sleep to the wait.
 *
 * Measurement (per job, every window= quanta, on hart 0's tick). The kernel counts each process's run time
 * (run_ticks) itself; spinning is invisible to it, so the library publishes per process, in the job's sync
 * statistics page (abi.h struct sl_sync, syncstat.h): barrier episodes, waits and ticks waited; the part
 * of them asleep is the kernel's own count (the time a process blocked while its record said it was inside a
 * wait: admeasure.c ad_asleep). Over the window, summed over the job's processes:
 *   e   = episodes (worker barrier arrivals, and the idle streaks of placed threads: a process out of threads
 *         waits for its partners; lib/threads/uthread.c)   W = ticks waited, S = of those asleep
 *   t_p = (run - (W - S)) / e   compute per worker between synchronizations (the grain: F&R's t_p)
 *   t_w = W / e                 wait per episode (F&R's t_w: the imbalance a gang spins away)
 *
 * The rule and its models. Per window, the job's loss per synchronization episode where it is is compared
 * with what it would lose elsewhere:
 *   - No barrier episode in the window: fill, while another job's gang row has holes - entries no process
 *     of it holds, or processes that sleep inside waits (adaptive.c holes_besides). A job that does not
 *     synchronize loses nothing to being time-shared (F&R: only synchronizing gangs suffer uncoordinated
 *     scheduling; Blumofe & Papadopoulos: work stealing with yields runs well multiprogrammed), so it
 *     fills the holes the gang rows leave (FCS's filler). With no holes a filler gains nothing, and the
 *     filler FIFO shares its harts by processes, not jobs: beside a 16-process hog a 16-process knary got
 *     a third of their harts, and its last batches waited a round for a hart (simulated, 16 harts: 200 ms
 *     against 142 in a partition, with no gang row; beside a full row of spinners, 141 against 113). Then it
 *     stays in (or returns to) part: a fair share of its own.
 *   - A job in a partition with process control (adapt=yes) folds its workers onto as many processes as it
 *     has harts: a waiting worker hands its process to the next by a user-level switch, no process spins
 *     on a descheduled partner, and folding recovers the imbalance a gang would spin away - Markatos 3.5.3
 *     (partitions win on sublinear speedup, no cache corruption) and 3.6.2 (coscheduling pays only for
 *     "very fine-grain, linear-speedup" applications, where the two tie). A job whose share covers its
 *     processes runs dedicated. Either way a gang row could only add the other rows' time and the refills:
 *     such a job stays in part.
 *   - A job that cannot fold (adapt=no) and has fewer harts than processes time-shares them: each episode
 *     it loses its whole wait to partners that are not running (F&R eq. 8 when it spins; with the time
 *     off its hart inside the wait, preempted or yielded: then its partner runs, but it queues behind
 *     every other process of the hart before it goes on), where blocking would lose
 *     omega = alpha tau_s, the block + cross-hart wake the calibration measured (sched_wake_cost_ns: 2
 *     syscalls + 2 switches + an IPI; eq. 12). On a share of its own (no other job's processes on its
 *     harts) a wait asleep or queued is its partners' running time, and what it loses is its spinning and
 *     the share's harts idling (every process of it there asleep: the kernel's count, admeasure.c
 *     ad_share_idle). When that loss > omega, a gang row (eq. 6: all partners run, only the job's own
 *     imbalance is lost) is worth it: gang.
 *   - In a gang row the job loses gang_loss = t_w + t_p R / tau_q per episode: its imbalance spun away and,
 *     after every other slot, the refill of the private cache the other rows corrupted (Tucker & Gupta's
 *     cause 4: R = the machine model's lines x miss cycles, sched_reload_cost_ns; 0 without a model; R /
 *     tau_q of its compute). When gang_loss > omega, blocking in a partition loses less (F&R's crossover,
 *     eqs. 15/16: gang + spin wins while t_w is below alpha tau_s): part. When t_w > t_p the imbalance is
 *     the job's own (F&R: blocking then beats spinning, if t_w > omega too): it leaves and never comes
 *     back (sticky, so it cannot cycle). A job of more processes than harts is never gang (a gang cannot
 *     exceed H: F&R), nor any job on one hart.
 *   Each job remembers the loss it last measured in gang and in part, and returns to a regime only if that
 *   loss was higher than what it loses now (by the margin): a job that loses in both settles in the lesser
 *   instead of cycling. An arrival forgets the memories (the losses may have grown: adaptive.c
 *   forget_losses).
 *   The grain enters through t_w (an imbalance grows with the work between barriers) and the refill term.
 * Hysteresis. A move needs the comparison past the threshold by margin= percent (the loss > omega (1+m) to
 * enter gang, gang_loss > omega (1+m) to leave it) in confirm= consecutive windows with evidence - or in
 * one window, when the loss is past omega decisive= times (default 8): a job on the threshold is noise to
 * filter, one that loses 8 block-and-wakes per episode is not, and every window it waits costs it most
 * (gauss fine time-sharing one hart beside a hog on QEMU: 65x its time alone in the partition). The
 * count restarts after every move, and the window after a move is skipped (it straddles two regimes and
 * process control's reaction), so a job moves at most once per confirm= + 1 windows - once per two on
 * decisive losses - whatever its measurements do. A window in which the job ran less than a quarter of its length, or whose statistics ran
 * backwards, carries no evidence either way. New jobs start in part (no interference, no spinning), and
 * every quantum of their first window that window so far is judged too (adaptive.c probe): a decisive
 * loss moves them then, anything else waits for the window's end.
 * The prior (prior=gang, the default; ad_prior_gang). A job with no judged window yet that cannot fold and
 * would time-share (adapt=no, fewer harts than processes, a row can hold it) goes to a gang row at once: by
 * F&R eq. 8 it would lose its partners' quanta time-sharing if it synchronizes, and coscheduled it loses
 * nothing if it does not (the same hart time; no episodes take it to fill or part after a window). Such
 * a job (primed) has never measured part, so it leaves its row only for a part it has measured to lose
 * less, or when its waits sleep and its share there would be its own (a blocking barrier: time-sharing,
 * its partners take its hart meanwhile; on a hart shared with another job, that job's processes would
 * take it for whole quanta) - or when it stops synchronizing. Its row being a guess, it is probed every
 * quantum, and as soon as a process of it sleeps inside a wait once a quarter quantum has run (adaptive.c
 * probe_guess), and its first evidence moves it with no confirmation and no margin (a guess has no
 * measured choice behind it for the hysteresis to keep: a blocking oddeven, adapt=no, beside a blocking
 * gauss and a twophase synth, simulated at 32 harts, lost 1.24 omega per episode in its row and stayed
 * there until its third window, 120 ms; leaving at its first evidence, 2.5 ms in, the mix's mean slowdown
 * went from 2.20 to 2.00). Its waits sleep when most of their time is asleep, or when what is not asleep
 * is within a block + wake per episode: a short blocking wait is half its own block and wake (that
 * oddeven's: 3.5 us, 49 % asleep). An imbalanced coarse synth, adapt=no, blocking, beside knary and a
 * hog, simulated at 8 harts: 2.69 kept in its row, 2.51 leaving after two
 * windows, 2.34 after a quantum, 2.31 after its first 5 ms, 2.28 under partition (at 24 harts, seed 1:
 * 2.49 after a quantum, 2.41, partition 2.31 - its row holds every hart, and the other jobs start when it
 * leaves). Its start-up is no evidence: a window with no more episodes than processes (the workers' start
 * barrier: judged, gauss fine's serial set-up looked asleep), or judged early, no more than EARLY_EPISODES
 * per process.
 * prior=part measures it in part first (probed every quantum): on QEMU at 2 harts gauss fine beside a hog
 * took 1.95x its time alone that way, 1.63 so, 1.55 under gang.
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
 * moves spare harts at most once a window between those.
 */
#include "adrule.h"

static uint64_t min_u(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* A loss per episode past omega decisive= times (the hysteresis in the header; 0 or no omega: never). */
static int decisive(const struct ad_env *e, uint64_t loss)
{
    return e->decisive && e->omega && loss > e->omega * (uint64_t)e->decisive;
}

/* It time-shares harts it cannot fold onto: adapt=no, fewer harts than processes. */
static int timeshares(int adaptive, int harts, int nprocs) { return !adaptive && harts < nprocs; }

int ad_reads_waits(enum ad_regime regime, int adaptive, int harts, int nprocs)
{
    return regime == R_GANG || timeshares(adaptive, harts, nprocs);
}

int ad_judge(struct ad_rule *r, const struct ad_sums *now, const struct ad_env *e, uint64_t *tp_us, int *wait_pct)
{
    const struct ad_sums *o = &r->last;
    int back = now->wait < o->wait || now->sleep < o->sleep || now->run < o->run || now->off < o->off ||
               now->idle < o->idle;
    uint64_t drun = now->run - o->run, dwt = now->wait - o->wait, dsl = now->sleep - o->sleep;
    uint64_t didle = min_u(now->idle - o->idle, (uint64_t)e->harts * e->wticks);
    uint64_t dep = (uint32_t)(now->episodes - o->episodes), doff = now->off - o->off;
    r->last = *now;
    r->decisive = 0;
    if (back || drun < e->wticks / 4 || r->settle) {
        r->settle = 0;
        return -1;
    }
    uint64_t cap = (uint64_t)e->nprocs * e->wticks;
    dwt = min_u(dwt, cap);
    dsl = min_u(dsl, dwt);
    doff = min_u(doff, dwt - dsl);
    uint64_t dwt_off = dwt; /* with the time its processes waited off their harts inside waits */
    dwt -= doff;            /* on-hart waiting only */
    dep = min_u(dep, cap);
    if (r->primed && !r->judged && dep <= (uint64_t)e->nprocs * (e->early ? EARLY_EPISODES : 1))
        return -1; /* its start-up: the workers' start barrier is no grain (asleep there, gauss fine's
                      processes wait out its serial set-up); judged early - at its first waits that sleep,
                      just past its first barriers - a few episodes past it are no imbalance either
                      (simulated, 24 harts, a blocking imbalanced synth: 9 episodes past its start barrier
                      showed a wait of 5 %, its first full quantum 31 %; at 8 harts with 2 ms quanta, 6.5 ms
                      in, 2 %, and the row's underestimated loss brought it back) */
    int guess = r->primed && !r->judged; /* the first evidence on the prior's guess */
    r->judged = 1;
    r->syncs |= dep > 0;
    if (dep == 0)
        return e->holes ? R_FILL : R_PART;
    /* Folded (a part job running fewer processes than workers): a waiting worker first runs the others of
       its process, so its wait holds their compute, not spinning - t_w cannot be told apart, and the run
       time is compute (an upper bound of it) */
    int folded = r->regime == R_PART && e->adaptive && e->harts < e->nprocs;
    uint64_t spin = folded ? 0 : dwt - dsl, compute = drun > spin ? drun - spin : 0;
    uint64_t tp = compute / dep, tw = folded ? 0 : dwt / dep, m = 100 + (uint64_t)e->margin;
    *tp_us = e->timebase_hz ? tp * 1000000 / e->timebase_hz : 0;
    *wait_pct = (int)(tw * 100 / (tp + tw + 1));
    /* Losses per episode: a gang row's is t_w + t_p R / tau_q; a partition's is what the job measures
       there now, t_w, against omega, the block + wake it could pay instead. */
    uint64_t gang_loss = tw + tp * e->reload / (e->quantum + 1);
    if (r->regime == R_GANG) {
        /* leave when blocking in a partition would lose less: past a block + wake (F&R's crossover), and
           less than the job lost in part when it was last there (the memories). With no memory, part is
           taken for the lesser - except by a job that came by the prior and cannot fold: it has never
           measured part, where time-sharing would lose its partners' quanta (F&R eq. 8), and leaving on
           its imbalance alone gauss fine ran 97 of its 198 ms time-sharing (prior=gang, MODEL=modern,
           QEMU, 2 harts) */
        /* its waits block: most of its waiting asleep, or what is not asleep within a block + wake per
           episode (a short blocking wait is half its own block and wake: oddeven, barrier=block, adapt=no,
           at 32 harts, waited 3.5 us per episode, 49 % of it asleep). Time-sharing a share of its own
           (ad_own_share: one would be its own), its partners take its hart meanwhile; on a hart shared with
           another job, that job's processes take it for whole quanta (QEMU, 2 harts, a blocking coarse synth
           beside knary and a hog: 682 ms in part, 313 under gang) */
        int asleep = dsl * 2 > dwt || (dsl && dwt - dsl <= e->omega * dep);
        int lesser = r->loss[R_PART] ? gang_loss * 100 > r->loss[R_PART] * m
                                     : e->adaptive || !r->primed || (asleep && e->own_share);
        /* the prior's guess has no measured choice behind it for the margin to keep: its first evidence
           counts as it is */
        int worse = gang_loss * 100 > e->omega * (guess ? 100 : m) && lesser;
        /* its own imbalance (past its grain), where blocking beats spinning: past a block + wake too (F&R
           15/16: below omega spinning wins whatever the grain - gauss fine's last steps, 2 us of work and 3
           of waiting, are no reason to leave), and not where the job lost more time-sharing a partition */
        r->imbalanced = tw * 100 > tp * m && tw * 100 > e->omega * m && lesser;
        r->loss[R_GANG] = gang_loss;
        /* an imbalance is a sticky reason to leave, so it waits for confirmation - but not where the row was
           the prior's guess, before anything was measured */
        r->decisive = worse && (!r->imbalanced || r->primed) && (decisive(e, gang_loss) || guess);
        return r->imbalanced || worse ? R_PART : R_GANG;
    }
    if (!timeshares(e->adaptive, e->harts, e->nprocs) || e->nprocs > e->ncpus || e->ncpus == 1 || r->demoted)
        return R_PART; /* folded or dedicated: a gang row can only add the other rows' time and refills */
    /* time-sharing, a wait lasts until the partner it waits for has run, on this hart or after it (F&R eq.
       8): the time off its hart inside the wait is loss too - a waiting process that yields goes behind
       every other process of the hart's queue (gauss fine beside three jobs at 2 harts on QEMU: 2% of its
       time spinning, 27x its time alone). On a share of its own (no other job's processes on its harts),
       though, a waiter asleep or queued leaves the hart to its partners: there the loss is its spinning on
       the hart and the share's harts idling (admeasure.c ad_share_idle). An imbalanced coarse synth that blocks
       (adapt=no) loses little there, and its whole wait sent it back to a gang row (simulated, 4 harts,
       beside knary and a hog: it waited 42 % time-sharing, asleep included, and 20 % in its row); gauss fine
       beside a hog, which barely blocks, still shows its loss spinning (QEMU, 2 harts, prior=part: it left
       its partition after 16 and 19 ms, seeds 1-2, and ran 90 and 98 ms in all). */
    uint64_t part_loss = (e->own_share ? dwt - dsl + didle : dwt_off) / dep;
    r->loss[R_PART] = part_loss;
    int gang = part_loss * 100 > e->omega * m && (!r->loss[R_GANG] || part_loss * 100 > r->loss[R_GANG] * m);
    r->decisive = gang && decisive(e, part_loss);
    return gang ? R_GANG : R_PART;
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
