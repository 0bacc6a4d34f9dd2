/*
 * sim_tapps.c - the thread apps of Markatos chapter 4 (gauss variant=fine, grassfire, msort) on sim_threads.c's mechanism (main, placement, the
 * processes' loops): what their threads are, what each costs, which rows it copies and what it touches.
 *
 *   gauss variant=fine (apps/gauss/fine.c; sync=barrier: Markatos's version 2, sync=cond: version 1): before the run process 0
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
 *             sync=barrier: main makes column k + 1 once column k is done. sync=cond: main makes column k
 *             once pivot row k is final and column k - 2 done (FINE_WINDOW columns in flight), and thread
 *             (i, k) waits until pivot row k is final and row i has had columns 0..k-1 (tapp_can_run).
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
 *   msort     (apps/msort.c): the tree as the app builds it (split in proportion to the processes down to
 *             one chunk each, then halved to leaves of `leaf` keys; coarse: a leaf per chunk); P chunks of
 *             A and B, node-local, allocated by the set-up threads (A's keys generated). One round: main
 *             makes every leaf's thread; the last child to finish makes its parent's (so threads are made
 *             as the data is ready); placement mcs at the node's home (the process with most of its keys),
 *             lb the least loaded, coarse on its home. A leaf sorts its slice with sort_to (insertion sorts
 *             of 16, then merge levels alternating A and B, MS_INSERT + levels steps of calib.msort_key a key),
 *             a node merges its children's halves from the other buffer into its own (MS_MERGE a key); each
 *             key read and written where it lives (its chunk's node). Its node and its parent's pending count
 *             (a shared line) too. The check reads A. RESULT: par_us threads= leaves= local= away=
 *             remote_keys= as the app counts them.
 * Not modelled: the apps' check arithmetic (process 0's proc_end).
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
static int ms_setup(struct job *j, struct tjob *t, char *err, size_t errlen);

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

int tapp_setup(struct job *j, struct tjob *t, char *err, size_t errlen)
{
    char v[32];
    const char *a = j->scen->args, *app = j->scen->app;
    int gauss = !strcmp(app, "gauss");
    if (gauss && (scenario_arg(a, "variant", v, sizeof v) != 0 || strcmp(v, "fine")))
        return 0; /* coarse: a barrier program (sim_work.c) */
    if (!gauss && strcmp(app, "grassfire") && strcmp(app, "msort"))
        return 0;
    t->app = gauss ? TA_GAUSS : !strcmp(app, "grassfire") ? TA_GRASSFIRE : TA_MSORT;
    t->place = scenario_arg(a, "place", v, sizeof v) == 0 && !strcmp(v, "lb") ? PL_LB : PL_MCS;
    t->n = scenario_arg(a, "n", v, sizeof v) == 0 ? atoi(v) : gauss ? 0 : 384; /* the apps' defaults */
    if (gauss) {
        t->cond = scenario_arg(a, "sync", v, sizeof v) == 0 && !strcmp(v, "cond");
        if (scenario_arg(a, "sched", v, sizeof v) == 0 && strcmp(v, "static"))
            return snprintf(err, errlen, "job=gauss: sched=%s needs variant=coarse (as the app says)", v), -1;
        if (t->n < 2)
            return snprintf(err, errlen, "job=gauss: variant=fine needs n= of at least 2 in the simulator"), -1;
        t->spin = scenario_arg(a, "barrier", v, sizeof v) != 0 || strcmp(v, "block"); /* the app's default: spin */
        t->rounds = t->n - 1;
        uint32_t *w = calloc(2 * (size_t)t->n, sizeof *w); /* ready[], then colleft[] */
        if (!w)
            panic("sim: out of memory for gauss's words");
        for (int k = 0; k < t->n - 1; k++)
            w[t->n + k] = (uint32_t)(t->n - 1 - k);
        t->data = w;
        return 1;
    }
    t->coarse = scenario_arg(a, "variant", v, sizeof v) == 0 && !strcmp(v, "coarse");
    if (t->coarse && t->place == PL_LB)
        return snprintf(err, errlen, "job=%s: place=lb needs variant=fine (as the app says)", app), -1;
    if (t->app == TA_MSORT)
        return ms_setup(j, t, err, errlen);
    gf_depths(j, t);
    return 1;
}

/* msort's tree, as apps/msort.c builds it (preorder; the left child is the next node). */
struct msnode {
    uint32_t lo, hi;
    int32_t parent, right; /* right: -1 for a leaf */
    uint32_t pending;      /* children not finished */
    int16_t home;
    uint8_t dst;           /* the buffer it delivers into: 0 A, 1 B */
};

static struct msnode *ms_nodes(const struct tjob *t) { return t->data; }
static int *ms_leaves(const struct tjob *t) { return (int *)((struct msnode *)t->data + t->ncap); }

static int ms_build(struct tjob *t, uint32_t lo, uint32_t hi, int p0, int p1, int parent, int dst)
{
    int me = t->nnodes++, pm = p0;
    struct msnode *v = &ms_nodes(t)[me];
    uint32_t mid;
    *v = (struct msnode){ lo, hi, parent, -1, 0, (int16_t)p0, (uint8_t)dst };
    if (p1 - p0 == 1) {
        if (t->coarse || hi - lo <= (uint32_t)t->leaf) {
            ms_leaves(t)[t->nleaves++] = me;
            return me;
        }
        mid = lo + (hi - lo) / 2;
    } else {
        pm = p0 + (p1 - p0) / 2;
        mid = lo + (uint32_t)((uint64_t)(hi - lo) * (uint64_t)(pm - p0) / (uint64_t)(p1 - p0));
        t->clo[pm] = mid;
    }
    v->pending = 2;
    ms_build(t, lo, mid, p0, p1 - p0 == 1 ? p1 : pm, me, !dst);
    int right = ms_build(t, mid, hi, p1 - p0 == 1 ? p0 : pm, p1, me, !dst);
    v = &ms_nodes(t)[me];
    v->right = right;
    if (p1 - p0 > 1) {
        uint32_t best = 0;
        for (int p = p0; p < p1; p++)
            if (t->clo[p + 1] - t->clo[p] > best) {
                best = t->clo[p + 1] - t->clo[p];
                v->home = (int16_t)p;
            }
    }
    return me;
}

static int ms_count(uint32_t len, int procs, int coarse, uint32_t leaf)
{
    if (procs == 1 && (coarse || len <= leaf))
        return 1;
    if (procs == 1)
        return 1 + ms_count(len / 2, 1, coarse, leaf) + ms_count(len - len / 2, 1, coarse, leaf);
    int pm = procs / 2;
    uint32_t mid = (uint32_t)((uint64_t)len * (uint64_t)pm / (uint64_t)procs);
    return 1 + ms_count(mid, pm, coarse, leaf) + ms_count(len - mid, procs - pm, coarse, leaf);
}

static int ms_setup(struct job *j, struct tjob *t, char *err, size_t errlen)
{
    char v[32];
    const char *a = j->scen->args;
    t->n = scenario_arg(a, "n", v, sizeof v) == 0 ? atoi(v) : 131072; /* the app's defaults */
    t->leaf = scenario_arg(a, "leaf", v, sizeof v) == 0 ? atoi(v) : 64;
    if (t->n < j->nprocs)
        return snprintf(err, errlen, "job=msort: n=%d must be at least procs=%d (as the app says)", t->n, j->nprocs),
               -1;
    t->ncap = ms_count((uint32_t)t->n, j->nprocs, t->coarse, (uint32_t)t->leaf);
    t->data = malloc((size_t)t->ncap * (sizeof(struct msnode) + sizeof(int)));
    if (!t->data)
        panic("sim: out of memory for msort's tree");
    t->P = j->nprocs; /* ms_build's homes need it before the mechanism sets it */
    t->clo[0] = 0;
    t->clo[j->nprocs] = (uint32_t)t->n;
    ms_build(t, 0, (uint32_t)t->n, 0, j->nprocs, -1, 0);
    t->rounds = 1;
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
    } else if (t->app == TA_GRASSFIRE) { /* the row pointers and disks; the shared count */
        t->words = th_alloc_zeroed(j, h, (uint64_t)t->n * 16 + 64, &ns);
    } else { /* the tree */
        t->words = th_alloc_zeroed(j, h, (uint64_t)t->nnodes * 24, &ns);
    }
    return ns;
}

int tapp_first(const struct tjob *t, int r) { return t->app == TA_GAUSS ? r + 1 : 0; }

int tapp_end(const struct tjob *t, int r)
{
    return t->app == TA_MSORT ? t->nleaves : t->app == TA_GAUSS || !t->coarse ? t->n : t->P;
}

/* msort's main makes the leaves' threads (i: a node); the others make their parents as they end. */
struct uthr tapp_thread(const struct tjob *t, int idx, int r)
{
    return (struct uthr){ t->app == TA_MSORT ? ms_leaves(t)[idx] : idx, r, 0 };
}

uint32_t tapp_round_threads(const struct tjob *t, int r)
{
    return t->app == TA_MSORT ? (uint32_t)t->nnodes : (uint32_t)(tapp_end(t, r) - tapp_first(t, r));
}

/* gauss's ready[r] (columns applied to row r) and colleft[k] (column k's threads not finished) */
static uint32_t *gs_ready(const struct tjob *t) { return t->data; }
static uint32_t *gs_left(const struct tjob *t) { return (uint32_t *)t->data + t->n; }

/* fine_main: column r once column r - TH_WINDOW is done (sync=barrier: the window is 1 column, its threads
   all finished) and, sync=cond, pivot row r final; the end once every thread has finished. */
int tapp_may_start(const struct tjob *t, int r)
{
    if (t->app != TA_GAUSS || !t->cond || r >= t->rounds)
        return t->left == 0;
    return (r < TH_WINDOW || gs_left(t)[r - TH_WINDOW] == 0) && gs_ready(t)[r] == (uint32_t)r;
}

/* fine_update's waits, sync=cond: pivot row k final, row i has had columns 0..k-1. */
int tapp_can_run(const struct tjob *t, struct uthr u)
{
    return t->app != TA_GAUSS || !t->cond || (gs_ready(t)[u.k] == (uint32_t)u.k && gs_ready(t)[u.i] == (uint32_t)u.k);
}

int tapp_done(struct tjob *t, struct uthr u)
{
    if (t->app != TA_GAUSS)
        return 0;
    gs_ready(t)[u.i] = (uint32_t)u.k + 1;
    gs_left(t)[u.k]--;
    return t->cond;
}

int tapp_home(const struct tjob *t, int i, int r)
{
    if (t->app == TA_GAUSS)
        return t->place == PL_MCS ? gs_home(t, i) : -1;
    if (t->app == TA_MSORT)
        return t->coarse || t->place == PL_MCS ? ms_nodes(t)[i].home : -1;
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
    if (t->app == TA_MSORT) { /* its state, chunks A and B; A's keys generated */
        uint64_t len = (uint64_t)(t->clo[p + 1] - t->clo[p]) * 4;
        q->buf = th_alloc_zeroed(j, h, 64, &ns);
        q->home = th_alloc_zeroed(j, h, len, &ns);
        q->alt = th_alloc_zeroed(j, h, len, &ns);
        return ns + mem_touch(j->id, h, q->home, len, 4, 1);
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

/* ---- msort's node: a leaf's sort, or a merge, with the keys where they live ---- */

/* msort's costs in sort_to's step (calib.msort_key: a key's share of one merge level of its recursion):
   deterministic QEMU, job=msort:procs=1,variant=coarse at n=32768 and 131072 (7921 and 36281 us: 11 and 13
   levels) fit 17.6 ns a key and level and 48.6 (2.77 steps) a key for its insertion sorts of 16;
   variant=fine,leaf=1024 (7148 us) then 12.6 ns (0.72 steps) a key of a cursor merge (merge()). */
#define MS_INSERT 2.77
#define MS_MERGE  0.72
#define MS_INSERT_MAX 16

static int ms_levels(uint32_t len)
{
    int l = 0;
    for (uint32_t m = len; m > MS_INSERT_MAX; m = (m + 1) / 2)
        l++;
    return l;
}

/* Touch positions [lo, hi) of buffer b (0 A, 1 B) chunk by chunk; stall ns. */
static uint64_t ms_touch(struct job *j, const struct tjob *t, int h, int b, uint32_t lo, uint32_t hi, int store)
{
    uint64_t ns = 0;
    for (int c = 0; c < t->P && lo < hi; c++) {
        uint32_t a = t->clo[c] > lo ? t->clo[c] : lo, e = t->clo[c + 1] < hi ? t->clo[c + 1] : hi;
        if (e > a)
            ns += mem_touch(j->id, h, (b ? t->pr[c].alt : t->pr[c].home) + (uint64_t)(a - t->clo[c]) * 4,
                            (uint64_t)(e - a) * 4, 4, store);
    }
    return ns;
}

static uint64_t ms_node(struct job *j, struct tjob *t, int p, int h, int i, struct uthr *next, int *spawn)
{
    struct msnode *v = &ms_nodes(t)[i];
    struct tproc *q = &t->pr[p];
    uint32_t len = v->hi - v->lo, a = t->clo[p] > v->lo ? t->clo[p] : v->lo;
    uint32_t e = t->clo[p + 1] < v->hi ? t->clo[p + 1] : v->hi;
    int m = mem_on(), lv = ms_levels(len);
    uint64_t ns = (uint64_t)calib.thread_run;
    if (v->right < 0) { /* sort_to: insertion sorts, then lv merge levels, ending in buffer dst */
        ns += (uint64_t)((double)len * (MS_INSERT + lv) * calib.msort_key);
        if (m) {
            ns += ms_touch(j, t, h, 0, v->lo, v->hi, 0) + ms_touch(j, t, h, 0, v->lo, v->hi, 1);
            for (int l = 0; l < lv; l++) /* each level reads one buffer and writes the other */
                ns += ms_touch(j, t, h, (lv - l + v->dst) & 1, v->lo, v->hi, 0) +
                      ms_touch(j, t, h, (lv - l + v->dst + 1) & 1, v->lo, v->hi, 1);
            if (!lv && v->dst) /* an insertion-sorted slice copied to B */
                ns += ms_touch(j, t, h, 1, v->lo, v->hi, 1);
        }
    } else { /* merge(): both halves from the other buffer into dst */
        ns += (uint64_t)((double)len * MS_MERGE * calib.msort_key);
        if (m)
            ns += ms_touch(j, t, h, !v->dst, v->lo, v->hi, 0) + ms_touch(j, t, h, v->dst, v->lo, v->hi, 1);
    }
    q->local += v->home == p;
    q->away += v->home != p;
    q->copies += (uint64_t)len - (e > a ? e - a : 0); /* remote_keys: keys outside p's chunk */
    if (m) { /* its node; its parent's pending (a shared line) */
        ns += mem_touch(j->id, h, t->words + (uint64_t)i * 24, 24, 8, 0);
        if (v->parent >= 0)
            ns += mem_touch(j->id, h, t->words + (uint64_t)v->parent * 24 + 16, 4, 4, 0) +
                  mem_touch(j->id, h, t->words + (uint64_t)v->parent * 24 + 16, 4, 4, 1);
    }
    if (v->parent >= 0 && --ms_nodes(t)[v->parent].pending == 0) { /* the last child makes its parent */
        *next = (struct uthr){ v->parent, 0, 0 };
        *spawn = 1;
        ns += (uint64_t)calib.thread_create;
    }
    return ns;
}

uint64_t tapp_run(struct job *j, struct tjob *t, int p, int h, struct uthr u, struct uthr *next, int *spawn)
{
    if (t->app == TA_GAUSS)
        return gauss_update(j, t, p, h, u.i, u.k);
    if (t->app == TA_MSORT)
        return ms_node(j, t, p, h, u.i, next, spawn);
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
    if (t->app == TA_MSORT) /* check_sorted: A, in order */
        return ms_touch(j, t, h, 0, 0, (uint32_t)t->n, 0);
    /* check_depths: a new image d; forward, row by row: row i generated (written), then read and written
       from row i-1 above; backward, from the last row: row i read and written from row i+1 below, then
       compared with result row i (so the result rows are read interleaved with d's, last row first) */
    uint64_t rb = gf_rowb(t), bytes = rb * (uint64_t)t->n, d = th_alloc_zeroed(j, h, bytes, &ns);
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
    else if (t->app == TA_MSORT)
        snprintf(buf, len, "par_us=%lu threads=%lu leaves=%d local=%lu away=%lu remote_keys=%lu unsorted=0 "
                           "suspends=0", us, t->made, t->nleaves, local, away, copies);
    else
        snprintf(buf, len, "par_us=%lu sweeps=%d depth=%d threads=%lu local=%lu away=%lu copies=%lu wrong=0 "
                           "suspends=0", us, t->rounds, t->depth, t->made, local, away, copies);
}
