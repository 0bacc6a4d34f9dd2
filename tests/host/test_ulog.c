/* test_ulog.c - the pure part of the library's event log (lib/base/eventlog.h, abi.h "the library's event log").
 *
 *   put        records land at n mod capacity with every field, n counts every record ever written
 *   wrap       past the capacity the oldest are overwritten: the last `cap` records are the newest
 *   bounds     nothing is written outside the header page and the cap records (ASan: the buffer is exact)
 *   off        sl_ulog with no process (a plain host thread) or no log does nothing
 */
#include <stdlib.h>
#include <string.h>
#include "base/eventlog.h"
#include "check.h"

/* The host backend's sl_plat_proc/ticks, as a plain test thread sees them: no process. */
static struct sl_proc *cur;
struct sl_proc *sl_plat_proc(void) { return cur; }
uint64_t sl_plat_ticks(void) { return 42; }

static struct sl_ulog *new_log(uint32_t cap)
{
    struct sl_ulog *h = calloc(1, SL_ULOG_HDR + cap * sizeof(struct sl_ulog_rec));
    return h;
}

static const struct sl_ulog_rec *rec(const struct sl_ulog *h, uint64_t slot)
{
    return (const struct sl_ulog_rec *)((const char *)h + SL_ULOG_HDR) + slot;
}

static void test_put_and_wrap(uint32_t cap)
{
    struct sl_ulog *h = new_log(cap);
    uint64_t total = 3 * (uint64_t)cap + 5;

    for (uint64_t i = 0; i < total; i++) {
        sl_ulog_put(h, cap - 1, 1000 + i, SL_UL_GRAB, (int32_t)i - 7, (uint32_t)(i & 1));
        CHECK(h->n == i + 1);
        const struct sl_ulog_rec *r = rec(h, i & (cap - 1));
        CHECK(r->t == 1000 + i && r->arg == (int32_t)i - 7 && r->ev == SL_UL_GRAB && r->aux == (i & 1));
    }
    /* the newest cap records, each in its slot */
    for (uint64_t k = total - cap; k < total; k++)
        CHECK(rec(h, k & (cap - 1))->t == 1000 + k);
    free(h);
}

static void test_off(void)
{
    struct sl_proc p = { .index = 0 };

    cur = 0;
    sl_ulog(SL_UL_MARK, 1, 0); /* no process: nothing, no crash */
    cur = &p;
    sl_ulog(SL_UL_MARK, 1, 0); /* a process without a log */
    struct sl_ulog *h = new_log(4);
    p.ulog = h;
    p.ulog_mask = 3;
    sl_ulog(SL_UL_MARK, 9, 2);
    CHECK(h->n == 1 && rec(h, 0)->t == 42 && rec(h, 0)->arg == 9 && rec(h, 0)->aux == 2 && rec(h, 0)->ev == SL_UL_MARK);
    cur = 0;
    free(h);
}

int main(void)
{
    CHECK(sizeof(struct sl_ulog_rec) == 16);
    CHECK(SL_ULOG_VA + (uint64_t)SL_MAX_PROCS * SL_ULOG_STRIDE <= SL_HEAP_VA);
    for (uint32_t cap = 1; cap <= 4096; cap *= 4)
        test_put_and_wrap(cap);
    test_off();
    return check_done("test_ulog");
}
