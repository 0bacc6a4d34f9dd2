/*
 * platform.h - the one interface between lib/ and what lies beneath it.
 *
 * Two implementations exist, chosen by the build, never by #ifdef in callers:
 *   rv_*.c, rv_*.S     the schedlab kernel: ecall wrappers per abi.h, rdtime,
 *                      the info page at SL_INFO_VA (built with -DSL_TARGET_KERNEL)
 *   host_*.c, host_*.S Linux: pthreads play processes, futex(2), mmap, an
 *                      info page emulated in memory (host.h; lib/start/host_main.c
 *                      plays the kernel)
 * This is the lowest of the library's layers (lib/LAYERS): everything above
 * it (allocator, printf, waits, threads, barriers, apps) is the same code on
 * both, and nothing here calls up into them (the start code, lib/start/,
 * starts the library and the app).
 *
 * The sl_sys_* functions are the raw syscalls of abi.h: same arguments, same
 * results (negative = SL_E*), no checking; the kernel checks pointers.
 *
 * Per-process state: every process has one struct sl_proc that only it
 * touches, reachable in O(1) by sl_plat_proc(). On the kernel target the
 * library keeps its address in `tp` (the kernel saves and restores user tp
 * like any register and never looks at it); on the host it is a __thread.
 */
#ifndef SL_PLATFORM_H
#define SL_PLATFORM_H

#include <stdint.h>
#include "schedlab/abi.h"

/* A new process runs fn(arg, index) and then exits; index = its SYS_self. */
typedef void (*sl_procfn)(void *arg, int index);

/* Read by the new process when it starts: must stay valid until the new
   process has returned from fn (sl_run_procs keeps it in its frame). */
struct sl_procstart {
    sl_procfn fn;
    void     *arg;
};

/* Library state private to one process (no other process reads it, so it
   never shares a cache line with anything hot by construction: it lives in
   the process's own stack frame or, for process 0, in static storage). */
struct sl_proc {
    int   index;      /* SYS_self, cached: sl_self() must be cheap */
    void *sched;      /* reserved for the user-level thread library */
    struct sl_ulog *ulog;   /* this process's event log (trace=on), or NULL: eventlog.h */
    uint32_t ulog_mask;     /* its capacity - 1 */
    uint32_t ulog_cycles;   /* its records carry the cycle CSR (SL_INFO_ULOG_CYCLES), not time */
    struct sl_sync *sync;   /* this process's sync statistics (policy=adaptive), or NULL: syncstat.h */
};

/* ---- raw syscalls (abi.h) ---- */
__attribute__((noreturn)) void sl_sys_exit(int status);
long     sl_sys_write(const void *buf, uint64_t len);
uint64_t sl_sys_time(void);
long     sl_sys_self(void);
long     sl_sys_hart(void);
long     sl_sys_yield(void);
long     sl_sys_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us);
long     sl_sys_futex_wake(const uint32_t *addr, uint32_t n);
long     sl_sys_proc_create(const struct sl_procstart *ps);
long     sl_sys_topology(struct sl_topology *out);
long     sl_sys_alloc(uint64_t bytes, int node);   /* address, or SL_E* */
long     sl_sys_result(int ok, const char *keys);
#ifdef SL_TARGET_KERNEL
long     sl_sys_relax(void);                       /* a spin pause; hands the hart over only with clock=virtual */
long     sl_sys_race(enum sl_race kind);          /* a library race point (sl_race_point); SYS_relax's other use */
#endif

/* ---- cheap queries ---- */
#ifdef SL_TARGET_KERNEL
/* Inline on the kernel target: both are on the waits' paths, where an out-of-line call costs a frame's
   stores and loads - each one a charged access under the machine model (tools/model). */
static inline uint64_t
sl_plat_ticks(void)                            /* `time` CSR, no trap */
{
    uint64_t t;
    __asm__ volatile("rdtime %0" : "=r"(t));
    return t;
}
static inline volatile struct sl_info *
sl_plat_info(void)                             /* the job info page: a constant address */
{
    return (volatile struct sl_info *)SL_INFO_VA;
}
#else
uint64_t sl_plat_ticks(void);                  /* `time` CSR, no trap */
volatile struct sl_info *sl_plat_info(void);   /* the job info page */
#endif
#ifdef SL_TARGET_KERNEL
/* The caller's sl_proc: tp, one instruction (it is on every thread
   operation's path). volatile: each call reads tp anew, so a thread that
   resumed on another process after a switch sees that process's tp. */
static inline struct sl_proc *
sl_plat_proc(void)
{
    struct sl_proc *p;
    __asm__ volatile("mv %0, tp" : "=r"(p));
    return p;
}
/* Process 0's sl_proc (and its event log), set up: the first call of the start code (lib/start/). */
void sl_plat_proc0(void);
#else
struct sl_proc *sl_plat_proc(void);            /* the caller's sl_proc */
#endif

/* ---- waiting (wait/wait.h's sl_wait_giveway, wait/wait_adaptive.c) ----
   SL_PLAT_RUNNING_EXACT: 1 where the info page's running[] says exactly who is on a hart (the kernel);
   on the host it says only who sleeps in a futex wait. sl_plat_crowded(): 1 while some of the job's
   processes may be waiting for a CPU that a spinning waiter holds; always 0 on the kernel, so the waits
   compile there as if the question were never asked; the host guesses from its processes vs its CPUs
   (lib/platform/host_spin.h). */
#ifdef SL_TARGET_KERNEL
#define SL_PLAT_RUNNING_EXACT 1
static inline int
sl_plat_crowded(void)
{
    return 0;
}
#else
#define SL_PLAT_RUNNING_EXACT 0
int sl_plat_crowded(void);
#endif

#endif
