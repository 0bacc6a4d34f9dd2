/*
 * calib.c - the calibration card: what this host's QEMU makes the kernel's basic operations cost.
 *
 * With calib=on the boot hart measures them after BOOT and before t0 (so no job's times include it) and
 * prints one line:
 *
 *   CALIB syscall_ns=<x> switch_ns=<x> ipi_ns=<x|na> tick_ns=<x> synth_unit_ns=<x> cost_us=<n>
 *
 * Times are the time CSR's, in nanoseconds with two decimals, each the mean over a loop:
 *   syscall_ns     a trap into the kernel's vector and sret back, saving and restoring the 30 registers as the
 *                  trap vector does (an ebreak from S-mode to calib_vector, calib_loops.S: QEMU takes it as it takes a
 *                  process's ecall); the syscall's own C code runs at synth_unit_ns-like speed on top
 *   switch_ns      one kernel context switch on one hart (swtch between two contexts, as dispatch does)
 *   ipi_ns         an IPI to another hart (sched_ipi) until that hart has seen it and answered in memory; na
 *                  with one hart
 *   tick_ns        arming the timer for now, its interrupt becoming pending, and disarming it, on the path the
 *                  kernel uses (intr.c: Sstc, or the firmware's): that part of every quantum tick
 *   synth_unit_ns  one work unit of the synth app: its loop body (calib_synth, calib_loops.S: mul, add, fadd.d,
 *                  count, branch, as apps/synth.c compiles to)
 *   cost_us        what the whole card took
 * Each loop stops after its rounds or CALIB_BUDGET_US, whichever comes first (but runs at least one round), so a
 * loaded host cannot make the card long: cost_us stays below about 5 budgets plus one IPI round trip. An IPI
 * once sent is always waited for (an unanswered one would reach the scheduler as a spurious IPI), so when the
 * partner's host thread waits long for a core that round is long too: 21 ms was seen on a loaded 2-core host.
 *
 * It is on by default (calib=off skips it) because it is cheap: cost_us, read from the time CSR of the boots
 * themselves, was 4 ms at one hart and 18 ms at two on a loaded 2-core host (QEMU 7.2), where the IPI round
 * trip, a few ms while the partner's host thread waits for a core, was most of it.
 *
 * Concurrency. No locks: the card runs before t0, when the other harts only wait for go (main.c). The IPI
 * partner (the first hart that is not the boot hart) runs calib_serve() in that wait: while calib_partner is
 * its index it answers each pending software interrupt by bumping calib_pongs; at any other time calib_serve
 * does nothing, so an IPI meant for the scheduler (a job admitted at t0 kicks its hart before go) stays pending.
 * The boot hart sets calib_partner before its first IPI and clears it after the partner answered the last.
 */
#include "sched/core.h"
#include "intr.h"
#include "schedlab/model.h"
#include "syncstat.h"

#define CALIB_ROUNDS      2000
#define CALIB_IPI_ROUNDS  200
#define CALIB_SYNTH_UNITS 200000
#define CALIB_BUDGET_US   8000

void calib_vector(void);          /* calib_loops.S */
void calib_synth(uint64_t units); /* calib_loops.S */
void swtch(struct context *old, struct context *new);
extern char trap_vector[];

static volatile int calib_partner = -1;
static volatile uint64_t calib_pongs;
static uint64_t calib_frame[32]; /* calib_vector's register save area (sscratch) */

static struct context main_ctx, partner_ctx;
static __attribute__((aligned(16))) char partner_stack[4096];

/* ---- the loops: each returns the ticks of `done` rounds (done >= 1) ---- */

struct loop {
    uint64_t t0, stop, done;
};

static void loop_start(struct loop *l)
{
    l->done = 0;
    l->t0 = rdtime();
    l->stop = l->t0 + us_to_ticks(CALIB_BUDGET_US);
}

static int loop_more(struct loop *l, uint64_t rounds)
{
    return l->done < rounds && (l->done == 0 || rdtime() < l->stop);
}

/* ns per round, times 100 (two decimals) */
static uint64_t per_round_centins(struct loop *l, uint64_t units_per_round)
{
    uint64_t ticks = rdtime() - l->t0;
    return ticks * 100000000000UL / plat.timebase_hz / (l->done * units_per_round);
}

static uint64_t measure_trap(void)
{
    struct loop l;
    csr_write(sscratch, (uint64_t)calib_frame);
    csr_write(stvec, (uint64_t)calib_vector);
    for (loop_start(&l); loop_more(&l, CALIB_ROUNDS); l.done++)
        asm volatile(".option push\n.option norvc\nebreak\n.option pop" ::: "memory");
    uint64_t r = per_round_centins(&l, 1);
    csr_write(stvec, (uint64_t)trap_vector);
    csr_write(sscratch, 0); /* the trap vector's invariant: 0 while in S-mode */
    return r;
}

static void partner_loop(void)
{
    for (;;)
        swtch(&partner_ctx, &main_ctx);
}

static uint64_t measure_switch(void)
{
    struct loop l;
    partner_ctx.ra = (uint64_t)partner_loop;
    partner_ctx.sp = (uint64_t)(partner_stack + sizeof partner_stack);
    for (loop_start(&l); loop_more(&l, CALIB_ROUNDS); l.done++)
        swtch(&main_ctx, &partner_ctx); /* there and back: two switches */
    return per_round_centins(&l, 2);
}

/* The partner hart, from its wait for go: answer a calibration IPI. */
void calib_serve(int hart)
{
    if (__atomic_load_n(&calib_partner, __ATOMIC_ACQUIRE) != hart || !(csr_read(sip) & SIP_SSIP))
        return;
    csr_clear(sip, SIP_SSIP);
    __atomic_fetch_add(&calib_pongs, 1, __ATOMIC_RELEASE);
}

/* -1 with one hart (no partner) */
static int64_t measure_ipi(void)
{
    int partner = mycpu()->id == 0 ? 1 : 0; /* the boot hart measures (calib_run) */
    if (ncpus < 2)
        return -1;
    struct loop l;
    __atomic_store_n(&calib_partner, partner, __ATOMIC_RELEASE);
    for (loop_start(&l); loop_more(&l, CALIB_IPI_ROUNDS); l.done++) {
        uint64_t before = __atomic_load_n(&calib_pongs, __ATOMIC_ACQUIRE);
        sched_ipi(1UL << partner);
        while (__atomic_load_n(&calib_pongs, __ATOMIC_ACQUIRE) == before)
            ;
    }
    int64_t r = (int64_t)per_round_centins(&l, 1);
    __atomic_store_n(&calib_partner, -1, __ATOMIC_RELEASE);
    return r;
}

static uint64_t measure_tick(void)
{
    struct loop l;
    for (loop_start(&l); loop_more(&l, CALIB_IPI_ROUNDS); l.done++) {
        intr_set_timer(rdtime());
        while (!(csr_read(sip) & SIP_STIP))
            ;
        intr_set_timer(~0UL); /* disarmed: STIP clears */
    }
    return per_round_centins(&l, 1);
}

static uint64_t measure_synth(void)
{
    struct loop l;
    uint64_t fs = csr_read(sstatus) & SSTATUS_FS;
    csr_set(sstatus, SSTATUS_FS_INITIAL); /* the kernel has no FP state of its own; this loop's is scratch */
    for (loop_start(&l); loop_more(&l, 1); l.done++)
        calib_synth(CALIB_SYNTH_UNITS);
    uint64_t r = per_round_centins(&l, CALIB_SYNTH_UNITS);
    csr_clear(sstatus, SSTATUS_FS);
    csr_set(sstatus, fs);
    return r;
}

static void fmt_centins(char *buf, size_t len, int64_t v)
{
    if (v < 0)
        snprintf(buf, len, "na");
    else
        snprintf(buf, len, "%lu.%02lu", (uint64_t)v / 100, (uint64_t)v % 100);
}

/* The boot hart, before t0: measure and print the CALIB line. */
void calib_run(void)
{
    uint64_t t0 = rdtime();
    int64_t v[5] = { (int64_t)measure_trap(), (int64_t)measure_switch(), measure_ipi(), (int64_t)measure_tick(),
                     (int64_t)measure_synth() };
    char s[5][24];
    /* what a blocking wait costs, for policy=adaptive (syncstat.h); an IPI slower than 20 us is a busy
       host's (tools/py/schedlab/busy.py), not this machine's */
    syncstat_set_wake_cost(v[2] >= 0 ? (uint64_t)(2 * v[0] + 2 * v[1] + MIN(v[2], 2000000)) : 0);
    for (int i = 0; i < 5; i++)
        fmt_centins(s[i], sizeof s[i], v[i]);
    kprintf("CALIB syscall_ns=%s switch_ns=%s ipi_ns=%s tick_ns=%s synth_unit_ns=%s cost_us=%lu\n", s[0], s[1], s[2],
            s[3], s[4], time_us(rdtime() - t0));
}

/* The machine model's cycle (model=, tools/model/README.md): the time of one emulated instruction, the fastest
   of MODEL_CALIB_RUNS runs of model_calib_loop (calib_loops.S) on the boot hart before the other harts start
   (the first also pays for translating the loop; a busy host only makes a run slower). The plugin times the
   same runs by the loop's addresses, also keeping the fastest, and charges misses by its own measurement; this
   one goes on the BOOT line. Picoseconds. */
void model_calib_loop(uint64_t iters, uint64_t *buf);
static uint64_t model_calib_buf[8] __attribute__((aligned(64)));

uint64_t calib_model_cycle_ps(void)
{
    uint64_t best = ~0UL;
    for (int i = 0; i < MODEL_CALIB_RUNS; i++) {
        uint64_t t = rdtime();
        model_calib_loop(MODEL_CALIB_ITERS, model_calib_buf);
        best = MIN(best, rdtime() - t);
    }
    return best * (1000000000000UL / plat.timebase_hz) / ((uint64_t)MODEL_CALIB_ITERS * MODEL_CALIB_BODY);
}
