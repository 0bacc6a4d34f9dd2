/*
 * kbench - measures what the kernel costs a process: a syscall round trip, a yield that switches to
 * another process on the same hart, and a futex hand-off between two processes (block + wake + switch).
 *
 *   what=syscall   every process makes `ops` SYS_time calls; checks the times never go backwards
 *   what=yield     every process yields `ops` times; with two processes per hart each yield is one
 *                  process switch; checks every yield returned
 *   what=futex     processes pass a token round a ring `ops` times with futex wait/wake (procs >= 2);
 *                  each hand-off wakes the next process and blocks the current one; checks the token
 *                  visited the processes strictly in ring order
 * Reports ns_per_op: wall time of the measured loop / operations, as seen by process 0.
 */
#include "platform.h"
#include "schedlab.h"

SL_APP(.about = "kernel cost micro-benchmarks: syscall, yield, futex hand-off", .mem_const = 256 * 1024,
       SL_KEYS(SL_ENUM("what", "syscall|yield|futex", 0), SL_INT("ops", 1, 100000000, 20000)));

struct bench {
    int what; /* 0 syscall, 1 yield, 2 futex */
    uint64_t ops;
    uint32_t turn __attribute__((aligned(64))); /* futex: the token = number of hand-offs so far */
    uint64_t bad __attribute__((aligned(64)));
    uint64_t ns0;
};

static void run_syscalls(struct bench *b)
{
    uint64_t last = 0;
    for (uint64_t i = 0; i < b->ops; i++) {
        uint64_t t = sl_sys_time();
        if (t < last)
            __atomic_fetch_add(&b->bad, 1, __ATOMIC_RELAXED);
        last = t;
    }
}

static void run_yields(struct bench *b)
{
    for (uint64_t i = 0; i < b->ops; i++)
        if (sl_sys_yield() != 0)
            __atomic_fetch_add(&b->bad, 1, __ATOMIC_RELAXED);
}

/* Process id holds the token when turn % n == id; it passes it on by bumping turn and waking. */
static void run_futex(struct bench *b, int id)
{
    uint32_t n = (uint32_t)sl_nprocs();
    uint64_t total = b->ops; /* hand-offs in all */
    for (uint32_t mine = (uint32_t)id; mine < total; mine += n) {
        uint32_t t;
        while ((t = __atomic_load_n(&b->turn, __ATOMIC_ACQUIRE)) != mine) {
            if (t > mine) { /* someone passed our turn: the ring order broke */
                __atomic_fetch_add(&b->bad, 1, __ATOMIC_RELAXED);
                return;
            }
            sl_futex_wait(&b->turn, t, 0);
        }
        __atomic_store_n(&b->turn, mine + 1, __ATOMIC_RELEASE);
        sl_futex_wake(&b->turn, SL_WAKE_ALL);
    }
}

static void worker(void *arg, int id)
{
    struct bench *b = arg;
    uint64_t t0 = sl_plat_ticks();
    if (b->what == 0)
        run_syscalls(b);
    else if (b->what == 1)
        run_yields(b);
    else
        run_futex(b, id);
    if (id == 0)
        b->ns0 = sl_ticks_to_us((sl_plat_ticks() - t0) * 1000);
}

int main(void)
{
    static struct bench b;
    b.what = sl_arg_is("what", "syscall") ? 0 : sl_arg_is("what", "yield") ? 1 : 2;
    b.ops = (uint64_t)sl_arg_int("ops");
    if (b.what == 2 && sl_nprocs() < 2) {
        sl_report(0, "error=futex-needs-procs>=2");
        return 0;
    }
    sl_run_procs(worker, &b);
    /* per-process ops for syscall/yield; hand-offs in all for futex */
    uint64_t ops = b.ops;
    int ok = b.bad == 0 && (b.what != 2 || b.turn == b.ops);
    sl_report(ok, "ns_per_op=%llu bad=%llu", (unsigned long long)(b.ns0 / ops), (unsigned long long)b.bad);
    return 0;
}
