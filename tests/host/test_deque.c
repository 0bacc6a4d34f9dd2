/* Unit tests of the ABP deque (lib/threads/deque.c): single-thread semantics, the capacity bound and its reset,
   and a stress test where one owner pushes and pops while several thieves steal, checking that every
   item is taken exactly once, that each thief sees items in push order, and that the owner's pops are
   LIFO. Built twice by tests/host/host.mk: under ASan/UBSan and under TSan. Items carry a payload in
   plain memory, written by the owner before the push and read by whoever takes the item, as a thread
   descriptor is: TSan reports a race unless push releases and steal/pop acquire (TSan does not model
   the seq_cst fences; the duplicate/loss checks cover those). Pthreads play the processes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "threads/deque.h"

#if defined(__SANITIZE_THREAD__)
#define STRESS_ITEMS 600000    /* TSan is ~10x slower; keep each build well under 5 s */
#else
#define STRESS_ITEMS 3000000
#endif
#define THIEVES 3

static void *slots[1024];

/* items are small integers cast to pointers; 0 is reserved (NULL = empty) */
#define IT(i) ((void *)(uintptr_t)(i))
#define NUM(p) ((uintptr_t)(p))
#define PAYLOAD(i) ((uint32_t)(i) * 2654435761u + 1)

static void test_empty(void)
{
    struct sl_deque d;
    void *x = IT(99);

    sl_deque_init(&d, slots, 8);
    CHECK(sl_deque_pop_bottom(&d) == NULL);
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_EMPTY);
    CHECK(x == IT(99));                        /* untouched when nothing was stolen */
    CHECK(sl_deque_size(&d) == 0);
}

static void test_lifo_fifo(void)
{
    struct sl_deque d;
    void *x;
    int ok = 1;

    sl_deque_init(&d, slots, 16);
    for (int i = 1; i <= 10; i++)
        CHECK(sl_deque_push_bottom(&d, IT(i)) == 0);
    CHECK(sl_deque_size(&d) == 10);
    for (int i = 10; i >= 1; i--)              /* the owner: newest first */
        ok &= sl_deque_pop_bottom(&d) == IT(i);
    CHECK(ok);
    CHECK(sl_deque_pop_bottom(&d) == NULL);

    for (int i = 1; i <= 10; i++)
        CHECK(sl_deque_push_bottom(&d, IT(i)) == 0);
    for (int i = 1; i <= 10; i++)              /* thieves: oldest first */
        ok &= sl_deque_pop_top(&d, &x) == SL_STEAL_OK && x == IT(i);
    CHECK(ok);
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_EMPTY);
    CHECK(sl_deque_pop_bottom(&d) == NULL);    /* finds it empty: resets */

    /* both ends at once: a b c -> steal a, pop c, pop b, empty */
    CHECK(sl_deque_push_bottom(&d, IT(1)) == 0);
    CHECK(sl_deque_push_bottom(&d, IT(2)) == 0);
    CHECK(sl_deque_push_bottom(&d, IT(3)) == 0);
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_OK && x == IT(1));
    CHECK(sl_deque_pop_bottom(&d) == IT(3));
    CHECK(sl_deque_pop_bottom(&d) == IT(2));
    CHECK(sl_deque_pop_bottom(&d) == NULL);
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_EMPTY);

    /* the last item goes to exactly one side */
    CHECK(sl_deque_push_bottom(&d, IT(7)) == 0);
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_OK && x == IT(7));
    CHECK(sl_deque_pop_bottom(&d) == NULL);
    CHECK(sl_deque_push_bottom(&d, IT(8)) == 0);
    CHECK(sl_deque_pop_bottom(&d) == IT(8));
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_EMPTY);
}

static void test_capacity(void)
{
    struct sl_deque d;
    void *x;
    int ok = 1;

    sl_deque_init(&d, slots, 4);
    for (int i = 1; i <= 4; i++)
        ok &= sl_deque_push_bottom(&d, IT(i)) == 0;
    CHECK(ok);
    CHECK(sl_deque_push_bottom(&d, IT(5)) == -1);      /* full */
    CHECK(sl_deque_pop_bottom(&d) == IT(4));          /* a pop frees a slot at the bottom */
    CHECK(sl_deque_push_bottom(&d, IT(5)) == 0);
    /* steals free slots at the top only; with one item left a push still fails */
    for (int i = 1; i <= 3; i++)
        ok &= sl_deque_pop_top(&d, &x) == SL_STEAL_OK && x == IT(i);
    CHECK(ok);
    CHECK(sl_deque_size(&d) == 1);
    CHECK(sl_deque_push_bottom(&d, IT(6)) == -1);
    /* once thieves took everything, a push resets the deque and succeeds */
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_OK && x == IT(5));
    CHECK(sl_deque_push_bottom(&d, IT(6)) == 0);
    CHECK(sl_deque_size(&d) == 1);
    CHECK(sl_deque_pop_top(&d, &x) == SL_STEAL_OK && x == IT(6));
    CHECK(sl_deque_pop_bottom(&d) == NULL);
    for (int i = 1; i <= 4; i++)                      /* the whole capacity again */
        ok &= sl_deque_push_bottom(&d, IT(i)) == 0;
    CHECK(ok);
}

/* ---- stress: one owner, THIEVES thieves ---- */

struct stress {
    struct sl_deque d;
    _Atomic uint8_t *taken;        /* taken[i]: times item i was returned, by anyone */
    uint32_t *payload;             /* plain memory the owner writes before pushing item i: the taker reads
                                      it, so TSan sees a race unless push releases and pop/steal acquire */
    atomic_int payload_bad;
    atomic_int done;               /* the owner has pushed everything and drained its deque */
    atomic_ulong stolen;
    atomic_int order_bad;          /* a thief saw items out of push order */
    unsigned long popped, pop_order_bad, overflow;
};

static uint64_t rnd(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void *thief(void *arg)
{
    struct stress *s = arg;
    uintptr_t last = 0;
    unsigned long mine = 0;

    for (;;) {
        void *x = NULL;
        enum sl_steal r = sl_deque_pop_top(&s->d, &x);
        if (r == SL_STEAL_OK) {
            if (NUM(x) <= last)
                atomic_fetch_add(&s->order_bad, 1);
            last = NUM(x);
            if (s->payload[NUM(x)] != PAYLOAD(NUM(x)))
                atomic_fetch_add(&s->payload_bad, 1);
            atomic_fetch_add_explicit(&s->taken[NUM(x)], 1, memory_order_relaxed);
            mine++;
        } else if (r == SL_STEAL_EMPTY && atomic_load_explicit(&s->done, memory_order_acquire)) {
            break;
        }
    }
    atomic_fetch_add(&s->stolen, mine);
    return NULL;
}

/* The owner pushes items 1..N in bursts and pops some of them back: short bursts drain the deque
   (resets, last-item races), long ones run into the capacity. Its own pops must come out LIFO
   among the items it still holds, so each pop returns an item newer than anything it pops later
   from the same burst; checked as: a pop never returns an item older than one popped after it
   without a push in between. */
static void owner(struct stress *s)
{
    uint64_t seed = 12345;
    uintptr_t next = 1;

    while (next <= STRESS_ITEMS) {
        unsigned burst = 1 + (unsigned)(rnd(&seed) % (rnd(&seed) % 8 == 0 ? 600 : 4));
        unsigned pops = (unsigned)(rnd(&seed) % (burst + 2));
        uintptr_t prev = UINTPTR_MAX;

        for (unsigned i = 0; i < burst && next <= STRESS_ITEMS; i++) {
            s->payload[next] = PAYLOAD(next);
            if (sl_deque_push_bottom(&s->d, IT(next)) < 0) {
                s->overflow++;
                void *x = sl_deque_pop_bottom(&s->d);     /* make room, as a real owner runs work */
                if (x) {
                    atomic_fetch_add_explicit(&s->taken[NUM(x)], 1, memory_order_relaxed);
                    s->popped++;
                }
                i--;
                continue;
            }
            next++;
        }
        for (unsigned i = 0; i < pops; i++) {
            void *x = sl_deque_pop_bottom(&s->d);
            if (!x)
                break;
            if (NUM(x) >= prev)
                s->pop_order_bad++;
            prev = NUM(x);
            atomic_fetch_add_explicit(&s->taken[NUM(x)], 1, memory_order_relaxed);
            s->popped++;
        }
    }
    for (void *x; (x = sl_deque_pop_bottom(&s->d)) != NULL; ) {
        atomic_fetch_add_explicit(&s->taken[NUM(x)], 1, memory_order_relaxed);
        s->popped++;
    }
    atomic_store_explicit(&s->done, 1, memory_order_release);
}

static void test_stress(void)
{
    static struct stress s;
    pthread_t th[THIEVES];
    static void *big[512];
    unsigned long once = 0;
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    s.taken = calloc(STRESS_ITEMS + 1, 1);
    s.payload = calloc(STRESS_ITEMS + 1, sizeof *s.payload);
    CHECK(s.taken != NULL && s.payload != NULL);
    if (!s.taken || !s.payload)
        return;
    sl_deque_init(&s.d, big, 512);
    for (int i = 0; i < THIEVES; i++)
        pthread_create(&th[i], NULL, thief, &s);
    owner(&s);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
    for (uintptr_t i = 1; i <= STRESS_ITEMS; i++)
        once += s.taken[i] == 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("stress: %d items, %lu stolen by %d thieves, %lu popped by the owner, %lu full pushes, %.2f s\n",
           STRESS_ITEMS, (unsigned long)atomic_load(&s.stolen), THIEVES, s.popped, s.overflow,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    CHECK(once == STRESS_ITEMS);                             /* every item exactly once */
    CHECK(atomic_load(&s.stolen) + s.popped == STRESS_ITEMS);
    CHECK(atomic_load(&s.order_bad) == 0);
    CHECK(atomic_load(&s.payload_bad) == 0);
    CHECK(s.pop_order_bad == 0);
    CHECK(atomic_load(&s.stolen) > 0);                       /* the thieves really competed */
    free((void *)s.taken);
    free(s.payload);
}

int main(void)
{
    test_empty();
    test_lifo_fifo();
    test_capacity();
    test_stress();
    return check_done("test_deque");
}
