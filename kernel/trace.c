/*
 * trace.c - allocating the per-hart trace rings and dumping them (the recording is inline, trace.h).
 *
 * Dump format (console contract; tools/py/schedlab/trace.py parses it):
 *   TRACE begin harts=<H> timebase_hz=<hz> policy=<p> quantum_us=<q>
 *   TRACE hart=<h> records=<n> dropped=<d>          one block per hart, its records in time order
 *   T <hart> <ticks since t0> <event> <job> <proc> <arg>
 *   TRACE end
 */
#include "cpu.h"
#include "trace.h"

int trace_enabled;
const char *trace_header_extra = ""; /* appended to the TRACE begin line (trace_configure) */
struct trace_ring trace_rings[SL_MAX_HARTS];
struct trace_ring trace_decisions[SL_MAX_HARTS];
void (*trace_dump_extra)(uint64_t t0);

static const char *const ev_names[TR_NEVENTS] = {
    [TR_RUN] = "run",   [TR_PRE] = "pre",     [TR_YLD] = "yld",   [TR_BLK] = "blk",
    [TR_EXIT] = "exit", [TR_NEW] = "new",     [TR_WAKE] = "wake", [TR_IDLE] = "idle",
    [TR_SLOT] = "slot", [TR_EARLY] = "early", [TR_ACK] = "ack",   [TR_REP] = "rep",
    [TR_REGIME] = "regime", [TR_STOP] = "stop", [TR_HELD] = "held",
};

/* Pages per hart: the largest power of two within both TRACE_MAX_PAGES and the budget's share. */
static uint64_t pages_per_hart(int nharts)
{
    uint64_t share = TRACE_BUDGET_BYTES / PAGE_SIZE / (uint64_t)nharts, p = 1;
    while (p * 2 <= share && p * 2 <= TRACE_MAX_PAGES)
        p *= 2;
    return p;
}

uint64_t trace_bytes(int nharts)
{
    return (pages_per_hart(nharts) + TRACE_DECISION_PAGES) * PAGE_SIZE * (uint64_t)nharts;
}

/* np pages on hart h's node for ring r; 0 or -1 (memory ran out). */
static int ring_alloc(struct trace_ring *r, int h, uint64_t np)
{
    for (uint64_t i = 0; i < np; i++)
        if (!(r->page[i] = kalloc_page(cpus[h].node)))
            return -1;
    r->cap = np * TRACE_PAGE_RECS;
    r->n = 0;
    return 0;
}

int trace_init(char *err, size_t errlen)
{
    for (int h = 0; h < ncpus; h++)
        if (ring_alloc(&trace_rings[h], h, pages_per_hart(ncpus)) < 0 ||
            ring_alloc(&trace_decisions[h], h, TRACE_DECISION_PAGES) < 0) {
            snprintf(err, errlen, "trace=on needs %lu MiB for its buffers and memory ran out (boot with more -m)",
                     trace_bytes(ncpus) >> 20);
            return -1;
        }
    __atomic_or_fetch(&trace_enabled, TRACE_ON, __ATOMIC_RELEASE);
    return 0;
}

void trace_stop(void) { __atomic_and_fetch(&trace_enabled, ~TRACE_ON, __ATOMIC_SEQ_CST); }

/* A ring's kept records: [first, n) of those ever written. */
struct kept { const struct trace_ring *r; uint64_t k, n; };

static struct kept kept_of(const struct trace_ring *r)
{
    uint64_t n = __atomic_load_n(&r->n, __ATOMIC_ACQUIRE);
    return (struct kept){ r, n > r->cap ? n - r->cap : 0, n };
}

static const struct trace_rec *kept_rec(const struct kept *c) { return trace_ring_at(c->r, c->k); }

static void print_rec(int h, const struct trace_rec *rec, uint64_t t0)
{
    const char *ev = rec->ev < TR_NEVENTS ? ev_names[rec->ev] : "?";
    kprintf("T %d %lu %s %u %d %d\n", h, rec->t > t0 ? rec->t - t0 : 0, ev, rec->job, rec->proc, rec->arg);
}

/* Hart h's block, in time order (only h writes its rings): the decisions the big ring lost - those before
   its first kept record; one at that very time may have been kept, and is left to it - then the big ring. */
static void dump_ring(int h, uint64_t t0)
{
    struct kept a = kept_of(&trace_rings[h]), d = kept_of(&trace_decisions[h]);
    uint64_t restored = 0;
    if (a.k) { /* the big ring dropped some */
        uint64_t first_t = kept_rec(&a)->t;
        for (struct kept c = d; c.k < c.n && kept_rec(&c)->t < first_t; c.k++)
            restored++;
    }
    kprintf("TRACE hart=%d records=%lu dropped=%lu\n", h, a.n - a.k + restored, a.k - restored);
    for (; restored; restored--, d.k++)
        print_rec(h, kept_rec(&d), t0);
    for (; a.k < a.n; a.k++)
        print_rec(h, kept_rec(&a), t0);
}

/* At most once per run (the launcher calls it only from the hart that decided the verdict; this holds
   whatever the caller). */
void trace_dump(uint64_t t0, const char *policy, uint64_t quantum_us)
{
    static int dumped;
    if (!trace_rings[0].cap || __atomic_exchange_n(&dumped, 1, __ATOMIC_ACQ_REL))
        return;
    trace_stop();
    kprintf("TRACE begin harts=%d timebase_hz=%lu policy=%s quantum_us=%lu%s\n", ncpus, plat.timebase_hz, policy,
            quantum_us, trace_header_extra);
    for (int h = 0; h < ncpus; h++)
        dump_ring(h, t0);
    kprintf("TRACE end\n");
    if (trace_dump_extra)
        trace_dump_extra(t0);
}
