/*
 * main.c - boot. OpenSBI enters the boot hart (whichever won its lottery) at _entry; that hart reads the
 * device tree, numbers the harts, sets up memory and the scenario, then starts the others with SBI HSM
 * hart_start. Every hart then runs the scheduler loop; the boot hart also serves the deadline queue.
 *
 * main.c is the top layer (LAYERS.md) and wires the hooks through which lower layers reach upper ones
 * (wire_layers): nothing below calls up by name.
 */
#include "sched/core.h"
#include "intr.h"
#include "trace.h"
#include "ulog.h"
#include "deadline.h"
#include "contract.h"
#include "sched/life.h"
#include "batch.h"

extern char _secondary_entry[];
__attribute__((aligned(16), section(".bss.kstacks"))) char hart_stacks[NHART_STACKS][KSTACK_SIZE];
_Static_assert(NHART_STACKS == SL_MAX_HARTS, "a stack per hart");

static volatile int harts_up;
static volatile int go;
static volatile int harts_known;                /* cpus[] is filled in */
static volatile int self_started[SL_MAX_HARTS]; /* a hart the firmware sent to _entry after the boot hart */

static void hart_setup(int idx)
{
    asm volatile("mv tp, %0" ::"r"(&cpus[idx]));
    csr_write(satp, vm_satp(kernel_pagetable));
    sfence_vma();
    trap_init_hart();
    intr_hart_init();
    ulog_clock_anchor(idx);
}

void secondary_main(uint64_t hartid, uint64_t idx)
{
    hart_setup((int)idx);
    __atomic_fetch_add(&harts_up, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
        calib_serve((int)idx); /* the calibration card's IPI partner answers here (calib.c) */
        vclock_pause();
    }
    sched_start_hart();
}

/* A hart that came through _entry after the boot hart (see entry.S): wait for the hart table, then
   run as the secondary it is. Its stack is the slot of its hart id, so this works when ids are dense
   (ids = indices, as on QEMU virt); otherwise it stays parked and start_other_harts reports it. */
void late_secondary_main(uint64_t hartid)
{
    while (!__atomic_load_n(&harts_known, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < ncpus; i++)
        if (cpus[i].hartid == hartid && (uint64_t)i == hartid) {
            __atomic_store_n(&self_started[i], 1, __ATOMIC_RELEASE);
            secondary_main(hartid, (uint64_t)i);
        }
    for (;;)
        wfi();
}

/* The upcalls, before any hart runs a process: the core's into the process layer and trap.c, the process
   layer's into the launcher. (The core installs its own deadline_moved in sched_init.) */
static void wire_layers(void)
{
    sched_up = (struct sched_upcalls){
        .to_user = proc_return_to_user,
        .reap = proc_reap,
        .put_pagetable = job_put_pagetable,
        .deadlocked = job_deadlocked,
    };
    /* the portable core's (sched/life.h): a done job's RESULT (the launcher's), a killed waiter's futex */
    life_hooks = (struct life_hooks){ .job_done = launcher_job_done, .unwait = futex_cancel };
    console_leaving = batch_leaving; /* a batch's END, and its next scenario (batch.c) */
}

static void start_other_harts(int boot)
{
    __atomic_store_n(&harts_known, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < ncpus; i++) {
        if (i == boot || __atomic_load_n(&self_started[i], __ATOMIC_ACQUIRE))
            continue;
        /* SBI_ERR_ALREADY_AVAILABLE (-6): OpenSBI keeps a hart's HSM state zeroed - which reads as STARTED -
           until that hart has run its own firmware init and parked itself STOPPED; on a busy host its QEMU
           thread may not have run yet. Try again for up to 30 s. */
        long e;
        uint64_t retry_until = rdtime() + 30 * plat.timebase_hz;
        while ((e = sbi_hart_start(cpus[i].hartid, (unsigned long)_secondary_entry, (unsigned long)i)) == -6 &&
               rdtime() < retry_until && !__atomic_load_n(&self_started[i], __ATOMIC_ACQUIRE))
            for (uint64_t t = rdtime() + plat.timebase_hz / 1000; rdtime() < t;)
                vclock_pause();
        if (e && !__atomic_load_n(&self_started[i], __ATOMIC_ACQUIRE)) {
            kprintf("ERROR hart %d (id %lu) did not start: SBI error %ld\n", i, cpus[i].hartid, e);
            platform_exit(2);
        }
    }
    uint64_t deadline = rdtime() + 30 * plat.timebase_hz;
    while (__atomic_load_n(&harts_up, __ATOMIC_ACQUIRE) < ncpus - 1) {
        vclock_pause();
        if (rdtime() > deadline) {
            kprintf("ERROR only %d of %d harts came up within 30 s\n", harts_up + 1, ncpus);
            platform_exit(2);
        }
    }
}

void boot_main(uint64_t hartid, const void *dtb)
{
    char err[160];
    if (fdt_parse(dtb, &plat, err, sizeof err)) {
        kprintf("ERROR cannot read the device tree: %s\n", err);
        platform_exit(2);
    }
    const char *scenario = batch_scenario(plat.bootargs, err, sizeof err); /* before anything writes .data */
    if (!scenario) {
        kprintf("ERROR %s\n", err);
        platform_exit(2);
    }
    if (plat.too_many_harts) {
        kprintf("ERROR this machine has more than %d harts; schedlab supports at most %d (use -smp %d or fewer)\n",
                SL_MAX_HARTS, SL_MAX_HARTS, SL_MAX_HARTS);
        platform_exit(2);
    }
    ncpus = plat.nharts;
    int boot = -1;
    for (int i = 0; i < ncpus; i++) {
        cpus[i].id = i;
        cpus[i].hartid = plat.hartid[i];
        cpus[i].node = plat.hart_node[i];
        if (plat.hartid[i] == hartid)
            boot = i;
    }
    if (boot < 0) {
        kprintf("ERROR the boot hart (id %lu) is not in the device tree's /cpus\n", hartid);
        platform_exit(2);
    }
    deadline_hart = boot;
    batch_set_boot(boot, hartid, dtb);
    wire_layers();
    kalloc_init();
    vm_init();
    hart_setup(boot);
    apps_init();
    launcher_init(scenario, scenario != plat.bootargs);
    sched_init();
    start_other_harts(boot);
    if (trace_enabled & TRACE_ON)
        ulog_clock_choose();
    intr_choose();
    uint64_t mem = 0;
    for (int i = 0; i < plat.nmem; i++)
        mem += plat.mem[i].size;
    char names[512]; /* one kprintf per line: each kprintf starts a new line (console.c) */
    names[0] = 0;
    char bg[256]; /* the background apps (SL_APP_BACKGROUND): the harness never runs them alone */
    bg[0] = 0;
    for (int i = 0; i < napps(); i++) {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "", app_at(i)->name);
        if (app_at(i)->spec->flags & SL_APP_BACKGROUND)
            snprintf(bg + strlen(bg), sizeof bg - strlen(bg), "%s%s", bg[0] ? "," : "", app_at(i)->name);
    }
    struct contract_boot b = {
        .harts = ncpus, .nodes = plat.nnodes, .mem_mb = mem >> 20, .policies = sched_class_names(), .apps = names,
        .boot_hart = boot, .boot_us = time_us(rdtime()), .background = bg, .options = sched_option_list(),
        .timer = intr_timer_path(), .ipi = intr_ipi_path(), .clock = clock_virtual ? "virtual" : "real",
        .jobkeys = sched_job_key_list(), .idle = idle_poll ? "poll" : "auto",
        .model = model_spec[0] ? model_spec : "none", .cycle_ps = model_cycle_ps,
#ifdef KCHECKS
        .checks = "on",
#endif
        .extra = "",
    };
    char line[2048];
    contract_boot(line, sizeof line, &b);
    kprintf("%s\n", line);
    launcher_start();
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    sched_start_hart();
}
