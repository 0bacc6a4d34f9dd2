/*
 * place.c - thread placement, memory-conscious or load-balancing (place.h).
 */
#include "schedlab.h"
#include "threads/uthread.h"
#include "threads/place.h"

static const char *const names[SL_NPLACES] = { "mcs", "lb" };

int sl_place_parse(const char *name)
{
    for (int i = 0; i < SL_NPLACES; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *sl_place_name(enum sl_place how) { return (unsigned)how < SL_NPLACES ? names[how] : "?"; }

/* The least loaded process among those with node == want (want -2: all),
   ties broken by rnd; -1 if there is none. Two passes: find the minimum
   and count its holders, then take the (rnd mod count)-th. */
static int least_loaded(const struct sl_place_view *v, int want, uint64_t rnd)
{
    uint32_t min = UINT32_MAX;
    uint64_t ties = 0, pick;

    for (int p = 0; p < v->nprocs; p++) {
        if (want != -2 && v->node[p] != want)
            continue;
        if (v->load[p] < min) {
            min = v->load[p];
            ties = 1;
        } else if (v->load[p] == min) {
            ties++;
        }
    }
    if (!ties)
        return -1;
    pick = rnd % ties;
    for (int p = 0; p < v->nprocs; p++)
        if ((want == -2 || v->node[p] == want) && v->load[p] == min && pick-- == 0)
            return p;
    return -1; /* not reached */
}

int sl_place_decide(enum sl_place how, int home_proc, int home_node, const struct sl_place_view *v, uint64_t rnd)
{
    int p;

    if (v->nprocs <= 1)
        return 0;
    if (how == SL_PLACE_MCS) {
        if (home_proc >= 0 && home_proc < v->nprocs)
            return home_proc;
        if (home_node >= 0 && (p = least_loaded(v, home_node, rnd)) >= 0)
            return p;
    }
    return least_loaded(v, -2, rnd);
}

/* ---- the run's state ---- */

int sl_place_proc_node(int proc)
{
    volatile struct sl_info *in = sl_info();
    int h = sl_thread_proc_hart(proc);

    if (h < 0 || h >= (int)in->nharts || h >= SL_MAX_HARTS)
        return -1;
    return in->hart_node[h];
}

int sl_place_pick(enum sl_place how, int home_proc, int home_node)
{
    static uint64_t calls; /* tie-breaking stream, shared: a relaxed counter */
    int n = sl_nprocs();
    uint32_t load[SL_MAX_PROCS];
    int node[SL_MAX_PROCS];
    struct sl_place_view v = { .nprocs = n, .load = load, .node = node };
    uint64_t c;

    if (how == SL_PLACE_MCS && home_proc >= 0 && home_proc < n)
        return home_proc; /* the common case needs no snapshot */
    for (int p = 0; p < n; p++) {
        load[p] = sl_thread_load(p);
        node[p] = how == SL_PLACE_MCS && home_node >= 0 ? sl_place_proc_node(p) : -1;
    }
    c = __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    return sl_place_decide(how, home_proc, home_node, &v, sl_mix64(c ^ sl_info()->seed));
}

int sl_place_spawn(enum sl_place how, int home_proc, int home_node, void (*fn)(void *), void *arg)
{
    int p = sl_place_pick(how, home_proc, home_node);

    sl_thread_spawn_on(p, fn, arg);
    return p;
}
