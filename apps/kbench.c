/*
 * kbench - measures what the kernel costs a process: a syscall round trip, a yield that switches to
 * another process on the same hart, a futex hand-off between two processes (block + wake + switch), and
 * the time a timer tick takes from a running process.
 *
 *   what=syscall   every process makes `ops` SYS_time calls; checks the times never go backwards
 *   what=yield     every process yields `ops` times; with two processes per hart each yield is one
 *                  process switch; checks every yield returned
 *   what=futex     processes pass a token round a ring `ops` times with futex wait/wake (procs >= 2);
 *                  each hand-off wakes the next process and blocks the current one; checks the token
 *                  visited the processes strictly in ring order. Also wake_ns: the median time from
 *                  just before a futex_wake to the woken process running again (only hand-offs whose
 *                  receiver had really blocked count; `woken` says how many). delay_us=D: the token's
 *                  holder first spins D us, so the receiver has surely gone to sleep - and its hart idles
 *                  (polling for a while, then halted: see idle_wait in kernel/sched/core.c). And
 *                  wake_call_ns: the median time the waker spends in a futex_wake that woke someone
 *                  (`wake_calls` of them): the sender's side of a hand-off, which the simulator charges
 *   what=tick      every process reads the time in a tight loop until it has seen `ops` gaps of more than
 *                  GAP_NS: each is time the hart spent away from it (a timer tick with its trap, the
 *                  policy's tick, the return; or the host descheduling QEMU). Reports tick_ns, the
 *                  median gap, and gaps; run it with a short quantum and one process per hart
 *   what=ulog      every process writes `ops` mark records into its event log (lib/base/eventlog.h; boot with
 *                  trace=on, else there is no log and the run says so); checks every record landed
 * Reports ns_per_op: wall time of the measured loop / operations, as seen by process 0.
 */
#include "platform/platform.h"
#include "schedlab.h"
#include "base/eventlog.h"

SL_APP(.about = "kernel costs: syscall, yield, futex hand-off, tick", .mem_const = 512 * 1024,
       SL_KEYS(SL_ENUM("what", "syscall|yield|futex|tick|ulog", 0), SL_INT("ops", 1, 100000000, 20000),
               SL_INT("delay_us", 0, 1000000, 0)));

enum { SYSCALL, YIELD, FUTEX, TICK, ULOG };
#define NSAMPLE 8192 /* latencies kept for a median: the first NSAMPLE */
#define GAP_NS  500  /* what=tick: a longer gap between two reads of the time is time taken away */

struct bench {
    int what;
    uint64_t ops;
    uint32_t turn __attribute__((aligned(64))); /* futex: the token = number of hand-offs so far */
    uint64_t passed_at;                         /* futex: the time just before the last hand-off's wake */
    uint64_t delay_ticks;                       /* futex: delay_us */
    uint64_t bad __attribute__((aligned(64)));
    uint64_t ns0;
    uint64_t nsample; /* samples[] taken so far (futex: by the token's holder; tick: process 0 only) */
    uint64_t samples[NSAMPLE];
    uint64_t nwcall __attribute__((aligned(64))); /* futex: wcall[] taken so far (by any holder) */
    uint64_t wcall[NSAMPLE];                      /* futex: ticks in a futex_wake that woke someone */
};

static uint64_t ticks_to_ns(uint64_t ticks) { return sl_ticks_to_us(ticks * 1000); }

static void sample(struct bench *b, uint64_t v)
{
    if (b->nsample < NSAMPLE)
        b->samples[b->nsample] = v;
    b->nsample++;
}

/* The median of the first `taken` of a[] (a shell sort: no libc here). */
static uint64_t median_of(uint64_t *a, uint64_t taken)
{
    uint64_t n = taken < NSAMPLE ? taken : NSAMPLE;
    if (!n)
        return 0;
    for (uint64_t gap = n / 2; gap; gap /= 2)
        for (uint64_t i = gap; i < n; i++)
            for (uint64_t j = i; j >= gap && a[j - gap] > a[j]; j -= gap) {
                uint64_t t = a[j];
                a[j] = a[j - gap];
                a[j - gap] = t;
            }
    return a[n / 2];
}

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
            if (sl_futex_wait(&b->turn, t, 0) == 0 && __atomic_load_n(&b->turn, __ATOMIC_ACQUIRE) == mine)
                sample(b, sl_plat_ticks() - b->passed_at); /* we had blocked, and were woken for our turn */
        }
        for (uint64_t t0 = sl_plat_ticks(); sl_plat_ticks() - t0 < b->delay_ticks;)
            ;
        b->passed_at = sl_plat_ticks();
        __atomic_store_n(&b->turn, mine + 1, __ATOMIC_RELEASE);
        uint64_t w0 = sl_plat_ticks();
        if (sl_futex_wake(&b->turn, SL_WAKE_ALL) > 0) {
            uint64_t k = __atomic_fetch_add(&b->nwcall, 1, __ATOMIC_RELAXED);
            if (k < NSAMPLE)
                b->wcall[k] = sl_plat_ticks() - w0;
        }
    }
}

/* Count the gaps in a tight loop reading the time; process 0 keeps their lengths. Gives up after
   ops x 10 ms (a hart that never ticks) - then gaps < ops says so. */
static void run_ticks(struct bench *b, int id)
{
    uint64_t gap = sl_ticks_to_us(0) + 1, seen = 0, last = sl_plat_ticks(), give_up;
    while (ticks_to_ns(gap) < GAP_NS) /* the smallest number of ticks longer than GAP_NS */
        gap++;
    give_up = last + gap * (b->ops * 10 * 1000 * 1000 / GAP_NS);
    while (seen < b->ops && last < give_up) {
        uint64_t now = sl_plat_ticks();
        if (now - last >= gap) {
            seen++;
            if (id == 0)
                sample(b, now - last);
        }
        last = now;
    }
}

/* Records i = 0..ops-1 as marks; then the log must hold ops more records, the last one ops-1. */
static void run_ulog(struct bench *b)
{
    struct sl_proc *p = sl_plat_proc();
    uint64_t n0 = p->ulog ? p->ulog->n : 0;
    for (uint64_t i = 0; i < b->ops; i++)
        sl_ulog(SL_UL_MARK, (int32_t)i, 0);
    if (!p->ulog)
        return;
    const struct sl_ulog_rec *last = (const struct sl_ulog_rec *)((const char *)p->ulog + SL_ULOG_HDR) +
                                     ((p->ulog->n - 1) & p->ulog_mask);
    if (p->ulog->n - n0 != b->ops || last->ev != SL_UL_MARK || last->arg != (int32_t)(b->ops - 1))
        __atomic_add_fetch(&b->bad, 1, __ATOMIC_RELAXED);
}

static void worker(void *arg, int id)
{
    struct bench *b = arg;
    uint64_t t0 = sl_plat_ticks();
    if (b->what == SYSCALL)
        run_syscalls(b);
    else if (b->what == YIELD)
        run_yields(b);
    else if (b->what == FUTEX)
        run_futex(b, id);
    else if (b->what == ULOG)
        run_ulog(b);
    else
        run_ticks(b, id);
    if (id == 0)
        b->ns0 = sl_ticks_to_us((sl_plat_ticks() - t0) * 1000);
}

int main(void)
{
    static struct bench b;
    b.what = sl_arg_is("what", "syscall") ? SYSCALL
        : sl_arg_is("what", "yield")      ? YIELD
        : sl_arg_is("what", "futex")      ? FUTEX
        : sl_arg_is("what", "ulog")       ? ULOG
                                          : TICK;
    b.ops = (uint64_t)sl_arg_int("ops");
    b.delay_ticks = (uint64_t)sl_arg_int("delay_us") * sl_plat_info()->timebase_hz / 1000000;
    if (b.what == FUTEX && sl_nprocs() < 2) {
        sl_report(0, "error=futex-needs-procs>=2");
        return 0;
    }
    if (b.what == ULOG && !sl_plat_proc()->ulog) {
        sl_report(0, "error=ulog-needs-trace=on");
        return 0;
    }
    sl_run_procs(worker, &b);
    /* per-process ops for syscall/yield; hand-offs in all for futex */
    uint64_t ops = b.ops;
    int ok = b.bad == 0 && (b.what != FUTEX || b.turn == b.ops);
    if (b.what == FUTEX)
        sl_report(ok, "ns_per_op=%llu bad=%llu wake_ns=%llu woken=%llu wake_call_ns=%llu wake_calls=%llu",
                  (unsigned long long)(b.ns0 / ops), (unsigned long long)b.bad,
                  (unsigned long long)ticks_to_ns(median_of(b.samples, b.nsample)),
                  (unsigned long long)b.nsample, (unsigned long long)ticks_to_ns(median_of(b.wcall, b.nwcall)),
                  (unsigned long long)b.nwcall);
    else if (b.what == TICK)
        sl_report(1, "tick_ns=%llu gaps=%llu", (unsigned long long)ticks_to_ns(median_of(b.samples, b.nsample)),
                  (unsigned long long)b.nsample);
    else
        sl_report(ok, "ns_per_op=%llu bad=%llu", (unsigned long long)(b.ns0 / ops), (unsigned long long)b.bad);
    return 0;
}
