/*
 * apps/grassfire.c - grassfire's model (apps/grassfire.c), a thread program of Markatos chapter 4 on the
 * kit's thread mechanism (sim_threads.c: main, placement, the processes' loops).
 *
 * The image is the app's own - its disks drawn from the job's seed (sl_rng_init(0x67f1) over info->seed =
 * seed ^ job id x 0x9e3779b97f4a7c15, the kernel's info.c) - and D, its largest city-block depth, is
 * computed here by the app's check (the two-pass transform), so sweeps = D + 1 as the app runs them (and
 * row i changes in sweep t iff it holds a pixel of depth t, the depth being 1-Lipschitz along a row). Rows
 * live in blocks (home i P / n) in two images per process, allocated node-locally by its set-up thread,
 * which generates its rows into image 0. Round t (a sweep) is, fine, a thread per row (mcs: at its home;
 * lb: the least loaded process), coarse, a thread per process for its block (spawned on it). Sweeping row
 * i on process p reads rows i-1..i+1 of image t%2 - each one whose home is not p copied into p's buffer
 * first - and writes row i of image (t+1)%2, built in p's buffer and copied back when p is not its home;
 * n + GF_ROW_PIXELS pixel steps of grassfire_pixel_ns (a row's fixed cost in pixels: deterministic
 * QEMU, below). A thread whose rows changed adds to the shared count. The check: the two-pass transform on
 * a new image of process 0's, then every result row read.
 * RESULT: par_us sweeps= depth= threads= local= away= copies= as the app counts them.
 * Not modelled: the app's check arithmetic (process 0's proc_end).
 */
#include <stdlib.h>
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"
#include "../sim_threads.h"

/* grassfire's fixed cost of a row (its calls, the pixel loop's set-up), in pixel steps: deterministic QEMU,
   job=grassfire:procs=1,variant=coarse at n=96 and 192 (2302 and 10528 us, 10 and 13 sweeps) fit 19.0 ns
   a pixel and 578 ns a row */
#define GF_ROW_PIXELS 30
#define GF_PIXEL_NS 19.0

struct keys {
    int64_t n;
    double pixel; /* ns a pixel's step: grassfire_pixel_ns, else GF_PIXEL_NS */
};

static const struct sim_key keys[] = { SIM_KEY(struct keys, n), { 0 } };

static int gf_home(const struct tjob *t, int i) { return (int)((int64_t)i * t->P / t->n); }
static int gf_lo(const struct tjob *t, int p) { return (int)(((int64_t)p * t->n + t->P - 1) / t->P); }

/* The image from the job's seed, as apps/grassfire.c draws it, and its depths by the app's check. */
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


static int gf_setup(struct job *j, struct tjob *t, char *err, size_t errlen)
{
    char v[32];
    const char *a = j->scen->args;
    t->place = scenario_arg(a, "place", v, sizeof v) == 0 && !strcmp(v, "lb") ? PL_LB : PL_MCS;
    t->n = (int)SIM_STATE(sjob_of(j), struct keys)->n;
    SIM_STATE(sjob_of(j), struct keys)->pixel = calib_get("grassfire_pixel_ns", GF_PIXEL_NS);
    t->coarse = scenario_arg(a, "variant", v, sizeof v) == 0 && !strcmp(v, "coarse");
    if (t->coarse && t->place == PL_LB)
        return snprintf(err, errlen, "job=%s: place=lb needs variant=fine (as the app says)", j->scen->app), -1;
    gf_depths(j, t);
    return 1;
}

/* ---- memory ---- */

static uint64_t gf_rowb(const struct tjob *t) { return (uint64_t)t->n * 4; }

/* Where row i of image b lives (its home's two images, block by block). */
static uint64_t gf_row(const struct tjob *t, int b, int i)
{
    int h = gf_home(t, i), lo = gf_lo(t, h), rows = gf_lo(t, h + 1) - lo;
    return t->pr[h].home + ((uint64_t)b * (uint64_t)rows + (uint64_t)(i - lo)) * gf_rowb(t);
}

/* main's allocations: the row pointers and disks; the shared count. */
static uint64_t gf_alloc(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    t->words = touch_alloc_zeroed(j, h, (uint64_t)t->n * 16 + 64, &ns);
    return ns;
}

static int gf_end(const struct tjob *t, int r) { return t->coarse ? t->P : t->n; }

static int gf_thread_home(const struct tjob *t, int i, int r)
{
    return t->coarse ? i : t->place == PL_MCS ? gf_home(t, i) : -1;
}

/* Process p's set-up thread: its buffers and block's two images, its rows generated into image 0. */
static uint64_t gf_setup_thread(struct job *j, struct tjob *t, int p, int h)
{
    uint64_t ns = (uint64_t)calib.thread_run;
    struct tproc *q = &t->pr[p];
    if (!mem_on())
        return ns;
    int lo = gf_lo(t, p), hi = gf_lo(t, p + 1);
    q->buf = touch_alloc_zeroed(j, h, 4 * gf_rowb(t) + 64, &ns);
    if (hi > lo)
        q->home = touch_alloc_zeroed(j, h, 2 * (uint64_t)(hi - lo) * gf_rowb(t), &ns);
    for (int i = lo; i < hi; i++)
        ns += mem_touch(j->id, h, gf_row(t, 0, i), gf_rowb(t), 4, 1);
    return ns;
}

/* ---- grassfire's sweep of row i (sweep_row) on process p ---- */

static uint64_t gf_sweep_row(struct job *j, struct tjob *t, int p, int h, int i, int sweep, int *changed)
{
    struct tproc *q = &t->pr[p];
    int b = sweep & 1, m = mem_on();
    uint64_t rb = gf_rowb(t), ns = (uint64_t)((double)(t->n + GF_ROW_PIXELS) * SIM_STATE(sjob_of(j), struct keys)->pixel);
    for (int s = 0; s < 3; s++) { /* rows i-1, i, i+1: read in place at home, else copied to slot s */
        int r = i - 1 + s;
        if (r < 0 || r >= t->n)
            continue;
        uint64_t at = gf_row(t, b, r);
        if (gf_home(t, r) != p) {
            q->copies++;
            ns += threads_copy_ns(rb);
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
        ns += threads_copy_ns(rb) +
              (m ? mem_touch(j->id, h, out, rb, 4, 0) + mem_touch(j->id, h, gf_row(t, !b, i), rb, 4, 1)
                               : 0);
    } else {
        q->local++;
    }
    *changed += sweep + 1 <= t->rowmax[i]; /* a pixel of depth sweep + 1 gets its value now */
    return ns;
}

static uint64_t gf_run(struct job *j, struct tjob *t, int p, int h, struct uthr u, struct uthr *next, int *spawn)
{
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

static uint64_t gf_check(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    /* check_depths: a new image d; forward, row by row: row i generated (written), then read and written
       from row i-1 above; backward, from the last row: row i read and written from row i+1 below, then
       compared with result row i (so the result rows are read interleaved with d's, last row first) */
    uint64_t rb = gf_rowb(t), bytes = rb * (uint64_t)t->n, d = touch_alloc_zeroed(j, h, bytes, &ns);
    for (int i = 0; i < t->n; i++) {
        uint64_t r = d + (uint64_t)i * rb;
        ns += mem_touch(j->id, h, r, rb, 4, 1);
        if (i > 0)
            ns += mem_touch(j->id, h, r - rb, rb, 4, 0);
        ns += mem_touch(j->id, h, r, rb, 4, 0) + mem_touch(j->id, h, r, rb, 4, 1);
    }
    for (int i = t->n - 1; i >= 0; i--) {
        uint64_t r = d + (uint64_t)i * rb;
        if (i + 1 < t->n)
            ns += mem_touch(j->id, h, r + rb, rb, 4, 0);
        ns += mem_touch(j->id, h, r, rb, 4, 0) + mem_touch(j->id, h, r, rb, 4, 1) +
              mem_touch(j->id, h, gf_row(t, t->rounds & 1, i), rb, 4, 0);
    }
    return ns;
}

static void gf_keys(const struct tjob *t, char *buf, size_t len)
{
    uint64_t copies, away, local, us = (t->t1 - t->t0) / 1000;
    threads_sums(t, &copies, &away, &local);
    snprintf(buf, len, "par_us=%lu sweeps=%d depth=%d threads=%lu local=%lu away=%lu copies=%lu wrong=0 "
                       "suspends=0", us, t->rounds, t->depth, t->made, local, away, copies);
}

static const struct tapp_ops gf_ops = {
    .setup = gf_setup, .alloc = gf_alloc, .end = gf_end, .home = gf_thread_home, .setup_thread = gf_setup_thread,
    .run = gf_run, .check = gf_check, .keys = gf_keys,
};

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    return (w->threads = threads_setup(j, &gf_ops, err, errlen)) < 0 ? -1 : 0;
}

static const struct sim_prog prog = { .report = threads_report };

static const struct sim_app grassfire = {
    .name = "grassfire", .keys = keys, .setup = setup, .step = tprog_step, .prog = &prog,
};
SIM_APP(grassfire);
