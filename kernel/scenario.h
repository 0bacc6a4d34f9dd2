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
#define SCEN_MAX_OPTS 8         /* options of one policy */
#define SCEN_MAX_JOB_KEYS 4     /* per-job keys of one policy */
#define SCEN_MAX_POLICIES 16
#define SCEN_MODEL_LEN 256   /* model=<spec>: the canonical spec the launchers pass (tools/model/README.md) */

/* A policy's own scenario option (name=value, once per run) or per-job key (job=app:name=value), as a
   policy declares it (sched.h). Either a choice: name=<one of choices>, whose value is the index of the
   choice ("off|on" reads 0 for off), default def; or, with choices empty, a whole number:
   name=<min..max>, whose value is the number, default def. A name has at most 23 characters, a choice
   list at most 63. */
struct scen_option {
    char name[24];
    char choices[64];           /* "a|b|c"; "" for a number */
    long def;                   /* a choice's index, or the number */
    const char *help;           /* one line */
    long min, max;              /* a number's range (choices "") */
};

/* What the parser needs of a policy: its name, its options and its per-job keys. */
struct scen_policy {
    const char *name;
    const struct scen_option *opts;
    int nopts;
    const struct scen_option *jkeys;
    int njkeys;
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
    long pkey[SCEN_MAX_JOB_KEYS];   /* the chosen policy's per-job keys, in its table's order, defaults
                                       filled in (as popt: a choice's index or the number) */
    char pargs[96];             /* those given, canonical: "tickets=3" (for the RESULT line) */
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
    int perturb;                /* perturb=<seed>[,depth=<d>]: a perturbed deterministic boot (perturb.h) */
    uint64_t perturb_seed;
    int perturb_depth;
    int list_keys;              /* list=keys: print the key table (KEY lines) after BOOT; no job= needed */
    long popt[SCEN_MAX_OPTS];   /* the chosen policy's options, in its table's order: a choice's index or the
                                   number */
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
    int list_built;                                      /* list=keys is accepted only where the caller prints
                                                            the key table (the kernel's launcher) */
};

#define SCEN_DEFAULT_QUANTUM_US 10000
#define SCEN_DEFAULT_PERTURB_DEPTH 3 /* perturb=<seed>: PCT's depth, two change points a hart */
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

/* One key of the scenario language as its table declares it: a global setting (scenario_setting) or a key
   every job has (scenario_job_key). The parser dispatches on these tables, the messages list their names, and
   the KEY lines (scenario_key_line) print them, so the language, its errors and its reference cannot differ. */
struct scen_keydoc {
    const char *name;
    const char *values;         /* what it takes, no spaces: "on|off", "<n>us|<n>ms|<n>s", "<n>" */
    long long min, max;         /* a number's range in its unit (us for a time); min > max: no range */
    const char *unit;           /* "us" for a time, "" otherwise */
    const char *def;            /* its default as a token gives it ("10ms"); "" when help says it in words */
    const char *help;           /* one line */
};
const struct scen_keydoc *scenario_setting(int i);   /* the i-th global setting, NULL past the last */
const struct scen_keydoc *scenario_job_key(int i);   /* the i-th key every job has, NULL past the last */

/* One KEY line of the key table (list=keys; tools/docs/ reads them), without its newline, into buf; returns
   snprintf's length. Fields are key=value without spaces, help= last and to the end of the line:
     KEY scope=<s> name=<n> values=<v> range=<min>..<max> default=<d> help=<one line>
   scope: setting, job (every job's keys), option:<policy>, jobkey:<policy>, app:<app> (an app's own keys);
   an app itself is scope=app with values=<its flags> and help=<its about line>. range= only for a number. */
int scenario_key_line(char *buf, size_t len, const char *scope, const struct scen_keydoc *k);
int scenario_option_line(char *buf, size_t len, const char *scope, const struct scen_option *o);
int scenario_app_line(char *buf, size_t len, const char *app, const struct sl_appspec *spec);
int scenario_appkey_line(char *buf, size_t len, const char *app, const struct sl_keyspec *k);

/* The value of key in a canonical args string ("k=v,k=v"), copied into val; 0 if found. */
int scenario_arg(const char *args, const char *key, char *val, size_t vallen);

#endif
