/*
 * ulog.c - allocating, mapping and dumping the library's event logs (model in ulog.h, format in abi.h).
 *
 * Sizes. Each process's log is a header page and R record pages (R a power of two, at most
 * ULOG_MAX_PAGES). All logs of a run share ULOG_BUDGET_PAGES: a job whose processes do not fit even with
 * R = 1 gets no logs, and the dump says so (off=no-room) rather than failing the job.
 *
 * Lock rule: ulog_lock guards the ring table and the budget (admissions may run on any hart). The dump
 * runs after trace_stop, when no admission can happen any more; it reads other jobs' logs while a
 * background job may still write its own, which is fine: every record is read once and bounded.
 *
 * Dump format (console contract; right after the kernel's TRACE end, so a reader of the TRACE block sees
 * it unchanged; ticks count from the same t0 as the kernel's records):
 *   ULOG begin jobs=<number of jobs> now=<ticks since t0> clock=cycle|time kernel_record_ns=<ns>
 *                                  now: no true record is later; clock: what the records carried (ulog.h);
 *                                  kernel_record_ns: one of the kernel's own records, measured at boot
 *   ULOG job=<j> proc=<p> records=<n> dropped=<d>          one block per process that recorded anything
 *   U <job> <proc> <ticks since t0> <event> <arg> <aux>    its records, oldest first
 *   ULOG job=<j> off=no-room                              a job that got no logs (the budget ran out)
 *   ULOG end
 */
#include "cpu.h"
#include "spinlock.h"
#include "trace.h"
#include "ulog.h"
#include "vclock.h"

#define ULOG_MAX_PAGES    16      /* record pages per process: 4096 records */
#define ULOG_BUDGET_PAGES 2048    /* all logs of a run: 8 MiB */
#define ULOG_MAX_RINGS    512
#define RECS_PER_PAGE     (PAGE_SIZE / sizeof(struct sl_ulog_rec))
#define ULOG_SKEW_TICKS   10      /* 1 us at QEMU's 10 MHz: how far a hart's cycle may point from its time */

struct anchor {
    uint64_t t, c;
};
static struct anchor anchors[SL_MAX_HARTS];     /* written once by each hart, read after all started */
static int use_cycles;                          /* set before any job is admitted; read-only after */
static uint64_t kernel_rec_cns;                 /* the kernel's own trace record, centi-ns (measured at boot) */
#define REC_SAMPLES 4096
static struct anchor boot_anchor;               /* the boot hart's, taken in ulog_clock_choose */

_Static_assert(sizeof(struct sl_ulog_rec) == 16, "log records are 16 bytes");
_Static_assert(sizeof(struct sl_info) <= PAGE_SIZE, "the info page is one page");
_Static_assert(SL_ULOG_VA + (uint64_t)SL_MAX_PROCS * SL_ULOG_STRIDE <= SL_HEAP_VA, "the logs fit below the heap");
_Static_assert(SL_ULOG_HDR + ULOG_MAX_PAGES * PAGE_SIZE <= SL_ULOG_STRIDE, "a log fits its stride");

struct ulog_ring {
    int job, proc;
    uint32_t cap;                               /* records; the kernel's copy, never the job's */
    struct sl_ulog *hdr;                        /* kernel address of the header page */
    struct sl_ulog_rec *page[ULOG_MAX_PAGES];
};

static struct spinlock ulog_lock = SPINLOCK_INIT("ulog", LOCK_ULOG);
static struct ulog_ring rings[ULOG_MAX_RINGS];   /* ulog_lock */
static int nrings;                              /* ulog_lock */
static uint64_t pages_left = ULOG_BUDGET_PAGES; /* ulog_lock */
static uint64_t refused_jobs;                   /* ulog_lock: bit j-1 for job j (NJOB <= 64) */
static int run_njobs;                           /* the scenario's jobs (ulog_set_njobs, launcher_init) */
_Static_assert(NJOB <= 64, "refused_jobs is one word");

static const char *const ev_names[SL_UL_NEVENTS] = {
    [SL_UL_ARRIVE] = "arrive", [SL_UL_RELEASE] = "release", [SL_UL_BLOCK] = "block",
    [SL_UL_UNBLOCK] = "unblock", [SL_UL_STEAL] = "steal",   [SL_UL_SWITCH] = "switch",
    [SL_UL_SUSPEND] = "suspend", [SL_UL_RESUME] = "resume", [SL_UL_GRAB] = "grab",
    [SL_UL_MARK] = "mark",
};

static void ulog_dump(uint64_t t0);

/* A (time, cycle) pair: the cycle read bracketed by two time reads at most a tick apart (a host thread
   preempted between the reads would pair them microseconds apart); the tightest of a few tries. */
static struct anchor anchor_now(void)
{
    struct anchor a = { 0, 0 };
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64 && best > 1; i++) {
        uint64_t t1 = rdtime(), c = rdcycle(), t2 = rdtime();
        if (t2 - t1 < best) {
            best = t2 - t1;
            a = (struct anchor){ t1 + (t2 - t1) / 2, c };
        }
    }
    return a;
}

void ulog_clock_anchor(int hart) { anchors[hart] = anchor_now(); }

/* floor(x * y / d), d > 0, for a quotient that fits 64 bits (saturated otherwise): the product in 128 bits,
   divided bit by bit (no libgcc here; this runs only at the dump). */
static uint64_t muldiv(uint64_t x, uint64_t y, uint64_t d)
{
    unsigned __int128 n = (unsigned __int128)x * y, r = 0;
    uint64_t q = 0;
    if ((uint64_t)(n >> 64) >= d)
        return UINT64_MAX;
    if (!(uint64_t)(n >> 64))
        return (uint64_t)n / d;
    for (int i = 127; i >= 0; i--) {
        r = (r << 1) | (uint64_t)((n >> i) & 1);
        if (r >= d) {
            r -= d;
            if (i < 64)
                q |= 1UL << i;
        }
    }
    return q;
}

/* Time at cycle c on the line through a and b (b.c > a.c, b.t >= a.t); clamped to 0 before the line. */
static uint64_t cycle_to_time(struct anchor a, struct anchor b, uint64_t c)
{
    uint64_t dt = b.t - a.t, dcyc = b.c - a.c;
    if (c >= a.c) {
        uint64_t t = muldiv(c - a.c, dt, dcyc);
        return t > UINT64_MAX - a.t ? UINT64_MAX : a.t + t;
    }
    uint64_t back = muldiv(a.c - c, dt, dcyc);
    return back > a.t ? 0 : a.t - back;
}

/* What one of the kernel's own trace records costs (trace_rec_at, its time already read), to print beside
   the library's (kbench what=ulog): REC_SAMPLES records on this hart's ring at boot, then the ring's count
   put back, so none of them is ever published. */
static void measure_kernel_record(int h)
{
    struct trace_ring *r = &trace_rings[h];
    uint64_t n0 = r->n, t0 = rdtime();
    for (int i = 0; i < REC_SAMPLES; i++)
        trace_rec_at(h, t0, TR_IDLE, 0, -1, i);
    uint64_t t1 = rdtime();
    __atomic_store_n(&r->n, n0, __ATOMIC_RELEASE);
    kernel_rec_cns = muldiv(t1 - t0, 100UL * 1000000000UL, plat.timebase_hz) / REC_SAMPLES;
}

void ulog_clock_choose(void)
{
    int h = mycpu()->id;
    measure_kernel_record(h);
    ulog_clock_anchor(h);
    struct anchor a = anchors[h];
    for (uint64_t until = a.t + plat.timebase_hz / 1000; rdtime() < until;) /* 1 ms for the rate */
        ;
    boot_anchor = a;
    ulog_clock_anchor(h);
    struct anchor b = anchors[h];
    int ok = b.c > a.c && b.t > a.t;
    for (int i = 0; ok && i < ncpus; i++) {
        uint64_t predicted = cycle_to_time(a, b, anchors[i].c);
        uint64_t skew = predicted > anchors[i].t ? predicted - anchors[i].t : anchors[i].t - predicted;
        ok = anchors[i].t && skew <= ULOG_SKEW_TICKS;
    }
    /* deterministic mode: `time` counts instructions and replays exactly, QEMU's `cycle` under -icount does not
       (two traced boots of one perturbed scenario parted at a record's cycle stamp) */
    use_cycles = ok && !clock_virtual;
}

/* Record pages per process for a job of n processes with `left` pages to share: 0 if none fit. */
static uint64_t ring_pages(int n, uint64_t left)
{
    uint64_t r = ULOG_MAX_PAGES;
    while (r >= 1 && (uint64_t)n * (r + 1) > left)
        r /= 2;
    return r;
}

static void ring_free(struct ulog_ring *g, uint64_t npages)
{
    if (g->hdr)
        kfree_page(g->hdr);
    for (uint64_t i = 0; i < npages; i++)
        if (g->page[i])
            kfree_page(g->page[i]);
}

/* Allocate and map process i's log; 0 or -1 (what it took is freed by the caller through the ring). */
static int ring_make(struct job *j, struct ulog_ring *g, int i, uint64_t npages)
{
    uint64_t va = SL_ULOG_VA + (uint64_t)i * SL_ULOG_STRIDE;
    g->job = j->id;
    g->proc = i;
    g->cap = (uint32_t)(npages * RECS_PER_PAGE);
    if (!(g->hdr = kalloc_page(0)))
        return -1;
    memset(g->hdr, 0, PAGE_SIZE);
    if (uvm_map(j->pt, va, (uint64_t)g->hdr, PTE_R | PTE_W) < 0)
        return -1;
    for (uint64_t p = 0; p < npages; p++) {
        if (!(g->page[p] = kalloc_page(0)))
            return -1;
        memset(g->page[p], 0, PAGE_SIZE);
        if (uvm_map(j->pt, va + SL_ULOG_HDR + p * PAGE_SIZE, (uint64_t)g->page[p], PTE_R | PTE_W) < 0)
            return -1;
    }
    return 0;
}

void ulog_set_njobs(int n) { run_njobs = n; }

void ulog_job_init(struct job *j)
{
    if (!(trace_enabled & TRACE_ON))
        return;
    trace_dump_extra = ulog_dump;
    acquire(&ulog_lock);
    uint64_t r = ring_pages(j->nprocs, pages_left);
    int first = nrings, ok = r >= 1 && nrings + j->nprocs <= ULOG_MAX_RINGS;
    for (int i = 0; ok && i < j->nprocs; i++) {
        struct ulog_ring *g = &rings[nrings++];
        ok = ring_make(j, g, i, r) == 0;
    }
    if (ok) {
        pages_left -= (uint64_t)j->nprocs * (r + 1);
        j->info->ulog_cap = (uint32_t)(r * RECS_PER_PAGE);
        if (use_cycles)
            j->info->flags |= SL_INFO_ULOG_CYCLES;
    } else {
        ulog_job_unmap(j); /* pages mapped so far leave the page table, which would free them */
        for (int k = first; k < nrings; k++)
            ring_free(&rings[k], r);
        memset(&rings[first], 0, (size_t)(nrings - first) * sizeof rings[0]);
        nrings = first;
        refused_jobs |= 1UL << (j->id - 1);
        j->info->ulog_cap = 0;
    }
    release(&ulog_lock);
}

void ulog_job_unmap(struct job *j)
{
    uvm_unmap(j->pt, SL_ULOG_VA, (uint64_t)SL_MAX_PROCS * SL_ULOG_STRIDE);
}

static void ring_dump(const struct ulog_ring *g, uint64_t t0, struct anchor end)
{
    uint64_t n = __atomic_load_n(&g->hdr->n, __ATOMIC_ACQUIRE); /* the job's word: any value at all */
    if (n == 0)
        return;
    uint64_t first = n > g->cap ? n - g->cap : 0;
    kprintf("ULOG job=%d proc=%d records=%lu dropped=%lu\n", g->job, g->proc, n - first, first);
    for (uint64_t k = first; k < n; k++) {
        uint64_t i = k & (g->cap - 1);
        const struct sl_ulog_rec *rec = &g->page[i / RECS_PER_PAGE][i % RECS_PER_PAGE];
        /* one read of each field: the job may be rewriting it (a background job still runs) */
        uint64_t t = __atomic_load_n(&rec->t, __ATOMIC_RELAXED);
        if (use_cycles)
            t = cycle_to_time(boot_anchor, end, t);
        int32_t arg = __atomic_load_n(&rec->arg, __ATOMIC_RELAXED);
        uint16_t e = __atomic_load_n(&rec->ev, __ATOMIC_RELAXED), aux = __atomic_load_n(&rec->aux, __ATOMIC_RELAXED);
        const char *ev = e < SL_UL_NEVENTS && ev_names[e] ? ev_names[e] : "?";
        kprintf("U %d %d %lu %s %d %u\n", g->job, g->proc, t > t0 ? t - t0 : 0, ev, arg, aux);
    }
}

/* trace_dump's hook: every log, in job and process order. */
static void ulog_dump(uint64_t t0)
{
    struct anchor end = anchor_now();
    kprintf("ULOG begin jobs=%d now=%lu clock=%s kernel_record_ns=%lu.%02lu\n", run_njobs, end.t > t0 ? end.t - t0 : 0,
            use_cycles ? "cycle" : "time", kernel_rec_cns / 100, kernel_rec_cns % 100);
    for (int j = 1; j <= NJOB; j++)
        if (refused_jobs & (1UL << (j - 1)))
            kprintf("ULOG job=%d off=no-room\n", j);
    for (int k = 0; k < nrings; k++)
        ring_dump(&rings[k], t0, end);
    kprintf("ULOG end\n");
}
