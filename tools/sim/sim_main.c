/*
 * sim_main.c - the simulator's command line and console (see sim.h for the model).
 *
 *   build/sim/schedlab-sim [--cpus N] [--calib FILE] [--apps DIR] [--kernel ELF] [--mem MB]
 *                          [--host-limit SECONDS] [--stats] [--model PROFILE[,key=value...]]
 *                          [--profiles DIR] [--cycle-ps N] "<bootargs>"
 *   build/sim/schedlab-sim --profile-values FILE    a profile file's values as --model reads them, key=value
 *                                                  lines, then exit (0, or 2 with the parser's message)
 *
 * The bootargs are the kernel's scenario (policy=, quantum=, seed=, trace=on, job=...), validated by the
 * kernel's own parser (kernel/scenario.c) in the environment the kernel's launcher gives it (sim_elf.c:
 * its apps and their specs, its free memory) and the policies linked in (kernel/sched/classes.c). The
 * output is the kernel's console contract - BOOT, one RESULT per job, TRACE with trace=on, SUMMARY, ERROR,
 * PANIC - formatted by the kernel's own kernel/contract.c, with an extra key on BOOT, RESULT and SUMMARY,
 * sim=<calibration name>, so no simulated line passes for a measured one (BOOT says timer=sim ipi=sim
 * clock=sim). Exit status, as the kernel's (kernel/launcher.c):
 *   0  every job's check is ok                    1  a job failed
 *   2  a bad scenario: `ERROR <the parser's message>`, the kernel's very line, before any BOOT; also a
 *      job the simulator cannot model (`ERROR job=<app>: ...`); a bad command line says why on stderr only
 *   3  a bug (a policy's or the simulator's): `PANIC <hart> <cause> 0x0 0x0 ...`, never bad input
 * --model runs the machine model's caches (sim_mem.h) with a profile of --profiles (default
 * tools/model/profiles beside the apps' build: <apps>/../../tools/model/profiles): BOOT says model=<canonical
 * spec> cycle_ps=<n>, and the plugin's MODEL end / MODEL job= lines follow the last line, as on QEMU.
 *   4  a watchdog: the scenario's timeout= in simulated time (`ERROR timeout: ...`, the kernel's line),
 *      or the simulator's own host-time budget, --host-limit (`ERROR host-time limit: ...`)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_kit.h"
#include "sim_mem.h"
#include "sim_threads.h"
#include "../../kernel/contract.h"
#include "../../kernel/sched/life.h"

void *kalloc_page(int node) { return aligned_alloc(PAGE_SIZE, PAGE_SIZE); }

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

static struct scenario scen;
static int ndone, nfailed;
static char calib_name[64];

/* The core's job_done hook (kernel/sched/life.h): the kernel's lines (kernel/contract.c), sim= on each. */
void sim_job_done(struct job *j)
{
    char why[200], line[2048], extra[240];
    hook_result(j, extra, sizeof extra - 80); /* the policy's own keys (sched.h result) */
    snprintf(extra + strlen(extra), 80, " sim=%s", calib_name);
    int ok = contract_verdict(j, why, sizeof why);
    if (contract_failure(line, sizeof line, j))
        printf("%s\n", line);
    contract_result(line, sizeof line, j, sched->name, ncpus, SIM_T0, ok, why, extra);
    printf("%s\n", line);
    nfailed += !ok;
    if (!j->background)
        fg_live--;
    if (++ndone == njobs) {
        trace_dump(SIM_T0, sched->name, scen.quantum_us);
        contract_summary(line, sizeof line, sched->name, ncpus, njobs, nfailed, time_us(sim_makespan - SIM_T0), extra);
        printf("%s\n", line);
        sim_all_done = 1;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: schedlab-sim [--cpus N] [--calib FILE] [--apps DIR] [--kernel ELF] [--mem MB] "
                    "[--host-limit SECONDS] [--stats] [--model PROFILE[,key=value...]] [--profiles DIR] "
                    "[--cycle-ps N] \"<bootargs>\"\n"
                    "       schedlab-sim --profile-values FILE\n");
    exit(2);
}

/* --profile-values: the profile parser's values, for the test that the harness's parser agrees. */
static int profile_values(const char *path)
{
    char err[400];
    if (mem_profile_values(path, stdout, err, sizeof err) < 0) {
        fprintf(stderr, "schedlab-sim: %s\n", err);
        return 2;
    }
    return 0;
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
        trace_dump(SIM_T0, sched->name, scen.quantum_us);
        return 4;
    }
    if (end == SIM_HOST_LIMIT) {
        printf("ERROR host-time limit: the simulator stopped after %g s of host time (--host-limit), at simulated "
               "time %lu us; jobs not finished:%s. Not the scenario's timeout= (simulated time) and not stuck: it is "
               "slow to simulate (spinning waits on many harts are the slowest): give --host-limit more, or make "
               "the scenario shorter\n",
               host_limit, (sim_now - SIM_T0) / 1000, left);
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
           (sim_now - SIM_T0) / 1000, SIM_STUCK_QUANTA, ready, blocked, left, sched->name);
    return 3;
}

int main(int argc, char **argv)
{
    int harts = 2, stats = 0;
    life_hooks = (struct life_hooks){ .job_done = sim_job_done, .unwait = sim_unwait }; /* the core's (life.h) */
    const char *calib_path = "tools/sim/calib/default.json", *apps = "build/apps", *kernel = 0, *bootargs = 0;
    const char *model = 0, *profiles = 0;
    uint64_t cycle_ps = 0;
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
        else if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model = argv[++i];
        else if (!strcmp(argv[i], "--profiles") && i + 1 < argc)
            profiles = argv[++i];
        else if (!strcmp(argv[i], "--cycle-ps") && i + 1 < argc)
            cycle_ps = strtoull(argv[++i], 0, 10);
        else if (!strcmp(argv[i], "--stats"))
            stats = 1;
        else if (!strcmp(argv[i], "--profile-values") && i + 1 < argc)
            return profile_values(argv[++i]);
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
    if (sim_apps_check(err, sizeof err) < 0 || calib_load(calib_path, err, sizeof err) < 0 ||
        sim_free_bytes(kernel, mem_mb << 20, harts, &free_bytes, err, sizeof err) < 0) {
        fprintf(stderr, "schedlab-sim: %s\n", err);
        return 2;
    }
    char pdir[600];
    if (!profiles) { /* the profiles of the tree the apps were built in: build/apps -> tools/model/profiles */
        snprintf(pdir, sizeof pdir, "%s/../../tools/model/profiles", apps);
        profiles = pdir;
    }
    if (model && strcmp(model, "none") && mem_init(model, profiles, harts, mem_mb, cycle_ps, err, sizeof err) < 0) {
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
    njobs = scen.njobs;
    for (int i = 0; i < njobs; i++) {
        struct job *j = &jobs[i];
        j->id = i + 1;
        j->scen = &scen.jobs[i];
        j->nprocs = j->scen->procs;
        j->background = (j->scen->spec->flags & SL_APP_BACKGROUND) != 0;
        j->adaptive = j->scen->adaptive;
        fg_live += !j->background;
        if (sim_app_setup(j, err, sizeof err) < 0)
            return refuse(err);
        touch_setup(j); /* nothing of its memory touched yet (sim_touch.c) */
    }
    if (scen.trace && trace_init(err, sizeof err) < 0)
        return refuse(err);
    char line[2048], extra[80];
    snprintf(extra, sizeof extra, " sim=%s", calib_name);
    struct contract_boot b = {
        .harts = harts, .nodes = mem_nodes(), .mem_mb = mem_mb, .policies = sched_class_names(), .apps = sim_app_names(),
        .boot_hart = 0, .boot_us = 0, .background = "hog", .options = sched_option_list(), .timer = "sim",
        .ipi = "sim", .clock = "sim", .jobkeys = sched_job_key_list(), .idle = "auto", .model = mem_canonical(),
        .cycle_ps = mem_cycle_ps(), .checks = "on", .extra = extra,
    };
    contract_boot(line, sizeof line, &b);
    printf("%s\n", line);
    for (int i = 0; i < njobs; i++)
        sim_post(SIM_T0 + jobs[i].scen->at_us * 1000, EV_ARRIVE, 0, 0, &jobs[i]);
    enum sim_end end = sim_run(scen.timeout_us ? SIM_T0 + scen.timeout_us * 1000 : ~0UL, host_limit);
    if (end != SIM_DONE) {
        int rc = stopped(end, host_limit);
        mem_report(stdout); /* the plugin reports at QEMU's exit, whatever ended the run */
        return rc;
    }
    mem_report(stdout);
    if (stats) {
        fprintf(stderr, "sim: %lu events, simulated %lu us\n", sim_events, (sim_makespan - SIM_T0) / 1000);
        barrier_stats(stderr);
        sync_stats(stderr);
        mem_stats(stderr);
        if (mem_on())
            start_stats(stderr);
    }
    sim_app_free();
    loops_free();
    threads_free();
    mem_free();
    for (int h = 0; h < ncpus; h++)
        for (int i = 0; i < TRACE_MAX_PAGES; i++) {
            free(trace_rings[h].page[i]);
            free(trace_decisions[h].page[i]);
        }
    return nfailed ? 1 : 0;
}
