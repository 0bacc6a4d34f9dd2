/*
 * allot.h - dividing the harts among the running jobs (the partition policy's arithmetic).
 *
 * Markatos 3.4.3 (dynamic hardware partitions) with Tucker & Gupta's rule (process control, 1989):
 *   - fair shares: the harts are shared out by water-filling - no job gets more than it asked for
 *     (its procs), and what a small job does not need is shared among the others;
 *   - at least one hart each while there are at least as many harts as jobs;
 *   - the remainder of an uneven division goes one hart each to the jobs that still want more, in
 *     arrival order (the job first in the list first): deterministic;
 *   - a job that cannot adapt its number of processes gets Markatos's z-rule: offered x harts for y
 *     processes it takes the smallest z <= x with ceil(y/z) = ceil(y/x) - the same number of rounds of
 *     its processes per hart, with no hart that would only run a partial round; the harts it leaves go
 *     to the other jobs by the same rules (an adaptive job first, in arrival order);
 *   - more jobs than harts: every job gets one hart and job i (in list order) shares hart i mod H with
 *     the others placed there, by time-slicing inside that one-hart partition.
 *   - a job whose speedup shape is told (policy=adaptive, .shape below) is allotted by it: the remainder of
 *     the division goes to the jobs that gain most from one more hart - its shape's gain weighted by its
 *     measured efficiency (.eff), so among equal shapes the job that wastes least of its harts, not the
 *     first to arrive - and an adaptive job whose workers
 *     synchronize gets the z-rule of its units (see allot_shape), a background job (it runs until the
 *     others end) takes such harts last, and a hart that speeds no job up goes back to the job the z-rule
 *     took it from. A policy that tells no shape (partition)
 *     gets the rules above unchanged.
 * Which harts: a job keeps as many of the harts it held before as it still may (lowest first), then
 * takes the lowest free ones, so a repartition moves as few processes as it can.
 *
 * Pure logic: no kernel dependency; tests/host/test_allot.c unit-tests it under ASan/UBSan.
 */
#ifndef ALLOT_H
#define ALLOT_H

#include <stdint.h>

#define ALLOT_MAX_JOBS 64
#define ALLOT_MAX_HARTS 64

/* What one more hart is worth to a job (Markatos 3.5.3: partitions pay off on sublinear speedup, so the
   harts an equal division leaves over go where they speed a job up most):
   - ALLOT_UNTOLD  nothing known: the remainder in arrival order (the partition policy's rule);
   - ALLOT_LINEAR  its work spreads over any number of harts: stealing threads, or workers that never
                   synchronize (a hog's) - time goes as 1/count;
   - ALLOT_ROUNDS  `units` pinned workers that meet at barriers: folded onto count harts, each step takes
                   ceil(units/count) worker steps (Markatos's z-rule argument, here for adaptive jobs: a
                   hart that does not take a round off is worth nothing to the job). */
enum allot_shape { ALLOT_UNTOLD, ALLOT_LINEAR, ALLOT_ROUNDS };

struct allot_job {
    int procs;          /* processes it asked for (>= 1) */
    int adaptive;       /* can change its number of running processes (process control) */
    enum allot_shape shape; /* zero-initialized: ALLOT_UNTOLD */
    int units;          /* ALLOT_ROUNDS: its workers (>= 1; more than procs counts as procs) */
    int background;     /* told shapes only: it runs until the others end, so a hart beyond its fair share
                           ends nothing sooner - it comes after every other job's gain */
    int eff;            /* told shapes only: its measured efficiency at its last share, per mille (0: not
                           measured, counted as 1000) - what fraction of one more hart's speedup it would
                           turn into progress (Brecht & Guha 1996: processors to the jobs that use them best) */
    uint64_t prev;      /* harts it held before this repartition (0: none, a new job) */
    /* results */
    int count;          /* harts allotted */
    uint64_t mask;      /* which ones */
};

/* Divide nharts (1..64) among jobs[0..njobs-1] (in arrival order); fills count and mask of each. */
void allot_compute(int nharts, struct allot_job *jobs, int njobs);

/* Where a process of a job that becomes ready should wait, given its job's harts (`share`), the harts where
   another of its runnable processes is (`busy`) and its own hart (`own`, -1: none): its own, unless another
   runnable process of its job is there and a hart of the share has none - then the lowest such hart; -1
   when its own is outside the share and every hart of the share is busy (the caller picks by load). */
int allot_wake_hart(uint64_t share, uint64_t busy, int own);

/* Markatos's z-rule: the smallest z <= x with ceil(y/z) == ceil(y/x) (x, y >= 1). */
int allot_zrule(int x, int y);

#endif
