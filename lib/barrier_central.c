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
 *            (release); wake the waiters.
 *
 * Invariants. episode cannot change between a participant's read of it and
 * its increment of count (the episode needs this participant's arrival to
 * end), so every arrival in episode e reads e. The last arriver resets
 * count before it publishes e + 1, and nobody touches count for episode
 * e + 1 before seeing e + 1, so the reset never loses an arrival. The
 * increments form one release sequence ending in the last arriver's acq_rel
 * RMW, and the release store of episode passes all of it on to the waiters.
 * count and episode live in separate cache lines: arrivals hammer one,
 * spinners read the other.
 */
#include "schedlab.h"
#include "barrier.h"

#define LINE 64

struct central {
    uint32_t count __attribute__((aligned(LINE)));
    uint32_t episode __attribute__((aligned(LINE)));
    void    *mem;       /* what sl_malloc returned (state is aligned inside) */
};

static int
central_init(struct sl_barrier *b)
{
    char *mem = sl_malloc(sizeof(struct central) + LINE);
    struct central *c;

    if (!mem)
        return -1;
    c = (struct central *)(((uintptr_t)mem + LINE - 1) & ~(uintptr_t)(LINE - 1));
    c->count = 0;
    c->episode = 0;
    c->mem = mem;
    b->state = c;
    return 0;
}

static void
central_wait(struct sl_barrier *b)
{
    struct central *c = b->state;
    uint32_t e = __atomic_load_n(&c->episode, __ATOMIC_ACQUIRE);

    if (__atomic_add_fetch(&c->count, 1, __ATOMIC_ACQ_REL) < b->n) {
        sl_wait_ne(&c->episode, e, b->wait);
        return;
    }
    __atomic_store_n(&c->count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->episode, e + 1, __ATOMIC_RELEASE);
    sl_wait_wake(&c->episode, b->wait);
}

static void
central_destroy(struct sl_barrier *b)
{
    struct central *c = b->state;

    if (c)
        sl_free(c->mem);
}

const struct sl_barrier_shape sl_barrier_central = {
    .name = "central",
    .init = central_init,
    .wait = central_wait,
    .destroy = central_destroy,
};
