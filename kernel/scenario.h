/*
 * scenario.h - the scenario language (kernel bootargs): parse and validate every token.
 *
 * Pure logic with no kernel dependency, so it also compiles for the host, where tests/host/ unit-tests
 * it under ASan/UBSan. The kernel supplies what validation needs in struct scen_env: the app specs,
 * the harts, the free memory and which policies this build has.
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include "schedlab/abi.h"

#define SCEN_MAX_JOBS 64
#define SCEN_MAX_OPTS 4
#define SCEN_MAX_POLICIES 16
#define SCEN_MODEL_LEN 256   /* model=<spec>: the canonical spec the launchers pass (tools/model/README.md) */

/* A policy's own scenario option, as a policy declares it (sched.h): name=<one of choices>; its value is
   the index of the choice (default def). "on|off"-style options read as 0 for the first choice. */
struct scen_option {
    char name[16];
    char choices[48];           /* "a|b|c" */
    int def;
    const char *help;           /* one line */
};

/* What the parser needs of a policy: its name and its options. */
struct scen_policy {
    const char *name;
    const struct scen_option *opts;
    int nopts;
};

struct scen_job {
    char app[16];
    const struct sl_appspec *spec;
    int procs;
    uint64_t at_us;
    int adaptive;               /* adapt=yes|no; default: the spec's SL_APP_ADAPTIVE */
    char args[SL_ARGS_MAX];     /* every app key in spec order, defaults filled in: "n=256,sync=barrier" */
    uint64_t mem_bytes;         /* the spec's estimate for these keys */
    uint64_t mem_limit;         /* what the job may take while it runs (stacks, SYS_alloc): mem=, or the
                                   estimate with slack (SCEN_MEM_SLACK) */
};

struct scenario {
    char policy[16];
    uint64_t quantum_us;
    uint64_t seed;
    int trace;
    int irq_sbi;                /* irq=sbi: the SBI for timers and IPIs even where S-mode could do them */
    int calib;                  /* calib=on: measure and print the calibration card (CALIB) before t0 */
    uint64_t timeout_us;        /* 0 = no watchdog */
    int clock_virtual;          /* clock=virtual: deterministic mode, times count instructions (vclock.h) */
    char model[SCEN_MODEL_LEN]; /* model=<canonical spec>: the machine-model plugin is loaded (tools/model/); "" none */
    int idle_poll;              /* idle=poll: an idle hart polls and never halts (idle=auto: polls, then halts) */
    int popt[SCEN_MAX_OPTS];    /* the chosen policy's options, in its table's order: index into choices */
    int njobs;
    struct scen_job jobs[SCEN_MAX_JOBS];
};

struct scen_env {
    int nharts;
    uint64_t free_bytes;                                 /* memory the jobs can have */
    const struct sl_appspec *(*lookup)(const char *app); /* NULL if there is no such app */
    const char *apps;                                    /* "fault, gauss, ..." for messages */
    const struct scen_policy *policy_table;              /* the policies built, with their options; the
                                                            first is the default */
    int npolicies;
    int trace_built;                                     /* trace=on is accepted only when tracing exists */
};

#define SCEN_DEFAULT_QUANTUM_US 10000
#define SCEN_DEFAULT_CALIB 1    /* calib=on: the card costs a few ms before t0 (kernel/calib.c) */
#define SCEN_MIN_QUANTUM_US 100
#define SCEN_MAX_QUANTUM_US 10000000
#define SCEN_MAX_TIME_US (24ULL * 3600 * 1000000)
/* a job's default memory limit: its estimate + 1/8 + 256 KiB (estimates are formulas; the slack keeps an
   honest app within them however its keys round) */
#define SCEN_MEM_SLACK(est) ((est) + (est) / 8 + 256 * 1024)

/* 0 on success; otherwise -1 and err holds one sentence naming the token and what was expected, in
   printable ASCII (other bytes of the token become '?'). */
int scenario_parse(const char *bootargs, const struct scen_env *env, struct scenario *out, char *err,
                   size_t errlen);

/* The value of key in a canonical args string ("k=v,k=v"), copied into val; 0 if found. */
int scenario_arg(const char *args, const char *key, char *val, size_t vallen);

#endif
