/*
 * grassfire - the Grassfire transform of an n x n binary image on
 * user-level threads (Markatos chapter 4, Table 4.1 and Fig. 4.2): "this
 * nearest-neighbor algorithm to compute the depth of objects in an image
 * represented by a binary input matrix ... During each iteration, the
 * fine-grain decomposition creates a new thread for each row in the image."
 *
 * The transform. The depth of a background pixel is 0; the depth of an
 * object pixel is its city-block distance to the nearest background pixel,
 * everything outside the image counting as background. A fire lit on the
 * background burns into the objects one pixel per sweep: sweep t computes,
 * for every pixel, new = 0 on the background, else min(old, 1 + the least
 * of its four neighbours' old values) (Jacobi: every sweep reads the image
 * the last one wrote, so the result and the number of sweeps do not depend
 * on the order threads run in). Object pixels start "unburnt" (UNBURNT);
 * after sweep t every pixel of depth <= t is final, so with D the largest
 * depth the image is done after D sweeps and sweep D + 1 changes nothing
 * and ends the run: sweeps = D + 1.
 *
 * The image: object disks of radius 2..max(2, n/24) at positions drawn
 * from the job's seed (so the image does not depend on P), about half of
 * the pixels. Rows live in two images (the one a sweep reads, the one it
 * writes), and row i's pair lives at its home, process i*P/n (blocks of
 * rows: a row's neighbours are at the same home except at block edges),
 * allocated node-locally (sl_alloc_node) by a set-up thread pinned there.
 *
 * The threads of a sweep, made by the main thread, which waits for all of
 * them (a join counter) before the next sweep:
 *   variant=fine    one thread per row, placed by place= (place.h,
 *                   sl_place_spawn): mcs at the row's home, lb on the least
 *                   loaded process
 *   variant=coarse  one thread per process for its block of rows (the
 *                   thesis's coarse grain: as many threads as processors,
 *                   each with its part of the data); it stands for Table
 *                   4.1's lower bound, "load balancing exclusive of
 *                   inter-processor communication", which cannot compute a
 *                   right answer. place=lb is refused
 * As gauss variant=fine does (the Butterfly style), a thread works on its
 * own process's memory: each of the three rows it reads whose home is
 * another process is first copied into the process's local buffer, and a
 * row it writes away from its home is built there and copied back.
 * copies= counts those rows: lb about 4 per row swept away from its home,
 * mcs and coarse only the neighbour rows across block edges. local= counts
 * the rows swept at their home, away= the others (mcs and coarse: 0 unless
 * process control rescued a suspended home's threads).
 *
 * Working set against the machine profiles (tools/model/profiles): the two
 * images, 8 n^2 bytes. The default n = 384 is 1.15 MB: more than one `iris`
 * hart's 1 MB second-level cache, less than the two harts' together, as
 * the thesis's 512 x 512 image "fits in two caches" of the Iris (Fig. 4.2).
 * Under `butterfly` (no caches, 2 nodes at CPUS=2) what counts is whose
 * node a row is on: lb copies about half the rows across nodes.
 *
 * Check (process 0, after the run): the result equals a sequential
 * two-pass (chamfer) distance transform of the same image, sweeps = D + 1,
 * and the thread and placement counts add up.
 */
#include "schedlab.h"
#include "threads/place.h"
#include "threads/uthread.h"

#define UNBURNT 0x7fffffffu

SL_APP(.about = "Grassfire transform, a thread per image row (Markatos ch. 4)",
       /* two images, 8 n^2; the check's image and row pointers, 4 n^2 + 16 n;
          per process the thread scheduler (deque, a cache of 8 stacks) and
          page rounding. */
       .mem_key = "n", .mem_quad = 14, .mem_lin = 16 + 16 * SL_MAX_PROCS, .mem_const = 256 * 1024,
       .mem_per_proc = 8 * SL_THREAD_STACK + 128 * 1024, .flags = SL_APP_ADAPTIVE,
       SL_KEYS(SL_INT("n", 1, 4096, 384), SL_ENUM("variant", "coarse|fine", 1), SL_ENUM("place", "mcs|lb", 0)));

struct disk {
    int y, x, r;
};

/* One per process, node-local; written only by the threads running on it,
   which never wait, so never interleave. */
struct gf_proc {
    uint32_t *in[3], *out; /* local copies: rows i-1, i, i+1, and row i's new values */
    uint64_t local, away, copies;
} __attribute__((aligned(64)));

struct grassfire {
    int n, P, coarse, place;
    uint32_t **row[2];             /* row[b][i]: row i of image b */
    struct gf_proc *gp[SL_MAX_PROCS];
    struct disk *disk;
    int ndisks;
    uint32_t changed;              /* rows the current sweep changed */
    struct sl_joincnt jc;
    int sweeps;
    uint64_t t0, t1;
};

static struct grassfire *G;

static int home_of(int i) { return (int)((int64_t)i * G->P / G->n); }
static int block_lo(int p) { return (int)(((int64_t)p * G->n + G->P - 1) / G->P); } /* first i with home_of(i) >= p */

/* Row i of the image: 0 on the background, `object` inside a disk. */
static void gen_row(uint32_t *r, int i, uint32_t object)
{
    memset(r, 0, (size_t)G->n * sizeof *r);
    for (int d = 0; d < G->ndisks; d++) {
        const struct disk *c = &G->disk[d];
        int dy = i - c->y, w = 0;
        if (dy < -c->r || dy > c->r)
            continue;
        while ((w + 1) * (w + 1) + dy * dy <= c->r * c->r)
            w++;
        for (int x = c->x - w; x <= c->x + w; x++)
            if (x >= 0 && x < G->n)
                r[x] = object;
    }
}

/* ---- a sweep ---- */

/* Row i of image b as process p may read it: in place at home, else its copy slot s. */
static const uint32_t *read_row(int b, int i, int p, int s)
{
    struct gf_proc *gp = G->gp[p];

    if (i < 0 || i >= G->n)
        return 0;
    if (home_of(i) == p)
        return G->row[b][i];
    memcpy(gp->in[s], G->row[b][i], (size_t)G->n * sizeof(uint32_t));
    gp->copies++;
    return gp->in[s];
}

static inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* One pixel row: out from old row c and its neighbours u, d (0: outside);
   1 if anything changed. */
static int burn(uint32_t *out, const uint32_t *u, const uint32_t *c, const uint32_t *d, int n)
{
    int changed = 0;

    for (int x = 0; x < n; x++) {
        uint32_t v = c[x], m = x > 0 ? c[x - 1] : 0;
        if (v == 0) {
            out[x] = 0;
            continue;
        }
        m = min_u32(m, x + 1 < n ? c[x + 1] : 0);
        m = min_u32(m, u ? u[x] : 0);
        m = min_u32(m, d ? d[x] : 0);
        if (m + 1 < v) {
            v = m + 1;
            changed = 1;
        }
        out[x] = v;
    }
    return changed;
}

/* Row i from image b into image !b on this process. */
static int sweep_row(int b, int i)
{
    int p = sl_self(), n = G->n, home = home_of(i) == p;
    struct gf_proc *gp = G->gp[p];
    uint32_t *out = home ? G->row[!b][i] : gp->out;
    int changed = burn(out, read_row(b, i - 1, p, 0), read_row(b, i, p, 1), read_row(b, i + 1, p, 2), n);

    if (!home) {
        memcpy(G->row[!b][i], out, (size_t)n * sizeof *out);
        gp->copies++;
        gp->away++;
    } else {
        gp->local++;
    }
    return changed;
}

/* A thread of a sweep: arg = image b << 32 | row (fine) or process (coarse). */
static void sweep_thread(void *arg)
{
    uintptr_t a = (uintptr_t)arg;
    int b = (int)(a >> 32), k = (int)(a & 0xffffffffu), changed = 0;

    if (G->coarse) {
        for (int i = block_lo(k); i < block_lo(k + 1); i++)
            changed += sweep_row(b, i);
    } else {
        changed = sweep_row(b, k);
    }
    if (changed)
        __atomic_add_fetch(&G->changed, (uint32_t)changed, __ATOMIC_RELAXED);
    sl_joincnt_signal(&G->jc);
}

/* Set-up, a thread pinned to each process p: its buffers and its block of
   rows in both images, node-local. */
static void gf_setup(void *arg)
{
    int p = (int)(uintptr_t)arg, n = G->n, lo = block_lo(p), hi = block_lo(p + 1);
    size_t rowb = (size_t)n * sizeof(uint32_t);
    struct gf_proc *gp = sl_alloc_node(sizeof *gp, -1);
    uint32_t *buf = sl_alloc_node(4 * rowb, -1);
    uint32_t *img = hi > lo ? sl_alloc_node(2 * (size_t)(hi - lo) * rowb, -1) : 0;

    if (!gp || !buf || (hi > lo && !img))
        sl_die("out of memory for process %d's rows (n=%d)", p, n);
    memset(gp, 0, sizeof *gp);
    for (int s = 0; s < 3; s++)
        gp->in[s] = buf + (size_t)s * (size_t)n;
    gp->out = buf + 3 * (size_t)n;
    for (int i = lo; i < hi; i++) {
        G->row[0][i] = img + (size_t)(i - lo) * (size_t)n;
        G->row[1][i] = img + (size_t)(hi - lo + i - lo) * (size_t)n;
        gen_row(G->row[0][i], i, UNBURNT);
    }
    G->gp[p] = gp;
    sl_joincnt_signal(&G->jc);
}

static void gf_main(void *arg)
{
    struct grassfire *g = arg;
    int per = g->coarse ? g->P : g->n;
    uint32_t changed;

    sl_joincnt_init(&g->jc, (uint32_t)g->P);
    for (int p = 0; p < g->P; p++)
        sl_thread_spawn_on(p, gf_setup, (void *)(uintptr_t)p);
    sl_joincnt_wait(&g->jc);

    g->t0 = sl_now_us();
    do {
        uintptr_t b = (uintptr_t)(g->sweeps & 1) << 32;
        __atomic_store_n(&g->changed, 0, __ATOMIC_RELAXED);
        sl_joincnt_init(&g->jc, (uint32_t)per);
        for (int k = 0; k < per; k++) {
            void *a = (void *)(b | (uintptr_t)k);
            if (g->coarse)
                sl_thread_spawn_on(k, sweep_thread, a);
            else
                sl_place_spawn((enum sl_place)g->place, g->place == SL_PLACE_MCS ? home_of(k) : -1, -1,
                               sweep_thread, a);
        }
        sl_joincnt_wait(&g->jc);
        g->sweeps++;
        changed = __atomic_load_n(&g->changed, __ATOMIC_ACQUIRE);
    } while (changed);
    g->t1 = sl_now_us();
}

/* The largest depth; the number of pixels where image b differs from a
   sequential two-pass distance transform of the same image. */
static uint64_t check_depths(struct grassfire *g, int b, uint32_t *maxd)
{
    int n = g->n;
    uint32_t *d = sl_malloc((size_t)n * (size_t)n * sizeof *d);
    uint64_t bad = 0;

    if (!d)
        sl_die("out of memory for the check (n=%d)", n);
    *maxd = 0;
    for (int i = 0; i < n; i++) { /* forward: from above and from the left */
        uint32_t *r = d + (size_t)i * (size_t)n;
        gen_row(r, i, 1);
        for (int x = 0; x < n; x++) {
            if (!r[x])
                continue;
            uint32_t up = i > 0 ? r[x - n] : 0, left = x > 0 ? r[x - 1] : 0;
            r[x] = (up < left ? up : left) + 1;
        }
    }
    for (int i = n - 1; i >= 0; i--) { /* backward: from below and from the right */
        uint32_t *r = d + (size_t)i * (size_t)n;
        for (int x = n - 1; x >= 0; x--) {
            if (!r[x])
                continue;
            uint32_t down = i + 1 < n ? r[x + n] : 0, right = x + 1 < n ? r[x + 1] : 0;
            uint32_t m = (down < right ? down : right) + 1;
            if (m < r[x])
                r[x] = m;
            if (r[x] > *maxd)
                *maxd = r[x];
        }
        for (int x = 0; x < n; x++)
            bad += r[x] != g->row[b][i][x];
    }
    sl_free(d);
    return bad;
}

int main(void)
{
    struct grassfire g = { .n = (int)sl_arg_int("n"), .P = sl_nprocs(), .coarse = sl_arg_is("variant", "coarse"),
                           .place = sl_place_parse(sl_arg_str("place")) };
    int rmax, per;
    uint64_t local = 0, away = 0, copies = 0, bad, want;
    uint32_t maxd;
    struct sl_thread_stats st;
    struct sl_rng r;

    if (g.coarse && g.place != SL_PLACE_MCS)
        sl_die("place=%s needs variant=fine (variant=coarse puts each block at its home)", sl_arg_str("place"));
    G = &g;
    rmax = g.n / 24 > 2 ? g.n / 24 : 2;
    g.ndisks = 1 + g.n * g.n / (2 * rmax * rmax);
    g.row[0] = sl_malloc((size_t)g.n * sizeof *g.row[0]);
    g.row[1] = sl_malloc((size_t)g.n * sizeof *g.row[1]);
    g.disk = sl_malloc((size_t)g.ndisks * sizeof *g.disk);
    if (!g.row[0] || !g.row[1] || !g.disk)
        sl_die("out of memory for n=%d", g.n);
    sl_rng_init(&r, 0x67f1);
    for (int d = 0; d < g.ndisks; d++) {
        g.disk[d].y = (int)sl_rng_below(&r, (uint64_t)g.n);
        g.disk[d].x = (int)sl_rng_below(&r, (uint64_t)g.n);
        g.disk[d].r = 2 + (int)sl_rng_below(&r, (uint64_t)(rmax - 1));
    }
    sl_threads_run(gf_main, &g);
    sl_threads_stats(&st);
    for (int p = 0; p < g.P; p++) {
        local += g.gp[p]->local;
        away += g.gp[p]->away;
        copies += g.gp[p]->copies;
    }
    per = g.coarse ? g.P : g.n;
    want = (uint64_t)g.sweeps * (uint64_t)g.n; /* rows swept */
    bad = check_depths(&g, g.sweeps & 1, &maxd);
    sl_report(bad == 0 && (uint32_t)g.sweeps == maxd + 1 && local + away == want &&
                  st.threads == (uint64_t)g.sweeps * (uint64_t)per + (uint64_t)g.P + 1,
              "par_us=%lu sweeps=%d depth=%u threads=%lu local=%lu away=%lu copies=%lu wrong=%lu sleeps=%lu "
              "suspends=%lu",
              (unsigned long)(g.t1 - g.t0), g.sweeps, maxd, (unsigned long)st.threads, (unsigned long)local,
              (unsigned long)away, (unsigned long)copies, (unsigned long)bad, (unsigned long)st.sleeps,
              (unsigned long)st.suspends);
    return 0;
}
