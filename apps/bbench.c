/*
 * bbench - what one barrier episode costs, for every shape x wait kind (barrier.h, wait.h).
 *
 * For each combination the job's processes pass the barrier back to back, with no work in between, in
 * `batches` timed batches of about `ms` milliseconds each (after one untimed warm-up batch, which also
 * runs the combination barrier's set-up episode). A batch's figure is its time / its episodes, seen by
 * process 0; the printed figure is the median over the batches:
 *   BENCH barrier_<shape>_<wait>_ns <ns per episode> ns
 * shape= and barrier= restrict the combinations (default: all of them). The RESULT line says how many
 * figures were printed and how many times a wait slept (wait.h). `make bench` runs it (`schedlab bench`).
 *
 * Ending a batch on time without an extra barrier: process 0 reads the clock after each episode and,
 * once the batch has lasted `ms`, sets `last` to the next episode number before arriving at it. Every
 * process compares `last` with the episode it has just finished, so all of them read it after that
 * episode's barrier, which orders process 0's write before their reads: all stop after the same
 * episode. A central blocking barrier (`ctl`) separates the batches; process 0 reopens `last` after it.
 */
#include "platform/platform.h"
#include "schedlab.h"
#include "barriers/barrier.h"

SL_APP(.about = "barrier costs: every shape x wait kind, median ns per episode", .mem_const = 512 * 1024,
       .mem_per_proc = 4096,
       SL_KEYS(SL_INT("ms", 1, 10000, 20), SL_INT("batches", 1, 99, 5),
               SL_ENUM("shape", "all|central|tree|combination", 0), SL_ENUM("barrier", "all|" SL_WAIT_CHOICES, 0)));

#define MAXB     12 /* shapes x kinds */
#define MAXBATCH 100

struct bench {
    int nb, batches;
    uint64_t budget; /* ticks per batch */
    struct sl_barrier bar[MAXB], ctl;
    int64_t last __attribute__((aligned(64))); /* the batch's last episode, -1 while open */
    uint64_t per_ep[MAXB][MAXBATCH];           /* ticks * 1000 per episode (process 0's) */
};

static void batch(struct bench *b, struct sl_barrier *bar, int id, uint64_t *ticks_x1000)
{
    uint64_t t0;

    sl_barrier_wait(&b->ctl); /* everyone has stopped reading the previous batch's `last` */
    if (id == 0)              /* before 0 arrives at episode 0, so before anyone reads it */
        __atomic_store_n(&b->last, -1, __ATOMIC_RELAXED);
    t0 = sl_plat_ticks();
    for (int64_t e = 0;; e++) {
        sl_barrier_wait(bar);
        if (__atomic_load_n(&b->last, __ATOMIC_RELAXED) == e) {
            if (id == 0)
                *ticks_x1000 = (sl_plat_ticks() - t0) * 1000 / (uint64_t)(e + 1);
            return;
        }
        if (id == 0 && __atomic_load_n(&b->last, __ATOMIC_RELAXED) < 0 && sl_plat_ticks() - t0 >= b->budget)
            __atomic_store_n(&b->last, e + 1, __ATOMIC_RELAXED);
    }
}

static void worker(void *arg, int id)
{
    struct bench *b = arg;
    uint64_t warm;

    for (int i = 0; i < b->nb; i++) {
        batch(b, &b->bar[i], id, &warm);
        for (int k = 0; k < b->batches; k++)
            batch(b, &b->bar[i], id, &b->per_ep[i][k]);
    }
    sl_barrier_wait(&b->ctl);
}

static uint64_t median(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: n <= 99 */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(void)
{
    static struct bench b;
    const char *shape = sl_arg_str("shape"), *wait = sl_arg_str("barrier");
    uint64_t hz = sl_info()->timebase_hz;

    b.batches = (int)sl_arg_int("batches");
    b.budget = (uint64_t)sl_arg_int("ms") * hz / 1000;
    for (unsigned s = 0; sl_barrier_shape_at(s); s++)
        for (int w = 0; w < SL_NWAITS; w++) {
            const struct sl_barrier_shape *sh = sl_barrier_shape_at(s);
            if ((strcmp(shape, "all") == 0 || strcmp(shape, sh->name) == 0) &&
                (strcmp(wait, "all") == 0 || strcmp(wait, sl_waits[w]->name) == 0))
                sl_barrier_init_shape(&b.bar[b.nb++], sh, (uint32_t)sl_nprocs(), (enum sl_wait)w);
        }
    sl_barrier_init(&b.ctl, (uint32_t)sl_nprocs(), SL_WAIT_BLOCK);

    sl_run_procs(worker, &b);

    for (int i = 0; i < b.nb; i++) {
        uint64_t m = median(b.per_ep[i], b.batches); /* ticks * 1000 */
        uint64_t ns_x10 = m * 10000000 / hz;         /* ns * 10 = ticks * 1e10 / hz */
        sl_printf("BENCH barrier_%s_%s_ns %lu.%lu ns\n", b.bar[i].shape->name, sl_waits[b.bar[i].wait]->name,
                  (unsigned long)(ns_x10 / 10), (unsigned long)(ns_x10 % 10));
    }
    sl_report(1, "figures=%d sleeps=%lu", b.nb, (unsigned long)sl_wait_blocks());
    return 0;
}
