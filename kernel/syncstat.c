/*
 * syncstat.c - the kernel's side of the library's sync statistics (syncstat.h, abi.h "sync statistics"):
 * one zeroed page per job, mapped read/write at SL_SYNC_VA when the running policy asked for them, and the
 * costs a policy needs to weigh them (the calibration card's and the machine model's).
 *
 * Lifetime. The page is a leaf of the job's page table: uvm_free frees it with the table. pages[] holds
 * its kernel address from admission until job_put_pagetable (syncstat_job_put), which comes after the
 * policy's job_done; a policy reads it only for jobs it holds (admitted, not done), under sched_lock.
 */
#include "kernel.h"
#include "proc.h"
#include "syncstat.h"
#include "sched/sched.h"
#include "../lib/wait/wait_bounds.h"

static struct sl_sync *pages[NJOB];
static uint64_t calib_wake_cns; /* calib.c: 2 syscalls + 2 switches + an IPI, in centi-ns; 0 when calib=off */

void syncstat_set_wake_cost(uint64_t cns) { calib_wake_cns = cns; }

void syncstat_job_init(struct job *j)
{
    pages[j->id - 1] = 0;
    if (!sched->syncstat)
        return;
    struct sl_sync *pg = kalloc_page(0);
    if (!pg)
        return; /* no statistics: the policy sees NULL and treats the job as unmeasured */
    memset(pg, 0, PAGE_SIZE);
    if (uvm_map(j->pt, SL_SYNC_VA, (uint64_t)pg, PTE_R | PTE_W) < 0) {
        kfree_page(pg);
        return;
    }
    pages[j->id - 1] = pg;
    j->info->flags |= SL_INFO_SYNCSTAT;
}

void syncstat_job_put(struct job *j) { pages[j->id - 1] = 0; }

volatile struct sl_sync *syncstat_of(struct job *j, int idx)
{
    struct sl_sync *pg = pages[j->id - 1];
    return pg && idx >= 0 && idx < SL_MAX_PROCS ? (struct sl_sync *)((char *)pg + SL_SYNC_OFFSET(idx)) : 0;
}

/* Feitelson & Rudolph's alpha * tau_s on this host: a futex wait and a wake (two system calls), the switch
   away and back, and the IPI that makes the sleeper's hart look; without a card (calib=off, or one hart),
   the library's own estimate of a block + wake round trip (SL_TWOPHASE_SPIN_NS, lib/wait/wait_bounds.h). */
uint64_t sched_wake_cost_ns(void) { return calib_wake_cns ? calib_wake_cns / 100 : SL_TWOPHASE_SPIN_NS; }

/* The value of `key=` in the machine model's canonical spec, or -1. */
static long spec_key(const char *key)
{
    size_t n = strlen(key);
    for (const char *s = model_spec; *s; s++)
        if ((s == model_spec || s[-1] == ',') && strncmp(s, key, n) == 0 && s[n] == '=') {
            long v = 0;
            for (s += n + 1; *s >= '0' && *s <= '9'; s++)
                v = v * 10 + (*s - '0');
            return v;
        }
    return -1;
}

/* Refilling a hart's last private cache level, every line, from the level below it: the most a switch to
   another job can cost the job that comes back (Tucker & Gupta's cache corruption). 0 without a model. */
uint64_t sched_reload_cost_ns(void)
{
    if (!model_spec[0] || !model_cycle_ps)
        return 0;
    long kb = spec_key("l2_kb") > 0 ? spec_key("l2_kb") : spec_key("l1_kb"), line = spec_key("line_b");
    long below = spec_key("llc_kb") > 0 ? spec_key("llc_cycles") : spec_key("mem_cycles");
    if (kb <= 0 || line <= 0 || below <= 0)
        return 0;
    return (uint64_t)(kb * 1024 / line) * (uint64_t)below * model_cycle_ps / 1000;
}
