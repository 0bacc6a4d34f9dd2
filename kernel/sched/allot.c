/*
 * allot.c - dividing the harts among the running jobs (see allot.h for the rules).
 */
#ifndef SCHEDLAB_HOST
#include "../kernel.h"
#endif
#include "allot.h"

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1) /* the kernel links without libgcc's __popcountdi2 */
        n++;
    return n;
}

int allot_zrule(int x, int y)
{
    if (x >= y)
        return y;
    /* ceil(y/z) only grows as z shrinks, so the smallest z keeping r = ceil(y/x) rounds is ceil(y/r) */
    return ceil_div(y, ceil_div(y, x));
}

/* The units a job's speed is quantized by (its rounds are ceil(units / count)), or 0 when any hart helps:
   a non-adaptive job's processes (time-sliced on its harts), an adaptive job's synchronizing workers. */
static int fold_units(const struct allot_job *j)
{
    if (!j->adaptive)
        return j->procs;
    if (j->shape != ALLOT_ROUNDS || j->units < 1)
        return 0; /* rounds of no units: nothing known */
    return j->units > j->procs ? j->procs : j->units;
}

/* What one more hart is worth to j at its count, as speed after / speed before = num / den (den 0:
   without one it does not run at all). Untold jobs count as linear, so among equal counts - every
   remainder candidate of fair_shares has one - they keep arrival order. */
struct gain { int num, den; };

static struct gain gain_of(const struct allot_job *j)
{
    int c = j->count;
    if (j->shape != ALLOT_UNTOLD && j->background)
        return (struct gain){ 1, 1 }; /* it ends when the others do, whatever it holds */
    if (j->shape != ALLOT_ROUNDS || !fold_units(j))
        return (struct gain){ c + 1, c };
    int u = fold_units(j);
    return c == 0 ? (struct gain){ 1, 0 } : (struct gain){ ceil_div(u, c), ceil_div(u, c + 1) };
}

/* The part of a gain a job turns into progress: its efficiency (allot.h .eff, per mille; untold: all). */
static long eff_of(const struct allot_job *j) { return j->shape == ALLOT_UNTOLD || j->eff <= 0 ? 1000 : j->eff; }

/* j gains more from one more hart than k: speed after / before, less 1, times the efficiency (Brecht and
   Guha 1996's efficiency-driven allocation; equal efficiencies compare the gains alone). A job that cannot run
   without it (den 0) first. */
static int gains_more(const struct allot_job *j, const struct allot_job *k)
{
    struct gain a = gain_of(j), b = gain_of(k);
    if (!a.den || !b.den)
        return !a.den && b.den;
    return eff_of(j) * (a.num - a.den) * b.den > eff_of(k) * (b.num - b.den) * a.den;
}

/* Give j as many of `left` harts as bring its rounds down to the next z-rule fixed point, if they do. */
static void rounds_down(struct allot_job *j, int *left)
{
    int u = fold_units(j);
    if (!u || j->count >= u)
        return;
    int rounds = ceil_div(u, j->count), k = 1;
    while (k <= *left && ceil_div(u, j->count + k) >= rounds)
        k++;
    if (k <= *left) {
        j->count += k;
        *left -= k;
    }
}

/* Water-filling: repeatedly share what is left equally among the jobs that want more. */
static int fair_shares(int nharts, struct allot_job *jobs, int njobs)
{
    int left = nharts;
    for (;;) {
        int active = 0;
        for (int i = 0; i < njobs; i++)
            active += jobs[i].count < jobs[i].procs;
        if (active == 0 || left < active)
            break;
        int share = left / active;
        for (int i = 0; i < njobs; i++) {
            int give = jobs[i].procs - jobs[i].count;
            if (give > 0) {
                give = give < share ? give : share;
                jobs[i].count += give;
                left -= give;
            }
        }
    }
    /* the remainder (fewer harts than jobs that want more): one each, to the jobs that gain most from it,
       ties in arrival order (untold shapes: arrival order) */
    uint64_t got = 0;
    for (; left > 0; left--) {
        int best = -1;
        for (int i = 0; i < njobs && i < 64; i++)
            if (jobs[i].count < jobs[i].procs && !(got >> i & 1) &&
                (best < 0 || gains_more(&jobs[i], &jobs[best])))
                best = i;
        if (best < 0)
            break;
        jobs[best].count++;
        got |= 1ULL << best;
    }
    return left;
}

/* One hart at a time, round robin in arrival order, to the adaptive jobs that want more: those any hart
   helps (untold, or linear and not background), or with `all` every one. */
static void round_robin(struct allot_job *jobs, int njobs, int *left, int all)
{
    for (int more = 1; *left > 0 && more;) {
        more = 0;
        for (int i = 0; i < njobs && *left > 0; i++) {
            struct allot_job *j = &jobs[i];
            int later = fold_units(j) || (j->shape != ALLOT_UNTOLD && j->background);
            if (j->adaptive && j->count < j->procs && (all || !later)) {
                j->count++;
                --*left;
                more = 1;
            }
        }
    }
}

/* Hand out harts the z-rule left over: jobs any hart helps first (adaptive, untold or linear: one at a
   time, round robin in arrival order; told background jobs wait), then a job of rounds only as many as
   bring its rounds down (the next z-rule fixed point), then - a hart that ends nothing sooner is still
   better run than idle - back to the adaptive jobs the z-rule took them from (`fair`: their counts before
   it), and then one at a time to the adaptive jobs left that can take one. Back first, because no job
   gains from such a hart by the rounds model, and the model is not exact where it counts: a folded job's
   units are not equal work (gauss's rows), so the job it was taken from may still use it, and moving it
   costs both jobs a repartition (simulated, 16 harts, oddeven, gauss n=768 and a hog: gauss's fifth hart
   went to oddeven, 7, 4, 5 harts, and both ran longer, 63.3 and 170.8 ms against 62.8 and 165.1). */
static void redistribute(struct allot_job *jobs, int njobs, int left, const int *fair)
{
    round_robin(jobs, njobs, &left, 0);
    for (int i = 0; i < njobs && left > 0; i++)
        rounds_down(&jobs[i], &left);
    for (int i = 0; i < njobs && left > 0; i++)
        while (left > 0 && jobs[i].adaptive && jobs[i].count < fair[i]) {
            jobs[i].count++;
            left--;
        }
    round_robin(jobs, njobs, &left, 1);
}

/* Which harts: each job keeps what it may of its previous harts, then takes the lowest free ones. */
static void place(int nharts, struct allot_job *jobs, int njobs)
{
    uint64_t all = nharts == 64 ? ~0ULL : (1ULL << nharts) - 1, taken = 0;
    for (int i = 0; i < njobs; i++) {
        uint64_t keep = jobs[i].prev & all & ~taken;
        for (int h = 63; popcount64(keep) > jobs[i].count; h--)
            keep &= ~(1ULL << h); /* drop the highest */
        jobs[i].mask = keep;
        taken |= keep;
    }
    for (int i = 0; i < njobs; i++)
        for (int h = 0; h < nharts && popcount64(jobs[i].mask) < jobs[i].count; h++)
            if (!(taken >> h & 1)) {
                jobs[i].mask |= 1ULL << h;
                taken |= 1ULL << h;
            }
}

void allot_compute(int nharts, struct allot_job *jobs, int njobs)
{
    for (int i = 0; i < njobs; i++) {
        jobs[i].count = 0;
        jobs[i].mask = 0;
    }
    if (njobs > nharts) { /* time-sliced one-hart partitions */
        for (int i = 0; i < njobs; i++) {
            jobs[i].count = 1;
            jobs[i].mask = 1ULL << (i % nharts);
        }
        return;
    }
    int left = fair_shares(nharts, jobs, njobs), fair[ALLOT_MAX_JOBS]; /* njobs <= nharts <= 64 here */
    for (int i = 0; i < njobs; i++)
        fair[i] = jobs[i].count;
    for (int i = 0; i < njobs; i++)
        if (fold_units(&jobs[i]) && jobs[i].count > 0) {
            int z = allot_zrule(jobs[i].count, fold_units(&jobs[i]));
            left += jobs[i].count - z;
            jobs[i].count = z;
        }
    redistribute(jobs, njobs, left, fair);
    place(nharts, jobs, njobs);
}

int allot_wake_hart(uint64_t share, uint64_t busy, int own)
{
    uint64_t empty = share & ~busy;
    if (own >= 0 && own < 64 && (share >> own & 1) && (!(busy >> own & 1) || !empty))
        return own;
    for (int h = 0; h < 64; h++)
        if (empty >> h & 1)
            return h;
    return -1;
}
