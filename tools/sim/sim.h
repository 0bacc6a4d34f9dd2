/*
 * sim.h - the schedlab simulator: the kernel's own policies (kernel/sched/<policy>.c, slots.c, allot.c,
 * classes.c), process and job state machine (kernel/sched/life.[ch]), console lines (kernel/contract.c),
 * scenario parser (kernel/scenario.c) and trace dump (kernel/trace.c), unchanged, on simulated harts
 * (sim_core.c: the hart side of the core) and a discrete-event engine.
 *
 * The model (read this first)
 *   time      one global virtual clock in ns (timebase 1 GHz); each hart also keeps the time of the last
 *             event it handled (its own clock). Events are handled in (time, sequence) order, so a run is
 *             a pure function of the scenario, the seed and the calibration: same input, same bytes.
 *   hart      struct cpu, as in the kernel. It runs one process (c->cur) or idles (IDLE_HALT). A hart
 *             acts only in events: its quantum tick, an IPI (sched_ipi, sched_kick, sched_preempt of
 *             another hart), or the running process's own step (a compute segment ending, a spinner
 *             seeing its barrier release). After each event on a hart the core does what the kernel does
 *             on the way back to user: leave the process if need_resched, and dispatch if it idles.
 *   process   struct proc (the kernel's) inside struct sproc (its workload's program counter). Its
 *             program (sim_work.c) is a sequence of compute segments and waits; a compute segment
 *             advances only while the process runs, so preemption stretches it.
 *   costs     every overhead (syscall, switch, futex hand-off, IPI, barrier episodes, work units) comes
 *             from the calibration file (struct calib), measured on QEMU at CPUS=2.
 *
 * Locking: none; one host thread. sched_lock exists for the policies' headers only.
 */
#ifndef SIM_H
#define SIM_H

#include <stdio.h>
#include <stdint.h>
#include "../../kernel/sched/sched.h"
#include "../../lib/base/rng.h"

/* ---- calibration (sim_calib.c): ns unless named otherwise ---- */
struct calib {
    char name[64];
    double syscall, yield, futex_same, futex_cross, empty_call, uthread_yield;
    double bar_spin[3], bar_block[3], bar_twophase, bar_adaptive; /* [shape] at 2 procs on 2 harts */
    double slot_switch, synth_unit, oddeven_cx, gauss_rowop, hog_unit, sleeper_unit;
    double proc_start, workers_start, proc_end; /* process 0's serial parts: see sim_work.c's header */
    double wake_poll, wake_halt; /* a wake to the woken running on an idle hart, polling / halted (kbench) */
    double futex_wake_kick;      /* the waker's futex_wake when it kicks an idle hart (kbench wake_call_ns) */
    double sor_cell;             /* sor: one cell's update; optional (sim_calib.c: else from gauss_rowop) */
    double tclosure_step, adjoint_madd; /* tclosure's inner step, adjoint's multiply-add; optional, as sor_cell */
    double loop_grab;            /* a loop scheduler's grab in the app (sim_loops.c); optional, as sor_cell */
    double thread_create, thread_run, copy_call, copy_double; /* user-level threads (sim_threads.c); optional */
    double grassfire_pixel;      /* grassfire: one pixel's step (sim_tapps.c); optional */
    double msort_key;            /* msort: a key's share of a merge level (sim_tapps.c); optional */
};
extern struct calib calib;
int calib_load(const char *path, char *err, size_t errlen);

/* ---- the engine (sim_core.c) ---- */
enum sim_ev { EV_TICK, EV_IPI, EV_STEP, EV_ARRIVE, EV_TIMEOUT };

struct sim_event {
    uint64_t t, seq;
    int kind, hart;
    struct sproc *sp; /* EV_STEP / EV_TIMEOUT: the process; stale when gen differs */
    uint64_t gen;
    struct job *job;  /* EV_ARRIVE */
};

void sim_post(uint64_t t, int kind, int hart, struct sproc *sp, struct job *j);

/* t0, the scenario's time 0, on the simulated clock: 1 ns, not 0, because the core takes a zero time as
   "not yet" (life.h: a job's start is set at its first dispatch if it is still 0), as the kernel's clock,
   running since boot, never reads 0 at t0. Every line prints times relative to it. */
#define SIM_T0 1UL

/* How sim_run ended: every job done, the scenario's timeout= (simulated time), the host-time budget, or
   stuck: nothing but ticks can happen and for SIM_STUCK_QUANTA quanta no hart got a process to run. */
enum sim_end { SIM_DONE, SIM_TIMEOUT, SIM_HOST_LIMIT, SIM_STUCK };
#define SIM_STUCK_QUANTA 1000
enum sim_end sim_run(uint64_t limit_ns, double host_limit_s);
extern int sim_all_done;

/* ---- what the simulator reads of the kernel it stands for (sim_elf.c) ---- */
void sim_load_apps(const char *dir);                 /* every app ELF there, as the kernel embeds them */
const struct sl_appspec *sim_app_spec(const char *app);
const char *sim_app_list(void);                      /* "bbench, chaos, ...": the kernel's own list */
int sim_free_bytes(const char *kernel, uint64_t mem_bytes, int harts, uint64_t *free_bytes, char *err,
                   size_t errlen);                   /* the kernel's free memory at launcher_init */

/* ---- workload programs (sim_work.c) ---- */
enum wait_kind { W_SPIN, W_BLOCK, W_TWOPHASE, W_ADAPTIVE };
enum act { A_COMPUTE, A_SPIN, A_BLOCKED, A_EXIT };

struct sbar;

struct sproc {
    struct proc p;           /* the kernel's: the policies see only this */
    uint64_t gen;            /* bumped whenever its posted events become stale */
    enum act act;            /* what it does while it has a hart */
    uint64_t left;           /* A_COMPUTE: ns of work still to do */
    uint64_t seg_start;      /* when it last started running its segment */
    uint64_t spin_until;     /* twophase: block when spinning past this */
    uint64_t iter;           /* the program's loop counter */
    int phase;               /* the program's position within an iteration */
    struct sbar *bar;        /* the barrier it waits at (A_SPIN / A_BLOCKED) */
    uint64_t episode;        /* the barrier episode it waits for */
    int waiting;             /* at its barrier until the episode is released */
    int pending_block;       /* it is in the futex_wait system call (a compute segment) */
    int suspended;           /* process control: asleep at a safe point, its workers hosted elsewhere */
    int starting;            /* before the workers' first barrier (the apps start their clock after it) */
    int life;                /* process 0: enum life in sim_work.c; the others: 1 while waiting for go */
};

struct sjob {                /* a job's workload, beside its struct job */
    int app;                 /* enum in sim_work.c */
    int64_t k[6];            /* its keys, parsed */
    enum wait_kind wait;
    int shape;
    struct sbar *bar;
    int fg;                  /* counts as foreground */
    int allot;               /* partition's allotment (info_set_allotment) */
    int sync_timed;          /* its waits time themselves (info_set_sync_timed, abi.h sync_timed) */
    int adaptive;            /* process control (adapt=yes under a policy that allots harts) */
    int loops;               /* gauss sched= other than static: its rows from a loop scheduler (sim_loops.c) */
    int threads;             /* a user-level thread program (sim_threads.c): gauss variant=fine */
    int active;              /* adaptive: processes not suspended */
    int16_t host[SL_MAX_PROCS]; /* adaptive: worker -> the process that runs it */
    int started;             /* dispatched once: job->start is set */
    uint64_t par_t0, par_t1; /* process 0 leaves the first barrier, and the last: the apps' par_us */
    int spawned;             /* processes created so far (process 0 creates the others) */
    int go;                  /* process 0 has handed the workers out: the others may start */
    struct sproc *joiner;    /* process 0, asleep until the others have exited */
    struct sl_rng rng;       /* the job's random work amounts (lib/rng.h), from seed= */
};

/* A barrier (sim_barrier.c): the last of n to arrive releases the episode. */
struct sbar {
    int n, arrived, shape;
    enum wait_kind wait;
    uint64_t episode; /* episodes released so far */
    struct sproc *waiter[SL_MAX_PROCS];
    int nwait;
};

/* sim_barrier.c: the barrier, process control at its safe points, the sync statistics */
void barrier_job_setup(struct job *j);                     /* zero the job's sync statistics */
struct sbar *barrier_new(int n, enum wait_kind wait, int shape);
void barrier_arrive(struct sproc *sp, uint64_t t);         /* sp arrives at its barrier sp->bar */
void barrier_wait_turn(struct sproc *sp, uint64_t t);      /* spin or start blocking, as its kind says now */
int barrier_released(const struct sproc *sp);              /* its episode is released */
void barrier_waited(struct sproc *sp, uint64_t t);         /* its wait ended at t, released */
void sync_idle_begin(struct sproc *sp, uint64_t t);       /* a thread program's process idles (sim_barrier.c) */
void sync_idle_end(struct sproc *sp, uint64_t t, int count); /* ... and finds work (count) or the run ends */
void sync_units(struct job *j, uint32_t n);              /* the worker run's units (abi.h struct sl_sync) */
void barrier_descheduled(struct sproc *sp, uint64_t t);    /* sp lost its hart (adaptive waiters look) */
void barrier_stats(FILE *f);                               /* --stats: the barriers' futex calls */
int work_last_iteration(const struct sjob *w, uint64_t i); /* sim_work.c: iteration i is the program's last */

extern struct sjob sjobs[NJOB];
extern struct sproc *sprocs[NJOB][SL_MAX_PROCS];
extern int fg_live;

int work_setup(struct job *j, char *err, size_t errlen);  /* parse keys into sjobs[j->id-1] */
void work_start(struct sproc *sp, uint64_t t);             /* first dispatch of a process */
void work_step(struct sproc *sp, uint64_t t);              /* its current action is over: the next one */
void work_dispatched(struct sproc *sp, uint64_t t);        /* it got a hart again */
void work_descheduled(struct sproc *sp, uint64_t t);       /* it lost its hart (adaptive waiters look) */
const char *work_models(void);
void work_stats(FILE *f); /* --stats: the barriers' futex calls */
void work_free(void);

/* ---- the simulated core (sim_core.c): what work_*() may ask of it ---- */
static inline struct sproc *sproc_of(struct proc *p) { return (struct sproc *)p; }
void core_compute(struct sproc *sp, uint64_t t, uint64_t ns);  /* run ns of work from t */
void core_spin(struct sproc *sp, uint64_t t);                  /* burn the hart until released */
void core_block(struct sproc *sp, uint64_t t, uint64_t timeout_ns); /* leave the hart asleep; 0: forever */
int core_wake(struct sproc *sp, uint64_t t); /* make a sleeper ready at t: 1 if that sent an IPI to another hart */
void core_release_spinner(struct sproc *sp, uint64_t t);       /* a spinner's wait is over at t */
void core_exit(struct sproc *sp, uint64_t t);
int core_running(const struct sproc *sp);
uint64_t core_unblock_ns(void);                               /* a woken sleeper's way back from futex_wait */
void core_init(int harts, const struct sched_class *cls, uint64_t quantum_ns, uint64_t seed);
void core_admit(struct job *j, uint64_t t);                   /* admit j and create its process 0 */
void core_spawn(struct job *j, uint64_t t);                   /* create its next process (proc_create) */
extern uint64_t sim_makespan, sim_events;
extern uint64_t sim_seed;                                     /* the scenario's seed= */
void sim_job_done(struct job *j);                             /* sim_main.c: RESULT, and SUMMARY after the last */
void sim_unwait(struct proc *p);                              /* sim_core.c: a killed waiter's timeout made stale */

#endif
