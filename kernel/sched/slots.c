/*
 * slots.c - slot allocation in the Ousterhout matrix with capacity lists (see slots.h).
 */
#ifdef SCHEDLAB_HOST
#include <stdio.h>
#include <string.h>
#else
#include "../kernel.h"
#endif
#include "slots.h"

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1) /* the kernel links without libgcc's __popcountdi2 */
        n++;
    return n;
}

/* ---- the capacity lists: each list in ascending row order ---- */

static void list_insert(struct slot_table *t, int row)
{
    int c = t->nfree[row], prev = -1, cur = t->head[c];
    while (cur >= 0 && cur < row) {
        prev = cur;
        cur = t->next[cur];
    }
    t->next[row] = cur;
    t->prev[row] = prev;
    if (cur >= 0)
        t->prev[cur] = row;
    if (prev >= 0)
        t->next[prev] = row;
    else
        t->head[c] = row;
}

static void list_remove(struct slot_table *t, int row)
{
    int c = t->nfree[row];
    if (t->prev[row] >= 0)
        t->next[t->prev[row]] = t->next[row];
    else
        t->head[c] = t->next[row];
    if (t->next[row] >= 0)
        t->prev[t->next[row]] = t->prev[row];
}

void slots_init(struct slot_table *t, int ncols, enum slot_fit fit)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->fit = fit;
    for (int c = 0; c <= SLOTS_MAX_COLS; c++)
        t->head[c] = -1;
}

/* The row a gang of n goes to, or -1 when none of the existing rows fits. */
static int find_row(const struct slot_table *t, int n)
{
    int best = -1;
    for (int c = n; c <= t->ncols; c++) {
        int r = t->head[c];
        if (r < 0)
            continue;
        if (t->fit == SLOT_FIT_BEST)
            return r;
        if (best < 0 || r < best)
            best = r;
    }
    return best;
}

/* n free columns of row, least-loaded first, ties to the lowest column. */
static uint64_t pick_columns(const struct slot_table *t, int row, int n)
{
    uint64_t cols = 0;
    for (int k = 0; k < n; k++) {
        int best = -1;
        for (int c = 0; c < t->ncols; c++)
            if (!((t->taken[row] | cols) >> c & 1) && (best < 0 || t->col_load[c] < t->col_load[best]))
                best = c;
        cols |= 1ULL << best;
    }
    return cols;
}

int slots_alloc(struct slot_table *t, int n, uint64_t *cols)
{
    if (n < 1 || n > t->ncols)
        return -1;
    int row = find_row(t, n);
    if (row < 0) {
        if (t->nrows >= SLOTS_MAX_ROWS)
            return -1;
        row = t->nrows++;
        t->nfree[row] = t->ncols;
        t->taken[row] = 0;
    } else {
        list_remove(t, row);
    }
    *cols = pick_columns(t, row, n);
    t->taken[row] |= *cols;
    t->nfree[row] -= n;
    for (int c = 0; c < t->ncols; c++)
        t->col_load[c] += (int)(*cols >> c & 1);
    list_insert(t, row);
    return row;
}

void slots_free(struct slot_table *t, int row, uint64_t cols)
{
    list_remove(t, row);
    t->taken[row] &= ~cols;
    t->nfree[row] += popcount64(cols);
    for (int c = 0; c < t->ncols; c++)
        t->col_load[c] -= (int)(cols >> c & 1);
    list_insert(t, row);
    /* give trailing free rows back: nrows - 1 stays the maximal used row */
    while (t->nrows > 0 && t->taken[t->nrows - 1] == 0) {
        list_remove(t, t->nrows - 1);
        t->nrows--;
    }
}

int slots_next_used(const struct slot_table *t, int row)
{
    if (t->nrows == 0)
        return -1;
    if (row < -1 || row >= t->nrows)
        row = -1;
    for (int k = 1; k <= t->nrows; k++) {
        int r = (row + k) % t->nrows;
        if (t->taken[r])
            return r;
    }
    return -1;
}

#define CHECK_FAIL(...) (snprintf(why, (size_t)whylen, __VA_ARGS__), -1)

int slots_check(const struct slot_table *t, char *why, int whylen)
{
    int on_list[SLOTS_MAX_ROWS] = { 0 }, load[SLOTS_MAX_COLS] = { 0 };
    for (int c = 0; c <= t->ncols; c++) {
        int prev = -1;
        for (int r = t->head[c]; r >= 0; prev = r, r = t->next[r]) {
            if (r >= t->nrows)
                return CHECK_FAIL("row %d on list %d is past nrows %d", r, c, t->nrows);
            if (t->nfree[r] != c)
                return CHECK_FAIL("row %d with %d free is on list %d", r, t->nfree[r], c);
            if (t->prev[r] != prev || (prev >= 0 && prev >= r))
                return CHECK_FAIL("list %d is not linked in ascending order at row %d", c, r);
            if (on_list[r]++)
                return CHECK_FAIL("row %d is listed twice", r);
        }
    }
    for (int r = 0; r < t->nrows; r++) {
        if (!on_list[r])
            return CHECK_FAIL("row %d is on no list", r);
        if (t->nfree[r] != t->ncols - popcount64(t->taken[r]))
            return CHECK_FAIL("row %d: nfree %d but %d columns taken", r, t->nfree[r], popcount64(t->taken[r]));
        if (t->ncols < 64 && t->taken[r] >> t->ncols)
            return CHECK_FAIL("row %d takes columns past %d", r, t->ncols);
        for (int c = 0; c < t->ncols; c++)
            load[c] += (int)(t->taken[r] >> c & 1);
    }
    if (t->nrows > 0 && !t->taken[t->nrows - 1])
        return CHECK_FAIL("the last row %d is unused (the hint is stale)", t->nrows - 1);
    for (int c = 0; c < t->ncols; c++)
        if (load[c] != t->col_load[c])
            return CHECK_FAIL("column %d: load %d but %d entries taken", c, t->col_load[c], load[c]);
    return 0;
}
