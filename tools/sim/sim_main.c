/*
 * sim_main.c - the simulator's command line and console (see sim.h for the model).
 *
 *   build/sim/schedlab-sim [--cpus N] [--calib FILE] [--apps DIR] [--kernel ELF] [--mem MB]
 *                          [--host-limit SECONDS] [--stats] "<bootargs>"
 *
 * The bootargs are the kernel's scenario (policy=, quantum=, seed=, trace=on, job=...), validated by the
 * kernel's own parser (kernel/scenario.c) in the environment the kernel's launcher gives it (sim_elf.c:
 * its apps and their specs, its free memory) and the policies linked in (kernel/sched/classes.c). The
 * output is the kernel's console contract - BOOT, one RESULT per job, TRACE with trace=on, SUMMARY, ERROR,
 * PANIC - with an extra key on BOOT, RESULT and SUMMARY, sim=<calibration name>, so no simulated line
 * passes for a measured one. Exit status, as the kernel's (kernel/launcher.c):
 *   0  every job's check is ok                    1  a job failed
 *   2  a bad scenario: `ERROR <the parser's message>`, the kernel's very line, before any BOOT; also a
 *      job the simulator cannot model (`ERROR job=<app>: ...`); a bad command line says why on stderr only
 *   3  a bug (a policy's or the simulator's): `PANIC <hart> <cause> 0x0 0x0 ...`, never bad input
 *   4  a watchdog: the scenario's timeout= in simulated time (`ERROR timeout: ...`, the kernel's line),
 *      or the simulator's own host-time budget, --host-limit (`ERROR host-time limit: ...`)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "../../kernel/syncstat.h"

void *kalloc_page(int node) { return aligned_alloc(PAGE_SIZE, PAGE_SIZE); }

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

struct job jobs[NJOB];
int njobs;
static struct scenario scen;
static int ndone, nfailed;
static char calib_name[64];

static void print_result(struct job *j)
{
    char keys[SL_ARGS_MAX];
    snprintf(keys, sizeof keys, "%s", j->scen->args);
    for (char *c = keys; *c; c++)
        if (*c == ',')
            *c = ' ';
    struct sjob *w = &sjobs[j->id - 1];
    uint64_t start = w->started ? j->start : j->arrive;
    int ok = !j->killed;
    if (ok && w->bar && w->par_t1 >= w->par_t0) { /* the barrier apps report their parallel part */
        size_t n = strlen(keys);
        snprintf(keys + n, sizeof keys - n, "%spar_us=%lu", n ? " " : "", (w->par_t1 - w->par_t0) / 1000);
    }
    char extra[160] = "";
    if (sched_result_extra) /* the policy's own per-job keys (kernel/syncstat.h) */
        sched_result_extra(j, extra, sizeof extra);
    printf("RESULT job=%d app=%s policy=%s harts=%d procs=%d arrive_us=%lu start_us=%lu end_us=%lu "
           "elapsed_us=%lu cpu_us=%lu check=%s%s%s%s%s switches=%lu preempts=%lu blocks=%lu blocked_us=%lu "
           "adapt=%s migrations=%lu mem_kb=%lu%s%s%s%s sim=%s\n",
           j->id, j->scen->app, sched->name, ncpus, j->nprocs, j->arrive / 1000, start / 1000, j->end / 1000,
           (j->end - start) / 1000, j->cpu_ticks / 1000, ok ? "ok" : "FAIL", keys[0] ? " " : "", keys, ok ? "" : " ",
           ok ? "" : j->kill_reason, j->nswitch, j->npreempt, j->nblock, j->blocked_ticks / 1000,
           j->adaptive ? "yes" : "no", j->nmigrate, j->scen->mem_bytes >> 10, j->scen->pargs[0] ? " " : "",
           j->scen->pargs, extra[0] ? " " : "", extra, calib_name);
    nfailed += !ok;
}

static void job_done(struct job *j)
{
    print_result(j);
    if (!j->background)
        fg_live--;
    if (++ndone == njobs) {
        trace_dump(0, sched->name, scen.quantum_us);
        printf("SUMMARY policy=%s harts=%d jobs=%d failed=%d makespan_us=%lu sim=%s\n", sched->name, ncpus, njobs,
               nfailed, sim_makespan / 1000, calib_name);
        sim_all_done = 1;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: schedlab-sim [--cpus N] [--calib FILE] [--apps DIR] [--kernel ELF] [--mem MB] "
                    "[--host-limit SECONDS] [--stats] \"<bootargs>\"\n");
    exit(2);
}

/* The kernel's ERROR for a bad scenario (launcher_init), and its exit status. */
static int refuse(const char *err)
{
    printf("ERROR %s\n", err);
    return 2;
}

/* The jobs not finished, as the kernel's watchdog lists them (launcher_timer): " 2(gauss) 3(hog)". */
static void unfinished(char *left, size_t len)
{
    left[0] = 0;
    for (int i = 0; i < njobs; i++)
        if (jobs[i].state != J_DONE)
            snprintf(left + strlen(left), len - strlen(left), " %d(%s)", jobs[i].id, jobs[i].scen->app);
}

/* The run stopped before every job was done: say why, in the kernel's words where the kernel has them. */
static int stopped(enum sim_end end, double host_limit)
{
    char left[160];
    unfinished(left, sizeof left);
    if (end == SIM_TIMEOUT) { /* the kernel's watchdog: its line, then the trace, exit 4 */
        printf("ERROR timeout: the run passed timeout=%lu%s; jobs not finished:%s\n",
               scen.timeout_us % 1000 ? scen.timeout_us : scen.timeout_us / 1000, scen.timeout_us % 1000 ? "us" : "ms",
               left);
        trace_dump(0, sched->name, scen.quantum_us);
        return 4;
    }
    if (end == SIM_HOST_LIMIT) {
        printf("ERROR host-time limit: the simulator stopped after %g s of host time (--host-limit), at simulated "
               "time %lu us; jobs not finished:%s. Not the scenario's timeout= (simulated time) and not stuck: it is "
               "slow to simulate (spinning waits on many harts are the slowest): give --host-limit more, or make "
               "the scenario shorter\n",
               host_limit, sim_now / 1000, left);
        return 4;
    }
    int ready = 0, blocked = 0;
    for (int i = 0; i < njobs; i++)
        for (int k = 0; k < jobs[i].ncreated; k++) {
            ready += jobs[i].procs[k]->state == P_READY;
            blocked += jobs[i].procs[k]->state == P_BLOCKED;
        }
    printf("PANIC 0 stuck 0x0 0x0 at simulated time %lu us no hart had run a process for %d quanta while nothing "
           "that could change it was pending (no arrival, compute step or timeout; only ticks, if any), with %d "
           "processes ready and %d blocked; jobs not finished:%s. A policy (%s) that never picks its ready "
           "processes, or a wake-up the simulator lost: a bug, not the scenario\n",
           sim_now / 1000, SIM_STUCK_QUANTA, ready, blocked, left, sched->name);
    return 3;
}

int main(int argc, char **argv)
{
    int harts = 2, stats = 0;
    const char *calib_path = "tools/sim/calib/default.json", *apps = "build/apps", *kernel = 0, *bootargs = 0;
    uint64_t mem_mb = 256;
    double host_limit = 3600;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cpus") && i + 1 < argc)
            harts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calib") && i + 1 < argc)
            calib_path = argv[++i];
        else if (!strcmp(argv[i], "--apps") && i + 1 < argc)
            apps = argv[++i];
        else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
            kernel = argv[++i];
        else if (!strcmp(argv[i], "--mem") && i + 1 < argc)
            mem_mb = strtoull(argv[++i], 0, 10);
        else if (!strcmp(argv[i], "--host-limit") && i + 1 < argc)
            host_limit = strtod(argv[++i], 0);
        else if (!strcmp(argv[i], "--stats"))
            stats = 1;
        else if (argv[i][0] != '-' && !bootargs)
            bootargs = argv[i];
        else
            usage();
    }
    if (harts < 1 || harts > SL_MAX_HARTS) {
        fprintf(stderr, "schedlab-sim: --cpus must be 1..%d\n", SL_MAX_HARTS);
        return 2;
    }
    if (!(host_limit > 0)) {
        fprintf(stderr, "schedlab-sim: --host-limit must be a positive number of seconds\n");
        return 2;
    }
    char err[400], kpath[512]; /* err: as large as the launcher's, so a long message is cut where the kernel's is */
    if (!kernel) { /* the kernel beside the apps: build/apps -> build/kernel.elf */
        snprintf(kpath, sizeof kpath, "%s/../kernel.elf", apps);
        kernel = kpath;
    }
    uint64_t free_bytes;
    if (calib_load(calib_path, err, sizeof err) < 0 ||
        sim_free_bytes(kernel, mem_mb << 20, harts, &free_bytes, err, sizeof err) < 0) {
        fprintf(stderr, "schedlab-sim: %s\n", err);
        return 2;
    }
    snprintf(calib_name, sizeof calib_name, "%s", calib.name);
    sim_load_apps(apps);
    int npol;
    struct scen_env env = { .nharts = harts,
                            .free_bytes = free_bytes,
                            .lookup = sim_app_spec,
                            .apps = sim_app_list(),
                            .policy_table = sched_policy_table(&npol),
                            .trace_built = 1 };
    env.npolicies = npol;
    if (scenario_parse(bootargs ? bootargs : "", &env, &scen, err, sizeof err) < 0)
        return refuse(err);
    const struct sched_class *cls = sched_class_by_name(scen.policy);
    for (int k = 0; k < SCEN_MAX_OPTS; k++)
        sched_opt[k] = scen.popt[k];
    core_init(harts, cls, scen.quantum_us * 1000, scen.seed);
    sim_job_done = job_done;
    njobs = scen.njobs;
    for (int i = 0; i < njobs; i++) {
        struct job *j = &jobs[i];
        j->id = i + 1;
        j->scen = &scen.jobs[i];
        j->nprocs = j->scen->procs;
        j->background = (j->scen->spec->flags & SL_APP_BACKGROUND) != 0;
        j->adaptive = j->scen->adaptive;
        fg_live += !j->background;
        if (work_setup(j, err, sizeof err) < 0)
            return refuse(err);
    }
    if (scen.trace && trace_init(err, sizeof err) < 0)
        return refuse(err);
    printf("BOOT harts=%d nodes=1 mem_mb=%lu policies=%s apps=%s boot_hart=0 boot_us=0 background=hog options=%s "
           "jobkeys=%s sim=%s\n",
           harts, mem_mb, sched_class_names(), work_models(), sched_option_list(), sched_job_key_list(), calib_name);
    for (int i = 0; i < njobs; i++)
        sim_post(jobs[i].scen->at_us * 1000, EV_ARRIVE, 0, 0, &jobs[i]);
    enum sim_end end = sim_run(scen.timeout_us ? scen.timeout_us * 1000 : ~0UL, host_limit);
    if (end != SIM_DONE)
        return stopped(end, host_limit);
    if (stats) {
        fprintf(stderr, "sim: %lu events, simulated %lu us\n", sim_events, sim_makespan / 1000);
        work_stats(stderr);
    }
    work_free();
    for (int h = 0; h < ncpus; h++)
        for (int i = 0; i < TRACE_MAX_PAGES; i++)
            free(trace_rings[h].page[i]);
    return nfailed ? 1 : 0;
}
