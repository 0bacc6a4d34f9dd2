/*
 * test_life.c - host unit tests of the portable core (kernel/sched/life.[ch]) and the console contract's
 * formatter (kernel/contract.c), on the third machine they compile for: a fake hart side (this file) with a
 * FIFO policy. Checks the state machine's transitions, the deadlock counts (for ever vs timed waits, the
 * last runnable process exiting), kill, reap and finish, memory accounting against mem=, the READY check of
 * a policy's pick, and the RESULT/SUMMARY/verdict text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "sched/life.h"
#include "contract.h"

/* ---- the fake machine: one host thread, harts switched by hand ---- */
struct cpu cpus[SL_MAX_HARTS];
int ncpus = 2;
struct spinlock sched_lock = SPINLOCK_INIT("sched", LOCK_SCHED);
const struct sched_class *sched;
struct platform plat = { .timebase_hz = 1000000000UL };
uintptr_t sim_tp;
uint64_t sim_now = 1000;
int trace_enabled;
struct trace_ring trace_rings[SL_MAX_HARTS], trace_decisions[SL_MAX_HARTS];
void trace_model_rec(int hart, uint64_t t, enum trace_ev ev, int job, int proc, int arg) {}

static char console[4096]; /* every kprintf, appended */
static int npreempt_sent, nkick, nunwait, ndone;
static struct job *done_job;
static jmp_buf on_panic;
static char panic_msg[256];

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(console);
    vsnprintf(console + n, sizeof console - n, fmt, ap);
    va_end(ap);
}

void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(panic_msg, sizeof panic_msg, fmt, ap);
    va_end(ap);
    longjmp(on_panic, 1);
}

void spin_panic(const struct spinlock *l, const char *what) { panic("lock %s: %s", l->name, what); }
void spin_acquire_contended(struct spinlock *l) { spin_panic(l, "contended"); }
/* The policy contract's panics (sched/hooks.h; classes.c in the builds with policies) */
void sched_hook_panic(struct cpu *c, const char *hook, const char *what) { panic("hook %s: %s", hook, what); }
void sched_bad_pick(struct cpu *c, struct proc *p)
{
    panic("policy %s picked %d.%d in state %d on hart %d", sched->name, p->job->id, p->idx, p->state, c->id);
}
void sched_preempt(struct cpu *c) { npreempt_sent++; }
void sched_kick(int hart) { nkick++; }
uint64_t time_us(uint64_t ticks) { return ticks / 1000; }
void hart_leave(struct proc *p)
{
    p->on_cpu->cur = 0;
    p->on_cpu = 0;
}

static void job_done(struct job *j)
{
    ndone++;
    done_job = j;
}
static void unwait(struct proc *p) { nunwait++; }

/* ---- a FIFO policy ---- */
static struct proc *queue[64];
static int qhead, qtail;
static int fifo_admit(struct job *j) { return 0; }
static void nothing_j(struct job *j) {}
static void nothing_p(struct proc *p) {}
static void fifo_enqueue(struct proc *p, enum enq_how how) { queue[qtail++ % 64] = p; }
static struct proc *fifo_pick(struct cpu *c)
{
    struct proc *p = qhead < qtail ? queue[qhead++ % 64] : 0;
    if (p && p->state == P_READY)
        p->hart = c->id; /* sched.h: a picked process runs on the picking hart */
    return p;
}
static const struct sched_class fifo = { .name = "fifo", .job_admit = fifo_admit, .job_done = nothing_j,
                                         .proc_new = nothing_p, .enqueue = fifo_enqueue, .pick_next = fifo_pick,
                                         .blocked = nothing_p, .exited = nothing_p, .abandoned = nothing_p };

/* ---- helpers ---- */
static struct scen_job scen;
static struct job job;
static struct proc procs[SL_MAX_PROCS];

static void on(int hart) { sim_tp = (uintptr_t)&cpus[hart]; }

static void setup(int nprocs, uint64_t mem_limit)
{
    memset(&job, 0, sizeof job);
    memset(procs, 0, sizeof procs);
    memset(&scen, 0, sizeof scen);
    for (int h = 0; h < ncpus; h++) {
        memset(&cpus[h], 0, sizeof cpus[h]);
        cpus[h].id = h;
    }
    console[0] = 0;
    qhead = qtail = npreempt_sent = nkick = nunwait = ndone = 0;
    done_job = 0;
    strcpy(scen.app, "chaos");
    strcpy(scen.args, "mode=deadlock,seed=0");
    scen.mem_limit = mem_limit;
    job.id = 1;
    job.scen = &scen;
    job.nprocs = nprocs;
    job.lock = (struct spinlock)SPINLOCK_INIT("job", LOCK_JOB);
    on(0);
    life_arrive(&job);
    CHECK(life_admit(&job) == 0 && job.state == J_RUNNING && job.pt_refs == 1);
}

/* Create process number job.ncreated (READY, queued); its result from life_proc_new. */
static long create(void)
{
    struct proc *p = &procs[job.ncreated];
    acquire(&job.lock);
    CHECK(life_may_create(&job));
    long why = life_proc_new(&job, p);
    if (!why)
        life_proc_start(p);
    release(&job.lock);
    if (!why)
        life_start(p);
    return why;
}

/* Hart h picks the next process and runs it. */
static struct proc *run_on(int h)
{
    on(h);
    acquire(&sched_lock);
    struct proc *p = hook_pick_next(&cpus[h]);
    if (p)
        life_run(&cpus[h], p, ++sim_now);
    release(&sched_lock);
    return p;
}

static void block(struct proc *p, uint64_t deadline)
{
    p->fx_deadline = deadline;
    acquire(&sched_lock);
    life_block(p);
    release(&sched_lock);
}

static void exit_proc(struct proc *p)
{
    acquire(&sched_lock);
    life_exit(p);
    release(&sched_lock);
}

/* ---- the tests ---- */

static void test_deadlock_when_every_process_waits_for_ever(void)
{
    setup(2, 1 << 20);
    CHECK(create() == 0 && create() == 0);
    CHECK(job.nactive == 2 && job.nlive == 2 && job.mem_used == 2 * SL_STACK_SIZE);
    struct proc *a = run_on(0), *b = run_on(1);
    CHECK(a == &procs[0] && b == &procs[1] && a->state == P_RUNNING && cpus[1].cur == b);
    CHECK(job.start == 1001);
    on(0);
    block(a, 0);
    CHECK(a->state == P_BLOCKED && job.nforever == 1 && !cpus[0].stuck_job);
    on(1);
    block(b, 0);
    CHECK(job.nforever == 2 && cpus[1].stuck_job == &job);
    job_deadlocked(cpus[1].stuck_job);
    CHECK(job.killed && !strcmp(job.kill_reason, "reason=deadlock") && nunwait == 2);
    CHECK(a->state == P_READY && b->state == P_READY && a->killed && b->killed && job.nforever == 0);
    CHECK(strstr(console, "ERROR deadlock: job 1 (chaos): every live process waits") != 0);
    /* the killed processes run, exit and are reaped: the job is done, reported once */
    for (int i = 0; i < 2; i++) {
        struct proc *p = run_on(0);
        CHECK(p && p->killed);
        exit_proc(p);
        CHECK(p->state == P_ZOMBIE);
        int last = life_reap(p);
        CHECK(last == (i == 1));
        if (last)
            CHECK(life_job_finish(&job) == 1);
    }
    CHECK(ndone == 1 && done_job == &job && job.state == J_DONE && job.nactive == 0 && job.nswitch == 4);
    char why[200];
    CHECK(contract_verdict(&job, why, sizeof why) == 0 && !strcmp(why, "reason=deadlock"));
}

static void test_timed_waits_are_not_a_deadlock(void)
{
    setup(2, 1 << 20);
    create();
    create();
    struct proc *a = run_on(0), *b = run_on(1);
    on(0);
    block(a, 0);
    on(1);
    block(b, sim_now + 500); /* a timeout will wake it */
    CHECK(job.nforever == 1 && !cpus[0].stuck_job && !cpus[1].stuck_job);
    acquire(&sched_lock);
    life_ready(b, ENQ_WAKE); /* the timeout */
    release(&sched_lock);
    CHECK(b->state == P_READY && job.nforever == 1 && b->blocked_ticks == 0);
}

static void test_last_runnable_process_exiting_is_a_deadlock(void)
{
    setup(3, 1 << 20);
    create();
    create();
    create();
    struct proc *p0 = run_on(0), *p1 = run_on(1);
    on(1);
    block(p1, 0);
    struct proc *p2 = run_on(1);
    block(p2, 0);
    CHECK(!cpus[1].stuck_job);
    on(0);
    exit_proc(p0); /* chaos mode=exit-blocked: process 0 leaves the others waiting */
    CHECK(job.nactive == 2 && job.nforever == 2 && cpus[0].stuck_job == &job);
    CHECK(life_reap(p0) == 0 && job.nlive == 2);
}

static void test_memory_is_what_was_taken_within_the_limit(void)
{
    setup(3, 2 * SL_STACK_SIZE + 100);
    CHECK(create() == 0 && create() == 0);
    CHECK(create() == SL_EMEMLIMIT && job.mem_refused && job.ncreated == 2);
    CHECK(job.mem_used == 2 * SL_STACK_SIZE);
    acquire(&job.lock);
    CHECK(job_charge(&job, 100) == 0 && job_charge(&job, 1) == -1);
    release(&job.lock);
    CHECK(job.mem_used == 2 * SL_STACK_SIZE + 100);
}

static void test_a_pick_that_is_not_ready_panics(void)
{
    setup(1, 1 << 20);
    create();
    struct proc *p = run_on(0);
    int panicked = 0;
    acquire(&sched_lock);
    if (setjmp(on_panic) == 0)
        life_run(&cpus[1], p, sim_now); /* RUNNING on hart 0 already */
    else
        panicked = 1;
    if (holding(&sched_lock))
        release(&sched_lock);
    CHECK(panicked && strstr(panic_msg, "policy fifo picked 1.0 in state 2 on hart 1") != 0);
}

static void test_exit_status_fails_the_job_once(void)
{
    setup(2, 1 << 20);
    create();
    create();
    struct proc *a = run_on(0);
    run_on(1);
    on(0);
    life_exit_status(a, 3);
    CHECK(job.exit_status == 3 && job.killed && npreempt_sent == 1); /* the other, running on hart 1 */
    CHECK(strstr(console, "ERROR job 1 (chaos) ended: process 0 exited with status 3") != 0);
    life_exit_status(&procs[1], 5); /* already killed: no second ERROR */
    CHECK(job.exit_status == 3 && strstr(strstr(console, "ERROR") + 1, "ERROR") == 0);
}

static void test_contract_lines(void)
{
    setup(2, 1 << 20);
    char line[2048], why[200];
    job.arrive = 2000, job.start = 3000, job.end = 13000, job.cpu_ticks = 9000;
    job.result_set = job.result_ok = 1;
    strcpy(job.result_keys, "blocked=1");
    job.mem_used = 128 << 10;
    CHECK(contract_verdict(&job, why, sizeof why) == 1 && why[0] == 0);
    CHECK(contract_failure(line, sizeof line, &job) == 0 && line[0] == 0);
    contract_result(line, sizeof line, &job, "fifo", 2, 1000, 1, why, " sim=x");
    CHECK(!strcmp(line, "RESULT job=1 app=chaos policy=fifo harts=2 procs=2 arrive_us=1 start_us=2 end_us=12 "
                        "elapsed_us=10 cpu_us=9 check=ok mode=deadlock seed=0 blocked=1 switches=0 preempts=0 "
                        "blocks=0 blocked_us=0 adapt=no migrations=0 mem_kb=128 sim=x"));
    job.result_ok = 0;
    CHECK(contract_verdict(&job, why, sizeof why) == 0 && !strcmp(why, "reason=app-check"));
    CHECK(contract_failure(line, sizeof line, &job) > 0 && strstr(line, "its own check failed"));
    job.result_set = 0;
    CHECK(contract_verdict(&job, why, sizeof why) == 0 && !strcmp(why, "reason=no-result"));
    contract_summary(line, sizeof line, "fifo", 2, 3, 1, 42, "");
    CHECK(!strcmp(line, "SUMMARY policy=fifo harts=2 jobs=3 failed=1 makespan_us=42"));
}

int main(void)
{
    life_hooks = (struct life_hooks){ .job_done = job_done, .unwait = unwait };
    sched = &fifo;
    test_deadlock_when_every_process_waits_for_ever();
    test_timed_waits_are_not_a_deadlock();
    test_last_runnable_process_exiting_is_a_deadlock();
    test_memory_is_what_was_taken_within_the_limit();
    test_a_pick_that_is_not_ready_panics();
    test_exit_status_fails_the_job_once();
    test_contract_lines();
    return check_done("test_life");
}
