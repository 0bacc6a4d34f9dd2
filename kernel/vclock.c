/*
 * vclock.c - deterministic mode (clock=virtual): the hand-over of the host thread (the model is in vclock.h).
 */
#include "kernel.h"
#include "perturb.h"

int clock_virtual;

uint64_t vclock_timer(uint64_t when)
{
    if (!clock_virtual)
        return when;
    uint64_t soon = rdtime() + us_to_ticks(perturb_slice_us()); /* VCLOCK_SLICE_US, or perturb='s draw */
    return when < soon ? when : soon;
}

/* wfi needs SSIP enabled in sie to return; before the hart's scheduler starts (sched_start_hart) it is
   enabled just for the wfi. The kernel never sets sstatus.SIE, so no trap is taken in S-mode either way. */
void vclock_handover(void)
{
    int enabled = (csr_read(sie) & SIE_SSIE) != 0;
    csr_set(sip, SIP_SSIP);
    if (!enabled)
        csr_set(sie, SIE_SSIE);
    wfi();
    if (!enabled)
        csr_clear(sie, SIE_SSIE);
}

void vclock_relax(void)
{
    for (int n = perturb_relax(PS_LOCK); n > 0; n--)
        vclock_handover();
}
