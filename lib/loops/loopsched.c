/*
 * loopsched.c - the loop schedulers (loopsched.h).
 *
 * Invariants. Every iteration of [lo, hi) is handed out exactly once:
 *   central queue (ss, gss, factoring, trapezoid): `next` only grows, and a
 *     chunk is [old next, new next) claimed by one fetch_add (ss), one CAS
 *     (gss) or under `lock` (factoring, trapezoid); a chunk never reaches
 *     past hi
 *   mod-factoring: a batch's chunks are [batch_start, next) cut in
 *     batch_chunks pieces of `chunk`, claimed under `lock` by setting their
 *     bit in `taken`; a new batch is cut from `next` only when every chunk
 *     of the last one is taken
 *   per-process queues (static, best-static, afs): the queues partition [lo, hi) at
 *     start; a chunk is taken from the front (owner) or the end (thief) of
 *     one queue under that queue's lock, so queues only shrink and never
 *     overlap. Loads are read without the lock only to pick a victim; the
 *     victim's load is re-read under its lock
 * A process that finds every queue empty is done: queues never grow during
 * a loop, so a queue seen empty stays empty.
 */
#include "loops/loopsched.h"

static const char *const names[SL_NLOOPSCHEDS] = {
    [SL_LOOP_STATIC] = "static",       [SL_LOOP_SS] = "ss",   [SL_LOOP_GSS] = "gss", [SL_LOOP_FACTORING] = "factoring",
    [SL_LOOP_TRAPEZOID] = "trapezoid", [SL_LOOP_AFS] = "afs", [SL_LOOP_MODFACTORING] = "mod-factoring",
    [SL_LOOP_BESTSTATIC] = "best-static",
};

int sl_loop_parse(const char *name)
{
    for (int k = 0; k < SL_NLOOPSCHEDS; k++)
        if (strcmp(names[k], name) == 0)
            return k;
    return -1;
}

const char *sl_loop_name(enum sl_loopsched kind) { return (unsigned)kind < SL_NLOOPSCHEDS ? names[kind] : "?"; }

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* GSS's and factoring's chunk: floor(a/b), at least 1. The thesis does not say how it rounds; floor is what
   reproduces its grab counts (Tables 5.3-5.5: every GSS entry, all but one factoring entry), where ceil gave
   e.g. 20 grabs for GSS at N=512, P=4 against its 23. */
static int64_t floor_div1(int64_t a, int64_t b) { return a / b > 1 ? a / b : 1; }

size_t sl_loop_bytes(int nprocs) { return sizeof(struct sl_loop) + (size_t)nprocs * sizeof(struct sl_loopq); }

void sl_loop_init(struct sl_loop *l, enum sl_loopsched kind, int nprocs, int k)
{
    memset(l, 0, sl_loop_bytes(nprocs));
    l->kind = kind;
    l->nprocs = nprocs;
    l->k = k > 0 ? k : nprocs;
    for (int i = 0; i < nprocs; i++)
        l->q[i].split = -1;
}

int sl_loop_set_split(struct sl_loop *l, const int64_t *first)
{
    if (l->kind != SL_LOOP_BESTSTATIC || first[0] < 0)
        return -1;
    for (int i = 0; i < l->nprocs; i++)
        if (first[i + 1] < first[i])
            return -1;
    for (int i = 0; i < l->nprocs; i++)
        l->q[i].split = first[i];
    l->split_end = first[l->nprocs];
    return 0;
}

void sl_loop_split_weighted(const uint64_t *w, int64_t n, int p, int64_t *first)
{
    unsigned __int128 total = 0, sum = 0; /* sum = w[0] + ... + w[j-1] */
    int64_t j = 0;

    for (int64_t i = 0; i < n; i++)
        total += w[i];
    first[0] = 0;
    for (int i = 1; i < p; i++) {
        /* part i-1 ends where the sum first reaches i/p of the total, keeping one iteration for it
           and for each part after it while n >= p */
        int64_t lo = n >= p ? first[i - 1] + 1 : first[i - 1], hi = n >= p ? n - (p - i) : n;
        while (j < hi && (j < lo || sum * (unsigned)p < total * (unsigned)i))
            sum += w[j++];
        first[i] = j;
    }
    first[p] = n;
}

static int64_t clip(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

void sl_loop_start(struct sl_loop *l, int64_t lo, int64_t hi)
{
    int64_t n = hi > lo ? hi - lo : 0, p = l->nprocs;

    l->lo = lo;
    l->hi = lo + n;
    __atomic_store_n(&l->next, lo, __ATOMIC_RELAXED);
    l->batch_left = 0;
    l->chunk = 0;
    l->delta = 0;
    if (l->kind == SL_LOOP_TRAPEZOID && n > 0) {
        int64_t f = n / (2 * p), chunks;
        if (f < 1)
            f = 1;
        chunks = ceil_div(2 * n, f + 1);
        l->chunk = f;
        l->delta = chunks > 1 ? (f - 1) / (chunks - 1) : 0;
    }
    l->batch_chunks = 0;
    for (int i = 0; i < l->nprocs; i++) {
        int64_t a = lo + n * i / p, b = lo + n * (i + 1) / p;
        if (l->kind == SL_LOOP_BESTSTATIC && l->q[0].split >= 0) {
            a = clip(l->q[i].split, lo, lo + n);
            b = clip(i + 1 < p ? l->q[i + 1].split : l->split_end, lo, lo + n);
        }
        __atomic_store_n(&l->q[i].next, a, __ATOMIC_RELAXED);
        __atomic_store_n(&l->q[i].end, b, __ATOMIC_RELAXED);
    }
}

/* ---- central queues ---- */

static int64_t take_ss(struct sl_loop *l, int64_t *start)
{
    *start = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    return *start < l->hi ? 1 : 0;
}

static int64_t take_gss(struct sl_loop *l, int64_t *start)
{
    int64_t cur = __atomic_load_n(&l->next, __ATOMIC_RELAXED), c;

    do {
        if (cur >= l->hi)
            return 0;
        c = floor_div1(l->hi - cur, l->nprocs);
    } while (!__atomic_compare_exchange_n(&l->next, &cur, cur + c, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    *start = cur;
    return c;
}

static int64_t take_locked(struct sl_loop *l, int64_t *start)
{
    int64_t cur, r, c;

    sl_spin_lock(&l->lock);
    cur = __atomic_load_n(&l->next, __ATOMIC_RELAXED);
    r = l->hi - cur;
    if (r <= 0) {
        sl_spin_unlock(&l->lock);
        return 0;
    }
    if (l->kind == SL_LOOP_FACTORING) {
        if (l->batch_left == 0) {
            l->chunk = floor_div1(r, 2 * (int64_t)l->nprocs);
            l->batch_left = l->nprocs;
        }
        l->batch_left--;
        c = l->chunk;
    } else { /* trapezoid */
        c = l->chunk;
        if (l->chunk - l->delta >= 1)
            l->chunk -= l->delta;
    }
    if (c > r)
        c = r;
    __atomic_store_n(&l->next, cur + c, __ATOMIC_RELAXED);
    sl_spin_unlock(&l->lock);
    *start = cur;
    return c;
}

/* Mod-factoring (Markatos 5.2.3): process proc takes chunk proc of the batch if it is still there, else the
   first chunk left; a new batch (P chunks of floor(R/2P), at least 1, as factoring's) is cut when all are taken. */
static int64_t take_modfact(struct sl_loop *l, int proc, int64_t *start, int *mine)
{
    int j = -1;
    int64_t len;

    sl_spin_lock(&l->lock);
    for (int i = 0; i < l->batch_chunks && j < 0; i++)
        if (!(l->taken[i / 64] >> (i % 64) & 1))
            j = i;
    if (j < 0) { /* the batch is gone: cut the next */
        int64_t cur = __atomic_load_n(&l->next, __ATOMIC_RELAXED), r = l->hi - cur;
        if (r <= 0) {
            sl_spin_unlock(&l->lock);
            return 0;
        }
        l->chunk = floor_div1(r, 2 * (int64_t)l->nprocs);
        l->batch_chunks = (int)(r / l->chunk < l->nprocs ? r / l->chunk : l->nprocs);
        l->batch_start = cur;
        memset(l->taken, 0, sizeof l->taken);
        __atomic_store_n(&l->next, cur + l->batch_chunks * l->chunk, __ATOMIC_RELAXED);
        j = 0;
    }
    if (proc < l->batch_chunks && !(l->taken[proc / 64] >> (proc % 64) & 1))
        j = proc;
    l->taken[j / 64] |= 1ull << (j % 64);
    *start = l->batch_start + j * l->chunk;
    len = l->chunk;
    sl_spin_unlock(&l->lock);
    *mine = j == proc;
    return len;
}

/* ---- per-process queues ---- */

static int64_t queue_load(const struct sl_loopq *q)
{
    return __atomic_load_n(&q->end, __ATOMIC_RELAXED) - __atomic_load_n(&q->next, __ATOMIC_RELAXED);
}

/* From the front of my own queue: ceil(R/div) of it (div 1: all of it). */
static int64_t take_own(struct sl_loopq *q, int64_t div, int64_t *start)
{
    int64_t r, c;

    sl_spin_lock(&q->lock);
    *start = __atomic_load_n(&q->next, __ATOMIC_RELAXED);
    r = __atomic_load_n(&q->end, __ATOMIC_RELAXED) - *start;
    c = r > 0 ? ceil_div(r, div) : 0;
    __atomic_store_n(&q->next, *start + c, __ATOMIC_RELAXED);
    sl_spin_unlock(&q->lock);
    return c;
}

/* From the end of the most loaded queue: ceil(R/P) of it. */
static int64_t steal(struct sl_loop *l, int64_t *start)
{
    for (;;) {
        int victim = -1;
        int64_t best = 0, r, c;

        for (int i = 0; i < l->nprocs; i++) {
            int64_t load = queue_load(&l->q[i]);
            if (load > best) {
                best = load;
                victim = i;
            }
        }
        if (victim < 0)
            return 0;
        sl_spin_lock(&l->q[victim].lock);
        r = queue_load(&l->q[victim]);
        if (r > 0) {
            c = ceil_div(r, l->nprocs);
            *start = __atomic_load_n(&l->q[victim].end, __ATOMIC_RELAXED) - c;
            __atomic_store_n(&l->q[victim].end, *start, __ATOMIC_RELAXED);
            sl_spin_unlock(&l->q[victim].lock);
            return c;
        }
        sl_spin_unlock(&l->q[victim].lock); /* emptied meanwhile: look again */
    }
}

int sl_loop_next(struct sl_loop *l, int proc, struct sl_chunk *c)
{
    struct sl_loopq *me = &l->q[proc];
    int64_t start = 0, len = 0;
    int local = 0;

    switch (l->kind) {
    case SL_LOOP_STATIC:
    case SL_LOOP_BESTSTATIC:
        len = take_own(me, 1, &start);
        local = 1;
        break;
    case SL_LOOP_SS: len = take_ss(l, &start); break;
    case SL_LOOP_GSS: len = take_gss(l, &start); break;
    case SL_LOOP_FACTORING:
    case SL_LOOP_TRAPEZOID: len = take_locked(l, &start); break;
    case SL_LOOP_MODFACTORING: len = take_modfact(l, proc, &start, &local); break;
    case SL_LOOP_AFS:
        len = queue_load(me) > 0 ? take_own(me, l->k, &start) : 0;
        local = len > 0;
        if (len == 0)
            len = steal(l, &start);
        break;
    default: break;
    }
    if (len <= 0)
        return 0;
    c->start = start;
    c->len = len;
    c->local = local;
    if (local)
        me->local++;
    else
        me->remote++;
    return 1;
}

void sl_loop_grabs(const struct sl_loop *l, uint64_t *local, uint64_t *remote)
{
    *local = *remote = 0;
    for (int i = 0; i < l->nprocs; i++) {
        *local += l->q[i].local;
        *remote += l->q[i].remote;
    }
}

uint64_t sl_loop_simulate(struct sl_loop *l, int64_t n, void (*chunk)(void *ctx, int proc, const struct sl_chunk *c),
                          void *ctx)
{
    uint64_t chunks = 0;
    int live = l->nprocs;
    char done[SL_MAX_PROCS] = { 0 };
    struct sl_chunk c;

    if (l->nprocs > SL_MAX_PROCS)
        return 0;
    sl_loop_start(l, 0, n);
    while (live > 0)
        for (int p = 0; p < l->nprocs; p++) {
            if (done[p])
                continue;
            if (!sl_loop_next(l, p, &c)) {
                done[p] = 1;
                live--;
                continue;
            }
            chunks++;
            if (chunk)
                chunk(ctx, p, &c);
        }
    return chunks;
}
