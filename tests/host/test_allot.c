/*
 * test_allot.c - host unit tests of the partition arithmetic (kernel/sched/allot.c): fair shares, caps,
 * the z-rule, remainders, more jobs than harts, keeping harts across repartitions, and the told speedup
 * shapes (policy=adaptive: rounds, linear, background).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "sched/allot.h"

static struct allot_job jobs[ALLOT_MAX_JOBS];

static void setup(int n, const int *procs, const int *adaptive)
{
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < n; i++) {
        jobs[i].procs = procs[i];
        jobs[i].adaptive = adaptive ? adaptive[i] : 1;
    }
}

static int counts_are(int n, const int *want)
{
    for (int i = 0; i < n; i++)
        if (jobs[i].count != want[i]) {
            fprintf(stderr, "  job %d got %d, expected %d\n", i, jobs[i].count, want[i]);
            return 0;
        }
    return 1;
}

/* masks disjoint (when njobs <= nharts), within the harts, popcount = count */
static int masks_ok(int nharts, int n)
{
    uint64_t seen = 0, all = nharts == 64 ? ~0ULL : (1ULL << nharts) - 1;
    for (int i = 0; i < n; i++) {
        if (__builtin_popcountll(jobs[i].mask) != jobs[i].count || (jobs[i].mask & ~all))
            return 0;
        if (n <= nharts && (seen & jobs[i].mask))
            return 0;
        seen |= jobs[i].mask;
    }
    return 1;
}

static void test_zrule(void)
{
    /* the paper's definition, by brute force */
    for (int y = 1; y <= 40; y++)
        for (int x = 1; x <= 40; x++) {
            int r = (y + x - 1) / x, z = 1;
            while ((y + z - 1) / z != r)
                z++;
            CHECK(allot_zrule(x, y) == z);
        }
    CHECK(allot_zrule(3, 4) == 2);     /* 4 processes on 3 harts need 2 rounds anyway: 2 harts do */
    CHECK(allot_zrule(8, 16) == 8);
    CHECK(allot_zrule(5, 16) == 4);    /* 16 on 5: 4 rounds, and 4 harts give 4 rounds */
}

static void test_fair_and_caps(void)
{
    int p[] = { 16, 16, 16 };
    setup(3, p, NULL);
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 3, 3, 2 }));          /* 8/3: remainder to the earliest arrivals */
    CHECK(masks_ok(8, 3));

    int q[] = { 1, 16, 2 };                             /* small jobs leave their share to the big one */
    setup(3, q, NULL);
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 1, 5, 2 }));
    CHECK(masks_ok(8, 3));

    int r[] = { 2, 2 };                                 /* never more than requested: harts stay free */
    setup(2, r, NULL);
    allot_compute(8, jobs, 2);
    CHECK(counts_are(2, (int[]){ 2, 2 }));

    int one[] = { 4 };
    setup(1, one, NULL);
    allot_compute(4, jobs, 1);
    CHECK(counts_are(1, (int[]){ 4 }) && jobs[0].mask == 0xf);

    /* Tucker & Gupta's worked example: 6 harts, 3 applications -> 2 each */
    int tg[] = { 4, 2, 8 };
    setup(3, tg, NULL);
    allot_compute(6, jobs, 3);
    CHECK(counts_are(3, (int[]){ 2, 2, 2 }));
}

static void test_at_least_one(void)
{
    int p[] = { 5, 5, 5, 5 };
    setup(4, p, NULL);
    allot_compute(4, jobs, 4);
    CHECK(counts_are(4, (int[]){ 1, 1, 1, 1 }) && masks_ok(4, 4));
}

static void test_nonadaptive_zrule(void)
{
    /* 8 harts, two jobs of 6 non-adaptive processes: fair share 4 each; ceil(6/4) = 2 and 3 harts give 2
       rounds too, so each takes 3; the 2 harts left help neither (3 -> 4 keeps 2 rounds) */
    int p[] = { 6, 6 };
    int a[] = { 0, 0 };
    setup(2, p, a);
    allot_compute(8, jobs, 2);
    CHECK(counts_are(2, (int[]){ 3, 3 }) && masks_ok(8, 2));

    /* a non-adaptive job's leftover goes to an adaptive one */
    int p2[] = { 6, 16 };
    int a2[] = { 0, 1 };
    setup(2, p2, a2);
    allot_compute(8, jobs, 2);
    CHECK(counts_are(2, (int[]){ 3, 5 }));

    /* leftover harts that bring a non-adaptive job's rounds down are given: 16 procs, 5 harts alone -> 4
       (4 rounds); with a 1-proc job taking 1 of 6 harts: 5 -> z 4, and the spare hart helps no one */
    int p3[] = { 16, 1 };
    int a3[] = { 0, 1 };
    setup(2, p3, a3);
    allot_compute(6, jobs, 2);
    CHECK(counts_are(2, (int[]){ 4, 1 }));
    /* 7 harts: the fair share is 6, z = 6 (3 rounds); no more harts to get to 2 rounds (8) */
    setup(2, p3, a3);
    allot_compute(7, jobs, 2);
    CHECK(counts_are(2, (int[]){ 6, 1 }));
}

static void test_more_jobs_than_harts(void)
{
    int p[] = { 2, 2, 2, 2, 2 };
    setup(5, p, NULL);
    allot_compute(2, jobs, 5);
    CHECK(counts_are(5, (int[]){ 1, 1, 1, 1, 1 }));
    CHECK(jobs[0].mask == 1 && jobs[1].mask == 2 && jobs[2].mask == 1 && jobs[3].mask == 2 && jobs[4].mask == 1);
    CHECK(masks_ok(2, 5));
}

static void test_keeps_harts(void)
{
    /* a job alone on 4 harts; a second arrives: the first keeps its lowest two, the newcomer takes 2,3 */
    int p[] = { 4, 4 };
    setup(1, p, NULL);
    allot_compute(4, jobs, 1);
    CHECK(jobs[0].mask == 0xf);
    jobs[1].procs = 4;
    jobs[1].adaptive = 1;
    jobs[1].prev = 0;
    jobs[0].prev = jobs[0].mask;
    allot_compute(4, jobs, 2);
    CHECK(jobs[0].mask == 0x3 && jobs[1].mask == 0xc);
    /* the first leaves: the second keeps 2,3 and grows into 0,1 */
    jobs[0] = jobs[1];
    jobs[0].prev = jobs[0].mask;
    allot_compute(4, jobs, 1);
    CHECK(jobs[0].mask == 0xf);
    /* three jobs, the middle one leaves: the others keep every hart they had */
    int q[] = { 2, 2, 2 };
    setup(3, q, NULL);
    allot_compute(6, jobs, 3);
    uint64_t m0 = jobs[0].mask, m2 = jobs[2].mask;
    jobs[0].prev = m0;
    jobs[1] = jobs[2];
    jobs[1].prev = m2;
    allot_compute(6, jobs, 2);
    CHECK(jobs[0].mask == m0 && jobs[1].mask == m2);
}

/* Jobs 0 and 1 of `harts` synchronizing workers each (rounds), job 2 stealing threads (linear), on `harts`. */
static void two_worker_jobs_and_a_stealer(int harts, const int *procs)
{
    setup(3, procs, NULL);
    for (int i = 0; i < 2; i++)
        jobs[i].shape = ALLOT_ROUNDS, jobs[i].units = harts;
    jobs[2].shape = ALLOT_LINEAR;
    allot_compute(harts, jobs, 3);
}

/* Told shapes (policy=adaptive): the remainder goes where it takes most time off, a rounds job keeps only
   harts that take a round off, a background job comes last, and no hart idles while an adaptive job wants one. */
static void test_shapes(void)
{
    int p8[] = { 8, 8, 8 }, p16[] = { 16, 16, 16 };
    /* two jobs of 8 synchronizing workers and a stealing one on 8 harts: 2 each, then the stealer gains 3/2
       from a third hart, the workers 4/3 (4 rounds to 3) */
    setup(3, p8, NULL);
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 3, 3, 2 })); /* untold: arrival order, the partition policy's rule */
    two_worker_jobs_and_a_stealer(8, p8);
    CHECK(counts_are(3, (int[]){ 3, 2, 3 }) && masks_ok(8, 3));
    /* 16 harts, 16 workers: 5 each and one left (6/5 for the stealer, 4 rounds to 3 for a worker job); the
       z-rule takes the second worker job's fifth hart (16 on 5 is 4 rounds, as on 4) to the stealer */
    two_worker_jobs_and_a_stealer(16, p16);
    CHECK(counts_are(3, (int[]){ 6, 4, 6 }) && masks_ok(16, 3));
    /* a background job first in arrival order gets the remainder last */
    setup(3, p8, NULL);
    for (int i = 0; i < 3; i++)
        jobs[i].shape = ALLOT_LINEAR;
    jobs[0].background = 1;
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 2, 3, 3 }));
    jobs[0].shape = jobs[1].shape = jobs[2].shape = ALLOT_UNTOLD; /* untold: it is just the first */
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 3, 3, 2 }));
    /* the remainder by efficiency, not arrival: three linear jobs on 8 harts, the first two wasting half
       their harts - the two spare harts go to the last one and the second-best of the others */
    setup(3, p8, NULL);
    for (int i = 0; i < 3; i++)
        jobs[i].shape = ALLOT_LINEAR;
    jobs[0].eff = 400, jobs[1].eff = 500, jobs[2].eff = 900;
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 2, 3, 3 }));
    jobs[0].eff = jobs[1].eff = jobs[2].eff = 0; /* not measured: all, arrival order among equals */
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 3, 3, 2 }));
    /* efficiency weights the gain, it does not replace it: a rounds job whose next hart takes a round off
       (4 to 3: +33 %) at 60 % still beats a linear one's third hart (+50 %) at 30 % */
    two_worker_jobs_and_a_stealer(8, p8);
    jobs[0].eff = jobs[1].eff = 600, jobs[2].eff = 300;
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 3, 3, 2 }));
    jobs[2].eff = 0;
    allot_compute(8, jobs, 3);
    CHECK(counts_are(3, (int[]){ 3, 2, 3 }));
    /* harts that take no round off still run: two 8-worker jobs on 10 harts fold to 4 each (2 rounds), 2
       harts cannot make a round, and they go back rather than idle */
    int p2[] = { 8, 8 };
    setup(2, p2, NULL);
    for (int i = 0; i < 2; i++)
        jobs[i].shape = ALLOT_ROUNDS, jobs[i].units = 8;
    allot_compute(10, jobs, 2);
    CHECK(counts_are(2, (int[]){ 5, 5 }));
    allot_compute(12, jobs, 2); /* 4 more make the first one round */
    CHECK(counts_are(2, (int[]){ 8, 4 }));
    /* a hart the z-rule takes that buys nobody a round goes back where it was, not to the first job: two
       16-worker jobs and a background one on 16 harts, 6, 5, 5 (the second's fifth takes no round off, and
       the first would need two more for one); it went to the first, 7, 4, 5 */
    int p3[] = { 16, 16, 16 };
    setup(3, p3, NULL);
    for (int i = 0; i < 2; i++)
        jobs[i].shape = ALLOT_ROUNDS, jobs[i].units = 16;
    jobs[2].shape = ALLOT_LINEAR, jobs[2].background = 1;
    allot_compute(16, jobs, 3);
    CHECK(counts_are(3, (int[]){ 6, 5, 5 }) && masks_ok(16, 3));
    /* units beyond its processes count as its processes; rounds of no units are nothing known */
    setup(2, p2, NULL);
    jobs[0].shape = ALLOT_ROUNDS, jobs[0].units = 1000;
    jobs[1].shape = ALLOT_ROUNDS, jobs[1].units = 0;
    allot_compute(6, jobs, 2);
    CHECK(counts_are(2, (int[]){ 3, 3 }));
}

/* Where a woken process waits: home unless it doubles up while a hart of the share is empty. */
static void test_wake_hart(void)
{
    CHECK(allot_wake_hart(0xf0, 0x00, 5) == 5);  /* alone at home */
    CHECK(allot_wake_hart(0xf0, 0x20, 5) == 4);  /* another is at home, hart 4 has none */
    CHECK(allot_wake_hart(0xf0, 0xf0, 5) == 5);  /* every hart busy: time-sharing, it stays */
    CHECK(allot_wake_hart(0xf0, 0x10, 2) == 5);  /* home outside the share: the lowest empty hart */
    CHECK(allot_wake_hart(0xf0, 0xf0, 2) == -1); /* ... none empty: the caller picks by load */
    CHECK(allot_wake_hart(0xf0, 0x00, -1) == 4); /* no home yet */
    CHECK(allot_wake_hart(~0ULL, ~0ULL >> 1, 63) == 63);
}

/* random: sums within the harts, caps, at least one, masks consistent, deterministic */
static void test_random(void)
{
    unsigned seed = 7;
    int bad = 0;
    for (int round = 0; round < 3000 && !bad; round++) {
        int nharts = 1 + rand_r(&seed) % 64, n = 1 + rand_r(&seed) % 12;
        struct allot_job a[12], b[12];
        for (int i = 0; i < n; i++) {
            a[i] = (struct allot_job){ .procs = 1 + rand_r(&seed) % 70, .adaptive = rand_r(&seed) % 2,
                                       .prev = ((uint64_t)rand_r(&seed) << 32 | rand_r(&seed)) };
            if (round % 2) /* told shapes, as policy=adaptive tells them */
                a[i].shape = (enum allot_shape)(rand_r(&seed) % 3), a[i].units = rand_r(&seed) % 80,
                a[i].background = rand_r(&seed) % 4 == 0;
        }
        /* previous masks must be disjoint, as they were in a real partition */
        uint64_t seen = 0;
        for (int i = 0; i < n; i++) {
            a[i].prev &= ~seen;
            seen |= a[i].prev;
        }
        memcpy(b, a, sizeof a);
        allot_compute(nharts, a, n);
        allot_compute(nharts, b, n);
        int sum = 0;
        for (int i = 0; i < n; i++) {
            sum += a[i].count;
            bad |= a[i].count < 1 || (n <= nharts && a[i].count > a[i].procs) || a[i].mask != b[i].mask;
            if (!a[i].adaptive && n <= nharts)
                bad |= allot_zrule(a[i].count, a[i].procs) != a[i].count;
        }
        bad |= n <= nharts && sum > nharts;
        for (int i = 0; i < n && n <= nharts; i++) /* no hart idles while an adaptive job wants one */
            bad |= a[i].adaptive && a[i].count < a[i].procs && sum < nharts;
        memcpy(jobs, a, sizeof a);
        bad |= !masks_ok(nharts, n);
    }
    CHECK(!bad);
}

int main(void)
{
    test_zrule();
    test_fair_and_caps();
    test_at_least_one();
    test_nonadaptive_zrule();
    test_more_jobs_than_harts();
    test_keeps_harts();
    test_shapes();
    test_wake_hart();
    test_random();
    return check_done("test_allot");
}
