/* test_wait.c - the wait layer on its own (lib/wait/ over lib/base/ and the host platform, nothing above:
   tests/host/host.mk links LIB_WAIT_SRC only, so a call from the wait layer up into the thread layer
   fails this build). Processes hand a token round a ring with every wait kind, on words changed by
   sl_wait_set and sl_wait_add; without a thread layer no caller is a thread (sl_wait_pauser is NULL)
   and the sleeping kinds sleep as processes. This file plays the kernel (hostjob.h). */
#include "schedlab.h"
#include "wait/wait.h"
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

int main(void)
{
    open_waits();
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
