/*
 * loopsched - the loop schedulers of lib/loops/loopsched.c, simulated deterministically on the host.
 *
 *   build/host/loopsched --sched static|ss|gss|factoring|trapezoid|afs|mod-factoring|best-static --n N --p P [--k K] [--quiet]
 *
 * P processes take chunks of [0, N) in turn (0, 1, ..., P-1, 0, ...; a process that finds no work is
 * done), as sl_loop_simulate does. Prints one line per chunk in that order,
 *   chunk proc=<p> start=<s> len=<l> local=<0|1>
 * (not with --quiet) and last
 *   grabs=<chunks> local=<from the taker's own share or queue> remote=<the others>
 * --k is AFS's 1/k of the local queue (default P). Exit status 2 on a bad argument.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loops/loopsched.h"

/* The spinlock's yield: this tool links lib/loops/loopsched.c alone, without the host backend. */
long
sl_sys_yield(void)
{
    sched_yield();
    return 0;
}

static void
usage(const char *why)
{
    fprintf(stderr, "loopsched: %s\nusage: loopsched --sched static|ss|gss|factoring|trapezoid|afs|mod-factoring|best-static "
            "--n N --p P [--k K] [--quiet]\n", why);
    exit(2);
}

static long long
num(const char *s, long long lo, long long hi, const char *what)
{
    char *end;
    long long v = s ? strtoll(s, &end, 10) : 0;

    if (!s || *s == 0 || *end != 0 || v < lo || v > hi)
        usage(what);
    return v;
}

static void
print_chunk(void *ctx, int proc, const struct sl_chunk *c)
{
    (void)ctx;
    printf("chunk proc=%d start=%lld len=%lld local=%d\n", proc, (long long)c->start, (long long)c->len,
           c->local);
}

int
main(int argc, char **argv)
{
    int kind = -1, quiet = 0;
    long long n = -1, p = -1, k = 0;
    struct sl_loop *l;
    uint64_t local, remote;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
            continue;
        }
        if (strcmp(a, "--sched") == 0) {
            if (!v || (kind = sl_loop_parse(v)) < 0)
                usage("--sched: unknown scheduler");
        } else if (strcmp(a, "--n") == 0) {
            n = num(v, 0, 1LL << 40, "--n: expected an integer >= 0");
        } else if (strcmp(a, "--p") == 0) {
            p = num(v, 1, SL_MAX_PROCS, "--p: expected an integer in [1, 128]");
        } else if (strcmp(a, "--k") == 0) {
            k = num(v, 1, 1LL << 30, "--k: expected an integer >= 1");
        } else {
            usage("unknown argument");
        }
        i++;
    }
    if (kind < 0 || n < 0 || p < 0)
        usage("--sched, --n and --p are required");
    l = aligned_alloc(64, (sl_loop_bytes((int)p) + 63) & ~(size_t)63);
    if (!l)
        usage("out of memory");
    sl_loop_init(l, (enum sl_loopsched)kind, (int)p, (int)k);
    sl_loop_simulate(l, n, quiet ? NULL : print_chunk, NULL);
    sl_loop_grabs(l, &local, &remote);
    printf("grabs=%llu local=%llu remote=%llu\n", (unsigned long long)(local + remote),
           (unsigned long long)local, (unsigned long long)remote);
    free(l);
    return 0;
}
