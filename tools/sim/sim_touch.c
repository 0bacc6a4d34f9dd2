/*
 * sim_touch.c - the memory every app model's touches start from (sim_mem.h has the memory model; each app's
 * own touches are in its file, tools/sim/apps/<app>.c):
 *
 *   array    the job's array, allocated by process 0 in its set-up, on the node of the hart it runs on then
 *            (sl_malloc: the kernel's sys_alloc with node -1, the caller's hart's node), and zeroed there as
 *            the kernel zeroes the pages it maps. A hart that once held a line another hart wrote since
 *            finds its tag with the directory bit clear: a coherence miss, as on QEMU (cache.h).
 *   frame    process 0's stack frame: main's locals, which the compiled loops reload from memory where a
 *            store through a pointer may alias them.
 *   stack    each process's own stack, where its library calls save registers.
 *   pages    fresh pages of the job's (sys_alloc), zeroed by the allocating hart.
 *   own      a worker's own block (sl_alloc_node(bytes, -1) by the worker, from the node of the hart it runs
 *            on when it allocates): gauss's home=own rows and pivot buffer, the hog's ws= working set. Kept
 *            per worker, so another worker finds it where its owner put it (a remote node on butterfly).
 */
#include <string.h>
#include "sim.h"
#include "sim_kit.h"
#include "sim_mem.h"

static struct {
    uint64_t base;  /* the job's array; 0 until the first touch */
    uint64_t frame; /* process 0's stack frame (touch_frame); 0 until the first touch */
} tj[NJOB];

static uint64_t own_block[NJOB][SL_MAX_PROCS]; /* touch_own: worker idx's block, 0 until allocated */

void touch_setup(struct job *j)
{
    tj[j->id - 1].base = tj[j->id - 1].frame = 0;
    memset(own_block[j->id - 1], 0, sizeof own_block[0]);
}

/* The job's array of bytes; allocated at first use, and zeroed then as the kernel's sys_alloc zeroes every
   page it maps, on the allocating hart (process 0's if it runs, else hart) and counted as the job's (QEMU's
   marks say the job while its process is in a system call): *zero_ns gets that stall (0 if it existed). */
uint64_t touch_array_at(struct job *j, uint64_t bytes, int hart, uint64_t *zero_ns)
{
    *zero_ns = 0;
    if (!tj[j->id - 1].base) {
        struct proc *p0 = j->procs[0];
        int h = p0 && p0->on_cpu ? p0->on_cpu->id : hart;
        uint64_t pages = (bytes + 4095) & ~4095UL;
        tj[j->id - 1].base = mem_alloc(j->id, pages, mem_node_of_hart(h));
        *zero_ns = start_heap_grow(j, h, pages) + mem_touch(j->id, h, tj[j->id - 1].base, pages, 8, 1);
    }
    return tj[j->id - 1].base;
}

uint64_t touch_array_base(struct job *j) { return tj[j->id - 1].base; }

/* Process 0's stack frame: main's locals (sor's struct sor and its stream's state, tclosure's struct tc),
   which the compiled loops reload from memory where a store through a pointer may alias them. Its page is
   mapped at the job's admission (the launcher's, job 0's, as QEMU counts it: not zeroed here), on the node
   of process 0's hart. The address of the frame's first line; a model touches the words it reloads. */
uint64_t touch_frame(struct job *j)
{
    if (!tj[j->id - 1].frame) { /* main's locals at the page's last KB, the calls below them */
        struct proc *p0 = j->procs[0];
        tj[j->id - 1].frame = mem_alloc(j->id, 4096, mem_node_of_hart(p0 && p0->on_cpu ? p0->on_cpu->id : 0)) + 3072;
    }
    return tj[j->id - 1].frame;
}

/* Process sp's own stack, where its library calls save registers: for process 0 the frame's page 1 KB below
   main's locals (the worker's calls run deeper in the same stack: never main's lines, which the other
   processes read), a page of its own for a further process (its stack's top, zeroed at its creation by
   sim_start.c's start_stack; here another page of the job's on its bound hart's node: only its first touch
   differs). */
static uint64_t stack_top[NJOB][SL_MAX_PROCS];

uint64_t touch_stack(struct sproc *sp)
{
    struct job *j = sp->p.job;
    if (sp->p.idx <= 0)
        return touch_frame(j) - 1024;
    uint64_t *pa = &stack_top[j->id - 1][sp->p.idx];
    if (!*pa)
        *pa = mem_alloc(j->id, 4096, mem_node_of_hart(sp->p.hart >= 0 ? sp->p.hart : 0));
    return *pa;
}

/* Two arrays walked side by side, a word of each in turn (memcpy's word loop: a load of src, a store to dst;
   memcmp's bytes of a cell of each): line by line, src's then dst's, so the two streams' misses interleave
   as the compiled loop's do. src_b, dst_b: the element each side is accessed in. Stall ns. */
uint64_t touch_zip(int job, int h, uint64_t src, int src_b, uint64_t dst, int dst_b, int store, uint64_t bytes)
{
    uint64_t step = (uint64_t)mem_line_b(), ns = 0;
    for (uint64_t o = 0; o < bytes; o += step) {
        uint64_t len = bytes - o < step ? bytes - o : step;
        ns += mem_touch(job, h, src + o, len, src_b, 0) + mem_touch(job, h, dst + o, len, dst_b, store);
    }
    return ns;
}

/* A model's own arrays as one region of bytes, kept in *base: allocated at first use, on hart h's node, and
   zeroed there (the kernel's sys_alloc); *zero gets that stall (0 if it existed). */
uint64_t touch_region(struct job *j, int h, uint64_t bytes, uint64_t *base, uint64_t *zero)
{
    *zero = 0;
    if (!*base) {
        *base = mem_alloc(j->id, bytes, mem_node_of_hart(h));
        *zero = mem_touch(j->id, h, *base, bytes, 8, 1);
    }
    return *base;
}

/* bytes allocated on hart h's node and zeroed there by the hart as the kernel's sys_alloc does; *ns gets the
   stall. */
uint64_t touch_alloc_zeroed(struct job *j, int h, uint64_t bytes, uint64_t *ns)
{
    uint64_t pages = (bytes + 4095) & ~4095UL, a = mem_alloc(j->id, pages, mem_node_of_hart(h));
    *ns += mem_touch(j->id, h, a, pages, 8, 1);
    return a;
}

/* Worker idx's own block of bytes: at its first use allocated from hart h's node and zeroed there by the
   kernel (sl_alloc_node(bytes, -1): whole pages; *ns gets the stall), after that where it was put, whoever
   asks. */
uint64_t touch_own(struct job *j, int idx, int h, uint64_t bytes, uint64_t *ns)
{
    uint64_t *pa = &own_block[j->id - 1][idx];
    if (!*pa)
        *pa = touch_alloc_zeroed(j, h, bytes, ns);
    return *pa;
}

/* Worker idx's own block, 0 if it has none yet. */
uint64_t touch_own_base(struct job *j, int idx) { return own_block[j->id - 1][idx]; }
