/* Unit tests of the perturbed boot's draws (kernel/perturb.h): the generator is a fixed sequence per seed and
   never sticks at 0, and PCT's change points are depth - 1 distinct-or-equal values within the horizon, in
   ascending order, the same for the same state, spread over the horizon across seeds; a stop's length and a
   lowering's spans its log scale. */
#include <string.h>
#include "check.h"
#include "perturb.h"

int main(void)
{
    uint64_t a = 12345, b = 12345, c = 12346;
    int same = 1, differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = perturb_next(&a), y = perturb_next(&b), z = perturb_next(&c);
        same &= x == y;
        differ += x != z;
    }
    CHECK(same && differ == 1000 && a != 0);
    for (int depth = 1; depth <= PERTURB_MAX_DEPTH; depth++) {
        uint64_t s = (uint64_t)depth * 77 + 1, t = s;
        uint32_t p[PERTURB_MAX_DEPTH], q[PERTURB_MAX_DEPTH];
        perturb_change_points(&s, depth, p);
        perturb_change_points(&t, depth, q);
        CHECK(memcmp(p, q, sizeof p) == 0);
        int n = 0, sorted = 1, inside = 1;
        for (int i = 0; i < PERTURB_MAX_DEPTH; i++) {
            if (p[i]) {
                n++;
                inside &= p[i] >= 1 && p[i] <= PERTURB_HORIZON;
                sorted &= i == 0 || p[i - 1] <= p[i];
            }
        }
        CHECK(n == depth - 1 && sorted && inside);
    }
    uint32_t lo = PERTURB_HORIZON, hi = 0;
    for (uint64_t seed = 1; seed <= 2000; seed++) {
        uint64_t s = seed;
        uint32_t p[PERTURB_MAX_DEPTH];
        perturb_change_points(&s, 2, p);
        lo = p[0] < lo ? p[0] : lo;
        hi = p[0] > hi ? p[0] : hi;
    }
    CHECK(lo < PERTURB_HORIZON / 50 && hi > PERTURB_HORIZON - PERTURB_HORIZON / 50);
    /* a stop lasts PERTURB_DELAY_MIN_US..2^8 times that, and both ends of the scale come up */
    uint64_t st = 99, dmin = ~0ULL, dmax = 0;
    for (int i = 0; i < 4000; i++) {
        uint64_t d = perturb_delay_us(&st);
        dmin = d < dmin ? d : dmin;
        dmax = d > dmax ? d : dmax;
    }
    CHECK(dmin >= PERTURB_DELAY_MIN_US && dmin < 2 * PERTURB_DELAY_MIN_US);
    CHECK(dmax <= (uint64_t)PERTURB_DELAY_MIN_US << 8 && dmax > (uint64_t)PERTURB_DELAY_MIN_US << 6);
    /* a lowering lasts 1..2^(PERTURB_STEPS_LOG+1)-1 race points, and both ends of the scale come up */
    uint32_t kmin = ~0u, kmax = 0;
    for (int i = 0; i < 4000; i++) {
        uint32_t k = perturb_steps(&st);
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
    }
    CHECK(kmin == 1 && kmax < 2u << PERTURB_STEPS_LOG && kmax >= 1u << PERTURB_STEPS_LOG);
    /* starvation: a hand-over waits for the others' turns, a slice each at most */
    CHECK(!perturb_starved(500, 3, 250));             /* two full turns of the others: the round robin's own */
    CHECK(perturb_starved(501, 3, 250));              /* longer: the emulator gave this hart an empty turn */
    CHECK(!perturb_starved(1u << 30, 1, 250));        /* alone, nothing else can have run */
    return check_done("test_perturb");
}
