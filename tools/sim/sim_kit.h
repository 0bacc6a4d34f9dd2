/*
 * sim_kit.h - the model kit: what the app models (tools/sim/apps/) are built from, above the engine (sim.h)
 * and below the apps (tools/sim/LAYERS). Include after sim.h.
 *
 *   sim_program.c  a job's life around its program (process 0's set-up, creating the others, handing the
 *                  workers out, joining them, its check and RESULT keys) and the barrier program (iterations
 *                  of work, a barrier after each), driven by the hooks of an app's struct sim_prog
 *   sim_barrier.c  the barrier, its waits, process control at its safe points
 *   sim_loops.c    the library's loop schedulers, one grab at a time
 *   sim_threads.c  user-level thread programs (sim_threads.h)
 *   sim_touch.c    the apps' arrays, process 0's frame, the processes' stacks under --model (sim_mem.h)
 */
#ifndef SIM_KIT_H
#define SIM_KIT_H
#include <stddef.h>
#include <stdint.h>
#include "sim.h"

/* ---- the job's life and the barrier program (sim_program.c) ---- */

/* An app's hooks into the kit's programs (struct sim_app's prog). Any may be 0: it adds nothing. */
struct sim_prog {
    /* process 0's set-up, ns beyond calib.proc_start: its arrays (before the library's heap is zeroed:
       sim_start.c), then the rest (after it) */
    uint64_t (*arrays_ns)(struct sproc *sp);
    uint64_t (*setup_ns)(struct sproc *sp);
    /* process 0's check after the program, ns beyond calib.proc_end */
    uint64_t (*check_ns)(struct sproc *sp);
    /* RESULT's keys into buf (0: par_us= for a barrier program that timed its part, else none) */
    void (*report)(struct job *j, struct sjob *w, char *buf, size_t len);
    /* the barrier program: worker idx's iteration sp->iter, ns of work and stall (*last: it is the last) */
    uint64_t (*work)(struct sproc *sp, struct sjob *w, int idx, int *last);
    int (*last)(const struct sjob *w, uint64_t i); /* iteration i is the program's last (required) */
    /* a loop program's next chunk of loop sp->iter: 1 with its ns, 0 when the loop is done for sp (its last
       empty grab's ns); 0: the program is work's */
    int (*chunk)(struct sproc *sp, uint64_t *ns);
    uint64_t (*gen_ns)(struct sproc *sp, int idx); /* worker idx's input, before the first barrier */
};

enum life { L_SETUP, L_SPAWN, L_HANDOUT, L_PROGRAM, L_JOIN, L_CHECK }; /* process 0's sp->life */
int job_begin(struct sproc *sp, uint64_t t);     /* the job's start: 1 if it took sp's next action */
void job_end(struct sproc *sp, uint64_t t);      /* sp's program is over at t: exit (process 0: join, check) */
int job_par_us(const struct sjob *w, uint64_t *us); /* the barrier program's timed part, if it has one */
void job_report(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* RESULT's keys */

/* The barrier program: an app's step, start, spins and descheduled hooks; bprog_setup from its setup hook
   (its barrier, its wait kind and shape from barrier= and shape=), bprog_free from its free hook. */
int bprog_setup(struct job *j, struct sjob *w, char *err, size_t errlen);
void bprog_start(struct sproc *sp, uint64_t t);
void bprog_step(struct sproc *sp, uint64_t t);
int bprog_spins(const struct sproc *sp);
void bprog_free(struct job *j);
/* Iteration i is the barrier program's last (its app's last hook). */
static inline int bprog_last(const struct sjob *w, uint64_t i) { return w->app->prog->last(w, i); }
/* A thread program's step (sim_threads.c runs it). */
void tprog_step(struct sproc *sp, uint64_t t);

/* ---- the barrier (sim_barrier.c): the last of n to arrive releases the episode ---- */
struct sbar {
    int n, arrived, shape;
    enum wait_kind wait;
    uint64_t episode; /* episodes released so far */
    struct sproc *waiter[SL_MAX_PROCS];
    int nwait;
};

struct sbar *barrier_new(int n, enum wait_kind wait, int shape);
void barrier_arrive(struct sproc *sp, uint64_t t);         /* sp arrives at its barrier sp->bar */
void barrier_wait_turn(struct sproc *sp, uint64_t t);      /* spin or start blocking, as its kind says now */
int barrier_released(const struct sproc *sp);              /* its episode is released */
void barrier_waited(struct sproc *sp, uint64_t t);         /* its wait ended at t, released */
void barrier_descheduled(struct sproc *sp, uint64_t t);    /* sp lost its hart (adaptive waiters look) */
void barrier_stats(FILE *f);                               /* --stats: the barriers' futex calls */

/* ---- the loop schedulers (sim_loops.c) ---- */
struct sl_chunk;
int loops_setup(struct job *j, const char *sched, char *err, size_t errlen);
int loops_program(struct job *j, struct sjob *w, char *err, size_t errlen); /* a loop program: sched= or static */
int loops_grab(struct sproc *sp, int64_t lo, int64_t hi, struct sl_chunk *c, uint64_t *ns); /* 0: loop done */
void loops_split(struct job *j, const uint64_t *w, int64_t n); /* best-static's weighted parts */
void loops_counts(struct job *j, uint64_t *grabs, uint64_t *remote);
void loops_free(void);

/* ---- memory touches every model shares (sim_touch.c; sim_mem.h has the model) ---- */
void touch_setup(struct job *j);                                 /* nothing allocated for the job yet */
uint64_t touch_array_at(struct job *j, uint64_t bytes, int hart, uint64_t *zero_ns); /* the job's array */
uint64_t touch_array_base(struct job *j);                        /* ... 0 before its first use */
uint64_t touch_frame(struct job *j);                             /* process 0's stack frame (main's locals) */
uint64_t touch_stack(struct sproc *sp);                          /* the process's own stack (its calls' frames) */
uint64_t touch_zip(int job, int h, uint64_t src, int src_b, uint64_t dst, int dst_b, int store, uint64_t bytes);
uint64_t touch_region(struct job *j, int h, uint64_t bytes, uint64_t *base, uint64_t *zero); /* at first use */
uint64_t touch_alloc_zeroed(struct job *j, int h, uint64_t bytes, uint64_t *ns); /* sys_alloc's fresh pages */
uint64_t touch_own(struct job *j, int idx, int h, uint64_t bytes, uint64_t *ns); /* worker idx's node-local block */
uint64_t touch_own_base(struct job *j, int idx);                 /* ... 0 before its first use */

/* ---- the library's allocator, as an app's blocks see it (sim_alloc.c) ---- */
struct sim_heap {
    uint64_t chunk[8], freed[8], big_freed, big_freed_b; /* the small classes' chunks, freed blocks */
    uint32_t left[8];
};
uint64_t alloc_pages(uint64_t bytes);                          /* a big block's pages, header in */
uint64_t alloc_block(struct sim_heap *a, int id, int h, uint64_t bytes, uint64_t *ns); /* 0: not modelled */
void alloc_unblock(struct sim_heap *a, uint64_t b, uint64_t bytes);
uint64_t alloc_use(struct sim_heap *a, int id, int h, uint64_t bytes, int elem, int rw, uint64_t *addr);
static inline int hart_of(const struct sproc *sp) { return sp->p.on_cpu ? sp->p.on_cpu->id : 0; }

#endif
