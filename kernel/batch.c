/*
 * batch.c - a batch of scenarios in one deterministic boot.
 *
 * Why. Under -icount every instruction any hart executes is host time on one host thread, and a short
 * deterministic boot spends a large part of its host time outside its scenario: QEMU's start and exit, the
 * kernel's boot, and translating the kernel's code, which QEMU keeps across a restart of the guest but not
 * across processes. A campaign of thousands of boots (`schedlab explore`) pays that once per batch.
 *
 * The model. The bootargs hold scenarios separated by the token "then" (BATCH_WORD), each a whole scenario
 * with clock=virtual (launcher.c refuses a batch without it). The boot runs the first. Where a single boot
 * would leave QEMU with its verdict (console_exit), a batch prints "END scenario=<k> status=<s>" (the
 * scenario's own exit status) and, unless that was the last scenario or the status says the run did not end
 * with a verdict of its jobs (2 bad scenario, 3 PANIC, 4 watchdog: the kernel's state is not to be trusted
 * for another start), restarts:
 *   1. The hart that printed END sets harts_recalled (cpu.h) and sends every other hart an IPI.
 *   2. Each hart meets the recall at its next look at its IPIs (sched_soft_interrupt) or spin pause
 *      (vclock_relax), wherever it was - nothing it was doing matters any more, and it holds no lock the
 *      restart needs. The boot hart restarts; every other stops in the firmware (SBI HSM hart_stop), with no
 *      timer or IPI of its own left pending, as it was before the first boot started it.
 *   3. The restart (the boot hart, on its hart_stacks slot, which nothing else uses): waits until every
 *      other hart is STOPPED, turns paging off, zeroes every page kalloc ever handed out (kalloc_scrub),
 *      restores .data from the copy the first scenario took and clears .bss, and enters boot_main again,
 *      which boots the next scenario by the first one's path: the device tree parsed, memory and the
 *      scenario set up, the other harts started with hart_start.
 * QEMU exits with the largest status of the batch's scenarios (console_exit).
 *
 * What a batch is not: a scenario in it does not run as it would in a boot of its own. QEMU's virtual clock
 * goes on from where the previous scenario left it (the time CSR is not reset, and where a hart's turn ends
 * depends on it), and the pages of the kernel stacks and the firmware's keep what was written to them (both
 * written before they are read). What it is: deterministic as a whole - the same bootargs give the same
 * console byte for byte - and a prefix runs alike: a scenario's boot reads the bootargs up to the "then"
 * that ends it and no further (batch_scenario_at), and only its end looks past that "then" for another
 * (batch_has_next), so "S1 then ... then Sk then" - a batch may end with "then" - replays scenario k of any
 * longer batch exactly.
 */
#ifdef SCHEDLAB_HOST
#include <string.h>
#else
#include "kernel.h"
#include "cpu.h"
#include "intr.h"
#include "vclock.h"
#include "sbi.h"
#endif /* SCHEDLAB_HOST */
#include "batch.h"

/* The bytes that end a token. A table, not a chain of tests, so that a token ends in as many instructions at
   the end of the bootargs as before a space: a scenario ending a batch's prefix ("... Sk then") boots as it
   does inside the longer batch, to the instruction (deterministic boots are that sensitive). */
static const uint8_t ends_token[256] = { [0] = 1, [' '] = 1, ['\t'] = 1, ['\n'] = 1 };

int batch_scenario_at(const char *args, size_t at, char *buf, size_t len, size_t *next)
{
    size_t n = 0, wl = sizeof BATCH_WORD - 1;
    const char *p = args + at;
    *next = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (!ends_token[(uint8_t)*e])
            e++;
        if ((size_t)(e - p) == wl && !memcmp(p, BATCH_WORD, wl)) {
            *next = (size_t)(e - args);
            break;
        }
        if (n + (n > 0) + (size_t)(e - p) + 1 > len)
            return -1;
        if (n > 0)
            buf[n++] = ' ';
        memcpy(buf + n, p, (size_t)(e - p));
        n += (size_t)(e - p);
        p = e;
    }
    buf[n] = 0;
    return n == 0 && (at > 0 || *next) ? -2 : 0;
}

int batch_has_next(const char *args, size_t next)
{
    if (!next)
        return 0;
    for (const char *q = args + next; *q; q++)
        if (*q != ' ' && *q != '\t' && *q != '\n')
            return 1;
    return 0;
}

#ifndef SCHEDLAB_HOST

extern char data_start[], data_end[], data_copy[], bss_start[], bss_end[];
extern char hart_stacks[][KSTACK_SIZE];
void boot_main(uint64_t hartid, const void *dtb);

/* This boot's place in the batch: set by batch_reset after it cleared .bss (zero: the first scenario). */
static size_t batch_at;        /* offset of this scenario in the bootargs */
static size_t batch_next;      /* offset of the next one, 0 if none (batch_scenario) */
static int batch_index;        /* 0 for the first scenario */
static int batch_worst;        /* the largest exit status of the scenarios before this one */
static int batched;            /* the bootargs hold a "then" */
static const char *batch_bootargs;
static char batch_args[BATCH_ARGS_MAX];
static int boot_index;
static uint64_t boot_hartid;
static const void *boot_dtb;

const char *batch_scenario(const char *bootargs, char *err, size_t errlen)
{
    int r = batch_scenario_at(bootargs, batch_at, batch_args, sizeof batch_args, &batch_next);
    batched = batch_index > 0 || batch_next != 0;
    batch_bootargs = bootargs;
    if (!batched)
        return bootargs;
    if (r == -1 || r == -2) {
        snprintf(err, errlen, r == -1 ? "scenario %d of the batch is longer than %d bytes"
                                      : "scenario %d of the batch is empty: \"" BATCH_WORD "\" goes between two scenarios",
                 batch_index + 1, BATCH_ARGS_MAX - 1);
        return 0;
    }
    if (batch_index == 0) /* nothing has written .data yet (batch.h) */
        memcpy(data_copy, data_start, (size_t)(data_end - data_start));
    return batch_args;
}

void batch_set_boot(int index, uint64_t hartid, const void *dtb)
{
    boot_index = index;
    boot_hartid = hartid;
    boot_dtb = dtb;
}

/* The restart's last step, on the boot hart's hart_stacks slot: everything the kernel's image holds is as
   the ELF loaded it again but for this batch's place, which came here in registers. */
void __attribute__((noreturn)) batch_reset(uint64_t hartid, const void *dtb, size_t at, int worst, int index);
void __attribute__((noreturn)) batch_reset(uint64_t hartid, const void *dtb, size_t at, int worst, int index)
{
    memcpy(data_start, data_copy, (size_t)(data_end - data_start)); /* 8-aligned both (the linker script) */
    for (uint64_t *q = (uint64_t *)bss_start; q < (uint64_t *)bss_end; q += 4) /* megabytes: 32 bytes a round */
        q[0] = q[1] = q[2] = q[3] = 0;
    batch_at = at;
    batch_worst = worst;
    batch_index = index;
    asm volatile("mv tp, zero"); /* mycpu() is NULL until boot_main numbers the harts, as at the first boot */
    boot_main(hartid, dtb);
    for (;;)
        wfi();
}

/* The boot hart, recalled (or the hart that ended the scenario, if it is the boot hart): wait for every other
   hart to stop, scrub memory, and reset onto a stack .bss does not hold. */
static void __attribute__((noreturn)) restart(void)
{
    for (int i = 0; i < ncpus; i++)
        while (i != boot_index && sbi_hart_status(cpus[i].hartid) != 1 /* STOPPED */)
            vclock_handover(0);
    csr_write(satp, 0);
    sfence_vma();
    kalloc_scrub();
    uint64_t hartid = boot_hartid, at = batch_next, worst = (uint64_t)batch_worst, index = (uint64_t)batch_index + 1;
    const void *dtb = boot_dtb;
    char *top = hart_stacks[boot_index] + KSTACK_SIZE;
    register uint64_t a0 asm("a0") = hartid, a2 asm("a2") = at, a3 asm("a3") = worst, a4 asm("a4") = index;
    register const void *a1 asm("a1") = dtb;
    asm volatile("mv sp, %0\n\tj batch_reset" ::"r"(top), "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(a4));
    __builtin_unreachable();
}

/* harts_recall's hook (cpu.h): this hart leaves the scenario - no timer, no interrupt enabled or pending,
   the FPU off, as the firmware first started it. */
static void __attribute__((noreturn)) recalled(void)
{
    intr_set_timer(~0UL);
    csr_write(sie, 0);
    csr_clear(sip, SIP_SSIP);
    csr_clear(sstatus, SSTATUS_FS);
    if (mycpu()->id == boot_index)
        restart();
    sbi_hart_stop();
}

int batch_leaving(int status, void (*print)(const char *line))
{
    if (!batched)
        return status;
    char line[64];
    snprintf(line, sizeof line, "END scenario=%d status=%d\n", batch_index + 1, status);
    print(line);
    int worst = MAX(batch_worst, status);
    if (!batch_has_next(batch_bootargs, batch_next) || status > 1)
        return worst;
    batch_worst = worst;
    recall_hook = recalled;
    __atomic_store_n(&harts_recalled, 1, __ATOMIC_SEQ_CST);
    uint64_t others = 0;
    for (int i = 0; i < ncpus; i++)
        if (i != mycpu()->id)
            others |= 1UL << i;
    if (others)
        intr_send_ipi(others);
    recalled();
}
#endif /* SCHEDLAB_HOST */
