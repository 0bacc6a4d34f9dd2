/*
 * adaptive.h - policy=adaptive's state, shared by its three parts: adaptive.c, the policy (each job's
 * regime, judging and moving it; the hooks), admeasure.c, what it measures of each job, and adround.c, the
 * machine it drives (where a process waits and which one a hart runs: the hart queues, the filler FIFO, the
 * SPACE slot's shares, the round of slots). adaptive.c's header explains them. Only those files include
 * this one; everything in it is guarded by sched_lock.
 */
#ifndef ADAPTIVE_H
#define ADAPTIVE_H

#include "../sched.h"
#include "../slots.h"
#include "../allot.h"
#include "adrule.h"

#define SPACE (-1) /* cur_slot of the space-sharing slot */

struct ad_job {
    struct ad_rule rule; /* its regime, last window and hysteresis (adrule.h) */
    int row;          /* gang: its row */
    uint64_t cols;    /* gang: its columns, in process order */
    uint64_t mask;    /* part and fill: its harts in the SPACE slot */
    uint64_t since, in[NREGIMES];
    uint64_t exited_run; /* run_ticks of its exited processes */
    uint64_t off;     /* ticks its processes waited for a hart after a preemption inside a wait */
    uint64_t asleep;  /* ticks its processes were blocked inside a wait (closed stretches) */
    uint64_t yields;  /* yields its processes made inside a wait (ad_ready) */
    uint64_t idle;    /* ticks a hart of its own share idled in the SPACE slot (closed stretches: ad_share_idle) */
    uint64_t wait_seen; /* the most its sums' wait has been (ad_sums_of): they never run backwards */
    enum allot_shape shape; /* what one more hart is worth to it, as last allotted (allot.h) */
    int units;
    int eff_at;       /* its efficiency (rule.eff) when its share was last set */
    int probing;      /* in its first window: probed every quantum (probe) */
    int slept;        /* a process of it slept inside a wait in a gang row: the row has holes (holes_besides) */
    uint64_t judged_at; /* its last window's end, or its admission: where its next window starts */
    uint64_t probed_at; /* its last probe (a guessed row is probed at most every quarter quantum) */
};

struct ad_state {
    struct ad_job jobs[NJOB];                 /* by job id - 1 */
    struct proc *members[NJOB][SL_MAX_PROCS]; /* each job's processes by index (0: not created yet, or exited) */
    struct job *live[NJOB];                   /* admitted, not done, in arrival order */
    int nlive;
    struct slot_table table;                  /* the matrix's rows (slots.h) */
    struct proc *matrix[SLOTS_MAX_ROWS][SL_MAX_HARTS]; /* gang jobs' entries */
    uint64_t all_harts;
    int cur_slot;                             /* the row the harts run now, or SPACE */
    int round_at;                             /* the slot the round goes on from: cur_slot, or the slot
                                                 a switch to row_next left */
    int row_next;                             /* a row a job just entered: the next switch goes there
                                                 (-1: none) */
    char row_early[SLOTS_MAX_ROWS];           /* a row that had its turn early (row_next): the round skips
                                                 its next regular turn (cleared when the row empties) */
    int space_quanta;                         /* quanta the SPACE slot has lasted in this round */
};
extern struct ad_state ad;

static inline struct ad_job *aj(const struct job *j) { return &ad.jobs[j->id - 1]; }
static inline enum ad_regime regime_of(const struct proc *p) { return ad.jobs[p->job->id - 1].rule.regime; }
static inline int popc(uint64_t x) { int n = 0; for (; x; x &= x - 1) n++; return n; }

/* adround.c: the machine. */
void ad_round_init(void);                   /* once ad.all_harts is set: every hart idle */
int ad_pick_hart(struct job *j);            /* the hart of j's share for one more process */
void ad_place_ready(struct proc *p);        /* a READY p (on no queue) joins its regime's queue */
void ad_unqueue(struct proc *p);            /* a READY p leaves whatever queue holds it */
int ad_shapes_changed(void);                /* a part or fill job's shape changed since its share was set */
/* The SPACE slot's shares again, part processes moved onto them (but skip's: its caller places them);
   share_changed(j) for every job whose share changed (a hook: the policy tells the job). */
void ad_repartition(struct job *skip, void (*share_changed)(struct job *));
/* Job m's candidate c, judged with rule state r, weighed by what a gang row for it would change for the SPACE
   slot's jobs and for itself (adrule.c ad_weigh: the rule; here the shares and quanta it reads). */
int ad_weigh_row(struct job *m, struct ad_rule *r, int c, int margin);
void ad_ack(struct cpu *c);                 /* hart c acts on the latest slot switch */
/* The next slot with something runnable - row_next first, whatever stay says - or stay. */
void ad_switch(enum trace_ev why, int stay);
/* While the SPACE slot runs, switch to row_next now if it has a process ready (else it stays pending). */
void ad_run_row_next(void);
void ad_mark_idle(int h);                   /* hart h has nothing of the current slot */
struct proc *ad_pick(struct cpu *c);        /* what hart c runs next (0: nothing) */

/* admeasure.c: the measurement. */
int ad_sums_of(struct job *j, struct ad_sums *sums); /* j's sums now (0; -1: no statistics page) */
int ad_own_share(const struct job *j);      /* no other job holds a hart of j's share (gang: would hold) */
void ad_share_idle(int h, struct proc *p);  /* hart h picked p (0: idles): its own-share idle stretches */
void ad_close_idle(struct job *j);          /* j is done: its idle stretches end */
/* p is READY (in_wait: inside a wait, off its hart from now; yielded: it yielded its hart, SYS_yield) */
void ad_ready(struct proc *p, int in_wait, int yielded);
void ad_dispatched(struct proc *p);         /* p runs: a stretch off its hart inside a wait ends */
void ad_asleep(struct proc *p);             /* p blocked inside a wait */
void ad_gone(struct proc *p);               /* p exited or was abandoned */

#endif
