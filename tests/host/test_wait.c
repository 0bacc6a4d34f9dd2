/* test_wait.c - the wait layer on its own (lib/wait/ over lib/base/ and the host platform, nothing above:
   tests/host/host.mk links LIB_WAIT_SRC only, so a call from the wait layer up into the thread layer
   fails this build). Processes hand a token round a ring with every wait kind, on words changed by
   sl_wait_set and sl_wait_add; without a thread layer no caller is a thread (sl_wait_pauser is NULL)
   and the sleeping kinds sleep as processes. This file plays the kernel (hostjob.h). The adaptive kind's
   bounded spin (sl_wait_adaptive_spin), which the host's adaptive wait does not take (running[] is not
   exact there), is checked on its own against stand-in evidence (adaptive_bound). */
#include <pthread.h>
#include "schedlab.h"
#include "wait/wait.h"
#include "wait/wait_bounds.h"
#include "base/syncstat.h"
#include "hostjob.h"
#include "check.h"

#define PROCS 3
#define ROUNDS 300

static struct {
    enum sl_wait kind;
    uint32_t token __attribute__((aligned(64))); /* hand-offs so far: process token % PROCS holds it */
    uint32_t count __attribute__((aligned(64))); /* sl_wait_add: every process adds once per round */
    uint32_t pauser_set;
    uint64_t blocks_before;
} R;

static void ring(void *arg, int id)
{
    (void)arg;
    if (sl_wait_pauser())
        __atomic_store_n(&R.pauser_set, 1, __ATOMIC_RELAXED);
    for (uint32_t turn = (uint32_t)id; turn < ROUNDS * PROCS; turn += PROCS) {
        for (uint32_t v; (v = sl_wait_value(&R.token)) != turn;)
            sl_wait_ne(&R.token, v, R.kind); /* not ours yet: wait for the next hand-off */
        sl_wait_add(&R.count, 1, R.kind);
        sl_wait_set(&R.token, turn + 1, R.kind);
    }
}

static void body(void)
{
    sl_run_procs(ring, 0);
}

/* base/syncstat.h's timed waits: the outermost open wait publishes its start (abi.h wait_open), nested
   ones leave it, and the last to end withdraws it; each counted wait adds its own ticks. */
static void open_waits(void)
{
    struct sl_sync s = { 0 };
    sl_sync_wait_begins(&s, 100);
    CHECK(s.in_wait == 1 && s.wait_open == 101); /* never 0 while open */
    sl_sync_wait_begins(&s, 150);              /* a thread of the process nests one */
    CHECK(s.in_wait == 2 && s.wait_open == 101);
    sl_sync_wait_ends(&s, 150, 170, 1);
    CHECK(s.in_wait == 1 && s.wait_open == 101 && s.wait_ticks == 20 && s.waits == 1);
    sl_sync_wait_ends(&s, 100, 200, 1);
    CHECK(s.in_wait == 0 && s.wait_open == 0 && s.wait_ticks == 120 && s.waits == 2);
    sl_sync_wait_begins(&s, 300);              /* a streak that ends with its run: no wait on a partner */
    sl_sync_wait_ends(&s, 300, 350, 0);
    CHECK(s.in_wait == 0 && s.wait_open == 0 && s.wait_ticks == 120 && s.waits == 2);
}

/* Stand-in evidence for sl_wait_adaptive_spin: running() answers `says` and counts its calls. */
struct fake_wf {
    struct sl_waitfor wf;
    int says, calls;
};

static int fake_running(const struct sl_waitfor *wf)
{
    struct fake_wf *f = (struct fake_wf *)wf;
    f->calls++;
    return f->says;
}

static struct {
    uint32_t word __attribute__((aligned(64)));
    uint32_t data;
} C;

static void *changer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) /* let the spinner start; nothing depends on how long */
        sl_cpu_relax();
    C.data = 42;
    __atomic_store_n(&C.word, 1, __ATOMIC_RELEASE);
    return 0;
}

/* The adaptive kind's spin: it ends with the word's change, at once when a participant is off its hart,
   and - whatever the evidence - once the wait has lasted its bound, never before (the bound is what the
   competitive argument charges for, wait_adaptive.c). Ticks are the host's ns (host_sys.c). */
static void adaptive_bound(void)
{
    struct fake_wf f = { { fake_running }, 1, 0 };
    uint64_t t0, since, limit = 200000; /* 200 us */
    uint32_t word = 7;
    pthread_t t;

    CHECK(sl_wait_ns_ticks(20000, 10000000) == 200);               /* QEMU virt's 10 MHz timebase */
    CHECK(sl_wait_ns_ticks(UINT64_MAX, 1000000000) == UINT64_MAX); /* no overflow */
    CHECK(sl_wait_ns_ticks(3500000000u, 10000000) == 35000000);
    CHECK(SL_ADAPTIVE_SPIN_FACTOR >= 1 && SL_ADAPTIVE_SPIN_NS == SL_ADAPTIVE_SPIN_FACTOR * SL_TWOPHASE_SPIN_NS);
    CHECK(sl_wait_adaptive_bound(1000) == SL_ADAPTIVE_SPIN_NS);
    CHECK(sl_wait_adaptive_bound(SL_ADAPTIVE_SPIN_NS) == 1000);

    /* everyone looks running, nobody changes the word: the bound ends the spin, not earlier; the first
       look at the clock starts it */
    t0 = sl_plat_ticks();
    since = SL_WAIT_UNTIMED;
    CHECK(sl_wait_adaptive_spin(&word, 7, &f.wf, &since, limit) == 0);
    CHECK(since != SL_WAIT_UNTIMED && since >= t0);
    CHECK(sl_plat_ticks() - since >= limit);
    CHECK(f.calls >= 1);
    /* a wait already older than its bound (woken after it) does not spin past its next look */
    f.calls = 0;
    since = sl_plat_ticks() - limit;
    CHECK(sl_wait_adaptive_spin(&word, 7, &f.wf, &since, limit) == 0);
    CHECK(f.calls == 1);
    /* a participant off its hart: block at once, however far the bound (else this never returns) */
    f.says = 0, f.calls = 0;
    since = SL_WAIT_UNTIMED;
    CHECK(sl_wait_adaptive_spin(&word, 7, &f.wf, &since, UINT64_MAX) == 0);
    CHECK(f.calls == 1 && since == SL_WAIT_UNTIMED); /* it never looked at the clock */
    /* the word changed: 1, the value part compared only */
    f.says = 1;
    CHECK(sl_wait_adaptive_spin(&word, 8, &f.wf, &since, UINT64_MAX) == 1);
    word = 7 | SL_WAIT_SLEEPERS;
    CHECK(sl_wait_adaptive_spin(&word, 8, &f.wf, &since, UINT64_MAX) == 1);
    /* another thread changes it while the evidence says spin: 1, and what it wrote before is visible */
    C.word = 0, C.data = 0;
    since = SL_WAIT_UNTIMED;
    CHECK(pthread_create(&t, 0, changer, 0) == 0);
    CHECK(sl_wait_adaptive_spin(&C.word, 0, &f.wf, &since, UINT64_MAX) == 1);
    CHECK(C.data == 42);
    pthread_join(t, 0);
}

int main(void)
{
    open_waits();
    adaptive_bound();
    static const char *names[] = { "spin", "block", "twophase", "adaptive" };

    CHECK(sl_wait_pauser() == 0);
    for (int k = 0; k < SL_NWAITS; k++) {
        R.kind = (enum sl_wait)k;
        R.token = R.count = R.pauser_set = 0;
        R.blocks_before = sl_wait_blocks();
        hostjob_run("wait", PROCS, body);
        CHECK(sl_wait_value(&R.token) == ROUNDS * PROCS);
        CHECK(sl_wait_value(&R.count) == ROUNDS * PROCS);
        CHECK(R.pauser_set == 0); /* no thread layer: every caller is a process */
        CHECK(strcmp(sl_waits[k]->name, names[k]) == 0);
        if (k == SL_WAIT_SPIN)
            CHECK(sl_wait_blocks() == R.blocks_before); /* spin never sleeps */
        printf("%-9s ring of %d x %d hand-offs, %lu sleeps\n", names[k], PROCS, ROUNDS,
               (unsigned long)(sl_wait_blocks() - R.blocks_before));
    }
    return check_done("test_wait");
}
