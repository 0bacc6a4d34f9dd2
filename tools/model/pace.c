/*
 * pace.c - the paced hart's schedule (pace.h explains the model). Pure arithmetic: the caller owns the
 * clock and the sleeping.
 */
#include <stdio.h>

#include "pace.h"

#define PS_PER_S 1000000000000ULL

uint64_t pace_cycles_ps(uint64_t cycles, uint64_t rate, uint64_t *rem)
{
    unsigned __int128 num = (unsigned __int128)cycles * PS_PER_S + *rem;
    *rem = (uint64_t)(num % rate);
    return (uint64_t)(num / rate);
}

uint64_t pace_check(struct pace_hart *h, const struct pace *p, uint64_t wall_ns, uint64_t lead_ns,
                    struct pace_count *job)
{
    h->model_ps += pace_cycles_ps(h->pending, p->rate, &h->rem);
    h->pending = 0;
    uint64_t wall_ps = wall_ns * 1000;
    if (!h->started || h->idle) { /* first check, or back from an idle wait: behind by design */
        if (h->model_ps < wall_ps)
            h->model_ps = wall_ps;
        h->started = 1;
        h->idle = 0;
    }
    if (h->model_ps >= wall_ps) {
        uint64_t ahead_ns = (h->model_ps - wall_ps) / 1000;
        return ahead_ns && ahead_ns >= lead_ns ? ahead_ns : 0;
    }
    uint64_t behind_ns = (wall_ps - h->model_ps) / 1000;
    if (behind_ns > p->bound_ns) { /* a fidelity event: the host lost this time; do not make it up */
        h->count.events++;
        h->count.lag_ns += behind_ns;
        if (job) {
            job->events++;
            job->lag_ns += behind_ns;
        }
        h->model_ps = wall_ps;
    }
    return 0;
}

int pace_rate_ok(uint64_t rate, char *err, unsigned long errlen)
{
    if (rate >= PACE_RATE_MIN && rate <= PACE_RATE_MAX)
        return 0;
    snprintf(err, errlen, "pace=%llu is out of range: pace takes %d..%llu instructions per second per hart",
             (unsigned long long)rate, PACE_RATE_MIN, (unsigned long long)PACE_RATE_MAX);
    return -1;
}
