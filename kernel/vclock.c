/*
 * vclock.c - deterministic mode (clock=virtual): the hand-over of the host thread (the model is in vclock.h).
 */
#include "kernel.h"
#include "perturb.h"
#include "cpu.h"

int clock_virtual;

/* Where each hart's next slice ends in its window (vclock.h "The slices"): a generator per hart, seeded by
   its index, so a boot's draws are the same every time. Written by its own hart only. */
static uint64_t slice_draw[SL_MAX_HARTS];

/* The end of this hart's slice after now: a point drawn in the window of its own phase of a grid all harts
   share (hart h's window is the h-th ncpus-th of a slice), at most a slice away. Perturbed boots draw each
   slice's length instead (perturb.h). */
static uint64_t slice_end(uint64_t now)
{
    if (perturb_on)
        return now + us_to_ticks(perturb_slice_us());
    int h = mycpu()->id;
    uint64_t slice = us_to_ticks(VCLOCK_SLICE_US), width = slice / (uint64_t)ncpus;
    uint64_t t = now + 1, phase_end = slice * (uint64_t)(h + 1) / (uint64_t)ncpus;
    if (!slice_draw[h])
        slice_draw[h] = (uint64_t)h + 1;
    uint64_t end = t + (phase_end + slice - t % slice) % slice; /* the window's end: t <= end < t + slice */
    uint64_t at = end - perturb_next(&slice_draw[h]) % (width ? width : 1);
    return at >= t ? at : at + slice;
}

uint64_t vclock_timer(uint64_t when)
{
    if (!clock_virtual)
        return when;
    uint64_t soon = slice_end(rdtime());
    return when < soon ? when : soon;
}

/* wfi needs SSIP enabled in sie to return; before the hart's scheduler starts (sched_start_hart) it is
   enabled just for the wfi. The kernel never sets sstatus.SIE, so no trap is taken in S-mode either way.
   Back from it, SSIP is ours unless an IPI marked this hart (vclock.h "The hand-over"): cleared, then put
   back if the mark is there. drawn: a perturbation's draw made it (perturb_hit), which the wait's timing traces. */
void vclock_handover(int drawn)
{
    int enabled = (csr_read(sie) & SIE_SSIE) != 0;
    uint64_t t0 = perturb_on ? rdtime() : 0; /* a perturbed boot times the wait (perturb.h, Starvation) */
    csr_set(sip, SIP_SSIP);
    if (!enabled)
        csr_set(sie, SIE_SSIE);
    wfi();
    csr_clear(sip, SIP_SSIP);
    if (__atomic_load_n(&mycpu()->ipi_sent, __ATOMIC_SEQ_CST)) /* after the clear: vclock.h */
        csr_set(sip, SIP_SSIP);
    if (!enabled)
        csr_clear(sie, SIE_SSIE);
    if (t0)
        perturb_handed_over(t0, drawn);
}

void vclock_relax(void)
{
    harts_recall_point(); /* a spinning hart may wait on one that has left the scenario already (cpu.h) */
    for (int n = perturb_relax(PS_LOCK); n > 0; n--)
        vclock_handover(0);
}
