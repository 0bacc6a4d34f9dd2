/*
 * riscv.h - CSR access and the bits of the privileged architecture the kernel uses.
 * Constants only: the instructions that read and write them are in rvasm.h (which the simulator,
 * tools/sim, replaces with its own hart).
 */
#ifndef RISCV_H
#define RISCV_H

#include <stdint.h>


/* sstatus */
#define SSTATUS_SIE   (1UL << 1)
#define SSTATUS_SPIE  (1UL << 5)
#define SSTATUS_SPP   (1UL << 8)
#define SSTATUS_FS    (3UL << 13)
#define SSTATUS_FS_OFF     (0UL << 13)
#define SSTATUS_FS_INITIAL (1UL << 13)
#define SSTATUS_FS_CLEAN   (2UL << 13)
#define SSTATUS_FS_DIRTY   (3UL << 13)
#define SSTATUS_SUM   (1UL << 18)

/* sie / sip */
#define SIE_SSIE (1UL << 1)
#define SIE_STIE (1UL << 5)
#define SIP_SSIP (1UL << 1)
#define SIP_STIP (1UL << 5)

/* scause */
#define SCAUSE_INTR (1UL << 63)
#define IRQ_S_SOFT  1
#define IRQ_S_TIMER 5
#define EXC_INST_MISALIGNED 0
#define EXC_INST_ACCESS     1
#define EXC_ILLEGAL         2
#define EXC_BREAKPOINT      3
#define EXC_LOAD_MISALIGNED 4
#define EXC_LOAD_ACCESS     5
#define EXC_STORE_MISALIGNED 6
#define EXC_STORE_ACCESS    7
#define EXC_ECALL_U         8
#define EXC_INST_PAGE_FAULT 12
#define EXC_LOAD_PAGE_FAULT 13
#define EXC_STORE_PAGE_FAULT 15

/* Sv39 */
#define PAGE_SIZE 4096UL
#define PAGE_SHIFT 12
#define PTE_V (1UL << 0)
#define PTE_R (1UL << 1)
#define PTE_W (1UL << 2)
#define PTE_X (1UL << 3)
#define PTE_U (1UL << 4)
#define PTE_G (1UL << 5)
#define PTE_A (1UL << 6)
#define PTE_D (1UL << 7)
#define SATP_SV39 (8UL << 60)
#define PTE2PA(pte) (((pte) >> 10) << 12)
#define PA2PTE(pa) ((((uint64_t)(pa)) >> 12) << 10)
#define VPN(va, level) ((((uint64_t)(va)) >> (12 + 9 * (level))) & 0x1ff)

#endif
