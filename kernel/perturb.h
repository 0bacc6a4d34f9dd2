/*
 * perturb.h - perturbed deterministic boots: the scenario token perturb=<seed>[,depth=<d>].
 *
 * The model. In deterministic mode (vclock.h) QEMU runs the harts in turn on one host thread, and a hart's turn
 * ends when it hands the thread over (vclock_handover: a spin pause, the idle loop) or its timer budget runs
 * out. So the interleaving of the harts is a function of the scenario alone - the same console byte for byte -
 * and the rare orders that break a protocol almost never come up. A perturbed boot draws the turns from a
 * seeded schedule instead, still deterministically (same scenario, same seed: the same console), in the manner
 * of PCT (Burckhardt et al., ASPLOS 2010) and of Go's and Loom's schedule perturbation:
 *   - random turn lengths: each timer budget is drawn from 5..250 us instead of VCLOCK_SLICE_US;
 *   - random hand-overs at race points: a futex wait or wake, an IPI sent, the library's spin pause (SYS_relax:
 *     every wait kind, the thread library's idle loop), a kernel spin on a held lock, a kernel lock's release
 *     (checked kernel only: see Cost), and the library's own race points (SYS_relax with a kind, abi.h enum
 *     sl_race: process control's suspend, resume and inbox forward, the ready deque's pop and steal, a
 *     barrier's arrival, a word's release, a wait's entry and exit; the library makes the call only when its
 *     info page says SL_INFO_PERTURBED) - each hands the host thread over with probability 1/PERTURB_ODDS (a
 *     spin pause: 1 to 4 times);
 *   - random stops: with probability 1/stop odds a race point stops the hart instead (below); each hart draws
 *     its stop odds once, from 1/8 to 1/256 (PERTURB_STOP_ODDS_LOG), so a campaign sees calm and stormy boots;
 *   - depth-1 change points per hart (PCT's priority changes): at its n-th race point, n drawn from
 *     1..PERTURB_HORIZON, the hart lowers itself (below), then stalls - it hands over at each of its next
 *     16..512 race points and spin pauses. A trace records the stall's span as a stop too: a stalled hart
 *     may take a turn of every other hart to pass one race point, so schedule checks discount it likewise.
 * Two kinds of stop, half of the random ones each, every change point the second:
 *   - a preemption: the hart stops for a drawn stretch of virtual time (perturb_delay_us: 10 us to 2.5 ms, as a
 *     vCPU the host preempts) while the others run on. A hand-over alone cannot give this: it lasts only until
 *     the next hart's turn ends (the earliest timer deadline of any hart, <= 250 us), so another hart could
 *     never finish a longer sequence inside one hart's window.
 *   - a lowering (PCT's change point proper): the hart runs again only after the other harts have passed k more
 *     race points of the site it stopped at (perturb_steps: 1 to 2^(PERTURB_STEPS_LOG+1) - 1, log-uniform), or
 *     when no other hart can go on (each halted idle or stopped itself), or after a perturb_delay_us cap. Each
 *     site's race points are a logical clock: a race on a structure lies between critical sections at its own
 *     lock, so the others' steps are counted where they would collide. The hart at whose point the count comes
 *     due hands over there, so the lowered hart resumes exactly between two of another hart's steps - inside a
 *     window of a few hundred instructions (a process's exit and its reap), which a stop measured in time lands
 *     in only by luck. A bug of depth 2 (one hart's step between two of another's) needs one lowering at the
 *     right point and one right k. Besides the random stops, a release of sched_lock - the end of every
 *     scheduling decision, where what the hart decided may go stale - lowers the hart with probability
 *     1/PERTURB_LOWER_ODDS.
 * A hart stops only once its scheduler runs (its timer interrupt enabled), so a boot's early waits are never
 * stretched. A stop is traced where it began, with its length, once it ends (trace.py's stop record); so is a
 * stall that a later change point cuts short. A hand-over of a hart's own draw (not a spin pause's) is traced
 * too, as held (trace.py): the hart gave the host thread up for a round of the others' turns, and many of them
 * in a long kernel path - a checked kernel's lock releases while a job's pages are freed, one race point a page
 * - hold it back as long as a stop; a schedule check discounts it for what that hart was to run, and a stop for
 * every hart.
 * Each hart draws from its own generator (seeded from the seed and its index), so a hart's draws depend only
 * on its own history; the lowerings' clocks are shared; deterministic mode makes both the same on every boot.
 *
 * Starvation. QEMU's single-threaded round robin can also stop a hart by itself: under -icount a runnable vCPU
 * gets an empty turn when the vCPU before it ended its turn exactly at a timer deadline (the budget is the
 * time to the next deadline, and the expired timers run only after that), and a compute-bound hart before it
 * ends every turn there - so the hart after it may not run for many turns. The checks cannot tell that from a
 * hart that left work undone. A hart cannot count its own instructions (QEMU's instret follows the one
 * -icount clock), but a hand-over is a wait it can time: runnable all along (SSIP set), it waits only for
 * the others' turns, at most PERTURB_SLICE_MAX_US each (every running hart's timer is armed within a slice). A
 * hand-over that lasted longer (perturb_starved) is traced as a stop, like the ones the hart makes. A
 * starvation that begins anywhere else (a turn ended by a timer write) is not seen.
 *
 * Accounting. A perturbed boot's SUMMARY line adds perturb_points= (race points met, every hart and site),
 * perturb_library= (the library's among them), perturb_stops= (preemptions and lowerings) and perturb_starved=
 * (the starvations seen): a campaign can see that a boot was perturbed at all, and where.
 *
 * Cost. Off (no perturb=), the futex calls and the IPI pay one load and branch of perturb_on, and each library
 * race point one load of the info page's flags and a branch; the spin pauses
 * and the timer budget are deterministic mode's own paths already, and a return to U-mode is not hooked (the
 * random turn lengths end turns anywhere, there too). A lock release is a race point in the checked kernel
 * only (KCHECKS, which make test builds and explore should boot): what the releasing hart read under the lock
 * may be stale by its next instruction, but the release is the hottest path of all, and a plain kernel pays
 * nothing for perturb= beyond the futex calls' and the IPI's branch. `experiment ab --icount --cpus 1`
 * measures what the hooks cost. perturb= is refused without clock=virtual (scenario.c).
 */
#ifndef PERTURB_H
#define PERTURB_H

#include <stddef.h>
#include <stdint.h>
#include "schedlab/abi.h"

/* The race points; PS_RELEASE_SCHED is a release of sched_lock, the end of every scheduling decision; from
   PS_LIBRARY on, the library's (abi.h enum sl_race, SL_RACE_SUSPEND first), each kind a site of its own. */
enum perturb_site {
    PS_FUTEX_WAIT, PS_FUTEX_WAKE, PS_IPI, PS_RELAX, PS_LOCK, PS_RELEASE, PS_RELEASE_SCHED,
    PS_LIBRARY, PS_NSITES = PS_LIBRARY + SL_RACE_NKINDS - 1
};

#define PERTURB_ODDS      8       /* a race point hands over with probability 1/8 */
#define PERTURB_STOP_ODDS_LOG 3   /* or stops with probability 1/2^(3..8), drawn per hart */
#define PERTURB_LOWER_ODDS 16     /* a sched_lock release lowers the hart with probability 1/16 */
#define PERTURB_STEPS_LOG 6       /* a lowering lasts 1..127 race points of the others */
#define PERTURB_HORIZON   20000   /* change points fall among a hart's first 20000 race points */
#define PERTURB_MAX_DEPTH 8

extern int perturb_on; /* set once by launcher_init, before the other harts start */

void perturb_init(uint64_t seed, int depth, int nharts);
void perturb_hit(enum perturb_site site); /* the slow path: perturb_on is set */
uint64_t perturb_slice_us(void);          /* this hart's next turn length, in virtual us */
int perturb_summary(char *buf, size_t len); /* " perturb_points=... perturb_stops=... perturb_starved=...", or "" */
void perturb_handed_over(uint64_t t0, int drawn); /* vclock_handover's end, perturb= on: traces a starvation, or a draw's hold */
int perturb_relax(enum perturb_site site); /* at a spin pause: how many hand-overs (1 unperturbed) */

/* A race point: nothing unless perturb= is on. */
static inline void perturb_point(enum perturb_site site)
{
    if (__builtin_expect(perturb_on, 0))
        perturb_hit(site);
}

/* The pure logic: the draws and the starvation test (host-tested: tests/host/test_perturb.c). */

/* A hand-over that waited waited_us: starved by the emulator (the model above) when the other harts' turns, at
   most one slice each, cannot account for it. */
#define PERTURB_SLICE_MAX_US 250 /* perturb_slice_us's longest turn (it draws 5..this) */
static inline int perturb_starved(uint64_t waited_us, int harts, uint64_t slice_us)
{
    return harts > 1 && waited_us > (uint64_t)(harts - 1) * slice_us;
}

/* xorshift64*: a fixed sequence per seed, the same on every host. */
static inline uint64_t perturb_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* A stop, in virtual us: log-uniform over PERTURB_DELAY_MIN_US..2^7 times that, jittered up to twice it. */
#define PERTURB_DELAY_MIN_US 10
static inline uint64_t perturb_delay_us(uint64_t *state)
{
    uint64_t base = (uint64_t)PERTURB_DELAY_MIN_US << (perturb_next(state) % 8);
    return base + perturb_next(state) % (base + 1);
}

/* A lowering's length in the others' race points: 2^i plus up to 2^i - 1, i uniform in 0..PERTURB_STEPS_LOG. */
static inline uint32_t perturb_steps(uint64_t *state)
{
    uint32_t base = 1u << (perturb_next(state) % (PERTURB_STEPS_LOG + 1));
    return base + (uint32_t)(perturb_next(state) % base);
}

/* depth - 1 change points drawn from 1..PERTURB_HORIZON, ascending, the rest 0. */
static inline void perturb_change_points(uint64_t *state, int depth, uint32_t *points)
{
    int n = 0;
    for (int i = 0; i < PERTURB_MAX_DEPTH; i++)
        points[i] = 0;
    for (int i = 0; i + 1 < depth && i < PERTURB_MAX_DEPTH; i++) {
        uint32_t p = 1 + (uint32_t)(perturb_next(state) % PERTURB_HORIZON);
        int k = n++;
        while (k > 0 && points[k - 1] > p) { /* insertion sort */
            points[k] = points[k - 1];
            k--;
        }
        points[k] = p;
    }
}

#endif
