/*
 * barrier.c - the shape-independent part of barriers (barrier.h): the table
 * of shapes, init and destroy, and the helpers the shapes share
 * (barrier_impl.h).
 */
#include "schedlab.h"
#include "barriers/barrier_impl.h"
#include "base/syncstat.h"

static const struct sl_barrier_shape *const shapes[] = {
    &sl_barrier_central,
    &sl_barrier_tree,
    &sl_barrier_combination,
};

const struct sl_barrier_shape *sl_barrier_shape_find(const char *name)
{
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (strcmp(shapes[i]->name, name) == 0)
            return shapes[i];
    return 0;
}

const struct sl_barrier_shape *sl_barrier_shape_at(unsigned i)
{
    return i < sizeof shapes / sizeof shapes[0] ? shapes[i] : 0;
}

/* ---- the counting shapes (sync statistics: base/syncstat.h) ----
   Each shape of the table with its counted wait (the shape's SL_BARRIER_COUNTED: every arrival is one
   episode in the arriving process's record). Built by sl_barrier_stats_start (process 0, at start-up) only
   where the job publishes; a barrier made after that with a table shape gets the counting one. Elsewhere
   counted[] stays empty and a barrier's wait is the shape's own, as it was. */
#define NSHAPES (sizeof shapes / sizeof shapes[0])
static struct sl_barrier_shape counted[NSHAPES];

void sl_barrier_stats_start(void)
{
    if (!sl_sync_published() || counted[0].wait)
        return;
    for (unsigned i = 0; i < NSHAPES; i++) {
        if (!shapes[i]->counted_wait)
            sl_die("barrier shape %s has no counted wait (barrier_impl.h: SL_BARRIER_COUNTED)", shapes[i]->name);
        counted[i] = *shapes[i];
        counted[i].wait = shapes[i]->counted_wait;
    }
}

static const struct sl_barrier_shape *counting(const struct sl_barrier_shape *shape)
{
    for (unsigned i = 0; i < NSHAPES && counted[i].wait; i++)
        if (shape == shapes[i])
            return &counted[i];
    return shape;
}

void sl_barrier_init_shape(struct sl_barrier *b, const struct sl_barrier_shape *shape, uint32_t n, enum sl_wait wait)
{
    if (n == 0 || n > SL_WAIT_VALUE / 8 || (unsigned)wait >= SL_NWAITS || !shape)
        sl_die("barrier_init: bad arguments (n=%u, wait=%d)", n, (int)wait);
    shape = counting(shape);
    b->shape = shape;
    b->state = 0;
    b->n = n;
    b->wait = wait;
    if (shape->init(b) < 0)
        sl_die("barrier_init: out of memory for a %s barrier of %u", shape->name, n);
}

void sl_barrier_init(struct sl_barrier *b, uint32_t n, enum sl_wait wait)
{
    sl_barrier_init_shape(b, &sl_barrier_central, n, wait);
}

void sl_barrier_init_args(struct sl_barrier *b, uint32_t n, const char *shape_key, const char *wait_key)
{
    const char *name = sl_arg_str(shape_key);
    const struct sl_barrier_shape *s = sl_barrier_shape_find(name);

    if (!s)
        sl_die("%s=%s is not a barrier shape this library has", shape_key, name);
    sl_barrier_init_shape(b, s, n, sl_wait_from_arg(wait_key));
}

void sl_barrier_destroy(struct sl_barrier *b)
{
    b->shape->destroy(b);
    b->state = 0;
}

/* ---- shared by the shapes ---- */

void *sl_bar_alloc(size_t bytes, void **raw)
{
    char *mem = sl_calloc(1, bytes + SL_LINE);

    *raw = mem;
    if (!mem)
        return 0;
    return (void *)(((uintptr_t)mem + SL_LINE - 1) & ~(uintptr_t)(SL_LINE - 1));
}

void sl_bpart_init(struct sl_bpart *parts, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++) {
        parts[j].mark = 0;
        parts[j].proc = j;
    }
}

int sl_bpart_running(const struct sl_bpart *parts, uint32_t lo, uint32_t hi, uint32_t self, uint32_t next)
{
    for (uint32_t j = lo; j < hi; j++)
        if (j != self && __atomic_load_n(&parts[j].mark, __ATOMIC_RELAXED) != next &&
            !sl_proc_running(__atomic_load_n(&parts[j].proc, __ATOMIC_RELAXED)))
            return 0;
    return 1;
}
