/*
 * test_adrule.c - host unit tests of policy=adaptive's rule (kernel/sched/adaptive/adrule.c) under ASan/UBSan:
 * no barrier -> fill beside a gang row, part otherwise; a timeshared job that cannot fold and waits more
 * than a block + wake -> gang; a gang job with its own imbalance -> part for good (one that came by the
 * prior and cannot fold only where part lost less, or where its waits sleep - then with no confirmation,
 * and on its first evidence with no margin either);
 * the prior (an unjudged job that cannot fold and would time-share starts in gang); folded and dedicated
 * jobs stay in part; windows that run backwards, are too short or straddle a move carry no evidence; garbage is clamped; the hysteresis moves only after confirm=
 * agreeing windows, or one decisive window (decisive= omegas lost); a prior's row judged early needs more
 * episodes of evidence; counts wrap; a window with episodes
 * marks the job as one whose workers synchronize (allot.h's rounds), for good; waits that yield their harts
 * (the kernel's count of yields inside waits) are told apart from spinning ones in a gang row, and
 * time-sharing's loss is guessed for them by F&R eq. 12, not eq. 8.
 */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "sched/adaptive/adrule.h"

#define HZ 10000000UL
#define Q  20000UL /* 2 ms */

static struct ad_env env(int nprocs, int harts, int adaptive)
{
    return (struct ad_env){ .wticks = 4 * Q, .quantum = Q, .omega = 200, .reload = 0, .timebase_hz = HZ,
                            .margin = 25, .nprocs = nprocs, .ncpus = 4, .harts = harts, .adaptive = adaptive };
}

/* A window after `prev` with the given deltas. */
static struct ad_sums next(const struct ad_sums *prev, uint64_t run, uint32_t ep, uint64_t wait, uint64_t sleep)
{
    return (struct ad_sums){ prev->run + run, prev->episodes + ep, prev->wait + wait, prev->sleep + sleep, prev->off,
                             prev->idle, prev->yields };
}

static int judge(struct ad_rule *r, struct ad_sums *s, const struct ad_env *e, uint64_t run, uint32_t ep,
                 uint64_t wait, uint64_t sleep)
{
    uint64_t tp = 0;
    int pct = 0;
    *s = next(s, run, ep, wait, sleep);
    return ad_judge(r, s, e, &tp, &pct);
}

int main(void)
{
    struct ad_rule r;
    struct ad_sums s;
    struct ad_env e = env(4, 2, 0); /* adapt=no, 4 processes on 2 harts: timeshared */

    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &e, 4 * Q, 0, 0, 0) == R_PART); /* no barrier, no gang row to fill: a share */
    CHECK(!r.syncs); /* no episode yet: its workers are not known to synchronize (allot.h: linear) */
    e.holes = 1;
    CHECK(judge(&r, &s, &e, 4 * Q, 0, 0, 0) == R_FILL); /* no barrier beside a gang row: filler */
    e.holes = 0;
    CHECK(judge(&r, &s, &e, 10, 100, 0, 0) == -1);      /* ran less than a quarter window */
    CHECK(!r.syncs);                                     /* ... and says nothing of its episodes */
    /* spinning 1000 ticks per episode, far above omega = 200: gang */
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40000, 0) == R_GANG);
    CHECK(r.syncs); /* it synchronizes, and stays known to (sticky) */
    /* the same wait asleep is not spinning; t_w counts the whole wait still: gang */
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40000, 40000) == R_GANG);
    /* waiting 1 tick per episode: below omega, stays part */
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40, 0) == R_PART);
    CHECK(judge(&r, &s, &e, 4 * Q, 0, 0, 0) == R_PART && r.syncs);
    /* time-sharing, a wait's time off the hart (preempted or yielded inside it) is loss too (F&R eq. 8):
       1 tick spinning per episode and 1000 off the hart is past omega: gang */
    s = next(&s, 4 * Q, 40, 40040, 0);
    s.off += 40000;
    CHECK(ad_judge(&r, &s, &e, &(uint64_t){ 0 }, &(int){ 0 }) == R_GANG && r.loss[R_PART] == 1001);

    /* on a share of its own, a wait asleep or off the hart leaves the hart to its partners: the loss is its
       spinning and the share's idle time - 1000 ticks asleep per episode, the hart never idle: part; the
       same with the share idle 1000 ticks per episode (its processes all asleep): gang; shared with another
       job's processes, the whole wait: gang */
    struct ad_env own = e;
    own.own_share = 1;
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &own, 4 * Q, 40, 40000, 40000) == R_PART && r.loss[R_PART] == 0);
    s.idle += 40000;
    CHECK(judge(&r, &s, &own, 4 * Q, 40, 40000, 40000) == R_GANG && r.loss[R_PART] == 1000);
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40000, 40000) == R_GANG && r.loss[R_PART] == 1000);
    s.idle += 10 * 4 * Q; /* garbage: clamped to its harts x the window */
    CHECK(judge(&r, &s, &own, 4 * Q, 40, 0, 0) == R_GANG && r.loss[R_PART] == 2 * 4 * Q / 40);
    s.idle -= 1; /* backwards: no evidence */
    CHECK(judge(&r, &s, &own, 4 * Q, 40, 0, 0) == -1);

    /* the hysteresis: confirm=2 needs two agreeing windows; a window for the current regime resets */
    memset(&r, 0, sizeof r);
    CHECK(!ad_confirm(&r, R_GANG, 2));
    CHECK(!ad_confirm(&r, R_PART, 2));
    CHECK(!ad_confirm(&r, R_GANG, 2));
    CHECK(ad_confirm(&r, R_GANG, 2));
    CHECK(!ad_confirm(&r, -1, 2));
    ad_moved(&r, R_PART, R_GANG);
    CHECK(r.regime == R_GANG && r.moves == 1 && r.settle == 1 && r.streak == 0);
    /* the window after a move is skipped */
    memset(&s, 0, sizeof s);
    r.last = s;
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40000, 0) == -1);
    /* in gang with no memory of part: a job that came by the prior and cannot fold takes part for the
       greater loss (time-sharing: F&R eq. 8) and stays; one that folds, or came measured (its memory
       forgotten since), takes it for the lesser and leaves */
    struct ad_rule nomem = r;
    struct ad_sums ns = s;
    struct ad_env folds = env(4, 2, 1);
    nomem.primed = 1;
    CHECK(judge(&nomem, &ns, &e, 4 * Q, 40, 3 * Q, 0) == R_GANG && !nomem.imbalanced);
    nomem = r, ns = s;
    nomem.primed = 1;
    CHECK(judge(&nomem, &ns, &folds, 4 * Q, 40, 3 * Q, 0) == R_PART && nomem.imbalanced);
    nomem = r, ns = s;
    CHECK(judge(&nomem, &ns, &e, 4 * Q, 40, 3 * Q, 0) == R_PART && nomem.imbalanced);
    /* ... and one that came by the prior but waits asleep (a blocking barrier: time-sharing a share of its
       own, its partners take its hart meanwhile) takes part for the lesser - at once: the row was a guess,
       so an imbalance decisively past omega need not be confirmed (decisive= 8: 2000 ticks > 8 x 200);
       where its share would be shared with another job (more SPACE jobs than harts), whose processes would
       take its hart for whole quanta, it stays */
    nomem = r, ns = s;
    nomem.primed = 1;
    e.decisive = 8;
    CHECK(judge(&nomem, &ns, &e, Q, 40, 80000, 80000) == R_GANG && !nomem.imbalanced);
    nomem = r, ns = s;
    nomem.primed = 1;
    e.own_share = 1;
    CHECK(judge(&nomem, &ns, &e, Q, 40, 80000, 80000) == R_PART && nomem.imbalanced && nomem.decisive);
    nomem = r, ns = s;
    CHECK(judge(&nomem, &ns, &e, Q, 40, 80000, 80000) == R_PART && nomem.imbalanced && !nomem.decisive);
    /* the prior's guess, unjudged: its start-up (no more episodes than processes: the start barrier) is no
       evidence; its first evidence that the waits sleep and lose past omega moves it with no confirmation,
       decisive or not (300 ticks per episode, under 8 x 200); a later window waits for confirmation */
    struct ad_rule guess = r;
    ns = s;
    guess.primed = 1, guess.judged = 0;
    CHECK(judge(&guess, &ns, &e, Q, 4, 80000, 80000) == -1 && !guess.judged);
    /* judged early (before its first quantum is out: adaptive.c probe_guess), a few episodes past the start
       barrier are no evidence either: it needs EARLY_EPISODES per process (4 processes: more than 16) */
    struct ad_rule early = guess;
    struct ad_sums es = ns;
    e.early = 1;
    CHECK(judge(&early, &es, &e, Q, 16, 12000, 12000) == -1 && !early.judged);
    CHECK(judge(&early, &es, &e, Q, 17, 12000, 12000) == R_PART && early.judged && early.decisive);
    e.early = 0;
    CHECK(judge(&guess, &ns, &e, Q, 40, 12000, 12000) == R_PART && guess.judged && guess.decisive);
    CHECK(judge(&guess, &ns, &e, Q, 40, 12000, 12000) == R_PART && !guess.decisive);
    e.decisive = 0;
    /* a short blocking wait is half its own block and wake: a guessed row whose waits are 49 % asleep
       (220 ticks per episode, the 112 awake within a block + wake) takes part at its first evidence, though
       220 is inside the margin (1.1 omega): the guess has no measured choice for the margin to keep. A
       judged row with the same window stays (the margin), and so does a guess whose waits spin as long
       (they do not sleep) */
    guess = r, ns = s;
    guess.primed = 1, guess.judged = 0;
    CHECK(judge(&guess, &ns, &e, Q, 40, 40 * 220, 40 * 108) == R_PART && guess.decisive);
    guess = r, ns = s;
    guess.primed = 1, guess.judged = 1;
    CHECK(judge(&guess, &ns, &e, Q, 40, 40 * 220, 40 * 108) == R_GANG);
    guess = r, ns = s;
    guess.primed = 1, guess.judged = 0;
    CHECK(judge(&guess, &ns, &e, Q, 40, 40 * 220, 0) == R_GANG);
    /* waits that yield (the kernel counts SYS_yield inside a wait): in a gang row the yield comes straight back
       and the wait reads as spinning, 1000 ticks an episode. With 20 yields a wait, it holds its hart 50 ticks
       before giving it away (yield_spin: what the weighing guesses time-sharing costs it, below); the rule's
       own candidate is the row's, as for a spinning wait. No yields, or fewer yields than waits (most waits
       spin): none; yields once a wait, at its end: the whole wait */
    struct ad_rule yr = r;
    struct ad_sums ys = s;
    yr.primed = 1, yr.judged = 0;
    ys.yields += 40 * 20;
    CHECK(judge(&yr, &ys, &e, 4 * Q, 40, 40 * 1000, 0) == R_GANG && yr.row_yield == 50);
    yr = r, ys = s;
    yr.primed = 1, yr.judged = 0;
    CHECK(judge(&yr, &ys, &e, 4 * Q, 40, 40 * 1000, 0) == R_GANG && yr.row_yield == 0);
    yr = r, ys = s;
    yr.primed = 1, yr.judged = 0;
    ys.yields += 39;
    CHECK(judge(&yr, &ys, &e, 4 * Q, 40, 40 * 1000, 0) == R_GANG && yr.row_yield == 0);
    yr = r, ys = s;
    yr.primed = 1, yr.judged = 0;
    ys.yields += 40;
    CHECK(judge(&yr, &ys, &e, 4 * Q, 40, 40 * 1000, 0) == R_GANG && yr.row_yield == 1000);
    e.own_share = 0;
    /* yields that run backwards void the window */
    ys.yields -= 1;
    CHECK(judge(&yr, &ys, &e, 4 * Q, 40, 40 * 1000, 0) == -1);
    /* in gang, an imbalance beyond the grain (t_w > t_p) is the job's own: part, and never gang again -
       where part lost less (40 ticks per episode) */
    r.loss[R_PART] = 40;
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 3 * Q, 0) == R_PART && r.imbalanced);
    /* ... but not one below a block + wake: spinning wins there (F&R 15/16): t_p 1, t_w 3 < omega */
    struct ad_rule tail = r;
    struct ad_sums ts = s;
    CHECK(judge(&tail, &ts, &e, 4 * Q, 20000, 60000, 0) == R_GANG && !tail.imbalanced);
    /* ... nor one that lost more per episode time-sharing a partition (the memories) */
    tail = r, ts = s;
    tail.loss[R_PART] = 4 * Q;
    CHECK(judge(&tail, &ts, &e, 4 * Q, 40, 3 * Q, 0) == R_GANG && !tail.imbalanced);
    ad_moved(&r, R_GANG, R_PART);
    CHECK(r.demoted && r.regime == R_PART);
    s = r.last;
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40, 0) == -1); /* settle */
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40000, 0) == R_PART); /* demoted: stays */

    /* folded (adapt=yes on fewer harts than processes) and dedicated jobs stay in part */
    struct ad_env folded = env(4, 2, 1), dedicated = env(2, 2, 0), one = env(2, 1, 0);
    one.ncpus = 1;
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &folded, 4 * Q, 40, 4 * Q, 0) == R_PART);
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &dedicated, 4 * Q, 40, 4 * Q, 0) == R_PART);
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &one, 4 * Q, 40, 4 * Q, 0) == R_PART);

    /* hostile sums: backwards voids the window; huge waits are clamped, never overflow (UBSan) */
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    s.wait = 1000;
    r.last = s;
    s.wait = 10;
    uint64_t tp = 0;
    int pct = 0;
    CHECK(ad_judge(&r, &s, &e, &tp, &pct) == -1);
    s = next(&s, 4 * Q, 7, ~0UL / 2, ~0UL / 3);
    int c = ad_judge(&r, &s, &e, &tp, &pct);
    CHECK((c == R_GANG || c == R_PART) && pct >= 0 && pct <= 100);
    /* episodes wrap modulo 2^32: a delta of 40 across the wrap */
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    s.episodes = 0xfffffff0u;
    r.last = s;
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40000, 0) == R_GANG);

    /* a job that lost more in gang than it now loses in part does not return (the memories) */
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    r.loss[R_GANG] = 5000; /* ticks per episode it lost in gang */
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40000, 0) == R_PART); /* t_w 1000 < 5000 */

    /* decisive=8: a loss past 8 omegas moves at once, one past the margin only after confirm= windows */
    e.decisive = 8;
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40 * 300, 0) == R_GANG && !r.decisive); /* t_w 300: 1.5 omega */
    CHECK(!ad_confirm(&r, R_GANG, 2));
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40 * 1700, 0) == R_GANG && r.decisive); /* t_w 1700: 8.5 omega */
    CHECK(ad_confirm(&r, R_GANG, 2));
    ad_moved(&r, R_PART, R_GANG);
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40 * 1700, 0) == -1 && !r.decisive); /* skipped: settles first */
    /* in gang, losing 8.5 omegas without its own imbalance (t_w < t_p): back to part at once - unless it
       lost more in part (the memories), or the loss is its own imbalance (confirm= windows, then for good) */
    CHECK(judge(&r, &s, &e, 40 * 10000, 40, 40 * 1700, 0) == R_GANG && !r.decisive); /* part lost as much: stays */
    r.loss[R_PART] = 100; /* part lost less */
    CHECK(judge(&r, &s, &e, 40 * 10000, 40, 40 * 1700, 0) == R_PART && r.decisive);
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40 * 3000, 0) == R_PART && r.imbalanced && !r.decisive);
    e.decisive = 0; /* off: never */
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 40 * 100000, 0) == R_GANG && !r.decisive);

    /* the prior: a job not judged yet, in part, that cannot fold and would time-share starts in gang */
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    CHECK(ad_prior_gang(&r, 0, 2, 4, 4));  /* adapt=no, 4 processes on 2 of 4 harts */
    CHECK(!ad_prior_gang(&r, 1, 2, 4, 4)); /* it folds */
    CHECK(!ad_prior_gang(&r, 0, 4, 4, 4)); /* dedicated harts */
    CHECK(!ad_prior_gang(&r, 0, 2, 8, 4)); /* more processes than harts: no row holds it */
    CHECK(!ad_prior_gang(&r, 0, 1, 2, 1)); /* one hart */
    CHECK(judge(&r, &s, &e, 10, 0, 0, 0) == -1 && ad_prior_gang(&r, 0, 2, 4, 4)); /* no evidence yet */
    CHECK(judge(&r, &s, &e, 4 * Q, 0, 0, 0) == R_PART && r.judged && !ad_prior_gang(&r, 0, 2, 4, 4));
    memset(&r, 0, sizeof r);
    r.moves = 1;
    CHECK(!ad_prior_gang(&r, 0, 2, 4, 4)); /* it has moved: measured */

    /* the wait times are read in a gang row, in part unless folded (its efficiency; time-sharing harts it
       cannot fold onto, its loss), and in fill only while time-sharing such harts */
    CHECK(ad_reads_waits(R_GANG, 1, 2, 2) && ad_reads_waits(R_PART, 0, 2, 4) && ad_reads_waits(R_FILL, 0, 1, 2));
    CHECK(ad_reads_waits(R_PART, 0, 4, 4) && ad_reads_waits(R_PART, 1, 4, 4));
    CHECK(!ad_reads_waits(R_PART, 1, 2, 4) && !ad_reads_waits(R_FILL, 1, 1, 2));
    /* efficiency (the speedup signal): in part, the share of held hart time (run + own share's idle) that was
       not spun in waits nor idle; a sleep is no loss of its own (the idle time says what it cost) */
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    e = env(4, 4, 1); /* dedicated: its waits are timed */
    s.idle = 0;
    CHECK(judge(&r, &s, &e, 4 * Q, 40, Q, 0) >= 0 && r.eff == 750); /* a quarter of its run spun */
    s.idle += 4 * Q; /* its harts idled as long as it ran, its waits asleep */
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 4 * Q, 4 * Q) >= 0 && r.eff == 500);
    e = env(8, 4, 1); /* folded: its waits run its other workers, only the idle time is lost */
    s.idle += Q;
    CHECK(judge(&r, &s, &e, 3 * Q, 40, 3 * Q, 0) >= 0 && r.eff == 750);
    CHECK(judge(&r, &s, &e, 4 * Q, 0, 4 * Q, 0) >= 0 && r.eff == 1000); /* no episodes (stealing): measured too */
    e = env(4, 4, 1);
    CHECK(judge(&r, &s, &e, 4 * Q, 0, 4 * Q, 0) >= 0 && r.eff == EFF_FLOOR); /* all waiting: the floor */
    r.regime = R_GANG;
    CHECK(judge(&r, &s, &e, 4 * Q, 40, 0, 0) >= 0 && r.eff == EFF_FLOOR); /* a gang row's window says nothing */
    e = env(4, 2, 0);
    /* the shape (allot.h): rounds of its published units once it synchronizes, bounded by its processes */
    int u = -1;
    memset(&r, 0, sizeof r);
    CHECK(ad_shape(&r, 1, 8, 8, &u) == ALLOT_LINEAR && u == 0); /* no episode seen yet */
    r.syncs = 1;
    CHECK(ad_shape(&r, 1, 8, 8, &u) == ALLOT_ROUNDS && u == 8);
    CHECK(ad_shape(&r, 1, 8, 0xffffffffu, &u) == ALLOT_ROUNDS && u == 8); /* garbage: bounded */
    CHECK(ad_shape(&r, 1, 8, 0, &u) == ALLOT_LINEAR && u == 0);           /* no worker run: threads */
    CHECK(ad_shape(&r, 0, 6, 0, &u) == ALLOT_ROUNDS && u == 6);           /* adapt=no: its processes */
    r.regime = R_FILL;
    CHECK(ad_shape(&r, 1, 8, 8, &u) == ALLOT_LINEAR && u == 0);

    /* a window in part records the harts its efficiency was measured on */
    memset(&r, 0, sizeof r), memset(&s, 0, sizeof s);
    e = env(4, 4, 1);
    CHECK(judge(&r, &s, &e, 4 * Q, 40, Q, 0) >= 0 && r.eff == 750 && r.eff_harts == 4);
    /* one in a gang row its efficiency there (t_p / (t_p + t_w)) and its episode's length t_p + t_w */
    r.regime = R_GANG;
    CHECK(judge(&r, &s, &e, 4 * Q, 40, Q, 0) >= 0 && r.eff_row == 750 && r.cycle == 2000 && r.eff == 750);
    e = env(4, 2, 0);

    /* the speed the others' cost reads (Amdahl's law through the measured point): unmeasured or all progress,
       linear; half its harts' time lost on 8 harts is 4 harts' speed there, 16 * 7 / 22 on 16, 1 on 1; lost
       on one hart (time-shared), no speedup to fit: the same share lost on any */
    CHECK(ad_speed(16, 0, 0) == 16000 && ad_speed(8, 1000, 8) == 8000 && ad_speed(3, 500, 1) == 1500);
    CHECK(ad_speed(1, 200, 1) == 200);
    CHECK(ad_speed(8, 500, 8) == 4000 && ad_speed(16, 500, 8) == 5090 && ad_speed(1, 500, 8) == 1000);
    CHECK(ad_speed(0, 500, 8) == 0);
    CHECK(ad_speed(64, EFF_FLOOR, 64) > 0 && ad_speed(64, EFF_FLOOR, 64) <= ad_speed(32, EFF_FLOOR, 64) * 2);

    /* the others' cost of a row of its own (the same hart time): a linear job loses nothing running on 16
       harts a quantum of two instead of on 8 both; one of sublinear speedup (half lost on 8) 57 % of its
       time; two such, twice that; a background job is not passed in (its time is no cost) */
    struct ad_round own_row = { .space_p = 2, .round_p = 2, .space_g = 1, .round_g = 2 };
    struct ad_other lin = { .part = 8, .gang = 16 }, sub = { .part = 8, .gang = 16, .eff = 500, .eff_harts = 8 };
    CHECK(ad_others_cost(&lin, 1, &own_row) == 0);
    CHECK(ad_others_cost(&sub, 1, &own_row) == 571);
    struct ad_other two[2] = { sub, sub };
    struct ad_round own_row3 = { .space_p = 3, .round_p = 3, .space_g = 2, .round_g = 3 };
    two[0].part = two[1].part = 5, two[0].gang = two[1].gang = 8, two[0].eff_harts = two[1].eff_harts = 5;
    CHECK(ad_others_cost(two, 2, &own_row3) > ad_others_cost(two, 1, &own_row3) &&
          ad_others_cost(two, 2, &own_row3) == 2 * ad_others_cost(two, 1, &own_row3));
    /* a row with room for it: the round is a quantum shorter, so a linear job gains (negative cost) */
    struct ad_round shared_row = { .space_p = 2, .round_p = 3, .space_g = 1, .round_g = 2 };
    CHECK(ad_others_cost(&lin, 1, &shared_row) == -334);
    /* a job the row would stop (no harts left to it): its whole time, and no more than that however slow */
    struct ad_other stopped = { .part = 1, .gang = 0 }, crawl = { .part = 16, .gang = 1 };
    CHECK(ad_others_cost(&stopped, 1, &own_row) == 1000 && ad_others_cost(&crawl, 1, &own_row) == 1000);
    CHECK(ad_others_cost(&lin, 0, &own_row) == 0);

    /* the mover's gain: its time in the row over its time in the SPACE slot, from quanta a round and speeds.
       From part, 8 harts of its 16 processes at 30 % efficiency, and no memory of a row (a gang spins only its
       imbalance: all progress): 16 harts one quantum of two against 8 at 0.3 two of two, 70 % of its time */
    struct ad_mover mv = { .procs = 16, .harts = 8, .quantum = Q };
    memset(&r, 0, sizeof r);
    r.eff = 300, r.eff_harts = 8;
    CHECK(ad_row_gain(&r, &mv, &own_row) == 700);
    r.loss[R_GANG] = 1, r.eff_row = 500; /* a memory of its row, half its hart time progress there */
    CHECK(ad_row_gain(&r, &mv, &own_row) == 400);
    /* in its row, part never measured since the mix changed: the row's efficiency extrapolated to 8 harts and
       divided by time-sharing's loss (F&R eq. 8: capped at a quantum an episode - an episode of half a quantum
       takes twice as long); an episode of a thousandth of a quantum loses nearly everything time-shared */
    memset(&r, 0, sizeof r);
    r.regime = R_GANG, r.eff_row = 500, r.cycle = Q / 2;
    CHECK(ad_row_gain(&r, &mv, &own_row) == 319);
    r.cycle = Q / 1000;
    CHECK(ad_row_gain(&r, &mv, &own_row) >= 999);
    /* waits that sleep on a share of its own lose a block + wake an episode (F&R eq. 12): an episode of a
       hundredth of a quantum and a block + wake as long, twice as long; on a share other jobs take too, a
       quantum (eq. 13) */
    struct ad_mover own_mv = { .procs = 16, .harts = 8, .own = 1, .quantum = Q, .omega = Q / 100 };
    r.cycle = Q / 100, r.row_sleeps = 1;
    CHECK(ad_row_gain(&r, &own_mv, &own_row) == 319);
    own_mv.own = 0;
    CHECK(ad_row_gain(&r, &own_mv, &own_row) == 987);
    r.row_sleeps = 0;
    /* waits that yield on a share of its own (F&R eq. 12's case): an episode of half a quantum loses its spin
       up to a yield and the switch, 4 % at two processes a hart - extrapolated to 8 harts, the row gains it
       nothing; eq. 8 (spinning) said 32 %. At 16 processes on 2 harts a partner may wait behind 7 pollers:
       7 x that, and the row gains again. On a share other jobs take too, or with yields no sooner than a
       quantum, eq. 8's */
    r.cycle = Q / 2, r.row_yield = Q / 100;
    own_mv.own = 1;
    CHECK(ad_row_gain(&r, &own_mv, &own_row) < 0 && ad_row_gain(&r, &mv, &own_row) == 319);
    struct ad_mover crowded = own_mv;
    crowded.harts = 2;
    CHECK(ad_row_gain(&r, &crowded, &own_row) > 0 && ad_row_gain(&r, &crowded, &own_row) < 1000 &&
          ad_row_gain(&r, &crowded, &own_row) < ad_row_gain(&(struct ad_rule){ .regime = R_GANG, .eff_row = 500,
                                                              .cycle = Q / 2 }, &crowded, &own_row));
    own_mv.own = 0;
    CHECK(ad_row_gain(&r, &own_mv, &own_row) == 319);
    own_mv.own = 1, r.row_yield = Q;
    CHECK(ad_row_gain(&r, &own_mv, &own_row) == 319);
    r.row_yield = 0;
    r.eff_row = 1000, r.cycle = 2 * Q; /* linear, episodes longer than a quantum: nothing lost time-shared */
    CHECK(ad_row_gain(&r, &mv, &own_row) == 0);
    /* a memory of part (efficient there): the row slows it down */
    r.eff_row = 500, r.loss[R_PART] = 5, r.eff = 900, r.eff_harts = 8;
    CHECK(ad_row_gain(&r, &mv, &own_row) == -800);
    struct ad_mover own_harts = { .procs = 8, .harts = 8, .quantum = Q };
    r.loss[R_PART] = 0, r.cycle = Q / 1000; /* a share covering its processes: no time-sharing loss */
    CHECK(ad_row_gain(&r, &own_harts, &own_row) == -1000);

    /* weighed: a row is entered only when its gain is past the others' cost by the margin (percent of the cost),
       and kept only while the cost is not past the gain by the margin (percent of the gain); any other
       candidate is left alone */
    memset(&r, 0, sizeof r);
    CHECK(ad_weigh(&r, R_GANG, 300, 500, 25) == R_GANG && ad_weigh(&r, R_GANG, 450, 500, 25) == R_PART);
    CHECK(ad_weigh(&r, R_GANG, 0, 10, 25) == R_GANG && ad_weigh(&r, R_GANG, -200, -100, 25) == R_GANG);
    CHECK(ad_weigh(&r, R_GANG, 0, 0, 25) == R_GANG); /* a tie: the rule's candidate stands */
    CHECK(ad_weigh(&r, R_GANG, -200, -300, 25) == R_PART);
    CHECK(ad_weigh(&r, R_PART, 900, 0, 25) == R_PART && ad_weigh(&r, -1, 900, 0, 25) == -1);
    r.regime = R_GANG;
    CHECK(ad_weigh(&r, R_GANG, 700, 500, 25) == R_PART && ad_weigh(&r, R_GANG, 600, 500, 25) == R_GANG);
    CHECK(ad_weigh(&r, R_GANG, 0, -100, 25) == R_PART && !r.decisive); /* the row slows the job itself down */
    r.primed = 1; /* the prior's guess, part never measured: it leaves at once */
    CHECK(ad_weigh(&r, R_GANG, 700, 500, 25) == R_PART && r.decisive);
    r.decisive = 0, r.loss[R_PART] = 10; /* measured: the hysteresis */
    CHECK(ad_weigh(&r, R_GANG, 700, 500, 25) == R_PART && !r.decisive);
    CHECK(ad_weigh(&r, R_FILL, 700, 0, 25) == R_FILL && ad_weigh(&r, R_PART, 0, 900, 25) == R_PART);
    return check_done("test_adrule");
}
