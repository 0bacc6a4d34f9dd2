/*
 * perturb.c - perturbed deterministic boots (the model is in perturb.h).
 *
 * State. One struct per hart, touched only by that hart (indexed by mycpu()->id): no locks. perturb_init runs
 * on the boot hart before the others start; perturb_on is never written after.
 */
#include "kernel.h"
#include "cpu.h"
#include "perturb.h"
#include "vclock.h"
#include "intr.h"
#include "trace.h"

int perturb_on;

struct perturb_hart {
    uint64_t rng;
    uint32_t points;                       /* race points met so far */
    uint32_t stall;                        /* hand-overs left of the current stall */
    uint32_t change[PERTURB_MAX_DEPTH];    /* the change points still ahead, ascending; 0 = none */
    int next;                              /* index of the next change point */
    uint64_t hits[PS_NSITES];
} __attribute__((aligned(64)));

static struct perturb_hart harts[SL_MAX_HARTS];

void perturb_init(uint64_t seed, int depth, int nharts)
{
    for (int h = 0; h < nharts && h < SL_MAX_HARTS; h++) {
        struct perturb_hart *s = &harts[h];
        s->rng = (seed + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(h + 1) * 0xBF58476D1CE4E5B9ULL;
        if (!s->rng)
            s->rng = 1;
        perturb_change_points(&s->rng, depth, s->change);
    }
    perturb_on = 1;
}

static struct perturb_hart *self(void) { return &harts[mycpu()->id]; }

/* A stop: the hart makes no progress until `time` has advanced by us, as a vCPU the host preempted, while the
   other harts run; only once the hart's scheduler has enabled its timer interrupt. It halts in wfi until its
   timer, armed for then, fires. SSIP is taken off meanwhile and put back at the end if it was set (a hand-over
   leaves it set, and an IPI may come): pending, it would make every wfi return at once, and the stop would
   spin through QEMU's round robin for its whole length - with the other harts idle, the clock advances only by
   the stopped hart's own instructions. Put back, it is handled as before: an IPI is idempotent (vclock.h).
   The timer interrupt stays pending: the hart's next look at sip runs sched_timer_interrupt, which finds a tick
   due or not and re-arms, so a stop makes a tick late and never loses one. */
static void stop(uint64_t us)
{
    if (!(csr_read(sie) & SIE_STIE))
        return;
    uint64_t until = rdtime() + us_to_ticks(us);
    int ipi = 0;
    trace_rec(mycpu()->id, TR_STOP, 0, -1, (int)us); /* a schedule check discounts the stop (trace.py) */
    intr_set_timer(until);
    while (rdtime() < until) {
        if (csr_read(sip) & SIP_SSIP) {
            ipi = 1;
            csr_clear(sip, SIP_SSIP);
        }
        wfi();
    }
    if (ipi)
        csr_set(sip, SIP_SSIP);
}

/* One race point of this hart: count it, stop and start a stall at a change point, and say whether to
   hand over. */
static int decide(struct perturb_hart *s)
{
    s->points++;
    if (s->next < PERTURB_MAX_DEPTH && s->change[s->next] && s->points == s->change[s->next]) {
        s->next++;
        stop(perturb_delay_us(&s->rng));
        s->stall = 16 + (uint32_t)(perturb_next(&s->rng) % 497);
    }
    if (s->stall) {
        s->stall--;
        return 1;
    }
    uint64_t r = perturb_next(&s->rng);
    if (r % PERTURB_STOP_ODDS == 0) {
        stop(perturb_delay_us(&s->rng));
        return 0;
    }
    return r / PERTURB_STOP_ODDS % PERTURB_ODDS == 0;
}

void perturb_hit(enum perturb_site site)
{
    struct perturb_hart *s = self();
    s->hits[site]++;
    if (decide(s))
        vclock_handover();
}

int perturb_relax(enum perturb_site site)
{
    if (!perturb_on)
        return 1;
    struct perturb_hart *s = self();
    s->hits[site]++;
    return decide(s) ? 1 + (int)(perturb_next(&s->rng) % 4) : 1;
}

uint64_t perturb_slice_us(void)
{
    if (!perturb_on)
        return VCLOCK_SLICE_US;
    return 5 + perturb_next(&self()->rng) % 246;
}
