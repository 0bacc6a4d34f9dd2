/*
 * gauss.h - private to the gauss app (apps/gauss/): what main.c shares with
 * its two programs, coarse.c (variant=coarse) and fine.c (variant=fine).
 * The system and its answer live in struct gauss; each program keeps its own
 * state in its own file.
 */
#ifndef GAUSS_H
#define GAUSS_H

#include "schedlab.h"
#include "wait/wait.h"

#define FINE_WINDOW 2        /* fine, sync=cond: columns in flight; also the pivot rows a process keeps */

struct gauss {
    int n, nprocs, cond;
    int own;                 /* home=own: each row in its owner's node's memory (gauss_home_rows) */
    double *a;               /* row i at a + i*(n+1) (coarse; fine place=lb); written only by its owner */
    double **rowp;           /* fine: row i's storage (home buffers or a); 0: rows in a */
    double *x_true, *x;
    uint32_t *ready;         /* coarse cond: 1 once row k is fully reduced; fine: columns applied to row k */
    enum sl_wait wait;       /* the barrier= kind: every wait of both programs */
    uint64_t t0, t1;         /* the clock at the start and end of the parallel part */
};

/* Adaptive waits for a word one process will change need that process only. */
struct owner_wf {
    struct sl_waitfor wf;
    uint32_t proc;
};

double *gauss_row(struct gauss *g, int i);
void gauss_home_rows(struct gauss *g, int p);   /* home=own: process p's rows, node-local */
void gauss_gen_row(struct gauss *g, int i);
void gauss_eliminate_row(double *r, const double *p, int k, int n);
int gauss_owner_running(const struct sl_waitfor *wf);
double gauss_back_substitute(struct gauss *g);
int gauss_maxerr_ok(double maxerr);          /* the check on back_substitute's answer */

/* The two programs: run, check, sl_report. */
void gauss_coarse(struct gauss *g);
void gauss_fine(struct gauss *g);

#endif
