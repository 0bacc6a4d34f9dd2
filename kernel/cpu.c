/*
 * cpu.c - the hart table (cpu.h): one struct cpu per hart, numbered and filled in by boot_main. A leaf
 * (LAYERS.md): every layer reads it (the interrupt code, the trace, the core), so it is defined below them
 * all rather than in the core; which fields are whose, and under which lock, is in cpu.h.
 */
#include "cpu.h"

struct cpu cpus[SL_MAX_HARTS];
int ncpus;
int harts_recalled;
void (*recall_hook)(void);
