/*
 * test_slots.c - host unit tests of the Ousterhout matrix's slot allocation (kernel/sched/slots.c):
 * capacity lists, first and best fit, new rows, row freeing and the maximal-used-row hint, the
 * round robin over used rows, column spreading, and a random stress checked against every invariant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "sched/slots.h"

static struct slot_table t;

static int invariants_hold(void)
{
    char why[200];
    if (slots_check(&t, why, sizeof why)) {
        fprintf(stderr, "  invariant broken: %s\n", why);
        return 0;
    }
    return 1;
}

static int popc(uint64_t x) { return __builtin_popcountll(x); }

static void test_new_rows_and_fit(void)
{
    uint64_t c0, c1, c2, c3;
    slots_init(&t, 4, SLOT_FIT_FIRST);
    CHECK(slots_next_used(&t, -1) == -1);
    CHECK(slots_alloc(&t, 4, &c0) == 0 && c0 == 0xf);     /* a full-width gang fills row 0 */
    CHECK(slots_alloc(&t, 3, &c1) == 1 && popc(c1) == 3);  /* no room in row 0: a new row */
    CHECK(slots_alloc(&t, 2, &c2) == 2 && popc(c2) == 2);  /* row 1 has 1 free: another new row */
    CHECK(slots_alloc(&t, 1, &c3) == 1 && (c3 & c1) == 0); /* first fit: the lowest row with room */
    CHECK(t.nrows == 3 && t.nfree[0] == 0 && t.nfree[1] == 0 && t.nfree[2] == 2);
    CHECK(invariants_hold());
    /* out of range */
    uint64_t c;
    CHECK(slots_alloc(&t, 0, &c) == -1 && slots_alloc(&t, 5, &c) == -1);
}

static void test_first_vs_best(void)
{
    /* row 0 empty again (4 free) below row 1 with 1 free: a gang of 1 goes to row 0 under first fit,
       to row 1 under best fit; a gang of 2 fits only row 0 either way */
    for (int fit = SLOT_FIT_FIRST; fit <= SLOT_FIT_BEST; fit++) {
        uint64_t x, y, d, e;
        slots_init(&t, 4, fit);
        CHECK(slots_alloc(&t, 4, &x) == 0);
        CHECK(slots_alloc(&t, 3, &y) == 1);
        slots_free(&t, 0, x);
        CHECK(t.nrows == 2 && !slots_used(&t, 0) && invariants_hold());
        CHECK(slots_alloc(&t, 1, &d) == (fit == SLOT_FIT_FIRST ? 0 : 1));
        CHECK(slots_alloc(&t, 2, &e) == 0);
        CHECK(invariants_hold());
    }
}

static void test_freeing_and_hint(void)
{
    uint64_t c[5];
    slots_init(&t, 2, SLOT_FIT_FIRST);
    for (int i = 0; i < 5; i++)
        CHECK(slots_alloc(&t, 2, &c[i]) == i);
    slots_free(&t, 2, c[2]);                               /* a hole: row 2 unused, still below the hint */
    CHECK(t.nrows == 5 && !slots_used(&t, 2) && invariants_hold());
    CHECK(slots_next_used(&t, 1) == 3);                    /* the round robin skips the unused row */
    CHECK(slots_next_used(&t, 4) == 0);                    /* and wraps after the maximal used row */
    slots_free(&t, 4, c[4]);
    CHECK(t.nrows == 4);
    slots_free(&t, 3, c[3]);
    CHECK(t.nrows == 2);                                   /* rows 3 and 2 both given back */
    CHECK(invariants_hold());
    uint64_t d;
    CHECK(slots_alloc(&t, 1, &d) == 2);                    /* full rows 0, 1: a new row */
    slots_free(&t, 0, c[0]);
    slots_free(&t, 1, c[1]);
    slots_free(&t, 2, d);
    CHECK(t.nrows == 0 && slots_next_used(&t, -1) == -1 && invariants_hold());
    /* the only used row is its own successor */
    CHECK(slots_alloc(&t, 1, &d) == 0 && slots_next_used(&t, 0) == 0);
}

static void test_columns_spread(void)
{
    uint64_t c[4];
    slots_init(&t, 4, SLOT_FIT_FIRST);
    for (int i = 0; i < 4; i++)
        CHECK(slots_alloc(&t, 1, &c[i]) == 0);
    CHECK((c[0] | c[1] | c[2] | c[3]) == 0xf);             /* four 1-gangs share row 0, one column each */
    uint64_t w;
    CHECK(slots_alloc(&t, 2, &w) == 1 && w == 0x3);        /* equal loads: lowest columns */
    uint64_t x;
    CHECK(slots_alloc(&t, 2, &x) == 1 && x == 0xc);
    uint64_t y;
    CHECK(slots_alloc(&t, 1, &y) == 2 && y == 0x1);
    uint64_t z;
    CHECK(slots_alloc(&t, 2, &z) == 2 && z == 0x6);        /* columns 1 and 2: less loaded than 0 */
    CHECK(invariants_hold());
}

static void test_one_column_and_64(void)
{
    uint64_t c;
    slots_init(&t, 1, SLOT_FIT_BEST);
    for (int i = 0; i < 10; i++)
        CHECK(slots_alloc(&t, 1, &c) == i && c == 1);      /* H = 1: a row per process */
    CHECK(invariants_hold());
    slots_init(&t, 64, SLOT_FIT_FIRST);
    CHECK(slots_alloc(&t, 64, &c) == 0 && c == ~0ULL);
    CHECK(slots_alloc(&t, 63, &c) == 1 && popc(c) == 63);
    CHECK(invariants_hold());
}

static void test_rows_run_out(void)
{
    uint64_t c;
    slots_init(&t, 1, SLOT_FIT_FIRST);
    for (int i = 0; i < SLOTS_MAX_ROWS; i++)
        CHECK(slots_alloc(&t, 1, &c) == i);
    CHECK(slots_alloc(&t, 1, &c) == -1);
    CHECK(invariants_hold());
}

/* Random gangs arrive and leave; after every step the lists and counts are checked, every allocation
   must have gone to the row the fit rule names (brute force over all rows), and no column of a row is
   ever given twice. */
static void test_stress(void)
{
    struct gang { int row, n; uint64_t cols; } live[400];
    unsigned seed = 12345;
    for (int fit = SLOT_FIT_FIRST; fit <= SLOT_FIT_BEST; fit++) {
        for (int ncols = 1; ncols <= 16; ncols += 5) {
            int nlive = 0, bad = 0;
            slots_init(&t, ncols, fit);
            for (int step = 0; step < 4000 && !bad; step++) {
                if (nlive < 400 && (nlive == 0 || rand_r(&seed) % 3)) {
                    int n = 1 + rand_r(&seed) % ncols, expect = -1;
                    for (int r = 0; r < t.nrows; r++)
                        if (t.nfree[r] >= n &&
                            (expect < 0 || (fit == SLOT_FIT_BEST && t.nfree[r] < t.nfree[expect])))
                            expect = r;
                    if (expect < 0)
                        expect = t.nrows;
                    uint64_t cols;
                    int row = slots_alloc(&t, n, &cols);
                    if (row != expect || popc(cols) != n)
                        bad = 1;
                    for (int i = 0; i < nlive; i++)
                        if (live[i].row == row && (live[i].cols & cols))
                            bad = 1;
                    live[nlive++] = (struct gang){ row, n, cols };
                } else {
                    int i = rand_r(&seed) % nlive;
                    slots_free(&t, live[i].row, live[i].cols);
                    live[i] = live[--nlive];
                }
                if (!invariants_hold())
                    bad = 1;
            }
            CHECK(!bad);
        }
    }
}

int main(void)
{
    test_new_rows_and_fit();
    test_first_vs_best();
    test_freeing_and_hint();
    test_columns_spread();
    test_one_column_and_64();
    test_rows_run_out();
    test_stress();
    return check_done("test_slots");
}
