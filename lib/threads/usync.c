/*
 * usync.c - synchronization between user-level threads: join counters
 * (Hood's wait(n)/signal), counting semaphores, and thread-aware waits on a
 * 32-bit word (the primitive behind wait.h's sleeping kinds). A waiting
 * thread parks (uthread.c): its process goes on with other threads, and
 * whoever ends the wait makes it ready again. Outside a thread every wait
 * here polls with kernel yields.
 */
#include "schedlab.h"
#include "threads/uthread_impl.h"

#define NBUCKETS 64 /* word-wait buckets */

struct bucket {
    struct sl_spinlock lock;
    uint32_t nwait; /* threads in the list; changed under the lock, read without it */
    sl_thread_t *head;
} __attribute__((aligned(64)));

static struct bucket buckets[NBUCKETS];

/* Polling wait for callers that are not threads. */
static void poll_pause(unsigned *spins)
{
    if (++*spins % SL_SPIN_BEFORE_YIELD == 0)
        sl_yield();
    else
        sl_cpu_relax();
}

/* ---- join counters ----
   count = signals missing + 1: the waiter's hold. A signaler that does not
   bring count to 0 never touches the counter again. The waiter gives up its
   hold only after writing `waiter`, so the decrement that reaches 0 - the
   last signal, or the waiter's own if every signal came first - is ordered
   after that write (acq_rel RMWs on one word) and knows whom to wake. */

void sl_joincnt_init(struct sl_joincnt *jc, uint32_t n)
{
    jc->waiter = 0;
    __atomic_store_n(&jc->count, n + 1, __ATOMIC_RELEASE);
}

void sl_joincnt_signal(struct sl_joincnt *jc)
{
    if (__atomic_sub_fetch(&jc->count, 1, __ATOMIC_ACQ_REL) == 0) {
        sl_thread_t *w = jc->waiter;
        if (!w)
            sl_uthread_fatal("join counter %p signalled more often than its count", (void *)jc);
        sl_ut_make_ready(w);
    }
}

static int park_joincnt(sl_thread_t *t)
{
    struct sl_joincnt *jc = t->park_obj;

    jc->waiter = t;
    return __atomic_sub_fetch(&jc->count, 1, __ATOMIC_ACQ_REL) == 0;
}

void sl_joincnt_wait(struct sl_joincnt *jc)
{
    sl_thread_t *t;
    unsigned spins = 0;

    if (__atomic_load_n(&jc->count, __ATOMIC_ACQUIRE) == 1)
        return; /* all signals are in and done with jc */
    if ((t = self_thread()) != 0) {
        sl_ut_park(t, park_joincnt, jc, 0); /* back when count reached 0 */
        return;
    }
    while (__atomic_load_n(&jc->count, __ATOMIC_ACQUIRE) != 1)
        poll_pause(&spins);
}

/* ---- semaphores ---- */

void sl_sem_init(struct sl_sem *s, uint32_t count)
{
    s->lock.locked = 0;
    s->count = (int32_t)count;
    s->head = s->tail = 0;
}

static int sem_trydown(struct sl_sem *s)
{
    int ok = 0;

    sl_spin_lock(&s->lock);
    if (s->count > 0) {
        s->count--;
        ok = 1;
    }
    sl_spin_unlock(&s->lock);
    return ok;
}

static int park_sem(sl_thread_t *t)
{
    struct sl_sem *s = t->park_obj;

    sl_spin_lock(&s->lock);
    if (s->count > 0) { /* a V came in between */
        s->count--;
        sl_spin_unlock(&s->lock);
        return 1;
    }
    ut_fifo_push(&s->head, &s->tail, t);
    sl_spin_unlock(&s->lock);
    return 0;
}

void sl_sem_p(struct sl_sem *s)
{
    sl_thread_t *t;
    unsigned spins = 0;

    if (sem_trydown(s))
        return;
    if ((t = self_thread()) != 0) {
        sl_ut_park(t, park_sem, s, 0); /* back with a unit handed over by V */
        return;
    }
    while (!sem_trydown(s))
        poll_pause(&spins);
}

void sl_sem_v(struct sl_sem *s)
{
    sl_thread_t *w;

    sl_spin_lock(&s->lock);
    if ((w = s->head) != 0) {
        s->head = w->next;
        if (!s->head)
            s->tail = 0;
    } else {
        s->count++;
    }
    sl_spin_unlock(&s->lock);
    if (w)
        sl_ut_make_ready(w);
}

/* ---- thread-aware word waits ----
   A waiter enters its word's bucket (an RMW on the bucket's count, under
   the bucket lock), then re-reads the word; a waker changes the word, then
   reads the count with an RMW too (+0). RMWs of one word are totally
   ordered: if the waiter's comes first, the waker sees a waiter and takes
   the lock, which the waiter holds until it has decided, so it finds the
   waiter there unless the waiter saw the change and left by itself; if the
   waker's comes first, the waiter's RMW reads it and acquires it, so the
   waiter's re-read sees the new word. (Fences between a plain store and
   load would do the same, but TSan does not understand fences.) */

static struct bucket *bucket_of(const uint32_t *word)
{
    return &buckets[sl_mix64((uint64_t)(uintptr_t)word) % NBUCKETS];
}

static int park_word(sl_thread_t *t)
{
    const uint32_t *word = t->park_obj;
    struct bucket *b = bucket_of(word);
    int changed;

    sl_spin_lock(&b->lock);
    t->next = b->head;
    b->head = t;
    __atomic_add_fetch(&b->nwait, 1, __ATOMIC_ACQ_REL);
    changed = __atomic_load_n(word, __ATOMIC_ACQUIRE) != t->park_old;
    if (changed) {
        b->head = t->next; /* still first: we hold the lock */
        __atomic_sub_fetch(&b->nwait, 1, __ATOMIC_RELAXED);
    }
    sl_spin_unlock(&b->lock);
    return changed;
}

void sl_thread_wait_ne(const uint32_t *word, uint32_t old)
{
    sl_thread_t *t = self_thread();
    unsigned spins = 0;

    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == old) {
        if (t)
            sl_ut_park(t, park_word, (void *)(uintptr_t)word, old);
        else
            poll_pause(&spins);
    }
}

void sl_thread_wake(const uint32_t *word)
{
    struct bucket *b = bucket_of(word);
    sl_thread_t *woken = 0, **pp, *t;
    uint32_t n = 0;

    if (__atomic_fetch_add(&b->nwait, 0, __ATOMIC_ACQ_REL) == 0)
        return;
    sl_spin_lock(&b->lock);
    for (pp = &b->head; (t = *pp) != 0;) {
        if (t->park_obj == (const void *)word) {
            *pp = t->next;
            t->next = woken;
            woken = t;
            n++;
        } else {
            pp = &t->next;
        }
    }
    __atomic_sub_fetch(&b->nwait, n, __ATOMIC_RELAXED);
    sl_spin_unlock(&b->lock);
    while (woken) {
        t = woken;
        woken = t->next;
        sl_ut_make_ready(t);
    }
}
