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
 *
 * One verdict. The run ends once, on the hart that decides its verdict under done_lock: the one that prints
 * the last RESULT (SUMMARY), or the watchdog while some job has no RESULT yet (ERROR timeout naming exactly
 * those jobs). That hart keeps done_lock through the trace dump until QEMU exits (end_run), so nothing can
 * follow the verdict: no RESULT, no second dump, no other verdict.
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
static struct spinlock done_lock = SPINLOCK_INIT("launcher", LOCK_DONE);
static int ndone, nfailed;        /* done_lock */
static char reported[NJOB];       /* done_lock: the job's RESULT is printed */
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
    idle_poll = scen.idle_poll;
    if (scen.model[0]) { /* before the other harts start: the calibration loop has the host to itself */
        model_cycle_ps = calib_model_cycle_ps();
        model_start(scen.model);
    }
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
        j->lock = (struct spinlock)SPINLOCK_INIT("job", LOCK_JOB);
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

/* done_lock held by the hart that decided the verdict: the dump (trace=on), the SUMMARY line if there is one,
   and QEMU's exit. done_lock is never released. */
static void __attribute__((noreturn)) end_run(int status, const char *summary)
{
    ASSERT_HELD(&done_lock, "end_run");
    trace_dump(t0, sched->name, scen.quantum_us);
    if (summary)
        kprintf("%s\n", summary);
    console_exit(status);
}

/* The launcher hart, past timeout=: if some job has no RESULT yet, the run ends with exit status 4 and an
   ERROR naming those jobs. If every RESULT is out, the hart that printed the last one holds done_lock and
   ends the run itself: waiting for it here is what keeps the two verdicts from racing. */
static void watchdog(void)
{
    char left[160] = "";
    acquire(&done_lock);
    if (ndone == njobs) { /* cannot happen (see above); never report an empty list */
        release(&done_lock);
        return;
    }
    for (int i = 0; i < njobs; i++)
        if (!reported[i])
            snprintf(left + strlen(left), sizeof left - strlen(left), " %d(%s)", jobs[i].id, jobs[i].app->name);
    kprintf("ERROR timeout: the run passed timeout=%lu%s; jobs not finished:%s\n",
            scen.timeout_us % 1000 ? scen.timeout_us : scen.timeout_us / 1000, scen.timeout_us % 1000 ? "us" : "ms",
            left);
    end_run(4, 0);
}

void launcher_timer(uint64_t now)
{
    while (next_arrival < njobs && t0 + us_to_ticks(jobs[order[next_arrival]].scen->at_us) <= now)
        job_admit(&jobs[order[next_arrival++]]);
    if (scen.timeout_us && now >= t0 + us_to_ticks(scen.timeout_us))
        watchdog();
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
    char why[200], summary[160];
    int ok = job_ok(j, why, sizeof why);
    acquire(&done_lock); /* after the watchdog's verdict, never granted: QEMU exits first */
    if (!ok && !j->killed && !j->exit_status) /* other failures said why when they happened (job_kill...) */
        kprintf("ERROR job %d (%s) failed: %s\n", j->id, j->app->name,
                j->result_set       ? "its own check failed (it reported check=FAIL)"
                : j->result_refused ? "it ended without a verdict the kernel took: its SYS_result was refused (a "
                                      "key the kernel or its scenario prints, or a number that is not finite)"
                                    : "it ended without reporting a verdict (SYS_result)");
    print_result(j, ok, why);
    reported[j->id - 1] = 1;
    ndone++;
    nfailed += !ok;
    if (!j->background) {
        fg_live--;
        info_set_fg_live(fg_live);
    }
    if (ndone < njobs) {
        release(&done_lock);
        return;
    }
    snprintf(summary, sizeof summary, "SUMMARY policy=%s harts=%d jobs=%d failed=%d makespan_us=%lu%s", sched->name,
             ncpus, njobs, nfailed, rel_us(rdtime()), clock_virtual ? " clock=virtual" : "");
    end_run(nfailed ? 1 : 0, summary);
}
