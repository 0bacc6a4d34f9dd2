/*
 * host_sys.c - the platform layer (platform.h) on Linux.
 *
 * Process = pthread; SYS_futex_* = futex(2) on the same word (private
 * futexes: one address space, as on schedlab); SYS_alloc = anonymous mmap
 * (zeroed, page-aligned, never returned, like the kernel's); time =
 * CLOCK_MONOTONIC in nanoseconds (info->timebase_hz = 1e9). Console writes
 * and futexes go through raw syscalls, so a bad pointer comes back as
 * SL_EFAULT exactly as on the kernel, and sanitizer interceptors stay out.
 *
 * Who runs (host_spin.h): a process's running[] entry is 1 from its start to its exit except while it
 * sleeps in a futex wait, and the job's crowding estimate counts it runnable over the same spans.
 */
#ifndef SL_TARGET_KERNEL

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <asm/unistd.h> /* __NR_*: <sys/syscall.h>'s SYS_* clash with abi.h */
#include <time.h>
#include <unistd.h>
#include "platform/platform.h"
#include "platform/host.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STACK_FACTOR 8 /* sanitizers' frames are much larger */
#else
#define STACK_FACTOR 1
#endif

/* The emulated job: filled in by whoever plays the kernel (lib/start/host_main.c, a host unit test)
   before it starts process 0; this layer's own (host.h says who writes which field). */
struct host_job host_job = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .exited = PTHREAD_COND_INITIALIZER,
};

static __thread struct sl_proc *curproc;

struct boot { /* what a new pthread needs to become a process */
    struct sl_proc proc;
    void (*fn)(void *, int);
    void *arg;
};

static long err(void)
{
    switch (errno) {
    case EFAULT: return SL_EFAULT;
    case EAGAIN: return SL_EAGAIN;
    case ETIMEDOUT: return SL_ETIMEDOUT;
    case ENOMEM: return SL_ENOMEM;
    case EINTR: return 0; /* a spurious wake-up, as futexes allow */
    default: return SL_EINVAL;
    }
}

void sl_sys_exit(int status)
{
    int i = curproc->index;

    (void)status;
    pthread_mutex_lock(&host_job.lock);
    __atomic_store_n(&host_job.info.running[i], 0, __ATOMIC_RELAXED);
    host_crowd_down(&host_job.crowd);
    host_job.live--;
    pthread_cond_broadcast(&host_job.exited);
    pthread_mutex_unlock(&host_job.lock);
    pthread_exit(NULL);
}

long sl_sys_write(const void *buf, uint64_t len)
{
    long r = syscall(__NR_write, 1, buf, len);
    return r < 0 ? err() : r;
}

uint64_t sl_plat_ticks(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t sl_sys_time(void) { return sl_plat_ticks(); }
long sl_sys_self(void) { return curproc->index; }
long sl_sys_hart(void)
{
    int c = sched_getcpu();
    return c < 0 ? 0 : c;
}
long sl_sys_yield(void)
{
    sched_yield();
    return 0;
}

/* A process asleep here is not running: its running[] entry is cleared and it does not count as
   runnable for the time of the wait (the entry is put back as it was: a test may have cleared it). */
long sl_sys_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us)
{
    struct timespec ts = { (time_t)(timeout_us / 1000000), (long)(timeout_us % 1000000) * 1000 };
    uint32_t *run = curproc ? &host_job.info.running[curproc->index] : NULL;
    uint32_t was = 0;
    long r;

    if (run) {
        was = __atomic_exchange_n(run, 0, __ATOMIC_RELAXED);
        host_crowd_down(&host_job.crowd);
    }
    r = syscall(__NR_futex, addr, FUTEX_WAIT_PRIVATE, expected, timeout_us ? &ts : NULL, NULL, 0);
    if (run) {
        host_crowd_up(&host_job.crowd);
        __atomic_store_n(run, was, __ATOMIC_RELAXED);
    }
    return r < 0 ? err() : 0;
}

int sl_plat_crowded(void) { return host_crowded(&host_job.crowd); }

/* The CPUs the caller may run on: its affinity mask, or every online CPU if that cannot be read. */
static uint32_t caller_cpus(void)
{
    cpu_set_t mask;
    int ok = sched_getaffinity(0, sizeof mask, &mask) == 0;

    return host_crowd_cpus(ok, ok ? CPU_COUNT(&mask) : 0, sysconf(_SC_NPROCESSORS_ONLN));
}

long sl_sys_futex_wake(const uint32_t *addr, uint32_t n)
{
    long r = syscall(__NR_futex, addr, FUTEX_WAKE_PRIVATE, n > 0x7fffffffu ? 0x7fffffff : n, NULL, NULL, 0);
    return r < 0 ? err() : r;
}

static void *proc_main(void *p)
{
    struct boot b = *(struct boot *)p;

    free(p);
    curproc = &b.proc;
    b.fn(b.arg, b.proc.index);
    sl_sys_exit(0);
}

/* Start process `index`; called with host_job.lock held or before any
   other process exists. */
int host_start_proc(int index, void (*fn)(void *, int), void *arg)
{
    struct boot *b = calloc(1, sizeof *b);
    pthread_attr_t attr;
    int r;

    if (!b)
        return SL_ENOMEM;
    *b = (struct boot){ .proc = { .index = index }, .fn = fn, .arg = arg };
    if (host_job.info.flags & SL_INFO_SYNCSTAT)
        b->proc.sync = &host_job.sync[index];
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)SL_STACK_SIZE * STACK_FACTOR);
    if (index == 0)
        host_crowd_init(&host_job.crowd, caller_cpus());
    host_job.live++;
    host_job.created++;
    __atomic_store_n(&host_job.info.running[index], 1, __ATOMIC_RELAXED);
    host_crowd_up(&host_job.crowd);
    r = pthread_create(&host_job.tid[index], &attr, proc_main, b);
    pthread_attr_destroy(&attr);
    if (r != 0) {
        fprintf(stderr, "host: pthread_create: error %d\n", r);
        abort();
    }
    return index;
}

/* Like the kernel: the new process reads ps when it starts. */
static void start_from(void *ps, int index)
{
    const struct sl_procstart *s = ps;
    s->fn(s->arg, index);
}

long sl_sys_proc_create(const struct sl_procstart *ps)
{
    long r;

    pthread_mutex_lock(&host_job.lock);
    if (host_job.created >= (int)host_job.info.nprocs)
        r = SL_ELIMIT;
    else
        r = host_start_proc(host_job.created, start_from, (void *)ps);
    pthread_mutex_unlock(&host_job.lock);
    return r;
}

long sl_sys_topology(struct sl_topology *out)
{
    *out = (struct sl_topology){ .nharts = host_job.info.nharts, .nnodes = 1 };
    out->node_mem_bytes[0] = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    return 0;
}

long sl_sys_alloc(uint64_t bytes, int node)
{
    uint64_t len = (bytes + 4095) & ~4095ull;
    void *p;

    if (bytes == 0 || node < -1 || node >= (int)host_job.info.nnodes)
        return SL_EINVAL;
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return SL_ENOMEM;
    __atomic_add_fetch(&host_job.sysbytes, len, __ATOMIC_RELAXED);
    return (long)p;
}

long sl_sys_result(int ok, const char *keys)
{
    pthread_mutex_lock(&host_job.lock);
    host_job.have_result = 1;
    host_job.result_ok = ok != 0;
    snprintf(host_job.result, sizeof host_job.result, "%s", keys);
    pthread_mutex_unlock(&host_job.lock);
    return 0;
}

volatile struct sl_info *sl_plat_info(void) { return &host_job.info; }

struct sl_proc *sl_plat_proc(void) { return curproc; }

#endif
