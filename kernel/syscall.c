/*
 * syscall.c - the system calls (numbers and arguments in include/schedlab/abi.h).
 *
 * Arguments come from the trapframe (a0..a5), the number from a7, the result goes to a0. Every user
 * pointer is checked by translating it through the job's page table with the access it needs; a bad
 * one makes the call return SL_EFAULT. Nothing a process passes can fault the kernel. A call that fails
 * has no effect: buffers are checked whole before use (uvm_check), allocations are all or nothing.
 */
#include "sched/core.h"
#include "perturb.h"
#include "resultkeys.h"

#define ARG(p, i) ((p)->tf.x[REG_A0 + (i)])

static long sys_exit(struct proc *p) { proc_exit(p, (int)ARG(p, 0)); }

/* A short write: at most SL_WRITE_MAX bytes per call, so a process holds its hart with interrupts off (the
   kernel is never interrupted) for one kernel line's worth of console output, not for megabytes: ticks,
   IPIs, arrivals and futex timeouts wait at most that long. All or nothing: the whole buffer is checked
   before a byte of it reaches the console, so a bad buffer prints nothing. */
static long sys_write(struct proc *p)
{
    uint64_t buf = ARG(p, 0), len = ARG(p, 1);
    char kbuf[SL_WRITE_MAX];
    if (len > (1 << 20))
        return SL_EINVAL;
    if (uvm_check(p->job->pt, buf, len, PTE_R) < 0)
        return SL_EFAULT;
    len = MIN(len, sizeof kbuf);
    if (copy_from_user(p->job->pt, kbuf, buf, len) < 0)
        return SL_EFAULT;
    console_write_job(p->job->id, p->idx, kbuf, len);
    return (long)len;
}

static long sys_time(struct proc *p) { return (long)rdtime(); }
static long sys_self(struct proc *p) { return p->idx; }
static long sys_hart(struct proc *p) { return mycpu()->id; }

static long sys_yield(struct proc *p)
{
    sched_yield(p);
    return 0;
}

/* A spin-wait pause (vclock.h): in deterministic mode, the hand-over, then the IPI that came meanwhile, if
   one did (the hand-over leaves SSIP pending only then). Or a race point of a library protocol (abi.h enum
   sl_race): perturb='s draw, then the same. */
static long sys_relax(struct proc *p)
{
    uint64_t race = ARG(p, 0);
    if (race >= SL_RACE_NKINDS)
        return SL_EINVAL;
    if (!clock_virtual)
        return 0;
    if (race == SL_RACE_PAUSE) {
        for (int n = perturb_relax(PS_RELAX); n > 0; n--) /* 1, or perturb='s draw (perturb.h) */
            vclock_handover(0);
    } else {
        perturb_point(PS_LIBRARY + (int)race - 1);
    }
    if (csr_read(sip) & SIP_SSIP)
        sched_soft_interrupt(mycpu());
    return 0;
}

static long sys_futex_wait(struct proc *p)
{
    perturb_point(PS_FUTEX_WAIT); /* between the library's check of the word and the kernel's */
    return futex_wait(p, ARG(p, 0), (uint32_t)ARG(p, 1), ARG(p, 2));
}

static long sys_futex_wake(struct proc *p)
{
    perturb_point(PS_FUTEX_WAKE); /* between the library's store to the word and the wake (a tail call after) */
    return futex_wake(p->job, ARG(p, 0), (uint32_t)ARG(p, 1));
}

static long sys_proc_create(struct proc *p)
{
    uint64_t entry = ARG(p, 0);
    if (!uvm_translate(p->job->pt, entry, PTE_X))
        return SL_EFAULT;
    long why;
    struct proc *np = proc_create(p->job, entry, ARG(p, 1), &why);
    if (np)
        return np->idx;
    if (why == SL_ELIMIT)
        return why;
    job_out_of(p->job, p->job->ncreated, why); /* the caller is killed on its way out */
    return SL_ENOMEM;
}

static long sys_topology(struct proc *p)
{
    struct sl_topology t;
    memset(&t, 0, sizeof t);
    t.nharts = ncpus;
    t.nnodes = plat.nnodes;
    for (int h = 0; h < ncpus; h++)
        t.hart_node[h] = cpus[h].node;
    for (int n = 0; n < plat.nnodes; n++)
        for (int i = 0; i < plat.nmem; i++)
            if (plat.mem[i].node == n)
                t.node_mem_bytes[n] += plat.mem[i].size;
    return copy_to_user(p->job->pt, ARG(p, 0), &t, sizeof t) < 0 ? SL_EFAULT : 0;
}

/* More than the heap's address space or the free memory is refused before a page is taken (and
   uvm_alloc gives back what it took if memory runs out meanwhile): a job asking for too much gets
   SL_ENOMEM and its neighbours keep their memory. */
static long sys_alloc(struct proc *p)
{
    struct job *j = p->job;
    uint64_t want = ARG(p, 0);
    long node = (long)ARG(p, 1);
    if (node == -1)
        node = mycpu()->node;
    if (want == 0 || node < 0 || node >= plat.nnodes)
        return SL_EINVAL;
    if (want > kalloc_free_bytes(-1))
        return SL_ENOMEM;
    uint64_t bytes = ROUNDUP(want, PAGE_SIZE); /* want <= free memory: no wrap */
    acquire(&j->lock);
    uint64_t va = j->heap_next;
    long r = SL_ENOMEM;
    if (bytes <= user_heap_limit() - va && !job_charge(j, bytes)) {
        if (uvm_alloc(j->pt, va, bytes, PTE_R | PTE_W, (int)node) == 0) {
            j->heap_next = va + bytes;
            r = (long)va;
        } else {
            j->mem_used -= bytes; /* the pages it did map stay mapped, and are reused by the next call */
        }
    }
    release(&j->lock);
    return r;
}

static long sys_result(struct proc *p)
{
    struct job *j = p->job;
    char keys[SL_RESULT_MAX + 1];
    uint64_t src = ARG(p, 1);
    int n = 0;
    /* copy up to the NUL, byte by byte through the checked path; control characters become '_' so a
       process cannot break the console contract */
    for (; n < SL_RESULT_MAX; n++) {
        char ch;
        if (copy_from_user(j->pt, &ch, src + n, 1) < 0)
            return SL_EFAULT;
        if (!ch)
            break;
        keys[n] = (ch < ' ' || ch > '~') ? '_' : ch;
    }
    if (n == SL_RESULT_MAX)
        return SL_EINVAL;
    keys[n] = 0;
    if (result_keys_refused(keys, j->scen->args)) { /* the kernel's keys, the scenario's, non-finite values */
        acquire(&j->lock);
        j->result_refused = 1;
        release(&j->lock);
        return SL_EINVAL;
    }
    acquire(&j->lock);
    j->result_set = 1;
    j->result_ok = ARG(p, 0) != 0;
    memcpy(j->result_keys, keys, n + 1);
    release(&j->lock);
    return 0;
}

static long (*const syscalls[SYS_NSYSCALLS])(struct proc *) = {
    [SYS_exit] = sys_exit,
    [SYS_write] = sys_write,
    [SYS_time] = sys_time,
    [SYS_self] = sys_self,
    [SYS_hart] = sys_hart,
    [SYS_yield] = sys_yield,
    [SYS_futex_wait] = sys_futex_wait,
    [SYS_futex_wake] = sys_futex_wake,
    [SYS_proc_create] = sys_proc_create,
    [SYS_topology] = sys_topology,
    [SYS_alloc] = sys_alloc,
    [SYS_result] = sys_result,
    [SYS_relax] = sys_relax,
};

void syscall(struct proc *p)
{
    uint64_t nr = p->tf.x[REG_A7];
    long r = SL_ENOSYS;
    if (nr < SYS_NSYSCALLS && syscalls[nr])
        r = syscalls[nr](p);
    p->tf.x[REG_A0] = (uint64_t)r;
}
