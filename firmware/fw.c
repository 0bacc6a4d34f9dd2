/*
 * fw.c - the firmware of deterministic boots: what this kernel needs of an SBI implementation on QEMU virt,
 * in place of OpenSBI, and nothing more.
 *
 * Why. In deterministic mode (docs/guide/deterministic.md) every instruction any hart executes is host time
 * on one host thread. OpenSBI's boot walks the device tree again for each of its drivers on every hart, and
 * those walks were most of a short boot's instructions (docs/notes/explorer.md). This firmware parses the
 * tree once, with the kernel's own parser (kernel/fdt.c). Timed boots keep OpenSBI: they run the firmware
 * users have.
 *
 * The model. Every hart enters _start (entry.S) at reset, in M-mode, with a0 = its hart id, a1 = the device
 * tree and a2 = QEMU's struct fw_dynamic_info (where the kernel starts). The first hart to claim the boot
 * parses the tree, checks that the machine has what this firmware drives (each hart's M-mode software
 * interrupt register; Sstc, or each hart's mtimecmp), and enters the kernel in S-mode (a0 = hart id, a1 = tree). Every other hart
 * parks in M-mode: wfi with the M-mode software interrupt enabled, until an SBI HSM hart_start gives it an
 * address, where it enters S-mode (a0 = hart id, a1 = opaque), as the SBI specifies.
 *
 * What S-mode may call (SBI v1.0; any other call returns SBI_ERR_NOT_SUPPORTED):
 *   base   spec version, implementation id and version, probe_extension, mvendorid/marchid/mimpid
 *   TIME   set_timer: writes stimecmp where the harts have Sstc (the firmware enables it); otherwise the
 *          hart's mtimecmp, and the M-mode timer interrupt it raises sets STIP
 *   IPI    send_ipi: raises the targets' M-mode software interrupts; each target's handler sets its SSIP
 *   HSM    hart_start, hart_stop, hart_get_status
 *   SRST   system_reset: QEMU's test device ends the run
 * Every exception and S-mode interrupt is delegated to S-mode (medeleg, mideleg), where OpenSBI delegates or
 * redirects them: the kernel sees the same traps under either firmware.
 *
 * Invariants. A hart's state goes STOPPED -> CLAIMED (a starter won it) -> START_PENDING (its address and
 * opaque written, release) -> STARTED (the hart itself, on leaving for S-mode) -> STOPPED again (hart_stop, the
 * hart itself, parked with its M-mode state as at reset: between the scenarios of a batch, kernel/batch.c). A
 * parked hart reads the address only after it sees START_PENDING (acquire), and the starter raises the hart's
 * software interrupt only after that store, so no start is lost: wfi returns at once while the interrupt is
 * pending. The tree is parsed and msip[] filled before any hart enters S-mode, so both are read without a lock
 * after that.
 */
#include "kernel.h"
#include "fdt.h"
#include "fw.h"

#define CSR_STIMECMP 0x14d
#define MSTATUS_MPP  (3UL << 11)
#define MSTATUS_MPP_S (1UL << 11)
#define MIE_MSIE     (1UL << 3)
#define MIE_MTIE     (1UL << 7)
#define MIP_SSIP     (1UL << 1)
#define MIP_STIP     (1UL << 5)
#define MCAUSE_INTR  (1UL << 63)
#define IRQ_M_SOFT   3
#define IRQ_M_TIMER  7
#define EXC_ECALL_S  9
#define MENVCFG_STCE (1UL << 63)
#define PMP_NAPOT_RWX 0x1f

/* traps S-mode takes itself: misaligned fetch, fetch access, illegal instruction, breakpoint, misaligned
   load, load access, misaligned store/AMO, store/AMO access, ecall from U-mode, fetch, load and store/AMO
   page faults */
#define DELEGATED_EXC 0xb1ffUL
#define DELEGATED_IRQ 0x222UL /* SSIP, STIP, SEIP */

#define UART_BASE   0x10000000UL /* the ns16550 QEMU virt has (kernel/console.c) */
#define SIFIVE_TEST 0x100000UL   /* QEMU's test device (kernel/platform.c) */

#define FW_DYNAMIC_MAGIC 0x4942534fUL /* "OSBI": QEMU's loader passes where to go next in this struct */
#define MODE_S           1

struct fw_dynamic_info {
    unsigned long magic, version, next_addr, next_mode, options, boot_hart;
};

struct fw_regs {
    uint64_t x[32]; /* x[0] unused, x[2] the interrupted sp; entry.S's layout */
};
_Static_assert(sizeof(struct fw_regs) == FW_REGS_SIZE, "entry.S saves struct fw_regs");

enum { SBI_SUCCESS = 0, SBI_ERR_NOT_SUPPORTED = -2, SBI_ERR_INVALID_PARAM = -3, SBI_ERR_ALREADY_AVAILABLE = -6 };
enum { EXT_BASE = 0x10, EXT_TIME = 0x54494D45, EXT_IPI = 0x735049, EXT_HSM = 0x48534D, EXT_SRST = 0x53525354 };
/* hart states; SBI's hart_get_status numbers are STARTED 0, STOPPED 1, START_PENDING 2 */
enum { STOPPED = 0, CLAIMED, START_PENDING, STARTED };

#define FW_IMPL_ID 0x73636c62UL /* "sclb": not an SBI-registered implementation id */

char fw_stacks[FW_MAX_HARTS][FW_STACK] __attribute__((aligned(16)));

static int boot_claimed;
static struct platform plat_fw;
static volatile uint32_t *msip[FW_MAX_HARTS]; /* by hart id: its M-mode software interrupt register */
static volatile uint64_t *mtimecmp[FW_MAX_HARTS]; /* by hart id: its timer compare (used without Sstc) */
static int sstc;                                  /* every hart has Sstc: set_timer writes stimecmp */
static int state[FW_MAX_HARTS];               /* by hart id; zero (STOPPED) at load, entry.S's .bss */
static uint64_t start_addr[FW_MAX_HARTS], start_opaque[FW_MAX_HARTS];

static void uart_puts(const char *s)
{
    volatile uint8_t *uart = (volatile uint8_t *)UART_BASE;
    for (; *s; s++) {
        while (!(uart[5] & 0x20)) /* LSR: transmit holding register empty */
            ;
        uart[0] = (uint8_t)*s;
    }
}

/* A machine this firmware cannot run, or a fault in it: say so on the console and end the run (exit 2,
   as the kernel's own boot errors). */
static void __attribute__((noreturn, format(printf, 1, 2))) fw_fail(const char *fmt, ...)
{
    char line[200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    n = n < 0 ? 0 : n > (int)sizeof line - 2 ? (int)sizeof line - 2 : n;
    line[n] = '\n';
    line[n + 1] = 0;
    uart_puts(line);
    *(volatile uint32_t *)SIFIVE_TEST = (2U << 16) | 0x3333;
    for (;;)
        wfi();
}

/* This hart's M-mode state for a life in S-mode: all memory open to S and U (one NAPOT PMP entry), traps
   delegated, the counters and Sstc open to S-mode, the M-mode software interrupt enabled (SBI IPIs). */
static void setup_hart(void)
{
    csr_write(pmpaddr0, ~0UL);
    csr_write(pmpcfg0, PMP_NAPOT_RWX);
    csr_write(medeleg, DELEGATED_EXC);
    csr_write(mideleg, DELEGATED_IRQ);
    csr_write(mcounteren, 7); /* cycle, time, instret */
    csr_set(0x30a, MENVCFG_STCE); /* menvcfg; a hart without Sstc keeps the bit 0 (WARL) */
    csr_write(mie, MIE_MSIE);
}

static void __attribute__((noreturn)) enter_smode(uint64_t addr, uint64_t a0, uint64_t a1)
{
    uint64_t s = csr_read(mstatus);
    csr_write(mstatus, (s & ~MSTATUS_MPP) | MSTATUS_MPP_S); /* MPIE, MIE stay 0: M-mode runs masked */
    csr_write(satp, 0);
    csr_write(mepc, addr);
    register uint64_t r0 asm("a0") = a0, r1 asm("a1") = a1;
    asm volatile("mret" ::"r"(r0), "r"(r1));
    __builtin_unreachable();
}

/* The boot hart: parse the tree and check the machine, before any hart enters S-mode. */
static void boot_hart(uint64_t hartid, const void *dtb, const struct fw_dynamic_info *info)
{
    char err[120];
    if (!info || info->magic != FW_DYNAMIC_MAGIC || info->next_mode != MODE_S)
        fw_fail("ERROR firmware: QEMU's loader gave no S-mode kernel to start (fw_dynamic_info at %p)", info);
    if (fdt_parse(dtb, &plat_fw, err, sizeof err))
        fw_fail("ERROR firmware: %s", err);
    for (int i = 0; i < plat_fw.nharts; i++) {
        if (plat_fw.hartid[i] >= FW_MAX_HARTS || !plat_fw.mswi_reg[i])
            fw_fail("ERROR firmware: hart id %lu has %s; deterministic boots need QEMU virt's harts 0..%d, "
                    "each with an ACLINT MSWI or CLINT register", plat_fw.hartid[i],
                    plat_fw.hartid[i] >= FW_MAX_HARTS ? "no stack here" : "no M-mode software interrupt",
                    FW_MAX_HARTS - 1);
        if (!plat_fw.sstc && !plat_fw.mtimecmp_reg[i])
            fw_fail("ERROR firmware: hart id %lu has neither Sstc nor an ACLINT MTIMER or CLINT timer",
                    plat_fw.hartid[i]);
        msip[plat_fw.hartid[i]] = (volatile uint32_t *)plat_fw.mswi_reg[i];
        mtimecmp[plat_fw.hartid[i]] = (volatile uint64_t *)plat_fw.mtimecmp_reg[i];
    }
    sstc = plat_fw.sstc;
    __atomic_store_n(&state[hartid], STARTED, __ATOMIC_RELEASE);
    enter_smode(info->next_addr, hartid, (uint64_t)(uintptr_t)dtb);
}

/* Any other hart: park until hart_start (see the invariants above). */
static void park(uint64_t hartid)
{
    while (__atomic_load_n(&state[hartid], __ATOMIC_ACQUIRE) != START_PENDING)
        wfi();
    *msip[hartid] = 0; /* the start's interrupt: taken here, not in S-mode */
    __atomic_store_n(&state[hartid], STARTED, __ATOMIC_RELEASE);
    enter_smode(start_addr[hartid], hartid, start_opaque[hartid]);
}

void __attribute__((noreturn)) fw_main(uint64_t hartid, const void *dtb, const struct fw_dynamic_info *info)
{
    setup_hart();
    if (__atomic_exchange_n(&boot_claimed, 1, __ATOMIC_ACQ_REL) == 0)
        boot_hart(hartid, dtb, info);
    park(hartid);
    __builtin_unreachable();
}

static int known(uint64_t hartid) { return hartid < FW_MAX_HARTS && msip[hartid]; }

static long hart_start(uint64_t hartid, uint64_t addr, uint64_t opaque)
{
    int stopped = STOPPED;
    if (!known(hartid))
        return SBI_ERR_INVALID_PARAM;
    if (!__atomic_compare_exchange_n(&state[hartid], &stopped, CLAIMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return SBI_ERR_ALREADY_AVAILABLE;
    start_addr[hartid] = addr;
    start_opaque[hartid] = opaque;
    __atomic_store_n(&state[hartid], START_PENDING, __ATOMIC_RELEASE);
    *msip[hartid] = 1;
    return SBI_SUCCESS;
}

/* HSM hart_stop: the calling hart leaves S-mode for good and parks as at reset - no software interrupt or timer
   of its own pending or armed, a fresh M-mode stack (mscratch, which the trap vector's epilogue would have
   restored, is reset: this frame is never returned to) - until a hart_start. */
static void __attribute__((noreturn)) hart_stop(uint64_t hartid)
{
    *msip[hartid] = 0;
    if (sstc)
        asm volatile("csrw %0, %1" ::"i"(CSR_STIMECMP), "r"(~0UL));
    else
        *mtimecmp[hartid] = ~0UL;
    csr_write(mie, MIE_MSIE);
    csr_clear(mip, MIP_SSIP | MIP_STIP);
    csr_write(mscratch, (uint64_t)(uintptr_t)(fw_stacks[hartid] + FW_STACK));
    __atomic_store_n(&state[hartid], STOPPED, __ATOMIC_RELEASE);
    park(hartid);
    __builtin_unreachable();
}

static long hart_status(uint64_t hartid, long *value)
{
    static const long sbi_state[] = { [STOPPED] = 1, [CLAIMED] = 2, [START_PENDING] = 2, [STARTED] = 0 };
    if (!known(hartid))
        return SBI_ERR_INVALID_PARAM;
    *value = sbi_state[__atomic_load_n(&state[hartid], __ATOMIC_ACQUIRE)];
    return SBI_SUCCESS;
}

/* SBI's hart mask: bit i is hart id base + i; base -1 means every hart. */
static long send_ipi(uint64_t mask, uint64_t base)
{
    for (uint64_t id = 0; id < FW_MAX_HARTS; id++) {
        int wanted = base == ~0UL ? known(id) : id >= base && id - base < 64 && (mask >> (id - base) & 1);
        if (wanted && !known(id))
            return SBI_ERR_INVALID_PARAM;
        if (wanted)
            *msip[id] = 1;
    }
    return SBI_SUCCESS;
}

static long system_reset(uint64_t type, uint64_t reason)
{
    volatile uint32_t *test = (volatile uint32_t *)SIFIVE_TEST;
    if (type == 0)
        *test = reason == 0 ? 0x5555 : (1U << 16) | 0x3333; /* shutdown: pass, or a system failure */
    else if (type == 1 || type == 2)
        *test = 0x7777; /* cold or warm reboot (QEMU -no-reboot ends the run) */
    return SBI_ERR_INVALID_PARAM;
}

/* With Sstc, stimecmp (writing it also clears a pending STIP); without, this hart's mtimecmp: STIP is
   cleared now and set by the M-mode timer interrupt (fw_trap). */
static void set_timer(uint64_t when)
{
    uint64_t hartid = csr_read(mhartid);
    if (sstc) {
        asm volatile("csrw %0, %1" ::"i"(CSR_STIMECMP), "r"(when));
        return;
    }
    *mtimecmp[hartid] = when;
    csr_clear(mip, MIP_STIP);
    csr_set(mie, MIE_MTIE);
}

static int probe(uint64_t ext)
{
    return ext == EXT_BASE || ext == EXT_TIME || ext == EXT_IPI || ext == EXT_HSM || ext == EXT_SRST;
}

/* One SBI call: a7 extension, a6 function, a0.. arguments; the error to a0, the value to a1. */
static void sbi_dispatch(struct fw_regs *r)
{
    uint64_t ext = r->x[17], fid = r->x[16], a0 = r->x[10], a1 = r->x[11], a2 = r->x[12];
    long err = SBI_ERR_NOT_SUPPORTED, value = 0;
    if (ext == EXT_BASE) {
        err = SBI_SUCCESS;
        switch (fid) {
        case 0: value = 1L << 24; break; /* SBI v1.0 */
        case 1: value = (long)FW_IMPL_ID; break;
        case 2: value = 1; break;
        case 3: value = probe(a0); break;
        case 4: value = (long)csr_read(mvendorid); break;
        case 5: value = (long)csr_read(marchid); break;
        case 6: value = (long)csr_read(mimpid); break;
        default: err = SBI_ERR_NOT_SUPPORTED;
        }
    } else if (ext == EXT_TIME && fid == 0) {
        set_timer(a0);
        err = SBI_SUCCESS;
    } else if (ext == EXT_IPI && fid == 0) {
        err = send_ipi(a0, a1);
    } else if (ext == EXT_HSM && fid == 0) {
        err = hart_start(a0, a1, a2);
    } else if (ext == EXT_HSM && fid == 1) {
        hart_stop(csr_read(mhartid));
    } else if (ext == EXT_HSM && fid == 2) {
        err = hart_status(a0, &value);
    } else if (ext == EXT_SRST && fid == 0) {
        err = system_reset(a0, a1);
    }
    r->x[10] = (uint64_t)err;
    r->x[11] = (uint64_t)value;
}

/* entry.S's trap vector: an SBI call, an IPI for S-mode, or a fault of the firmware's own. */
void fw_trap(struct fw_regs *r)
{
    uint64_t cause = csr_read(mcause), hartid = csr_read(mhartid);
    if (cause == (MCAUSE_INTR | IRQ_M_SOFT) && known(hartid)) {
        *msip[hartid] = 0;
        csr_set(mip, MIP_SSIP);
    } else if (cause == (MCAUSE_INTR | IRQ_M_TIMER)) {
        csr_clear(mie, MIE_MTIE); /* until the next set_timer */
        csr_set(mip, MIP_STIP);
    } else if (cause == EXC_ECALL_S) {
        sbi_dispatch(r);
        csr_write(mepc, csr_read(mepc) + 4);
    } else {
        fw_fail("ERROR firmware: unexpected trap on hart %lu: mcause %#lx, mepc %#lx, mtval %#lx", hartid, cause,
                csr_read(mepc), csr_read(mtval));
    }
}
