/*
 * adrule.h - policy=adaptive's measurement and decision rule (adrule.c), apart from its mechanics
 * (adaptive.c): pure arithmetic on one job's window of statistics, no lock, no clock, no hart, so it is
 * unit-tested on the host (tests/host/test_adrule.c, ASan/UBSan). adrule.c's header states the rules.
 */
#ifndef ADRULE_H
#define ADRULE_H

#include <stdint.h>
#include "../allot.h"

enum ad_regime { R_PART, R_GANG, R_FILL, NREGIMES };

/* One job's sums over its processes, read at a window's end (ticks of the time CSR; counts wrap). */
struct ad_sums {
    uint64_t run;      /* its processes' run time, exited ones included (the kernel's count) */
    uint32_t episodes; /* barrier arrivals (the library's: wraps) */
    uint64_t wait;     /* ticks inside waits (the library's) */
    uint64_t sleep;    /* ticks blocked in the kernel (the kernel's count) */
    uint64_t off;      /* ticks its processes waited for a hart after a preemption inside a wait */
    uint64_t idle;     /* ticks the harts of its own share idled in the SPACE slot (the kernel's count) */
    uint64_t yields;   /* yields its processes made inside a wait (the kernel's count: SYS_yield while in_wait) */
};

/* What the rule needs to know about the job and the machine this window. */
struct ad_env {
    uint64_t wticks;         /* a window: window= quanta, in ticks */
    uint64_t quantum;        /* ticks */
    uint64_t omega;          /* a block + cross-hart wake, ticks (sched_wake_cost_ns) */
    uint64_t reload;         /* refilling a hart's private cache, ticks (sched_reload_cost_ns) */
    uint64_t timebase_hz;
    int margin;              /* margin= percent */
    int decisive;            /* decisive=: a loss per episode of that many omegas moves at once (0: off) */
    int nprocs, ncpus;
    int harts;               /* harts it holds now: its share (part) */
    int adaptive;            /* adapt=yes: it folds its workers onto its share */
    int holes;               /* another job's gang row has holes for a filler to fill (empty or asleep entries) */
    int own_share;           /* part: no other job's processes run on its harts in the SPACE slot; gang: in
                                part it would have a share of its own (no more SPACE jobs than harts) */
    int early;               /* a prior's row judged when a wait of it sleeps, not at a tick (adaptive.c
                                probe_guess): its first evidence needs EARLY_EPISODES episodes per process */
};

/* The least efficiency a window can give (per mille): a job measured all waiting still counts a little, so
   among such jobs the shapes decide. */
#define EFF_FLOOR 50

/* The episodes per process a prior's row judged early needs (adrule.c "The prior"). */
#define EARLY_EPISODES 4

/* One job's rule state: its regime, the last window's sums, and the hysteresis. Zero it at admission
   (regime part). */
struct ad_rule {
    enum ad_regime regime, cand;
    int streak, moves;
    int settle;     /* windows to skip: they straddle a move (process control still catching up) */
    int imbalanced; /* the current candidate is part because of t_w > t_p in a gang row */
    int demoted;    /* left a gang row for its own imbalance: never returns */
    int syncs;      /* a window with evidence had barrier episodes: its workers synchronize (sticky) */
    int decisive;   /* the last judged window's loss was past omega decisive= times (ad_confirm) */
    int judged;     /* a window with evidence has been judged (sticky) */
    int primed;     /* it came to its gang row by the prior (prior=gang), part never measured (sticky) */
    int eff;        /* its efficiency in its last judged window in part or fill, per mille (0: none yet):
                       the share of its harts' time that was progress (adrule.c efficiency) */
    int eff_harts;  /* the harts it held in that window (where eff was measured: ad_speed extrapolates) */
    int eff_row;    /* its last window in a gang row: the share of the row's hart time that was progress,
                       t_p / (t_p + t_w), per mille (0: none yet) */
    uint64_t cycle; /* t_p + t_w in that window, ticks: a time-shared episode's length (ad_row_gain) */
    int row_sleeps; /* its waits in that window slept (adrule.c asleep) */
    uint64_t row_yield; /* its waits in that window yielded their harts: the spin a wait held its hart before
                           giving it away, ticks (adrule.c yield_spin; 0: they do not yield) */
    uint64_t loss[NREGIMES]; /* its last loss per episode measured in gang and in part (0: none since the
                                mix last changed): it returns only to a regime that lost less */
    struct ad_sums last;
};

/* One window of the job: its candidate regime, or -1 when the window carries no evidence. Sets *tp_us
   (its grain t_p) and *wait_pct (t_w as a percent of t_p + t_w) when it returns a regime. */
int ad_judge(struct ad_rule *r, const struct ad_sums *now, const struct ad_env *e, uint64_t *tp_us, int *wait_pct);

/* Whether ad_judge uses the job's wait times in `regime` (its gang loss, its loss time-sharing harts it
   cannot fold onto, or its efficiency on harts of its own); folded, it judges by episodes and its share's idle
   time alone, and the library need not time its waits. */
int ad_reads_waits(enum ad_regime regime, int adaptive, int harts, int nprocs);

/* Whether a job with no evidence yet, in part, starts coscheduled: it cannot fold and would time-share
   (adrule.c's header, "The prior"). */
int ad_prior_gang(const struct ad_rule *r, int adaptive, int harts, int nprocs, int ncpus);

/* What one more hart is worth to a job in part or fill (allot.h's shapes; its speedup signal): rounds of
   *units workers for a job whose workers synchronize and that published its units (process 0's record:
   `published`, the job's to write, is bounded here), its processes for adapt=no, else linear. */
enum allot_shape ad_shape(const struct ad_rule *r, int adaptive, int nprocs, uint32_t published, int *units);

/* The hysteresis: after a judged window with candidate c, 1 if the job moves to c now (confirm=
   consecutive windows agreeing, or one decisive window: adrule.c's header). */
int ad_confirm(struct ad_rule *r, int c, int confirm);

/* A move's cost to the other jobs (adrule.c's header, "The others' cost"). One job of the SPACE slot as a
   job's gang row would change it: its harts there with the mover in part and with the mover in a row, and
   its efficiency (per mille, 0: not measured) on the harts it held when measured. */
struct ad_other {
    int part, gang;
    int eff, eff_harts;
};

/* The SPACE slot's quanta and the round's, with the mover in part (p) or in a gang row (g). */
struct ad_round {
    int space_p, round_p, space_g, round_g;
};

/* Speed on h harts, per mille of one hart's, of a job whose efficiency eff was measured on eff_harts harts
   (Amdahl's law through that point; measured on one hart, flat; linear when nothing is known). */
uint64_t ad_speed(int h, int eff, int eff_harts);

/* The others' cost of the mover's row: the sum over them of the relative growth of their time (their rate
   with the mover in part over their rate with it in a row, less 1), per mille; negative when they gain. */
long ad_others_cost(const struct ad_other *o, int n, const struct ad_round *rd);

/* The mover of a row move: its processes (its row's harts), its harts in the SPACE slot beside the others,
   and the quantum (ticks). */
struct ad_mover {
    int procs, harts;
    int own;                /* its share there would be its own: no more jobs in the slot than harts */
    uint64_t quantum, omega; /* ticks; omega: a block + wake (ad_env's) */
};

/* The mover's gain of a row (adrule.c's header, "The others' cost"): the relative fall of its time, its rate in
   the row against its rate in the SPACE slot, per mille; negative where the row slows it down. */
long ad_row_gain(const struct ad_rule *r, const struct ad_mover *m, const struct ad_round *rd);

/* A job's candidate c (ad_judge's) weighed: a row it would enter is entered, and one it is in kept, only
   where its gain is past the others' cost by the margin (percent of either); else R_PART. Other candidates,
   c. A row the prior guessed, with nothing measured in part to weigh against, is left at once (decisive). */
int ad_weigh(struct ad_rule *r, int c, long cost, long gain, int margin);

/* The job moved from regime `from` to `to` (adaptive.c has moved it): its next window is skipped - straddling
   the move - except after the prior's move, whose start-up ad_judge tells apart itself. */
void ad_moved(struct ad_rule *r, enum ad_regime from, enum ad_regime to);

#endif
