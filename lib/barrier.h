/*
 * barrier.h - barriers: a shape (how arrivals are combined) times a wait
 * kind (how a participant waits, wait.h).
 *
 * A struct sl_barrier is a small read-only descriptor shared by all
 * participants; the shape keeps its mutable state in `state`, laid out by
 * the shape so that contended words sit in their own cache lines. Shapes:
 *   central   sense-reversing counter barrier (barrier_central.c)
 * More shapes (tree, combination) are new files defining a struct
 * sl_barrier_shape and a line in barrier.c's table; nothing here changes.
 *
 * Use: process 0 initialises the barrier before sl_run_procs; then each of
 * the n participants calls sl_barrier_wait once per episode. A participant
 * returns from episode e only after all n have called it for episode e, and
 * everything any participant wrote before arriving is visible to all after.
 */
#ifndef SL_BARRIER_H
#define SL_BARRIER_H

#include <stdint.h>
#include "wait.h"

struct sl_barrier;

struct sl_barrier_shape {
    const char *name;
    int  (*init)(struct sl_barrier *b);    /* set b->state; 0 or -1 (no memory) */
    void (*wait)(struct sl_barrier *b);
    void (*destroy)(struct sl_barrier *b);
};

struct sl_barrier {
    const struct sl_barrier_shape *shape;
    void        *state;      /* the shape's */
    uint32_t     n;          /* participants */
    enum sl_wait wait;
};

extern const struct sl_barrier_shape sl_barrier_central;

/* A central barrier; sl_die when out of memory. */
void sl_barrier_init(struct sl_barrier *b, uint32_t n, enum sl_wait wait);
void sl_barrier_init_shape(struct sl_barrier *b, const struct sl_barrier_shape *shape,
                           uint32_t n, enum sl_wait wait);
void sl_barrier_destroy(struct sl_barrier *b);
/* The shape named `name` ("central"), or 0. */
const struct sl_barrier_shape *sl_barrier_shape_find(const char *name);

static inline void
sl_barrier_wait(struct sl_barrier *b)
{
    b->shape->wait(b);
}

#endif
