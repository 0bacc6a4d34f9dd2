/*
 * apps/msort.c - merge sort's model (apps/msort.c), a thread program of Markatos chapter 4 on the kit's
 * thread mechanism (sim_threads.c: main, placement, the processes' loops).
 *
 * The tree as the app builds it (split in proportion to the processes down to one chunk each, then halved
 * to leaves of `leaf` keys; coarse: a leaf per chunk); P chunks of A and B, node-local, allocated by the
 * set-up threads (A's keys generated). One round: main makes every leaf's thread; the last child to finish
 * makes its parent's (so threads are made as the data is ready); placement mcs at the node's home (the
 * process with most of its keys), lb the least loaded, coarse on its home. A leaf sorts its slice with
 * sort_to (insertion sorts of 16, then merge levels alternating A and B, MS_INSERT + levels steps of
 * msort_key_ns a key), a node merges its children's halves from the other buffer into its own (MS_MERGE
 * a key); each key read and written where it lives (its chunk's node). Its node and its parent's pending
 * count (a shared line) too. The check reads A. RESULT: par_us threads= leaves= local= away= remote_keys=
 * as the app counts them. Not modelled: the app's check arithmetic (process 0's proc_end).
 */
#include <stdlib.h>
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"
#include "../sim_threads.h"

/* msort's costs in sort_to's step (msort_key_ns, else MS_KEY_NS: a key's share of one merge level of its recursion):
   deterministic QEMU, job=msort:procs=1,variant=coarse at n=32768 and 131072 (7921 and 36281 us: 11 and 13
   levels) fit 17.6 ns a key and level and 48.6 (2.77 steps) a key for its insertion sorts of 16;
   variant=fine,leaf=1024 (7148 us) then 12.6 ns (0.72 steps) a key of a cursor merge (merge()). */
#define MS_KEY_NS 17.6
#define MS_INSERT 2.77
#define MS_MERGE  0.72
#define MS_INSERT_MAX 16

struct keys {
    int64_t n, leaf;
    double key_ns; /* ns a key a merge level: msort_key_ns, else MS_KEY_NS */
};

static const struct sim_key keys[] = { SIM_KEY(struct keys, n), SIM_KEY(struct keys, leaf), { 0 } };

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
    t->place = scenario_arg(a, "place", v, sizeof v) == 0 && !strcmp(v, "lb") ? PL_LB : PL_MCS;
    t->coarse = scenario_arg(a, "variant", v, sizeof v) == 0 && !strcmp(v, "coarse");
    if (t->coarse && t->place == PL_LB)
        return snprintf(err, errlen, "job=%s: place=lb needs variant=fine (as the app says)", j->scen->app), -1;
    t->n = (int)SIM_STATE(sjob_of(j), struct keys)->n;
    t->leaf = (int)SIM_STATE(sjob_of(j), struct keys)->leaf;
    SIM_STATE(sjob_of(j), struct keys)->key_ns = calib_get("msort_key_ns", MS_KEY_NS);
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


/* main's allocations: the tree. */
static uint64_t ms_alloc(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    t->words = touch_alloc_zeroed(j, h, (uint64_t)t->nnodes * 24, &ns);
    return ns;
}

static int ms_end(const struct tjob *t, int r) { return t->nleaves; }

/* main makes the leaves' threads (i: a node); the others make their parents as they end. */
static struct uthr ms_thread(const struct tjob *t, int idx, int r) { return (struct uthr){ ms_leaves(t)[idx], r, 0 }; }

static uint32_t ms_round_threads(const struct tjob *t, int r) { return (uint32_t)t->nnodes; }

static int ms_home(const struct tjob *t, int i, int r)
{
    return t->coarse || t->place == PL_MCS ? ms_nodes(t)[i].home : -1;
}

/* Process p's set-up thread: its state, chunks A and B; A's keys generated. */
static uint64_t ms_setup_thread(struct job *j, struct tjob *t, int p, int h)
{
    uint64_t ns = (uint64_t)calib.thread_run;
    struct tproc *q = &t->pr[p];
    if (!mem_on())
        return ns;
    uint64_t len = (uint64_t)(t->clo[p + 1] - t->clo[p]) * 4;
    q->buf = touch_alloc_zeroed(j, h, 64, &ns);
    q->home = touch_alloc_zeroed(j, h, len, &ns);
    q->alt = touch_alloc_zeroed(j, h, len, &ns);
    return ns + mem_touch(j->id, h, q->home, len, 4, 1);
}

/* ---- msort's node: a leaf's sort, or a merge, with the keys where they live ---- */


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
        ns += (uint64_t)((double)len * (MS_INSERT + lv) * SIM_STATE(sjob_of(j), struct keys)->key_ns);
        if (m) {
            ns += ms_touch(j, t, h, 0, v->lo, v->hi, 0) + ms_touch(j, t, h, 0, v->lo, v->hi, 1);
            for (int l = 0; l < lv; l++) /* each level reads one buffer and writes the other */
                ns += ms_touch(j, t, h, (lv - l + v->dst) & 1, v->lo, v->hi, 0) +
                      ms_touch(j, t, h, (lv - l + v->dst + 1) & 1, v->lo, v->hi, 1);
            if (!lv && v->dst) /* an insertion-sorted slice copied to B */
                ns += ms_touch(j, t, h, 1, v->lo, v->hi, 1);
        }
    } else { /* merge(): both halves from the other buffer into dst */
        ns += (uint64_t)((double)len * MS_MERGE * SIM_STATE(sjob_of(j), struct keys)->key_ns);
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

static uint64_t ms_run(struct job *j, struct tjob *t, int p, int h, struct uthr u, struct uthr *next, int *spawn)
{
    return ms_node(j, t, p, h, u.i, next, spawn);
}

/* check_sorted: A, in order. */
static uint64_t ms_check(struct job *j, struct tjob *t, int h)
{
    return mem_on() ? ms_touch(j, t, h, 0, 0, (uint32_t)t->n, 0) : 0;
}

static void ms_keys(const struct tjob *t, char *buf, size_t len)
{
    uint64_t copies, away, local, us = (t->t1 - t->t0) / 1000;
    threads_sums(t, &copies, &away, &local);
    snprintf(buf, len, "par_us=%lu threads=%lu leaves=%d local=%lu away=%lu remote_keys=%lu unsorted=0 "
                       "suspends=0", us, t->made, t->nleaves, local, away, copies);
}

static const struct tapp_ops ms_ops = {
    .setup = ms_setup, .alloc = ms_alloc, .end = ms_end, .thread = ms_thread, .round_threads = ms_round_threads,
    .home = ms_home, .setup_thread = ms_setup_thread, .run = ms_run, .check = ms_check, .keys = ms_keys,
};

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    return (w->threads = threads_setup(j, &ms_ops, err, errlen)) < 0 ? -1 : 0;
}

static const struct sim_prog prog = { .report = threads_report };

static const struct sim_app msort = {
    .name = "msort", .keys = keys, .setup = setup, .step = tprog_step, .prog = &prog,
};
SIM_APP(msort);
