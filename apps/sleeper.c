/*
 * sleeper - a job that mostly waits, like one doing I/O: every process repeats `iters` times
 * "compute `work` units, then sleep `sleep_us` microseconds" (a futex wait with a timeout on a word
 * nobody changes). All of its processes are blocked most of the time, which is what the gang policy's
 * idle mask is for: the slot of a sleeping gang should end early and give the harts to other jobs.
 *
 * Checks:
 *   sleep    every wait returned SL_ETIMEDOUT and lasted at least sleep_us by the machine clock
 *   work     each process's LCG state equals h0 advanced by all its units (registers survived)
 * slept_us is the mean measured sleep, the timer's lateness included; max_slept_us the longest.
 */
#include "schedlab.h"
#include "base/lcg.h"

SL_APP(.about = "sleeps in a loop, like I/O: blocked most of the time", .mem_const = 128 * 1024, .mem_per_proc = 64,
       SL_KEYS(SL_INT("iters", 1, 1000000, 50), SL_INT("sleep_us", 1, 10000000, 2000),
               SL_INT("work", 0, 100000000, 1000)));

struct slot { /* one per process, written only by it */
    uint64_t h, bad_sleep, slept_us, max_us;
    uint32_t never; /* the word slept on: nobody changes it */
} __attribute__((aligned(64)));

struct sleeper {
    int64_t iters, sleep_us, work;
    struct slot *slot;
};

static uint64_t advance(uint64_t h, uint64_t units)
{
    for (uint64_t u = 0; u < units; u++)
        h = sl_lcg_step(h);
    return h;
}

static void worker(void *arg, int id)
{
    struct sleeper *z = arg;
    struct slot *s = &z->slot[id];

    for (int64_t i = 0; i < z->iters; i++) {
        s->h = advance(s->h, (uint64_t)z->work);
        uint64_t t0 = sl_now_us();
        long r = sl_futex_wait(&s->never, 0, (uint64_t)z->sleep_us);
        uint64_t dt = sl_now_us() - t0;
        s->slept_us += dt;
        if (dt > s->max_us)
            s->max_us = dt;
        s->bad_sleep += r != SL_ETIMEDOUT || dt < (uint64_t)z->sleep_us;
    }
}

int main(void)
{
    int n = sl_nprocs();
    struct sleeper z = { sl_arg_int("iters"), sl_arg_int("sleep_us"), sl_arg_int("work"), 0 };
    uint64_t bad_sleep = 0, bad_work = 0, slept = 0, max_us = 0;

    z.slot = sl_alloc_node((size_t)n * sizeof(struct slot), -1);
    if (!z.slot)
        sl_die("out of memory for %d processes", n);
    memset(z.slot, 0, (size_t)n * sizeof(struct slot));

    sl_run_procs(worker, &z);

    uint64_t expect = sl_lcg_jump(0, (uint64_t)(z.work * z.iters));
    for (int i = 0; i < n; i++) {
        bad_sleep += z.slot[i].bad_sleep;
        bad_work += z.slot[i].h != expect;
        slept += z.slot[i].slept_us;
        if (z.slot[i].max_us > max_us)
            max_us = z.slot[i].max_us;
    }
    sl_report(bad_sleep == 0 && bad_work == 0, "slept_us=%lu max_slept_us=%lu bad_sleep=%lu bad_work=%lu",
              (unsigned long)(slept / (uint64_t)(n * z.iters)), (unsigned long)max_us, (unsigned long)bad_sleep,
              (unsigned long)bad_work);
    return 0;
}
