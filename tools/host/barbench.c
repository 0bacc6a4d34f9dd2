/*
 * barbench - the host's own barriers, for comparison with build/host/bbench: pthread_barrier_wait and
 * an OpenMP barrier (libgomp), T threads passing the barrier back to back.
 *
 *   build/host/barbench [--threads T] [--ms M] [--batches B]
 *
 * Like apps/bbench.c: one untimed warm-up batch, then B batches of about M ms; a batch's figure is
 * its time / its episodes as seen by thread 0; printed is the median over the batches:
 *   BENCH host_pthread_barrier_ns_t<T> <ns> ns
 *   BENCH host_omp_barrier_ns_t<T> <ns> ns        (only when built with -fopenmp)
 * A batch ends without an extra barrier: thread 0 sets `last` to the next episode before arriving at
 * it, and every thread compares `last` with the episode it has just passed. Thread 0 reopens `last`
 * only after a separating barrier, when nobody reads the old value any more.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAXBATCH 100

static int nthreads = 2, batches = 5;
static double budget_s = 0.02;
static pthread_barrier_t pbar;
static long last __attribute__((aligned(64)));
static double per_ep[MAXBATCH + 1];

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double
median(void)
{
    qsort(per_ep + 1, (size_t)batches, sizeof per_ep[0], cmp);     /* [0] is the warm-up */
    return batches % 2 ? per_ep[1 + batches / 2] : (per_ep[batches / 2] + per_ep[1 + batches / 2]) / 2;
}

/* ---- pthread_barrier_wait ---- */

static void *
pthread_worker(void *arg)
{
    int id = (int)(long)arg;

    for (int k = 0; k <= batches; k++) {
        double t0;
        pthread_barrier_wait(&pbar);                /* separates the batches */
        if (id == 0)
            __atomic_store_n(&last, -1, __ATOMIC_RELAXED);
        t0 = now_s();
        for (long e = 0;; e++) {
            pthread_barrier_wait(&pbar);
            if (__atomic_load_n(&last, __ATOMIC_RELAXED) == e) {
                if (id == 0)
                    per_ep[k] = (now_s() - t0) / (double)(e + 1);
                break;
            }
            if (id == 0 && __atomic_load_n(&last, __ATOMIC_RELAXED) < 0 && now_s() - t0 >= budget_s)
                __atomic_store_n(&last, e + 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

static void
bench_pthread(void)
{
    pthread_t t[256];

    pthread_barrier_init(&pbar, NULL, (unsigned)nthreads);
    for (long i = 1; i < nthreads; i++)
        pthread_create(&t[i], NULL, pthread_worker, (void *)i);
    pthread_worker((void *)0);
    for (int i = 1; i < nthreads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&pbar);
    printf("BENCH host_pthread_barrier_ns_t%d %.1f ns\n", nthreads, median() * 1e9);
}

/* ---- OpenMP ---- */

#ifdef _OPENMP
static void
bench_omp(void)
{
#pragma omp parallel num_threads(nthreads)
    {
        int id = omp_get_thread_num();
        for (int k = 0; k <= batches; k++) {
            double t0;
#pragma omp barrier
            if (id == 0)
                __atomic_store_n(&last, -1, __ATOMIC_RELAXED);
            t0 = now_s();
            for (long e = 0;; e++) {
#pragma omp barrier
                if (__atomic_load_n(&last, __ATOMIC_RELAXED) == e) {
                    if (id == 0)
                        per_ep[k] = (now_s() - t0) / (double)(e + 1);
                    break;
                }
                if (id == 0 && __atomic_load_n(&last, __ATOMIC_RELAXED) < 0 && now_s() - t0 >= budget_s)
                    __atomic_store_n(&last, e + 1, __ATOMIC_RELAXED);
            }
        }
    }
    printf("BENCH host_omp_barrier_ns_t%d %.1f ns\n", nthreads, median() * 1e9);
}
#endif

int
main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--threads") == 0)
            nthreads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ms") == 0)
            budget_s = atof(argv[i + 1]) / 1000;
        else if (strcmp(argv[i], "--batches") == 0)
            batches = atoi(argv[i + 1]);
    }
    if (nthreads < 1 || nthreads > 256 || batches < 1 || batches > MAXBATCH || budget_s <= 0) {
        fprintf(stderr, "usage: barbench [--threads 1..256] [--ms M] [--batches 1..%d]\n", MAXBATCH);
        return 2;
    }
    bench_pthread();
#ifdef _OPENMP
    bench_omp();
#endif
    return 0;
}
