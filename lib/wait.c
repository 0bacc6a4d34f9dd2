/*
 * wait.c - the spin and block wait kinds and the table of kinds (wait.h).
 */
#include "schedlab.h"
#include "wait.h"

/* Spin with plain loads; one acquire load once the word has changed pairs
   with the changer's release store (it reads that store or a later one). */
static void
spin_wait(const uint32_t *word, uint32_t old)
{
    while (__atomic_load_n(word, __ATOMIC_RELAXED) == old)
        sl_cpu_relax();
    (void)__atomic_load_n(word, __ATOMIC_ACQUIRE);
}

static void
spin_wake(const uint32_t *word)
{
    (void)word;          /* spinners see the store by themselves */
}

/* The futex re-checks *word == old atomically with going to sleep, so a
   change made between our load and the call is never missed. */
static void
block_wait(const uint32_t *word, uint32_t old)
{
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == old)
        sl_futex_wait(word, old, 0);
}

static void
block_wake(const uint32_t *word)
{
    sl_futex_wake(word, SL_WAKE_ALL);
}

static const struct sl_waitops spin_ops = { "spin", spin_wait, spin_wake };
static const struct sl_waitops block_ops = { "block", block_wait, block_wake };

const struct sl_waitops *const sl_waits[SL_NWAITS] = {
    [SL_WAIT_SPIN] = &spin_ops,
    [SL_WAIT_BLOCK] = &block_ops,
};

int
sl_wait_parse(const char *name)
{
    for (int k = 0; k < SL_NWAITS; k++)
        if (strcmp(sl_waits[k]->name, name) == 0)
            return k;
    return -1;
}

enum sl_wait
sl_wait_from_arg(const char *key)
{
    const char *v = sl_arg_str(key);
    int k = sl_wait_parse(v);

    if (k < 0)
        sl_die("%s=%s is not a wait kind this library has", key, v);
    return (enum sl_wait)k;
}
