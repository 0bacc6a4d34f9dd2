/*
 * knary - Hood's synthetic benchmark knary(h, d, s) (Blumofe & Papadopoulos,
 * section 5.1): a tree of height h and degree d, one user-level thread per
 * node. A node first does `work` units of work, then makes its d children:
 * the first s one after another (each spawned and waited for before the
 * next: they lie on the critical path), the other d - s all at once, in
 * parallel, and waits for them with a join counter. So the work T1 grows
 * like d^h while s = 0 gives a critical path of Theta(h) and s = d one of
 * Theta(T1): s dials the parallelism T1/Tinf.
 *
 * A work unit is one step of the LCG x = x*A + C (mod 2^64), starting from
 * the node's number; nodes are numbered breadth-first (the root 0, child j
 * of node v is v*d + j + 1), so they are exactly 0..N-1 with
 * N = 1 + d + ... + d^(h-1). Each node returns (nodes in its subtree, sum of
 * the subtree's final x) to its parent through the parent's frame.
 *
 * The critical path. Each node also returns its subtree's span, in work units: its own work, plus the
 * spans of its serial children one after another, plus the longest span of its parallel ones - the
 * T_inf of Hood's bound, measured on the tree as it ran (span_units=), and checked against the closed
 * form S(1) = w, S(h) = w + (s + [d > s]) S(h-1). work_units= is T1 in the same units (N w).
 *
 * Checks, in closed form: the root's count is N, and since w LCG steps are
 * the affine map x -> A_w x + C_w, the sum over all nodes is
 *   A_w * N(N-1)/2 + N * C_w  (mod 2^64).
 * A lost, duplicated or corrupted thread (or an integer register the
 * context switch failed to keep) changes one or the other; each inner node
 * also checks four FP values it kept across its waits (fpbad).
 *
 * yield=off turns off the thieves' yield (sl_threads_yields), as in Hood's comparison.
 *
 * mode=static is the same work without threads, statically partitioned as
 * in Hood's "performance cliff" (section 2): process p of P does the work
 * of nodes [N p/P, N (p+1)/P) - one equal contiguous share each - and the
 * shares' counts and sums are added up and checked the same way. Run it
 * with adapt=no under partition: it has no safe points to adapt at.
 */
#include "schedlab.h"
#include "threads/uthread.h"
#include "base/lcg.h"

/* Memory: one stack per started, unfinished thread (at most a few per
   level and process), the per-process deques, small descriptors. */
SL_APP(.about = "Hood's knary(h,d,s) tree of user-level threads",
       .flags = SL_APP_ADAPTIVE, /* the thread library does process control */
       .mem_const = 2 << 20, .mem_per_proc = 2 << 20,
       SL_KEYS(SL_INT("h", 1, 24, 8), SL_INT("d", 1, 32, 4), SL_INT("s", 0, 32, 1), SL_INT("work", 0, 100000000, 200),
               SL_ENUM("mode", "steal|static", 0), SL_ENUM("yield", "on|off", 0)));

/* An FP register operand, so the values below cannot be recomputed. */
#if defined(__x86_64__)
#define FPREG(x) "+x"(x)
#else
#define FPREG(x) "+f"(x)
#endif

struct knary {
    int h, d, s;
    uint64_t work;
};

struct node { /* a node's argument and, when done, its result */
    const struct knary *k;
    struct sl_joincnt *parent; /* signalled when this node's subtree is done */
    uint64_t id;
    int depth;
    uint64_t count, sum;
    uint64_t span;  /* work units on the subtree's critical path */
    uint64_t fpbad; /* nodes whose FP values changed across their waits */
};

static void node_thread(void *arg);

static uint64_t do_work(uint64_t x, uint64_t units)
{
    for (uint64_t u = 0; u < units; u++) {
        x = sl_lcg_step(x);
        asm volatile("" : "+r"(x)); /* one step per unit: no closed form for the compiler */
    }
    return x;
}

static void node(struct node *n)
{
    const struct knary *k = n->k;
    struct node kids[32];
    struct sl_joincnt jc;
    int d = k->d;

    n->sum = do_work(n->id, k->work);
    n->count = 1;
    n->span = k->work;
    n->fpbad = 0;
    if (n->depth + 1 >= k->h)
        return;
    /* FP values live across every wait below, so the compiler keeps them in
       callee-saved FP registers (fs0-fs11): the switch must preserve them,
       also when this thread resumes on another process. */
    double f0 = (double)n->id + 0.25, f1 = f0 * 3.0, f2 = f0 - 7.5, f3 = f0 * f0;
    asm volatile("" : FPREG(f0), FPREG(f1), FPREG(f2), FPREG(f3));
    for (int j = 0; j < d; j++)
        kids[j] =
            (struct node){ .k = k, .parent = &jc, .id = n->id * (uint64_t)d + (uint64_t)j + 1, .depth = n->depth + 1 };
    for (int j = 0; j < k->s; j++) { /* serial children */
        sl_joincnt_init(&jc, 1);
        sl_thread_spawn(node_thread, &kids[j]);
        sl_joincnt_wait(&jc);
    }
    sl_joincnt_init(&jc, (uint32_t)(d - k->s)); /* parallel children */
    for (int j = k->s; j < d; j++)
        sl_thread_spawn(node_thread, &kids[j]);
    sl_joincnt_wait(&jc);
    uint64_t longest = 0;
    for (int j = 0; j < d; j++) {
        n->count += kids[j].count;
        n->sum += kids[j].sum;
        n->fpbad += kids[j].fpbad;
        if (j < k->s)
            n->span += kids[j].span;
        else if (kids[j].span > longest)
            longest = kids[j].span;
    }
    n->span += longest;
    double g0 = (double)n->id + 0.25;
    n->fpbad += f0 != g0 || f1 != g0 * 3.0 || f2 != g0 - 7.5 || f3 != g0 * g0;
}

static void node_thread(void *arg)
{
    struct node *n = arg;

    node(n);
    sl_joincnt_signal(n->parent);
}

static void root_thread(void *arg) { node(arg); }

/* mode=static: one equal contiguous share of the nodes per process. */
struct share {
    uint64_t count, sum;
} __attribute__((aligned(64)));

struct static_run {
    const struct knary *k;
    uint64_t nodes;
    struct share *share; /* one per process */
};

static void static_share(void *arg, int id)
{
    struct static_run *r = arg;
    uint64_t P = (uint64_t)sl_nprocs(), lo = r->nodes * (uint64_t)id / P, hi = r->nodes * ((uint64_t)id + 1) / P;
    uint64_t sum = 0;

    for (uint64_t v = lo; v < hi; v++)
        sum += do_work(v, r->k->work);
    r->share[id].count = hi - lo;
    r->share[id].sum = sum;
}

int main(void)
{
    struct knary k = { .h = (int)sl_arg_int("h"),
                       .d = (int)sl_arg_int("d"),
                       .s = (int)sl_arg_int("s"),
                       .work = (uint64_t)sl_arg_int("work") };
    struct node root = { .k = &k, .id = 0, .depth = 0 };
    struct sl_thread_stats st;
    uint64_t nodes = 0, pow = 1, a, c, want, t0, t1;

    if (k.s > k.d)
        sl_die("s=%d is more than d=%d (s counts the serial children among the d)", k.s, k.d);
    for (int i = 0; i < k.h; i++, pow *= (uint64_t)k.d) {
        nodes += pow;
        if (nodes > (1ull << 40))
            sl_die("h=%d d=%d is more than 2^40 nodes", k.h, k.d);
    }
    uint64_t span = k.work; /* the closed form of the critical path (see the header) */
    for (int i = 1; i < k.h; i++)
        span = k.work + (uint64_t)(k.s + (k.d > k.s)) * span;
    sl_lcg_pow(k.work, &a, &c);
    want = a * (uint64_t)(((unsigned __int128)nodes * (nodes - 1) / 2)) + nodes * c;

    if (sl_arg_is("mode", "static")) {
        struct static_run r = { .k = &k,
                                .nodes = nodes,
                                .share = sl_calloc((size_t)sl_nprocs(), sizeof(struct share)) };
        if (!r.share)
            sl_die("out of memory for %d shares", sl_nprocs());
        t0 = sl_now_us();
        sl_run_procs(static_share, &r);
        t1 = sl_now_us();
        for (int p = 0; p < sl_nprocs(); p++) {
            root.count += r.share[p].count;
            root.sum += r.share[p].sum;
        }
        sl_report(root.count == nodes && root.sum == want, "nodes=%llu par_us=%llu%s", (unsigned long long)root.count,
                  (unsigned long long)(t1 - t0), root.sum == want ? "" : " badsum=1");
        return 0;
    }

    sl_threads_yields(sl_arg_is("yield", "on"));
    t0 = sl_now_us();
    sl_threads_run(root_thread, &root);
    t1 = sl_now_us();
    sl_threads_stats(&st);

    sl_report(root.count == nodes && root.sum == want && root.fpbad == 0 && root.span == span,
              "nodes=%llu par_us=%llu work_units=%llu span_units=%llu threads=%llu steals=%llu stacks=%llu "
              "yields=%llu sleeps=%llu suspends=%llu resumes=%llu%s%s%s",
              (unsigned long long)root.count, (unsigned long long)(t1 - t0), (unsigned long long)(nodes * k.work),
              (unsigned long long)root.span, (unsigned long long)st.threads,
              (unsigned long long)st.steals, (unsigned long long)st.stacks, (unsigned long long)st.yields,
              (unsigned long long)st.sleeps, (unsigned long long)st.suspends, (unsigned long long)st.resumes,
              root.sum == want ? "" : " badsum=1", root.fpbad ? " fpbad=1" : "", root.span == span ? "" : " badspan=1");
    return 0;
}
