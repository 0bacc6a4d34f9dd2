/*
 * slots.h - slot allocation in the Ousterhout matrix (Feitelson & Rudolph 1992, section 3.2 and Fig. 3).
 *
 * The matrix has one column per hart and one row per slot. A gang of n processes (n <= columns) takes n
 * entries of one row. As on Makbilan, every row's free capacity is kept, and rows are linked in lists by
 * free capacity (head[c] lists the rows with exactly c free entries, in ascending row order), so that
 *   first fit  takes the lowest-numbered row with at least n free entries (the least of the heads of
 *              lists n..columns), and
 *   best fit   takes the row with the fewest free entries that still fits n (the head of the first
 *              non-empty list from n up);
 * and a gang that fits nowhere gets a new row at the end. Allocation is static, as on Makbilan: rows
 * left with few entries by departures are not merged. A row is used while it has an entry taken; the
 * round robin visits used rows only, up to the maximal used row (the `nrows` hint: trailing free rows are
 * given back, so nrows - 1 is always the maximal used row, or nrows is 0).
 *
 * Within the chosen row a gang takes the free columns with the fewest entries taken over all rows (ties:
 * lowest column), so small gangs spread over the harts and the alternates of a hart stay few.
 *
 * Pure logic: no kernel dependency; tests/host/test_slots.c unit-tests it under ASan/UBSan.
 * Not thread-safe: the gang policy calls it under sched_lock.
 */
#ifndef SLOTS_H
#define SLOTS_H

#include <stdint.h>

#define SLOTS_MAX_ROWS 512          /* >= NPROC: every used row holds at least one process */
#define SLOTS_MAX_COLS 64           /* SL_MAX_HARTS */

enum slot_fit { SLOT_FIT_FIRST, SLOT_FIT_BEST };

struct slot_table {
    int ncols;
    enum slot_fit fit;
    int nrows;                              /* rows 0..nrows-1 exist; nrows-1 is the maximal used row */
    int nfree[SLOTS_MAX_ROWS];              /* free entries of each existing row */
    uint64_t taken[SLOTS_MAX_ROWS];         /* columns taken in each row */
    int next[SLOTS_MAX_ROWS], prev[SLOTS_MAX_ROWS];   /* links in the list of rows with equal nfree */
    int head[SLOTS_MAX_COLS + 1];           /* head[c]: first row with c free entries; -1 when none */
    int col_load[SLOTS_MAX_COLS];           /* entries taken in each column, over all rows */
};

void slots_init(struct slot_table *t, int ncols, enum slot_fit fit);

/* Take n entries (1 <= n <= ncols) of one row; their columns go to *cols. Returns the row, or -1 when n
   is out of range or every row of SLOTS_MAX_ROWS is too full. */
int slots_alloc(struct slot_table *t, int n, uint64_t *cols);

/* Give back entries (cols) of row, taken by one slots_alloc. */
void slots_free(struct slot_table *t, int row, uint64_t cols);

static inline int slots_used(const struct slot_table *t, int row)
{
    return row >= 0 && row < t->nrows && t->taken[row] != 0;
}

/* The first used row after `row` in round-robin order (it may be `row` itself when it is the only used
   one), or -1 when no row is used. row may be -1 or past the end. */
int slots_next_used(const struct slot_table *t, int row);

/* Check every invariant (capacity lists, counts, hint); 0 if all hold, else -1 with a reason in why. */
int slots_check(const struct slot_table *t, char *why, int whylen);

#endif
