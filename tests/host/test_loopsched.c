/* test_loopsched.c - the loop schedulers of lib/loops/loopsched.c.
 *
 *   coverage     every scheduler hands out each iteration of [0, N) exactly once, for N from 0 up and
 *                P from 1 up (N < P included), in the deterministic simulation and with real threads
 *                racing for chunks (random delays, more threads than cores); grabs = chunks seen
 *   shapes       STATIC takes one share per process, SS one iteration per grab, GSS's first chunk is
 *                floor(N/P), FACTORING's first batch is P chunks of floor(N/2P) (both at least 1), TRAPEZOID starts at
 *                floor(N/2P) and never grows, AFS's first grab is ceil(share/k) from the own queue;
 *                MOD-FACTORING cuts FACTORING's chunks (as many grabs) and gives process i the i-th chunk of a
 *                batch while it is there, else the first left; BEST-STATIC is STATIC's shares without a split
 *                and the app's parts with one (sl_loop_split_weighted: contiguous, non-empty, equal weight)
 *   counts       with real threads racing, every scheduler's grab count is the simulation's for the same N
 *                and P (AFS with k = P included): it depends on N and P only
 *   Markatos     the simulation's grab counts for his loop sizes (SOR N=512, transitive closure N=640,
 *                adjoint N=5625; Tables 5.3-5.5) are printed next to the thesis's and checked against
 *                the schedulers' formulas: SS = N, STATIC = P, GSS <= ceil(P ln(N/P)) + 2P,
 *                FACTORING <= P (ceil(log2(N/P)) + 2), GSS <= FACTORING, TRAPEZOID <= ceil(2N/(f+1))
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loops/loopsched.h"
#include "base/rng.h"
#include "check.h"

/* The spinlock's yield: this test links lib/loops/loopsched.c alone, without the host backend. */
long
sl_sys_yield(void)
{
    sched_yield();
    return 0;
}

static struct sl_loop *
new_loop(enum sl_loopsched kind, int p, int k)
{
    struct sl_loop *l = aligned_alloc(64, (sl_loop_bytes(p) + 63) & ~(size_t)63);

    sl_loop_init(l, kind, p, k);
    return l;
}

/* ---- the simulation ---- */

struct seen {
    int64_t n;
    uint8_t *hits;
    uint64_t chunks, bad, local;
    int64_t first_len;
    int first_local;
};

static void
see(void *ctx, int proc, const struct sl_chunk *c)
{
    struct seen *s = ctx;

    (void)proc;
    if (s->chunks == 0) {
        s->first_len = c->len;
        s->first_local = c->local;
    }
    s->chunks++;
    s->local += (uint64_t)c->local;
    if (c->len <= 0 || c->start < 0 || c->start + c->len > s->n) {
        s->bad++;
        return;
    }
    for (int64_t i = c->start; i < c->start + c->len; i++)
        s->hits[i]++;
}

static uint64_t
simulate(enum sl_loopsched kind, int64_t n, int p, struct seen *s)
{
    struct sl_loop *l = new_loop(kind, p, 0);
    uint64_t local, remote, chunks;

    memset(s, 0, sizeof *s);
    s->n = n;
    s->hits = calloc((size_t)n + 1, 1);
    chunks = sl_loop_simulate(l, n, see, s);
    sl_loop_grabs(l, &local, &remote);
    CHECK(chunks == s->chunks && local + remote == chunks && local == s->local);
    CHECK(s->bad == 0);
    for (int64_t i = 0; i < n; i++)
        if (s->hits[i] != 1) {
            CHECK(s->hits[i] == 1);
            fprintf(stderr, "  %s n=%lld p=%d: iteration %lld handed out %d times\n", sl_loop_name(kind),
                    (long long)n, p, (long long)i, s->hits[i]);
            break;
        }
    free(s->hits);
    free(l);
    return chunks;
}

static int64_t
cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static void
test_simulation_covers_and_shapes(void)
{
    static const int64_t ns[] = { 0, 1, 2, 3, 5, 7, 64, 100, 511, 1000, 4099 };
    static const int ps[] = { 1, 2, 3, 4, 5, 7, 8, 16 };
    struct seen s;

    for (int k = 0; k < SL_NLOOPSCHEDS; k++)
        for (unsigned a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (unsigned b = 0; b < sizeof ps / sizeof ps[0]; b++) {
                int64_t n = ns[a];
                int p = ps[b];
                uint64_t g = simulate((enum sl_loopsched)k, n, p, &s);
                if (n == 0) {
                    CHECK(g == 0);
                    continue;
                }
                switch (k) {
                case SL_LOOP_STATIC:
                    CHECK(g == (uint64_t)(n < p ? n : p) && s.local == g);
                    break;
                case SL_LOOP_SS:
                    CHECK(g == (uint64_t)n && s.local == 0 && s.first_len == 1);
                    break;
                case SL_LOOP_GSS:
                    CHECK(s.first_len == (n / p > 1 ? n / p : 1) && s.local == 0);
                    break;
                case SL_LOOP_FACTORING:
                    CHECK(s.first_len == (n / (2 * p) > 1 ? n / (2 * p) : 1) && s.local == 0);
                    break;
                case SL_LOOP_TRAPEZOID:
                    CHECK(s.first_len == (n / (2 * p) < 1 ? 1 : n / (2 * p)) || s.first_len == n);
                    break;
                case SL_LOOP_AFS:
                    CHECK(s.first_local == 1 || n * 1 / p == 0);
                    if (n >= p)               /* every share is non-empty and its owner comes first */
                        CHECK(s.local >= (uint64_t)p);
                    break;
                case SL_LOOP_MODFACTORING: {
                    struct seen f;
                    CHECK(g == simulate(SL_LOOP_FACTORING, n, p, &f) && s.first_len == f.first_len);
                    CHECK(s.local == g);        /* taking turns, every process finds its own chunk */
                    break;
                }
                case SL_LOOP_BESTSTATIC:      /* no split set: static's shares */
                    CHECK(g == (uint64_t)(n < p ? n : p) && s.local == g);
                    break;
                }
            }
}

/* AFS's grab sizes: the first local grab is ceil(share/k); a thief takes ceil(R/P) from the end. */
static void
test_afs_grabs(void)
{
    struct sl_loop *l = new_loop(SL_LOOP_AFS, 4, 2);
    struct sl_chunk c;

    sl_loop_start(l, 0, 100);                 /* shares of 25 */
    CHECK(sl_loop_next(l, 1, &c) && c.start == 25 && c.len == 13 && c.local);
    CHECK(sl_loop_next(l, 1, &c) && c.start == 38 && c.len == 6 && c.local);
    for (int i = 0; i < 5; i++)               /* empty queue 3: 13, 6, 3, 2, 1 */
        CHECK(sl_loop_next(l, 3, &c) && c.local);
    CHECK(sl_loop_next(l, 3, &c) && !c.local); /* steals from queue 0 or 2 (25 left): ceil(25/4) */
    CHECK(c.len == 7 && (c.start == 25 - 7 || c.start == 75 - 7));
    free(l);
}

/* Mod-factoring: the i-th chunk of a batch to process i while it is there, else the first left; a new batch
   only when every chunk of the last is taken. */
static void
test_modfact_chunks(void)
{
    struct sl_loop *l = new_loop(SL_LOOP_MODFACTORING, 4, 0);
    struct sl_chunk c;

    sl_loop_start(l, 0, 100);                 /* batch 1: 4 chunks of floor(100/8) = 12 at 0, 12, 24, 36 */
    CHECK(sl_loop_next(l, 2, &c) && c.start == 24 && c.len == 12 && c.local);
    CHECK(sl_loop_next(l, 2, &c) && c.start == 0 && c.len == 12 && !c.local);  /* its own is gone */
    CHECK(sl_loop_next(l, 0, &c) && c.start == 12 && !c.local);               /* so is process 0's */
    CHECK(sl_loop_next(l, 3, &c) && c.start == 36 && c.local);
    CHECK(sl_loop_next(l, 1, &c) && c.start == 54 && c.len == 6 && c.local); /* batch 2: 52 left, chunks of 6 */
    CHECK(sl_loop_next(l, 0, &c) && c.start == 48 && c.local);
    CHECK(sl_loop_next(l, 1, &c) && c.start == 60 && !c.local);             /* chunk 2: the first left */
    CHECK(sl_loop_next(l, 3, &c) && c.start == 66 && c.local);
    CHECK(sl_loop_next(l, 2, &c) && c.start == 72 + 6 && c.len == 3 && c.local); /* batch 3: 28 left, chunks of 3 */
    free(l);
}

/* Best-static: the app's parts; sl_loop_split_weighted cuts contiguous non-empty parts of about equal weight. */
static void
test_best_static_split(void)
{
    struct sl_loop *l = new_loop(SL_LOOP_BESTSTATIC, 3, 0), *s = new_loop(SL_LOOP_STATIC, 3, 0);
    struct sl_chunk c;
    int64_t first[4] = { 0, 10, 11, 50 }, bad[4] = { 0, 10, 9, 50 };

    CHECK(sl_loop_set_split(s, first) == -1);        /* not best-static */
    CHECK(sl_loop_set_split(l, bad) == -1);          /* not non-decreasing */
    CHECK(sl_loop_set_split(l, first) == 0);
    sl_loop_start(l, 0, 40);                         /* clipped to the loop: [0,10) [10,11) [11,40) */
    CHECK(sl_loop_next(l, 2, &c) && c.start == 11 && c.len == 29 && c.local);
    CHECK(!sl_loop_next(l, 2, &c));
    CHECK(sl_loop_next(l, 1, &c) && c.start == 10 && c.len == 1);
    CHECK(sl_loop_next(l, 0, &c) && c.start == 0 && c.len == 10);
    free(l);
    free(s);

    struct sl_rng r;
    sl_rng_seed(&r, 7, 1);
    for (int t = 0; t < 2000; t++) {
        int64_t n = (int64_t)sl_rng_below(&r, 300), out[17];
        int p = 1 + (int)sl_rng_below(&r, 16);
        uint64_t *w = malloc(((size_t)n + 1) * sizeof *w), total = 0, maxw = 0, pre = 0;
        int skew = t % 3;                             /* uniform, triangular, a block of heavy ones */
        for (int64_t i = 0; i < n; i++) {
            w[i] = skew == 0 ? 1 + sl_rng_below(&r, 100) : skew == 1 ? (uint64_t)(n - i) : (i < n / 3 ? 1000 : 1);
            total += w[i];
            maxw = w[i] > maxw ? w[i] : maxw;
        }
        sl_loop_split_weighted(w, n, p, out);
        CHECK(out[0] == 0 && out[p] == n);
        for (int i = 0; i < p; i++) {
            CHECK(out[i] <= out[i + 1]);
            if (n >= p)
                CHECK(out[i] < out[i + 1]);        /* non-empty */
        }
        for (int i = 1, j = 0; i < p; i++) {          /* each cut within one iteration's weight of i/p */
            while (j < out[i])
                pre += w[j++];
            int forced = n < p || out[i] == out[i - 1] + 1 || out[i] == n - (p - i);
            if (!forced)
                CHECK(pre * (uint64_t)p >= total * (uint64_t)i && (pre - w[out[i] - 1]) * (uint64_t)p < total * (uint64_t)i);
        }
        (void)maxw;
        free(w);
    }
}

/* A trapezoid's chunks fall by a constant step and never below 1. */
static void
test_trapezoid_steps(void)
{
    struct sl_loop *l = new_loop(SL_LOOP_TRAPEZOID, 2, 0);
    struct sl_chunk c;
    int64_t prev = -1, step = -1, n = 0;

    sl_loop_start(l, 0, 512);                 /* f = 128, 8 chunks, delta = floor(127/7) = 18 */
    while (sl_loop_next(l, 0, &c)) {
        if (prev >= 0 && c.start + c.len < 512) {
            if (step < 0)
                step = prev - c.len;
            CHECK(prev - c.len == step);
        }
        CHECK(c.len >= 1);
        prev = c.len;
        n++;
    }
    CHECK(step == 18 && n == 7);
    free(l);
}

/* ---- real threads ---- */

struct race {
    struct sl_loop *l;
    int64_t n;
    uint32_t *hits;
    uint64_t chunks;
    int p;
};

struct racer {
    struct race *r;
    int id;
};

static void *
racer(void *arg)
{
    struct racer *me = arg;
    struct race *r = me->r;
    struct sl_chunk c;
    uint64_t mine = 0, x = (uint64_t)me->id * 0x9e3779b97f4a7c15ull + 1;

    while (sl_loop_next(r->l, me->id, &c)) {
        mine++;
        for (int64_t i = c.start; i < c.start + c.len && i < r->n; i++)
            __atomic_add_fetch(&r->hits[i], 1, __ATOMIC_RELAXED);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (me->id == 0 && x % 4 == 0)          /* a slow process: AFS steals from it */
            for (volatile int i = 0; i < 20000; i++)
                ;
        if (x % 16 == 0)
            sched_yield();
    }
    __atomic_add_fetch(&r->chunks, mine, __ATOMIC_RELAXED);
    return NULL;
}

static void
test_threads_cover(void)
{
    static const int64_t ns[] = { 0, 1, 3, 1000, 10007 };
    static const int ps[] = { 1, 2, 3, 5, 8 };

    for (int k = 0; k < SL_NLOOPSCHEDS; k++)
        for (unsigned b = 0; b < sizeof ps / sizeof ps[0]; b++) {
            int p = ps[b];
            struct race r = { .l = new_loop((enum sl_loopsched)k, p, 0), .p = p };
            for (unsigned a = 0; a < sizeof ns / sizeof ns[0]; a++) {
                pthread_t t[8];
                struct racer rs[8];
                uint64_t local, remote, l0, r0, bad = 0;

                r.n = ns[a];
                r.hits = calloc((size_t)r.n + 1, sizeof *r.hits);
                r.chunks = 0;
                sl_loop_grabs(r.l, &l0, &r0);
                sl_loop_start(r.l, 0, r.n);      /* reused: a new loop on the same object */
                for (int i = 0; i < p; i++) {
                    rs[i] = (struct racer){ &r, i };
                    pthread_create(&t[i], NULL, racer, &rs[i]);
                }
                for (int i = 0; i < p; i++)
                    pthread_join(t[i], NULL);
                for (int64_t i = 0; i < r.n; i++)
                    bad += r.hits[i] != 1;
                sl_loop_grabs(r.l, &local, &remote);
                CHECK(bad == 0);
                CHECK(local + remote - l0 - r0 == r.chunks);
                struct seen sim;
                CHECK(r.chunks == simulate((enum sl_loopsched)k, r.n, p, &sim)); /* N and P decide the count */
                if (bad)
                    fprintf(stderr, "  %s n=%lld p=%d: %llu iterations not handed out once\n",
                            sl_loop_name((enum sl_loopsched)k), (long long)r.n, p, (unsigned long long)bad);
                free(r.hits);
            }
            free(r.l);
        }
}

/* ---- Markatos's loop sizes ---- */

struct table_row {
    const char *loop;
    int64_t n;
    int p;
    int ss, gss, fact, trap;      /* Tables 5.3-5.5 (synchronization operations per loop) */
};

static const struct table_row paper[] = {
    { "SOR", 512, 1, 512, 1, 10, 3 },   { "SOR", 512, 2, 512, 10, 18, 7 },   { "SOR", 512, 4, 512, 23, 32, 13 },
    { "SOR", 512, 6, 512, 33, 50, 16 }, { "SOR", 512, 8, 512, 43, 56, 27 },
    { "TC", 640, 1, 640, 1, 11, 3 },    { "TC", 640, 2, 640, 11, 20, 7 },    { "TC", 640, 4, 640, 23, 36, 13 },
    { "TC", 640, 6, 640, 34, 52, 18 },  { "TC", 640, 8, 640, 45, 64, 22 },
    { "adjoint", 5625, 1, 5625, 1, 14, 3 },  { "adjoint", 5625, 2, 5625, 14, 29, 7 },
    { "adjoint", 5625, 4, 5625, 31, 49, 14 }, { "adjoint", 5625, 6, 5625, 46, 69, 21 },
    { "adjoint", 5625, 8, 5625, 61, 89, 28 },
};

static void
test_markatos_tables(void)
{
    struct seen s;

    printf("grabs per loop, simulation (thesis Tables 5.3-5.5 in parentheses; AFS: total local/remote)\n");
    printf("  %-8s %5s %2s %7s %6s %10s %9s %9s %10s\n", "loop", "N", "P", "STATIC", "SS", "GSS", "FACT",
           "TRAP", "AFS l/r");
    for (unsigned i = 0; i < sizeof paper / sizeof paper[0]; i++) {
        const struct table_row *t = &paper[i];
        int64_t n = t->n, p = t->p, f = n / (2 * p) < 1 ? 1 : n / (2 * p);
        uint64_t st = simulate(SL_LOOP_STATIC, n, t->p, &s);
        uint64_t ss = simulate(SL_LOOP_SS, n, t->p, &s);
        uint64_t gss = simulate(SL_LOOP_GSS, n, t->p, &s);
        uint64_t fact = simulate(SL_LOOP_FACTORING, n, t->p, &s);
        uint64_t trap = simulate(SL_LOOP_TRAPEZOID, n, t->p, &s);
        uint64_t mfact = simulate(SL_LOOP_MODFACTORING, n, t->p, &s);
        CHECK(mfact == fact);                       /* the same batches, in another order */
        uint64_t afs = simulate(SL_LOOP_AFS, n, t->p, &s);
        printf("  %-8s %5lld %2d %7llu %6llu %4llu (%3d) %3llu (%3d) %3llu (%3d) %6llu/%llu\n", t->loop,
               (long long)n, t->p, (unsigned long long)st, (unsigned long long)ss, (unsigned long long)gss,
               t->gss, (unsigned long long)fact, t->fact, (unsigned long long)trap, t->trap,
               (unsigned long long)s.local, (unsigned long long)(afs - s.local));
        CHECK(st == (uint64_t)p);
        CHECK(ss == (uint64_t)n && ss == (uint64_t)t->ss);
        /* floor's chunks end in up to P single iterations more than ceil's */
        CHECK(gss <= (uint64_t)ceil((double)p * log((double)n / (double)p)) + 2 * (uint64_t)p);
        CHECK(fact <= (uint64_t)(p * ((int64_t)ceil(log2((double)n / (double)p)) + 2)));
        CHECK(gss <= fact);
        CHECK(gss == (uint64_t)t->gss);  /* every GSS entry of the thesis, exactly */
        /* factoring: all but adjoint P=2 (27 against the thesis's 29); trapezoid: all but SOR P=6 (15 vs 16) */
        CHECK(fact == (uint64_t)t->fact || (n == 5625 && p == 2 && fact == 27));
        CHECK(trap == (uint64_t)t->trap || (n == 512 && p == 6 && trap == 15));
        CHECK(trap <= (uint64_t)cdiv(2 * n, f + 1));
        CHECK(afs >= (uint64_t)p);
        if (p == 1)                      /* one process: GSS and AFS take everything at once */
            CHECK(gss == 1 && afs == 1 && trap == (uint64_t)t->trap);
    }
}

int
main(void)
{
    test_simulation_covers_and_shapes();
    test_afs_grabs();
    test_trapezoid_steps();
    test_modfact_chunks();
    test_best_static_split();
    test_threads_cover();
    test_markatos_tables();
    return check_done("test_loopsched");
}
