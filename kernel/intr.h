/*
 * intr.h - how the kernel raises its own interrupts: each hart's timer, and software interrupts (IPIs)
 * to other harts. Two paths, chosen once at boot (intr_choose) and named on the BOOT line:
 *   direct  the timer through Sstc's stimecmp CSR, IPIs by a store to the target's ACLINT SSWI register:
 *           no trap into M-mode, on either side
 *   sbi     the SBI TIME and IPI extensions: an ecall into OpenSBI, which programs the M-mode timer or
 *           the MSWI and forwards the interrupt to S-mode when it arrives
 * Each of timer and IPI takes the direct path where the device tree says the hardware exists (and, for
 * Sstc, the firmware has let S-mode at stimecmp), unless the bootarg irq=sbi forces the SBI for both.
 */
#ifndef INTR_H
#define INTR_H
#include <stdint.h>

void intr_hart_init(void);          /* every hart, before it takes an interrupt: is stimecmp ours? */
extern int intr_force_sbi;          /* irq=sbi: timers and IPIs through the SBI; set through intr_configure */
static inline void intr_configure(int force_sbi) { intr_force_sbi = force_sbi; } /* boot hart, before intr_choose */
void intr_choose(void);             /* the boot hart, once every hart has run intr_hart_init */
void intr_set_timer(uint64_t when); /* this hart's next timer interrupt, at `time` = when */
void intr_send_ipi(uint64_t mask);  /* a supervisor software interrupt to each hart index in mask */
const char *intr_timer_path(void);  /* "sstc" or "sbi" */
const char *intr_ipi_path(void);    /* "sswi" or "sbi" */

#endif
