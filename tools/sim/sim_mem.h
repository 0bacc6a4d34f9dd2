/*
 * sim_mem.h - memory in the simulator (issue 28): the QEMU plugin's own cache model (tools/model/cache.c,
 * linked as is) fed by the same profile files (tools/model/profiles/<name>.conf), driven by the lines the
 * app models say each unit of work touches (tools/sim/apps, sim_touch.c), charged in simulated time with the profile's
 * latencies.
 *
 * The model (read this first)
 *   caches     line level, per hart, exactly as the plugin has them (private L1/L2 per hart, an LLC per
 *              node, a directory for coherence on stores by another hart, NUMA local/remote memory).
 *              Why line level and not a reload-transient model (Thiebaut & Stone 1987): the plugin is line
 *              level, so validating one against the other needs the same mechanism, and a process that
 *              loses its hart loses exactly the lines the next one evicts - the footprint loss falls out of
 *              the caches themselves, for any mix, with no fitted parameter. The cost is one model_access
 *              per line touched (not per word): cheap enough for 16-64 harts (--stats prints it).
 *   when       a compute segment's touches run through the caches of the hart it starts on, all at its
 *              start, and their stall is added to the segment (a preempted segment keeps its stall; the
 *              lines it would have touched after the preemption are touched before it).
 *   words      a line's first word goes through the model; the other words of the line hit L1 if there
 *              is one (0 cycles), and are served where the first was if there is not (butterfly: every
 *              word to memory). accesses= counts words; a miss counts per line with an L1, per word
 *              without (as the plugin, which sees every word, counts them). So without an L1 every word
 *              the compiled loop loads or stores counts, each time: the app models touch the words the
 *              riscv64 objdump of the app's loop shows per element (mem_touch_every: strided and repeated
 *              words; a reload of a local from process 0's frame, touch_frame), not the rows once.
 *   time       a cycle is cycle_ps picoseconds: --cycle-ps, else SIM_CYCLE_PS_DEFAULT (the plugin
 *              measures QEMU's time per instruction at boot - BOOT's cycle_ps= - the simulator cannot, so
 *              it takes it as given; `schedlab validate` passes the QEMU boot's).
 *   start-up   the pages the kernel zeroes in the job's own system calls - the library's heap, the further
 *              processes' stacks, page-table pages - on the hart and node that zero them (sim_start.c): on
 *              QEMU they are most of a job's misses. The kernel's own lines (trap frames, kernel stacks,
 *              the scheduler's) at ticks and switches: sim_kernel.c.
 *   memory     a job's arrays are placed where the app places them: sl_malloc/sl_alloc_node(-1) on the node
 *              of the hart its process runs on at the time (the kernel's sys_alloc), per-node bump
 *              allocation in RAM split evenly between nodes as the plugin splits it. A worker's own block
 *              (gauss home=own's rows, the hog's ws=; sim_touch.c touch_own) on the node of the hart the
 *              worker ran on when it allocated it: whoever touches it later pays local or remote by that
 *              node, as the plugin charges an address by the node whose RAM holds it.
 */
#ifndef SIM_MEM_H
#define SIM_MEM_H
#include <stdint.h>
#include <stdio.h>

#define SIM_CYCLE_PS_DEFAULT 1500 /* ~QEMU TCG's time per guest instruction on the calibration host */

/* Set up the model from spec "<profile>[,key=value...]" (profile: a name in profile_dir, as the harness's
   --model takes it). 0, or -1 with a message naming the profile or key. */
/* --profile-values: the profile file at path as --model reads it, one key=value line per key in
   model_param_keys' order (nothing clamped); -1 with a message. Its test: tests/test_profiles.py. */
int mem_profile_values(const char *path, FILE *out, char *err, size_t errlen);
int mem_init(const char *spec, const char *profile_dir, int harts, uint64_t mem_mb, uint64_t cycle_ps,
             char *err, size_t errlen);
int mem_on(void);                 /* a model is in use */
const char *mem_canonical(void);  /* the canonical spec (every key, nodes clamped), for BOOT's model= */
uint64_t mem_cycle_ps(void);
int mem_nodes(void);
int mem_node_of_hart(int hart);

/* bytes of RAM for job (1..) on node (-1: node 0); the physical address of its first byte (line aligned). */
uint64_t mem_alloc(int job, uint64_t bytes, int node);

/* Job job's process on hart reads (store 0) or writes (store 1) bytes from pa in elem_b-byte words;
   returns the stall in simulated ns (0 without a model). */
uint64_t mem_touch(int job, int hart, uint64_t pa, uint64_t bytes, int elem_b, int store);
/* count words at pa, pa + stride, ... (stride 0: count words of the one line holding pa - the word at pa
   again and again, or a gather the caller grouped by line; words aligned, stride 0 or at least a word);
   the words of one line count as mem_touch's do. Stall ns. */
uint64_t mem_touch_every(int job, int hart, uint64_t pa, uint64_t count, uint64_t stride, int store);
/* count read-modify-writes (a load and a store of one word: x++) at pa, pa + stride, ...: two accesses a word,
   one lookup as a store (a load's miss then the store's hit leave the caches and the directory as a store's
   miss does, and count the same). Stall ns. */
uint64_t mem_touch_rmw(int job, int hart, uint64_t pa, uint64_t count, uint64_t stride);
int mem_deterministic(void); /* charge=off: the plugin's deterministic mode, whose clock is instructions */
int mem_line_b(void); /* the profile's line, bytes (64 without a model) */

/* The plugin's report (tools/model/README.md, "What a boot under the model gets", 4): MODEL end, then one
   MODEL job= line per job that touched memory. */
void mem_report(FILE *f);
void mem_stats(FILE *f); /* --stats: the model's host cost */
void mem_free(void);

struct job;
struct sproc;
struct sim_app;

/* sim_start.c: a job's start-up, the pages the kernel zeroes on its behalf (its header) */
uint64_t start_heap_bytes(const struct sim_app *app, int procs); /* the library's heap, bytes */
void start_reset(struct job *j);                               /* a new run: no heap mapped yet */
uint64_t start_heap(struct sproc *sp);                          /* process 0's set-up: stall ns */
uint64_t start_heap_grow(struct job *j, int hart, uint64_t bytes); /* a SYS_alloc's page tables: stall ns */
uint64_t start_stack(struct sproc *creator, struct sproc *p);   /* proc_create of p: stall ns */
void start_stats(FILE *f);                                      /* --stats: what was zeroed per job */
uint64_t start_dispatch(struct sproc *sp, int hart);            /* its kernel state read: stall ns */
void start_leave(struct sproc *sp, int hart);                   /* its kernel state written */
uint64_t start_kstate(struct sproc *sp);                        /* its trap frame and context's address */

/* sim_kernel.c: the kernel's own lines at a trap and a switch (its header has the measurement) */
void kern_tick(struct sproc *sp, int hart);                     /* a quantum tick taken by sp */
void kern_vclock(struct sproc *sp, int hart, uint64_t from, uint64_t to, int tick); /* deterministic traps */
void kern_leave(struct sproc *sp, int hart);                    /* sp leaves hart: its side, the pick */
uint64_t kern_dispatch(struct sproc *sp, int hart);             /* sp dispatched: its side, stall ns */

#endif
