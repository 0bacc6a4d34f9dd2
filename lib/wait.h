/*
 * wait.h - how a process waits for a shared 32-bit word to change.
 *
 * Every synchronization object in lib/ (barrier shapes, gauss's pivot-row
 * flags, later join counters) reduces waiting to one operation: "return
 * once *word != old", paired with "I changed *word: wake the waiters". A
 * wait kind is a pair of functions doing that; objects take the kind as a
 * parameter and never care how it is done:
 *   spin   re-read the word until it changes (the waiter keeps its hart)
 *   block  futex-sleep while the word still holds old; the changer wakes all
 * A new kind (two-phase, schedule-aware) is one new file defining a struct
 * sl_waitops, one enum value and one table entry in wait.c.
 *
 * Memory order contract: the changer stores the word with release (or a
 * stronger RMW) before calling wake; wait returns with acquire ordering, so
 * everything the changer wrote before the store is visible after wait.
 */
#ifndef SL_WAIT_H
#define SL_WAIT_H

#include <stdint.h>

enum sl_wait {
    SL_WAIT_SPIN,
    SL_WAIT_BLOCK,
    SL_NWAITS
};

struct sl_waitops {
    const char *name;                                   /* as in app keys */
    void (*wait)(const uint32_t *word, uint32_t old);   /* until *word != old */
    void (*wake)(const uint32_t *word);                 /* after changing *word */
};

extern const struct sl_waitops *const sl_waits[SL_NWAITS];

/* The kind named `name`, or -1. */
int sl_wait_parse(const char *name);
/* The kind named by the app key `key` (e.g. barrier=spin); sl_die if none. */
enum sl_wait sl_wait_from_arg(const char *key);

static inline void
sl_wait_ne(const uint32_t *word, uint32_t old, enum sl_wait kind)
{
    sl_waits[kind]->wait(word, old);
}

static inline void
sl_wait_wake(const uint32_t *word, enum sl_wait kind)
{
    sl_waits[kind]->wake(word);
}

#endif
