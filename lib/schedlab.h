/*
 * schedlab.h - the API apps are written against (prefix sl_).
 *
 * Model. A job runs one app. The kernel starts process 0 at main(); the app
 * reads its keys (sl_arg_*), allocates and initialises its data, then calls
 * sl_run_procs(fn, arg), which creates the job's other nprocs-1 processes and
 * runs fn(arg, id) once on each, id 0 on the caller; all processes share one
 * address space. When every fn has returned, process 0 checks the answer and
 * calls sl_report(ok, "key=value ..."), which becomes the tail of the job's
 * RESULT line. Keys the kernel prints itself (procs, at, and the app's own
 * keys) are not repeated there.
 *
 * Every app embeds one spec in the ELF section ".slapp" with SL_APP:
 *
 *   SL_APP(.about = "odd-even transposition sort (Markatos)",
 *          .mem_key = "n", .mem_lin = 4, .mem_const = 65536,
 *          SL_KEYS(SL_INT("n", 2, 1 << 20, 8192),
 *                  SL_ENUM("barrier", "spin|block", 0)));
 *
 * The same code builds for the schedlab kernel and for Linux (platform/platform.h).
 *
 * The library is in layers, one folder each, lowest first (lib/LAYERS, which
 * `make layers` checks on the objects of both targets; tools/layers.py):
 *
 *   platform  syscalls, time, the info page, per-process state, context switch
 *   base      this header: keys, output, RESULT, memory, processes
 *   wait      wait/wait.h: waiting on a word (spin, block, twophase, adaptive)
 *   threads   threads/uthread.h, place.h: user-level threads, process control
 *   barriers  barriers/barrier.h: the shapes, over any wait kind
 *   loops     loops/loopsched.h: the loop schedulers
 *   workers   workers/workers.h: an app's workers as threads (sl_run_workers)
 *   start     process 0's start code: sl_lib_init, then main
 *
 * A layer calls only the layers below it. Why this order: a wait is the one
 * operation every synchronization object reduces to, so it sits right above
 * what it needs (futexes, the info page's running[]); the thread layer uses
 * it (process control asks who runs, a ringer pokes a word a process sleeps
 * on with its thread) and so comes above it, and where a wait needs a
 * thread's view (a spinning thread lets another run; a sleeping
 * one parks) the thread layer installs hooks the wait layer calls, as Go's
 * gopark takes unlockf: the wait layer never names a thread function. A
 * barrier's participant is a worker id, which is a thread's, so barriers come
 * above threads; a worker run uses threads and adds its keys to sl_report
 * through a hook the base layer offers (sl_report_keys_from). The start code,
 * like any crt0, is on top: it starts the library, then calls main.
 */
#ifndef SL_SCHEDLAB_H
#define SL_SCHEDLAB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "schedlab/abi.h"
#include "platform/platform.h"
#include "base/rng.h"

#ifdef SL_TARGET_KERNEL
void  *memset(void *dst, int c, size_t n);
void  *memcpy(void *dst, const void *src, size_t n);
void  *memmove(void *dst, const void *src, size_t n);
int    memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int    strcmp(const char *a, const char *b);
int    strncmp(const char *a, const char *b, size_t n);
char  *strchr(const char *s, int c);
#else
#include <string.h>
#endif

#define SL_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- the app spec ---- */
#define SL_INT(name_, min_, max_, def_) \
    { .name = name_, .kind = SL_KEY_INT, .min = (min_), .max = (max_), .def = (def_) }
/* def_ is the index of the default in choices_ ("a|b|c"). */
#define SL_ENUM(name_, choices_, def_) \
    { .name = name_, .kind = SL_KEY_ENUM, .min = 0, .max = 0, .def = (def_), .choices = choices_ }
/* nkeys is counted from the initializers themselves. */
#define SL_KEYS(...) \
    .nkeys = sizeof((struct sl_keyspec[]){ __VA_ARGS__ }) / sizeof(struct sl_keyspec), \
    .keys = { __VA_ARGS__ }
/* The spec is a normal symbol too, so the host backend finds it by name. */
#define SL_APP(...) \
    __attribute__((section(".slapp"), used, aligned(8))) \
    const struct sl_appspec sl_app = { .magic = SL_APPSPEC_MAGIC, __VA_ARGS__ }
extern const struct sl_appspec sl_app;

/* ---- output ---- */
int  sl_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap);
int  sl_snprintf(char *buf, size_t cap, const char *fmt, ...) SL_PRINTF(3, 4);
/* One SYS_write per call (a line of up to SL_WRITE_MAX = 512 bytes): lines never interleave. On the QEMU
   console every line the job writes appears as "[<job id>] <text>", control bytes shown as \xHH
   (kernel/console.c). */
int  sl_printf(const char *fmt, ...) SL_PRINTF(1, 2);
/* The job's verdict and extra RESULT keys; the last call wins. */
void sl_report(int ok, const char *fmt, ...) SL_PRINTF(2, 3);
/* Print "ERROR <app>: ...", report check=FAIL with error=<first word>, exit
   the calling process. Meant for setup errors in process 0. */
__attribute__((noreturn)) void sl_die(const char *fmt, ...) SL_PRINTF(1, 2);
/* For a layer above (workers): keys(buf, cap) writes keys that every later
   sl_report appends to the app's (returns their length, 0 for none). One
   such function; the last one set wins. */
void sl_report_keys_from(int (*keys)(char *buf, size_t cap));

/* ---- start-up: the start code (lib/start/) calls it in process 0 before main() ---- */
void sl_lib_init(void);

/* ---- the app's keys (every key of the spec is present) ---- */
int64_t     sl_arg_int(const char *key);
const char *sl_arg_str(const char *key);   /* NUL-terminated value */
int         sl_arg_is(const char *key, const char *value);

/* ---- identity, time ---- */
volatile struct sl_info *sl_info(void);
int      sl_self(void);       /* this process's index 0..nprocs-1 */
int      sl_nprocs(void);     /* the job's procs= */
int      sl_hart(void);       /* hart the caller runs on now (a syscall) */
uint64_t sl_now_us(void);     /* microseconds of the machine clock */
uint64_t sl_ticks_to_us(uint64_t ticks);
void     sl_yield(void);

/* ---- futex: sleep while *addr == expected (timeout_us 0 = forever) ---- */
#define SL_WAKE_ALL 0x7fffffffu
long sl_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us);
long sl_futex_wake(const uint32_t *addr, uint32_t n);

/* ---- memory: thread-safe, 16-byte aligned, zeroed only by sl_calloc ---- */
void *sl_malloc(size_t bytes);
void *sl_calloc(size_t n, size_t size);
void  sl_free(void *p);
/* Page-backed, 64-byte (cache-line) aligned, not zeroed, from NUMA node
   `node` (-1: the caller's); sl_free it. Blocks over 2 KB from sl_malloc
   are line-aligned too; smaller ones only 16-byte aligned. */
void *sl_alloc_node(size_t bytes, int node);
/* Bytes obtained from SYS_alloc so far (for checking the spec's estimate). */
uint64_t sl_alloc_sysbytes(void);

/* ---- processes ---- */
typedef void (*sl_workfn)(void *arg, int id);
/* Process 0 only: run fn(arg, id) on ids 0..nprocs-1, one per process, and
   return when all have returned. The other processes exit afterwards. */
void sl_run_procs(sl_workfn fn, void *arg);
/* The same contract with the workers as user-level threads that follow the
   job's allotment: sl_run_workers, workers/workers.h. */

/* ---- pause inside spin loops ----
   On the schedlab kernel in deterministic mode (clock=virtual: QEMU runs every hart on one host thread,
   kernel/vclock.h) a pause is SYS_relax, which hands the host thread to the other harts: a spinner
   would otherwise keep it, and the virtual clock running, until the next timer deadline. Otherwise it
   costs one load of the (read-only, never written) info page flags and a branch. */
static inline void
sl_cpu_relax(void)
{
#if defined(__riscv) && defined(SL_TARGET_KERNEL)
    if (((const volatile struct sl_info *)SL_INFO_VA)->flags & SL_INFO_VIRTUAL_CLOCK)
        (void)sl_sys_relax();
    else
        asm volatile("nop" ::: "memory"); /* Zihintpause's `pause` is not in rv64gc */
#elif defined(__riscv)
    asm volatile("nop" ::: "memory");
#elif defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    asm volatile("" ::: "memory");
#endif
}

/* ---- race points ----
   A point in a library protocol where another process's step can fall (a suspend published, a barrier's
   release, abi.h enum sl_race). In a perturbed deterministic boot (perturb=, kernel/perturb.h) the kernel may
   hand the hart over there, so a campaign (schedlab explore) reaches the orders around it; otherwise it costs
   one load of the info page flags and a branch, and off the schedlab kernel nothing. */
static inline void
sl_race_point(enum sl_race kind)
{
#if defined(__riscv) && defined(SL_TARGET_KERNEL)
    if (((const volatile struct sl_info *)SL_INFO_VA)->flags & SL_INFO_PERTURBED)
        (void)sl_sys_race(kind);
#else
    (void)kind;
#endif
}

#endif
