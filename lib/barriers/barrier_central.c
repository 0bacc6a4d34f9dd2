/*
 * barrier_central.c - the central sense-reversing barrier.
 *
 * State: `count` of arrivals in the current episode and `episode`, a
 * counter whose parity is the classic global sense. Each participant's
 * local sense is the episode number it reads when it arrives; it stays in a
 * register, so no per-participant word can share a line with anything.
 *
 *   arrive:  e = episode (acquire); if ++count (acq_rel) < n: wait until
 *            episode != e;  else (last): count = 0; episode = e + 1
 *            (release, sl_wait_set: wakes sleepers if any).
 *
 * Invariants. episode cannot change between a participant's read of it and
 * its increment of count (the episode needs this participant's arrival to
 * end), so every arrival in episode e reads e. The last arriver resets
 * count before it publishes e + 1, and nobody touches count for episode
 * e + 1 before seeing e + 1, so the reset never loses an arrival. The
 * increments form one release sequence ending in the last arriver's acq_rel
 * RMW, and the release of episode passes all of it on to the waiters.
 * count and episode live in separate cache lines: arrivals hammer one,
 * spinners read the other. Episode numbers are 31 bits (wait.h) and wrap.
 *
 * Adaptive: a participant marks itself after its increment (its whole duty
 * in the episode); a waiter needs every unmarked participant, which
 * includes the last arriver until it has published.
 */
#include "schedlab.h"
#include "barriers/barrier_impl.h"

struct central {
    uint32_t count __attribute__((aligned(SL_LINE)));
    uint32_t episode __attribute__((aligned(SL_LINE)));
    void *mem; /* what sl_calloc returned (state is aligned inside) */
    struct sl_bpart parts[];
};

struct central_wf {
    struct sl_waitfor wf;
    struct central *c;
    uint32_t n, self, next;
};

static int central_running(const struct sl_waitfor *wf)
{
    const struct central_wf *w = (const struct central_wf *)wf;
    return sl_bpart_running(w->c->parts, 0, w->n, w->self, w->next);
}

static int central_init(struct sl_barrier *b)
{
    void *mem;
    struct central *c = sl_bar_alloc(sizeof(struct central) + b->n * sizeof(struct sl_bpart), &mem);

    if (!c)
        return -1;
    c->mem = mem;
    sl_bpart_init(c->parts, b->n);
    b->state = c;
    return 0;
}

static void central_wait(struct sl_barrier *b, uint32_t id)
{
    struct central *c = b->state;
    uint32_t e = sl_wait_value(&c->episode);

    if (b->wait == SL_WAIT_ADAPTIVE && id < b->n) {
        struct central_wf w = { { central_running }, c, b->n, id, (e + 1) & SL_WAIT_VALUE };

        sl_bpart_enter(&c->parts[id]);
        if (__atomic_add_fetch(&c->count, 1, __ATOMIC_ACQ_REL) < b->n) {
            sl_bpart_mark(&c->parts[id], w.next);
            sl_wait_ne_for(&c->episode, e, b->wait, &w.wf);
            return;
        }
    } else if (__atomic_add_fetch(&c->count, 1, __ATOMIC_ACQ_REL) < b->n) {
        sl_wait_ne(&c->episode, e, b->wait);
        return;
    }
    __atomic_store_n(&c->count, 0, __ATOMIC_RELAXED);
    sl_wait_set(&c->episode, e + 1, b->wait);
}

static void central_destroy(struct sl_barrier *b)
{
    struct central *c = b->state;

    if (c)
        sl_free(c->mem);
}

SL_BARRIER_COUNTED(central_wait)

const struct sl_barrier_shape sl_barrier_central = {
    .name = "central",
    .init = central_init,
    .wait = central_wait,
    .counted_wait = central_wait_counted,
    .destroy = central_destroy,
};
