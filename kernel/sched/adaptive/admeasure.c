/*
 * admeasure.c - policy=adaptive's measurement: what the kernel counts of each job, and the window sums
 * adrule.c judges (struct ad_sums), read from those counts and the job's statistics page.
 *
 * The kernel's counts, per job (struct ad_job, adaptive.h): the run time of its exited processes (the live
 * ones' is p->run_ticks); the time its processes slept inside a wait (from the block to the wake-up: the
 * S of adrule.c) and waited off their harts inside one (from a preemption, yield or wake-up in the wait to
 * the next dispatch); the yields they made inside a wait (the Y of adrule.c: in a gang row a yield comes
 * straight back, so only the count shows a wait that gives its hart away); and the time a hart of its own
 * share idled in the SPACE slot. Whether a process is inside a wait is its record's in_wait (abi.h struct
 * sl_sync): the library's, so the job can lie about it, and the rule trusts none of it (adrule.c "Hostile
 * statistics"). The library's counts - barrier episodes and ticks waited - are read from the page, each
 * field once, when a window is judged (ad_sums_of).
 *
 * adaptive.c's hooks call in here (ad_ready, ad_dispatched, ad_asleep, ad_gone, ad_share_idle); this file
 * decides nothing and calls nothing above it. State: adaptive.h's `ad` and the stretches below, all
 * guarded by sched_lock.
 */
#include "adaptive.h"
#include "../../syncstat.h"

struct ad_proc {
    uint64_t off_since;    /* preempted inside a wait at this time (0: not) */
    uint64_t asleep_since; /* blocked inside a wait at this time (0: not) */
};

/* A hart of a part job's own share idling in the SPACE slot: since when, and whose (ad_share_idle). */
static uint64_t idle_since[SL_MAX_HARTS];
static struct job *idle_of[SL_MAX_HARTS];

/* Ticks from `from` to t (0: from is 0, nothing open, or not before t). */
static uint64_t since(uint64_t from, uint64_t t) { return from && t > from ? t - from : 0; }

/* The one part job whose share holds hart h, and no other job's (0: none, or the hart is shared). */
static struct job *share_owner(int h)
{
    struct job *owner = 0;
    for (int i = 0; i < ad.nlive; i++) {
        struct ad_job *a = aj(ad.live[i]);
        if (a->rule.regime == R_GANG || !(a->mask >> h & 1))
            continue;
        if (owner || a->rule.regime != R_PART)
            return 0;
        owner = ad.live[i];
    }
    return owner;
}

/* No other job holds a hart of part job j's share - or, for a gang job, none would in part: with it the
   SPACE slot would hold no more jobs than harts (allot.h gives each at least one of its own then). */
int ad_own_share(const struct job *j)
{
    struct ad_job *a = aj(j);
    int nspace = 1, shared = 0;
    for (int i = 0; i < ad.nlive; i++) {
        struct ad_job *o = aj(ad.live[i]);
        if (ad.live[i] != j && o->rule.regime != R_GANG) {
            nspace++;
            shared |= (o->mask & a->mask) != 0;
        }
    }
    if (a->rule.regime == R_GANG)
        return nspace <= ncpus;
    return a->rule.regime == R_PART && a->mask && !shared;
}

/* Hart h picked p (0: it idles). An idle stretch of a hart of a part job's own share in the SPACE slot is
   that job's loss (adrule.c: time-sharing its share, its processes all asleep there). Closed at the hart's
   next pick - a kick, a slot switch, a wake-up all bring one - or when the job is done (ad_close_idle). */
void ad_share_idle(int h, struct proc *p)
{
    struct job *owner = !p && ad.cur_slot == SPACE ? share_owner(h) : 0;
    if (!idle_since[h] && !owner)
        return;
    uint64_t now = rdtime();
    if (idle_since[h])
        aj(idle_of[h])->idle += since(idle_since[h], now);
    idle_since[h] = owner ? now : 0;
    idle_of[h] = owner;
}

/* Close every idle stretch of job j's share (it is done). */
void ad_close_idle(struct job *j)
{
    for (int h = 0; h < ncpus; h++)
        if (idle_since[h] && idle_of[h] == j) {
            aj(j)->idle += since(idle_since[h], rdtime());
            idle_since[h] = 0;
            idle_of[h] = 0;
        }
}

/* Job j's sums now (0; -1: it has no statistics page): the kernel's run time, time asleep and off the hart
   inside waits, and the library's counts, each field of the page read once (the job may be rewriting it). */
int ad_sums_of(struct job *j, struct ad_sums *sums)
{
    struct ad_job *a = aj(j);
    if (!syncstat_of(j, 0))
        return -1;
    struct ad_sums now = { .run = a->exited_run, .sleep = a->asleep, .off = a->off, .idle = a->idle,
                           .yields = a->yields };
    uint64_t t = rdtime();
    for (int h = 0; h < ncpus; h++)
        if (idle_of[h] == j)
            now.idle += since(idle_since[h], t);
    for (int i = 0; i < j->nprocs; i++) {
        struct proc *p = ad.members[j->id - 1][i];
        volatile struct sl_sync *st = syncstat_of(j, i);
        now.episodes += st->episodes; /* counts wrap: the rule takes deltas modulo 2^32 */
        now.wait += __atomic_load_n(&st->wait_ticks, __ATOMIC_ACQUIRE); /* before wait_open: syncstat.h */
        if (!p)
            continue;
        /* each count up to now: run_ticks covers a running process up to its last change, the asleep and
           off times a waiter's up to its wake-up (ad_ready) and next dispatch (ad_dispatched), and a wait the
           library's up to its end */
        now.run += p->run_ticks + (p->state == P_RUNNING ? since(p->dispatched_at, t) : 0);
        now.sleep += since(SCHED_PRIV(p, struct ad_proc)->asleep_since, t);
        now.off += since(SCHED_PRIV(p, struct ad_proc)->off_since, t);
        now.wait += since(st->wait_open, t);
    }
    /* Sums that run backwards void a window (adrule.c). An open wait's stretch can drop out for a moment
       (abi.h wait_open: its end withdraws it before adding the wait), so the job's wait is its high-water
       mark: what a window counted too early, the next does not count again. */
    now.wait = a->wait_seen = now.wait > a->wait_seen ? now.wait : a->wait_seen;
    *sums = now;
    return 0;
}

/* p, asleep inside a wait since asleep_since (ad_asleep), is awake: that stretch is its job's time asleep
   in waits - the S of adrule.c. Not the kernel's blocked time (p->blocked_ticks): it counts blocks outside
   waits too, and a spinning job would look asleep. */
static void woke(struct proc *p, struct ad_proc *ap, uint64_t now)
{
    if (ap->asleep_since) {
        aj(p->job)->asleep += since(ap->asleep_since, now);
        ap->asleep_since = 0;
    }
}

/* p became READY: inside a wait (its record's in_wait: preempted or yielded there, or woken from its sleep,
   which returns into the wait), it is off its hart in the middle of the wait until it is dispatched. That
   time is in the library's wait_ticks but was not spinning, and gang rows make it up to a whole round (a
   gang process woken while the SPACE slot runs would count a round as its imbalance). A yield there is
   counted too (a wait that gives its hart away: adrule.c yield_spin). */
void ad_ready(struct proc *p, int in_wait, int yielded)
{
    struct ad_proc *ap = SCHED_PRIV(p, struct ad_proc);
    aj(p->job)->yields += in_wait && yielded;
    if (in_wait || ap->asleep_since) { /* the clock only for a waiter: a process is readied on every switch */
        uint64_t now = rdtime();
        woke(p, ap, now);
        if (in_wait)
            ap->off_since = now;
    }
}

/* p is dispatched: a stretch off its hart inside a wait ends. */
void ad_dispatched(struct proc *p)
{
    struct ad_proc *ap = SCHED_PRIV(p, struct ad_proc);
    if (ap->off_since) {
        aj(p->job)->off += rdtime() - ap->off_since;
        ap->off_since = 0;
    }
}

/* p blocked inside a wait: asleep there until it is readied (ad_ready) or gone. */
void ad_asleep(struct proc *p) { SCHED_PRIV(p, struct ad_proc)->asleep_since = rdtime(); }

/* p exited or was abandoned: its run time stays its job's, and a sleep inside a wait ends. */
void ad_gone(struct proc *p)
{
    aj(p->job)->exited_run += p->run_ticks;
    woke(p, SCHED_PRIV(p, struct ad_proc), rdtime());
}
