/*
 * host_scenario.c - the host backend's job= token: an app's command line
 * (build/host/<app> procs=4 n=64) becomes the one-job scenario
 * "seed=<s> job=<app>:procs=4,n=64" and goes through the kernel's own
 * parser (kernel/scenario.c, built for the host), with a scen_env whose only
 * app is this one (its sl_app spec), the host's CPUs as harts and its RAM as
 * the free memory. So the host checks keys, fills defaults and estimates
 * memory exactly as the kernel does: one implementation, no drift.
 *
 * Only the default policy exists here (no policy= token is ever built), and
 * tracing does not.
 */
#ifndef SL_TARGET_KERNEL

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "schedlab.h"
#include "platform/host.h"
#include "../../kernel/scenario.h"

static const char *the_app; /* the one app lookup() knows */

static const struct sl_appspec *lookup(const char *app) { return strcmp(app, the_app) == 0 ? &sl_app : NULL; }

/* The host runs a job's processes as threads under Linux: no kernel policy, so only the default name. */
static const struct scen_policy host_policy = { .name = "timeslice" };

static struct scen_env host_env(const char *app)
{
    long nh = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), pagesz = sysconf(_SC_PAGESIZE);
    struct scen_env env = {
        .nharts = (int)(nh < 1                  ? 1
                            : nh > SL_MAX_HARTS ? SL_MAX_HARTS
                                                : nh),
        .free_bytes = pages > 0 && pagesz > 0 ? (uint64_t)pages * (uint64_t)pagesz : 1ull << 30,
        .lookup = lookup,
        .apps = app,
        .policy_table = &host_policy,
        .npolicies = 1,
        .trace_built = 0,
    };
    return env;
}

int host_parse_job(const char *app, unsigned long long seed, int ntok, char **tok, struct scen_job *job, char *err,
                   size_t errsz)
{
    static struct scenario sc; /* large: not on the stack */
    char bootargs[1024];
    size_t n;
    struct scen_env env;

    the_app = app;
    env = host_env(app);
    n = (size_t)snprintf(bootargs, sizeof bootargs, "seed=%llu job=%s", seed, app);
    for (int i = 0; i < ntok && n < sizeof bootargs; i++)
        n += (size_t)snprintf(bootargs + n, sizeof bootargs - n, "%c%s", i ? ',' : ':', tok[i]);
    if (n >= sizeof bootargs)
        return snprintf(err, errsz, "the command line is longer than %zu characters", sizeof bootargs - 1), -1;
    if (scenario_parse(bootargs, &env, &sc, err, errsz) < 0)
        return -1;
    if (sc.njobs != 1) /* a token with a space made a second scenario token */
        return snprintf(err, errsz, "expected key=value arguments for one job"), -1;
    *job = sc.jobs[0];
    return 0;
}

#endif
