/*
 * intr.c - timers and IPIs through Sstc and ACLINT SSWI where they exist, through the SBI otherwise.
 *
 * Why. Under the SBI every quantum tick costs two M-mode traps (the ecall that arms the timer, and the
 * M-mode timer interrupt OpenSBI turns into an S-mode one), and every IPI two more (the sender's ecall, and
 * the target's M-mode software interrupt). Gang scheduling switches a slot with one IPI per hart, and a
 * futex wake of a halted hart starts with one, so these traps sit on the paths the policies are judged by.
 *
 * Sstc (RISC-V privileged spec 1.12 ext. "Sstc"): stimecmp is an S-mode CSR; STIP is pending while
 * time >= stimecmp, so writing a later value both arms the timer and clears the interrupt. The firmware
 * must have set menvcfg.STCE, else the CSR access is an illegal instruction: each hart probes it
 * (intr_probe_stimecmp, intr_probe.S, catches that trap) before we trust the device tree.
 * ACLINT SSWI (RISC-V ACLINT spec, "SSWI"): one 32-bit setssip register per hart; writing 1 sets that hart's
 * SSIP, which its handler clears in sip as it does an SBI-delivered one.
 *
 * Invariant: the paths are chosen before any hart arms a timer or sends an IPI (boot_main calls
 * intr_choose before releasing the harts) and never change after, so they are read without a lock.
 */
#include "kernel.h"
#include "cpu.h"
#include "intr.h"
#include "vclock.h"

#define CSR_STIMECMP 0x14d

long intr_probe_stimecmp(void); /* intr_probe.S: 0 if this hart can read stimecmp, -1 if that trapped */

static int timer_direct, ipi_direct;
static int stimecmp_ok[SL_MAX_HARTS]; /* per hart index: the probe succeeded */

void intr_hart_init(void)
{
    struct cpu *c = mycpu();
    stimecmp_ok[c->id] = plat.sstc && intr_probe_stimecmp() == 0;
}

int intr_force_sbi; /* irq=sbi (intr_configure) */

void intr_choose(void)
{
    int t = plat.sstc && !intr_force_sbi, s = !intr_force_sbi;
    for (int i = 0; i < ncpus; i++) {
        t &= stimecmp_ok[i];
        s &= plat.sswi_reg[i] != 0;
    }
    timer_direct = t;
    ipi_direct = s;
}

void intr_set_timer(uint64_t when)
{
    if (timer_direct)
        asm volatile("csrw %0, %1" ::"i"(CSR_STIMECMP), "r"(when));
    else
        sbi_set_timer(when);
}

static void sbi_ipi(uint64_t mask)
{
    /* SBI takes firmware hart ids as (mask, base): one call per run of targets within 64 ids of the
       run's first (hart indices are in ascending id order, so usually one call covers all). */
    unsigned long hmask = 0, base = 0;
    for (int i = 0; i < ncpus; i++) {
        if (!(mask & (1UL << i)))
            continue;
        if (hmask && cpus[i].hartid - base >= 64) {
            sbi_send_ipi(hmask, base);
            hmask = 0;
        }
        if (!hmask)
            base = cpus[i].hartid;
        hmask |= 1UL << (cpus[i].hartid - base);
    }
    if (hmask)
        sbi_send_ipi(hmask, base);
}

/* Deterministic mode marks each target before its IPI: a hand-over can then tell the SSIP it set itself from
   a real one (vclock.h "The hand-over"). */
void intr_send_ipi(uint64_t mask)
{
    if (clock_virtual)
        for (int i = 0; i < ncpus; i++)
            if (mask & (1UL << i))
                __atomic_store_n(&cpus[i].ipi_sent, 1, __ATOMIC_SEQ_CST);
    if (!ipi_direct) {
        sbi_ipi(mask);
        return;
    }
    /* what the caller stored before asking for the IPI is visible before the target can take it */
    asm volatile("fence rw, o" ::: "memory");
    for (int i = 0; i < ncpus; i++)
        if (mask & (1UL << i))
            *(volatile uint32_t *)plat.sswi_reg[i] = 1;
}

const char *intr_timer_path(void) { return timer_direct ? "sstc" : "sbi"; }
const char *intr_ipi_path(void) { return ipi_direct ? "sswi" : "sbi"; }
