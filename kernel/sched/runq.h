/*
 * runq.h - a FIFO of READY processes linked through p->rq_next: the per-hart run queue that the
 * timeslice and partition policies both keep. Callers hold sched_lock.
 */
#ifndef RUNQ_H
#define RUNQ_H

#include "sched.h"

struct runq {
    struct proc *head, *tail;
};

static inline void runq_push_back(struct runq *q, struct proc *p)
{
    p->rq_next = 0;
    if (q->tail)
        q->tail->rq_next = p;
    else
        q->head = p;
    q->tail = p;
}

static inline void runq_push_front(struct runq *q, struct proc *p)
{
    p->rq_next = q->head;
    q->head = p;
    if (!q->tail)
        q->tail = p;
}

static inline struct proc *runq_pop(struct runq *q)
{
    struct proc *p = q->head;
    if (p) {
        q->head = p->rq_next;
        if (!q->head)
            q->tail = 0;
        p->rq_next = 0;
    }
    return p;
}

/* The round-robin tick of a per-hart queue: end the running process's turn if another waits. */
static inline void runq_tick(struct runq *q, struct cpu *c)
{
    if (c->cur && q->head)
        sched_preempt(c);
}

/* Take p out wherever it is in q (no-op if it is not there). */
static inline void runq_remove(struct runq *q, struct proc *p)
{
    struct proc **pp = &q->head, *prev = 0;
    while (*pp && *pp != p) {
        prev = *pp;
        pp = &(*pp)->rq_next;
    }
    if (!*pp)
        return;
    *pp = p->rq_next;
    if (q->tail == p)
        q->tail = prev;
    p->rq_next = 0;
}

#endif
