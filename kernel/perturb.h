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
 *     (checked kernel only: see Cost) - each hands the host thread over with probability 1/PERTURB_ODDS (a
 *     spin pause: 1 to 4 times);
 *   - random stops: with probability 1/PERTURB_STOP_ODDS a race point stops the hart instead (below);
 *   - depth-1 change points per hart (PCT's priority changes): at its n-th race point, n drawn from
 *     1..PERTURB_HORIZON, the hart stops for a drawn stretch of virtual time (perturb_delay_us: 10 us to
 *     2.5 ms, as a vCPU the host preempts) while the others run on, then stalls - it hands over at each of
 *     its next 16..512 race points and spin pauses. The stop is what a hand-over alone cannot give: a hand-
 *     over lasts only until the next hart's turn ends (the earliest timer deadline of any hart, <= 250 us),
 *     so another hart could never finish a longer sequence inside one hart's window. A hart stops only once
 *     its scheduler runs (its timer interrupt enabled), so a boot's early waits are never stretched.
 * Each hart draws from its own generator (seeded from the seed and its index), so a hart's decisions depend
 * only on its own history, which deterministic mode makes the same on every boot.
 *
 * Cost. Off (no perturb=), the futex calls and the IPI pay one load and branch of perturb_on; the spin pauses
 * and the timer budget are deterministic mode's own paths already, and a return to U-mode is not hooked (the
 * random turn lengths end turns anywhere, there too). A lock release is a race point in the checked kernel
 * only (KCHECKS, which make test builds and explore should boot): what the releasing hart read under the lock
 * may be stale by its next instruction, but the release is the hottest path of all, and a plain kernel pays
 * nothing for perturb= beyond the futex calls' and the IPI's branch. `experiment ab --icount --cpus 1`
 * measures what the hooks cost. perturb= is refused without clock=virtual (scenario.c).
 */
#ifndef PERTURB_H
#define PERTURB_H

#include <stdint.h>

enum perturb_site { PS_FUTEX_WAIT, PS_FUTEX_WAKE, PS_IPI, PS_RELAX, PS_LOCK, PS_RELEASE, PS_NSITES };

#define PERTURB_ODDS      8       /* a race point hands over with probability 1/8 */
#define PERTURB_STOP_ODDS 64      /* or stops (perturb_delay_us) with probability 1/64 */
#define PERTURB_HORIZON   20000   /* change points fall among a hart's first 20000 race points */
#define PERTURB_MAX_DEPTH 8

extern int perturb_on; /* set once by launcher_init, before the other harts start */

void perturb_init(uint64_t seed, int depth, int nharts);
void perturb_hit(enum perturb_site site); /* the slow path: perturb_on is set */
uint64_t perturb_slice_us(void);          /* this hart's next turn length, in virtual us */
int perturb_relax(enum perturb_site site); /* at a spin pause: how many hand-overs (1 unperturbed) */

/* A race point: nothing unless perturb= is on. */
static inline void perturb_point(enum perturb_site site)
{
    if (__builtin_expect(perturb_on, 0))
        perturb_hit(site);
}

/* The pure draws (host-tested: tests/host/test_perturb.c). */

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
