/* Unit tests of thread placement: the pure decision (lib/threads/place.c sl_place_decide) for mcs and lb with
   homes, nodes, loads and ties; then pinned threads (sl_thread_spawn_on / sl_thread_create_on,
   lib/threads/uthread.c) on the host backend, where this file plays the kernel as test_uthread.c does: a
   pinned thread runs only on its process, also after waits that another process ends; pinned
   threads spawned in bulk (more than a deque holds) all run; lb placement spreads threads over the
   processes; loads go back to 0 when the threads have finished. Every runtime scenario runs on 1, 2,
   3 and 8 processes (8 > the machine's cores). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "check.h"
#include "schedlab.h"
#include "platform/host.h"
#include "hostjob.h"
#include "threads/place.h"
#include "threads/uthread.h"


/* ---- the pure decision ---- */

static int decide(enum sl_place how, int home_proc, int home_node, int n, const uint32_t *load, const int *node,
                  uint64_t rnd)
{
    struct sl_place_view v = { .nprocs = n, .load = load, .node = node };
    return sl_place_decide(how, home_proc, home_node, &v, rnd);
}

static void test_decide(void)
{
    uint32_t load[6] = { 3, 1, 4, 1, 5, 9 };
    int node[6] = { 0, 0, 1, 1, 1, -1 };
    int seen[6] = { 0 };

    CHECK(sl_place_parse("mcs") == SL_PLACE_MCS && sl_place_parse("lb") == SL_PLACE_LB);
    CHECK(sl_place_parse("MCS") == -1 && sl_place_parse("") == -1);
    CHECK(strcmp(sl_place_name(SL_PLACE_LB), "lb") == 0);

    /* mcs with a home process: the home, whatever the loads */
    for (uint64_t r = 0; r < 20; r++)
        CHECK(decide(SL_PLACE_MCS, 5, -1, 6, load, node, r) == 5);
    CHECK(decide(SL_PLACE_MCS, 2, 0, 6, load, node, 7) == 2);          /* the process beats the node */
    /* lb ignores the home: the least loaded, ties (1 and 3) at random */
    for (uint64_t r = 0; r < 64; r++) {
        int p = decide(SL_PLACE_LB, 5, 1, 6, load, node, sl_mix64(r));
        CHECK(p == 1 || p == 3);
        seen[p]++;
    }
    CHECK(seen[1] > 0 && seen[3] > 0);                                /* both tied processes chosen */
    CHECK(decide(SL_PLACE_LB, -1, -1, 6, load, node, 0) == 1);        /* rnd picks the k-th tie, in order */
    CHECK(decide(SL_PLACE_LB, -1, -1, 6, load, node, 1) == 3);
    CHECK(decide(SL_PLACE_LB, -1, -1, 6, load, node, 2) == 1);
    /* mcs with a home node only: the least loaded process on that node */
    CHECK(decide(SL_PLACE_MCS, -1, 1, 6, load, node, 0) == 3);        /* node 1: loads 4, 1, 5 */
    CHECK(decide(SL_PLACE_MCS, -1, 0, 6, load, node, 1) == 1);        /* node 0: loads 3, 1 */
    /* a node no process is on, no home at all, a home out of range: as lb */
    CHECK(decide(SL_PLACE_MCS, -1, 4, 6, load, node, 0) == 1);
    CHECK(decide(SL_PLACE_MCS, -1, -1, 6, load, node, 1) == 3);
    CHECK(decide(SL_PLACE_MCS, 6, -1, 6, load, node, 0) == 1);
    CHECK(decide(SL_PLACE_MCS, -3, -1, 6, load, node, 0) == 1);
    /* one process: always 0 */
    CHECK(decide(SL_PLACE_LB, -1, -1, 1, load, node, 99) == 0);
    CHECK(decide(SL_PLACE_MCS, 3, 1, 1, load, node, 99) == 0);
    /* all tied: every process reachable, and the answer is a function of the inputs */
    {
        uint32_t flat[5] = { 2, 2, 2, 2, 2 };
        int nodes0[5] = { 0 }, hit[5] = { 0 };
        for (uint64_t r = 0; r < 5; r++)
            hit[decide(SL_PLACE_LB, -1, -1, 5, flat, nodes0, r)]++;
        for (int p = 0; p < 5; p++)
            CHECK(hit[p] == 1);
        CHECK(decide(SL_PLACE_LB, -1, -1, 5, flat, nodes0, 12345) ==
              decide(SL_PLACE_LB, -1, -1, 5, flat, nodes0, 12345));
    }
}

/* ---- the emulated kernel (as in test_uthread.c) ---- */


#define BULK 6000            /* more than SL_THREAD_READY_MAX: pinned threads are not in a deque */
#define HOPS 50

static struct {
    atomic_long ran, wrong, after_wait_wrong, load_bad, node_bad;
    atomic_long per_proc[SL_MAX_PROCS];
    uint32_t word;
    struct sl_thread_stats st;
} R;

/* A pinned thread records where it runs; arg = its home. */
static void where(void *arg)
{
    int home = (int)(intptr_t)arg;

    atomic_fetch_add(&R.ran, 1);
    atomic_fetch_add(&R.per_proc[sl_self()], 1);
    if (sl_self() != home)
        atomic_fetch_add(&R.wrong, 1);
}

/* Waits HOPS times for the word to change (each change made by a thread pinned elsewhere); after
   every wait it must be back on its home. */
static void hopper(void *arg)
{
    int home = (int)(intptr_t)arg;

    for (uint32_t h = 0; h < HOPS; h++) {
        sl_thread_wait_ne(&R.word, 2 * h);
        if (sl_self() != home)
            atomic_fetch_add(&R.after_wait_wrong, 1);
        __atomic_store_n(&R.word, 2 * h + 2, __ATOMIC_RELEASE);
        sl_thread_wake(&R.word);
    }
}

static void bumper(void *arg)
{
    int home = (int)(intptr_t)arg;

    for (uint32_t h = 0; h < HOPS; h++) {
        __atomic_store_n(&R.word, 2 * h + 1, __ATOMIC_RELEASE);
        sl_thread_wake(&R.word);
        sl_thread_wait_ne(&R.word, 2 * h + 1);
        if (sl_self() != home)
            atomic_fetch_add(&R.after_wait_wrong, 1);
    }
}

static void scenario(void *arg)
{
    int n = sl_nprocs();
    sl_thread_t *t[SL_MAX_PROCS];

    (void)arg;
    /* 1. bulk spawn, round robin over the processes, from one thread */
    for (int i = 0; i < BULK; i++)
        sl_thread_spawn_on(i % n, where, (void *)(intptr_t)(i % n));
    /* 2. joinable pinned threads */
    for (int p = 0; p < n; p++)
        t[p] = sl_thread_create_on(p, where, (void *)(intptr_t)p);
    for (int p = 0; p < n; p++)
        sl_thread_join(t[p]);
    /* 3. a ping-pong between two pinned threads on different processes (the same with one) */
    t[0] = sl_thread_create_on(0, hopper, (void *)0);
    t[1] = sl_thread_create_on(n - 1, bumper, (void *)(intptr_t)(n - 1));
    sl_thread_join(t[0]);
    sl_thread_join(t[1]);
    /* wait for the bulk threads, then the loads must be 0 again */
    while (atomic_load(&R.ran) < BULK + n)
        sl_thread_yield();
    for (int p = 0; p < n; p++)
        if (sl_thread_load(p) != 0)
            atomic_fetch_add(&R.load_bad, 1);
    /* 4. lb placement (where is up to the loads at each pick) */
    for (int i = 0; i < 4 * n; i++) {
        int p = sl_place_pick(SL_PLACE_LB, -1, -1);
        sl_thread_spawn_on(p, where, (void *)(intptr_t)p);
    }
    /* 5. mcs with a home: exactly the home; every process's node is known once it has started */
    for (int i = 0; i < n; i++) {
        int p = sl_place_spawn(SL_PLACE_MCS, n - 1 - i, -1, where, (void *)(intptr_t)(n - 1 - i));
        if (p != n - 1 - i)
            atomic_fetch_add(&R.wrong, 1);
    }
    while (atomic_load(&R.ran) < BULK + 6 * n)
        sl_thread_yield();
    /* every process has run threads, so it has noted its hart (the host has one node: 0, or -1 for a
       cpu number beyond the emulated harts) */
    for (int p = 0; p < n; p++)
        if (sl_thread_proc_hart(p) < 0 || sl_place_proc_node(p) > 0)
            atomic_fetch_add(&R.node_bad, 1);
    if (sl_thread_proc_hart(n) != -1 || sl_place_proc_node(-1) != -1)
        atomic_fetch_add(&R.node_bad, 1);
}

static void body(void)
{
    sl_threads_run(scenario, NULL);
    sl_threads_stats(&R.st);
}

static void test_pinned(int procs)
{
    memset(&R, 0, sizeof R);
    hostjob_run("test_place", procs, body);
    CHECK(atomic_load(&R.ran) == BULK + 6 * procs);
    CHECK(atomic_load(&R.wrong) == 0);
    CHECK(atomic_load(&R.after_wait_wrong) == 0);
    CHECK(atomic_load(&R.load_bad) == 0);
    CHECK(atomic_load(&R.node_bad) == 0);
    CHECK(R.word == 2 * HOPS);
    CHECK(R.st.threads == (uint64_t)(1 + BULK + 6 * procs + 2));
    for (int p = 0; p < procs; p++)                   /* its bulk share, its joinable, its mcs thread */
        CHECK(atomic_load(&R.per_proc[p]) >= BULK / procs + 1 + 1);
    printf("procs=%d: ok\n", procs);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_decide();
    test_pinned(1);
    test_pinned(2);
    test_pinned(3);
    test_pinned(8);
    return check_done("test_place");
}
