/*
 * paced.c - the plugin's pacing (pace.h has the model, plugin.h what is shared with plugin.c): count each hart's
 * instructions per translation block, check its schedule every pace_chunk instructions and at every reading of
 * the clock, sleep while it is ahead, and report the fidelity events.
 *
 * Counting. API version 1: a callback per executed block adds the block's instructions. Version 2 and later: an
 * inline add to the vCPU's scoreboard entry (no call) and a conditional callback once pace_chunk have gathered;
 * pace_fold moves the entry into the counts - at checks, and at each job mark so each job gets its own.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plugin.h"

/* Pacing: pace.rate 0 = unpaced. pace_t0 is the host ns at which model_pace_start ran (0: not yet); set once. */
struct pace pace = { 0, PACE_LEAD_NS_DEFAULT, PACE_BOUND_NS_DEFAULT };
static uint64_t pace_t0, pace_end;
static uint64_t pace_chunk;               /* instructions between two checks of the schedule */
#define PACE_NICE (-10)                   /* a paced vCPU thread's nice value when not real-time (prio_set) */
#define PACE_OVERLOAD_NS 20000000UL       /* two fidelity events this close: the hart cannot keep up */
/* Real-time bursts only where measured to help (docs/pacing.md): QEMU 7.2 (API 1). QEMU 10's vCPU threads wait
   for threads real-time ones would starve, so there nice -10 only. */
#define PACE_REALTIME (MODEL_QEMU_API == 1)

#if MODEL_QEMU_API >= 2
static qemu_plugin_u64 tb_insns;          /* per vCPU: instructions counted inline since the last fold */
#endif

/* Move what the inline counter gathered into the hart's count and its job's (own vCPU only). */
void pace_fold(unsigned int vcpu)
{
#if MODEL_QEMU_API >= 2
    struct vcpu *v = &vcpus[vcpu];
    uint64_t n = qemu_plugin_u64_get(tb_insns, vcpu);
    if (n) {
        qemu_plugin_u64_set(tb_insns, vcpu, 0);
        pace_add(&v->pace, n, 0);
        if (__atomic_load_n(&pace_t0, __ATOMIC_RELAXED))
            v->stat[v->job].insns += n; /* the boot's instructions are nobody's */
    }
#endif
}

/*
 * The vCPU thread's priority. A paced hart sleeps thousands of times a second, and on a loaded host every wake-up
 * waits in the run queue for milliseconds: each one a fidelity event. So a hart that
 * keeps its schedule runs SCHED_RR (priority 1): it preempts ordinary work the moment its sleep ends, runs its
 * lead's worth of instructions and sleeps again; it uses a core only for its share of R, and the kernel's
 * real-time throttling leaves others 5 % even then. A hart that falls behind twice within PACE_OVERLOAD_NS cannot
 * keep up (it does not sleep while behind): it drops to nice -10 until its next sleep, so that an overloaded
 * paced boot cannot starve the host (QEMU's own main loop among it). Under QEMU 10 vCPU threads stall behind
 * real-time ones even so (PACE_REALTIME): there, nice -10 only. Without the
 * privilege for either, the thread keeps its priority.
 */
enum { PRIO_UNSET, PRIO_RR, PRIO_NORMAL, PRIO_NONE };
static __thread int thread_prio;

static void prio_set(int want)
{
    if (thread_prio == want || thread_prio == PRIO_NONE)
        return;
    struct sched_param rr = { .sched_priority = 1 }, normal = { .sched_priority = 0 };
    if (want == PRIO_RR && PACE_REALTIME && pthread_setschedparam(pthread_self(), SCHED_RR, &rr) == 0) {
        thread_prio = PRIO_RR;
        return;
    }
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), PACE_NICE);
    thread_prio = want == PRIO_RR ? PRIO_NONE : PRIO_NORMAL; /* RR refused: never ask again */
}

static void pace_sleep(struct vcpu *v, uint64_t until)
{
    if (thread_prio == PRIO_UNSET) /* wake on time: the default slack (50 us) would be model time lost */
        prctl(PR_SET_TIMERSLACK, 1UL);
    prio_set(PRIO_RR);
    uint64_t start = now_ns();
    struct timespec ts = { (time_t)(until / 1000000000UL), (long)(until % 1000000000UL) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, 0) == EINTR)
        ;
    v->pace.slept_ns += now_ns() - start;
}

/* A check of vcpu's schedule: sleep while its model time leads the wall clock by lead_ns or more. Before
   model_pace_start nothing counts. */
void pace_point(unsigned int vcpu, uint64_t lead_ns)
{
    struct vcpu *v = &vcpus[vcpu];
    pace_fold(vcpu);
    uint64_t t0 = __atomic_load_n(&pace_t0, __ATOMIC_ACQUIRE);
    if (!t0) {
        memset(&v->pace, 0, sizeof v->pace);
        return;
    }
    uint64_t now = now_ns(), events = v->pace.count.events;
    uint64_t sleep = pace_check(&v->pace, &pace, now - t0, lead_ns, &v->stat[v->job].pace);
    if (sleep)
        pace_sleep(v, now + sleep);
    else if (v->pace.count.events != events) { /* behind again soon after the last time: overloaded */
        if (now - v->last_event_ns < PACE_OVERLOAD_NS && thread_prio == PRIO_RR)
            prio_set(PRIO_NORMAL); /* back among the host's ordinary work until it sleeps again */
        v->last_event_ns = now;
    }
}

#if MODEL_QEMU_API >= 2
static void on_tb_chunk(unsigned int vcpu, void *udata) { pace_point(vcpu, pace.lead_ns); }
#else
static void on_tb(unsigned int vcpu, void *udata)
{
    struct vcpu *v = &vcpus[vcpu];
    uint64_t n = (uint64_t)(uintptr_t)udata;
    pace_add(&v->pace, n, 0);
    if (__atomic_load_n(&pace_t0, __ATOMIC_RELAXED))
        v->stat[v->job].insns += n; /* the boot's instructions are nobody's */
    if (v->pace.pending >= pace_chunk)
        pace_point(vcpu, pace.lead_ns);
}
#endif

void on_idle(qemu_plugin_id_t id, unsigned int vcpu) { vcpus[vcpu].pace.idle = 1; }

void on_pace_start(unsigned int vcpu, void *udata)
{
    uint64_t none = 0;
    __atomic_compare_exchange_n(&pace_t0, &none, now_ns(), 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* Count the block's instructions for pacing (translation time). */
void pace_instrument(struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
#if MODEL_QEMU_API >= 2
    qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, tb_insns, n);
    qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, on_tb_chunk, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_COND_GE,
                                              tb_insns, pace_chunk, 0);
#else
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
#endif
}

void pace_stop(void) { pace_end = now_ns(); }

/* The pacing part of MODEL end: R, the fidelity events and their lag, per hart as "a/b/..." too, the time slept
   and the paced span (model_pace_start to the report). */
int pace_report(char *buf, size_t len)
{
    uint64_t events = 0, lag = 0, slept = 0;
    char per_ev[4 * 64 * 8], per_lag[4 * 64 * 8];
    size_t ne = 0, nl = 0;
    per_ev[0] = per_lag[0] = 0;
    for (int c = 0; c < nvcpus; c++) {
        struct pace_hart *h = &vcpus[c].pace;
        events += h->count.events, lag += h->count.lag_ns, slept += h->slept_ns;
        if (ne < sizeof per_ev - 24)
            ne += snprintf(per_ev + ne, sizeof per_ev - ne, "%s%lu", c ? "/" : "", h->count.events);
        if (nl < sizeof per_lag - 24)
            nl += snprintf(per_lag + nl, sizeof per_lag - nl, "%s%lu", c ? "/" : "", h->count.lag_ns / 1000);
    }
    uint64_t t0 = __atomic_load_n(&pace_t0, __ATOMIC_ACQUIRE);
    return snprintf(buf, len, " pace=%lu pace_events=%lu pace_lag_us=%lu pace_slept_us=%lu pace_span_us=%lu "
                    "pace_bound_us=%lu pace_hart_events=%s pace_hart_lag_us=%s",
                    pace.rate, events, lag / 1000, slept / 1000, t0 ? (pace_end - t0) / 1000 : 0,
                    pace.bound_ns / 1000, per_ev, per_lag);
}

/* After the arguments: a paced machine's cycle, its check interval and its instruction counter. */
int pace_install(uint64_t start_at, uint64_t mark_lo, uint64_t mark_hi, char *err, size_t errlen)
{
    if (!pace.rate)
        return 0;
    if (pace_rate_ok(pace.rate, err, errlen))
        return -1;
    if (!start_at || !mark_lo || mark_hi <= mark_lo) {
        snprintf(err, errlen, "pace= needs pace_at=, mark_lo= and mark_hi= (the kernel's model_pace_start and "
                              "trace_model_rec; make qemu MODEL=... and the harness pass them)");
        return -1;
    }
    if (pace.lead_ns < PACE_LEAD_NS_MIN || pace.lead_ns > PACE_LEAD_NS_MAX) {
        snprintf(err, errlen, "pace_lead_us=%lu is out of range: %d..%d", pace.lead_ns / 1000,
                 PACE_LEAD_NS_MIN / 1000, PACE_LEAD_NS_MAX / 1000);
        return -1;
    }
    cycle_ps = 1000000000000UL / pace.rate;
    pace_chunk = pace.rate * pace.lead_ns / 4000000000UL; /* a quarter of the lead between checks */
    if (pace_chunk < 16)
        pace_chunk = 16;
#if MODEL_QEMU_API >= 2
    tb_insns = (qemu_plugin_u64){ qemu_plugin_scoreboard_new(sizeof(uint64_t)), 0 };
#endif
    return 0;
}
