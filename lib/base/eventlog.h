/*
 * eventlog.h - recording the library's own events into the process's event log (abi.h, "the library's event
 * log"), so they appear in the trace beside the kernel's, on the same clock.
 *
 * The log exists only with trace=on (the kernel maps it and sets info->ulog_cap); otherwise sl_ulog costs
 * a load of the process's log pointer and a branch. A record is a clock read (sl_ulog_clock), four stores
 * and the count's release store; only the process itself writes its log, so there is no lock and no atomic RMW.
 * On the host there is no log (the pointer stays NULL); sl_ulog_put is the pure part, tested there.
 */
#ifndef SL_EVENTLOG_H
#define SL_EVENTLOG_H

#include <stdint.h>
#include "schedlab/abi.h"
#include "platform/platform.h"

/* Append one record to log h of capacity mask+1 (a power of two): the oldest is overwritten when full. */
static inline void sl_ulog_put(struct sl_ulog *h, uint32_t mask, uint64_t t, enum sl_ulog_ev ev, int32_t arg,
                               uint32_t aux)
{
    uint64_t n = h->n;
    struct sl_ulog_rec *r = (struct sl_ulog_rec *)((char *)h + SL_ULOG_HDR) + (n & mask);

    r->t = t;
    r->arg = arg;
    r->ev = (uint16_t)ev;
    r->aux = (uint16_t)aux;
    __atomic_store_n(&h->n, n + 1, __ATOMIC_RELEASE); /* the dump reads only published records */
}

/* The clock of a record: `cycle` where the kernel said it runs in step with `time` on every hart (half
   the cost on QEMU; the kernel converts at the dump: kernel/ulog.h), else `time`. */
static inline uint64_t sl_ulog_clock(const struct sl_proc *p)
{
#ifdef SL_TARGET_KERNEL
    if (p->ulog_cycles) {
        uint64_t c;
        __asm__ volatile("rdcycle %0" : "=r"(c));
        return c;
    }
#else
    (void)p;
#endif
    return sl_plat_ticks();
}

/* Record ev for the calling process, now, if it has a log. */
static inline void sl_ulog(enum sl_ulog_ev ev, int32_t arg, uint32_t aux)
{
    struct sl_proc *p = sl_plat_proc();

#ifdef SL_TARGET_KERNEL
    if (__builtin_expect(p->ulog != 0, 0))                /* tp is set before any library code runs */
#else
    if (__builtin_expect(p != 0 && p->ulog != 0, 0))      /* host tests may call in from plain threads */
#endif
        sl_ulog_put(p->ulog, p->ulog_mask, sl_ulog_clock(p), ev, arg, aux);
}

#endif
