/*
 * sim_kernel.c - the kernel's own data at a trap and at a switch (issue 28): the lines the kernel touches on
 * a hart each time it takes a quantum tick or switches processes. They are what Tucker & Gupta's "cache
 * corruption" is made of besides the other process's own lines: each one that misses evicts a line of the
 * job's from the hart's caches (a direct-mapped L2: iris), and the shared ones (the scheduler's lock, run
 * queues, the policy's words) are written by every hart, so they move between caches (coherence misses).
 * sim_start.c already has each process's trap frame and context at its switches; this file adds the rest.
 *
 * Measured (deterministic QEMU, a throw-away copy of tools/model/plugin.c that split each trap - from the trap
 * vector to the first user-mode access - by the regions its kernel-mode accesses went to: procs[] (trap frames,
 * contexts, kernel stacks), the harts' scheduler stacks, the rest of the kernel's image; distinct lines per
 * trap; `tools/schedlab run --deterministic --model P --cpus 2 -v policy=timeslice quantum=1ms
 * job=gauss:n=256,variant=coarse,sync=barrier,procs=2 job=hog:procs=2`, seed 1):
 *
 *                      iris (16 B lines)            ksr1 (128 B lines)
 *                      procs[]  image  hart stack   procs[]  image  hart stack
 *   tick, no switch     29.5     7.0     0            7.1     5.5     0          lines a trap (1877 / 3262)
 *   tick that switches 106.5    33.0     0.5         19.2    14.0     0.5        lines a trap (218 / 381)
 *
 * So a trap touches its process's trap frame (272 B) and about 256 B at the top of its kernel stack, and six
 * scattered words of the kernel's shared data (the same count of lines at 16 and 128 B: separate words); a
 * switch the trap frame and context (KSTATE, sim_start.c) and about 512 B of kernel stack on each side, and
 * fourteen shared places of about 32 B (528 B at 16 B lines, 14 lines at 128 B) plus the hart's struct cpu
 * (its scheduler context). The model below gives 33 / 6 and 112 / 36 lines on iris, 5 / 6 and 14 / 15 on
 * ksr1. On QEMU they cost the job 1.1 misses a tick on iris (0.9 on ksr1, nearly all coherence) and 22 (7.5)
 * a switch in the kernel itself, and Gauss beside the hog at quantum=1ms 8,000 more misses of its own data
 * than alone (45,751 against 37,783 user-mode misses on iris: the lines the switches' misses evicted).
 *
 * Where. In the kernel's part of node 0 (sim_mem.c's reserve: the image at 2 MiB, procs[] above it), at fixed
 * addresses: a shared place every 1 KiB (a line of its own at any profile's line size), a struct cpu per
 * hart, and one kernel stack per process, KSTACK_SIZE apart as procs[] has them (allocated as processes
 * first run, wrapping inside the reserve). Who pays. As on QEMU, where the marks split a switch (kernel/
 * model.c): the trap and the leaving process's side to its job, the scheduler's pick (the other shared
 * places, struct cpu) to job 0 - the kernel, which the simulator does not report - and the incoming side
 * (its stack, the lock's release and cpu->cur) to the new process's job.
 *
 * Deterministic QEMU's extra timer trap every VCLOCK_SLICE_US of a hart's run (kernel/vclock.h: 10 a quantum
 * of 1 ms; they find no tick due and re-arm) is a tick's trap too, and only there: kern_vclock, with the
 * model's charge=off, the simulator's stand-in for that mode. Measured: the hog beside gauss n=256 at one
 * hart under butterfly (every word an access), four runs (block=5000 and 50000, quantum=1ms and 10ms)
 * solved for the words a block, a switch, 100 us of run and the start-up: 143 words each 100 us, against a
 * tick's 112 here (the re-arm's own words are left out); without them the hog's accesses were 74 % low.
 *
 * Not modelled: system calls' kernel lines (a blocking barrier's futex path: its trap frame is sim_start.c's
 * at the switch it causes) and the stall of a tick's lines in simulated time (a few lines a quantum; a
 * switch's incoming side is charged, as start_dispatch's).
 */
#include "sim.h"
#include "sim_mem.h"

#define VCLOCK_SLICE_NS 100000UL          /* kernel/vclock.h VCLOCK_SLICE_US */
#define K_BASE      0x80200000UL          /* the kernel's load address (node 0's reserve, sim_mem.c) */
#define K_SHARED    (K_BASE + 0x10000)    /* the shared places, K_PLACE apart */
#define K_PLACE     1024UL
#define K_CPU       (K_BASE + 0x20000)    /* struct cpu per hart, K_PLACE apart (SL_MAX_HARTS of them) */
#define K_STACKS    (K_BASE + 0x40000)    /* kernel stacks, KSTACK_SIZE apart, up to K_END */
#define K_END       (K_BASE + (2UL << 20))

#define TRAP_FRAME_B  272  /* struct trapframe: x1..x31, epc, kernel_sp, kernel_tp (kernel/proc.h) */
#define TRAP_STACK_B  256  /* kernel stack a tick's trap uses (the table above: 29.5 lines less the frame) */
#define SWITCH_STACK_B 512 /* each side's kernel stack at a switch (106.5 lines less two KSTATEs, halved) */
#define TRAP_SHARED   6    /* shared places a trap writes (the lock, the timer's words) */
#define SWITCH_SHARED 14   /* shared places a switch touches, the trap's first */
#define IN_SHARED     2    /* of those, written again by the incoming side (the lock's release, cpu->cur) */
#define SWITCH_PLACE_B 32
#define CPU_B         128  /* the hart's struct cpu: its scheduler context (swtch) and cur */

static uint64_t kstack_top[NJOB][SL_MAX_PROCS]; /* 0: not placed yet */
static unsigned kstacks_used;

/* The top of sp's kernel stack (the bytes a trap's frames use lie just below it). */
static uint64_t kstack(struct sproc *sp)
{
    uint64_t *top = &kstack_top[sp->p.job->id - 1][sp->p.idx];
    if (!*top) {
        unsigned slots = (unsigned)((K_END - K_STACKS) / KSTACK_SIZE);
        *top = K_STACKS + (uint64_t)(kstacks_used++ % slots + 1) * KSTACK_SIZE;
    }
    return *top;
}

/* places [from, to) of the shared ones, bytes each, by job's process on hart (stores: the kernel takes a
   lock or updates a word at each). Stall ns. */
static uint64_t shared(int job, int hart, int from, int to, uint64_t bytes)
{
    uint64_t ns = 0;
    for (int i = from; i < to; i++)
        ns += mem_touch(job, hart, K_SHARED + (uint64_t)i * K_PLACE, bytes, 8, 1);
    return ns;
}

/* sp takes a quantum tick on hart: its trap frame saved and restored, its kernel stack, the shared words.
   Its stall is left out of simulated time (header). */
void kern_tick(struct sproc *sp, int hart)
{
    if (!mem_on())
        return;
    int job = sp->p.job->id;
    uint64_t tf = start_kstate(sp);
    mem_touch(job, hart, tf, TRAP_FRAME_B, 8, 1);
    mem_touch(job, hart, kstack(sp) - TRAP_STACK_B, TRAP_STACK_B, 8, 1);
    shared(job, hart, 0, TRAP_SHARED, 16);
    mem_touch(job, hart, tf, TRAP_FRAME_B, 8, 0);
}

/* Deterministic mode's timer traps while sp ran on hart from `from` (its dispatch or last trap) to `to`, a
   trap every VCLOCK_SLICE_US of it: at a quantum tick (tick: 1) the last one is that tick's own trap. */
void kern_vclock(struct sproc *sp, int hart, uint64_t from, uint64_t to, int tick)
{
    if (!mem_on() || !mem_deterministic() || to <= from)
        return;
    uint64_t n = (to - from) / (VCLOCK_SLICE_NS), extra = tick ? ((to - from) % VCLOCK_SLICE_NS ? n : n - 1) : n;
    for (uint64_t i = 0; i < extra; i++)
        kern_tick(sp, hart);
}

/* sp leaves hart (after start_leave): its side of the switch, then the scheduler's pick (job 0). */
void kern_leave(struct sproc *sp, int hart)
{
    if (!mem_on())
        return;
    int job = sp->p.job->id;
    mem_touch(job, hart, kstack(sp) - SWITCH_STACK_B, SWITCH_STACK_B, 8, 1);
    shared(job, hart, 0, TRAP_SHARED, SWITCH_PLACE_B);
    shared(0, hart, TRAP_SHARED, SWITCH_SHARED, SWITCH_PLACE_B);
    mem_touch(0, hart, K_CPU + (uint64_t)hart * K_PLACE, CPU_B, 8, 1);
}

/* sp is dispatched on hart (with start_dispatch): its kernel stack on the way back to user, the lock's
   release and the hart's cur. Stall ns. */
uint64_t kern_dispatch(struct sproc *sp, int hart)
{
    if (!mem_on())
        return 0;
    int job = sp->p.job->id;
    return mem_touch(job, hart, kstack(sp) - SWITCH_STACK_B, SWITCH_STACK_B, 8, 0) +
           shared(job, hart, 0, IN_SHARED, 8);
}
