/*
 * sim_touch.c - what each unit of work of the app models touches (sim_mem.h has the memory model):
 *
 *   gauss    (coarse) one n x (n+1) matrix of doubles, row-major (apps/gauss/main.c); at step k worker idx
 *            reads row k's columns k..n (the pivot row) and reads and writes columns k..n of each of its
 *            rows i > k with i % P == idx (apps/gauss/coarse.c).
 *   oddeven  n 4-byte keys (apps/oddeven.c); in phase p worker idx's slice [m idx/P, m (idx+1)/P) of the
 *            m = (n - p%2)/2 pairs covers keys 2 lo + p%2 .. 2 hi + p%2 - 1, read and written.
 *   synth, hog, sleeper: their work is kept in registers (apps/synth.c, hog.c: an LCG step, a block of
 *            register arithmetic): nothing is touched; they take the hart, not the cache.
 *   chaos    nothing.
 * The arrays are allocated at the job's first touch on the node of the hart its process 0 runs on then
 * (sl_malloc on process 0 at set-up: the kernel's sys_alloc with node -1, the caller's hart's node).
 *
 * Not modelled (refused by sim_work.c before this file sees them): the locality issue's sor, tclosure,
 * adjoint, msort, grassfire, gauss variant=fine and oddeven's sched= loop schedulers.
 */
#include <string.h>
#include "sim.h"
#include "sim_mem.h"

enum tkind { T_NONE, T_GAUSS, T_ODDEVEN };

static struct {
    int kind;
    uint64_t base; /* 0 until the first touch */
} tj[NJOB];

void touch_setup(struct job *j)
{
    const char *app = j->scen->app;
    tj[j->id - 1].kind = !strcmp(app, "gauss") ? T_GAUSS : !strcmp(app, "oddeven") ? T_ODDEVEN : T_NONE;
    tj[j->id - 1].base = 0;
}

static uint64_t array_base(struct job *j, uint64_t bytes, int hart)
{
    if (!tj[j->id - 1].base) {
        struct proc *p0 = j->procs[0];
        int h = p0 && p0->on_cpu ? p0->on_cpu->id : hart;
        tj[j->id - 1].base = mem_alloc(j->id, bytes, mem_node_of_hart(h));
    }
    return tj[j->id - 1].base;
}

/* The stall, ns, of worker idx's iteration sp->iter of a barrier program on sp's hart. */
uint64_t touch_iteration(struct sproc *sp, int64_t n, int idx)
{
    struct job *j = sp->p.job;
    if (!mem_on() || !sp->p.on_cpu || tj[j->id - 1].kind == T_NONE)
        return 0;
    int P = j->nprocs, h = sp->p.on_cpu->id, id = j->id;
    uint64_t i = sp->iter, ns = 0;
    if (tj[id - 1].kind == T_GAUSS) {
        uint64_t rowb = (uint64_t)(n + 1) * 8, a = array_base(j, (uint64_t)n * rowb, h);
        int64_t k = (int64_t)i;
        if (k >= n)
            return 0;
        uint64_t off = (uint64_t)k * 8, len = (uint64_t)(n + 1 - k) * 8;
        int mine = 0;
        for (int64_t r = k + 1; r < n; r++)
            if (r % P == idx) {
                if (!mine++)
                    ns += mem_touch(id, h, a + (uint64_t)k * rowb + off, len, 8, 0);
                ns += mem_touch(id, h, a + (uint64_t)r * rowb + off, len, 8, 0);
                ns += mem_touch(id, h, a + (uint64_t)r * rowb + off, len, 8, 1);
            }
        return ns;
    }
    uint64_t a = array_base(j, (uint64_t)n * 4, h);
    int64_t par = (int64_t)(i & 1), m = (n - par) / 2, lo = m * idx / P, hi = m * (idx + 1) / P;
    if (hi <= lo)
        return 0;
    uint64_t from = a + (uint64_t)(2 * lo + par) * 4, len = (uint64_t)(2 * (hi - lo)) * 4;
    return mem_touch(id, h, from, len, 4, 0) + mem_touch(id, h, from, len, 4, 1);
}
