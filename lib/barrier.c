/*
 * barrier.c - the shape-independent part of barriers (barrier.h): the table
 * of shapes, init and destroy.
 */
#include "schedlab.h"
#include "barrier.h"

static const struct sl_barrier_shape *const shapes[] = {
    &sl_barrier_central,
};

const struct sl_barrier_shape *
sl_barrier_shape_find(const char *name)
{
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (strcmp(shapes[i]->name, name) == 0)
            return shapes[i];
    return 0;
}

void
sl_barrier_init_shape(struct sl_barrier *b, const struct sl_barrier_shape *shape,
                      uint32_t n, enum sl_wait wait)
{
    if (n == 0 || (unsigned)wait >= SL_NWAITS)
        sl_die("barrier_init: bad arguments (n=%u, wait=%d)", n, (int)wait);
    b->shape = shape;
    b->state = 0;
    b->n = n;
    b->wait = wait;
    if (shape->init(b) < 0)
        sl_die("barrier_init: out of memory for a %s barrier of %u", shape->name, n);
}

void
sl_barrier_init(struct sl_barrier *b, uint32_t n, enum sl_wait wait)
{
    sl_barrier_init_shape(b, &sl_barrier_central, n, wait);
}

void
sl_barrier_destroy(struct sl_barrier *b)
{
    b->shape->destroy(b);
    b->state = 0;
}
