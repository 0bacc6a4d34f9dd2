/*
 * uready.c - making a thread ready (uthread.h's model, uthread_impl.h's
 * homes, hosts and bells): an unpinned thread goes on the bottom of the
 * caller's deque, or on the run's inbox when the caller is not one of the
 * run's vps; a pinned thread goes to its host's FIFO when the caller is the
 * host, else onto the host's pin inbox, and the host is rung. Whoever makes
 * work visible to a vp that may sleep rings it.
 */
#include "schedlab.h"
#include "threads/uthread_impl.h"
#include "wait/wait.h"

static int sleep_over(struct vp *h, uint32_t seq)
{
    return (int32_t)(__atomic_load_n(&h->sleep_done, __ATOMIC_SEQ_CST) - seq) >= 0;
}

/* h's process sleeps (or is about to) on a wait word with its thread, in sleep number seq, opened after
   the caller published what it gave h: poke the word until that sleep is over (uthread_impl.h, "Sleeping
   with a thread"). A poke that a waiter's new sleepers bit undid before h's futex check was lost, and h
   slept with the thread it was given in its inbox while every other worker waited for that one (the host
   test_workers caught it under process control). Word and value are sleep seq's while it is open (h
   writes them only before opening its next one); read after it closed, they are unused. */
static void wake_word_sleeper(struct vp *h, uint32_t seq)
{
    const uint32_t *w = __atomic_load_n(&h->sleep_word, __ATOMIC_ACQUIRE);
    uint32_t v = __atomic_load_n(&h->sleep_val, __ATOMIC_ACQUIRE);

    while (!sleep_over(h, seq)) {
        sl_wait_poke(w);
        if ((__atomic_load_n(w, __ATOMIC_SEQ_CST) & SL_WAIT_VALUE) != (v & SL_WAIT_VALUE))
            return; /* moved on: its mover wakes h, or h's futex check fails */
        if (sleep_over(h, seq))
            return;
        sl_yield(); /* let h reach its futex wait (or come back from it) */
    }
}

void sl_ut_ring(struct run *r, struct vp *h)
{
    uint32_t seq;

    __atomic_add_fetch(&h->bell, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&h->sleeping, __ATOMIC_SEQ_CST))
        sl_futex_wake(&h->bell, 1);
    else if ((seq = __atomic_load_n(&h->sleep_seq, __ATOMIC_SEQ_CST)) != __atomic_load_n(&h->sleep_done, __ATOMIC_SEQ_CST))
        wake_word_sleeper(h, seq);
    (void)r;
}

/* Wake up to n sleeping vps (stealable work appeared, or the run ended). */
static void wake_sleepers(struct run *r, int n)
{
    for (int i = 0; i < r->nvps && n > 0; i++)
        if (__atomic_load_n(&r->vps[i].sleeping, __ATOMIC_SEQ_CST)) {
            sl_ut_ring(r, &r->vps[i]);
            n--;
        }
}

/* sl_ut_push_local (uthread_impl.h) found the deque full, or vps asleep. */
void sl_ut_pushed(struct vp *s, int full)
{
    if (full)
        sl_uthread_fatal("process %d has more than %d ready threads (SL_THREAD_READY_MAX, deque.h)", s->id,
                         SL_THREAD_READY_MAX);
    wake_sleepers(s->run, 1);
}

void sl_ut_pq_append(struct vp *s, sl_thread_t *t) { ut_fifo_push(&s->pq_head, &s->pq_tail, t); }

/* A pinned thread is ready: to the FIFO of its host if we are the host,
   else onto the host's pin inbox, and ring it. If the host turns out to be
   suspended (it read no map change yet when we did), send the inbox on. */
void sl_ut_make_ready_pinned(struct vp *s, sl_thread_t *t)
{
    struct run *r = t->run;
    struct vp *h = &r->vps[sl_pc_host(r, t->home)];

    if (s == h && !__atomic_load_n(&s->suspended, __ATOMIC_RELAXED)) {
        sl_ut_pq_append(s, t);
        return;
    }
    t->next = __atomic_load_n(&h->pin_inbox, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&h->pin_inbox, &t->next, t, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
    if (!__atomic_load_n(&h->suspended, __ATOMIC_SEQ_CST))
        sl_ut_ring(r, h);
    else if (sl_pc_host(r, t->home) != (uint32_t)h->id)
        sl_pc_forward_inbox(r, h); /* the map has moved on: send h's inbox where it says now */
    /* else h is between publishing its suspension and rebuilding the host map (procctl.c): it forwards
       its own inbox once the map is rebuilt, so t is not lost. Forwarding here would find h again, and
       again - a recursion as deep as that window is long, which overflowed a process stack when the
       suspending process was preempted inside it. */
}

void sl_ut_make_ready(sl_thread_t *t)
{
    struct vp *s = self_vp();
    struct run *r = t->run;

    if (t->home >= 0) {
        sl_ut_make_ready_pinned(s && s->run == r ? s : 0, t);
        return;
    }
    if (s && s->run == r) {
        sl_ut_push_local(s, t);
        return;
    }
    /* Not a process of this run (or between runs): the inbox, a stack
       pushed with CAS and emptied whole with an exchange (so no ABA). */
    t->next = __atomic_load_n(&r->inbox, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&r->inbox, &t->next, t, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
    wake_sleepers(r, 1);
}
