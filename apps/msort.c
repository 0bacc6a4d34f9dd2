/*
 * msort - merge sort of n 32-bit keys on user-level threads (Markatos
 * chapter 4, Table 4.1 and Fig. 4.3): "a thread is created for each
 * recursive subdivision of the input. Each thread merges two sorted lists."
 *
 * The keys. Key i is the i-th draw of a splitmix64 stream seeded from the
 * job's seed (so the input does not depend on P). They live in P home
 * chunks, one per process, allocated node-locally (sl_alloc_node) by a
 * set-up thread pinned to that process: chunk p holds positions
 * [clo[p], clo[p+1]) in two buffers, A (the input, and the final result)
 * and B (the other side of the ping-pong). Positions are contiguous across
 * chunks, memory is not: a merge reads and writes through cursors that step
 * from one chunk to the next (struct cur).
 *
 * The tree. Node (lo, hi) over processes [p0, p1): while it spans more than
 * one process it is split in proportion to the process counts (so chunk p
 * is exactly the node whose range of processes is [p, p+1)); inside one
 * chunk it is halved until it has at most `leaf` keys. Children deliver
 * into the other buffer than their parent, the root into A. A leaf sorts
 * its slice of A into its buffer (insertion sort up to 16 keys, a
 * sequential merge sort above), a node merges its two children's halves.
 *   variant=fine    a thread per node, down to leaves of `leaf` keys
 *   variant=coarse  a thread per chunk sorting it sequentially (the
 *                   thesis's coarse grain: as many threads as processors,
 *                   each with its part of the data), then the P - 1 merges
 *                   above them at their homes. It stands for Table 4.1's
 *                   lower bound: the thesis measured LB "exclusive of
 *                   inter-processor communication", which cannot compute a
 *                   right answer; the coarse grain has almost none either.
 * Threads are made as the data is ready, and never wait: the main thread
 * makes every leaf's thread; a thread that finishes counts down its
 * parent's `pending`, and the one that reaches 0 makes the parent's thread;
 * the root's signals the main thread. So no thread holds a stack while it
 * waits, and threads run to completion as in the thesis.
 *
 * Placement, place= (place.h, sl_place_spawn): mcs puts a thread on its
 * node's home, the process whose chunk holds the most of its keys (inside
 * one chunk: that chunk's process); lb on the least loaded process. Either
 * way the thread then reads and writes the keys where they live; keys in
 * another process's chunk are remote (remote_keys= counts each key of such
 * a thread's range once). local= counts threads that ran at their home,
 * away= the others (mcs: 0 unless process control rescued a suspended
 * home's threads; coarse always places at home, place=lb is refused).
 *
 * Working set against the machine profiles (tools/model/profiles): 8 bytes
 * a key (A and B). The default n = 131072 is 1 MB: as much as one `iris`
 * hart's second-level cache (16x its 64 KB first level), so it does not fit
 * in one hart's caches beside the code and stacks, and fits in the two
 * harts' of CPUS=2 - the thesis's regime, whose 2M keys "fit in eight
 * caches (but not four)" of the Iris (Fig. 4.3), scaled to two. Under
 * `butterfly` (no caches, 2 nodes at CPUS=2) what counts is only whose
 * node a key is on: under lb about half of every thread's keys are on the
 * other node, under mcs only those of the root's merge (half of n).
 *
 * Check (process 0, after the run): A is in order, and the sum and the sum
 * of a hash of the keys equal those of the input (taken as it was made),
 * and the thread and placement counts add up.
 */
#include "schedlab.h"
#include "threads/place.h"
#include "threads/uthread.h"

#define INSERT_MAX 16

SL_APP(.about = "merge sort, a thread per subdivision (Markatos ch. 4)",
       /* keys: A and B, 8 bytes a key; tree nodes: at most 2n of 24 bytes
          (leaf=1). Per process: its two chunks' page rounding, the thread
          scheduler (deque, a cache of 8 stacks). */
       .mem_key = "n", .mem_lin = 8 + 48, .mem_const = 256 * 1024,
       .mem_per_proc = 8 * SL_THREAD_STACK + 128 * 1024, .flags = SL_APP_ADAPTIVE,
       SL_KEYS(SL_INT("n", 1, 1 << 22, 131072), SL_INT("leaf", 1, 1 << 22, 64), SL_ENUM("variant", "coarse|fine", 1),
               SL_ENUM("place", "mcs|lb", 0)));

struct node {
    uint32_t lo, hi;   /* its positions */
    int32_t parent;    /* -1: the root */
    int32_t right;     /* its right child (the left is the next node); -1: a leaf */
    uint32_t pending;  /* children not finished */
    int16_t home;      /* the process holding most of its keys */
    uint8_t dst;       /* the buffer it delivers into: 0 A, 1 B */
};

/* One per process, node-local; written only by the threads running on it. */
struct ms_proc {
    uint64_t local, away, remote_keys;
    uint64_t sum, hsum; /* of the keys it generated */
} __attribute__((aligned(64)));

struct msort {
    int n, P, leaf, coarse, place;
    uint32_t *buf[2][SL_MAX_PROCS]; /* A and B chunks */
    uint32_t clo[SL_MAX_PROCS + 1]; /* chunk p: positions [clo[p], clo[p+1]) */
    struct node *node;
    int nnodes, nleaves;
    struct ms_proc *mp[SL_MAX_PROCS];
    uint64_t kbase;                 /* the key stream */
    struct sl_joincnt setup, done;
    uint64_t t0, t1;
};

static struct msort *M;

static uint32_t key_at(uint64_t i)
{
    return (uint32_t)(sl_mix64(M->kbase + (i + 1) * 0x9e3779b97f4a7c15ull) >> 32);
}

/* ---- the tree ---- */

/* Build the subtree (lo, hi) over processes [p0, p1) in preorder; its index. */
static int build(uint32_t lo, uint32_t hi, int p0, int p1, int parent, int dst)
{
    struct msort *m = M;
    int me = m->nnodes++;
    struct node *v = &m->node[me];
    uint32_t mid;
    int pm = p0;

    v->lo = lo;
    v->hi = hi;
    v->parent = parent;
    v->dst = (uint8_t)dst;
    v->home = (int16_t)p0;
    v->right = -1;
    if (p1 - p0 == 1) {
        if (m->coarse || hi - lo <= (uint32_t)m->leaf) {
            m->nleaves++;
            return me;
        }
        mid = lo + (hi - lo) / 2;
    } else {
        pm = p0 + (p1 - p0) / 2;
        mid = lo + (uint32_t)((uint64_t)(hi - lo) * (uint64_t)(pm - p0) / (uint64_t)(p1 - p0));
        m->clo[pm] = mid; /* a chunk boundary (main set clo[0] and clo[P]) */
    }
    v->pending = 2;
    build(lo, mid, p0, p1 - p0 == 1 ? p1 : pm, me, !dst);
    v->right = build(mid, hi, p1 - p0 == 1 ? p0 : pm, p1, me, !dst);
    if (p1 - p0 > 1) { /* the process with the most of [lo, hi), the first of equals */
        uint32_t best = 0;
        for (int p = p0; p < p1; p++)
            if (m->clo[p + 1] - m->clo[p] > best) {
                best = m->clo[p + 1] - m->clo[p];
                v->home = (int16_t)p;
            }
    }
    return me;
}

/* How many nodes build makes for (lo, hi) over [p0, p1). */
static int count_nodes(uint32_t len, int procs, int coarse, uint32_t leaf)
{
    if (procs == 1 && (coarse || len <= leaf))
        return 1;
    if (procs == 1)
        return 1 + count_nodes(len / 2, 1, coarse, leaf) + count_nodes(len - len / 2, 1, coarse, leaf);
    int pm = procs / 2;
    uint32_t mid = (uint32_t)((uint64_t)len * (uint64_t)pm / (uint64_t)procs);
    return 1 + count_nodes(mid, pm, coarse, leaf) + count_nodes(len - mid, procs - pm, coarse, leaf);
}

/* ---- the keys where they live ---- */

/* A cursor over buffer b from a position on, stepping across chunks. */
struct cur {
    uint32_t *p, *end;
    int h, b;
};

static void cur_init(struct cur *c, int b, uint32_t pos)
{
    struct msort *m = M;
    int h = 0;

    while (m->clo[h + 1] <= pos)
        h++;
    c->h = h;
    c->b = b;
    c->p = m->buf[b][h] + (pos - m->clo[h]);
    c->end = m->buf[b][h] + (m->clo[h + 1] - m->clo[h]);
}

static inline void cur_next(struct cur *c)
{
    if (++c->p == c->end && c->h + 1 < M->P) {
        struct msort *m = M;
        c->h++;
        c->p = m->buf[c->b][c->h];
        c->end = c->p + (m->clo[c->h + 1] - m->clo[c->h]);
    }
}

/* Merge the sorted runs [lo, mid) and [mid, hi) of buffer s into buffer !s; stable. */
static void merge(int s, uint32_t lo, uint32_t mid, uint32_t hi)
{
    struct cur l, r, o;
    uint32_t nl = mid - lo, nr = hi - mid;

    cur_init(&l, s, lo);
    cur_init(&r, s, mid);
    cur_init(&o, !s, lo);
    while (nl && nr) {
        if (*r.p < *l.p) {
            *o.p = *r.p;
            cur_next(&r);
            nr--;
        } else {
            *o.p = *l.p;
            cur_next(&l);
            nl--;
        }
        cur_next(&o);
    }
    for (; nl; nl--, cur_next(&l), cur_next(&o))
        *o.p = *l.p;
    for (; nr; nr--, cur_next(&r), cur_next(&o))
        *o.p = *r.p;
}

/* Sort a[0, n) (contiguous) into b when to_b, else in place; the other is scratch. */
static void sort_to(uint32_t *a, uint32_t *b, uint32_t n, int to_b)
{
    if (n <= INSERT_MAX) {
        for (uint32_t i = 1; i < n; i++) {
            uint32_t k = a[i], j = i;
            for (; j > 0 && a[j - 1] > k; j--)
                a[j] = a[j - 1];
            a[j] = k;
        }
        if (to_b)
            memcpy(b, a, n * sizeof *a);
        return;
    }
    uint32_t h = n / 2, i = 0, j = h, k = 0;
    sort_to(a, b, h, !to_b);
    sort_to(a + h, b + h, n - h, !to_b);
    const uint32_t *s = to_b ? a : b;
    uint32_t *d = to_b ? b : a;
    while (i < h && j < n)
        d[k++] = s[j] < s[i] ? s[j++] : s[i++];
    while (i < h)
        d[k++] = s[i++];
    while (j < n)
        d[k++] = s[j++];
}

/* ---- the threads ---- */

static void run_node(void *arg);

static void spawn_node(int i)
{
    struct msort *m = M;
    int home = m->node[i].home;

    if (m->coarse) /* the coarse grain has no placement to choose */
        sl_thread_spawn_on(home, run_node, (void *)(uintptr_t)i);
    else
        sl_place_spawn((enum sl_place)m->place, m->place == SL_PLACE_MCS ? home : -1, -1, run_node,
                       (void *)(uintptr_t)i);
}

/* Keys of [lo, hi) outside process p's chunk. */
static uint64_t remote_of(uint32_t lo, uint32_t hi, int p)
{
    uint32_t a = M->clo[p] > lo ? M->clo[p] : lo, b = M->clo[p + 1] < hi ? M->clo[p + 1] : hi;
    return (uint64_t)(hi - lo) - (b > a ? b - a : 0);
}

/* Node i: a leaf sorts its slice of A into its buffer, a node merges its
   children's halves; then the parent learns it is done. */
static void run_node(void *arg)
{
    struct msort *m = M;
    int i = (int)(uintptr_t)arg, p = sl_self();
    struct node *v = &m->node[i];
    struct ms_proc *mp = m->mp[p];

    if (v->right < 0) {
        int h = v->home;
        uint32_t off = v->lo - m->clo[h];
        sort_to(m->buf[0][h] + off, m->buf[1][h] + off, v->hi - v->lo, v->dst);
    } else {
        merge(!v->dst, v->lo, m->node[v->right].lo, v->hi);
    }
    if (v->home == p)
        mp->local++;
    else
        mp->away++;
    mp->remote_keys += remote_of(v->lo, v->hi, p);
    if (v->parent < 0)
        sl_joincnt_signal(&m->done);
    else if (__atomic_sub_fetch(&m->node[v->parent].pending, 1, __ATOMIC_ACQ_REL) == 0)
        spawn_node(v->parent);
}

/* Set-up, a thread pinned to each process p: its state and its chunk, node-local. */
static void ms_setup(void *arg)
{
    struct msort *m = M;
    int p = (int)(uintptr_t)arg;
    uint32_t len = m->clo[p + 1] - m->clo[p];
    struct ms_proc *mp = sl_alloc_node(sizeof *mp, -1);

    m->buf[0][p] = sl_alloc_node((size_t)len * sizeof(uint32_t), -1);
    m->buf[1][p] = sl_alloc_node((size_t)len * sizeof(uint32_t), -1);
    if (!mp || !m->buf[0][p] || !m->buf[1][p])
        sl_die("out of memory for process %d's %u keys", p, len);
    memset(mp, 0, sizeof *mp);
    for (uint32_t j = 0; j < len; j++) {
        uint32_t k = key_at(m->clo[p] + j);
        m->buf[0][p][j] = k;
        mp->sum += k;
        mp->hsum += sl_mix64(k);
    }
    m->mp[p] = mp;
    sl_joincnt_signal(&m->setup);
}

static void ms_main(void *arg)
{
    struct msort *m = arg;

    sl_joincnt_init(&m->setup, (uint32_t)m->P);
    for (int p = 0; p < m->P; p++)
        sl_thread_spawn_on(p, ms_setup, (void *)(uintptr_t)p);
    sl_joincnt_wait(&m->setup);

    m->t0 = sl_now_us();
    sl_joincnt_init(&m->done, 1);
    for (int i = 0; i < m->nnodes; i++)
        if (m->node[i].right < 0)
            spawn_node(i);
    sl_joincnt_wait(&m->done);
    m->t1 = sl_now_us();
}

/* The result in A: in order, and the same keys (sum and hash sum) as the input. */
static int check_sorted(struct msort *m, uint64_t *bad)
{
    uint64_t sum = 0, hsum = 0, want = 0, hwant = 0;
    uint32_t prev = 0;
    struct cur c;

    *bad = 0;
    cur_init(&c, 0, 0);
    for (int i = 0; i < m->n; i++, cur_next(&c)) {
        uint32_t k = *c.p;
        *bad += i > 0 && k < prev;
        prev = k;
        sum += k;
        hsum += sl_mix64(k);
    }
    for (int p = 0; p < m->P; p++) {
        want += m->mp[p]->sum;
        hwant += m->mp[p]->hsum;
    }
    return *bad == 0 && sum == want && hsum == hwant;
}

int main(void)
{
    struct msort m = { .n = (int)sl_arg_int("n"), .P = sl_nprocs(), .leaf = (int)sl_arg_int("leaf"),
                       .coarse = sl_arg_is("variant", "coarse"), .place = sl_place_parse(sl_arg_str("place")) };
    uint64_t local = 0, away = 0, remote = 0, unsorted, want;
    struct sl_thread_stats st;
    struct sl_rng r;
    int ok;

    if (m.n < m.P)
        sl_die("n=%d must be at least procs=%d (every process holds a chunk of the keys)", m.n, m.P);
    if (m.coarse && m.place != SL_PLACE_MCS)
        sl_die("place=%s needs variant=fine (variant=coarse puts each part at its home)", sl_arg_str("place"));
    M = &m;
    sl_rng_init(&r, 0x4d50);
    m.kbase = sl_rng_u64(&r);
    m.node = sl_malloc((size_t)count_nodes((uint32_t)m.n, m.P, m.coarse, (uint32_t)m.leaf) * sizeof *m.node);
    if (!m.node)
        sl_die("out of memory for the tree (n=%d leaf=%d)", m.n, m.leaf);
    m.clo[0] = 0;
    m.clo[m.P] = (uint32_t)m.n;
    build(0, (uint32_t)m.n, 0, m.P, -1, 0);
    sl_threads_run(ms_main, &m);
    sl_threads_stats(&st);
    for (int p = 0; p < m.P; p++) {
        local += m.mp[p]->local;
        away += m.mp[p]->away;
        remote += m.mp[p]->remote_keys;
    }
    want = (uint64_t)m.nnodes;
    ok = check_sorted(&m, &unsorted);
    ok = ok && local + away == want && st.threads == want + (uint64_t)m.P + 1;
    sl_report(ok,
              "par_us=%lu threads=%lu leaves=%d local=%lu away=%lu remote_keys=%lu unsorted=%lu sleeps=%lu "
              "suspends=%lu",
              (unsigned long)(m.t1 - m.t0), (unsigned long)st.threads, m.nleaves, (unsigned long)local,
              (unsigned long)away, (unsigned long)remote, (unsigned long)unsorted, (unsigned long)st.sleeps,
              (unsigned long)st.suspends);
    return 0;
}
