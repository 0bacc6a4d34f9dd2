/*
 * place.h - thread placement: which process a new thread should run on
 * (Markatos chapter 4, "memory-conscious scheduling").
 *
 *   mcs  memory-conscious: a thread goes to the process that holds the data
 *        it will use - its home process when the caller names one, else
 *        the least loaded process on the NUMA node that holds the data,
 *        else (no home given, or no process on that node) as lb
 *   lb   load balancing: the least loaded process, ignoring the data
 * Ties between equally loaded processes are broken at random, as in the
 * thesis. The load of a process is sl_thread_load (uthread.h): its pinned
 * threads not yet finished plus the ready threads in its deque.
 *
 * The thread then stays there: sl_place_spawn makes it with
 * sl_thread_spawn_on, so it is never stolen and resumes on that process
 * after every wait (uthread.h "Pinned threads"). Placement happens once,
 * at creation; Markatos's reassignment of threads for load balance (AM) is
 * not done.
 *
 * Topology: a process's node is the NUMA node (info page hart_node[]) of
 * the hart it was last seen on (sl_thread_proc_hart). Data is node-local
 * when allocated with sl_alloc_node(bytes, node) - or with node -1 by a
 * thread pinned to the process that will use it.
 *
 * sl_place_decide is the whole decision as a pure function (no system
 * call, no shared state; unit-tested on the host in tests/host/test_place.c);
 * the rest reads the run's state and calls it.
 */
#ifndef SL_PLACE_H
#define SL_PLACE_H

#include <stdint.h>

enum sl_place {
    SL_PLACE_MCS,
    SL_PLACE_LB,
    SL_NPLACES
};

/* The placement named `name` ("mcs", "lb"), or -1. */
int sl_place_parse(const char *name);
const char *sl_place_name(enum sl_place how);

/* What the decision looks at: nprocs processes, each one's load and NUMA
   node (-1: unknown). */
struct sl_place_view {
    int             nprocs;
    const uint32_t *load;
    const int      *node;
};

/* The process a new thread should go to, in 0..v->nprocs-1. home_proc is
   the process holding its data (-1: none, or out of range: ignored);
   home_node the node holding its data (-1: unknown). rnd picks among ties
   (any 64-bit value; the same inputs give the same answer). Pure. */
int sl_place_decide(enum sl_place how, int home_proc, int home_node, const struct sl_place_view *v,
                    uint64_t rnd);

/* ---- inside a thread program (sl_threads_run) ---- */
/* The NUMA node of process proc's hart, or -1 (not started, bad proc). */
int sl_place_proc_node(int proc);
/* sl_place_decide on the run's current loads and nodes. */
int sl_place_pick(enum sl_place how, int home_proc, int home_node);
/* Pick a process, make a detached thread fn(arg) pinned there; returns the
   process. */
int sl_place_spawn(enum sl_place how, int home_proc, int home_node, void (*fn)(void *), void *arg);

#endif
