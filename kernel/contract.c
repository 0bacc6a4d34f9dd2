/*
 * contract.c - BOOT, RESULT and SUMMARY, the console contract's lines (contract.h). The kernel prints them
 * through kprintf, which guarantees they start a line and are written whole (console.c); the simulator
 * prints the same text on stdout. Only snprintf of the C library is used (the kernel's printf.c, or the
 * host's), so the file builds unchanged for the kernel, the simulator and the host tests.
 */
#include "contract.h"

int contract_boot(char *buf, size_t len, const struct contract_boot *b)
{
    return snprintf(buf, len,
                    "BOOT harts=%d nodes=%d mem_mb=%lu policies=%s apps=%s boot_hart=%d boot_us=%lu background=%s "
                    "options=%s timer=%s ipi=%s clock=%s jobkeys=%s idle=%s model=%s cycle_ps=%lu checks=%s%s",
                    b->harts, b->nodes, b->mem_mb, b->policies, b->apps, b->boot_hart, b->boot_us, b->background,
                    b->options, b->timer, b->ipi, b->clock, b->jobkeys, b->idle, b->model, b->cycle_ps,
                    b->checks ? b->checks : "off", b->extra);
}

int contract_verdict(const struct job *j, char *why, size_t len)
{
    why[0] = 0;
    if (j->killed)
        snprintf(why, len, "%s", j->kill_reason);
    else if (j->exit_status)
        snprintf(why, len, "reason=exit-status-%d", j->exit_status);
    else if (!j->result_set)
        snprintf(why, len, "%s", "reason=no-result");
    else if (!j->result_ok)
        snprintf(why, len, "%s", "reason=app-check");
    return why[0] == 0;
}

int contract_failure(char *buf, size_t len, const struct job *j)
{
    buf[0] = 0;
    if (j->killed || j->exit_status || (j->result_set && j->result_ok)) /* ok, or said when it happened */
        return 0;
    return snprintf(buf, len, "ERROR job %d (%s) failed: %s", j->id, j->scen->app,
                    j->result_set       ? "its own check failed (it reported check=FAIL)"
                    : j->result_refused ? "it ended without a verdict the kernel took: its SYS_result was refused "
                                          "(a key the kernel or its scenario prints, or a number that is not finite)"
                                        : "it ended without reporting a verdict (SYS_result)");
}

static uint64_t rel_us(uint64_t t, uint64_t t0) { return t > t0 ? time_us(t - t0) : 0; }

int contract_result(char *buf, size_t len, const struct job *j, const char *policy, int harts, uint64_t t0,
                    int ok, const char *why, const char *extra)
{
    char keys[SL_ARGS_MAX];
    snprintf(keys, sizeof keys, "%s", j->scen->args);
    for (char *c = keys; *c; c++)
        if (*c == ',')
            *c = ' ';
    uint64_t start = j->start ? j->start : j->arrive;
    return snprintf(buf, len,
                    "RESULT job=%d app=%s policy=%s harts=%d procs=%d arrive_us=%lu start_us=%lu end_us=%lu "
                    "elapsed_us=%lu cpu_us=%lu check=%s%s%s%s%s%s%s switches=%lu preempts=%lu blocks=%lu "
                    "blocked_us=%lu adapt=%s migrations=%lu mem_kb=%lu%s%s%s",
                    j->id, j->scen->app, policy, harts, j->nprocs, rel_us(j->arrive, t0), rel_us(start, t0),
                    rel_us(j->end, t0), rel_us(j->end, t0) - rel_us(start, t0), time_us(j->cpu_ticks),
                    ok ? "ok" : "FAIL", keys[0] ? " " : "", keys, j->result_keys[0] ? " " : "", j->result_keys,
                    why[0] ? " " : "", why, j->nswitch, j->npreempt, j->nblock, time_us(j->blocked_ticks),
                    j->adaptive ? "yes" : "no", j->nmigrate, j->mem_used >> 10, j->scen->pargs[0] ? " " : "",
                    j->scen->pargs, extra);
}

int contract_summary(char *buf, size_t len, const char *policy, int harts, int jobs, int failed,
                     uint64_t makespan_us, const char *extra)
{
    return snprintf(buf, len, "SUMMARY policy=%s harts=%d jobs=%d failed=%d makespan_us=%lu%s", policy, harts, jobs,
                    failed, makespan_us, extra);
}
