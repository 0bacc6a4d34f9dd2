/*
 * tbench - what user-level threads cost, next to a plain function call.
 *
 *   BENCH call_ns <x> ns                  an empty, non-inlined call through a pointer
 *   BENCH spawn_join_ns <x> ns            sl_thread_create of an empty thread, it runs, sl_thread_join
 *   BENCH spawn_join_vs_call <x> ratio    the two above, divided
 *   BENCH spawn_join_idle_thieves_ns <x> ns   the same while the other processes are idle thieves:
 *                                         they often steal the new thread before its creator
 *                                         joins it, and then both threads change process
 *   BENCH uthread_yield_ns <x> ns         one sl_thread_yield of a thread alone on its process:
 *                                         switch to the scheduler, a pass of its loop (a failed
 *                                         steal attempt when procs > 1, a kernel yield every 32),
 *                                         switch back
 *   BENCH steal_ns <x> ns                 one successful sl_deque_pop_top of an item another
 *                                         process pushed (the lines move between harts; with
 *                                         procs=1, or if the thief ran where the items were pushed,
 *                                         the RESULT says cross= fewer than batches)
 *
 * The first three and the yield are measured while every other process is
 * kept busy by a spinner thread, so nobody steals: the library's own
 * overhead, what a thread program pays per spawn when all processes have
 * work (Hood's T1/Ts).
 * Each figure is the median over `batches` batches of `ops` operations
 * (calls: 50 x ops), timed with sl_plat_ticks (the `time` CSR: 100 ns steps
 * on QEMU, hence the long batches), all inside one sl_threads_run.
 * check=ok when every thread ran, every yield returned and every pushed
 * item was stolen exactly once. The RESULT's inlined= counts the threads
 * that ran on their joiner's stack (uthread_run.c, "inline runs"): with the
 * other processes busy, every one of the first spawn+join batches.
 */
#include "schedlab.h"
#include "threads/deque.h"
#include "threads/uthread.h"

SL_APP(.about = "user-level thread costs: spawn+join vs call, yield, steal", .mem_key = "ops", .mem_lin = 128,
       .mem_const = 4 << 20, .mem_per_proc = 1 << 20,
       SL_KEYS(SL_INT("batches", 1, 99, 7), SL_INT("ops", 1, 1000000, 2000)));

#define MAXB 99

struct tb {
    int batches;
    uint64_t ops;
    uint64_t ran, bad;
    uint64_t call[MAXB], spawn[MAXB], spawn_idle[MAXB], yield[MAXB], stealt[MAXB]; /* ticks per batch */
    struct sl_joincnt spinners; /* the spinner threads that keep the other processes busy */
    uint32_t busy, release;
    /* steal: the main thread fills dq, a thief thread empties it */
    struct sl_deque dq;
    uint8_t *seen; /* seen[i]: item i was stolen this many times */
    uint32_t round;
    int filler, cross; /* process that filled; batches stolen from another process */
    uint32_t taken __attribute__((aligned(64)));
};

__attribute__((noinline)) static void empty(void *arg) { asm volatile("" : : "r"(arg) : "memory"); }

static void count_thread(void *arg)
{
    struct tb *b = arg;
    b->ran++; /* joined before the next one starts: no race */
}

static void (*volatile callee)(void *) = empty;

static uint64_t median(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return v[n / 2];
}

static double ns_per(uint64_t ticks, uint64_t ops) { return (double)sl_ticks_to_us(ticks * 1000) / (double)ops; }

/* The thief: steals every item of the deque the main thread filled. */
static void thief_thread(void *arg)
{
    struct tb *b = arg;
    uint64_t t0 = sl_plat_ticks(), n = 0;
    void *item;

    for (enum sl_steal r; (r = sl_deque_pop_top(&b->dq, &item)) != SL_STEAL_EMPTY;)
        if (r == SL_STEAL_OK) {
            ++*(uint8_t *)item;
            n++;
        }
    b->stealt[b->round] = sl_plat_ticks() - t0;
    b->cross += sl_self() != b->filler;
    if (n != b->ops)
        b->bad++;
    __atomic_store_n(&b->taken, 1, __ATOMIC_RELEASE);
}

/* The main thread fills a deque it owns, then spawns the thief and keeps
   its own process busy until the thief is done, so that another process
   steals the thief and the items cross between processes (with procs=1 it
   yields, and the thief runs on the same process). */
static void bench_steal(struct tb *b)
{
    for (int k = 0; k < b->batches; k++) {
        for (uint64_t i = 0; i < b->ops; i++)
            if (sl_deque_push_bottom(&b->dq, &b->seen[(uint64_t)k * b->ops + i]) < 0)
                b->bad++;
        b->round = (uint32_t)k;
        b->filler = sl_self();
        __atomic_store_n(&b->taken, 0, __ATOMIC_RELAXED);
        sl_thread_spawn(thief_thread, b);
        for (unsigned spins = 0; !__atomic_load_n(&b->taken, __ATOMIC_ACQUIRE); spins++) {
            if (sl_nprocs() == 1)
                sl_thread_yield();
            else if (spins % 1024 == 1023)
                sl_yield(); /* the thief's process may share our hart */
            else
                sl_cpu_relax();
        }
        if (sl_deque_pop_bottom(&b->dq)) /* empty: resets it for the next batch */
            b->bad++;
    }
}

/* Keeps one process busy, so that it does not steal, until released. */
static void spinner_thread(void *arg)
{
    struct tb *b = arg;

    __atomic_add_fetch(&b->busy, 1, __ATOMIC_RELEASE);
    for (unsigned spins = 0; !__atomic_load_n(&b->release, __ATOMIC_ACQUIRE); spins++)
        if (spins % 1024 == 1023)
            sl_yield(); /* the measuring process may share our hart */
        else
            sl_cpu_relax();
    sl_joincnt_signal(&b->spinners);
}

static void spawn_join_batch(struct tb *b, uint64_t *out)
{
    uint64_t t0 = sl_plat_ticks();

    for (uint64_t i = 0; i < b->ops; i++)
        sl_thread_join(sl_thread_create(count_thread, b));
    *out = sl_plat_ticks() - t0;
}

static void bench_threads(void *arg)
{
    struct tb *b = arg;
    uint32_t others = (uint32_t)sl_nprocs() - 1;

    /* Every other process takes a spinner (a spinner never gives its
       process back), so nobody steals from us while we measure. */
    sl_joincnt_init(&b->spinners, others);
    for (uint32_t i = 0; i < others; i++)
        sl_thread_spawn(spinner_thread, b);
    for (unsigned spins = 0; __atomic_load_n(&b->busy, __ATOMIC_ACQUIRE) != others; spins++)
        if (spins % 1024 == 1023)
            sl_yield();
        else
            sl_cpu_relax();
    for (int k = 0; k < b->batches; k++) {
        void (*f)(void *) = callee;
        uint64_t t0 = sl_plat_ticks();
        for (uint64_t i = 0; i < 50 * b->ops; i++)
            f(b);
        b->call[k] = sl_plat_ticks() - t0;

        spawn_join_batch(b, &b->spawn[k]);

        t0 = sl_plat_ticks();
        for (uint64_t i = 0; i < b->ops; i++)
            sl_thread_yield();
        b->yield[k] = sl_plat_ticks() - t0;
    }
    __atomic_store_n(&b->release, 1, __ATOMIC_RELEASE);
    sl_joincnt_wait(&b->spinners);

    /* The same with the other processes idle, i.e. stealing. */
    for (int k = 0; k < b->batches; k++)
        spawn_join_batch(b, &b->spawn_idle[k]);
    if (b->ran != 2 * (uint64_t)b->batches * b->ops)
        b->bad++;
    bench_steal(b);
}

int main(void)
{
    static struct tb b;
    double call, spawn, spawn_idle, yield, stealns;
    struct sl_thread_stats st;

    b.batches = (int)sl_arg_int("batches");
    b.ops = (uint64_t)sl_arg_int("ops");
    b.seen = sl_calloc((size_t)b.batches * b.ops, 1);
    void *slots = sl_alloc_node(SL_DEQUE_BYTES(b.ops), -1);
    if (!b.seen || !slots)
        sl_die("out of memory for %llu items", (unsigned long long)b.ops);
    sl_deque_init(&b.dq, slots, (uint32_t)b.ops);

    sl_threads_run(bench_threads, &b);
    sl_threads_stats(&st);
    for (uint64_t i = 0; i < (uint64_t)b.batches * b.ops; i++)
        if (b.seen[i] != 1)
            b.bad++;

    call = ns_per(median(b.call, b.batches), 50 * b.ops);
    spawn = ns_per(median(b.spawn, b.batches), b.ops);
    spawn_idle = ns_per(median(b.spawn_idle, b.batches), b.ops);
    yield = ns_per(median(b.yield, b.batches), b.ops);
    stealns = ns_per(median(b.stealt, b.batches), b.ops);
    sl_printf("BENCH call_ns %.2f ns\n", call);
    sl_printf("BENCH spawn_join_ns %.1f ns\n", spawn);
    sl_printf("BENCH spawn_join_vs_call %.1f ratio\n", call > 0 ? spawn / call : 0.0);
    sl_printf("BENCH spawn_join_idle_thieves_ns %.1f ns\n", spawn_idle);
    sl_printf("BENCH uthread_yield_ns %.1f ns\n", yield);
    sl_printf("BENCH steal_ns %.1f ns\n", stealns);
    sl_report(b.bad == 0,
              "call_ns=%.2f spawn_join_ns=%.1f spawn_join_idle_ns=%.1f yield_ns=%.1f "
              "steal_ns=%.1f cross=%d inlined=%llu bad=%llu",
              call, spawn, spawn_idle, yield, stealns, b.cross, (unsigned long long)st.inlined,
              (unsigned long long)b.bad);
    return 0;
}
