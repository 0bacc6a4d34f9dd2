/*
 * perturb.c - perturbed deterministic boots (the model is in perturb.h).
 *
 * State. One struct per hart, written only by that hart (indexed by mycpu()->id), and the boot's logical clocks
 * (race_clock: one per site), which every hart advances. perturb= needs clock=virtual, where QEMU runs the harts in
 * turn on one host thread: no two harts ever run at once, but a hart's turn can end at any instruction (its
 * timer budget), so another hart's steps can fall between a read and a write of a shared word. So each shared
 * word is either written by its own hart only or advanced by one atomic instruction (race_clock), and nothing
 * caches a value computed from several harts' words: whether a lowered hart has come due is read from the
 * lowered harts' own words at every race point (lowered_due). (A cached minimum of their resume counts went
 * stale that way: a hart stored the minimum it had computed after the hart it named had resumed, and from then
 * on every race point of that site handed over - the interrupt path's too, which then starved the timer.)
 * Shared words are read with relaxed atomics so the compiler re-reads them across a hand-over. perturb_init
 * runs on the boot hart before the others start; perturb_on is never written after.
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
    uint64_t stall_t0;                     /* when the current stall began */
    uint32_t starved;                      /* starvations seen (perturb.h) */
    uint32_t stops;                        /* stops begun so far */
    uint32_t stop_odds;                    /* a race point stops the hart with probability 1/stop_odds */
    uint32_t change[PERTURB_MAX_DEPTH];    /* the change points still ahead, ascending; 0 = none */
    int next;                              /* index of the next change point */
    int stopped;                           /* in a stop: lowered or preempted */
    int lowered_at;                        /* lowered: the site whose clock it waits on; written before resume_at */
    uint64_t resume_at;                    /* lowered: that clock's count at which it runs again; 0 = not */
    uint64_t hits[PS_NSITES];
} __attribute__((aligned(64)));

static struct perturb_hart harts[SL_MAX_HARTS];
static int nperturbed;
static uint64_t race_clock[PS_NSITES];     /* per site: race points of every hart so far (atomic add only) */

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

void perturb_init(uint64_t seed, int depth, int nharts)
{
    nperturbed = nharts < SL_MAX_HARTS ? nharts : SL_MAX_HARTS;
    for (int h = 0; h < nperturbed; h++) {
        struct perturb_hart *s = &harts[h];
        s->rng = (seed + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(h + 1) * 0xBF58476D1CE4E5B9ULL;
        if (!s->rng)
            s->rng = 1;
        perturb_change_points(&s->rng, depth, s->change);
        s->stop_odds = 1u << (PERTURB_STOP_ODDS_LOG + perturb_next(&s->rng) % 6);
    }
    perturb_on = 1;
}

static struct perturb_hart *self(void) { return &harts[mycpu()->id]; }

/* 1 if a hart other than `me` can go on: neither halted idle nor stopped. */
static int others_run(int me)
{
    for (int h = 0; h < nperturbed; h++)
        if (h != me && !LOAD(harts[h].stopped) && LOAD(cpus[h].idle) != IDLE_HALT)
            return 1;
    return 0;
}

/* 1 if a hart lowered at `site` has come due at that site's count `now` (the hart at whose race point that
   happens hands over to it: decide). */
static int lowered_due(int site, uint64_t now)
{
    for (int h = 0; h < nperturbed; h++) {
        uint64_t r = LOAD(harts[h].resume_at);
        if (r && r <= now && LOAD(harts[h].lowered_at) == site)
            return 1;
    }
    return 0;
}

static void stop_begin(struct perturb_hart *s)
{
    STORE(s->stopped, 1);
    s->stops++;
}

/* A span in which this hart was held back, from t0 to now: traced where it began, as a stop (trace.py discounts
   such spans in schedule checks). */
static void trace_held(uint64_t t0) { trace_rec_at(mycpu()->id, t0, TR_STOP, 0, -1, (int)time_us(rdtime() - t0)); }

/* A hand-over that began at t0 has ended (vclock_handover). Waiting longer than the others' turns can take, the
   hart was starved by the emulator (perturb.h, Starvation) - traced as a stop. Otherwise a hand-over this
   hart's own draw made (`drawn`: decide) is traced as held, on this hart alone: it gave the host thread up for
   a round of the others' turns and could dispatch nothing meanwhile (a gang check discounts it for the
   processes this hart was to run; trace.py). */
void perturb_handed_over(uint64_t t0, int drawn)
{
    uint64_t waited_us = time_us(rdtime() - t0);
    if (perturb_starved(waited_us, nperturbed, PERTURB_SLICE_MAX_US)) {
        trace_held(t0);
        self()->starved++;
    } else if (drawn && waited_us) {
        trace_rec_at(mycpu()->id, t0, TR_HELD, 0, -1, (int)waited_us);
    }
}

static void stop_end(struct perturb_hart *s, uint64_t t0)
{
    STORE(s->stopped, 0);
    trace_held(t0);
}

/* A preemption: the hart makes no progress until `time` has advanced by us while the other harts run. It
   halts in wfi until its timer, armed for then, fires. SSIP is taken off meanwhile and put back at the end if
   it was set (an IPI may be pending, or come): pending, it would make every wfi return at
   once, and the stop would spin through QEMU's round robin for its whole length - with the other harts idle,
   the clock advances only by the stopped hart's own instructions. Put back, it is handled as before: an IPI
   is idempotent (vclock.h). The timer interrupt stays pending: the hart's next look at sip runs
   sched_timer_interrupt, which finds a tick due or not and re-arms, so a stop makes a tick late and never
   loses one. */
static void preempt(struct perturb_hart *s, uint64_t us)
{
    uint64_t t0 = rdtime(), until = t0 + us_to_ticks(us);
    int ipi = 0;
    stop_begin(s);
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
    stop_end(s, t0);
}

/* A lowering at `site`: the hart hands over until the others have passed `steps` race points of that site
   (the one at which the count comes due hands over to it: decide), no other hart can go on, or `cap_us` of
   virtual time has gone by. Each hand-over sets SSIP before its wfi (vclock_handover), so the hart is
   runnable at every round and looks again; an IPI that came meanwhile stays pending for afterwards. */
static void lower(struct perturb_hart *s, int site, uint32_t steps, uint64_t cap_us)
{
    if (!(csr_read(sie) & SIE_STIE))
        return;
    uint64_t t0 = rdtime(), until = t0 + us_to_ticks(cap_us);
    int me = mycpu()->id;
    STORE(s->lowered_at, site);
    STORE(s->resume_at, LOAD(race_clock[site]) + steps);
    stop_begin(s);
    while (LOAD(race_clock[site]) < s->resume_at && rdtime() < until && others_run(me))
        vclock_handover(0);
    STORE(s->resume_at, 0);
    stop_end(s, t0);
}

/* A stop of either kind, half each (a change point always lowers). */
static void stop(struct perturb_hart *s, int site, int change)
{
    if (!(csr_read(sie) & SIE_STIE))
        return;
    if (change || perturb_next(&s->rng) % 2)
        lower(s, site, perturb_steps(&s->rng), perturb_delay_us(&s->rng));
    else
        preempt(s, perturb_delay_us(&s->rng));
}

/* One race point of this hart: tick the logical clock, stop and start a stall at a change point, and say
   whether to hand over - always when a lowered hart's count has come due, so it runs next. */
static int decide(struct perturb_hart *s, int site)
{
    uint64_t now = __atomic_add_fetch(&race_clock[site], 1, __ATOMIC_RELAXED);
    s->hits[site]++;
    s->points++;
    if (lowered_due(site, now))
        return 1;
    if (s->next < PERTURB_MAX_DEPTH && s->change[s->next] && s->points == s->change[s->next]) {
        if (s->stall) /* a change point inside a stall: the stall so far ends here, traced like any */
            trace_held(s->stall_t0);
        s->next++;
        stop(s, site, 1);
        s->stall = 16 + (uint32_t)(perturb_next(&s->rng) % 497);
        s->stall_t0 = rdtime();
    }
    if (s->stall) {
        if (--s->stall == 0)
            trace_held(s->stall_t0);
        return 1;
    }
    uint64_t r = perturb_next(&s->rng);
    if (site == PS_RELEASE_SCHED && r % PERTURB_LOWER_ODDS == 0) { /* a scheduling decision just made */
        lower(s, site, perturb_steps(&s->rng), perturb_delay_us(&s->rng));
        return 0;
    }
    r /= PERTURB_LOWER_ODDS;
    if (r % s->stop_odds == 0) {
        stop(s, site, 0);
        return 0;
    }
    return r / s->stop_odds % PERTURB_ODDS == 0;
}

void perturb_hit(enum perturb_site site)
{
    if (decide(self(), site))
        vclock_handover(1);
}

int perturb_relax(enum perturb_site site)
{
    if (!perturb_on)
        return 1;
    struct perturb_hart *s = self();
    return decide(s, site) ? 1 + (int)(perturb_next(&s->rng) % 4) : 1;
}

uint64_t perturb_slice_us(void)
{
    if (!perturb_on)
        return VCLOCK_SLICE_US;
    return 5 + perturb_next(&self()->rng) % (PERTURB_SLICE_MAX_US - 4);
}

/* The SUMMARY line's account of a perturbed boot (launcher.c): the race points met, the library's among them,
   and the stops. */
int perturb_summary(char *buf, size_t len)
{
    uint64_t points = 0, library = 0, stops = 0, starved = 0;
    if (!perturb_on)
        return snprintf(buf, len, "%s", "");
    for (int site = 0; site < PS_NSITES; site++) {
        uint64_t n = LOAD(race_clock[site]);
        points += n;
        library += site >= PS_LIBRARY ? n : 0;
    }
    for (int h = 0; h < nperturbed; h++) {
        stops += LOAD(harts[h].stops);
        starved += LOAD(harts[h].starved);
    }
    return snprintf(buf, len, " perturb_points=%lu perturb_library=%lu perturb_stops=%lu perturb_starved=%lu", points,
                    library, stops, starved);
}
