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
    /* the remainder: one each, in arrival order */
    for (int i = 0; i < njobs && left > 0; i++)
        if (jobs[i].count < jobs[i].procs) {
            jobs[i].count++;
            left--;
        }
    return left;
}

/* Hand out harts the z-rule left over: adaptive jobs first (one at a time, round robin in arrival order),
   then a non-adaptive job only as many as bring its rounds down (the next z-rule fixed point). */
static void redistribute(struct allot_job *jobs, int njobs, int left)
{
    for (int more = 1; left > 0 && more;) {
        more = 0;
        for (int i = 0; i < njobs && left > 0; i++)
            if (jobs[i].adaptive && jobs[i].count < jobs[i].procs) {
                jobs[i].count++;
                left--;
                more = 1;
            }
    }
    for (int i = 0; i < njobs && left > 0; i++) {
        struct allot_job *j = &jobs[i];
        if (j->adaptive || j->count >= j->procs)
            continue;
        int rounds = ceil_div(j->procs, j->count), k = 1;
        while (k <= left && ceil_div(j->procs, j->count + k) >= rounds)
            k++;
        if (k <= left) {
            j->count += k;
            left -= k;
        }
    }
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
    int left = fair_shares(nharts, jobs, njobs);
    for (int i = 0; i < njobs; i++)
        if (!jobs[i].adaptive) {
            int z = allot_zrule(jobs[i].count, jobs[i].procs);
            left += jobs[i].count - z;
            jobs[i].count = z;
        }
    redistribute(jobs, njobs, left);
    place(nharts, jobs, njobs);
}
