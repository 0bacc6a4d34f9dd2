/* param.h - compile-time sizes of the kernel's tables. Usable from assembly. */
#ifndef PARAM_H
#define PARAM_H

#define KSTACK_SIZE   16384   /* per-hart scheduler stacks and per-process kernel stacks */
#define NHART_STACKS  64      /* = SL_MAX_HARTS (checked in main.c) */
#define NPROC         512     /* processes in the whole scenario at once */
#define NJOB          64      /* jobs in one scenario */
#define NFUTEX_BUCKET 64

/* struct trapframe offsets, shared with vectors.S (checked by static asserts in proc.h) */
#define TF_EPC        248
#define TF_KSP        256
#define TF_KTP        264
#define TF_SIZE       272

#endif
