/*
 * sim_apps.c - the app models' registry and the jobs' workloads: every struct sim_app the link put in
 * .sim_apps (SIM_APP, sim.h; tools/sim/sections.ld), found by name, with no list of them anywhere else.
 *
 * A job's set-up (sim_app_setup): its model by the job's app name, the model's integer keys read by name
 * from the job's canonical args (the kernel's parser has filled in every default from the app's own spec,
 * so the defaults live in the app, once), the fields every model shares (foreground, the job's random
 * stream, process control), then the model's own setup hook.
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"

/* The section's bounds, as kernel/sched/classes.c walks .sched_classes (sections.ld). */
extern const struct sim_app *const __start_sim_apps[], *const __stop_sim_apps[];

const struct sim_app *sim_app_find(const char *name)
{
    for (const struct sim_app *const *a = __start_sim_apps; a < __stop_sim_apps; a++)
        if ((*a)->name && !strcmp((*a)->name, name))
            return *a;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const struct sim_app *const *)a)->name, (*(const struct sim_app *const *)b)->name);
}

/* The link's models are usable: each named, with a step hook, and no two of one app (a model added beside
   one of tools/sim/apps, or an app's file copied without renaming). 0, or -1 with the reason in err. */
int sim_apps_check(char *err, size_t errlen)
{
    for (const struct sim_app *const *a = __start_sim_apps; a < __stop_sim_apps; a++) {
        if (!(*a)->name || !(*a)->name[0] || !(*a)->step)
            return snprintf(err, errlen, "an app model (SIM_APP) without a %s: every struct sim_app needs its name "
                                         "and a step hook (tools/sim/sim.h)", (*a)->name ? "step hook" : "name"),
                   -1;
        if (sim_app_find((*a)->name) != *a)
            return snprintf(err, errlen, "two app models are named %s (SIM_APP): one model an app, in "
                                         "tools/sim/apps/%s.c", (*a)->name, (*a)->name),
                   -1;
    }
    return 0;
}

/* The models' names, sorted, comma-separated: BOOT's apps= (what the simulator can run). */
const char *sim_app_names(void)
{
    static char list[1024];
    const struct sim_app *v[256];
    size_t n = 0, len = 0;
    for (const struct sim_app *const *a = __start_sim_apps; a < __stop_sim_apps && n < 256; a++)
        v[n++] = *a;
    qsort(v, n, sizeof *v, by_name);
    list[0] = 0;
    for (size_t i = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? "," : "", v[i]->name);
    return list;
}

/* The model's integer keys into its state: each from the job's args, where the parser put every key of
   the app's spec; one the app does not declare is the model's mistake (or an old build of the apps). */
static int read_keys(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    for (const struct sim_key *k = w->app->keys; k && k->name; k++) {
        char v[32];
        if (scenario_arg(j->scen->args, k->name, v, sizeof v) != 0)
            return snprintf(err, errlen, "job=%s: the simulator's model reads key %s, which the app's spec does "
                                         "not have (tools/sim/apps/%s.c against build/apps: rebuild the apps)",
                            j->scen->app, k->name, j->scen->app),
                   -1;
        *(int64_t *)(w->state + k->off) = strtoll(v, 0, 10);
    }
    return 0;
}

int sim_app_setup(struct job *j, char *err, size_t errlen)
{
    struct sjob *w = sjob_of(j);
    memset(w, 0, sizeof *w);
    sync_job_setup(j);
    w->app = sim_app_find(j->scen->app);
    if (!w->app)
        return snprintf(err, errlen,
                        "job=%s: the simulator has no model of app %s (models: %s); run it under QEMU, or model it "
                        "in tools/sim/apps/%s.c",
                        j->scen->app, j->scen->app, sim_app_names(), j->scen->app),
               -1;
    if (read_keys(j, w, err, errlen) < 0)
        return -1;
    w->fg = !j->background;
    w->rng.s = sched_seed ^ ((uint64_t)j->id << 32); /* the scenario's seed= (core_init set it) */
    w->adaptive = j->adaptive && sched->allots && w->app->control;
    w->active = j->nprocs;
    for (int v = 0; v < SL_MAX_PROCS; v++)
        w->host[v] = (int16_t)v;
    return w->app->setup ? w->app->setup(j, w, err, errlen) : 0;
}

/* The run is over: each job's model gives back what it took, then the engine its processes. */
void sim_app_free(void)
{
    for (int j = 0; j < NJOB; j++) {
        if (sjobs[j].app && sjobs[j].app->free)
            sjobs[j].app->free(&jobs[j]);
        for (int i = 0; i < SL_MAX_PROCS; i++) {
            free(sprocs[j][i]);
            sprocs[j][i] = 0;
        }
    }
}
