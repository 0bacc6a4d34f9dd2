/*
 * lottery.c - lottery scheduling over jobs (Waldspurger & Weihl, OSDI 1994), a policy of the test tree that
 * uses the whole policy contract of sched.h: a per-job key, a numeric option, private per-job and
 * per-process storage, and accounting that is current when a hook runs
 * (tests/test_policy_file.py builds it: make EXTRA_POLICIES=tests/policies/lottery.c).
 *
 *   job=<app>:tickets=<1..10000>   the job's share (default 10): a job with twice the tickets of another
 *                                  wins about twice as many turns while both have work
 *   lottery_turn=<1..100>          quanta a winner keeps its hart before the next draw (default 1)
 *
 * Every READY process waits in its job's FIFO, kept in the job's private storage. A hart that needs work
 * draws a ticket among the jobs with a waiting process (sched_rand, so a seed= gives the same draws) and
 * runs the head of the winner's queue. Each hart's tick ends a turn of lottery_turn quanta (the turn's
 * count is the process's private storage) if anyone waits. A process made ready kicks an idle hart.
 *
 * The accounting check: a process's run_ticks must have grown between its pick and the hook that sees it
 * stop (blocked, exited, enqueue after a preemption or yield). A turn is hundreds of instructions at the
 * least, so a run_ticks that did not grow means the core had not brought it up to date; a job whose
 * every such hook saw it stale is a PANIC when the job is done (one short turn now and then is not).
 *
 * What it promises (schedlab check; Waldspurger & Weihl, OSDI 1994, section 2.2):
 *
 * schedlab check:
 *   work-conserving  yes - every hart draws from one pool, and a process made ready kicks an idle hart
 *   share            draws - each draw is won in proportion to tickets among the jobs with a ready process
 *   invariants       job-fifo - a job's processes leave its FIFO in the order they entered it
 *   progress         240 - in probability only: the bound below
 *
 * Share. A draw is won by a job holding t of the T tickets of the jobs that have a ready process with
 * probability p = t/T, so a job's wins over n such draws are binomial, mean np and standard deviation
 * sqrt(np(1 - p)) (section 2.2); over the checker's window (every job competing, at least 50 quanta) each
 * ticket class's wins must lie within 3 standard deviations of what its tickets promise - a tolerance that
 * follows from the window's draws, not a fixed percentage. Hart time is not promised in proportion to
 * tickets: a job whose every process already runs cannot win another hart, so on 2 harts four one-process
 * jobs of 1, 1, 3 and 3 tickets give each 1-ticket job 35/220 = 0.16 of the hart time, not 1/8 (a
 * 3-ticket job running on one hart leaves the other hart's draws to the three remaining jobs: the Markov
 * chain of which job holds a hart). Stride scheduling (tests/policies/stride.c) is the one that compensates.
 *
 * Progress. Deterministic bounds need no draw to be lost for long; a lottery gives only a probability.
 * While a process waits every hart draws at least once a quantum (a turn ends at a tick, lottery_turn=1),
 * and its job wins each draw with p >= 1/(J r) for J jobs whose tickets differ at most r-fold. A process
 * with q processes ahead of it in its job's FIFO (q < H in the checker's mixes, whose jobs have at most H
 * processes on H harts) runs at its job's (q+1)-th win, and in K J quanta its job's wins are at least
 * binomial(K J H, 1/(J r)), of mean m = K H / r. With K = 24 r the chance of fewer than H wins is at most
 * exp(-m (1 - H/m)^2 / 2) = exp(-11 H) (Chernoff), under 2e-5 a wait; the checker's mixes have r = 10 (a
 * sleeper's default 10 tickets beside a 1-ticket job): K = 240 quanta per job.
 *
 * All state is guarded by sched_lock.
 */
#include "sched.h"
#include "runq.h"

#define OPTIONS(X) X(lottery_turn, .min = 1, .max = 100, .def = 1, .help = "quanta a winner runs before the next draw")
#define JOB_KEYS(X) X(tickets, .min = 1, .max = 10000, .def = 10, .help = "the job's share of the draws")
SCHED_OPTIONS(OPTIONS);
SCHED_JOB_KEYS(JOB_KEYS);

struct lot_job {                        /* SCHED_PRIV(j): zero at job_admit */
    struct runq queue;                  /* its READY processes, oldest first */
    long tickets;
    int nready;
    int stops, stale;                   /* hooks that saw a process stop; of those, with run_ticks not grown */
};

struct lot_proc {                       /* SCHED_PRIV(p): zero at proc_new */
    uint64_t run_at_pick;               /* p->run_ticks when it was last picked */
    long turn_left;                     /* quanta left in its current turn */
};

static int nwaiting;                    /* READY processes in every queue */

static int lot_job_admit(struct job *j)
{
    SCHED_PRIV(j, struct lot_job)->tickets = SCHED_JOB_KEY(j, tickets);
    return 0;
}

static void lot_job_done(struct job *j)
{
    struct lot_job *lj = SCHED_PRIV(j, struct lot_job);
    if (lj->stops >= 4 && lj->stale == lj->stops)
        panic("lottery: job %d: run_ticks was stale in all %d hooks that saw a process stop (sched.h: the core "
              "updates it before them)", j->id, lj->stops);
}

/* p stopped running: was its attained service brought up to date before this hook? */
static void saw_stop(struct proc *p)
{
    struct lot_job *lj = SCHED_PRIV(p->job, struct lot_job);
    lj->stops++;
    lj->stale += p->run_ticks == SCHED_PRIV(p, struct lot_proc)->run_at_pick;
}

static void kick_idle_hart(void)
{
    int me = mycpu()->id;
    for (int h = 0; h < ncpus; h++)
        if (h != me && __atomic_load_n(&cpus[h].idle, __ATOMIC_RELAXED) != IDLE_NOT) {
            sched_kick(h);
            return;
        }
}

static void lot_enqueue(struct proc *p, enum enq_how how)
{
    struct lot_job *lj = SCHED_PRIV(p->job, struct lot_job);
    if (how == ENQ_PREEMPT || how == ENQ_YIELD)
        saw_stop(p);
    runq_push_back(&lj->queue, p);
    lj->nready++;
    nwaiting++;
    kick_idle_hart();
}

/* The job holding the drawn ticket among those with a waiting process; 0 if none waits. */
static struct job *draw(void)
{
    long total = 0;
    for (int i = 0; i < njobs; i++)
        if (SCHED_PRIV(&jobs[i], struct lot_job)->nready)
            total += SCHED_PRIV(&jobs[i], struct lot_job)->tickets;
    if (total == 0)
        return 0;
    long ticket = (long)(sched_rand() % (uint64_t)total);
    for (int i = 0; i < njobs; i++) {
        struct lot_job *lj = SCHED_PRIV(&jobs[i], struct lot_job);
        if (lj->nready && (ticket -= lj->tickets) < 0)
            return &jobs[i];
    }
    return 0;
}

static struct proc *lot_pick_next(struct cpu *c)
{
    struct job *j = draw();
    if (!j)
        return 0;
    struct lot_job *lj = SCHED_PRIV(j, struct lot_job);
    struct proc *p = runq_pop(&lj->queue);
    lj->nready--;
    nwaiting--;
    struct lot_proc *lp = SCHED_PRIV(p, struct lot_proc);
    lp->run_at_pick = p->run_ticks;
    lp->turn_left = SCHED_OPT(lottery_turn);
    p->hart = c->id;
    return p;
}

static void lot_blocked(struct proc *p) { saw_stop(p); }
static void lot_exited(struct proc *p) { saw_stop(p); }

static void lot_tick(struct cpu *c)
{
    if (c->cur && --SCHED_PRIV(c->cur, struct lot_proc)->turn_left <= 0 && nwaiting)
        sched_preempt(c);
}

const struct sched_class lottery_class = {
    .order = 110,
    .name = "lottery",
    .options = SCHED_OPTION_TABLE(OPTIONS),
    .job_keys = SCHED_OPTION_TABLE(JOB_KEYS),
    /* no init, proc_new (not bound: p->hart is set when picked) or abandoned: nothing to do there */
    .job_admit = lot_job_admit,
    .job_done = lot_job_done,
    .enqueue = lot_enqueue,
    .pick_next = lot_pick_next,
    .blocked = lot_blocked,
    .exited = lot_exited,
    .tick = lot_tick,
};
SCHED_CLASS(lottery_class);
