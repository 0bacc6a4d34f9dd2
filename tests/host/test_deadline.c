/*
 * test_deadline.c - host unit tests of the kernel's deadline queue (kernel/deadline.c): firing order
 * (earliest first, FIFO among equal times), cancel and re-arm, callbacks that arm entries (their own again,
 * for a time already due) while the queue runs, when the core's deadline_moved hook is called, and many
 * entries under random arms and cancels checked against a reference model.
 *
 * deadline.c is built as the simulator builds kernel code (-DSCHEDLAB_SIM: tools/sim/sim_arch.h gives
 * read_tp, the hart a lock records as its holder); this test is one hart, sim_tp, that it changes to play
 * another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kernel.h"
#include "deadline.h"

uintptr_t sim_tp = 1;
uint64_t sim_now;
int clock_virtual;
void vclock_handover(int drawn) { (void)drawn; }

/* One hart: a lock found taken is a lock the queue failed to release (or took twice). */
void spin_acquire_contended(struct spinlock *l)
{
    fprintf(stderr, "lock %s taken while held\n", l->name);
    abort();
}

void spin_panic(const struct spinlock *l, const char *what)
{
    fprintf(stderr, "lock %s: %s\n", l->name, what);
    abort();
}

/* ---- a record of what fired ---- */

#define NENT 1000
static struct deadline ents[NENT];
static int fired[4 * NENT], nfired;
static uint64_t fired_now[4 * NENT];

static void record(struct deadline *d, uint64_t now)
{
    fired_now[nfired] = now;
    fired[nfired++] = (int)(d - ents);
}

static int moved_calls;
static void count_moved(void) { moved_calls++; }

static void reset(void)
{
    for (int i = 0; i < NENT; i++)
        deadline_cancel(&ents[i]);
    for (int i = 0; i < NENT; i++)
        ents[i] = (struct deadline)DEADLINE_INIT("test", record);
    nfired = 0;
    moved_calls = 0;
    deadline_moved = count_moved;
    sim_tp = 1;
}

static void test_order_and_equal_times(void)
{
    reset();
    CHECK(deadline_next() == DEADLINE_NONE);
    deadline_run(1000); /* nothing armed: nothing fires */
    CHECK(nfired == 0);
    uint64_t when[] = { 50, 10, 30, 10, 20, 30, 10 };
    for (int i = 0; i < 7; i++)
        deadline_arm(&ents[i], when[i]);
    CHECK(deadline_next() == 10);
    deadline_run(9); /* nothing due yet */
    CHECK(nfired == 0 && deadline_next() == 10);
    deadline_run(20); /* the three at 10 in the order they were armed, then 20 */
    CHECK(nfired == 4 && fired[0] == 1 && fired[1] == 3 && fired[2] == 6 && fired[3] == 4);
    CHECK(fired_now[0] == 20 && !ents[1].armed && ents[2].armed);
    CHECK(deadline_next() == 30);
    deadline_run(100);
    CHECK(nfired == 7 && fired[4] == 2 && fired[5] == 5 && fired[6] == 0);
    CHECK(deadline_next() == DEADLINE_NONE);
}

static void test_cancel_and_rearm(void)
{
    reset();
    deadline_arm(&ents[0], 10);
    deadline_arm(&ents[1], 20);
    deadline_arm(&ents[2], 30);
    deadline_cancel(&ents[0]); /* the first: the next deadline moves later */
    CHECK(!ents[0].armed && deadline_next() == 20);
    deadline_cancel(&ents[0]); /* not armed: nothing */
    CHECK(deadline_next() == 20);
    deadline_arm(&ents[2], 5); /* re-armed earlier: moves to the front, is on the list once */
    CHECK(deadline_next() == 5);
    deadline_arm(&ents[2], 25); /* and later again */
    CHECK(deadline_next() == 20);
    deadline_arm(&ents[1], 25); /* the same time as 2, armed after it: fires after it */
    deadline_run(100);
    CHECK(nfired == 2 && fired[0] == 2 && fired[1] == 1);
    deadline_cancel(&ents[1]); /* fired: disarmed already */
    CHECK(deadline_next() == DEADLINE_NONE);
}

/* The callbacks that arm while the queue runs. */
static int repeats;
static void again(struct deadline *d, uint64_t now)
{
    record(d, now);
    if (++repeats < 3)
        deadline_arm(d, now); /* already due: fires again in the same run */
}

static void arm_other(struct deadline *d, uint64_t now)
{
    record(d, now);
    deadline_arm(&ents[1], now + 1);  /* due later: stays armed */
    deadline_arm(&ents[2], now - 1);  /* due: fires in this run */
}

static void test_callbacks_arm_while_running(void)
{
    reset();
    repeats = 0;
    ents[0].fire = again;
    deadline_arm(&ents[0], 7);
    moved_calls = 0;
    deadline_run(7);
    CHECK(nfired == 3 && fired[0] == 0 && fired[2] == 0 && !ents[0].armed);
    CHECK(moved_calls == 0); /* the running hart re-arms its timer after deadline_run */

    reset();
    ents[0].fire = arm_other;
    deadline_arm(&ents[0], 100);
    deadline_run(100);
    CHECK(nfired == 2 && fired[0] == 0 && fired[1] == 2);
    CHECK(ents[1].armed && deadline_next() == 101);
}

static void test_moved_hook(void)
{
    reset();
    deadline_arm(&ents[0], 100); /* newly armed */
    CHECK(moved_calls == 1);
    deadline_arm(&ents[0], 200); /* later: the timer fires early at worst and finds nothing due */
    CHECK(moved_calls == 1);
    deadline_arm(&ents[0], 50); /* earlier */
    CHECK(moved_calls == 2);
    deadline_arm(&ents[1], 300); /* newly armed, not the first: still called (see deadline.h) */
    CHECK(moved_calls == 3);
    deadline_cancel(&ents[0]);
    CHECK(moved_calls == 3 && deadline_next() == 300);
    deadline_moved = 0; /* before the core installs it: arming works, nothing is called */
    deadline_arm(&ents[2], 10);
    CHECK(deadline_next() == 10 && moved_calls == 3);
}

/* Another hart arms while the queue runs on this one: that one must be told. */
static void arm_as_other_hart(struct deadline *d, uint64_t now)
{
    record(d, now);
    sim_tp = 2;
    deadline_arm(&ents[1], now + 10);
    sim_tp = 1;
}

static void test_other_hart_arms_during_run(void)
{
    reset();
    ents[0].fire = arm_as_other_hart;
    deadline_arm(&ents[0], 5);
    moved_calls = 0;
    deadline_run(5);
    CHECK(nfired == 1 && moved_calls == 1 && deadline_next() == 15);
    /* after the run, this hart's own arms call it again */
    deadline_arm(&ents[2], 12);
    CHECK(moved_calls == 2);
}

/* ---- many entries against a reference ---- */

static uint64_t ref_when[NENT];
static long ref_seq[NENT]; /* arm order, for FIFO among equal times; -1: not armed */

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* The armed entry the reference fires next (earliest time, then earliest arm), or -1. */
static int ref_first(void)
{
    int best = -1;
    for (int i = 0; i < NENT; i++)
        if (ref_seq[i] >= 0 &&
            (best < 0 || ref_when[i] < ref_when[best] || (ref_when[i] == ref_when[best] && ref_seq[i] < ref_seq[best])))
            best = i;
    return best;
}

static void test_many_entries(void)
{
    reset();
    long seq = 0;
    for (int i = 0; i < NENT; i++)
        ref_seq[i] = -1;
    uint64_t now = 0;
    int bad_next = 0, bad_order = 0, total = 0;
    for (int round = 0; round < 200; round++) {
        for (int k = 0; k < 40; k++) { /* arm, re-arm or cancel at random; times collide often */
            int i = (int)(rnd() % NENT);
            if (rnd() % 4 == 0) {
                deadline_cancel(&ents[i]);
                ref_seq[i] = -1;
            } else {
                uint64_t w = now + rnd() % 64;
                deadline_arm(&ents[i], w);
                ref_when[i] = w;
                ref_seq[i] = seq++;
            }
        }
        int f = ref_first();
        bad_next += deadline_next() != (f < 0 ? DEADLINE_NONE : ref_when[f]);
        now += rnd() % 24;
        nfired = 0;
        deadline_run(now);
        for (int n = 0; n < nfired; n++, total++) {
            f = ref_first();
            bad_order += f != fired[n] || ref_when[f] > now;
            if (f >= 0)
                ref_seq[f] = -1;
        }
        f = ref_first();
        bad_order += f >= 0 && ref_when[f] <= now; /* something due was left */
    }
    CHECK(bad_next == 0);
    CHECK(bad_order == 0);
    CHECK(total > 1000); /* the run fired plenty */
    int armed = 0;
    for (int i = 0; i < NENT; i++)
        armed += ents[i].armed != 0, bad_order += (ents[i].armed != 0) != (ref_seq[i] >= 0);
    CHECK(bad_order == 0 && armed > 0);
    nfired = 0;
    deadline_run(DEADLINE_NONE - 1); /* everything left fires, in order */
    CHECK(nfired == armed && deadline_next() == DEADLINE_NONE);
    for (int n = 1; n < nfired; n++)
        CHECK(ref_when[fired[n - 1]] < ref_when[fired[n]] ||
              (ref_when[fired[n - 1]] == ref_when[fired[n]] && ref_seq[fired[n - 1]] < ref_seq[fired[n]]));
}

int main(void)
{
    test_order_and_equal_times();
    test_cancel_and_rearm();
    test_callbacks_arm_while_running();
    test_moved_hook();
    test_other_hart_arms_during_run();
    test_many_entries();
    return check_done("test_deadline");
}
