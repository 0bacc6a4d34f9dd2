/*
 * futex.c - wait on a user word until another process of the job wakes it (the basis of blocking
 * barriers and of process-control suspension).
 *
 * Waiters are kept in FIFO lists hashed by (job, user address). Everything here runs under sched_lock,
 * and futex_wait compares the word with the expected value under it, so a wake that follows a store
 * to the word can never be lost. Timeouts: the earliest waiter's deadline is armed in the deadline queue
 * (deadline.h), whose callback, futex_timeouts, wakes every waiter whose time has come and arms the next.
 */
#include "sched/core.h"
#include "deadline.h"
#include "ticks.h"

static void futex_timeouts(struct deadline *d, uint64_t now);

static struct proc *bucket[NFUTEX_BUCKET]; /* sched_lock */
static uint64_t next_deadline = ~0UL;      /* earliest fx_deadline of any waiter (sched_lock); armed in timer */
static struct deadline timer = DEADLINE_INIT("futex", futex_timeouts);

static struct proc **bucket_of(struct job *j, uint64_t uaddr)
{
    uint64_t h = (uaddr >> 2) * 0x9e3779b97f4a7c15UL + (uint64_t)j->id;
    return &bucket[(h >> 32) % NFUTEX_BUCKET];
}

static void unlink(struct proc *p)
{
    for (struct proc **pp = bucket_of(p->job, p->fx_addr); *pp; pp = &(*pp)->fx_next) {
        if (*pp == p) {
            *pp = p->fx_next;
            p->fx_next = 0;
            return;
        }
    }
}

long futex_wait(struct proc *p, uint64_t uaddr, uint32_t expected, uint64_t timeout_us)
{
    if (uaddr & 3)
        return SL_EINVAL;
    uint64_t pa = uvm_translate(p->job->pt, uaddr, PTE_R);
    if (!pa)
        return SL_EFAULT;
    acquire(&sched_lock);
    if (p->killed) { /* job_kill (under sched_lock) woke its blocked processes already */
        release(&sched_lock);
        return SL_EINVAL;
    }
    if (*(volatile uint32_t *)pa != expected) {
        release(&sched_lock);
        return SL_EAGAIN;
    }
    p->fx_addr = uaddr;
    p->fx_result = 0;
    /* a timeout too long to reach (saturated: thousands of years) is no timeout at all */
    uint64_t deadline = timeout_us ? ticks_add_sat(rdtime(), us_to_ticks(timeout_us)) : 0;
    p->fx_deadline = deadline == TICKS_NEVER ? 0 : deadline;
    p->fx_next = 0;
    struct proc **pp = bucket_of(p->job, uaddr);
    while (*pp)
        pp = &(*pp)->fx_next;
    *pp = p;
    if (p->fx_deadline && p->fx_deadline < next_deadline) {
        next_deadline = p->fx_deadline;
        deadline_arm(&timer, next_deadline); /* the queue re-arms deadline_hart's timer if it must */
    }
    sched_block(p);
    long r = p->fx_result;
    release(&sched_lock);
    return r;
}

long futex_wake(struct job *j, uint64_t uaddr, uint32_t n)
{
    if (uaddr & 3)
        return SL_EINVAL;
    if (!uvm_translate(j->pt, uaddr, PTE_R))
        return SL_EFAULT;
    long woken = 0;
    acquire(&sched_lock);
    struct proc **pp = bucket_of(j, uaddr);
    while (*pp && woken < n) {
        struct proc *q = *pp;
        if (q->job == j && q->fx_addr == uaddr) {
            *pp = q->fx_next;
            q->fx_next = 0;
            q->fx_result = 0;
            sched_make_ready(q, ENQ_WAKE);
            woken++;
        } else {
            pp = &q->fx_next;
        }
    }
    release(&sched_lock);
    return woken;
}

void futex_cancel(struct proc *p)
{
    ASSERT_HELD(&sched_lock, "futex_cancel");
    unlink(p);
    p->fx_result = SL_EINVAL;
}

/* The deadline queue's callback, on deadline_hart: timer came due (it is disarmed now). */
static void futex_timeouts(struct deadline *d, uint64_t now)
{
    acquire(&sched_lock);
    uint64_t next = ~0UL;
    for (int b = 0; b < NFUTEX_BUCKET; b++) {
        for (struct proc **pp = &bucket[b]; *pp;) {
            struct proc *q = *pp;
            if (q->fx_deadline && q->fx_deadline <= now) {
                *pp = q->fx_next;
                q->fx_next = 0;
                q->fx_result = SL_ETIMEDOUT;
                sched_make_ready(q, ENQ_WAKE);
                continue;
            }
            if (q->fx_deadline)
                next = MIN(next, q->fx_deadline);
            pp = &q->fx_next;
        }
    }
    next_deadline = next;
    if (next != ~0UL)
        deadline_arm(&timer, next);
    release(&sched_lock);
}
