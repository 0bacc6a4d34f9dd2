/*
 * fdt.h - what the kernel keeps of the device tree. Pure data and one parser (fdt.c), which also
 * compiles for the host, where tests/host/test_fdt.c checks it on synthetic blobs (sparse hart ids, NUMA).
 */
#ifndef FDT_H
#define FDT_H

#include <stddef.h>
#include <stdint.h>
#include "schedlab/abi.h"

struct mem_region {
    uint64_t base, size;
    int node;
};

#define PLAT_MAX_MEM 16 /* /memory regions kept (kalloc.c has a cursor per region) */

struct platform {
    int nharts;
    uint64_t hartid[SL_MAX_HARTS];      /* hart index -> firmware hart id (ascending) */
    int hart_node[SL_MAX_HARTS];
    int nnodes;
    uint64_t timebase_hz;
    int nmem;
    struct mem_region mem[PLAT_MAX_MEM];
    int nresv;
    struct mem_region resv[16];         /* reserved-memory nodes and the device tree blob itself */
    const char *bootargs;               /* /chosen/bootargs, NUL-terminated, inside the blob ("" if none):
                                           the blob is reserved memory, so it stays valid and has no
                                           length limit of ours */
    int too_many_harts;                 /* the DT listed more than SL_MAX_HARTS harts */
    /* Interrupt hardware S-mode can drive itself, without the SBI (kernel/intr.c decides whether to). */
    int sstc;                           /* every hart's riscv,isa lists the Sstc extension (stimecmp) */
    uint64_t sswi_reg[SL_MAX_HARTS];    /* hart index -> the address of its setssip register in an ACLINT
                                           SSWI device ("riscv,aclint-sswi"), or 0 if none serves it */
    /* M-mode's, which only the firmware of deterministic boots (firmware/fw.c) uses: */
    uint64_t mswi_reg[SL_MAX_HARTS];    /* hart index -> its software interrupt register (ACLINT MSWI or a
                                           SiFive CLINT's msip), or 0 */
    uint64_t mtimecmp_reg[SL_MAX_HARTS]; /* hart index -> its timer compare register (ACLINT MTIMER or a
                                           CLINT's mtimecmp), or 0 */
};

/* Fill pl (zeroed by the caller) from the blob at dtb; 0, or -1 with err set. */
int fdt_parse(const void *dtb, struct platform *pl, char *err, size_t errlen);

#endif
