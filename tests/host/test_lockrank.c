/*
 * test_lockrank.c - the lock order checked at acquire (kernel/spinlock.h, KCHECKS), on the host under
 * ASan/UBSan: the kernel's own acquire/release and spin_rank_panic (kernel/spinlock.c), with a struct
 * spin_hart as the hart (tp) and spin_panic caught here. Built with -DSCHEDLAB_SIM for the host's tp
 * (tools/sim/sim_arch.h) and -DKCHECKS.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include "kernel.h"
#include "check.h"

uintptr_t sim_tp;
uint64_t sim_now;
int clock_virtual;
void vclock_handover(int drawn) { (void)drawn; }
void vclock_relax(void) {}

static jmp_buf caught;
static char said[256];

/* console.c's spin_panic prints "PANIC <hart> lock 0x0 0x0 <name>: <what>" and exits: here, remember it. */
void spin_panic(const struct spinlock *l, const char *what)
{
    snprintf(said, sizeof said, "%s: %s", l->name, what);
    longjmp(caught, 1);
}

/* One lock of each rank, as the kernel declares them, and a second job lock and kalloc node. */
static struct spinlock done = SPINLOCK_INIT("launcher", LOCK_DONE), job1 = SPINLOCK_INIT("job", LOCK_JOB),
                       job2 = SPINLOCK_INIT("job", LOCK_JOB), sched = SPINLOCK_INIT("sched", LOCK_SCHED),
                       ptable = SPINLOCK_INIT("proctable", LOCK_PROCTABLE), ulog = SPINLOCK_INIT("ulog", LOCK_ULOG),
                       node0 = SPINLOCK_INIT("kalloc", LOCK_KALLOC), node1 = SPINLOCK_INIT("kalloc", LOCK_KALLOC),
                       console = SPINLOCK_INIT("console", LOCK_CONSOLE);

static struct spin_hart hart0, hart1;

/* Run body on hart h (0: before tp is set); 1 if it panicked, with the message in said. */
static int panics(struct spin_hart *h, void (*body)(void))
{
    sim_tp = (uintptr_t)h;
    said[0] = 0;
    if (setjmp(caught))
        return 1;
    body();
    return 0;
}
#define PANICS(h, ...) panics((h), ({ void body_(void) { __VA_ARGS__; } body_; }))

static void take(struct spinlock *l) { acquire(l); }
static void drop(struct spinlock *l) { release(l); }

static void reset(void)
{
    struct spinlock *all[] = { &done, &job1, &job2, &sched, &ptable, &ulog, &node0, &node1, &console };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        all[i]->locked = 0, all[i]->holder = 0;
    hart0.ranks = hart1.ranks = 0;
}

static void in_order(void)
{
    take(&done);
    take(&sched);
    take(&console);
    drop(&console);
    drop(&sched);
    drop(&done);
    take(&job1);
    take(&sched);
    take(&console);
    drop(&console);
    drop(&sched);
    take(&ptable);
    take(&ulog);
    take(&node0);
    drop(&node0);
    drop(&ulog);
    drop(&ptable);
    drop(&job1);
}

int main(void)
{
    /* the kernel's nestings, outermost first: no panic, and nothing held after */
    reset();
    CHECK(!PANICS(&hart0, in_order()));
    CHECK(hart0.ranks == 0);

    /* released out of nesting order is fine; what is held decides */
    reset();
    CHECK(!PANICS(&hart0, (take(&job1), take(&sched), drop(&job1), take(&node0))));
    CHECK(hart0.ranks == (1u << LOCK_SCHED | 1u << LOCK_KALLOC));

    /* a rank before one held: names both locks */
    reset();
    CHECK(PANICS(&hart0, (take(&console), take(&sched))));
    CHECK(!strcmp(said, "sched: acquire: lock order: rank 3 taken while holding console (rank 8); the order is in "
                        "spinlock.h"));
    reset();
    CHECK(PANICS(&hart0, (take(&sched), take(&job1))));
    CHECK(strstr(said, "job: acquire: lock order: rank 2 taken while holding sched (rank 3)") == said);
    /* the latest of several held is named */
    reset();
    CHECK(PANICS(&hart0, (take(&job1), take(&sched), take(&ulog), take(&ptable))));
    CHECK(strstr(said, "proctable: acquire: lock order: rank 5 taken while holding ulog (rank 6)") == said);

    /* same rank: a second job lock, a second kalloc node */
    reset();
    CHECK(PANICS(&hart0, (take(&job1), take(&job2))));
    CHECK(strstr(said, "job: acquire: lock order: rank 2 taken while holding job (rank 2)") == said);
    reset();
    CHECK(PANICS(&hart0, (take(&node0), take(&node1))));
    CHECK(strstr(said, "while holding kalloc (rank 7)") != 0);

    /* the same lock again: "already held", as before ranks */
    reset();
    CHECK(PANICS(&hart0, (take(&sched), take(&sched))));
    CHECK(!strcmp(said, "sched: acquire: already held by this hart"));

    /* a lock of the same rank taken after the first one is released */
    reset();
    CHECK(!PANICS(&hart0, (take(&job1), drop(&job1), take(&job2), drop(&job2))));
    CHECK(hart0.ranks == 0);

    /* per hart: another hart's locks do not constrain this one (sched on hart 1, job on hart 0) */
    reset();
    CHECK(!PANICS(&hart1, take(&sched)));
    CHECK(!PANICS(&hart0, take(&job1)));
    CHECK(hart0.ranks == 1u << LOCK_JOB && hart1.ranks == 1u << LOCK_SCHED);

    /* releasing what this hart does not hold */
    reset();
    CHECK(PANICS(&hart0, drop(&sched)));
    CHECK(!strcmp(said, "sched: release: not held by this hart"));

    /* before boot_main sets tp (0): no order, but still no double acquire */
    reset();
    CHECK(!PANICS(0, (take(&console), take(&node0), drop(&node0), drop(&console))));
    CHECK(PANICS(0, (take(&node0), take(&node0))));
    CHECK(!strcmp(said, "kalloc: acquire: already held by this hart"));

    /* holding_rank, the hooks' "sched_lock held" */
    reset();
    CHECK(!PANICS(&hart0, take(&sched)));
    CHECK(holding_rank(LOCK_SCHED) && !holding_rank(LOCK_JOB));
    sim_tp = (uintptr_t)&hart1;
    CHECK(!holding_rank(LOCK_SCHED));
    return check_done("lockrank");
}
