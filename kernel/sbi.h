/* sbi.h - the few SBI calls the kernel makes (SBI v0.2+ extensions TIME, IPI, HSM, SRST). */
#ifndef SBI_H
#define SBI_H
#include <stdint.h>

struct sbiret { long error; long value; };

struct sbiret sbi_call(long ext, long fid, long a0, long a1, long a2);
void sbi_set_timer(uint64_t when);
void sbi_send_ipi(unsigned long hart_mask, unsigned long hart_mask_base);
long sbi_hart_start(unsigned long hartid, unsigned long start, unsigned long opaque);
long sbi_hart_status(unsigned long hartid);
void sbi_hart_stop(void) __attribute__((noreturn)); /* HSM: this hart parks in the firmware until a hart_start */
void sbi_shutdown(void);

#endif
