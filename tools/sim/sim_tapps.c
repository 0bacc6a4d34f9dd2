/*
 * sim_tapps.c - the thread apps of Markatos chapter 4 on sim_threads.c's mechanism (main, placement, the
 * processes' loops): what their threads are, what each costs, which rows it copies and what it touches.
 *
 *   gauss variant=fine, sync=barrier (apps/gauss/fine.c, Markatos's version 2): before the run process 0
 *             allocates the per-column words (and under lb the one matrix); set-up thread p allocates its
 *             buffers (TH_WINDOW pivot copies and two rows) node-locally and generates its rows i % P == p
 *             (mcs: into a home buffer of its own; lb: into the matrix). Round k (a column) is threads
 *             (i, k) for i > k; thread (i, k) does n - k row ops (calib.gauss_rowop) reading the pivot row and
 *             reading and writing row i, and copies rows (calib.copy_call + calib.copy_double per double of
 *             columns k..n):
 *               mcs  at row i's home (i mod P); pivot row k copied into the process's buffer once per
 *                    process and column when k's home is another process; row i updated in place
 *               lb   on the least loaded process; both rows copied in and row i copied back (3 copies)
 *             then it sets ready[i] and decrements the column's count (a shared word: its line moves).
 *             The check: back-substitution, every row's upper part read where it lives.
 *             RESULT: par_us copies= away= (updates away from the row's home) threads= (main, P set-up,
 *             n(n-1)/2) as the app counts them.
 *   grassfire (apps/grassfire.c): the image is the app's own - its disks drawn from the job's seed
 *             (sl_rng_init(0x67f1) over info->seed = seed ^ job id x 0x9e3779b97f4a7c15, the kernel's
 *             info.c) - and D, its largest city-block depth, is computed here by the app's check (the
 *             two-pass transform), so sweeps = D + 1 as the app runs them (and row i changes in sweep t
 *             iff it holds a pixel of depth t, the depth being 1-Lipschitz along a row). Rows live in
 *             blocks (home i P / n) in two images per process, allocated node-locally by its set-up thread,
 *             which generates its rows into image 0. Round t (a sweep) is, fine, a thread per row (mcs: at
 *             its home; lb: the least loaded process), coarse, a thread per process for its block (spawned
 *             on it). Sweeping row i on process p reads rows i-1..i+1 of image t%2 - each one whose home is
 *             not p copied into p's buffer first - and writes row i of image (t+1)%2, built in p's buffer
 *             and copied back when p is not its home; n + GF_ROW_PIXELS pixel steps of
 *             calib.grassfire_pixel (a row's fixed cost in pixels: deterministic QEMU, below). A thread
 *             whose rows changed adds to the shared count. The check: the two-pass transform on a new
 *             image of process 0's, then every result row read.
 *             RESULT: par_us sweeps= depth= threads= local= away= copies= as the app counts them.
 * Not modelled: gauss sync=cond (refused), the apps' check arithmetic (process 0's proc_end), msort.
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_mem.h"
#include "sim_threads.h"

/* grassfire's fixed cost of a row (its calls, the pixel loop's set-up), in pixel steps: deterministic QEMU,
   job=grassfire:procs=1,variant=coarse at n=96 and 192 (2302 and 10528 us, 10 and 13 sweeps) fit 19.0 ns
   a pixel and 578 ns a row */
#define GF_ROW_PIXELS 30

static int gf_home(const struct tjob *t, int i) { return (int)((int64_t)i * t->P / t->n); }
static int gf_lo(const struct tjob *t, int p) { return (int)(((int64_t)p * t->n + t->P - 1) / t->P); }
static int gs_home(const struct tjob *t, int i) { return i % t->P; }

/* ---- set-up ---- */

/* grassfire's image from the job's seed, as apps/grassfire.c draws it, and its depths by the app's check. */
static void gf_depths(struct job *j, struct tjob *t)
{
    int n = t->n, rmax = n / 24 > 2 ? n / 24 : 2, nd = 1 + n * n / (2 * rmax * rmax);
    struct sl_rng r;
    int *dy = malloc(sizeof(int) * 3 * (size_t)nd);
    uint32_t *d = calloc((size_t)n * (size_t)n, sizeof *d);
    t->rowmax = calloc((size_t)n, sizeof *t->rowmax);
    if (!dy || !d || !t->rowmax)
        panic("sim: out of memory for grassfire's image");
    sl_rng_seed(&r, TH_JOB_SEED(j), 0x67f1);
    for (int k = 0; k < nd; k++) {
        dy[3 * k] = (int)sl_rng_below(&r, (uint64_t)n);
        dy[3 * k + 1] = (int)sl_rng_below(&r, (uint64_t)n);
        dy[3 * k + 2] = 2 + (int)sl_rng_below(&r, (uint64_t)(rmax - 1));
    }
    for (int i = 0; i < n; i++) /* gen_row: 1 inside a disk */
        for (int k = 0; k < nd; k++) {
            int cy = dy[3 * k], cx = dy[3 * k + 1], rr = dy[3 * k + 2], e = i - cy, w = 0;
            if (e < -rr || e > rr)
                continue;
            while ((w + 1) * (w + 1) + e * e <= rr * rr)
                w++;
            for (int x = cx - w; x <= cx + w; x++)
                if (x >= 0 && x < n)
                    d[(size_t)i * n + x] = 1;
        }
    for (int i = 0; i < n; i++) /* forward: from above and from the left */
        for (int x = 0; x < n; x++) {
            uint32_t *v = &d[(size_t)i * n + x], up = i > 0 ? v[-n] : 0, left = x > 0 ? v[-1] : 0;
            if (*v)
                *v = (up < left ? up : left) + 1;
        }
    t->depth = 0;
    for (int i = n - 1; i >= 0; i--) /* backward: from below and from the right */
        for (int x = n - 1; x >= 0; x--) {
            uint32_t *v = &d[(size_t)i * n + x], down = i + 1 < n ? v[n] : 0, right = x + 1 < n ? v[1] : 0;
            uint32_t m = (down < right ? down : right) + 1;
            if (!*v)
                continue;
            if (m < *v)
                *v = m;
            if ((int)*v > t->rowmax[i])
                t->rowmax[i] = (int)*v;
        }
    for (int i = 0; i < n; i++)
        t->depth = t->rowmax[i] > t->depth ? t->rowmax[i] : t->depth;
    t->rounds = t->depth + 1;
    free(dy);
    free(d);
}

static int refuse(char *err, size_t errlen, const char *app, const char *what)
{
    snprintf(err, errlen, "job=%s: %s is not modelled in the simulator", app, what);
    return -1;
}

int tapp_setup(struct job *j, struct tjob *t, char *err, size_t errlen)
{
    char v[32];
    const char *a = j->scen->args, *app = j->scen->app;
    int gauss = !strcmp(app, "gauss");
    if (gauss && (scenario_arg(a, "variant", v, sizeof v) != 0 || strcmp(v, "fine")))
        return 0; /* coarse: a barrier program (sim_work.c) */
    if (!gauss && strcmp(app, "grassfire"))
        return 0;
    t->app = gauss ? TA_GAUSS : TA_GRASSFIRE;
    t->place = scenario_arg(a, "place", v, sizeof v) == 0 && !strcmp(v, "lb") ? PL_LB : PL_MCS;
    t->n = scenario_arg(a, "n", v, sizeof v) == 0 ? atoi(v) : gauss ? 0 : 384; /* the apps' defaults */
    if (gauss) {
        if (scenario_arg(a, "sync", v, sizeof v) == 0 && strcmp(v, "barrier"))
            return refuse(err, errlen, app, "variant=fine with sync=cond (only sync=barrier, Markatos's version 2)");
        if (scenario_arg(a, "sched", v, sizeof v) == 0 && strcmp(v, "static"))
            return snprintf(err, errlen, "job=gauss: sched=%s needs variant=coarse (as the app says)", v), -1;
        if (t->n < 2)
            return snprintf(err, errlen, "job=gauss: variant=fine needs n= of at least 2 in the simulator"), -1;
        t->spin = scenario_arg(a, "barrier", v, sizeof v) != 0 || strcmp(v, "block"); /* the app's default: spin */
        t->rounds = t->n - 1;
        return 1;
    }
    t->coarse = scenario_arg(a, "variant", v, sizeof v) == 0 && !strcmp(v, "coarse");
    if (t->coarse && t->place == PL_LB)
        return snprintf(err, errlen, "job=grassfire: place=lb needs variant=fine (as the app says)"), -1;
    gf_depths(j, t);
    return 1;
}

/* ---- memory ---- */

static uint64_t gs_rowb(const struct tjob *t) { return (uint64_t)(t->n + 1) * 8; }
static uint64_t gf_rowb(const struct tjob *t) { return (uint64_t)t->n * 4; }

/* gauss: where row i lives. */
static uint64_t gs_row(const struct tjob *t, int i)
{
    if (t->place == PL_LB)
        return t->mat + (uint64_t)i * gs_rowb(t);
    return t->pr[gs_home(t, i)].home + (uint64_t)(i / t->P) * gs_rowb(t);
}

/* grassfire: where row i of image b lives (its home's two images, block by block). */
static uint64_t gf_row(const struct tjob *t, int b, int i)
{
    int h = gf_home(t, i), lo = gf_lo(t, h), rows = gf_lo(t, h + 1) - lo;
    return t->pr[h].home + ((uint64_t)b * (uint64_t)rows + (uint64_t)(i - lo)) * gf_rowb(t);
}

uint64_t tapp_alloc(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    if (t->app == TA_GAUSS) { /* fine_alloc: ready[], colleft[], coldone[]; lb's matrix */
        t->words = th_alloc_zeroed(j, h, (uint64_t)3 * (uint64_t)t->n * 4, &ns);
        if (t->place == PL_LB)
            t->mat = th_alloc_zeroed(j, h, (uint64_t)t->n * gs_rowb(t), &ns);
    } else { /* the row pointers and disks; the shared count */
        t->words = th_alloc_zeroed(j, h, (uint64_t)t->n * 16 + 64, &ns);
    }
    return ns;
}

int tapp_first(const struct tjob *t, int r) { return t->app == TA_GAUSS ? r + 1 : 0; }
int tapp_end(const struct tjob *t, int r) { return t->app == TA_GAUSS || !t->coarse ? t->n : t->P; }

int tapp_home(const struct tjob *t, int i, int r)
{
    if (t->app == TA_GAUSS)
        return t->place == PL_MCS ? gs_home(t, i) : -1;
    return t->coarse ? i : t->place == PL_MCS ? gf_home(t, i) : -1;
}

uint64_t tapp_setup_thread(struct job *j, struct tjob *t, int p, int h)
{
    uint64_t ns = (uint64_t)calib.thread_run;
    struct tproc *q = &t->pr[p];
    if (!mem_on())
        return ns;
    if (t->app == TA_GAUSS) {
        int nrows = p < t->n ? (t->n - p + t->P - 1) / t->P : 0;
        q->buf = th_alloc_zeroed(j, h, (TH_WINDOW + 2) * gs_rowb(t) + 64, &ns);
        if (t->place == PL_MCS && nrows > 0)
            q->home = th_alloc_zeroed(j, h, (uint64_t)nrows * gs_rowb(t), &ns);
        for (int i = p; i < t->n; i += t->P)
            ns += mem_touch(j->id, h, gs_row(t, i), gs_rowb(t), 8, 1);
        return ns;
    }
    int lo = gf_lo(t, p), hi = gf_lo(t, p + 1);
    q->buf = th_alloc_zeroed(j, h, 4 * gf_rowb(t) + 64, &ns);
    if (hi > lo)
        q->home = th_alloc_zeroed(j, h, 2 * (uint64_t)(hi - lo) * gf_rowb(t), &ns);
    for (int i = lo; i < hi; i++)
        ns += mem_touch(j->id, h, gf_row(t, 0, i), gf_rowb(t), 4, 1);
    return ns;
}

/* ---- gauss's update ---- */

static uint64_t copy_ns(uint64_t bytes) { return (uint64_t)(calib.copy_call + calib.copy_double * (double)bytes / 8); }

static uint64_t gauss_update(struct job *j, struct tjob *t, int p, int h, int i, int k)
{
    struct tproc *q = &t->pr[p];
    int n = t->n, s = k % TH_WINDOW, m = mem_on();
    uint64_t off = (uint64_t)k * 8, len = (uint64_t)(n + 1 - k) * 8, ns = (uint64_t)calib.thread_run;
    uint64_t piv = gs_row(t, k) + off, r = gs_row(t, i) + off;
    uint64_t prow = q->buf + (uint64_t)TH_WINDOW * gs_rowb(t) + off, rrow = prow + gs_rowb(t);
    ns += (uint64_t)((double)(n - k) * calib.gauss_rowop);
    if (t->place == PL_MCS) {
        if (gs_home(t, k) != p) { /* the pivot row, once per process and column */
            uint64_t mine = q->buf + (uint64_t)s * gs_rowb(t) + off;
            if (q->pivcol[s] != k) {
                q->pivcol[s] = k;
                q->copies++;
                ns += copy_ns(len) + (m ? mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, mine, len, 8, 1)
                                        : 0);
            }
            piv = mine;
        }
    } else {
        q->copies += 3;
        q->away += gs_home(t, i) != p;
        ns += 3 * copy_ns(len);
        if (m)
            ns += mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, prow, len, 8, 1) +
                  mem_touch(j->id, h, r, len, 8, 0) + mem_touch(j->id, h, rrow, len, 8, 1);
        piv = prow;
    }
    q->local += t->place == PL_MCS || gs_home(t, i) == p;
    uint64_t upd = t->place == PL_LB ? rrow : r;
    if (m) {
        ns += mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, upd, len, 8, 0) +
              mem_touch(j->id, h, upd, len, 8, 1);
        if (t->place == PL_LB) /* row i back */
            ns += mem_touch(j->id, h, rrow, len, 8, 0) + mem_touch(j->id, h, r, len, 8, 1);
        uint64_t ready = t->words + (uint64_t)i * 4, left = t->words + (uint64_t)n * 4 + (uint64_t)k * 4;
        ns += mem_touch(j->id, h, ready, 4, 4, 1) + mem_touch(j->id, h, left, 4, 4, 0) +
              mem_touch(j->id, h, left, 4, 4, 1);
    }
    return ns;
}

/* ---- grassfire's sweep of row i (sweep_row) on process p ---- */

static uint64_t gf_sweep_row(struct job *j, struct tjob *t, int p, int h, int i, int sweep, int *changed)
{
    struct tproc *q = &t->pr[p];
    int b = sweep & 1, m = mem_on();
    uint64_t rb = gf_rowb(t), ns = (uint64_t)((double)(t->n + GF_ROW_PIXELS) * calib.grassfire_pixel);
    for (int s = 0; s < 3; s++) { /* rows i-1, i, i+1: read in place at home, else copied to slot s */
        int r = i - 1 + s;
        if (r < 0 || r >= t->n)
            continue;
        uint64_t at = gf_row(t, b, r);
        if (gf_home(t, r) != p) {
            q->copies++;
            ns += copy_ns(rb);
            if (m)
                ns += mem_touch(j->id, h, at, rb, 4, 0) + mem_touch(j->id, h, q->buf + (uint64_t)s * rb, rb, 4, 1);
            at = q->buf + (uint64_t)s * rb;
        }
        if (m)
            ns += mem_touch(j->id, h, at, rb, 4, 0);
    }
    int home = gf_home(t, i) == p;
    uint64_t out = home ? gf_row(t, !b, i) : q->buf + 3 * rb;
    if (m)
        ns += mem_touch(j->id, h, out, rb, 4, 1);
    if (!home) {
        q->copies++;
        q->away++;
        ns += copy_ns(rb) + (m ? mem_touch(j->id, h, out, rb, 4, 0) + mem_touch(j->id, h, gf_row(t, !b, i), rb, 4, 1)
                               : 0);
    } else {
        q->local++;
    }
    *changed += sweep + 1 <= t->rowmax[i]; /* a pixel of depth sweep + 1 gets its value now */
    return ns;
}

uint64_t tapp_run(struct job *j, struct tjob *t, int p, int h, struct uthr u)
{
    if (t->app == TA_GAUSS)
        return gauss_update(j, t, p, h, u.i, u.k);
    int changed = 0;
    uint64_t ns = (uint64_t)calib.thread_run;
    if (t->coarse)
        for (int i = gf_lo(t, u.i); i < gf_lo(t, u.i + 1); i++)
            ns += gf_sweep_row(j, t, p, h, i, u.k, &changed);
    else
        ns += gf_sweep_row(j, t, p, h, u.i, u.k, &changed);
    if (changed && mem_on()) /* the shared count of changed rows */
        ns += mem_touch(j->id, h, t->words, 4, 4, 0) + mem_touch(j->id, h, t->words, 4, 4, 1);
    return ns;
}

uint64_t tapp_check(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    if (t->app == TA_GAUSS) { /* back-substitution */
        for (int i = t->n - 1; i >= 0; i--)
            ns += mem_touch(j->id, h, gs_row(t, i) + (uint64_t)i * 8, (uint64_t)(t->n + 1 - i) * 8, 8, 0);
        return ns;
    }
    /* check_depths: a new image (gen, forward, backward), then every result row */
    uint64_t rb = gf_rowb(t), bytes = rb * (uint64_t)t->n, d = th_alloc_zeroed(j, h, bytes, &ns);
    ns += mem_touch(j->id, h, d, bytes, 4, 1) + mem_touch(j->id, h, d, bytes, 4, 0) +
          mem_touch(j->id, h, d, bytes, 4, 1) + mem_touch(j->id, h, d, bytes, 4, 0);
    for (int i = 0; i < t->n; i++)
        ns += mem_touch(j->id, h, gf_row(t, t->rounds & 1, i), rb, 4, 0);
    return ns;
}

void tapp_keys(const struct tjob *t, char *buf, size_t len)
{
    uint64_t copies = 0, away = 0, local = 0, us = (t->t1 - t->t0) / 1000;
    for (int p = 0; p < t->P; p++) {
        copies += t->pr[p].copies;
        away += t->pr[p].away;
        local += t->pr[p].local;
    }
    if (t->app == TA_GAUSS)
        snprintf(buf, len, "par_us=%lu copies=%lu away=%lu threads=%lu suspends=0", us, copies, away, t->made);
    else
        snprintf(buf, len, "par_us=%lu sweeps=%d depth=%d threads=%lu local=%lu away=%lu copies=%lu wrong=0 "
                           "suspends=0", us, t->rounds, t->depth, t->made, local, away, copies);
}
