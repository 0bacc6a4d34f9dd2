/*
 * deque.c - the ABP work-stealing deque (deque.h), with C11 atomics.
 *
 * Memory orders, and why each one is needed. "Visible" below means: made
 * visible by a happens-before edge in the C11 model; on RISC-V (RVWMO) the
 * same edges come from the fences GCC emits (acquire load = ld; fence r,rw.
 * release store = fence rw,w; sd. seq_cst fence = fence rw,rw. CAS = an
 * lr.d.aqrl / sc.d.rl loop); on x86 (TSO) everything except the seq_cst
 * fence (mfence) and the CAS (lock cmpxchg) is a plain mov.
 *
 *  push_bottom   slot[b] = item (relaxed), then bot = b+1 (RELEASE). A thief
 *                that reads this bot (or a later one) with ACQUIRE sees the
 *                item in slot[b] and everything the owner wrote before the
 *                push: for a thread, its descriptor and its saved context.
 *  pop_top       age (ACQUIRE), seq_cst fence F2, bot (ACQUIRE), slot[top]
 *                (relaxed), CAS age {tag,top} -> {tag,top+1} (seq_cst). The
 *                acquire on age pairs with the owner's release of age at a
 *                reset, so a thief that sees the new age also sees bot = 0 and
 *                never the stale bot of the previous epoch. The slot is read
 *                before the CAS and may be stale (the owner reset and pushed
 *                again in between); then the tag differs and the CAS fails,
 *                so a stale read is never returned. Slots are atomics only so
 *                that this benign race is not a C data race.
 *  pop_bottom    bot = b (relaxed), seq_cst fence F1, age (relaxed). This is
 *                the store-load case: every memory model here (RVWMO, and
 *                even x86's TSO) lets a later load overtake an earlier store
 *                to another address, i.e. the owner could read an old age
 *                while its smaller bot still sits in its store buffer. Then
 *                owner and thief could both take item b: the owner because it
 *                read top < b, a thief because it read top == b and the old
 *                bot b+1. F1 and F2 are seq_cst fences, which are totally
 *                ordered: if F1 comes first the thief reads bot <= b and sees
 *                no item at b; if F2 comes first the owner's age load sees
 *                every age the thief read, so it cannot read a top below the
 *                one the thief acts on. When one item is left (b == top) both
 *                sides CAS the same age word and exactly one wins. A release
 *                store/acquire load pair cannot give this ordering; an
 *                acquire-release fence (fence.tso-like) cannot either.
 *  peek_bottom   (deque.h) bot and slot[bot-1], both relaxed, no fence: the
 *                owner reads what only it writes. What it returns may be
 *                stolen meanwhile; only pop_bottom (with F1) decides that.
 *  The owner's path thus has exactly two ordering points: the release of
 *  bot in push (no full fence: a push needs no store-load order, because
 *  a thief that reads the old bot just sees one item fewer, which is a
 *  legal linearization) and F1 in pop. Neither can go: without the release
 *  a thief may take a slot or descriptor not yet written, and without F1
 *  an item is taken twice, as above (Cilk-5's THE protocol keeps the same
 *  fence in its pop for the same reason).
 *  reset         bot = 0 (relaxed), then age = {tag+1, 0} by a RELEASE store
 *                or by the seq_cst CAS (which releases too): whoever reads
 *                the new age reads bot 0 or newer.
 */
#include "schedlab.h"
#include "threads/deque.h"

/* The accesses (SL_DQ_LOAD_ACQ, SL_DQ_STORE_REL, ...) are in deque.h, whose
   inline fast paths use them too. */

void sl_deque_init(struct sl_deque *d, void *mem, uint32_t cap)
{
    atomic_init(&d->age, 0);
    atomic_init(&d->bot, 0);
    d->cap = cap;
    d->slot = mem;
    for (uint32_t i = 0; i < cap; i++)
        atomic_init(&d->slot[i], NULL);
}

/* sl_deque_push_bottom's rare end (deque.h): bot == cap. Full by index. If
   thieves took everything (top == bot), reset the way pop_bottom does on
   empty: a thief with an old {tag, top} fails its CAS, one that reads the
   new age reads bot 0. */
int sl_deque_push_full(struct sl_deque *d, void *item)
{
    uint64_t a = SL_DQ_LOAD_ACQ(&d->age);

    if (SL_DQ_TOP(a) != d->cap)
        return -1;
    SL_DQ_STORE_RLX(&d->bot, 0);
    SL_DQ_STORE_REL(&d->age, SL_DQ_AGE(SL_DQ_TAG(a) + 1, 0));
    SL_DQ_STORE_RLX(&d->slot[0], item);
    SL_DQ_STORE_REL(&d->bot, 1);
    return 0;
}

void *sl_deque_pop_bottom(struct sl_deque *d)
{
    uint32_t b = atomic_load_explicit(&d->bot, memory_order_relaxed);
    uint64_t old, fresh;
    void *item;

    if (b == 0)
        return NULL;
    b--;
    SL_DQ_STORE_RLX(&d->bot, b);
    atomic_thread_fence(memory_order_seq_cst); /* F1 */
    sl_race_point(SL_RACE_READY);              /* a thief may take the item at b here */
    item = atomic_load_explicit(&d->slot[b], memory_order_relaxed);
    old = atomic_load_explicit(&d->age, memory_order_relaxed);
    if (b > SL_DQ_TOP(old))
        return item; /* more than one item: no thief can reach b */
    /* b <= top: at most the one item at b is left (b == top), else none. */
    SL_DQ_STORE_RLX(&d->bot, 0);
    fresh = SL_DQ_AGE(SL_DQ_TAG(old) + 1, 0);
    if (b == SL_DQ_TOP(old) &&
        atomic_compare_exchange_strong_explicit(&d->age, &old, fresh, memory_order_seq_cst, memory_order_relaxed))
        return item;                 /* won the race for the last item */
    SL_DQ_STORE_REL(&d->age, fresh); /* a thief won: just reset */
    return NULL;
}

enum sl_steal sl_deque_pop_top(struct sl_deque *d, void **item)
{
    uint64_t old = SL_DQ_LOAD_ACQ(&d->age);
    uint32_t b;
    void *it;

    atomic_thread_fence(memory_order_seq_cst); /* F2 */
    b = SL_DQ_LOAD_ACQ(&d->bot);
    if (b <= SL_DQ_TOP(old))
        return SL_STEAL_EMPTY;
    it = atomic_load_explicit(&d->slot[SL_DQ_TOP(old)], memory_order_relaxed);
    sl_race_point(SL_RACE_READY); /* the owner may pop it, or another thief steal it, here */
    if (!atomic_compare_exchange_strong_explicit(&d->age, &old, SL_DQ_AGE(SL_DQ_TAG(old), SL_DQ_TOP(old) + 1),
                                                 memory_order_seq_cst, memory_order_relaxed))
        return SL_STEAL_ABORT;
    *item = it;
    return SL_STEAL_OK;
}

uint32_t sl_deque_size(struct sl_deque *d)
{
    uint64_t a = atomic_load_explicit(&d->age, memory_order_relaxed);
    uint32_t b = atomic_load_explicit(&d->bot, memory_order_relaxed);

    return b > SL_DQ_TOP(a) ? b - SL_DQ_TOP(a) : 0;
}
