/*
 * sim_loops.c - the loop-scheduled apps (Markatos chapter 5): their chunks come from the library's own loop
 * schedulers (lib/loops/loopsched.c, linked as is: static, ss, gss, factoring, trapezoid, afs,
 * mod-factoring, best-static: static's shares for sor, the app's weighted split for tclosure and adjoint
 * (loops_split)), one grab at a time as the process runs.
 *
 * The apps' chunks are theirs (tools/sim/apps: sor, gauss sched=, tclosure, adjoint); this file is the
 * scheduler's side: a grab costs calib.loop_grab (the app's sl_loop_grab and its chunk loop, measured on
 * ss: sim_calib.c), and reads and writes the loop's queue word (a central one, or the process's own queue
 * for static and afs, a victim's for a theft), so under a model a remote grab costs its coherence miss.
 * Process control (adapt=yes under a policy that allots harts): a process runs the workers it hosts one
 * after another (sim_barrier.c deals them), so its grabs are theirs in turn - each hosted worker's queue
 * until that worker finds the loop done for it, then the next one's (a worker found empty hands its
 * process to the next by a user-level switch, whose cost is left out, as for the barrier programs).
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_kit.h"
#include "sim_mem.h"
#include "loops/loopsched.h"

/* The library's spinlock yields when contended; the simulator's one thread never contends. */
long sl_sys_yield(void)
{
    panic("sim: a loop scheduler's spinlock was contended on the simulator's one thread");
}

static struct {
    struct sl_loop *l;
    int64_t cur;      /* the loop (half-sweep) the queue holds; -1: none yet */
    uint64_t qbase;   /* the loop's queue words under a model: one line per process, then the central one */
    uint64_t grabs, remote;
} jl[NJOB];

/* The scheduler named by sched= (sl_loop_parse); -1 with a message for a name the library does not know. */
int loops_setup(struct job *j, const char *sched, char *err, size_t errlen)
{
    int kind = sl_loop_parse(sched[0] ? sched : "static");
    if (kind < 0)
        return snprintf(err, errlen, "job=%s: sched=%s is not a loop scheduler", j->scen->app, sched), -1;
    size_t bytes = sl_loop_bytes(j->nprocs);
    jl[j->id - 1].l = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!jl[j->id - 1].l)
        panic("sim: out of memory for a loop");
    sl_loop_init(jl[j->id - 1].l, (enum sl_loopsched)kind, j->nprocs, 0);
    jl[j->id - 1].cur = -1;
    jl[j->id - 1].qbase = 0;
    jl[j->id - 1].grabs = jl[j->id - 1].remote = 0;
    return 0;
}

/* A loop program (w->loops): its iterations' chunks from the scheduler sched= names, static if none. */
int loops_program(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    char v[32];
    w->loops = 1;
    return loops_setup(j, scenario_arg(j->scen->args, "sched", v, sizeof v) == 0 ? v : "", err, errlen);
}

/* best-static's parts from the app's weights of its n iterations (sl_loop_split_weighted), as tclosure and
   adjoint set them (sl_loop_set_split); other schedulers ignore them. */
void loops_split(struct job *j, const uint64_t *w, int64_t n)
{
    struct sl_loop *l = jl[j->id - 1].l;
    int64_t first[SL_MAX_PROCS + 1];
    if (l->kind != SL_LOOP_BESTSTATIC)
        return;
    sl_loop_split_weighted(w, n, j->nprocs, first);
    if (sl_loop_set_split(l, first) < 0)
        panic("sim: sl_loop_split_weighted gave a split sl_loop_set_split refuses");
}

void loops_free(void)
{
    for (int i = 0; i < NJOB; i++) {
        free(jl[i].l);
        jl[i].l = 0;
    }
}

/* sp's next chunk of loop sp->iter over [lo, hi): 1 with the chunk in *c, or 0 (the loop is done for it: on
   to the barrier); *ns gets the grab's cost. The loop is started anew by its first grab (every process
   passed the barrier after the last one, as the app's process 0 resets it). */
int loops_grab(struct sproc *sp, int64_t lo, int64_t hi, struct sl_chunk *c, uint64_t *ns)
{
    struct job *j = sp->p.job;
    int id = j->id, h = sp->p.on_cpu ? sp->p.on_cpu->id : 0, P = j->nprocs;
    if (jl[id - 1].cur != (int64_t)sp->iter) {
        sl_loop_start(jl[id - 1].l, lo, hi);
        jl[id - 1].cur = (int64_t)sp->iter;
    }
    if (mem_on() && !jl[id - 1].qbase)
        jl[id - 1].qbase = mem_alloc(id, (uint64_t)(P + 1) * 64, mem_node_of_hart(h));
    *ns = 0;
    int who = sp->p.idx, got = sl_loop_next(jl[id - 1].l, who, c);
    const struct sjob *w = &sjobs[id - 1];
    for (int v = 0; !got && w->adaptive && v < P; v++) /* folded: the next worker it hosts grabs */
        if (v != sp->p.idx && w->host[v] == sp->p.idx) {
            *ns += (uint64_t)calib.loop_grab; /* the empty grab before it */
            got = sl_loop_next(jl[id - 1].l, who = v, c);
        }
    /* the grab: the queue it took from, or its own found empty */
    uint64_t qword = jl[id - 1].qbase + (uint64_t)(c->local || !got ? who : P) * 64;
    *ns += (uint64_t)calib.loop_grab + (mem_on() ? mem_touch(id, h, qword, 8, 8, 0) + mem_touch(id, h, qword, 8, 8, 1)
                                                 : 0);
    if (mem_on()) { /* the call's own words (sl_loop_next and the app's grab loop as compiled, every scheduler):
                       the loop's kind twice and its jump-table entry (the image's: here the central line), 11
                       registers saved and 10 restored on the caller's stack, the app's load of the loop pointer;
                       a chunk: written and read back (start, len, local), the grab counter of its queue
                       read and written (its word in the process's own struct sl_loopq: put on the caller's
                       stack here, as this file's 64-byte queue lines would share a 128-byte line between
                       processes, which the library's layout does not), the trace flag read. The scheduler's
                       own path beyond the queue word (static's and afs's take_own: a frame of 14 words and
                       its lock) is not modelled. */
        uint64_t st = touch_stack(sp);
        *ns += mem_touch_every(id, h, jl[id - 1].qbase + (uint64_t)P * 64, 3, 0, 0) +
               mem_touch_every(id, h, st, 11 + (got ? 3 : 0), 0, 1) + mem_touch_every(id, h, st, 11 + (got ? 4 : 0), 0, 0) +
               (got ? mem_touch_every(id, h, st, 1, 0, 0) + mem_touch_every(id, h, st, 1, 0, 1) : 0);
    }
    if (got) {
        jl[id - 1].grabs++;
        jl[id - 1].remote += !c->local;
    }
    return got;
}

/* grabs= and remote= as the app reports them (summed over the loops). */
void loops_counts(struct job *j, uint64_t *grabs, uint64_t *remote)
{
    *grabs = jl[j->id - 1].grabs;
    *remote = jl[j->id - 1].remote;
}
