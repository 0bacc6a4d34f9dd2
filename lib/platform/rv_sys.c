/*
 * rv_sys.c - the platform layer on the schedlab kernel: ecall wrappers, the
 * `time` CSR, the info page, and each process's own state: process 0's
 * (sl_plat_proc0, for the start code) and every other's (sl_proc_start,
 * the C half of sl_proc_trampoline).
 *
 * Syscall convention (abi.h): number in a7, arguments in a0..a5, `ecall`,
 * result in a0. The "memory" clobber makes every stub a compiler barrier:
 * the kernel may read or write user memory (futex words, buffers) during it.
 *
 * Per-process state: tp holds the address of the caller's struct sl_proc.
 * Process 0's lives in static storage, every other process's in the frame
 * of sl_proc_start, which never returns, so the address stays valid.
 */
#ifdef SL_TARGET_KERNEL

#include "platform/platform.h"

void sl_proc_trampoline(void);

static long ecall(long n, long a0, long a1, long a2)
{
    register long r_a0 asm("a0") = a0;
    register long r_a1 asm("a1") = a1;
    register long r_a2 asm("a2") = a2;
    register long r_a7 asm("a7") = n;
    asm volatile("ecall" : "+r"(r_a0) : "r"(r_a1), "r"(r_a2), "r"(r_a7) : "memory");
    return r_a0;
}

void sl_sys_exit(int status)
{
    for (;;)
        ecall(SYS_exit, status, 0, 0);
}

long sl_sys_write(const void *buf, uint64_t len) { return ecall(SYS_write, (long)buf, (long)len, 0); }
uint64_t sl_sys_time(void) { return (uint64_t)ecall(SYS_time, 0, 0, 0); }
long sl_sys_self(void) { return ecall(SYS_self, 0, 0, 0); }
long sl_sys_hart(void) { return ecall(SYS_hart, 0, 0, 0); }
long sl_sys_yield(void) { return ecall(SYS_yield, 0, 0, 0); }

long sl_sys_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us)
{
    return ecall(SYS_futex_wait, (long)addr, (long)expected, (long)timeout_us);
}

long sl_sys_futex_wake(const uint32_t *addr, uint32_t n) { return ecall(SYS_futex_wake, (long)addr, (long)n, 0); }

/* The kernel starts the new process in sl_proc_trampoline with a0 = ps. */
long sl_sys_proc_create(const struct sl_procstart *ps)
{
    return ecall(SYS_proc_create, (long)sl_proc_trampoline, (long)ps, 0);
}

long sl_sys_topology(struct sl_topology *out) { return ecall(SYS_topology, (long)out, 0, 0); }
long sl_sys_alloc(uint64_t bytes, int node) { return ecall(SYS_alloc, (long)bytes, node, 0); }
long sl_sys_result(int ok, const char *keys) { return ecall(SYS_result, ok, (long)keys, 0); }
long sl_sys_relax(void) { return ecall(SYS_relax, 0, 0, 0); }
long sl_sys_race(enum sl_race kind) { return ecall(SYS_relax, (uint64_t)kind, 0, 0); }

/* sl_plat_ticks, sl_plat_info and sl_plat_proc are inline in platform.h. */

static void set_proc(struct sl_proc *p) { asm volatile("mv tp, %0" : : "r"(p) : "memory"); }

static struct sl_proc proc0;

/* The process's event log, where the kernel mapped one (trace=on; abi.h). */
static void attach_log(struct sl_proc *p)
{
    uint32_t cap = sl_plat_info()->ulog_cap;

    if (cap && (cap & (cap - 1)) == 0) {
        p->ulog = (struct sl_ulog *)(SL_ULOG_VA + (uint64_t)p->index * SL_ULOG_STRIDE);
        p->ulog_mask = cap - 1;
        p->ulog_cycles = (sl_plat_info()->flags & SL_INFO_ULOG_CYCLES) != 0;
    }
    if (sl_plat_info()->flags & SL_INFO_SYNCSTAT) /* its sync statistics record (abi.h, syncstat.h) */
        p->sync = (struct sl_sync *)(SL_SYNC_VA + SL_SYNC_OFFSET(p->index));
}

/* Process 0's state, first thing in its start code (lib/start/rv_start.c). */
void sl_plat_proc0(void)
{
    proc0.index = 0;
    attach_log(&proc0);
    set_proc(&proc0);
}

/* From sl_proc_trampoline: a process made by sl_sys_proc_create(ps). */
__attribute__((noreturn)) void sl_proc_start(const struct sl_procstart *ps, long index)
{
    struct sl_proc self = { .index = (int)index, .sched = 0 };

    attach_log(&self);
    set_proc(&self);
    ps->fn(ps->arg, (int)index);
    sl_sys_exit(0);
}

#endif
