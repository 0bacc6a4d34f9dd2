/*
 * sim_main.c - the simulator's command line and console (see sim.h for the model).
 *
 *   build/sim/schedlab-sim [--cpus N] [--calib FILE] [--apps DIR] [--mem MB] "<bootargs>"
 *
 * The bootargs are the kernel's scenario (policy=, quantum=, seed=, trace=on, job=...), validated by the
 * kernel's own parser (kernel/scenario.c) against the app specs read from the kernel's app ELFs (their
 * .slapp section, as kernel/apps.c reads them) and the policies linked in (kernel/sched/classes.c). The
 * output is the kernel's console contract - BOOT, one RESULT per job, TRACE with trace=on, SUMMARY - with
 * an extra key on BOOT, RESULT and SUMMARY, sim=<calibration name>, so no simulated line passes for a
 * measured one. Exit status: 0 when every job's check is ok, 1 if one failed, 2 on a usage error.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

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
static struct sl_appspec specs[32];
static char spec_names[32][16];
static int nspecs, ndone, nfailed;
static char calib_name[64];

/* The .slapp section of an app ELF (struct sl_appspec, the same bytes on RV64 and the host: LP64, LE). */
static int read_spec(const char *path, struct sl_appspec *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = n > 0 ? malloc((size_t)n) : 0;
    int rc = -1;
    if (b && fread(b, 1, (size_t)n, f) == (size_t)n && n >= (long)sizeof(Elf64_Ehdr)) {
        Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
        Elf64_Shdr *sh = (Elf64_Shdr *)(b + eh->e_shoff);
        if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof *sh <= (uint64_t)n && eh->e_shstrndx < eh->e_shnum) {
            const char *names = (const char *)b + sh[eh->e_shstrndx].sh_offset;
            for (int i = 0; i < eh->e_shnum; i++)
                if (!strcmp(names + sh[i].sh_name, ".slapp") && sh[i].sh_size >= sizeof *out &&
                    sh[i].sh_offset + sizeof *out <= (uint64_t)n) {
                    memcpy(out, b + sh[i].sh_offset, sizeof *out);
                    rc = out->magic == SL_APPSPEC_MAGIC ? 0 : -1;
                }
        }
    }
    free(b);
    fclose(f);
    return rc;
}

static void load_specs(const char *dir)
{
    static const char *const models[] = { "gauss", "hog", "oddeven", "sleeper", "synth" };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.elf", dir, models[i]);
        if (read_spec(path, &specs[nspecs]) < 0) {
            fprintf(stderr, "schedlab-sim: cannot read the app spec of %s (build the apps: make apps)\n", path);
            exit(2);
        }
        snprintf(spec_names[nspecs++], sizeof spec_names[0], "%s", models[i]);
    }
}

static const struct sl_appspec *lookup(const char *app)
{
    for (int i = 0; i < nspecs; i++)
        if (!strcmp(spec_names[i], app))
            return &specs[i];
    return 0;
}

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
    printf("RESULT job=%d app=%s policy=%s harts=%d procs=%d arrive_us=%lu start_us=%lu end_us=%lu "
           "elapsed_us=%lu cpu_us=%lu check=%s%s%s%s%s switches=%lu preempts=%lu blocks=%lu blocked_us=%lu "
           "adapt=%s migrations=%lu mem_kb=%lu%s%s sim=%s\n",
           j->id, j->scen->app, sched->name, ncpus, j->nprocs, j->arrive / 1000, start / 1000, j->end / 1000,
           (j->end - start) / 1000, j->cpu_ticks / 1000, ok ? "ok" : "FAIL", keys[0] ? " " : "", keys, ok ? "" : " ",
           ok ? "" : j->kill_reason, j->nswitch, j->npreempt, j->nblock, j->blocked_ticks / 1000,
           j->adaptive ? "yes" : "no", j->nmigrate, j->scen->mem_bytes >> 10, j->scen->pargs[0] ? " " : "",
           j->scen->pargs, calib_name);
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
    fprintf(stderr, "usage: schedlab-sim [--cpus N] [--calib FILE] [--apps DIR] [--mem MB] [--stats] \"<bootargs>\"\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int harts = 2, stats = 0;
    const char *calib_path = "tools/sim/calib/default.json", *apps = "build/apps", *bootargs = 0;
    uint64_t mem_mb = 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cpus") && i + 1 < argc)
            harts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calib") && i + 1 < argc)
            calib_path = argv[++i];
        else if (!strcmp(argv[i], "--apps") && i + 1 < argc)
            apps = argv[++i];
        else if (!strcmp(argv[i], "--mem") && i + 1 < argc)
            mem_mb = strtoull(argv[++i], 0, 10);
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
    char err[256];
    if (calib_load(calib_path, err, sizeof err) < 0) {
        fprintf(stderr, "schedlab-sim: %s\n", err);
        return 2;
    }
    snprintf(calib_name, sizeof calib_name, "%s", calib.name);
    load_specs(apps);
    int npol;
    struct scen_env env = { .nharts = harts,
                            .free_bytes = mem_mb << 20,
                            .lookup = lookup,
                            .apps = work_models(),
                            .policy_table = sched_policy_table(&npol),
                            .trace_built = 1 };
    env.npolicies = npol;
    if (scenario_parse(bootargs ? bootargs : "", &env, &scen, err, sizeof err) < 0) {
        printf("PANIC scenario: %s\n", err);
        return 2;
    }
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
        if (work_setup(j, err, sizeof err) < 0) {
            printf("PANIC scenario: %s\n", err);
            return 2;
        }
    }
    if (scen.trace && trace_init(err, sizeof err) < 0) {
        printf("PANIC scenario: %s\n", err);
        return 2;
    }
    printf("BOOT harts=%d nodes=1 mem_mb=%lu policies=%s apps=%s boot_hart=0 boot_us=0 background=hog options=%s "
           "jobkeys=%s sim=%s\n",
           harts, mem_mb, sched_class_names(), work_models(), sched_option_list(), sched_job_key_list(), calib_name);
    for (int i = 0; i < njobs; i++)
        sim_post(jobs[i].scen->at_us * 1000, EV_ARRIVE, 0, 0, &jobs[i]);
    uint64_t limit = scen.timeout_us ? scen.timeout_us * 1000 : 3600ULL * 1000000000ULL;
    if (sim_run(limit) < 0) {
        printf("PANIC watchdog: simulated time passed %lu us with %d of %d jobs done (a stuck scenario) sim=%s\n",
               limit / 1000, ndone, njobs, calib_name);
        return 1;
    }
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
