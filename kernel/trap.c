/*
 * trap.c - what happens when a process traps into the kernel, and kernel faults.
 *
 * usertrap() is the only way into the kernel from U-mode: a syscall (ecall), an interrupt (timer or IPI:
 * S-mode interrupts are always enabled while the hart is in U-mode), or an exception. An exception kills
 * the process's job - never the kernel - and the job's RESULT says why. Any trap taken in S-mode is a
 * kernel bug: kernel_fault() prints PANIC and exits QEMU with a non-zero status (panic(), the kernel's
 * own check failing, is in panic.c, a leaf every layer may call).
 */
#include "sched/core.h"

extern char trap_vector[];
void user_return(struct trapframe *tf) __attribute__((noreturn));

void trap_init_hart(void)
{
    csr_write(stvec, (uint64_t)trap_vector);
    csr_write(sscratch, 0);
    csr_set(scounteren, 7); /* U-mode may read cycle, time, instret */
}

const char *exception_name(uint64_t cause)
{
    static const char *const names[] = {
        [EXC_INST_MISALIGNED] = "instruction-misaligned",
        [EXC_INST_ACCESS] = "instruction-access-fault",
        [EXC_ILLEGAL] = "illegal-instruction",
        [EXC_BREAKPOINT] = "breakpoint",
        [EXC_LOAD_MISALIGNED] = "load-misaligned",
        [EXC_LOAD_ACCESS] = "load-access-fault",
        [EXC_STORE_MISALIGNED] = "store-misaligned",
        [EXC_STORE_ACCESS] = "store-access-fault",
        [EXC_ECALL_U] = "ecall",
        [EXC_INST_PAGE_FAULT] = "instruction-page-fault",
        [EXC_LOAD_PAGE_FAULT] = "load-page-fault",
        [EXC_STORE_PAGE_FAULT] = "store-page-fault",
    };
    if (cause < ARRAY_SIZE(names) && names[cause])
        return names[cause];
    return "exception";
}

/* A process raised an exception: kill its job and end the process. One ERROR line per job: the fault
   that killed it is the one reported (in the line and in RESULT's reason); faults of its other processes,
   at the same moment on other harts or before they notice the kill, end them silently. */
static void user_fault(struct proc *p, uint64_t cause, uint64_t stval)
{
    char reason[160];
    struct job *j = p->job;
    snprintf(reason, sizeof reason, "reason=%s addr=0x%lx pc=0x%lx proc=%d", exception_name(cause), stval, p->tf.epc,
             p->idx);
    if (job_kill(j, reason)) /* one ERROR per job, however many of its processes fault together */
        kprintf("ERROR job %d (%s) killed: %s at address 0x%lx, pc 0x%lx, in process %d%s\n", j->id, j->app->name,
                exception_name(cause), stval, p->tf.epc, p->idx, stack_guard_of(stval) >= 0 ? " (stack overflow)" : "");
    proc_exit(p, -1);
}

void proc_return_to_user(struct proc *p)
{
    if (p->killed)
        proc_exit(p, -1);
    csr_clear(sstatus, SSTATUS_SPP); /* sret to U-mode */
    p->tf.kernel_tp = (uint64_t)mycpu();
    user_return(&p->tf);
}

void usertrap(void *frame)
{
    struct trapframe *tf = frame;
    struct proc *p = (struct proc *)tf; /* tf is the first member */
    struct cpu *c = mycpu();
    uint64_t cause = csr_read(scause);

    if (cause & SCAUSE_INTR) {
        uint64_t irq = cause & ~SCAUSE_INTR;
        if (irq == IRQ_S_TIMER) {
            sched_timer_interrupt(c);
        } else if (irq == IRQ_S_SOFT) {
            sched_soft_interrupt(c);
            /* The trap takes an IPI before the timer. A hart whose SSIP is set again before each return to
               U-mode (IPIs arriving faster than it returns, or a deterministic-mode hand-over on the handler's
               path that an IPI came during: vclock.h) would trap for the IPI every time and never for its
               timer - no tick, no watchdog. So a timer interrupt pending behind the IPI is taken now too, as
               the idle loop does. */
            if (csr_read(sip) & csr_read(sie) & SIP_STIP)
                sched_timer_interrupt(c);
        }
    } else if (cause == EXC_ECALL_U) {
        tf->epc += 4;
        syscall(p);
    } else {
        user_fault(p, cause, csr_read(stval));
    }
    if (p->killed)
        proc_exit(p, -1);
    sched_on_return(p);
    proc_return_to_user(p);
}

void kernel_fault(uint64_t scause, uint64_t sepc, uint64_t stval, uint64_t sp)
{
    struct cpu *c = mycpu();
    int hart = (c >= cpus && c < cpus + SL_MAX_HARTS) ? c->id : -1;
    kprintf("PANIC %d %s 0x%lx 0x%lx scause=0x%lx sp=0x%lx\n", hart,
            scause & SCAUSE_INTR ? "interrupt" : exception_name(scause), sepc, stval, scause, sp);
    platform_exit(3);
}
