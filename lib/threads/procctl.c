/*
 * procctl.c - process control (Tucker & Gupta 1989) and where pinned
 * threads go while it keeps their home suspended ("threads migrate",
 * Markatos 3.4.3).
 *
 * When the job adapts (its info page says SL_INFO_ADAPTIVE: adapt=yes under
 * a policy that allots harts), every safe point compares the job's
 * allotment (info->allot_count) with the number of vps not suspended
 * (run->active):
 *   too many  this vp suspends itself: it takes itself out of the host map,
 *             sends every thread it holds to the vps that remain, and sleeps
 *             on its resume word. The CAS on `active` picks exactly one vp
 *             per excess.
 *   too few   it resumes the most recently suspended vp, which takes its
 *             own pinned threads back as they next wait (below).
 * Safe points: the top of every pass of a vp's loop (no thread runs there:
 * Tucker & Gupta's "between tasks"), and every pause of a wait inside a
 * thread (sl_thread_pause, which every wait kind calls: a barrier arrival
 * is a safe point, as in Markatos's threads that give up their processor
 * at synchronization).
 *
 * The host map (uthread_impl.h). host[i] = i for an active vp; the k-th
 * suspended vp, in suspension order, is hosted by active vp number
 * k mod active (ascending ids): so the suspended vps' pinned threads spread
 * evenly over those that remain, one home's threads together. The map and
 * every vp's `suspended` flag change together under pc_lock, and a vp is a
 * host of others only while it is active.
 *
 * No thread is lost. A thread made ready is pushed to host[home] as read
 * then; if that vp is suspended by the time the push is visible, the
 * pusher itself sends the inbox on (sl_pc_forward_inbox), and the
 * suspending vp empties its inbox after publishing `suspended`: both are
 * sequentially consistent, so at least one of them sees the thread. A
 * thread that runs on a vp other than its host (the map changed since)
 * goes to its host at its next pause or yield. Rescue (an idle vp takes a
 * suspended vp's pin inbox) remains as a last resort.
 *
 * Reaction time: the kernel stamps info->allot_stamp when it changes the
 * allotment; a vp that suspends adds now - stamp to its stats (the
 * excess a repartition creates, measured until a process acts on it).
 */
#include "schedlab.h"
#include "threads/uthread_impl.h"
#include "base/eventlog.h"
#include "wait/wait.h"

/* Rebuild host[] from the suspended list. pc_lock held. */
static void rebuild_hosts(struct run *r)
{
    uint32_t act[SL_MAX_PROCS];
    int na = 0;

    for (int i = 0; i < r->nvps; i++)
        if (!__atomic_load_n(&r->vps[i].suspended, __ATOMIC_RELAXED))
            act[na++] = (uint32_t)i;
    if (na == 0)
        sl_uthread_fatal("process control suspended every process of the run");
    for (int i = 0; i < na; i++)
        __atomic_store_n(&r->host[act[i]], act[i], __ATOMIC_RELEASE);
    for (int k = 0; k < r->nsusp; k++)
        __atomic_store_n(&r->host[r->susp[k]], act[k % na], __ATOMIC_RELEASE);
}

void sl_pc_init(struct run *r)
{
    if (r->nvps > SL_MAX_PROCS)
        sl_die("a thread run of %d processes (at most %d)", r->nvps, SL_MAX_PROCS);
    r->active = (uint32_t)r->nvps;
    for (int i = 0; i < r->nvps; i++)
        r->host[i] = (uint32_t)i;
}

/* Send one thread that vp s may not keep to where it belongs now. */
static void send_away(struct vp *s, sl_thread_t *t)
{
    if (t->home >= 0)
        sl_ut_make_ready_pinned(s, t);
    else
        sl_ut_push_local(s, t); /* s's deque stays stealable while it sleeps */
}

void sl_pc_forward_inbox(struct run *r, struct vp *v)
{
    sl_thread_t *t = __atomic_exchange_n(&v->pin_inbox, 0, __ATOMIC_SEQ_CST);

    if (t)
        sl_race_point(SL_RACE_FORWARD);
    while (t) {
        sl_thread_t *n = t->next;
        sl_ut_make_ready_pinned(0, t);
        t = n;
    }
    (void)r;
}

/* Resume the most recently suspended vp, if any; 1 if one was. */
int sl_pc_resume_one(struct run *r)
{
    int id = -1;

    sl_spin_lock(&r->pc_lock);
    if (r->nsusp > 0) {
        id = r->susp[r->nsusp - 1];
        __atomic_store_n(&r->nsusp, r->nsusp - 1, __ATOMIC_RELAXED); /* read without the lock too */
        __atomic_add_fetch(&r->active, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&r->vps[id].suspended, 0, __ATOMIC_SEQ_CST);
        rebuild_hosts(r);
    }
    sl_spin_unlock(&r->pc_lock);
    if (id < 0)
        return 0;
    sl_race_point(SL_RACE_RESUME);
    __atomic_store_n(&r->vps[id].resume, 1, __ATOMIC_RELEASE);
    sl_futex_wake(&r->vps[id].resume, 1);
    return 1;
}

static void note_reaction(struct vp *s)
{
    uint64_t stamp = __atomic_load_n(&((struct sl_info *)sl_info())->allot_stamp, __ATOMIC_RELAXED);
    uint64_t now = sl_plat_ticks(), d = stamp && now > stamp ? now - stamp : 0;

    s->st.suspends++;
    s->st.react_ticks += d;
    if (d > s->st.react_max_ticks)
        s->st.react_max_ticks = d;
}

/* The caller already took one off `active` (the CAS that chose it). */
static void send_all_away(struct vp *s, sl_thread_t *t)
{
    while (t) {
        sl_thread_t *n = t->next;
        send_away(s, t);
        t = n;
    }
}

static void stop_leaving(struct vp *s)
{
    __atomic_store_n(&s->leaving, 0, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&s->run->nleaving, 1, __ATOMIC_SEQ_CST);
}

static void suspend_self(struct vp *s)
{
    struct run *r = s->run;
    sl_thread_t *yq, *pq;

    __atomic_store_n(&s->resume, 0, __ATOMIC_RELAXED);
    sl_spin_lock(&r->pc_lock);
    /* sl_pc_finish sets done, then resumes whoever is on the list, taking
       this lock each time: a vp that registers after the last of those
       would never be resumed - but it sees done here, so it doesn't */
    if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&r->active, 1, __ATOMIC_RELAXED); /* undo the caller's decrement */
        sl_spin_unlock(&r->pc_lock);
        stop_leaving(s);
        return;
    }
    r->susp[r->nsusp] = s->id;
    __atomic_store_n(&r->nsusp, r->nsusp + 1, __ATOMIC_RELAXED); /* read without the lock too */
    __atomic_store_n(&s->suspended, 1, __ATOMIC_SEQ_CST);
    rebuild_hosts(r);
    sl_spin_unlock(&r->pc_lock);
    stop_leaving(s);
    sl_race_point(SL_RACE_SUSPEND);
    note_reaction(s);
    /* everything this vp holds goes to the vps that remain; detached first, because another vp may
       resume this one meanwhile and then send_away gives threads back to this very FIFO */
    yq = s->yq_head;
    pq = s->pq_head;
    s->yq_head = s->yq_tail = s->pq_head = s->pq_tail = 0;
    send_all_away(s, yq);
    send_all_away(s, pq);
    sl_pc_forward_inbox(r, s);
    sl_race_point(SL_RACE_SUSPEND);
    sl_ulog(SL_UL_SUSPEND, (int32_t)__atomic_load_n(&sl_info()->allot_count, __ATOMIC_RELAXED), 0);
    while (!__atomic_load_n(&s->resume, __ATOMIC_ACQUIRE))
        sl_futex_wait(&s->resume, 0, 0);
    sl_ulog(SL_UL_RESUME, (int32_t)__atomic_load_n(&sl_info()->allot_count, __ATOMIC_RELAXED), 0);
    sl_ut_note_hart(s);
}

/* Too many vps run for the allotment (adaptive jobs only). When too few
   run, resume one right here. */
static int excess(struct vp *s)
{
    struct run *r = s->run;
    volatile struct sl_info *in = sl_info();
    uint32_t allot, active;

    if (!(in->flags & SL_INFO_ADAPTIVE) || r->nvps == 1)
        return 0;
    allot = __atomic_load_n(&in->allot_count, __ATOMIC_RELAXED);
    active = __atomic_load_n(&r->active, __ATOMIC_RELAXED);
    if (active > allot && allot >= 1)
        return 1;
    if (active < allot && __atomic_load_n(&r->nsusp, __ATOMIC_RELAXED) > 0)
        s->st.resumes += (uint64_t)sl_pc_resume_one(r);
    return 0;
}

void sl_pc_safe_point(struct vp *s)
{
    struct run *r = s->run;
    uint32_t active, allot;

    if (!excess(s))
        return;
    active = __atomic_load_n(&r->active, __ATOMIC_RELAXED);
    allot = __atomic_load_n(&sl_info()->allot_count, __ATOMIC_RELAXED);
    /* one suspension per excess vp: the CAS picks who. `leaving` is set before the CAS and cleared once
       the suspension is published (or the CAS lost), so whoever sees the excess gone while this vp is
       still on its way also sees why (sl_pc_leaver_stalled). */
    if (active <= allot)
        return;
    __atomic_add_fetch(&r->nleaving, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->leaving, 1, __ATOMIC_SEQ_CST);
    if (__atomic_compare_exchange_n(&r->active, &active, active - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        suspend_self(s);
    else
        stop_leaving(s);
}

/* A vp chosen to suspend that the kernel preempted before it published its suspension holds its pinned
   threads at home, and every other worker waits for them: it must get a hart. Under partition the job's
   processes share its harts, so a pause that finds such a vp off its hart gives the hart back to the
   kernel (sl_thread_pause) - without this, a spinning sibling kept it off for a whole quantum. */
int sl_pc_leaver_stalled(struct run *r)
{
    if (!__atomic_load_n(&r->nleaving, __ATOMIC_RELAXED))
        return 0;
    for (int i = 0; i < r->nvps; i++)
        if (__atomic_load_n(&r->vps[i].leaving, __ATOMIC_SEQ_CST) && !sl_proc_running((uint32_t)i))
            return 1;
    return 0;
}

void sl_pc_finish(struct run *r)
{
    __atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < r->nvps; i++)
        sl_ut_ring(r, &r->vps[i]);
    while (sl_pc_resume_one(r))
        ;
}

int sl_pc_stranded(struct run *r)
{
    if (!__atomic_load_n(&r->nsusp, __ATOMIC_SEQ_CST))
        return 0;
    for (int i = 0; i < r->nvps; i++) {
        struct vp *v = &r->vps[i];
        if (__atomic_load_n(&v->suspended, __ATOMIC_SEQ_CST) && __atomic_load_n(&v->pin_inbox, __ATOMIC_SEQ_CST))
            return 1;
    }
    return 0;
}

sl_thread_t *sl_pc_rescue(struct vp *s)
{
    struct run *r = s->run;

    if (!sl_pc_stranded(r))
        return 0;
    for (int i = 0; i < r->nvps; i++) {
        struct vp *v = &r->vps[i];
        if (v != s && __atomic_load_n(&v->suspended, __ATOMIC_SEQ_CST))
            sl_pc_forward_inbox(r, v);
    }
    return 0; /* forwarded to their hosts: the loop finds them */
}

/* ---- safe points inside threads ---- */

/* 1 if the running thread t should give vp s back to its loop now: another
   thread is ready here, t belongs on another vp, or s must suspend. */
static int must_leave(struct vp *s, sl_thread_t *t)
{
    struct run *r = s->run;

    if (s->pq_head || s->yq_head || __atomic_load_n(&s->pin_inbox, __ATOMIC_RELAXED) ||
        (!r->pinned_only && (sl_deque_size(&s->dq) || __atomic_load_n(&r->inbox, __ATOMIC_RELAXED))))
        return 1;
    if (t->home >= 0 && sl_pc_host(r, t->home) != (uint32_t)s->id)
        return 1;
    return excess(s);
}

/* The calling thread, on vp s, gives its process back to the loop if it must; 1 if it did. */
static int leave_if_asked(struct vp *s)
{
    if (!s || !s->cur || !must_leave(s, s->cur))
        return 0;
    sl_thread_yield();
    return 1;
}

void sl_safe_point(void) { (void)leave_if_asked(self_vp()); }

static int word_sleep_folded; /* sl_threads_word_sleep_folded */

void sl_threads_word_sleep_folded(int on) { __atomic_store_n(&word_sleep_folded, on != 0, __ATOMIC_RELAXED); }

/* The process sleeps on word while it holds v, with its thread (uthread_impl.h, "Sleeping with a thread"):
   the sleep is opened (word, value, then its number) before the vp looks for work, and closed however it
   ends, so a ringer that saw it open knows when to stop poking. */
int sl_thread_block_process(const uint32_t *word, uint32_t v)
{
    struct vp *s = self_vp();
    uint32_t seq;
    int slept = 0;

    /* while process control keeps vps suspended their threads share the others: a vp's ringers are then
       many (every wake of a sibling), and it parks its thread and sleeps on its bell, which no waiter can
       undo (uthread_impl.h); a vp asleep on a word when a suspension begins is poked */
    if (!s || !s->cur || !s->run->pinned_only ||
        (__atomic_load_n(&s->run->nsusp, __ATOMIC_RELAXED) && !__atomic_load_n(&word_sleep_folded, __ATOMIC_RELAXED)))
        return 0;
    seq = s->sleep_seq + 1;
    __atomic_store_n(&s->sleep_word, word, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sleep_val, v, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sleep_seq, seq, __ATOMIC_SEQ_CST);
    if (!must_leave(s, s->cur)) {
        sl_futex_wait(word, v, 0);
        slept = 1;
    }
    __atomic_store_n(&s->sleep_done, seq, __ATOMIC_SEQ_CST);
    return slept;
}

void sl_thread_pause(void)
{
    struct vp *s = self_vp();

    if (leave_if_asked(s))
        return;
    if (s && sl_pc_leaver_stalled(s->run))
        sl_yield(); /* the kernel's yield: let the sibling finish suspending */
    else
        sl_cpu_relax();
}
