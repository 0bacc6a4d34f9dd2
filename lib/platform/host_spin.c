/*
 * host_spin.c - the host backend's crowding estimate (host_spin.h): pure logic, no system calls, so
 * tests/host/test_host_spin.c checks it as it is.
 *
 * Invariant: runnable = ups - downs, where every process does one up when it starts, one down when it
 * exits, and a down/up pair around each futex wait; so it never underflows while the backend keeps to
 * that (the count wraps to a huge value otherwise, which would read as crowded: a wrong but safe answer,
 * since a crowded waiter only yields where it would have paused). Updates are relaxed atomics: the
 * estimate is read in spin loops, where a stale value costs at most one pause or one yield.
 */
#ifndef SL_TARGET_KERNEL

#include "platform/host_spin.h"

uint32_t host_crowd_cpus(int mask_ok, int nset, long online)
{
    long n = mask_ok ? nset : online;

    return n < 1 ? 1 : n > 0xffff ? 0xffff : (uint32_t)n;
}

void host_crowd_init(struct host_crowd *c, uint32_t cpus)
{
    __atomic_store_n(&c->cpus, cpus < 1 ? 1 : cpus, __ATOMIC_RELAXED);
}

void host_crowd_up(struct host_crowd *c) { __atomic_add_fetch(&c->runnable, 1, __ATOMIC_RELAXED); }

void host_crowd_down(struct host_crowd *c) { __atomic_sub_fetch(&c->runnable, 1, __ATOMIC_RELAXED); }

int host_crowded(const struct host_crowd *c)
{
    uint32_t cpus = __atomic_load_n(&c->cpus, __ATOMIC_RELAXED);

    return __atomic_load_n(&c->runnable, __ATOMIC_RELAXED) > (cpus ? cpus : 1);
}

#endif
