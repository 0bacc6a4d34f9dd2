/*
 * sim_start.c - a job's start-up in memory (issue 28, item 3): the pages the kernel zeroes on the job's
 * behalf, which QEMU's plugin counts as the job's misses, and its processes' kernel state at their switches
 * (sim_mem.h has the cache model).
 *
 * What the plugin charges a job (tools/model/plugin.c, "Attribution"): every access a hart makes between the
 * kernel's mark of the job's dispatch and the mark of its leaving - the app, the library and the kernel's
 * system calls and traps on its behalf. Measured on deterministic QEMU with a plugin that split each job's
 * misses by where they went (user addresses, the kernel's image, page frames; the numbers are in
 * docs/notes/startup-misses.md), most of a job's misses that its arrays do not explain are stores to page frames:
 * the kernel's memset of every page it maps for the job inside the job's own system calls. The job's
 * admission (its address space, info page, the image's copy and process 0's stack) runs on the launcher's
 * hart outside any process (job 0), so it is not the job's. So, at line level as everything else:
 *
 *   heap     the library's memory (lib/base/alloc.c: a 64 KiB chunk per size class in use, big blocks
 *            straight from SYS_alloc; the workers' run and their SL_THREAD_STACK thread stacks), zeroed by
 *            sys_alloc on the caller's node. Its size is the app's heap_kb (below): QEMU's mem_kb
 *            less the processes' stacks and the arrays the app models zero themselves, measured
 *            per app (the table says how; tests/test_sim_startup.py checks it against QEMU). All of it is
 *            zeroed by process 0 in its set-up, after the app's arrays (sim_program.c), on its
 *            hart (the workers' thread stacks really are taken by each process at its start: the same
 *            lines, another hart - which only moves a coherence miss).
 *   stacks   each further process's SL_STACK_SIZE stack (kernel/proc.c proc_create, in process 0's
 *            proc_create system call), zeroed on process 0's hart, on the node of the hart the new process
 *            is bound to (node 0 if none).
 *   tables   a page of the job's page table (kernel/vm.c zalloc: node 0, zeroed) for each 2 MiB of user
 *            addresses a mapping reaches first: the heap's from SL_HEAP_VA up, and the stacks' windows
 *            (SL_STACK_STRIDE apart below SL_STACK_TOP: a new one every second process). The 1 GiB table
 *            above them is made at admission (the info page's).
 * The stall of the zeroing goes into process 0's set-up and proc_create segments, before the apps start
 * their clocks (par_us), as on QEMU.
 *
 * And after the start, the job's part of the kernel's own data that is per process (bottom of this file):
 *   switches  each process's trap frame and context (the head of its struct proc), read by the hart that
 *            dispatches it and written by the hart it leaves.
 *
 * The kernel's stacks and shared words at ticks and switches are sim_kernel.c's. Not modelled: the traps'
 * re-misses where the app's arrays sweep the kernel's lines out of a
 * direct-mapped cache between traps, as iris's L2: 3-7 % of a job's misses there, with the trap frame; on
 * QEMU a hog time-sliced on 2 harts pays 20-45 % of its misses in the kernel), where each page sits in
 * physical memory (so no conflicts of the job's arrays with the image, stacks and page tables QEMU's
 * allocator puts beside them in a direct-mapped cache: iris's L2, Gauss at 1 hart 14 % of its misses,
 * README's validation), the library's after its
 * start (barrier words, user stacks: about 350 lines a further process), code fetches (the plugin does not
 * count them), and the image's copy and process 0's stack (job 0's, see above).
 */
#include <stddef.h>
#include <string.h>
#include "sim.h"
#include "sim_mem.h"

/* lib/threads/uthread.h's SL_THREAD_STACK on the kernel target (this file builds for the host, where it is 4x) */
#define KERNEL_THREAD_STACK (16 * 1024)
#define KSTATE_B offsetof(struct proc, job) /* a process's kernel state at a switch: trap frame, context */
#define PT_SPAN (2UL << 20) /* user addresses one page-table page maps (Sv39 level 0: 512 x 4 KiB) */

/* The library's heap per app, KiB = the app's heap_kb + KERNEL_THREAD_STACK per process if it runs workers
   (struct sim_app: each app's file says what it measured). Measured on this build: `tools/schedlab run
   --deterministic --cpus 2 -v job=<app>:procs=P,...`, RESULT's mem_kb less 64 KiB per process (the stacks)
   less the arrays the app's model zeroes itself (gauss's matrix, sor's two grids, oddeven's keys, each in
   whole pages), at P = 1, 2, 4: each app's base and 16 KiB a process (its worker's thread stack). The size
   classes a job's small blocks fall in take 64-128 KiB less of gauss's below n=128 and a P beyond the
   harts reuses freed thread stacks (synth P=8 on 2 harts: 284, not 344): exact for the validated cases
   (n=256, P <= 4), within a chunk elsewhere. An app whose model allocates its arrays and the allocator's
   chunks itself (tclosure, adjoint) takes its footprint from the misses instead (its file says how); one
   not measured declares none (knary, chaos, the thread apps: 0). */
enum { Z_HEAP, Z_STACK, Z_TABLE, NZ }; /* what a zeroed page was for */

static struct {
    uint64_t heap_va;  /* user heap bytes mapped so far (from SL_HEAP_VA) */
    uint64_t zeroed[NZ]; /* bytes of pages zeroed for the job, by kind (--stats) */
} sj[NJOB];

/* The library's heap bytes for app with procs processes. */
uint64_t start_heap_bytes(const struct sim_app *app, int procs)
{
    return ((uint64_t)app->heap_kb << 10) + (app->workers ? KERNEL_THREAD_STACK * (uint64_t)procs : 0);
}

/* bytes of fresh pages for job on node, zeroed by hart (the kernel's memset: 8-byte stores). Stall ns. */
static uint64_t zero_pages(struct job *j, int hart, int node, uint64_t bytes, int kind)
{
    uint64_t pages = (bytes + 4095) & ~4095UL, at = mem_alloc(j->id, pages, node);
    sj[j->id - 1].zeroed[kind] += pages;
    return mem_touch(j->id, hart, at, pages, 8, 1);
}

/* The job's heap grows by bytes (a SYS_alloc by hart): the page-table pages its new 2 MiB spans need. */
uint64_t start_heap_grow(struct job *j, int hart, uint64_t bytes)
{
    uint64_t *va = &sj[j->id - 1].heap_va, before = (*va + PT_SPAN - 1) / PT_SPAN, ns = 0;
    *va += (bytes + 4095) & ~4095UL;
    for (uint64_t t = before; t < (*va + PT_SPAN - 1) / PT_SPAN; t++)
        ns += zero_pages(j, hart, 0, 4096, Z_TABLE);
    return ns;
}

/* A new run of job j: nothing of its heap mapped or zeroed yet (before process 0's set-up's first mapping). */
void start_reset(struct job *j) { memset(&sj[j->id - 1], 0, sizeof sj[0]); }

/* Process 0's set-up: the library's heap, on its hart's node, after the app's arrays (sim_program.c
   resets first and the app's model zeroes those). Stall ns. */
uint64_t start_heap(struct sproc *sp)
{
    struct job *j = sp->p.job;
    if (!mem_on() || !sp->p.on_cpu || sp->p.idx != 0)
        return 0;
    uint64_t bytes = start_heap_bytes(sjob_of(j)->app, j->nprocs);
    if (!bytes)
        return 0;
    int h = sp->p.on_cpu->id;
    return start_heap_grow(j, h, bytes) + zero_pages(j, h, mem_node_of_hart(h), bytes, Z_HEAP);
}

/* The lowest 2 MiB span process idx's stack reaches. */
static uint64_t stack_span(int idx)
{
    return (SL_STACK_TOP - (uint64_t)idx * SL_STACK_STRIDE - SL_STACK_SIZE) / PT_SPAN;
}

/* Process 0 (creator) has just created p (proc_create): p's stack, and its window's page-table page when
   no earlier process's stack shares the span. Stall ns. */
uint64_t start_stack(struct sproc *creator, struct sproc *p)
{
    struct job *j = creator->p.job;
    if (!mem_on() || !creator->p.on_cpu || !p || p->p.idx <= 0)
        return 0;
    int h = creator->p.on_cpu->id, node = p->p.hart >= 0 ? mem_node_of_hart(p->p.hart) : 0;
    uint64_t ns = zero_pages(j, h, node, SL_STACK_SIZE, Z_STACK);
    if (stack_span(p->p.idx) != stack_span(p->p.idx - 1))
        ns += zero_pages(j, h, 0, 4096, Z_TABLE);
    return ns;
}

/* --stats: per job that had any, its heap (the library's and the arrays the app's model allocates: QEMU's mem_kb
   less the processes' stacks), the further processes' stacks and the page-table pages, all zeroed on its
   behalf. */
void start_stats(FILE *f)
{
    fprintf(f, "sim: kernel state %zu bytes a process (its trap frame and context)\n", KSTATE_B);
    for (int i = 0; i < NJOB; i++) {
        uint64_t *z = sj[i].zeroed;
        if (sj[i].heap_va + z[Z_STACK] + z[Z_TABLE])
            fprintf(f, "sim: start-up job=%d heap_kb=%lu stacks_kb=%lu table_pages=%lu\n", i + 1,
                    sj[i].heap_va >> 10, z[Z_STACK] >> 10, z[Z_TABLE] >> 12);
    }
}

/* ---- the kernel's state of a process, at its switches ----
 * A process's trap frame and context (kernel/proc.h: the head of struct proc, KSTATE_B bytes of the kernel's
 * own layout) are read by the hart that dispatches it (swtch loads the context, the way back to user the trap
 * frame) and written by the hart it leaves (the trap's entry, swtch) - under the job's mark on QEMU both. They
 * live in the kernel's procs[] (node 0); a process that changes harts meets them in the other hart's cache:
 * coherence misses. The rest of struct proc (FP registers, saved only when dirty, the policy's words) is
 * left out: with it, global's blocking synth (procs=3 on 2 harts) missed 2x QEMU's there; with the head only,
 * the job's misses are 20 % over QEMU's, whose user-level misses (barrier words) are not modelled. */
static uint64_t kstate_pa[NJOB][SL_MAX_PROCS];

/* sp's trap frame and context: the first KSTATE_B bytes (sim_kernel.c's ticks save the frame there too). */
uint64_t start_kstate(struct sproc *sp)
{
    uint64_t *pa = &kstate_pa[sp->p.job->id - 1][sp->p.idx];
    if (!*pa)
        *pa = mem_alloc(sp->p.job->id, KSTATE_B, 0);
    return *pa;
}

/* sp is dispatched on hart: stall ns (it goes before the process's own work). */
uint64_t start_dispatch(struct sproc *sp, int hart)
{
    if (!mem_on())
        return 0;
    return mem_touch(sp->p.job->id, hart, start_kstate(sp), KSTATE_B, 8, 0);
}

/* sp leaves hart: its state saved there. The stall is the hart's on its way to the next dispatch, and is
   left out of simulated time (a few lines a switch). */
void start_leave(struct sproc *sp, int hart)
{
    if (mem_on())
        mem_touch(sp->p.job->id, hart, start_kstate(sp), KSTATE_B, 8, 1);
}
