/*
 * sim_calib.c - the simulator's costs: a flat JSON object of numbers in ns (tools/sim/calib/<name>.json,
 * written by `make sim-calibrate`, `schedlab calibrate`), with a "name" string and a "sources" object
 * that says where each number came from (ignored here). Every key below must be present: a calibration
 * that lacks one is refused, never filled with a guess.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

struct calib calib;
static char text[65536]; /* the file, kept for calib_get */

static const struct {
    const char *key;
    double *v;
} keys[] = {
    { "syscall_ns", &calib.syscall },
    { "yield_ns", &calib.yield },
    { "futex_same_hart_ns", &calib.futex_same },
    { "futex_cross_hart_ns", &calib.futex_cross },
    { "empty_call_ns", &calib.empty_call },
    { "uthread_yield_ns", &calib.uthread_yield },
    { "barrier_central_spin_ns", &calib.bar_spin[0] },
    { "barrier_tree_spin_ns", &calib.bar_spin[1] },
    { "barrier_combination_spin_ns", &calib.bar_spin[2] },
    { "barrier_central_block_ns", &calib.bar_block[0] },
    { "barrier_tree_block_ns", &calib.bar_block[1] },
    { "barrier_combination_block_ns", &calib.bar_block[2] },
    { "barrier_twophase_ns", &calib.bar_twophase },
    { "barrier_adaptive_ns", &calib.bar_adaptive },
    { "gang_slot_switch_ns", &calib.slot_switch },
    { "synth_unit_ns", &calib.synth_unit },
    { "oddeven_cx_ns", &calib.oddeven_cx },
    { "gauss_rowop_ns", &calib.gauss_rowop },
    { "hog_unit_ns", &calib.hog_unit },
    { "sleeper_unit_ns", &calib.sleeper_unit },
    { "proc_start_ns", &calib.proc_start },
    { "workers_start_ns", &calib.workers_start },
    { "proc_end_ns", &calib.proc_end },
    { "wake_poll_ns", &calib.wake_poll },
    { "wake_halt_ns", &calib.wake_halt },
    { "futex_wake_kick_ns", &calib.futex_wake_kick },
};

/* The number after "key": in text (the first occurrence, outside "sources" which comes last). */
static int number(const char *text, const char *key, double *v)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(text, pat), *src = strstr(text, "\"sources\"");
    if (!p || (src && p > src))
        return -1;
    p = strchr(p + strlen(pat), ':');
    char *end;
    *v = p ? strtod(p + 1, &end) : 0;
    return p && end != p + 1 && *v >= 0 ? 0 : -1;
}

/* A cost an app model reads by name (its setup hook): the calibration's "key", or dflt where the file has
   none (the model's file says where dflt was measured). A new app's unit needs no field in struct calib. */
double calib_get(const char *key, double dflt)
{
    double v;
    return number(text, key, &v) == 0 ? v : dflt;
}

int calib_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(err, errlen, "cannot open the calibration file %s (make sim-calibrate writes one)", path), -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (number(text, keys[i].key, keys[i].v) < 0)
            return snprintf(err, errlen, "%s: no non-negative number for \"%s\"", path, keys[i].key), -1;
    /* Optional: a loop scheduler's grab. Without it, gauss's row op times the ratio of their instruction counts,
       measured by deterministic QEMU boots (instruction-counted; job=gauss:procs=1,n=160: 7.53 a row op; a
       grab, sched=ss less static at procs=1, 70.8 on sor and tclosure alike). The apps' own units are their
       models' (calib_get). */
    if (number(text, "loop_grab_ns", &calib.loop_grab) < 0)
        calib.loop_grab = calib.gauss_rowop * (70.8 / 7.53);
    /* Optional: the thread apps' costs (sim_threads.c). Defaults measured on deterministic QEMU (a ns is an
       instruction) at CPUS=1: job=gauss:procs=1,n=64|128,variant=fine,sync=barrier,barrier=block, place=mcs
       less variant=coarse gives 616-635 ns a thread (create and run; place.c picks nothing at procs=1), split by
       tbench's spawn_join_ns (201: a spawn, an empty inline run, a join) into creation and the rest; place=lb
       less place=mcs over its row copies fits 53 ns a copy plus 5.0 ns a double (the library's memcpy). */
    static const struct { const char *key; double *v, dflt; } opt[] = {
        { "thread_create_ns", &calib.thread_create, 200 }, { "thread_run_ns", &calib.thread_run, 430 },
        { "copy_call_ns", &calib.copy_call, 53 },          { "copy_double_ns", &calib.copy_double, 5.0 },
    };
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++)
        if (number(text, opt[i].key, opt[i].v) < 0)
            *opt[i].v = opt[i].dflt;
    const char *p = strstr(text, "\"name\"");
    if (!p || sscanf(strchr(p + 6, '"') ? strchr(p + 6, '"') + 1 : "", "%63[A-Za-z0-9_.-]", calib.name) != 1)
        return snprintf(err, errlen, "%s: no \"name\" (letters, digits, . _ -)", path), -1;
    if (calib.yield < calib.syscall || calib.futex_cross < calib.futex_same)
        return snprintf(err, errlen,
                        "%s: yield must cost at least a syscall, a cross-hart hand-off at least a "
                        "same-hart one",
                        path),
               -1;
    return 0;
}
