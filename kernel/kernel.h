/*
 * kernel.h - declarations shared by the kernel's subsystems. One section per file that defines them.
 * Which file may call which (the layers, bottom to top) is in LAYERS.md.
 *
 * The model (read this first)
 *   hart     a RISC-V hardware thread. Firmware hart ids may be sparse; the kernel numbers harts 0..H-1 in
 *            ascending hart-id order and keeps one struct cpu per hart (tp points at it in S-mode).
 *   job      one running application from the scenario: one Sv39 address space, one read-only info page,
 *            one RESULT line when its last process ends.
 *   process  a kernel-scheduled U-mode context of a job (struct proc): registers, FP state, kernel stack.
 *            Processes are what the policies place on harts; user-level threads (lib/) run on top of them.
 *   policy   a struct sched_class (sched/sched.h): which process runs on which hart, when.
 *
 * Locks, and the order they nest in (a hart may take a lock only while holding locks above it):
 *   done_lock (launcher.c)     the count of finished jobs; RESULT and SUMMARY printing; held from the run's
 *                              verdict (last RESULT, or the watchdog) to QEMU's exit, never released then
 *   job->lock (proc.h)         a job's process list, memory and result fields; never held with done_lock
 *   sched_lock (sched/core.c)  every process's state, every run queue, all policy state, futex queues
 *   deadline_lock (deadline.c) the deadline queue (taken under sched_lock; nothing is taken under it)
 *   proc_table_lock (proc.c)   which process slots are in use (taken under job->lock, never under sched_lock)
 *   kalloc's node locks        the free page lists (taken under job->lock)
 *   console_lock (console.c)   innermost: kprintf is called with any of the above held
 *   (ulog_lock (ulog.c) sits between proc_table_lock and the kalloc locks.) spinlock.h gives each a rank in
 *   this order, which acquire checks in a KCHECKS build (make KCHECKS=1; make test).
 * spinlock.h records each lock's holder: re-acquiring or releasing a lock the hart does not hold panics,
 * and code whose rule is "X held" checks it (ASSERT_HELD).
 */
#ifndef KERNEL_H
#define KERNEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "schedlab/abi.h"
#include "param.h"
#include "riscv.h"
#ifndef SCHEDLAB_SIM
#include "rvasm.h"
#include "sbi.h"
#endif
/* A host build of kernel code (-DSCHEDLAB_SIM: the simulator, the host tests) supplies read_tp() and rdtime()
   itself, before this header (its build's -include); the kernel names no header of its. */
#include "spinlock.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ROUNDUP(x, a) (((x) + (a) - 1) & ~((uint64_t)(a) - 1))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

struct proc;
struct job;

/* ---- string.c / printf.c ---- */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
size_t strlcpy(char *d, const char *s, size_t n);
char *strchr(const char *s, int c);
char *strcpy(char *d, const char *s);
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- console.c ---- */
void console_write_job(int job, int proc, const char *s, size_t n);   /* a job's output: "[<job>] " lines */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* console.c calls it for a line printed while a policy hook runs (c->hook, set only with KCHECKS); the
   scheduling core installs sched_hook_printed (sched_init), which panics unless the line is a PANIC. */
struct cpu;
extern void (*console_hook_printed)(struct cpu *c, const char *line);
void console_exit(int code) __attribute__((noreturn));                /* platform_exit at a line start */
/* console_exit's last call before QEMU's exit (the boot layer's batch_leaving, batch.h): may print lines
   through print (console_lock is held) and return the exit status, or not return at all. NULL: none. */
extern int (*console_leaving)(int code, void (*print)(const char *line));

/* ---- platform.c / fdt.c: what the device tree told us, and leaving QEMU ---- */
#include "fdt.h"
extern struct platform plat;
void platform_exit(int code) __attribute__((noreturn));
uint64_t time_us(uint64_t ticks);      /* ticks of the time CSR -> microseconds */
uint64_t us_to_ticks(uint64_t us);

/* ---- kalloc.c: physical pages, one free list per NUMA node ---- */
void kalloc_init(void);
void *kalloc_page(int node);           /* one 4 KiB page from node (or any node when it is empty); NULL if none */
void kfree_page(void *pa);
void kalloc_scrub(void);                /* zero every page ever handed out (a batch's restart: batch.c) */
uint64_t kalloc_free_bytes(int node);  /* node < 0: all nodes */
int page_node(uint64_t pa);

/* ---- vm.c: Sv39 address spaces ---- */
typedef uint64_t pte_t;
typedef pte_t *pagetable_t;
void vm_init(void);
extern pagetable_t kernel_pagetable;
uint64_t vm_satp(pagetable_t pt);
pagetable_t uvm_create(void);
int uvm_map(pagetable_t pt, uint64_t va, uint64_t pa, uint64_t perm);
int uvm_alloc(pagetable_t pt, uint64_t va, uint64_t len, uint64_t perm, int node);
void uvm_unmap(pagetable_t pt, uint64_t va, uint64_t len); /* clear the PTEs; the pages are not freed */
void uvm_free(pagetable_t pt);
uint64_t uvm_translate(pagetable_t pt, uint64_t va, uint64_t perm);   /* pa of va with perm, or 0 */
int uvm_check(pagetable_t pt, uint64_t va, uint64_t len, uint64_t perm); /* 0: all of it mapped with perm */
int copy_from_user(pagetable_t pt, void *dst, uint64_t src, size_t n);  /* all or nothing: 0, or -1 */
int copy_to_user(pagetable_t pt, uint64_t dst, const void *src, size_t n);

/* ---- apps.c: the embedded apps ---- */
struct app {
    const char *name;
    const uint8_t *elf;
    size_t size;
    const struct sl_appspec *spec;
};
void apps_init(void);
const struct app *app_lookup(const char *name);
const struct app *app_at(int i);
int napps(void);
uint64_t elf_load(pagetable_t pt, const struct app *a, int node, char *err, size_t errlen);

/* ---- panic.c: a kernel bug - PANIC on the console, exit status 3 (a leaf: calls only the console) ---- */
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ---- trap.c ---- */
void trap_init_hart(void);
void usertrap(void *tf) __attribute__((noreturn));
void proc_return_to_user(struct proc *p) __attribute__((noreturn));
void kernel_fault(uint64_t scause, uint64_t sepc, uint64_t stval, uint64_t sp) __attribute__((noreturn));
const char *exception_name(uint64_t scause);

/* ---- syscall.c ---- */
void syscall(struct proc *p);

/* ---- futex.c ---- */
long futex_wait(struct proc *p, uint64_t uaddr, uint32_t expected, uint64_t timeout_us);
long futex_wake(struct job *j, uint64_t uaddr, uint32_t n);
void futex_cancel(struct proc *p);      /* sched_lock held: take a blocked p off its futex queue */

/* ---- calib.c (the calibration card, calib=on) ---- */
void calib_run(void);                   /* boot hart, before t0: measure and print the CALIB line */
void calib_serve(int hart);             /* the other harts while they wait for go: answer its IPIs */
uint64_t calib_model_cycle_ps(void);    /* boot hart, model= only: one emulated instruction, in ps */

/* ---- model.c (the machine model's marks, model=) ---- */
extern char model_spec[];               /* the canonical spec; "" = no model */
extern uint64_t model_cycle_ps;
void model_start(const char *spec);     /* before t0: mark every dispatch and switch out from now on */
/* model=spec with one emulated instruction lasting cycle_ps: the boot hart, before t0 */
static inline void model_configure(const char *spec, uint64_t cycle_ps)
{
    model_cycle_ps = cycle_ps;
    model_start(spec);
}
uint64_t model_pace_rate(const char *spec); /* pace=R of a model spec, 0 = unpaced */
void model_pace_start(void);            /* launcher, before the card and t0: a paced boot's pacing starts */

/* ---- launcher.c ---- */
void launcher_init(const char *scenario, int in_batch); /* parse the scenario (boot hart, before the other harts
                                                          run); in_batch: one of a batch's (batch.c) */
void launcher_start(void);              /* t0 of the scenario: admit the jobs that arrive at 0, arm the rest */
void launcher_job_done(struct job *j);  /* life_hooks.job_done: print RESULT; after the last job SUMMARY and exit */

#endif
