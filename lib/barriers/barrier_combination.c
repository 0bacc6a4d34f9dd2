/*
 * barrier_combination.c - the combination barrier (Axelrod; Markatos
 * 3.6.1): a central barrier among the participants that share a hart, and
 * the tree core (barrier_tree.c) across harts. The last local arriver of a
 * hart group represents the group in the tree; when the tree releases it,
 * it releases its group. Processes on one hart never run at the same time,
 * so among them a counter is as good as anything and their waits cost no
 * cross-hart traffic; only one process per hart climbs the tree. With one
 * participant per hart it is exactly the tree barrier.
 *
 * Groups are made at the first episode. Every participant's first call
 * records its hart (sl_hart()) and arrives at a set-up counter; the last to
 * arrive sorts the participants into groups by hart (groups numbered in
 * hart order: group g is tree node g), builds the tree, and publishes
 * `ready`, which releases the others: the first episode is a central
 * barrier and also the set-up. Later episodes:
 *   e = my group's episode; if ++count < size: wait until episode != e
 *   else (the group's last): count = 0; pass the tree at node g;
 *        episode = e + 1 (release, wakes sleepers)
 * The group's episode is the central barrier's, with its invariants
 * (barrier_central.c); the tree node's private `ep` passes from one
 * representative to the next through the group's episode word (release by
 * the old one, acquire by every member, then the new one's acq_rel count).
 *
 * Migration. Under the timeslice policy a process never leaves its hart, so
 * the groups stay true. If a process migrates (another policy, or Linux
 * threads on the host, whose harts come from sched_getcpu), the groups are
 * still a fixed partition of the participant ids, and a two-level barrier
 * over any partition is a correct barrier: nothing depends on where a
 * member runs. It is only slower: members of one "hart" group may now run
 * in parallel and contend on its counter, and a group may no longer share a
 * hart with anyone.
 *
 * Adaptive: a member marks itself after its increment; a representative
 * after its tree pass, just before it releases the group. Every wait needs
 * every unmarked participant.
 */
#include "schedlab.h"
#include "barriers/barrier_impl.h"

struct group {
    uint32_t count __attribute__((aligned(SL_LINE)));   /* arrivals this episode */
    uint32_t size;                                      /* members */
    uint32_t episode __attribute__((aligned(SL_LINE))); /* episodes since set-up */
};

struct comb {
    uint32_t setup __attribute__((aligned(SL_LINE))); /* first-episode arrivals */
    uint32_t ready __attribute__((aligned(SL_LINE))); /* 1 once groups exist */
    uint32_t ngroups;
    void *mem;
    struct sl_bpart *parts; /* n */
    struct group *groups;   /* ngroups <= n */
    struct sl_tnode *nodes; /* ngroups */
};

struct comb_wf {
    struct sl_waitfor wf;
    const struct comb *c;
    uint32_t n, self, next;
};

static int comb_running(const struct sl_waitfor *wf)
{
    const struct comb_wf *w = (const struct comb_wf *)wf;
    return sl_bpart_running(w->c->parts, 0, w->n, w->self, w->next);
}

static int comb_init(struct sl_barrier *b)
{
    void *mem;
    size_t head = (sizeof(struct comb) + SL_LINE - 1) & ~(size_t)(SL_LINE - 1);
    size_t per = sizeof(struct sl_bpart) + sizeof(struct group) + sizeof(struct sl_tnode);
    char *p = sl_bar_alloc(head + b->n * per, &mem);
    struct comb *c = (struct comb *)p;

    if (!p)
        return -1;
    c->mem = mem;
    c->parts = (struct sl_bpart *)(p + head);
    c->groups = (struct group *)(p + head + b->n * sizeof(struct sl_bpart));
    c->nodes = (struct sl_tnode *)(p + head + b->n * (sizeof(struct sl_bpart) + sizeof(struct group)));
    sl_bpart_init(c->parts, b->n);
    b->state = c;
    return 0;
}

/* The last set-up arriver: every part's hart is visible (acq_rel chain). */
static void make_groups(struct comb *c, uint32_t n)
{
    int32_t of_hart[SL_MAX_HARTS];
    uint32_t g = 0;

    for (int h = 0; h < SL_MAX_HARTS; h++)
        of_hart[h] = -1;
    for (uint32_t j = 0; j < n; j++)
        of_hart[c->parts[j].hart % SL_MAX_HARTS] = 0;
    for (int h = 0; h < SL_MAX_HARTS; h++)
        if (of_hart[h] == 0)
            of_hart[h] = (int32_t)g++;
    c->ngroups = g;
    for (uint32_t j = 0; j < n; j++) {
        struct group *gr = &c->groups[of_hart[c->parts[j].hart % SL_MAX_HARTS]];
        c->parts[j].group = (uint32_t)of_hart[c->parts[j].hart % SL_MAX_HARTS];
        gr->size++;
    }
    sl_tree_init(c->nodes, g);
}

static void comb_setup(struct sl_barrier *b, struct comb *c, uint32_t id)
{
    struct comb_wf w = { { comb_running }, c, b->n, id, 1 };
    int adaptive = b->wait == SL_WAIT_ADAPTIVE;

    c->parts[id].hart = (uint32_t)sl_hart();
    if (adaptive)
        sl_bpart_enter(&c->parts[id]);
    if (__atomic_add_fetch(&c->setup, 1, __ATOMIC_ACQ_REL) < b->n) {
        if (adaptive)
            sl_bpart_mark(&c->parts[id], 1);
        sl_wait_ne_for(&c->ready, 0, b->wait, adaptive ? &w.wf : 0);
        return;
    }
    make_groups(c, b->n);
    sl_wait_set(&c->ready, 1, b->wait);
}

static void comb_wait(struct sl_barrier *b, uint32_t id)
{
    struct comb *c = b->state;
    struct sl_bpart *me;
    struct group *gr;
    uint32_t g, e;
    struct comb_wf w = { { comb_running }, 0, 0, 0, 0 };
    const struct sl_waitfor *wf = 0;

    if (id >= b->n)
        sl_die("combination barrier: participant %u of a barrier of %u", id, b->n);
    if (sl_wait_value(&c->ready) == 0) {
        comb_setup(b, c, id);
        return;
    }
    me = &c->parts[id];
    g = me->group;
    gr = &c->groups[g];
    e = sl_wait_value(&gr->episode);
    if (b->wait == SL_WAIT_ADAPTIVE) {
        w = (struct comb_wf){ { comb_running }, c, b->n, id, (e + 2) & SL_WAIT_VALUE };
        wf = &w.wf; /* set-up was episode 0, so local episode e is global e + 1 */
        sl_bpart_enter(me);
    }
    if (__atomic_add_fetch(&gr->count, 1, __ATOMIC_ACQ_REL) < gr->size) {
        if (wf)
            sl_bpart_mark(me, w.next);
        sl_wait_ne_for(&gr->episode, e, b->wait, wf);
        return;
    }
    __atomic_store_n(&gr->count, 0, __ATOMIC_RELAXED);
    sl_tree_pass(c->nodes, c->ngroups, g, b->wait, 0, wf, wf);
    if (wf)
        sl_bpart_mark(me, w.next);
    sl_wait_set(&gr->episode, e + 1, b->wait);
}

static void comb_destroy(struct sl_barrier *b)
{
    struct comb *c = b->state;

    if (c)
        sl_free(c->mem);
}

SL_BARRIER_COUNTED(comb_wait)

const struct sl_barrier_shape sl_barrier_combination = {
    .name = "combination",
    .init = comb_init,
    .wait = comb_wait,
    .counted_wait = comb_wait_counted,
    .destroy = comb_destroy,
};
