/*
 * launcher.c - the scenario launcher: parse the bootargs, admit each job at its arrival time, print a
 * RESULT line per finished job and a SUMMARY after the last, then leave QEMU with the verdict.
 *
 * t0 (time 0 of the scenario) is when every hart is up and the scheduler starts; arrive/start/end times in
 * RESULT lines are microseconds after t0. Arrivals, the watchdog and futex timeouts are driven by the
 * timer of one hart, launcher_hart (the boot hart).
 *
 * Exit status: 0 every job check=ok; 1 some job failed; 2 bad scenario (ERROR at boot); 3 kernel PANIC;
 * 4 the watchdog (timeout=) fired.
 */
#include "sched/sched.h"
#include "scenario.h"
#include "info.h"
#include "trace.h"

int launcher_hart;
uint64_t scenario_seed;
int scenario_irq_sbi;

static struct scenario scen;
static uint64_t t0;
static int order[SCEN_MAX_JOBS]; /* job indices by arrival time (stable) */
static int next_arrival;         /* launcher hart only */
static struct spinlock done_lock = SPINLOCK_INIT("launcher");
static int ndone, nfailed;        /* done_lock */
static volatile uint32_t fg_live; /* foreground jobs not finished yet */

static const struct sl_appspec *lookup_spec(const char *name)
{
    const struct app *a = app_lookup(name);
    return a ? a->spec : 0;
}

static const char *app_names(void)
{
    static char names[256];
    for (int i = 0; i < napps(); i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", app_at(i)->name);
    return names;
}

void launcher_init(void)
{
    char err[400];
    int npol;
    const struct scen_policy *pol = sched_policy_table(&npol);
    struct scen_env env = {
        .policy_table = pol,
        .npolicies = npol,
        .nharts = ncpus,
        .free_bytes = kalloc_free_bytes(-1),
        .lookup = lookup_spec,
        .apps = app_names(),
        .trace_built = 1,
    };
    if (scenario_parse(plat.bootargs, &env, &scen, err, sizeof err)) {
        kprintf("ERROR %s\n", err);
        platform_exit(2);
    }
    sched = sched_class_by_name(scen.policy);
    sched_quantum = us_to_ticks(scen.quantum_us);
    sched_seed = scenario_seed = scen.seed;
    scenario_irq_sbi = scen.irq_sbi;
    clock_virtual = scen.clock_virtual;
    if (clock_virtual)
        trace_header_extra = " clock=virtual";
    for (int i = 0; i < SCEN_MAX_OPTS; i++)
        sched_opt[i] = scen.popt[i];
    if (scen.trace && trace_init(err, sizeof err)) {
        kprintf("ERROR %s\n", err);
        platform_exit(2);
    }
    njobs = scen.njobs;
    for (int i = 0; i < njobs; i++) {
        struct job *j = &jobs[i];
        struct scen_job *s = &scen.jobs[i];
        j->lock = (struct spinlock)SPINLOCK_INIT("job");
        j->id = i + 1;
        j->state = J_WAITING;
        j->app = app_lookup(s->app);
        j->nprocs = s->procs;
        j->scen = s;
        j->background = (s->spec->flags & SL_APP_BACKGROUND) != 0;
        j->adaptive = s->adaptive;
        if (!j->background)
            fg_live++;
        /* insertion sort by arrival, stable */
        int k = i;
        while (k > 0 && jobs[order[k - 1]].scen->at_us > s->at_us) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
}

uint32_t launcher_fg_live(void) { return fg_live; }

void launcher_start(void)
{
    if (scen.calib && !scen.clock_virtual)
        calib_run(); /* before t0: no job's times include it; in virtual time it would measure instructions */
    t0 = rdtime();
    launcher_timer(t0);
}

uint64_t launcher_next_deadline(void)
{
    uint64_t d = ~0UL;
    if (next_arrival < njobs)
        d = t0 + us_to_ticks(jobs[order[next_arrival]].scen->at_us);
    if (scen.timeout_us)
        d = MIN(d, t0 + us_to_ticks(scen.timeout_us));
    return d;
}

void launcher_timer(uint64_t now)
{
    while (next_arrival < njobs && t0 + us_to_ticks(jobs[order[next_arrival]].scen->at_us) <= now)
        job_admit(&jobs[order[next_arrival++]]);
    if (scen.timeout_us && now >= t0 + us_to_ticks(scen.timeout_us)) {
        char left[160] = "";
        for (int i = 0; i < njobs; i++)
            if (jobs[i].state != J_DONE)
                snprintf(left + strlen(left), sizeof left - strlen(left), " %d(%s)", jobs[i].id, jobs[i].app->name);
        kprintf("ERROR timeout: the run passed timeout=%lu%s; jobs not finished:%s\n",
                scen.timeout_us % 1000 ? scen.timeout_us : scen.timeout_us / 1000, scen.timeout_us % 1000 ? "us" : "ms",
                left);
        trace_dump(t0, sched->name, scen.quantum_us);
        platform_exit(4);
    }
}

static uint64_t rel_us(uint64_t t) { return t > t0 ? time_us(t - t0) : 0; }

/* The verdict and, for a failure, its reason. */
static int job_ok(struct job *j, char *why, size_t len)
{
    why[0] = 0;
    if (j->killed)
        strlcpy(why, j->kill_reason, len);
    else if (j->exit_status)
        snprintf(why, len, "reason=exit-status-%d", j->exit_status);
    else if (!j->result_set)
        strlcpy(why, "reason=no-result", len);
    else if (!j->result_ok)
        strlcpy(why, "reason=app-check", len);
    return why[0] == 0;
}

static void print_result(struct job *j, int ok, const char *why)
{
    char keys[SL_ARGS_MAX];
    strlcpy(keys, j->scen->args, sizeof keys);
    for (char *c = keys; *c; c++)
        if (*c == ',')
            *c = ' ';
    uint64_t start = j->start ? j->start : j->arrive;
    kprintf("RESULT job=%d app=%s policy=%s harts=%d procs=%d arrive_us=%lu start_us=%lu end_us=%lu "
            "elapsed_us=%lu cpu_us=%lu check=%s%s%s%s%s%s%s switches=%lu preempts=%lu blocks=%lu blocked_us=%lu "
            "adapt=%s migrations=%lu mem_kb=%lu%s%s\n",
            j->id, j->app->name, sched->name, ncpus, j->nprocs, rel_us(j->arrive), rel_us(start), rel_us(j->end),
            rel_us(j->end) - rel_us(start), time_us(j->cpu_ticks), ok ? "ok" : "FAIL", keys[0] ? " " : "", keys,
            j->result_keys[0] ? " " : "", j->result_keys, why[0] ? " " : "", why, j->nswitch, j->npreempt, j->nblock,
            time_us(j->blocked_ticks), j->adaptive ? "yes" : "no", j->nmigrate, j->mem_used >> 10,
            j->scen->pargs[0] ? " " : "", j->scen->pargs);
}

void launcher_job_done(struct job *j)
{
    char why[200];
    int ok = job_ok(j, why, sizeof why);
    acquire(&done_lock);
    print_result(j, ok, why);
    ndone++;
    nfailed += !ok;
    if (!j->background) {
        fg_live--;
        info_set_fg_live(fg_live);
    }
    int all = ndone == njobs;
    uint64_t makespan = rel_us(rdtime());
    if (all)
        trace_dump(t0, sched->name, scen.quantum_us);
    if (all)
        kprintf("SUMMARY policy=%s harts=%d jobs=%d failed=%d makespan_us=%lu%s\n", sched->name, ncpus, njobs, nfailed,
                makespan, clock_virtual ? " clock=virtual" : "");
    release(&done_lock);
    if (all)
        platform_exit(nfailed ? 1 : 0);
}
