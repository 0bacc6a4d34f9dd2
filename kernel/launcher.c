/*
 * launcher.c - the scenario launcher: parse the bootargs, admit each job at its arrival time, print a
 * RESULT line per finished job and a SUMMARY after the last, then leave QEMU with the verdict.
 *
 * t0 (time 0 of the scenario) is when every hart is up and the scheduler starts; arrive/start/end times in
 * RESULT lines are microseconds after t0. Arrivals and the watchdog are two entries of the deadline queue
 * (deadline.h), fired on deadline_hart (the boot hart); nothing below calls the launcher by name: the
 * process layer reports a finished job through the portable core's hook life_hooks.job_done (main.c installs launcher_job_done).
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
#include "sched/hooks.h"
#include "scenario.h"
#include "perturb.h"
#include "info.h"
#include "trace.h"
#include "intr.h"
#include "deadline.h"
#include "ulog.h"
#include "contract.h"

static struct scenario scen;
static uint64_t t0;
static int order[SCEN_MAX_JOBS]; /* job indices by arrival time (stable) */
static int next_arrival;         /* launcher hart only */
static struct spinlock done_lock = SPINLOCK_INIT("launcher", LOCK_DONE);
static int ndone, nfailed;        /* done_lock */
static char reported[NJOB];       /* done_lock: the job's RESULT is printed */
static volatile uint32_t fg_live; /* foreground jobs not finished yet */

static void arrivals(struct deadline *d, uint64_t now);
static void watchdog(struct deadline *d, uint64_t now);
static struct deadline arrival_dl = DEADLINE_INIT("arrivals", arrivals);  /* the next job's at= */
static struct deadline watchdog_dl = DEADLINE_INIT("watchdog", watchdog); /* timeout= */

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

/* The scenario's global settings, each to its layer through that layer's function, before the other harts start
   (each layer's state is then only read). */
static void configure_layers(void)
{
    sched_configure(sched_class_by_name(scen.policy), us_to_ticks(scen.quantum_us), scen.seed, scen.popt,
                    scen.idle_poll);
    intr_configure(scen.irq_sbi);
    vclock_configure(scen.clock_virtual);
    trace_configure(scen.clock_virtual);
    if (scen.perturb) /* perturb.h's state is then only the other harts' */
        perturb_init(scen.perturb_seed, scen.perturb_depth, ncpus);
    if (scen.model[0]) { /* the calibration loop has the host to itself */
        uint64_t pace = model_pace_rate(scen.model); /* paced: a cycle is 1/R, nothing to measure */
        model_configure(scen.model, pace ? 1000000000000UL / pace : calib_model_cycle_ps());
    }
}

void launcher_init(const char *scenario, int in_batch)
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
        .list_built = 1,
    };
    if (scenario_parse(scenario, &env, &scen, err, sizeof err)) {
        kprintf("ERROR %s\n", err);
        platform_exit(2);
    }
    if (in_batch && (!scen.clock_virtual || scen.model[0])) {
        kprintf("ERROR a batch of scenarios (\"then\" between them) needs clock=virtual in each, and no model=: "
                "the machine model's plugin would carry one scenario's state into the next\n");
        platform_exit(2);
    }
    configure_layers();
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
    info_set_seed(scen.seed);
    info_set_fg_live(fg_live);
    ulog_set_njobs(njobs);
}

static uint64_t arrival_time(int k) { return t0 + us_to_ticks(jobs[order[k]].scen->at_us); }

/* The deadline queue's callback (and launcher_start's at t0): admit every job whose time has come, then arm
   the queue for the next one. */
static void arrivals(struct deadline *d, uint64_t now)
{
    while (next_arrival < njobs && arrival_time(next_arrival) <= now)
        job_admit(&jobs[order[next_arrival++]]);
    if (next_arrival < njobs)
        deadline_arm(&arrival_dl, arrival_time(next_arrival));
}

/* list=keys: every key the scenario language takes in this build, one KEY line each (scenario.h): the global
   settings, the keys every job has, each policy's options and job keys, each app and its keys, then KEY end.
   A scenario with jobs then runs them as usual; without, QEMU exits 0. tools/docs/reference.py makes the
   reference from these lines (and from the contract lines of one small job). */
static void list_keys(void)
{
    char line[512], scope[48];
    for (int i = 0; scenario_setting(i); i++)
        scenario_key_line(line, sizeof line, "setting", scenario_setting(i)), kprintf("%s\n", line);
    for (int i = 0; scenario_job_key(i); i++)
        scenario_key_line(line, sizeof line, "job", scenario_job_key(i)), kprintf("%s\n", line);
    int npol;
    const struct scen_policy *pol = sched_policy_table(&npol);
    for (int p = 0; p < npol; p++) {
        snprintf(scope, sizeof scope, "option:%s", pol[p].name);
        for (int i = 0; i < pol[p].nopts; i++)
            scenario_option_line(line, sizeof line, scope, &pol[p].opts[i]), kprintf("%s\n", line);
        snprintf(scope, sizeof scope, "jobkey:%s", pol[p].name);
        for (int i = 0; i < pol[p].njkeys; i++)
            scenario_option_line(line, sizeof line, scope, &pol[p].jkeys[i]), kprintf("%s\n", line);
    }
    for (int a = 0; a < napps(); a++) {
        const struct app *app = app_at(a);
        scenario_app_line(line, sizeof line, app->name, app->spec), kprintf("%s\n", line);
        for (uint32_t i = 0; i < app->spec->nkeys; i++)
            scenario_appkey_line(line, sizeof line, app->name, &app->spec->keys[i]), kprintf("%s\n", line);
    }
    kprintf("KEY end\n");
}

void launcher_start(void)
{
    if (scen.list_keys)
        list_keys();
    if (scen.list_keys && !njobs)
        platform_exit(0);
    if (scen.model[0])
        model_pace_start(); /* from here a paced boot runs at its R (the plugin sees this call) */
    if (scen.calib && !scen.clock_virtual)
        calib_run(); /* before t0: no job's times include it; in virtual time it would measure instructions */
    t0 = rdtime();
    arrivals(&arrival_dl, t0);
    if (scen.timeout_us)
        deadline_arm(&watchdog_dl, t0 + us_to_ticks(scen.timeout_us));
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

/* The deadline queue's callback past timeout=, on deadline_hart: if some job has no RESULT yet, the run ends
   with exit status 4 and an ERROR naming those jobs. If every RESULT is out, the hart that printed the last
   one holds done_lock and ends the run itself: waiting for it here is what keeps the two verdicts from
   racing. */
static void watchdog(struct deadline *d, uint64_t now)
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

/* life_hooks.job_done (main.c installs it): j's last process was reaped, or its admission failed. */
void launcher_job_done(struct job *j)
{
    char why[200], line[2048]; /* a RESULT line: ~400 bytes of its own, SL_ARGS_MAX, SL_RESULT_MAX, a reason */
    int ok = contract_verdict(j, why, sizeof why);
    acquire(&done_lock); /* after the watchdog's verdict, never granted: QEMU exits first */
    if (contract_failure(line, sizeof line, j)) /* other failures said why when they happened (job_kill...) */
        kprintf("%s\n", line);
    char extra[160] = ""; /* the policy's own RESULT keys (sched.h result: adaptive's time per regime) */
    hook_result(j, extra, sizeof extra);
    contract_result(line, sizeof line, j, sched->name, ncpus, t0, ok, why, extra);
    kprintf("%s\n", line);
    reported[j->id - 1] = 1;
    ndone++;
    nfailed += !ok;
    if (!j->background) {
        fg_live--;
        info_set_fg_live(fg_live);
        acquire(&sched_lock);
        for (int i = 0; i < njobs; i++)
            if (jobs[i].state == J_RUNNING && jobs[i].info)
                info_put_fg_live(&jobs[i], fg_live);
        release(&sched_lock);
    }
    if (ndone < njobs) {
        release(&done_lock);
        return;
    }
    uint64_t now = rdtime();
    char extra_summary[192];
    int n = snprintf(extra_summary, sizeof extra_summary, "%s", clock_virtual ? " clock=virtual" : "");
    perturb_summary(extra_summary + n, sizeof extra_summary - (size_t)n);
    contract_summary(line, sizeof line, sched->name, ncpus, njobs, nfailed, now > t0 ? time_us(now - t0) : 0,
                     extra_summary);
    end_run(nfailed ? 1 : 0, line);
}
