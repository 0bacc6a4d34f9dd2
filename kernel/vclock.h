/*
 * vclock.h - deterministic mode: the scenario token clock=virtual.
 *
 * The model. `make qemu DETERMINISTIC=1` and `schedlab run --deterministic` boot QEMU with one host thread
 * for all harts (-accel tcg,thread=single) and an instruction counter for a clock (-icount shift=N,sleep=off),
 * and add clock=virtual to the bootargs: the guest cannot see QEMU's command line, so the token is how the
 * kernel learns the mode. Then the `time` CSR advances 2^N ns per instruction executed by any hart (harts
 * summed), an idle machine jumps to its next timer deadline, and the same scenario and seed give the same
 * console, trace dump included, byte for byte, on any host. Every time printed is virtual: BOOT says
 * clock=virtual and jobs see SL_INFO_VIRTUAL_CLOCK in their info page.
 *
 * The hand-over. QEMU's round-robin loop runs one hart at a time, each until its instruction budget ends
 * (the next timer deadline) or it halts. A hart spinning on a word that only another hart can change would
 * keep the host thread, and so the virtual clock, for its whole budget. `wfi` in S-mode ends the hart's
 * turn; with an enabled interrupt already pending the hart is runnable again at the next round. So
 * vclock_handover sets SSIP (S-mode may) and executes wfi. Back from it, it takes its own SSIP off again
 * unless a real IPI came meanwhile, which it cannot tell from its own by sip: so in this mode every sender
 * marks its targets first (cpu.ipi_sent, set before the IPI by intr_send_ipi, cleared by
 * sched_soft_interrupt before it clears SSIP and looks). A mark seen keeps SSIP pending for the hart's next
 * look at sip; a mark not yet made belongs to an IPI that sets SSIP after the hand-over cleared it. Either
 * way no IPI is lost, and a hand-over costs the hart no interrupt of its own: left pending, every hand-over
 * in the kernel made the next return to U-mode trap for a spurious IPI and take sched_lock for the policy's
 * IPI hook, and added race points that no schedule has. (An IPI
 * outranks the timer in the trap, so the trap and the idle loop still take a pending timer interrupt after
 * the IPI.) Spin waits call it only in this mode (vclock_pause): the normal spin path stays a plain load
 * and branch.
 *
 * Where it is used: the contended path of acquire() (spinlock.h), the boot waits (main.c), SYS_relax (the
 * library's spin pauses, lib/schedlab.h sl_cpu_relax), and the idle loop, which in this mode halts at once
 * instead of polling.
 */
#ifndef VCLOCK_H
#define VCLOCK_H

extern int clock_virtual; /* 1 with clock=virtual; set once, before the other harts start (vclock_configure) */

/* The launcher's hand-down of clock=virtual (launcher.c configure_layers), on the boot hart before the others
   start; read-only after. */
static inline void vclock_configure(int on) { clock_virtual = on != 0; }

/* End this hart's turn on the host thread; SSIP stays pending only for a real IPI. drawn: a perturbation draw's
   hand-over (perturb_hit), 0 for every other. */
void vclock_handover(int drawn);

/* The slices. Deterministic mode: a hart's timer fires at least every VCLOCK_SLICE_US of virtual time.
   QEMU's round-robin turns end at the next timer deadline of any hart; without this a compute-bound hart
   would run for up to a quantum while the harts of a synchronizing job wait for their turn (each barrier
   of oddeven beside a hog cost milliseconds of virtual time). The extra interrupts find no tick due and
   re-arm (sched_timer_interrupt).

   Since a turn lasts from one deadline to the next, where the harts' deadlines fall decides who gets the
   host thread. Deadlines armed at "now + slice" by harts whose turns follow one another by a few hundred
   instructions lock into a cluster, and a hart that arms none (in a long stretch with interrupts off: a
   policy's tick hook) then gets only the gap inside the cluster each round while the others run whole
   slices. So each hart's slice ends inside a window of its own on a grid all harts share (hart h's: the
   h-th ncpus-th of each slice), at a point drawn there from a per-hart generator: deadlines of different
   harts cannot cluster, and the draw keeps them from beating in step with a quantum that is a multiple of
   the slice (a fixed point in the window gave jobs unequal shares). The measurements are in
   docs/notes/deterministic-turns.md.

   A hart halted idle takes no turns, so it halts with its timer at its own next tick or deadline instead
   (sched/core.c idle_wait) and arms a slice again when it wakes: a slice timer there only woke it to halt
   again, and when every hart was idle each such wake-up was a jump of the clock that QEMU's main loop is
   woken for. */
#define VCLOCK_SLICE_US 100

uint64_t vclock_timer(uint64_t when); /* when, or earlier in deterministic mode */

void vclock_relax(void); /* a spin pause's hand-overs: one, or perturb='s draw (perturb.h) */

/* One pause of a kernel spin loop. */
static inline void vclock_pause(void)
{
    if (clock_virtual)
        vclock_relax();
}

#endif
