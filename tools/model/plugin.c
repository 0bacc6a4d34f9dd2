/*
 * plugin.c - the machine model as a QEMU TCG plugin (tools/model/README.md is the contract).
 *
 * Model. QEMU runs each hart (vCPU) on its own host thread. At translation time we ask for a callback on every
 * guest data access; the callback finds the access's physical address, runs it through the cache model
 * (cache.c: private L1/L2, a shared LLC per node, a coherence directory, NUMA), and owes the profile's stall
 * cycles for it. The debt is paid by busy-waiting on the same host thread, so the guest's time CSR - which
 * follows the host clock - sees it, and every RESULT the kernel prints includes it.
 *
 * A cycle is this emulator's own time per instruction: the kernel runs model_calib_loop (kernel/calib_loops.S)
 * twice before its other harts start, and we time the stretch between the loop's first and last instruction,
 * whose addresses we are given, keeping the faster run. Until then nothing is charged (the boot is not timed).
 *
 * Attribution. We cannot read guest registers or memory (API v1). The kernel stores a byte to model_marks[j]
 * when it dispatches a process of job j on a hart and to model_marks[0] when the process leaves (kernel/model.c);
 * we see the address of that byte store and which vCPU made it, so each vCPU knows which job its accesses belong
 * to (job 0: the kernel outside any process, the boot, idle harts).
 *
 * Cost. The hot path is the memory callback. The physical address comes from a small per-vCPU table from virtual
 * page to physical page (vtlb), refilled from QEMU's TLB (qemu_plugin_get_hwaddr, ~5x dearer) on a miss and
 * flushed when that vCPU writes satp or executes sfence.vma - instructions we recognise when they are translated.
 * A vCPU's state is its own: no atomics on it. The firmware (below the kernel's load address) is not modelled.
 *
 * Physical addresses. QEMU 7.2's qemu_plugin_hwaddr_phys_addr() returns the offset within the RAM block plus
 * the block's own offsets, which is the guest physical address only while RAM is one region at its place: with
 * -numa every node's RAM is a region of its own inside the RAM container and the value is off by a constant per
 * node. We learn each constant from the kernel's own accesses: the kernel maps RAM at its physical address
 * (VA = PA, kernel/vm.c) and user addresses are all below RAM (SL_STACK_TOP), so an access at a virtual address
 * inside RAM tells the true address of what QEMU reported. The kernel writes every page before a job gets it
 * (kalloc the first time it hands a page out, zeroing on allocation), so every page's block is known before a
 * job touches it.
 *
 * What a miss costs. Its profile cycles less the host time its lookup took beyond an L1 hit's (the fast path the
 * calibration loop's accesses take, so already inside a cycle): the walk through the levels and the directory
 * is time the guest's clock sees too. selfcost.c measures each path at start-up.
 *
 * Pay points. The debt is paid once it exceeds PAY_PS, and always before the vCPU reads the time CSR or waits
 * for an interrupt (wfi), so no reading of the clock misses a stall that came before it.
 *
 * Paced (pace=R, pace.h explains the model): a cycle is 1/R instead of the measured one, so nothing is
 * calibrated and nothing is busy-waited: a miss's cycles join the hart's model time, and the hart sleeps while
 * that runs ahead of the wall clock. Instructions are counted per translation block: a callback per block on API
 * version 1, and on version 2 and later an inline add to the vCPU's scoreboard entry with a callback only once
 * PACE_CHUNK instructions have gathered. profile=none paces without a memory model: the only accesses watched
 * are the stores of trace_model_rec (kernel/model.c: the job marks, given as mark_lo..mark_hi).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "plugin.h"
#include "cache.h"
#include "selfcost.h"
#include "schedlab/model.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define PAY_PS        2000000             /* pay the debt once it passes 2 us */
#define KERNEL_BASE   0x80200000UL        /* OpenSBI below it: not modelled */
#define PAGE_MASK     0xfffUL

static struct model *model;
static struct model_params params;
struct vcpu *vcpus;
int nvcpus;
static char profile[64] = "custom";
static uint64_t marks_pa, calib_lo, calib_hi;
static int charge = 1;
uint64_t cycle_ps;                        /* 0 until calibrated; written once per calibration run */
static uint64_t calib_best_ns = ~0UL;
static int report_fd = 1;                 /* stdout, dup'ed at install: QEMU 10 closes fd 1 before atexit */
static int have_cache = 1;                /* profile=none: no memory model (a paced machine without caches) */
static uint64_t pace_at, mark_lo, mark_hi, pace_lead_us;

/* What a miss is charged: its profile cost less what its lookup took beyond the fast path's (selfcost.c),
   never below 0; 0 for everything until the cycle is known. Written by the calibration, before the other
   harts start; read by every access. */
static uint32_t served_cycles[MODEL_NSERVED];
static double self_ns[MODEL_NSERVED], lookup_ns;
static int64_t charge_ps[MODEL_NSERVED];

/* reported physical address -> guest physical address: reported + delta within [lo, hi) */
struct pa_fix {
    uint64_t lo, hi;
    int64_t delta;
};
#define MAX_PA_FIXES 16
static struct pa_fix pa_fixes[MAX_PA_FIXES];
static int npa_fixes;                     /* published with release; entries before it are immutable but hi */
static int pa_fix_lock;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}


/* ---- paying the stall ---- */

static void pay(struct vcpu *v)
{
    if (v->debt_ps <= 0)
        return;
    uint64_t start = now_ns(), end = start + (uint64_t)v->debt_ps / 1000, t;
    while ((t = now_ns()) < end)
        cpu_relax();
    v->debt_ps -= (int64_t)(t - start) * 1000; /* the overshoot is credited to the next stall */
    v->paid_ns += t - start;
}

/* A reading of time or cycle, or wfi (udata 1): pay the stall, or check the schedule. A wfi may halt the hart
   until an interrupt: it is marked idle, so that it resynchronises at its next check without an event (QEMU
   10 does not call the vCPU idle callback for a halted TCG vCPU; 7.2 does, and both marks agree). */
static void on_time_read(unsigned int vcpu, void *udata)
{
    if (pace.rate) {
        pace_point(vcpu, pace.lead_ns);
        if (udata)
            vcpus[vcpu].pace.idle = 1;
    } else {
        pay(&vcpus[vcpu]);
    }
}

static void on_vtlb_flush(unsigned int vcpu, void *udata)
{
    struct vcpu *v = &vcpus[vcpu];
    for (int i = 0; i < VTLB_SIZE; i++)
        v->tlb[i].vpage = ~0UL;
}

/* ---- the cycle ---- */

static void on_calib_start(unsigned int vcpu, void *udata) { vcpus[vcpu].calib_t0 = now_ns(); }

/* The lookup beyond the fast path, in ps, for an access served by s. */
static double uncharged_ps(int s)
{
    double ns = self_ns[s] ? self_ns[s] : s == SERVED_COH ? self_ns[SERVED_LOCAL] : 0;
    return ns > lookup_ns ? (ns - lookup_ns) * 1000 : 0;
}

static void on_calib_end(unsigned int vcpu, void *udata)
{
    uint64_t ns = now_ns() - vcpus[vcpu].calib_t0;
    if (ns >= calib_best_ns)
        return;
    calib_best_ns = ns; /* only the boot hart runs the loop, before the others start */
    uint64_t ps = ns * 1000 / ((uint64_t)MODEL_CALIB_ITERS * MODEL_CALIB_BODY);
    for (int s = 0; s < MODEL_NSERVED; s++) {
        double c = (double)served_cycles[s] * (double)ps - uncharged_ps(s);
        charge_ps[s] = c > 0 ? (int64_t)c : 0;
    }
    if (!pace.rate) /* paced, a cycle is 1/R */
        __atomic_store_n(&cycle_ps, ps, __ATOMIC_RELAXED);
}

/* ---- physical addresses ---- */

/* The guest physical address of what QEMU reported as `r`, or ~0 while its block is not known yet. */
static uint64_t pa_of_reported(uint64_t r)
{
    int n = __atomic_load_n(&npa_fixes, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (r >= pa_fixes[i].lo && r < __atomic_load_n(&pa_fixes[i].hi, __ATOMIC_ACQUIRE))
            return r + (uint64_t)pa_fixes[i].delta;
    return ~0UL;
}

/* A kernel access at virtual (= physical) address va was reported as r: extend or add a range. Rare: only on
   the vtlb misses of identity-mapped pages, and ranges grow a page at a time during the boot. */
static void learn_pa(uint64_t va, uint64_t r)
{
    int64_t delta = (int64_t)(va - r);
    uint64_t page = r & ~PAGE_MASK;
    while (__atomic_exchange_n(&pa_fix_lock, 1, __ATOMIC_ACQUIRE))
        cpu_relax();
    int i, n = npa_fixes;
    for (i = 0; i < n; i++) {
        struct pa_fix *f = &pa_fixes[i];
        if (f->delta != delta)
            continue;
        if (page + 4096 >= f->lo && page <= f->hi) { /* touches or overlaps: grow it */
            if (page < f->lo)
                f->lo = page; /* lo only shrinks to pages no reader can have asked about yet */
            if (page + 4096 > f->hi)
                __atomic_store_n(&f->hi, page + 4096, __ATOMIC_RELEASE);
            break;
        }
    }
    if (i == n && n < MAX_PA_FIXES) {
        pa_fixes[n] = (struct pa_fix){ page, page + 4096, delta };
        __atomic_store_n(&npa_fixes, n + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&pa_fix_lock, 0, __ATOMIC_RELEASE);
}

/* ---- the access ---- */

/* A store to model_marks: the kernel saying which job this hart now runs - a byte store (the boot's clearing of
   .bss, 8 bytes at a time, is not one). What was counted inline so far was the previous job's. */
static void on_mark(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t pa)
{
    if (!qemu_plugin_mem_is_store(info) || qemu_plugin_mem_size_shift(info) != 0)
        return;
    if (pace.rate)
        pace_fold(vcpu);
    vcpus[vcpu].job = (int)(pa - marks_pa);
}

/* profile=none: only trace_model_rec's stores are watched, at kernel (identity-mapped) addresses. */
static void on_mark_store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    if (vaddr - marks_pa < MODEL_MARKS)
        on_mark(vcpu, info, vaddr);
}


static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    struct vcpu *v = &vcpus[vcpu];
    uint64_t vpage = vaddr >> 12;
    struct vtlb_entry *e = &v->tlb[vpage % VTLB_SIZE];
    uint64_t pa;
    if (e->vpage == vpage) {
        pa = e->ppage | (vaddr & PAGE_MASK);
    } else {
        struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
        if (!hw || qemu_plugin_hwaddr_is_io(hw))
            return; /* devices: not memory */
        uint64_t r = qemu_plugin_hwaddr_phys_addr(hw);
        if (vaddr - params.ram_base < params.ram_bytes) {
            pa = vaddr; /* the kernel's identity map */
            if (pa_of_reported(r) != pa)
                learn_pa(vaddr, r);
        } else if ((pa = pa_of_reported(r)) == ~0UL) {
            return; /* a page the kernel has not touched yet: cannot be a job's */
        }
        e->vpage = vpage;
        e->ppage = pa & ~PAGE_MASK;
    }
    if (pa - marks_pa < MODEL_MARKS) {
        on_mark(vcpu, info, pa);
        return;
    }
    if (pa - params.ram_base >= params.ram_bytes)
        return;
    uint32_t cycles;
    enum model_served s = model_access(model, (int)vcpu, pa, qemu_plugin_mem_is_store(info), &cycles);
    struct jobstat *js = &v->stat[v->job];
    js->served[s]++;
    if (cycles) {
        js->stall_cycles += cycles;
        if (pace.rate) {
            pace_add(&v->pace, 0, cycles);
        } else if (charge && charge_ps[s]) {
            v->debt_ps += charge_ps[s];
            if (v->debt_ps >= PAY_PS)
                pay(v);
        }
    }
}

/* ---- translation: which instructions get which callbacks ---- */

static int is_csr_op(uint32_t insn) { return (insn & 0x7f) == 0x73 && (insn >> 12 & 7) != 0 && (insn >> 12 & 7) != 4; }

static int is_wfi(uint32_t w) { return w == 0x10500073; }

/* a read of the time or cycle CSR, or wfi: where a stall must be paid or the schedule checked */
static int is_time_read(uint32_t w)
{
    return (is_csr_op(w) && (w >> 20 == 0xc01 || w >> 20 == 0xc00)) || is_wfi(w);
}

static uint32_t insn_word(struct qemu_plugin_insn *insn)
{
    uint32_t w = 0;
#if MODEL_QEMU_API >= 3
    qemu_plugin_insn_data(insn, &w, 4);
#else
    memcpy(&w, qemu_plugin_insn_data(insn), 4);
#endif
    return w;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (pace.rate)
        pace_instrument(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t va = qemu_plugin_insn_vaddr(insn);
        if (va >= params.ram_base && va < KERNEL_BASE)
            continue; /* the firmware (M-mode, untranslated addresses) */
        if (va == pace_at && pace.rate)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_pace_start, QEMU_PLUGIN_CB_NO_REGS, 0);
        if (!have_cache) {
            if (va >= mark_lo && va < mark_hi)
                qemu_plugin_register_vcpu_mem_cb(insn, on_mark_store, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, 0);
            if (qemu_plugin_insn_size(insn) == 4 && (is_time_read(insn_word(insn))))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_time_read, QEMU_PLUGIN_CB_NO_REGS,
                                                       (void *)(uintptr_t)is_wfi(insn_word(insn)));
            continue;
        }
        if (va == calib_lo)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_calib_start, QEMU_PLUGIN_CB_NO_REGS, 0);
        if (va == calib_hi)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_calib_end, QEMU_PLUGIN_CB_NO_REGS, 0);
        if (qemu_plugin_insn_size(insn) == 4) {
            uint32_t w = insn_word(insn);
            if ((is_csr_op(w) && w >> 20 == 0x180) || (w & 0xfe007fff) == 0x12000073) /* satp; sfence.vma */
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_vtlb_flush, QEMU_PLUGIN_CB_NO_REGS, 0);
            if (is_time_read(w))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_time_read, QEMU_PLUGIN_CB_NO_REGS,
                                                       (void *)(uintptr_t)is_wfi(w));
        }
        qemu_plugin_register_vcpu_mem_cb(insn, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, 0);
    }
}

/* ---- the report ---- */

static uint64_t stall_us(uint64_t cycles) { return cycles * cycle_ps / 1000000; }

static void report(qemu_plugin_id_t id, void *udata)
{
    pace_stop();
    struct jobstat sum[MODEL_MARKS];
    memset(sum, 0, sizeof sum);
    uint64_t paid_ns = 0;
    for (int c = 0; c < nvcpus; c++) {
        paid_ns += vcpus[c].paid_ns;
        for (int j = 0; j < MODEL_MARKS; j++) {
            struct jobstat *s = &vcpus[c].stat[j];
            sum[j].stall_cycles += s->stall_cycles;
            sum[j].insns += s->insns;
            sum[j].pace.events += s->pace.events;
            sum[j].pace.lag_ns += s->pace.lag_ns;
            for (int k = 0; k <= SERVED_REMOTE; k++)
                sum[j].served[k] += s->served[k];
        }
    }
    uint64_t acc = 0, stall = 0, jacc[MODEL_MARKS];
    for (int j = 0; j < MODEL_MARKS; j++) {
        jacc[j] = 0;
        for (int k = 0; k <= SERVED_REMOTE; k++)
            jacc[j] += sum[j].served[k];
        acc += jacc[j], stall += sum[j].stall_cycles;
    }
    char buf[2048];
    int n = snprintf(buf, sizeof buf,
                     "\nMODEL end profile=%s cycle_ps=%lu charge=%s accesses=%lu stall_us=%lu paid_us=%lu "
                     "lookup_ns=%.1f miss_lookup_ns=%.1f",
                     profile, cycle_ps, charge ? "on" : "off", acc, stall_us(stall), paid_ns / 1000, lookup_ns,
                     uncharged_ps(SERVED_LOCAL) / 1000);
    if (pace.rate)
        n += pace_report(buf + n, sizeof buf - n - 1);
    buf[n++] = '\n';
    if (write(report_fd, buf, n) < 0)
        return;
    for (int j = 0; j < MODEL_MARKS; j++) {
        struct jobstat *s = &sum[j];
        if (!jacc[j] && !s->insns)
            continue;
        uint64_t misses = s->served[SERVED_LLC] + s->served[SERVED_COH] + s->served[SERVED_LOCAL] +
                          s->served[SERVED_REMOTE];
        n = snprintf(buf, sizeof buf,
                     "MODEL job=%d accesses=%lu misses=%lu l2_hits=%lu llc_hits=%lu coherence=%lu local=%lu "
                     "remote=%lu stall_us=%lu",
                     j, jacc[j], misses, s->served[SERVED_L2], s->served[SERVED_LLC], s->served[SERVED_COH],
                     s->served[SERVED_LOCAL], s->served[SERVED_REMOTE], stall_us(s->stall_cycles));
        if (pace.rate)
            n += snprintf(buf + n, sizeof buf - n - 1, " insns=%lu pace_events=%lu pace_lag_us=%lu", s->insns,
                          s->pace.events, s->pace.lag_ns / 1000);
        buf[n++] = '\n';
        if (write(report_fd, buf, n) < 0)
            return;
    }
}

/* ---- arguments ---- */

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!*s)
        return -1;
    *out = strtoull(s, &end, 0);
    return *end ? -1 : 0;
}

static int parse_arg(const char *arg, char *err, size_t errlen)
{
    char key[64];
    const char *eq = strchr(arg, '=');
    if (!eq || (size_t)(eq - arg) >= sizeof key) {
        snprintf(err, errlen, "bad argument '%s': expected key=value", arg);
        return -1;
    }
    memcpy(key, arg, eq - arg);
    key[eq - arg] = 0;
    const char *val = eq + 1;
    uint64_t u;
    if (!strcmp(key, "profile")) {
        snprintf(profile, sizeof profile, "%s", val);
        return 0;
    }
    if (!strcmp(key, "charge")) {
        if (strcmp(val, "on") && strcmp(val, "off")) {
            snprintf(err, errlen, "bad argument '%s': expected charge=on or charge=off", arg);
            return -1;
        }
        charge = !strcmp(val, "on");
        return 0;
    }
    uint64_t *addr = !strcmp(key, "marks") ? &marks_pa : !strcmp(key, "calib_lo") ? &calib_lo
                   : !strcmp(key, "calib_hi") ? &calib_hi : !strcmp(key, "pace_at") ? &pace_at
                   : !strcmp(key, "mark_lo") ? &mark_lo : !strcmp(key, "mark_hi") ? &mark_hi
                   : !strcmp(key, "pace") ? &pace.rate : !strcmp(key, "pace_lead_us") ? &pace_lead_us : 0;
    if (addr || !strcmp(key, "ram_mb") || !strcmp(key, "harts")) {
        if (parse_u64(val, &u)) {
            snprintf(err, errlen, "bad argument '%s': expected a number", arg);
            return -1;
        }
        if (addr)
            *addr = u;
        else if (!strcmp(key, "ram_mb"))
            params.ram_bytes = u << 20;
        else
            params.harts = (int)u;
        return 0;
    }
    return model_param_set(&params, key, val, err, errlen);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    char err[256];
    if (!info->system_emulation || strcmp(info->target_name, "riscv64")) {
        fprintf(stderr, "model: the machine model runs under qemu-system-riscv64 only\n");
        return -1;
    }
    params.ram_base = 0x80000000UL;
    params.ram_bytes = 256UL << 20;
    params.harts = info->system.smp_vcpus;
    for (int i = 0; i < argc; i++)
        if (parse_arg(argv[i], err, sizeof err)) {
            fprintf(stderr, "model: %s\n", err);
            return -1;
        }
    if (params.harts != info->system.smp_vcpus || !marks_pa || !calib_lo || !calib_hi) {
        fprintf(stderr, "model: need harts=%d (-smp), marks=, calib_lo= and calib_hi= (the kernel's symbols; "
                        "make qemu MODEL=... and the harness pass them)\n", info->system.smp_vcpus);
        return -1;
    }
    if (pace_lead_us)
        pace.lead_ns = pace_lead_us * 1000;
    if (pace_install(pace_at, mark_lo, mark_hi, err, sizeof err)) {
        fprintf(stderr, "model: %s\n", err);
        return -1;
    }
    have_cache = strcmp(profile, "none") != 0;
    if (!have_cache && !pace.rate) {
        fprintf(stderr, "model: profile=none is a paced machine without caches: it needs pace=R\n");
        return -1;
    }
    model = have_cache ? model_new(&params, err, sizeof err) : 0;
    if (have_cache && !model) {
        fprintf(stderr, "model: %s\n", err);
        return -1;
    }
    if (have_cache)
        model_self_cost(&params, self_ns);
    lookup_ns = params.l1_kb ? self_ns[SERVED_L1] : self_ns[SERVED_LOCAL]; /* the calibration loop's path */
    served_cycles[SERVED_L2] = (uint32_t)params.l2_cycles;
    served_cycles[SERVED_LLC] = (uint32_t)params.llc_cycles;
    served_cycles[SERVED_COH] = (uint32_t)params.coh_cycles;
    served_cycles[SERVED_LOCAL] = (uint32_t)params.mem_cycles;
    served_cycles[SERVED_REMOTE] = (uint32_t)params.remote_cycles;
    nvcpus = info->system.max_vcpus;
    vcpus = aligned_alloc(64, sizeof *vcpus * nvcpus);
    if (!vcpus) {
        fprintf(stderr, "model: out of memory for %d vCPUs\n", nvcpus);
        return -1;
    }
    memset(vcpus, 0, sizeof *vcpus * nvcpus);
    for (int c = 0; c < nvcpus; c++)
        on_vtlb_flush(c, 0);
    report_fd = dup(1);
    if (report_fd < 0)
        report_fd = 1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, report, 0);
    if (pace.rate)
        qemu_plugin_register_vcpu_idle_cb(id, on_idle);
    return 0;
}
