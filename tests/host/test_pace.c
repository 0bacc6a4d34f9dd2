/* Unit tests of the paced hart's schedule (tools/model/pace.c) with a fake clock: a hart that runs faster than R
   is told to sleep exactly its lead, a hart that keeps pace sleeps and loses nothing, a hart that falls behind by
   more than the bound is one fidelity event (counted for the hart and its job, its lag added up, no catching
   up), an idle wait resynchronises without an event, and cycles turn into time exactly over any sum. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "pace.h"

static const struct pace P10M = { 10000000, 200000, 500000 }; /* 10 M instructions/s: 100 ns each */

static void test_exact_cycles(void)
{
    uint64_t rem = 0, ps = 0;
    for (int i = 0; i < 3000; i++)
        ps += pace_cycles_ps(1, 3000000, &rem); /* 333333.33 ps each */
    CHECK(ps == 1000000000ULL && rem == 0);       /* 3000 cycles at 3 M/s: exactly 1 ms */
    rem = 0;
    CHECK(pace_cycles_ps(10000000, 10000000, &rem) == 1000000000000ULL && rem == 0);
    srand(3);
    for (int k = 0; k < 1000; k++) { /* any split of n cycles sums to the same time as n at once */
        uint64_t rate = 1000 + (uint64_t)rand() * 7919 % 5000000000ULL, n = 0, sum = 0;
        rem = 0;
        for (int i = 0; i < 50; i++) {
            uint64_t c = (uint64_t)(rand() % 100000);
            n += c;
            sum += pace_cycles_ps(c, rate, &rem);
        }
        uint64_t rem1 = 0;
        if (pace_cycles_ps(n, rate, &rem1) != sum || rem1 != rem) {
            CHECK(0);
            return;
        }
    }
    CHECK(1);
}

static void test_ahead_sleeps_its_lead(void)
{
    struct pace_hart h;
    memset(&h, 0, sizeof h);
    CHECK(pace_check(&h, &P10M, 5000, P10M.lead_ns, 0) == 0); /* first check: starts at the wall */
    CHECK(h.model_ps == 5000000);
    pace_add(&h, 1000, 0); /* 100 us of model time after 0 wall: below the lead, no sleep yet */
    CHECK(pace_check(&h, &P10M, 5000, P10M.lead_ns, 0) == 0);
    pace_add(&h, 2000, 500); /* 250 us more, 50 of them a stall: 350 us ahead */
    CHECK(pace_check(&h, &P10M, 5000, P10M.lead_ns, 0) == 350000);
    CHECK(pace_check(&h, &P10M, 5000, 0, 0) == 350000); /* lead 0 (a reading of the clock): any lead */
    CHECK(h.insns == 3000 && h.stall_cycles == 500 && h.count.events == 0);
}

static void test_keeping_pace_loses_nothing(void)
{
    struct pace_hart h;
    memset(&h, 0, sizeof h);
    uint64_t wall = 0, slept = 0;
    pace_check(&h, &P10M, wall, P10M.lead_ns, 0);
    for (int i = 0; i < 100000; i++) { /* a host 20x faster than R: 500 instructions in 2.5 us */
        pace_add(&h, 500, 0);
        wall += 2500;
        uint64_t s = pace_check(&h, &P10M, wall, P10M.lead_ns, 0);
        wall += s, slept += s;
        if (h.model_ps > (wall + P10M.lead_ns) * 1000 + 50000000) { /* never more than lead + a chunk ahead */
            CHECK(0);
            return;
        }
    }
    CHECK(h.count.events == 0 && h.count.lag_ns == 0);
    CHECK(h.model_ps / 1000 == 5000000000ULL);    /* 50 M instructions: 5 s of model time */
    CHECK(wall >= 4800000000ULL && wall <= 5000000000ULL && slept > 4000000000ULL);
}

static void test_behind_is_an_event(void)
{
    struct pace_hart h;
    struct pace_count job = { 0, 0 };
    memset(&h, 0, sizeof h);
    pace_check(&h, &P10M, 0, P10M.lead_ns, &job);
    pace_add(&h, 1000, 0);                              /* 100 us of work took 400 us: behind, within bound */
    CHECK(pace_check(&h, &P10M, 400000, P10M.lead_ns, &job) == 0 && h.count.events == 0);
    CHECK(h.model_ps == 100000000);                     /* catching up is allowed below the bound */
    pace_add(&h, 1000, 0);                              /* now 2 ms behind: an event, lag counted */
    CHECK(pace_check(&h, &P10M, 2200000, P10M.lead_ns, &job) == 0);
    CHECK(h.count.events == 1 && h.count.lag_ns == 2000000 && job.events == 1 && job.lag_ns == 2000000);
    CHECK(h.model_ps == 2200000000ULL);                 /* moved to the wall: the lost time is not made up */
    pace_add(&h, 100, 0);
    CHECK(pace_check(&h, &P10M, 2200000, P10M.lead_ns, 0) == 0 && h.count.events == 1);
}

static void test_idle_resynchronises(void)
{
    struct pace_hart h;
    memset(&h, 0, sizeof h);
    pace_check(&h, &P10M, 0, P10M.lead_ns, 0);
    pace_add(&h, 100, 0);
    h.idle = 1;                                         /* waited 50 ms for an interrupt */
    CHECK(pace_check(&h, &P10M, 50000000, P10M.lead_ns, 0) == 0);
    CHECK(h.count.events == 0 && h.model_ps == 50000000000ULL && !h.idle);
    h.idle = 1;                                         /* an idle that did not wait: the lead is kept */
    pace_add(&h, 3000, 0);
    CHECK(pace_check(&h, &P10M, 50000000, P10M.lead_ns, 0) == 300000);
}

static void test_rates(void)
{
    char err[160];
    CHECK(pace_rate_ok(10000000, err, sizeof err) == 0);
    CHECK(pace_rate_ok(PACE_RATE_MIN, err, sizeof err) == 0 && pace_rate_ok(PACE_RATE_MAX, err, sizeof err) == 0);
    CHECK(pace_rate_ok(0, err, sizeof err) == -1 && strstr(err, "pace=0 is out of range"));
    CHECK(pace_rate_ok(PACE_RATE_MAX + 1, err, sizeof err) == -1);
}

int main(void)
{
    test_exact_cycles();
    test_ahead_sleeps_its_lead();
    test_keeping_pace_loses_nothing();
    test_behind_is_an_event();
    test_idle_resynchronises();
    test_rates();
    return check_done("test_pace");
}
