/*
 * deque.h - the Arora-Blumofe-Plaxton non-blocking work-stealing deque.
 *
 * One deque per process holds that process's ready threads (uthread.h);
 * it works for any non-NULL pointers. Two kinds of callers:
 *   owner   the one process that pushes: sl_deque_push_bottom and
 *           sl_deque_pop_bottom, at the bottom, LIFO. Never concurrent with
 *           itself (only the owner calls them, one at a time).
 *   thief   any process, the owner included: sl_deque_pop_top takes the
 *           oldest item, FIFO; thieves race each other and the owner with
 *           one compare-and-swap, and the loser is told so (ABORT), never
 *           blocked. No locks: a thief or an owner preempted at any point
 *           never stops the others (non-blocking, not wait-free).
 *
 * State (ABP 1998): an array slot[0..cap), an index `bot` (next free slot,
 * written only by the owner) and one 64-bit word `age` = {tag, top}: top is
 * the index of the oldest item, tag counts resets. Items are slot[top..bot).
 * Only compare-and-swap changes `age` while items remain; when the owner
 * finds the deque empty it resets bot = top = 0 and bumps the tag, so a
 * thief that read the old {tag, top} before the reset fails its CAS even if
 * top happens to hold the same number again (the ABA problem). The tag is
 * 32 bits: a thief would have to stall across 2^32 resets to be fooled.
 *
 * Bound: the array is not circular. bot counts the owner's pushes minus its
 * pops since the deque was last found empty; steals free slots only at the
 * top. So a push fails when bot == cap, even if thieves have taken most
 * items, unless every item has been taken (then the push resets the deque
 * first). A failed push returns -1; callers must treat it as fatal (the
 * thread library stops the job with an error naming the bound). Programs
 * that spawn divide-and-conquer style (knary) keep bot near depth x degree;
 * one thread spawning thousands in a loop does not fit.
 *
 * The memory-order argument is in deque.c.
 */
#ifndef SL_DEQUE_H
#define SL_DEQUE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct sl_deque {
    _Atomic uint64_t age;                      /* {tag:32 | top:32}; CAS by thieves, reset by the owner */
    char _line0[64 - sizeof(uint64_t)];
    _Atomic uint32_t bot;                      /* next free slot; stored by the owner only */
    uint32_t cap;
    _Atomic(void *) *slot;                     /* cap entries, caller's memory */
    char _line1[64 - 2 * sizeof(uint32_t) - sizeof(void *)];
} __attribute__((aligned(64)));

/* Bytes of slot memory sl_deque_init needs for `cap` entries. */
#define SL_DEQUE_BYTES(cap) ((size_t)(cap) * sizeof(_Atomic(void *)))

enum sl_steal {
    SL_STEAL_OK,      /* *item is the stolen item */
    SL_STEAL_EMPTY,   /* nothing to steal when we looked */
    SL_STEAL_ABORT,   /* lost a race with another thief or the owner; try elsewhere or again */
};

/* mem: SL_DEQUE_BYTES(cap) bytes, valid until the deque is no longer used. */
void sl_deque_init(struct sl_deque *d, void *mem, uint32_t cap);

/* The accesses of the argument above. With C11 atomics everywhere but on
   RISC-V with GCC before 13, whose atomics are stronger than the mapping
   (RISC-V ISA manual, table A.6) asks: every atomic store there is an AMO
   (amoswap) and every acquire load is followed by a full `fence`, which
   the owner's push would pay twice and a thief's steal three times. There
   the macros emit the mapping itself: a relaxed store is a plain aligned
   store (single-copy atomic in RVWMO), a release store is `fence rw,w`
   then that store, an acquire load is the load then `fence r,rw`. The
   orders are the same, so the argument above holds unchanged; only the
   seq_cst fences F1/F2 and the CASes stay full. Elsewhere (the host, and
   TSan, which must see the atomics) they are the C11 operations. */
#if defined(__riscv) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#define SL_DQ_RV_PLAIN(p)     (*(volatile __typeof__(atomic_load_explicit((p), memory_order_relaxed)) *)(p))
#define SL_DQ_STORE_RLX(p, v) ((void)(SL_DQ_RV_PLAIN(p) = (v)))
#define SL_DQ_STORE_REL(p, v)                              \
    __extension__({                                  \
        __asm__ volatile("fence rw,w" ::: "memory"); \
        SL_DQ_STORE_RLX(p, v);                             \
    })
#define SL_DQ_LOAD_ACQ(p)                                                                   \
    __extension__({                                                                   \
        __typeof__(atomic_load_explicit((p), memory_order_relaxed)) v_ = SL_DQ_RV_PLAIN(p); \
        __asm__ volatile("fence r,rw" ::: "memory");                                  \
        v_;                                                                           \
    })
#else
#define SL_DQ_STORE_RLX(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define SL_DQ_STORE_REL(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define SL_DQ_LOAD_ACQ(p)     atomic_load_explicit((p), memory_order_acquire)
#endif

#define SL_DQ_AGE(tag, top) (((uint64_t)(tag) << 32) | (uint64_t)(top))
#define SL_DQ_TOP(a)        ((uint32_t)(a))
#define SL_DQ_TAG(a)        ((uint32_t)((a) >> 32))

int   sl_deque_push_full(struct sl_deque *d, void *item);

/* Owner only. item != NULL. 0, or -1 when full (see "Bound" above). The
   common case inline (it is on every spawn's path): slot[b] = item, then
   bot = b+1 by a release (deque.c). */
static inline int sl_deque_push_bottom(struct sl_deque *d, void *item)
{
    uint32_t b = atomic_load_explicit(&d->bot, memory_order_relaxed);

    if (__builtin_expect(b == d->cap, 0))
        return sl_deque_push_full(d, item);
    SL_DQ_STORE_RLX(&d->slot[b], item);
    SL_DQ_STORE_REL(&d->bot, b + 1);
    return 0;
}

/* Owner only. The newest item, or NULL when empty. (Out of line: GCC's
   TSan refuses F1, a seq_cst fence, in every file that inlines it.) */
void *sl_deque_pop_bottom(struct sl_deque *d);
/* Owner only. The item sl_deque_pop_bottom would return unless a thief
   takes it first, or NULL when empty; changes nothing, no fence (bot and
   the slots below it are written by the owner only). */
static inline void *sl_deque_peek_bottom(struct sl_deque *d)
{
    uint32_t b = atomic_load_explicit(&d->bot, memory_order_relaxed);

    return b ? atomic_load_explicit(&d->slot[b - 1], memory_order_relaxed) : NULL;
}
/* Anyone. */
enum sl_steal sl_deque_pop_top(struct sl_deque *d, void **item);
/* Items present at some recent instant (a hint for thieves, never exact). */
uint32_t sl_deque_size(struct sl_deque *d);

#endif
