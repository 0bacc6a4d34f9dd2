/*
 * wait_bounds.h - the constants of the waits that models of the library
 * must share: the simulator (tools/sim/sim_barrier.c) includes this file, so a
 * change here changes the simulated twophase wait too.
 */
#ifndef SL_WAIT_BOUNDS_H
#define SL_WAIT_BOUNDS_H

/* twophase's spin bound B, ns (wait_twophase.c says why this value). */
#define SL_TWOPHASE_SPIN_NS 20000u

/* adaptive's spin bound while every participant looks running: this many
   B (wait_adaptive.c says why). The simulator's adaptive wait does not
   model it yet (its harts never hold a participant that is not executing). */
#define SL_ADAPTIVE_SPIN_FACTOR 2u
#define SL_ADAPTIVE_SPIN_NS (SL_ADAPTIVE_SPIN_FACTOR * SL_TWOPHASE_SPIN_NS)

#endif
