/*
 * barrier_tree.c - the tree barrier: a 4-ary arrival tree and a binary
 * release (wake-up) tree over the participants, as in Markatos 3.4.2/3.6;
 * and the tree core that the combination shape runs across hart groups.
 *
 * Nodes are numbered as heaps: node i's arrival parent is (i-1)/4 (its
 * arrival children 4i+1..4i+4), its release parent (i-1)/2 (release
 * children 2i+1, 2i+2). Node 0 is the root of both. Each node is one cache
 * line holding
 *   arrive   how many arrival-child arrivals it has seen in all (a counter
 *            bumped with sl_wait_add: the up to 4 children share one word,
 *            so the parent waits on one word, not on four in turn)
 *   release  how many episodes it has been released from (sl_wait_set by
 *            its release parent)
 *   ep       episodes it has completed (its owner's private count)
 * One episode at node i, next = ep + 1 (31 bits, wrapping):
 *   wait until arrive == nkids * next    (all children's subtrees arrived)
 *   i != 0: add 1 to the arrival parent's arrive; wait until release == next
 *   ep = next; set both release children's release to next
 * The two waits on one line never overlap with writes by others to the
 * other word: children cannot arrive again before this node releases them,
 * and the release parent writes release only after this node arrived. So
 * one line per node suffices. Ordering: the adds are release RMWs the
 * parent acquires, so the root has seen every participant's writes before
 * it releases; each release is a release RMW its child acquires.
 *
 * Blocking waiters are woken down the binary tree: every released node
 * wakes its two children itself, so wake-ups proceed in parallel on
 * log2(n) levels instead of one process waking n - 1.
 *
 * Adaptive (tree shape): participant i marks itself once it has reported
 * its subtree's arrival. Waiting for its children it needs the unmarked
 * participants of its subtree; waiting for its release it needs its
 * release parent, and, until the root has marked (all arrived), every
 * unmarked participant.
 */
#include "schedlab.h"
#include "barriers/barrier_impl.h"

/* ---- the tree core ---- */

void sl_tree_init(struct sl_tnode *t, uint32_t m)
{
    for (uint32_t i = 0; i < m; i++) {
        uint32_t first = 4 * i + 1;
        t[i].arrive = 0;
        t[i].release = 0;
        t[i].ep = 0;
        t[i].nkids = first >= m ? 0 : m - first < 4 ? m - first : 4;
    }
}

void sl_tree_pass(struct sl_tnode *t, uint32_t m, uint32_t i, enum sl_wait kind, struct sl_bpart *mark,
                  const struct sl_waitfor *wf_arrive, const struct sl_waitfor *wf_release)
{
    struct sl_tnode *me = &t[i];
    uint32_t ep = me->ep, next = (ep + 1) & SL_WAIT_VALUE, v;

    if (me->nkids) {
        uint32_t target = (me->nkids * next) & SL_WAIT_VALUE;
        while ((v = sl_wait_value(&me->arrive)) != target)
            sl_wait_ne_for(&me->arrive, v, kind, wf_arrive);
    }
    if (i != 0) {
        sl_wait_add(&t[sl_tree_arrival_parent(i)].arrive, 1, kind);
        if (mark)
            sl_bpart_mark(mark, next);
        while (sl_wait_value(&me->release) == ep)
            sl_wait_ne_for(&me->release, ep, kind, wf_release);
    } else if (mark) {
        sl_bpart_mark(mark, next);
    }
    me->ep = next;
    for (uint32_t c = 2 * i + 1; c <= 2 * i + 2 && c < m; c++)
        sl_wait_set(&t[c].release, next, kind);
}

/* ---- the tree shape: node i = participant i ---- */

struct tree {
    void *mem;
    struct sl_bpart *parts; /* n */
    struct sl_tnode *nodes; /* n */
};

struct tree_wf {
    struct sl_waitfor wf;
    const struct tree *t;
    uint32_t n, self, next;
};

/* Waiting for the children: the unmarked participants of my subtree. */
static int tree_arrive_running(const struct sl_waitfor *wf)
{
    const struct tree_wf *w = (const struct tree_wf *)wf;
    uint32_t lo = 4 * w->self + 1, hi = lo + 3;

    while (lo < w->n) {
        if (hi > w->n - 1)
            hi = w->n - 1;
        if (!sl_bpart_running(w->t->parts, lo, hi + 1, w->self, w->next))
            return 0;
        lo = 4 * lo + 1;
        hi = 4 * hi + 4;
    }
    return 1;
}

/* Waiting for my release: my release parent, and while not everyone has
   arrived (the root has not marked), every unmarked participant. */
static int tree_release_running(const struct sl_waitfor *wf)
{
    const struct tree_wf *w = (const struct tree_wf *)wf;
    const struct sl_bpart *parts = w->t->parts;

    if (!sl_proc_running(__atomic_load_n(&parts[sl_tree_release_parent(w->self)].proc, __ATOMIC_RELAXED)))
        return 0;
    if (__atomic_load_n(&parts[0].mark, __ATOMIC_RELAXED) == w->next)
        return 1;
    return sl_bpart_running(parts, 0, w->n, w->self, w->next);
}

static int tree_init(struct sl_barrier *b)
{
    void *mem;
    size_t head = (sizeof(struct tree) + SL_LINE - 1) & ~(size_t)(SL_LINE - 1);
    char *p = sl_bar_alloc(head + b->n * (sizeof(struct sl_bpart) + sizeof(struct sl_tnode)), &mem);
    struct tree *t = (struct tree *)p;

    if (!p)
        return -1;
    t->mem = mem;
    t->parts = (struct sl_bpart *)(p + head);
    t->nodes = (struct sl_tnode *)(p + head + b->n * sizeof(struct sl_bpart));
    sl_bpart_init(t->parts, b->n);
    sl_tree_init(t->nodes, b->n);
    b->state = t;
    return 0;
}

static void tree_wait(struct sl_barrier *b, uint32_t id)
{
    struct tree *t = b->state;

    if (id >= b->n)
        sl_die("tree barrier: participant %u of a barrier of %u", id, b->n);
    if (b->wait == SL_WAIT_ADAPTIVE) {
        uint32_t next = (t->nodes[id].ep + 1) & SL_WAIT_VALUE;
        struct tree_wf wa = { { tree_arrive_running }, t, b->n, id, next };
        struct tree_wf wr = { { tree_release_running }, t, b->n, id, next };

        sl_bpart_enter(&t->parts[id]);
        sl_tree_pass(t->nodes, b->n, id, b->wait, &t->parts[id], &wa.wf, &wr.wf);
        return;
    }
    sl_tree_pass(t->nodes, b->n, id, b->wait, 0, 0, 0);
}

static void tree_destroy(struct sl_barrier *b)
{
    struct tree *t = b->state;

    if (t)
        sl_free(t->mem);
}

SL_BARRIER_COUNTED(tree_wait)

const struct sl_barrier_shape sl_barrier_tree = {
    .name = "tree",
    .init = tree_init,
    .wait = tree_wait,
    .counted_wait = tree_wait_counted,
    .destroy = tree_destroy,
};
