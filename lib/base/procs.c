/*
 * procs.c - sl_run_procs: fork the job's processes, run one function on
 * each, join them with a counter.
 *
 * The join counter `left` counts processes that have not finished fn yet.
 * Each created process decrements it (release: its work happens-before the
 * join) and the one that reaches 0 futex-wakes process 0, which sleeps until
 * it reads 0 (acquire). The run record lives in process 0's frame; created
 * processes read fn/arg before they decrement, and touch only the counter's
 * address (a futex wake) after, which is harmless even once the frame is
 * gone: a futex wake never writes memory and waiters re-check their word.
 */
#include "schedlab.h"

struct run {
    sl_workfn fn;
    void *arg;
    uint32_t left; /* created processes still inside fn */
};

static void child(void *p, int id)
{
    struct run *r = p;

    r->fn(r->arg, id);
    if (__atomic_sub_fetch(&r->left, 1, __ATOMIC_RELEASE) == 0)
        sl_futex_wake(&r->left, 1);
}

static void join(struct run *r)
{
    uint32_t v;

    while ((v = __atomic_load_n(&r->left, __ATOMIC_ACQUIRE)) != 0)
        sl_futex_wait(&r->left, v, 0);
}

void sl_run_procs(sl_workfn fn, void *arg)
{
    int n = sl_nprocs();
    struct run r = { fn, arg, (uint32_t)(n - 1) };
    struct sl_procstart ps = { child, &r };

    if (sl_self() != 0)
        sl_die("sl_run_procs called from process %d (only process 0 may)", sl_self());
    for (int i = 1; i < n; i++) {
        long id = sl_sys_proc_create(&ps);
        if (id < 0)
            sl_die("proc_create failed (%ld) for process %d of %d", id, i, n);
    }
    fn(arg, 0);
    join(&r);
}
