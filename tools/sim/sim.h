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
 *             program (its app's model, tools/sim/apps/<app>.c) is a sequence of compute segments and
 *             waits; a compute segment advances only while the process runs, so preemption stretches it.
 *   costs     every overhead (syscall, switch, futex hand-off, IPI, barrier episodes, work units) comes
 *             from the calibration file (struct calib), measured on QEMU at CPUS=2.
 *
 * Locking: none; one host thread. sched_lock exists for the policies' headers only.
 */
#ifndef SIM_H
#define SIM_H

#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include "../../kernel/sched/sched.h"
#include "../../lib/base/rng.h"

/* ---- calibration (sim_calib.c): ns unless named otherwise ---- */
struct calib {
    char name[64];
    double syscall, yield, futex_same, futex_cross, empty_call, uthread_yield;
    double bar_spin[3], bar_block[3], bar_twophase, bar_adaptive; /* [shape] at 2 procs on 2 harts */
    double slot_switch, synth_unit, oddeven_cx, gauss_rowop, hog_unit, sleeper_unit;
    double proc_start, workers_start, proc_end; /* process 0's serial parts: see sim_program.c's header */
    double wake_poll, wake_halt; /* a wake to the woken running on an idle hart, polling / halted (kbench) */
    double futex_wake_kick;      /* the waker's futex_wake when it kicks an idle hart (kbench wake_call_ns) */
    double loop_grab;            /* a loop scheduler's grab in the app (sim_loops.c); optional (sim_calib.c: else
                                    from gauss_rowop) */
    double thread_create, thread_run, copy_call, copy_double; /* user-level threads (sim_threads.c); optional */
    /* an app's own units are its model's: calib_get (sor_cell_ns, tclosure_step_ns, adjoint_madd_ns,
       grassfire_pixel_ns, msort_key_ns: tools/sim/apps/) */
};
extern struct calib calib;
int calib_load(const char *path, char *err, size_t errlen);
double calib_get(const char *key, double dflt); /* an app's own unit by name, else dflt (sim_calib.c) */

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

/* ---- processes and jobs: what the engine keeps of each, beside the kernel's struct proc and job ---- */
enum wait_kind { W_SPIN, W_BLOCK, W_TWOPHASE, W_ADAPTIVE };
enum act { A_COMPUTE, A_SPIN, A_BLOCKED, A_EXIT };

struct sbar;
struct sim_app;
struct sim_prog;

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
    int life;                /* process 0: enum life in sim_program.c; the others: 1 while waiting for go */
};

#define SIM_STATE_B 128      /* an app model's own per-job state (struct sjob's state) */

struct sjob {                /* a job's workload, beside its struct job */
    const struct sim_app *app; /* its model (tools/sim/apps/<app>.c) */
    enum wait_kind wait;
    int shape;
    struct sbar *bar;
    int fg;                  /* counts as foreground */
    int allot;               /* partition's allotment (info_set_allotment) */
    int sync_timed;          /* its waits time themselves (info_set_sync_timed, abi.h sync_timed) */
    int adaptive;            /* process control (adapt=yes under a policy that allots harts) */
    int loops;               /* its rows from a loop scheduler (sim_loops.c) */
    int threads;             /* a user-level thread program (sim_threads.c) */
    int active;              /* adaptive: processes not suspended */
    int16_t host[SL_MAX_PROCS]; /* adaptive: worker -> the process that runs it */
    int started;             /* dispatched once: job->start is set */
    uint64_t par_t0, par_t1; /* process 0 leaves the first barrier, and the last: the apps' par_us */
    int spawned;             /* processes created so far (process 0 creates the others) */
    int go;                  /* process 0 has handed the workers out: the others may start */
    struct sproc *joiner;    /* process 0, asleep until the others have exited */
    struct sl_rng rng;       /* the job's random work amounts (lib/base/rng.h), from seed= */
    _Alignas(16) unsigned char state[SIM_STATE_B]; /* the model's own: its keys, then what it derives */
};

/* The model's state of job w as its own type T (at most SIM_STATE_B bytes, checked at compile time). */
#define SIM_STATE(w, T) ((T *)(w)->state + 0 * sizeof(char[sizeof(T) <= SIM_STATE_B ? 1 : -1]))

extern struct sjob sjobs[NJOB];
extern struct sproc *sprocs[NJOB][SL_MAX_PROCS];
extern int fg_live;           /* foreground jobs not done (the hog runs until none is left) */
static inline struct sjob *sjob_of(const struct job *j) { return &sjobs[j->id - 1]; }

/*
 * ---- app models: plug-ins to the engine (sim_apps.c; how to add one: docs/guide/adding-a-sim-app.md) ----
 *
 * Each app the simulator runs is one file, tools/sim/apps/<app>.c, which declares a struct sim_app and
 * registers it with SIM_APP(); the link collects the tables in the section .sim_apps (tools/sim/sections.ld),
 * as the kernel's policies register with SCHED_CLASS, so the engine has no list of apps and no app's name.
 * The engine reaches a model only through its table; a model reaches the engine only through the services
 * below (core_*, sim_post of an EV_STEP, sync_*) and the model kit above them (sim_kit.h: barriers, the
 * job's life, loop schedulers, thread programs, memory touches). tools/sim/LAYERS states the layers and
 * `make layers` checks them.
 *
 * A hook not given (0) does what its comment says instead.
 */
struct sim_key {
    const char *name;        /* the app's key (its spec, apps/<app>.c), an integer */
    unsigned off;            /* where in the model's state it goes, an int64_t: SIM_KEY */
};
#define SIM_KEY(T, field) { #field, (unsigned)offsetof(T, field) }

struct sim_app {
    const char *name;        /* job=<name>: the app of build/apps it models */
    const struct sim_key *keys; /* integer keys read into the model's state before setup ({0}-ended; may be 0) */
    /* its memory footprint (sim_start.c): the library's heap at start-up, KiB, and whether each process
       adds a worker's thread stack to it; also: it runs its workers by sl_run_workers (sync_units) */
    unsigned heap_kb;
    int workers;
    int control;             /* process control is modelled (adapt=yes under a policy that allots harts) */
    /* Set the job up after its keys are read: refuse what is not modelled (-1 with a message in err,
       printed as the kernel's ERROR line), derive the rest. 0: nothing more to set up. */
    int (*setup)(struct job *j, struct sjob *w, char *err, size_t errlen);
    /* A process of the job was created at t; the engine has set it to start its program at its first
       dispatch. 0: nothing more. */
    void (*start)(struct sproc *sp, uint64_t t);
    /* The process's current action ended at t, on its hart: post its next (core_compute, core_spin,
       core_block, core_exit, ...). Required. */
    void (*step)(struct sproc *sp, uint64_t t);
    /* A process found spinning when it gets its hart again keeps spinning with nothing to do (1), or is
       stepped at once (0: its wait may be over or needs re-deciding). 0: always stepped. */
    int (*spins)(const struct sproc *sp);
    /* The process lost its hart at t (others may re-decide their waits). 0: nothing. */
    void (*descheduled)(struct sproc *sp, uint64_t t);
    /* The run is over: give back what setup took for the job. 0: nothing. */
    void (*free)(struct job *j);
    const struct sim_prog *prog; /* its hooks into the model kit's programs (sim_kit.h), or 0 */
};

/* Register app model A (a struct sim_app) at file scope: a pointer in the link's .sim_apps section. */
#define SIM_APP(A) \
    static const struct sim_app *const sim_app_ptr_##A __attribute__((used, section(".sim_apps"))) = &(A)

const struct sim_app *sim_app_find(const char *name);            /* 0: not modelled */
int sim_apps_check(char *err, size_t errlen);                    /* each named, with a step, no two alike */
const char *sim_app_names(void);                                 /* "adjoint,chaos,...": sorted, for BOOT */
int sim_app_setup(struct job *j, char *err, size_t errlen);      /* its model, keys and setup */
void sim_app_free(void);                                         /* every job's models' free, the processes */

/* ---- the engine's services to the models (sim_core.c): the only way a model changes the run ---- */
static inline struct sproc *sproc_of(struct proc *p) { return (struct sproc *)p; }
void core_compute(struct sproc *sp, uint64_t t, uint64_t ns);  /* run ns of work from t */
void core_spin(struct sproc *sp, uint64_t t);                  /* burn the hart until released */
void core_block(struct sproc *sp, uint64_t t, uint64_t timeout_ns); /* leave the hart asleep; 0: forever */
void core_yield(struct sproc *sp, uint64_t t);                 /* give the hart away, still ready (SYS_yield) */
int core_wake(struct sproc *sp, uint64_t t); /* make a sleeper ready at t: 1 if that sent an IPI to another hart */
void core_release_spinner(struct sproc *sp, uint64_t t);       /* a spinner's wait is over at t */
void core_exit(struct sproc *sp, uint64_t t);
int core_running(const struct sproc *sp);
uint64_t core_unblock_ns(void);                               /* a woken sleeper's way back from futex_wait */
void core_spawn(struct job *j, uint64_t t);                   /* create its next process (proc_create) */
/* and sim_post(t, EV_STEP, -1, sp, 0): step sp at t if it still runs then and did nothing else meanwhile */

/* ---- the engine's side (sim_core.c), for sim_main.c ---- */
void core_init(int harts, const struct sched_class *cls, uint64_t quantum_ns, uint64_t seed);
void core_admit(struct job *j, uint64_t t);                   /* admit j and create its process 0 */
extern uint64_t sim_makespan, sim_events;
extern uint64_t sim_seed;                                     /* the scenario's seed= */
void sim_job_done(struct job *j);                             /* sim_main.c: RESULT, and SUMMARY after the last */
void sim_unwait(struct proc *p);                              /* sim_core.c: a killed waiter's timeout made stale */

/* ---- sync statistics (sim_sync.c): what a job's processes publish (abi.h struct sl_sync) ---- */
void sync_job_setup(struct job *j);                         /* zero the job's statistics */
void sync_units(struct job *j, uint32_t n);                 /* the worker run's units (process 0's) */
void sync_arrive(struct sproc *sp, int workers);            /* it arrives at a barrier for that many workers */
void sync_waits(struct sproc *sp, uint64_t t);              /* a wait begins at t (timed while sync_timed) */
void sync_waited(struct sproc *sp, uint64_t t, int count);  /* ... and is over (count: one more wait) */
void sync_idle_begin(struct sproc *sp, uint64_t t);         /* a thread program's process idles */
void sync_idle_end(struct sproc *sp, uint64_t t, int count); /* ... and finds work (count) or the run ends */
void sync_stats(FILE *f);                                   /* --stats: what each job published */

#endif
