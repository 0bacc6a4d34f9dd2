/*
 * host_main.c - the "kernel" of the host backend: runs one app as one job.
 *
 *   build/host/<app> [procs=N] [seed=N] [fg_ms=N] [key=value ...]
 *
 * Tokens may also be comma-joined as in a scenario (n=64,sync=cond). The
 * job's keys (the app's own and procs, at, adapt, mem) are checked against
 * its own spec (the sl_app symbol, which is the .slapp section on the kernel
 * target) by the kernel's scenario parser itself (host_scenario.c); an error
 * prints the parser's one ERROR line and exits with status 2.
 * fg_ms (host only) is how long a background app (hog) sees fg_live = 1.
 *
 * The app's main() is renamed sl_app_main by the host build (lib/host.mk)
 * and runs as process 0 on its own pthread. The job ends when its last
 * process exits; the RESULT line follows the kernel's format (policy=host)
 * and the exit status is 0 iff the app reported check=ok. A fault (SIGSEGV,
 * SIGILL, ...) ends the job with check=FAIL, as the kernel would.
 * The memory the app took through SYS_alloc is compared with its spec's
 * estimate: using more than the estimate is an error (status 3).
 */
#ifndef SL_TARGET_KERNEL

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "schedlab.h"
#include "platform/host.h"
#include "../../kernel/scenario.h"

int sl_app_main(void);

static long long fg_ms = 300;
static long long mem_estimate;
static char keys_spaced[SL_ARGS_MAX + 1]; /* info->args with spaces, for RESULT */

static void die(int status, const char *fmt, ...)
{
    va_list ap;

    fputs("ERROR ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    exit(status);
}

static long long num(const char *tok, const char *v, long long lo, long long hi)
{
    char *end;
    long long x = strtoll(v, &end, 10);

    if (*v == 0 || *end != 0 || x < lo || x > hi)
        die(2, "%s: expected an integer in [%lld, %lld]", tok, lo, hi);
    return x;
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Split argv on commas; take the host's own keys (seed, fg_ms), return the job's. */
static int split_args(int argc, char **argv, char **tok, int maxtok, long long *seed)
{
    int n = 0;

    for (int i = 1; i < argc; i++) {
        for (char *t = strtok(argv[i], ","); t; t = strtok(NULL, ",")) {
            if (strpbrk(t, " \t\n"))
                die(2, "'%s': expected key=value without spaces", t);
            else if (strncmp(t, "seed=", 5) == 0)
                *seed = num(t, t + 5, 0, 0x7fffffffffffffffLL);
            else if (strncmp(t, "fg_ms=", 6) == 0)
                fg_ms = num(t, t + 6, 0, 1000000000);
            else if (n < maxtok)
                tok[n++] = t;
            else
                die(2, "too many keys");
        }
    }
    return n;
}

static void fill_info(const char *app, int procs, long long seed, const char *args)
{
    struct sl_info *in = &host_job.info;
    long nh = sysconf(_SC_NPROCESSORS_ONLN);

    in->magic = SL_INFO_MAGIC;
    in->job_id = 1;
    in->nharts = (uint32_t)(nh < 1 ? 1 : nh > SL_MAX_HARTS ? SL_MAX_HARTS : nh);
    in->nprocs = (uint32_t)procs;
    in->nnodes = 1;
    in->flags = (sl_app.flags & SL_APP_BACKGROUND) ? SL_INFO_BACKGROUND : 0;
    in->timebase_hz = 1000000000u;
    in->seed = (uint64_t)seed;
    in->start_time = sl_plat_ticks();
    snprintf(in->app, sizeof in->app, "%s", app);
    snprintf(in->args, sizeof in->args, "%s", args);
    in->fg_live = 1;
    in->allot_count = in->nharts;
    in->allot_mask = in->nharts >= 64 ? ~0ull : (1ull << in->nharts) - 1;
    for (char *p = strcpy(keys_spaced, args); (p = strchr(p, ',')) != NULL;)
        *p = ' ';
}

static void print_result(const char *check, const char *extra)
{
    struct sl_info *in = &host_job.info;
    uint64_t end = sl_ticks_to_us(sl_plat_ticks() - in->start_time);
    struct rusage ru;
    char line[1024];
    int n;

    getrusage(RUSAGE_SELF, &ru);
    n = sl_snprintf(line, sizeof line,
                    "RESULT job=1 app=%s policy=host harts=%u procs=%u arrive_us=0 start_us=0 "
                    "end_us=%lu elapsed_us=%lu cpu_us=%lu check=%s %s%s%s\n",
                    in->app, in->nharts, in->nprocs, (unsigned long)end, (unsigned long)end,
                    (unsigned long)(ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000 +
                                    ru.ru_stime.tv_usec),
                    check, keys_spaced, extra[0] ? " " : "", extra);
    if (write(1, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1)) < 0)
        _exit(4);
}

/* A fault in any process ends the job, like a user fault on the kernel.
   Only async-signal-safe work here: sl_snprintf is pure. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    char extra[96];

    (void)uc;
    sl_snprintf(extra, sizeof extra, "fault=%s addr=%p",
                sig == SIGSEGV      ? "segv"
                    : sig == SIGBUS ? "bus"
                    : sig == SIGILL ? "illegal"
                    : sig == SIGFPE ? "fpe"
                                    : "trap",
                si->si_addr);
    print_result("FAIL", extra);
    _exit(1);
}

static void catch_faults(void)
{
    struct sigaction sa;
    int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP };

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

static void proc0(void *arg, int index)
{
    (void)arg;
    (void)index;
    sl_lib_init();
    sl_sys_exit(sl_app_main());
}

/* Wait for every process to exit; a background job's foreground ends
   (fg_live = 0) after fg_ms. */
static void wait_job(void)
{
    struct timespec dl;
    uint64_t t = (uint64_t)fg_ms * 1000000u;

    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)(t / 1000000000u) + (dl.tv_nsec + (long)(t % 1000000000u)) / 1000000000;
    dl.tv_nsec = (dl.tv_nsec + (long)(t % 1000000000u)) % 1000000000;
    pthread_mutex_lock(&host_job.lock);
    while (host_job.live > 0) {
        int bg = host_job.info.flags & SL_INFO_BACKGROUND;
        if (bg && host_job.info.fg_live) {
            if (pthread_cond_timedwait(&host_job.exited, &host_job.lock, &dl) == ETIMEDOUT)
                __atomic_store_n(&host_job.info.fg_live, 0, __ATOMIC_RELAXED);
        } else {
            pthread_cond_wait(&host_job.exited, &host_job.lock);
        }
    }
    pthread_mutex_unlock(&host_job.lock);
    for (int i = 0; i < host_job.created; i++)
        pthread_join(host_job.tid[i], NULL);
}

int main(int argc, char **argv)
{
    char *tok[64], err[256];
    long long seed = 1;
    const char *app = basename_of(argv[0]);
    struct scen_job job;
    int ntok;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (sl_app.magic != SL_APPSPEC_MAGIC || sl_app.nkeys > SL_MAX_KEYS)
        die(2, "app %s: its spec is broken (magic %#x, %u keys)", app, sl_app.magic, sl_app.nkeys);
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("%s: %s\nusage: %s [procs=N] [seed=N] [fg_ms=N] [key=value ...]\n", app, sl_app.about, argv[0]);
        return 0;
    }
    ntok = split_args(argc, argv, tok, 64, &seed);
    if (host_parse_job(app, (unsigned long long)seed, ntok, tok, &job, err, sizeof err) < 0)
        die(2, "%s", err);
    mem_estimate = (long long)job.mem_bytes;
    fill_info(app, job.procs, seed, job.args);
    catch_faults();

    pthread_mutex_lock(&host_job.lock);
    host_start_proc(0, proc0, NULL);
    pthread_mutex_unlock(&host_job.lock);
    wait_job();

    print_result(host_job.have_result && host_job.result_ok ? "ok" : "FAIL",
                 host_job.have_result ? host_job.result : "reason=no_result");
    if ((long long)host_job.sysbytes > mem_estimate)
        die(3, "memory: %s took %lu bytes from SYS_alloc, its spec estimates %lld", app, host_job.sysbytes,
            mem_estimate);
    return host_job.have_result && host_job.result_ok ? 0 : 1;
}

#endif
