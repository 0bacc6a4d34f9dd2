/*
 * sim_threads.h - the user-level thread programs of Markatos chapter 4 in the simulator: the shared mechanism
 * (sim_threads.c: main, placement, the processes' loops) and the hooks of the apps on it (struct tapp_ops:
 * tools/sim/apps/gauss.c variant=fine, grassfire.c, msort.c). Include after sim.h.
 */
#ifndef SIM_THREADS_H
#define SIM_THREADS_H
#include <stddef.h>
#include <stdint.h>

struct job;
struct sproc;

struct tapp_ops;
/* From an app's setup hook: its thread program, with its hooks (ops). 1: set up (w->threads); 0: ops->setup
   says it is not a thread program; -1: one the model refuses, with a message in err. */
int threads_setup(struct job *j, const struct tapp_ops *ops, char *err, size_t errlen);
/* sp's next action from t in the thread program (after the job's start); 0 when its part is over: the
   caller ends it (join, check, exit). */
int threads_step(struct sproc *sp, uint64_t t);
/* The RESULT keys process 0 reports ("par_us=... copies=... threads=..."). */
const char *threads_keys(struct job *j);
struct sjob;
void threads_report(struct job *j, struct sjob *w, char *buf, size_t len); /* struct sim_prog's report */
void threads_free(void);

/* ---- between sim_threads.c and the apps on it ---- */
#define TH_WINDOW 2 /* apps/gauss/gauss.h FINE_WINDOW: the pivot rows a process keeps */

enum { PL_MCS, PL_LB };

struct uthr {
    int32_t i, k; /* gauss: thread (i, k); grassfire: row (or process, coarse) i of sweep k; k < 0: the set-up */
    int32_t d;    /* its descriptor's slot (sim_threads.c, under a model) */
};

struct fifo {
    struct uthr *v;
    int head, tail, cap;
};

struct tproc {
    struct fifo q;        /* its pinned threads, oldest first */
    uint32_t load;        /* threads placed on it not finished (place.c's load) */
    struct uthr cur;      /* the thread it runs */
    int idle, asleep;
    int paused;           /* it yielded or slept at its last pause: its polling starts again when it runs */
    uint64_t idle_since;
    uint64_t poll_from;   /* its run time when its polling since the last pause began (sim_threads.c idle) */
    int pivcol[TH_WINDOW]; /* gauss mcs: the column each pivot copy holds (-1: none) */
    uint64_t buf, home;   /* under a model: its buffers, its home rows (msort: its chunk of A) */
    uint64_t alt;         /* msort: its chunk of B */
    uint64_t stack;       /* under a model: the stack its threads run on (the library's cached one) */
    uint64_t copies, away, local; /* msort: copies counts remote_keys */
    struct uthr next;     /* the thread the running one makes as it ends */
    int spawn;            /* ... if set */
    int32_t dcache[64];   /* its free descriptors, LIFO (uthread_impl.h THREAD_CACHE = TH_DESCS) */
    int ndcache;
};

struct parked {
    struct uthr u;
    int p;                /* the process it is pinned to */
};

struct tjob {
    const struct tapp_ops *ops; /* the app's hooks */
    int on, place, coarse, P, n, spin;
    int main_at;          /* the process main is on, -1 while it waits */
    int main_at_wait;     /* where it was when it began to wait */
    int mphase, k, i;     /* main's program: phase, round (column, sweep), next thread of the round */
    uint32_t left;        /* threads of the set-up, or of round k, not finished */
    uint64_t made, calls; /* threads made (main included); placement calls (tie-breaking stream) */
    int pend, pend_to;    /* main's creation in progress: the thread is placed when it ends */
    struct uthr pu;
    int checked;          /* process 0 has done its check */
    uint64_t idle_poll;   /* an idle process's polling between two pauses, ns (sim_threads.c idle) */
    uint64_t t0, t1;
    uint64_t mat, words;  /* under a model: one shared array (gauss lb's matrix), the shared words */
    uint64_t desc;        /* under a model: the processes' pin inbox words (a line each) */
    uint64_t *chunks;     /* under a model: the descriptors' 64 KiB chunks (sim_threads.c desc_get) */
    int32_t *dfree;       /* ... sl_malloc's free list of their blocks, LIFO */
    int nchunks, capchunks, ndfree, capfree;
    int rounds, depth;    /* grassfire: sweeps (D + 1), D */
    int *rowmax;          /* grassfire: each row's largest depth */
    void *data;           /* msort: its tree; gauss: ready[], colleft[] (their files) */
    int cond;             /* gauss sync=cond: threads wait for their rows, columns overlap */
    struct parked *parked; /* threads parked in a wait (sync=cond, blocking) */
    int nparked, capparked;
    int leaf, nnodes, nleaves, ncap; /* msort: leaves of at most leaf keys; its nodes (of ncap allocated) */
    uint32_t clo[SL_MAX_PROCS + 1]; /* msort: chunk p holds positions [clo[p], clo[p+1]) */
    struct tproc pr[SL_MAX_PROCS];
    char keys[200];
};

/* An app's hooks into the mechanism (its file's header has its model). Any marked optional may be 0. */
struct tapp_ops {
    int (*setup)(struct job *j, struct tjob *t, char *err, size_t errlen); /* 1 set up, 0 not threads, -1 err */
    uint64_t (*alloc)(struct job *j, struct tjob *t, int h);   /* main's allocations before the run: stall ns */
    int (*first)(const struct tjob *t, int r);                 /* main makes round r's threads first..end-1 */
    int (*end)(const struct tjob *t, int r);                   /*   (first optional: 0) */
    struct uthr (*thread)(const struct tjob *t, int idx, int r); /* main's idx-th of round r (optional: idx) */
    uint32_t (*round_threads)(const struct tjob *t, int r);    /* round r's threads, those made by threads too
                                                                  (optional: end - first) */
    int (*may_start)(const struct tjob *t, int r); /* main may make round r (r = rounds: may return; optional:
                                                      every thread made so far has finished) */
    int (*can_run)(const struct tjob *t, struct uthr u);       /* u's data is ready (optional: 1) */
    int (*done)(struct tjob *t, struct uthr u);                /* u finished: 1 if a waiter may now run (optional) */
    int (*home)(const struct tjob *t, int i, int r);           /* the process holding thread i's data; -1: none */
    uint64_t (*setup_thread)(struct job *j, struct tjob *t, int p, int h); /* process p's set-up thread: ns */
    /* Thread u on process p (hart h): ns, its counts; *spawn set with *next: it makes that thread as it ends. */
    uint64_t (*run)(struct job *j, struct tjob *t, int p, int h, struct uthr u, struct uthr *next, int *spawn);
    uint64_t (*check)(struct job *j, struct tjob *t, int h);  /* process 0 after the run: stall ns (optional) */
    void (*keys)(const struct tjob *t, char *buf, size_t len); /* RESULT's keys */
};
/* The job's info->seed (kernel/info.c): seed= ^ its id x 0x9e3779b97f4a7c15 */
#define TH_JOB_SEED(j) (sim_seed ^ ((uint64_t)(j)->id * 0x9e3779b97f4a7c15UL))
void threads_sums(const struct tjob *t, uint64_t *copies, uint64_t *away, uint64_t *local); /* over processes */
uint64_t threads_copy_ns(uint64_t bytes); /* a row copy: calib.copy_call + copy_double a double */

#endif
