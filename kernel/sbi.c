/* sbi.c - calls into OpenSBI (M-mode) with ecall: a7 = extension, a6 = function. */
#include "sbi.h"

#define SBI_EXT_TIME 0x54494D45
#define SBI_EXT_IPI  0x735049
#define SBI_EXT_HSM  0x48534D
#define SBI_EXT_SRST 0x53525354

struct sbiret sbi_call(long ext, long fid, long a0, long a1, long a2)
{
    register long r0 asm("a0") = a0;
    register long r1 asm("a1") = a1;
    register long r2 asm("a2") = a2;
    register long r6 asm("a6") = fid;
    register long r7 asm("a7") = ext;
    asm volatile("ecall" : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r6), "r"(r7) : "memory");
    return (struct sbiret){ r0, r1 };
}

void sbi_set_timer(uint64_t when) { sbi_call(SBI_EXT_TIME, 0, (long)when, 0, 0); }

void sbi_send_ipi(unsigned long mask, unsigned long base) { sbi_call(SBI_EXT_IPI, 0, (long)mask, (long)base, 0); }

long sbi_hart_start(unsigned long hartid, unsigned long start, unsigned long opaque)
{
    return sbi_call(SBI_EXT_HSM, 0, (long)hartid, (long)start, (long)opaque).error;
}

void sbi_hart_stop(void)
{
    sbi_call(SBI_EXT_HSM, 1, 0, 0, 0);
    for (;;) /* only if the firmware refused */
        asm volatile("wfi");
}

long sbi_hart_status(unsigned long hartid)
{
    struct sbiret r = sbi_call(SBI_EXT_HSM, 2, (long)hartid, 0, 0);
    return r.error ? r.error : r.value;
}

void sbi_shutdown(void) { sbi_call(SBI_EXT_SRST, 0, 0, 0, 0); }
