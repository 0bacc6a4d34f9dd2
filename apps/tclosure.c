/*
 * tclosure - transitive closure by Warshall's algorithm, Markatos chapter 5's transitive closure (5.4.2,
 * Figs. 5.5 and 5.6, Table 5.4; KSR-1 Fig. 5.16):
 *
 *   DO SEQUENTIAL K = 1,N
 *     DO PARALLEL J = 1,N                    <- the rows, dealt out by the loop scheduler (sched=)
 *       IF (A(J,K) .EQ. TRUE) THEN
 *         DO SEQUENTIAL I = 1,N
 *           IF (A(K,I) .EQ. TRUE) A(J,I) = TRUE
 *
 * An iteration costs O(1) or O(N) as the input decides, so the input is the experiment:
 *   graph=skewed  the thesis's skewed graph: "a clique of 320 nodes [of 640], and no other edges" on the
 *                 Iris, "1024 node graph, where 40% of them form a clique" on the KSR-1; the clique is the
 *                 first clique=% of the nodes (0 .. C-1), since "all the work is contained in the first
 *                 half of the iterations" (5.4.6). Every ordered pair of distinct clique nodes is an edge.
 *                 Nothing in it is random: the thesis's graph is fixed by n and the clique's size.
 *   graph=random  Fig. 5.5's "random input graph ... with about 8% of the edges present": each ordered
 *                 pair i != j an edge with probability density=% (row i's stream of the seed).
 * Row J is written only by iteration J; row K, which every iteration of step K reads, is left alone by
 * its own iteration (J = K would OR row K into itself), so no cell is written while another reads it.
 * Elements are 4-byte words, as Fortran's LOGICAL.
 *
 * Check: process 0 recomputes reachability from every node by a breadth-first search over the input's
 * edges (kept as adjacency lists before the run): A(J,I) must be TRUE exactly when I is reachable from J
 * by a path of one or more edges. bad= counts the cells that differ; closure= the TRUE cells.
 *
 * Sizes. The thesis: 640 nodes on the Iris (1.6 MB of 4-byte LOGICALs against 8 x 1 MB second-level
 * caches), 1024 on the KSR-1. The default n = 256 is a 256 KB matrix: at P = 2 each hart's rows (128 KB)
 * fit the iris profile's 1 MB L2 but not its 64 KB L1, the thesis's regime (rows stay in the cache of the
 * processor that keeps them; 5.4.9). The skewed default does 0.16 n^3 inner steps: a boot well under a
 * second; n scales it.
 *
 * Keys: n, graph, clique (percent, skewed), density (percent, random), sched= (loopsched.h; BEST-STATIC
 * cuts contiguous parts of equal work from the input: for the skewed graph a clique row does n steps of
 * work at each of the C - 1 steps K of the other clique nodes and a test at every step, so the clique
 * rows are spread evenly and every hart keeps its rows, as the thesis's BEST-STATIC "distribute[s] the
 * clique nodes evenly among the processors, while maintaining processor affinity"; for the random graph
 * the load is even, so its parts are equal ones), barrier=, shape=. RESULT: par_us (the n loops), loops=
 * (n, each over n rows), grabs= and remote= summed over them, edges=, closure=, bad=.
 */
#include "schedlab.h"
#include "barriers/barrier.h"
#include "loops/loopsched.h"
#include "threads/uthread.h"
#include "workers/workers.h"

SL_APP(.about = "transitive closure, rows by a loop scheduler (Markatos 5.4.2)", .flags = SL_APP_ADAPTIVE,
       /* the matrix 4 n^2, the input's adjacency lists at most 4 n^2 + 4 n; the search's marks and queue,
          the split and the weights: 32 n; page rounding, allocator chunks and the loops under 256 KB;
          the workers' stacks */
       .mem_key = "n", .mem_quad = 8, .mem_lin = 36, .mem_const = 256 * 1024 + SL_WORKERS_MEM_CONST,
       .mem_per_proc = SL_WORKERS_MEM_PER_PROC,
       SL_KEYS(SL_INT("n", 2, 4096, 256), SL_ENUM("graph", "skewed|random", 0), SL_INT("clique", 0, 100, 40),
               SL_INT("density", 0, 100, 8),
               SL_ENUM("sched", "static|ss|gss|factoring|trapezoid|afs|mod-factoring|best-static", 0),
               SL_ENUM("barrier", SL_WAIT_CHOICES, 0), SL_ENUM("shape", "central|tree|combination", 0)));

struct tc {
    int n, nprocs, clique;   /* clique: C, the skewed graph's clique size */
    uint32_t *a;             /* n x n, row-major; A(J,I) = a[J n + I] */
    uint32_t *adj_first;     /* the input as adjacency lists: node j's successors are */
    uint32_t *adj;           /*   adj[adj_first[j] .. adj_first[j + 1]) */
    struct sl_barrier bar;
    struct sl_loop *loop[2]; /* step K uses loop[K & 1] */
    uint64_t t0, t1;
};

static void gen_graph(struct tc *t)
{
    int n = t->n, skewed = sl_arg_is("graph", "skewed");
    uint64_t density = (uint64_t)sl_arg_int("density");

    for (int j = 0; j < n; j++) {
        struct sl_rng r;
        uint32_t *row = t->a + (size_t)j * n;
        sl_rng_init(&r, (uint64_t)j);
        for (int i = 0; i < n; i++)
            row[i] = i != j && (skewed ? j < t->clique && i < t->clique : sl_rng_below(&r, 100) < density);
    }
}

/* The input's edges as adjacency lists, for the check. */
static uint64_t keep_edges(struct tc *t)
{
    int n = t->n;
    uint64_t e = 0;

    t->adj_first = sl_malloc((size_t)(n + 1) * sizeof(uint32_t));
    for (size_t c = 0; c < (size_t)n * n; c++)
        e += t->a[c];
    t->adj = sl_malloc((size_t)(e ? e : 1) * sizeof(uint32_t));
    if (!t->adj_first || !t->adj)
        sl_die("out of memory for the check's adjacency lists (n=%d)", n);
    e = 0;
    for (int j = 0; j < n; j++) {
        t->adj_first[j] = (uint32_t)e;
        for (int i = 0; i < n; i++)
            if (t->a[(size_t)j * n + i])
                t->adj[e++] = (uint32_t)i;
    }
    t->adj_first[n] = (uint32_t)e;
    return e;
}

/* Iteration J of step K. */
static void close_row(struct tc *t, int j, int k)
{
    uint32_t *rj = t->a + (size_t)j * t->n;
    const uint32_t *rk = t->a + (size_t)k * t->n;

    if (j == k || !rj[k])
        return;
    for (int i = 0; i < t->n; i++)
        if (rk[i])
            rj[i] = 1;
}

static void worker(void *arg, int id)
{
    struct tc *t = arg;
    struct sl_chunk c;

    sl_barrier_wait(&t->bar);
    if (id == 0)
        t->t0 = sl_now_us();
    for (int k = 0; k < t->n; k++) {
        if (id == 0 && k + 1 < t->n) /* nobody is in it: all passed the barrier after step k - 1 */
            sl_loop_start(t->loop[(k + 1) & 1], 0, t->n);
        while (sl_loop_grab(t->loop[k & 1], id, &c))
            for (int64_t j = c.start; j < c.start + c.len; j++)
                close_row(t, (int)j, k);
        sl_barrier_wait(&t->bar);
    }
    if (id == 0)
        t->t1 = sl_now_us();
}

/* The two loops; best-static's parts from each row's work over all steps (see the header). */
static void loops_init(struct tc *t)
{
    int kind = sl_loop_parse(sl_arg_str("sched")), skewed = sl_arg_is("graph", "skewed");
    int64_t *first = sl_malloc((size_t)(t->nprocs + 1) * sizeof(int64_t));
    uint64_t *w = sl_malloc((size_t)t->n * sizeof(uint64_t));

    if (!first || !w)
        sl_die("out of memory for the loop scheduler");
    for (int j = 0; j < t->n; j++)
        w[j] = (uint64_t)t->n * (1 + (skewed && j < t->clique ? (uint64_t)(t->clique - 1) : 0));
    sl_loop_split_weighted(w, t->n, t->nprocs, first);
    for (int i = 0; i < 2; i++) {
        t->loop[i] = sl_alloc_node(sl_loop_bytes(t->nprocs), -1);
        if (!t->loop[i])
            sl_die("out of memory for the loop scheduler");
        sl_loop_init(t->loop[i], (enum sl_loopsched)kind, t->nprocs, 0);
        if (kind == SL_LOOP_BESTSTATIC)
            sl_loop_set_split(t->loop[i], first);
    }
    sl_loop_start(t->loop[0], 0, t->n);
    sl_free(w);
    sl_free(first);
}

/* Cells of the closure that differ from a breadth-first search of the input from every node; *closure
   counts the TRUE cells. */
static uint64_t check(struct tc *t, uint64_t *closure)
{
    int n = t->n;
    uint32_t *seen = sl_malloc((size_t)n * sizeof(uint32_t)), *queue = sl_malloc((size_t)n * sizeof(uint32_t));
    uint64_t bad = 0;

    if (!seen || !queue)
        sl_die("out of memory for the check (n=%d)", n);
    *closure = 0;
    for (int s = 0; s < n; s++) {
        int head = 0, tail = 0;
        const uint32_t *row = t->a + (size_t)s * n;
        memset(seen, 0, (size_t)n * sizeof(uint32_t));
        for (uint32_t e = t->adj_first[s]; e < t->adj_first[s + 1]; e++) /* paths of one edge or more */
            if (!seen[t->adj[e]]) {
                seen[t->adj[e]] = 1;
                queue[tail++] = t->adj[e];
            }
        while (head < tail) {
            uint32_t u = queue[head++];
            for (uint32_t e = t->adj_first[u]; e < t->adj_first[u + 1]; e++)
                if (!seen[t->adj[e]]) {
                    seen[t->adj[e]] = 1;
                    queue[tail++] = t->adj[e];
                }
        }
        for (int i = 0; i < n; i++) {
            bad += row[i] != seen[i];
            *closure += row[i] != 0;
        }
    }
    sl_free(seen);
    sl_free(queue);
    return bad;
}

int main(void)
{
    struct tc t = { .n = (int)sl_arg_int("n"), .nprocs = sl_nprocs() };
    uint64_t local = 0, remote = 0, l1, r1, edges, closure, bad;

    t.clique = (int)((int64_t)t.n * sl_arg_int("clique") / 100);
    t.a = sl_malloc((size_t)t.n * (size_t)t.n * sizeof(uint32_t));
    if (!t.a)
        sl_die("out of memory for n=%d", t.n);
    gen_graph(&t);
    edges = keep_edges(&t);
    sl_barrier_init_args(&t.bar, (uint32_t)t.nprocs, "shape", "barrier");
    loops_init(&t);

    sl_run_workers(worker, &t);

    bad = check(&t, &closure);
    sl_loop_grabs(t.loop[0], &local, &remote);
    sl_loop_grabs(t.loop[1], &l1, &r1);
    local += l1;
    remote += r1;
    sl_report(bad == 0, "par_us=%lu loops=%d grabs=%lu remote=%lu edges=%lu closure=%lu bad=%lu sleeps=%lu",
              (unsigned long)(t.t1 - t.t0), t.n, (unsigned long)(local + remote), (unsigned long)remote,
              (unsigned long)edges, (unsigned long)closure, (unsigned long)bad, (unsigned long)sl_wait_blocks());
    return 0;
}
