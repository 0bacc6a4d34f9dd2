/*
 * abi.h - the one contract between the schedlab kernel and U-mode code.
 *
 * Included by the kernel (kernel/) and by the user library (lib/). Everything a
 * job can ask of the kernel is here: the syscall numbers and their arguments,
 * the user address-space layout, the read-only job info page, and the app spec
 * that every app embeds so the kernel can validate its scenario keys at boot.
 *
 * Calling convention (like Linux on RISC-V): number in a7, arguments in a0..a5,
 * `ecall`, result in a0. A negative result is an error (SL_E*).
 * Every pointer argument is checked by the kernel: a bad one returns SL_EFAULT,
 * it never faults the kernel.
 */
#ifndef SL_ABI_H
#define SL_ABI_H

#include <stdint.h>

/* ---- syscalls ------------------------------------------------------------ */
#define SYS_exit        1  /* (int status): end the calling process; the job ends when its last process ends */
#define SYS_write       2  /* (const char *buf, uint64 len) -> bytes written, min(len, SL_WRITE_MAX): console output.
                              A short write: the caller writes the rest with more calls (the library loops).
                              One call's bytes are never interleaved with another writer's. len > 1 MiB is
                              SL_EINVAL; a buffer not wholly readable is SL_EFAULT and prints nothing. */
#define SYS_time        3  /* () -> the `time` CSR (ticks of info->timebase_hz); U-mode may also `rdtime` directly */
#define SYS_self        4  /* () -> index of the calling process within its job (0 = the first process) */
#define SYS_hart        5  /* () -> index 0..H-1 of the hart the caller runs on right now */
#define SYS_yield       6  /* () -> 0: give up the hart to the next ready process of the policy */
#define SYS_futex_wait  7  /* (uint32 *addr, uint32 expected, uint64 timeout_us) -> 0 when woken,
                              SL_EAGAIN if *addr != expected at the call, SL_ETIMEDOUT; timeout_us 0 = forever */
#define SYS_futex_wake  8  /* (uint32 *addr, uint32 n) -> number of processes woken (at most n) */
#define SYS_proc_create 9  /* (uint64 entry, uint64 arg) -> index of the new process, or SL_ELIMIT when the job
                              already has `procs` processes. The new process starts at entry with a0 = arg,
                              a1 = its index, sp = a fresh stack of SL_STACK_SIZE bytes, ra = 0 (returning faults:
                              call SYS_exit). It shares the job's address space. */
#define SYS_topology   10  /* (struct sl_topology *out) -> 0 */
#define SYS_alloc      11  /* (uint64 bytes, int node) -> user address of zeroed, page-aligned, read/write memory
                              from NUMA node `node` (-1 = the caller's node, falling back to any node), or SL_ENOMEM */
#define SYS_result     12  /* (int ok, const char *keys) -> 0: the job's verdict (ok != 0: check=ok) and extra
                              space-separated key=value pairs for its RESULT line (at most SL_RESULT_MAX bytes).
                              The last call wins. A job that ends without calling it is reported check=FAIL.
                              A key the kernel itself prints (job=, check=, reason=, ...) is refused: SL_EINVAL. */
#define SYS_relax      13  /* (int race) -> 0: race 0 is a spin-wait pause hint. With clock=virtual (deterministic
                              mode) it ends the hart's turn on QEMU's one host thread, so the harts it waits for
                              run; otherwise it returns at once. The library calls it from spin loops only when
                              the info page has SL_INFO_VIRTUAL_CLOCK. race 1..SL_RACE_NKINDS-1 (enum sl_race) is
                              a race point of a library protocol: a perturbed boot (perturb=) may hand the hart
                              over there; otherwise it returns at once. The library makes it only when the info
                              page has SL_INFO_PERTURBED. Any other race is SL_EINVAL. */
#define SYS_NSYSCALLS  14

/* The library's race points (SYS_relax's argument): where another process's step can fall into a protocol. */
enum sl_race {
    SL_RACE_PAUSE,    /* 0: not a race point - a spin pause */
    SL_RACE_SUSPEND,  /* process control: a vp published itself suspended, before it hands its threads away */
    SL_RACE_RESUME,   /* a vp marked another resumed, before the resume word and the wake */
    SL_RACE_FORWARD,  /* a pin inbox taken, before its threads are made ready elsewhere */
    SL_RACE_READY,    /* the ready threads' deque: a pop or a steal between reading an item and claiming it */
    SL_RACE_ARRIVE,   /* a barrier arrival, before the shape counts it */
    SL_RACE_RELEASE,  /* a waited word's release (sl_wait_set: a barrier's last arriver), before the store */
    SL_RACE_WAIT,     /* a wait's entry or exit */
    SL_RACE_NKINDS
};

/* ---- errors (negative return values) ------------------------------------- */
#define SL_EFAULT    (-1)   /* a pointer argument is not mapped user memory with the needed access */
#define SL_EINVAL    (-2)   /* an argument is out of range */
#define SL_EAGAIN    (-3)   /* futex value differed */
#define SL_ETIMEDOUT (-4)
#define SL_ENOMEM    (-5)
#define SL_ELIMIT    (-6)   /* the job already has its `procs` processes */
#define SL_ENOSYS    (-7)   /* unknown syscall number */

/* ---- limits --------------------------------------------------------------- */
#define SL_MAX_HARTS     64   /* hart masks are one uint64 */
#define SL_MAX_PROCS    128   /* processes per job */
#define SL_MAX_NODES      8   /* NUMA nodes */
#define SL_ARGS_MAX     256   /* the app-keys string in the info page */
#define SL_RESULT_MAX   400   /* extra RESULT keys from SYS_result */
#define SL_WRITE_MAX    512   /* bytes one SYS_write prints: bounds the time a hart spends in it (a byte can
                                 take 4 console characters) to that of one of the kernel's own lines */

/* ---- user address space (Sv39, one per job, shared by its processes) ------ */
#define SL_USER_BASE   0x40000000UL   /* user space is [SL_USER_BASE, SL_USER_TOP) */
#define SL_INFO_VA     0x40000000UL   /* the job info page, read-only */
#define SL_SYNC_VA     0x40008000UL   /* the library's sync statistics (policy=adaptive only): see "sync statistics" */
#define SL_TEXT_VA     0x40010000UL   /* apps are linked here (linker/app.ld) */
#define SL_ULOG_VA     0x47000000UL   /* the library's event logs (trace=on only): see "the library's event log" */
#define SL_HEAP_VA     0x48000000UL   /* SYS_alloc hands out memory upward from here */
#define SL_STACK_TOP   0x80000000UL   /* process i's stack ends at SL_STACK_TOP - i*SL_STACK_STRIDE */
#define SL_USER_TOP    0x80000000UL
#define SL_STACK_SIZE  (64 * 1024)
#define SL_STACK_STRIDE (1024 * 1024) /* a stack and the unmapped guard below it (960 KiB): an overrun faults */

/* ---- the job info page ----------------------------------------------------- */
/*
 * One page per job, mapped read-only at SL_INFO_VA and written by the kernel.
 * Fields marked "live" change while the job runs: read them with a volatile
 * access (the library's sl_info() pointer is volatile-qualified).
 */
#define SL_INFO_MAGIC 0x534c4946u  /* "SLIF" */
struct sl_info {
    uint32_t magic;
    uint32_t job_id;          /* 1-based, in scenario order */
    uint32_t nharts;          /* H: harts in the machine */
    uint32_t nprocs;          /* the job's `procs` key: how many processes it should create in all */
    uint32_t nnodes;          /* NUMA nodes (1 without -numa) */
    uint32_t flags;           /* SL_INFO_* */
    uint64_t timebase_hz;     /* frequency of the `time` CSR (10 MHz on QEMU virt) */
    uint64_t seed;            /* the scenario's seed=, mixed with the job id */
    uint64_t start_time;      /* `time` CSR value when the job was admitted */
    char     app[16];         /* the app's name */
    char     args[SL_ARGS_MAX];/* every app key, defaults filled in: "n=256,sync=barrier,barrier=spin" */
    uint8_t  hart_node[SL_MAX_HARTS]; /* NUMA node of each hart */
    /* live fields */
    uint32_t fg_live;         /* foreground (non-background) jobs of the scenario not yet finished */
    uint32_t allot_count;     /* harts the job may use now (partition allotment; H under other policies) */
    uint64_t allot_mask;      /* which harts those are */
    uint64_t allot_stamp;     /* `time` CSR when the allotment last changed (0: never): process control's reaction time */
    uint32_t running[SL_MAX_PROCS]; /* running[i] = 1 while process i is on a hart this instant */
    /* fixed again */
    uint32_t ulog_cap;        /* records in each process's event log (a power of two); 0: no logs (trace=off) */
    /* live again */
    uint32_t sync_timed;      /* SL_INFO_SYNCSTAT only: 1 while the kernel reads this job's wait times (its
                                 rule needs them in its regime now), 0 while it reads only barrier episodes;
                                 the library's waits time themselves only while it is 1 ("sync statistics") */
};
#define SL_INFO_BACKGROUND 1u  /* this job is a background job (its app spec says so) */
#define SL_INFO_ADAPTIVE   2u  /* this job adapts to its allotment (adapt=yes): process control */
#define SL_INFO_ULOG_CYCLES 8u   /* the event log's records carry the `cycle` CSR, not `time`: cheaper to read on
                                    QEMU; the kernel checked at boot that every hart's cycle runs in step with
                                    time and converts the records when it dumps them */
#define SL_INFO_VIRTUAL_CLOCK 4u /* deterministic mode (clock=virtual): the `time` CSR counts instructions of all
                                  harts (QEMU -icount, one host thread); spin loops hand the host thread over
                                  with SYS_relax */
#define SL_INFO_PERTURBED 32u    /* a perturbed deterministic boot (perturb=): the library's race points
                                    (sl_race_point) call SYS_relax with their kind */
#define SL_INFO_SYNCSTAT 16u     /* the kernel mapped the sync statistics page at SL_SYNC_VA (policy=adaptive) */

/* ---- sync statistics: the info page's reverse direction ---------------------- */
/*
 * Spinning is invisible to the kernel, so a policy that chooses per job between coscheduling and space
 * sharing (kernel/sched/adaptive/adaptive.c) needs the library to say how the job synchronizes. Where the info page
 * has SL_INFO_SYNCSTAT, one read/write page at SL_SYNC_VA holds one record per process (at SL_SYNC_OFFSET(i)); process i's
 * threads write record i (plain stores, no lock), each field only grows. The kernel reads each field once per
 * measurement window and trusts nothing: a record that runs backwards or claims more time than the window
 * had is clamped or ignored, and what a job writes there decides only its own regime (adaptive.c). How
 * much of a wait was asleep the kernel knows itself (the time a process blocks while in_wait): not published.
 * The waits (waits, wait_ticks, in_wait, wait_open) are counted only while the info page's sync_timed is
 * 1: the rule reads them only for a job in a gang row or time-sharing harts it cannot fold onto; a job
 * folded onto its partition (or dedicated harts) is judged by its episodes alone, and two time reads and
 * four atomics a wait were paid there for nothing.
 */
struct sl_sync {
    uint32_t episodes;        /* barrier arrivals by the workers this process ran (sl_barrier_wait), and the
                                 idle streaks of a run of placed threads (the process waits for its partners
                                 to give it work: lib/threads/uthread.c streak_begins); wraps */
    uint32_t waits;           /* waits of any object that reached a wait kind (barriers, flags, joins), and
                                 those idle streaks - where the streaks are published, they replace the
                                 threads' waits (the process runs other threads meanwhile); wraps */
    uint32_t in_wait;         /* waits in progress now (user-level threads may nest them): the kernel takes a
                                 process preempted while it is non-zero as preempted inside a wait, and its
                                 yields then as yields inside a wait (policy=adaptive counts them) */
    uint32_t units;           /* process 0's record: the pinned workers of the worker run in progress
                                 (sl_run_workers), 0 outside one; policy=adaptive allots a job whose workers
                                 synchronize by the rounds they fold into (allot.h ALLOT_ROUNDS) */
    uint64_t wait_ticks;      /* `time` CSR ticks inside those waits (spinning, asleep, parked, or preempted),
                                 each added when it ends */
    uint64_t wait_open;       /* `time` CSR when the outermost wait in progress began (in_wait went 0 -> 1),
                                 0 while none is: the kernel counts an open wait up to now, so a window sees
                                 a wait that outlasts it (a process waiting for partners that never ran) */
};
/* Where process i's record is in the page: processes 0..63 each own a 64-byte line, 64..127 the second half
   of those lines. Packed records put two processes' counters in one line, which their harts bounced on
   every wait: under QEMU a 3 us-grain barrier job paid 10 % more under policy=adaptive, 6 % with a line
   each (the rest is the counting itself). */
#define SL_SYNC_OFFSET(i) ((uint64_t)(i) % 64 * 64 + (uint64_t)(i) / 64 * 32)
_Static_assert(sizeof(struct sl_sync) <= 32 && SL_MAX_PROCS <= 128, "two records a line, one page");

/* ---- the library's event log ------------------------------------------------ */
/*
 * With trace=on every process of a job gets a ring of library events (barrier arrivals, spins turning
 * into blocks, steals, thread switches, process-control suspensions, loop-scheduler grabs) that the kernel
 * dumps with its own trace, on the same clock. Process i's log lives at SL_ULOG_VA + i*SL_ULOG_STRIDE:
 * a header page (struct sl_ulog) and then info->ulog_cap records; a record's time is the `time` CSR, or
 * the `cycle` CSR where the info page has SL_INFO_ULOG_CYCLES. Only process i writes it: a record,
 * then n+1 with release order. The kernel owns the pages (they outlive the job until the dump) and trusts
 * nothing in them: it reads n once, dumps at most the last ulog_cap records, and skips unknown events.
 */
#define SL_ULOG_STRIDE (128 * 1024)   /* SL_MAX_PROCS logs fill [SL_ULOG_VA, SL_HEAP_VA) */
#define SL_ULOG_HDR    4096           /* the records start one page in */
struct sl_ulog {
    uint64_t n;               /* records ever written; the newest ulog_cap are kept */
};
struct sl_ulog_rec {
    uint64_t t;               /* `time` CSR, or `cycle` with SL_INFO_ULOG_CYCLES */
    int32_t  arg;             /* per event, below */
    uint16_t ev;              /* SL_UL_* */
    uint16_t aux;             /* per event, below; 0 if unused */
};
enum sl_ulog_ev {             /* name in the dump: arg, aux */
    SL_UL_ARRIVE = 1,         /* arrive:  a barrier participant arrived: participant id, the barrier's wait kind */
    SL_UL_RELEASE,            /* release: it left the barrier: participant id, wait kind */
    SL_UL_BLOCK,              /* block:   a wait went to sleep in the kernel (a block wait, or a spin turned into one):
                                          the value it waits to see change */
    SL_UL_UNBLOCK,            /* unblock: that sleep ended: the same value */
    SL_UL_STEAL,              /* steal:   took a thread from another process's deque: the victim's index */
    SL_UL_SWITCH,             /* switch:  the process's scheduler switched to a user-level thread: its worker id or -1 */
    SL_UL_SUSPEND,            /* suspend: process control suspended this process: the allotment it saw */
    SL_UL_RESUME,             /* resume:  process control resumed it: the allotment it saw */
    SL_UL_GRAB,               /* grab:    a loop scheduler handed out a chunk: its size, 0 if it came from the caller's own share
                                          or queue (loopsched.h: local), else 1 */
    SL_UL_MARK,               /* mark:    the app's own marker (kbench what=ulog): the app's arg and aux */
    SL_UL_NEVENTS
};

struct sl_topology {
    uint32_t nharts, nnodes;
    uint8_t  hart_node[SL_MAX_HARTS];
    uint64_t node_mem_bytes[SL_MAX_NODES];
};

/* ---- the app spec ----------------------------------------------------------- */
/*
 * Every app embeds exactly one struct sl_appspec in the ELF section ".slapp"
 * (the SL_APP macro in lib/schedlab.h does it). The kernel reads it from the
 * embedded ELF at boot to validate the scenario's job= keys, to fill in
 * defaults, and to refuse sizes that cannot fit in memory. Strings are fixed
 * arrays (no pointers: the spec is read before the app is loaded).
 * Keys common to every app (procs=, at=) are the kernel's and not listed here.
 */
#define SL_APPSPEC_MAGIC 0x534c4150u  /* "SLAP" */
#define SL_MAX_KEYS 10
#define SL_KEY_INT  1   /* integer in [min, max]; default def */
#define SL_KEY_ENUM 2   /* one of choices ("a|b|c"); default is choices' entry number def */
struct sl_keyspec {
    char     name[16];
    uint32_t kind;
    uint32_t _pad;
    int64_t  min, max, def;
    char     choices[64];
};
#define SL_APP_BACKGROUND 1u  /* the job never ends by itself: it runs until every foreground job has ended */
#define SL_APP_ADAPTIVE   2u  /* built on the thread library: adapt=yes by default (process control) */
struct sl_appspec {
    uint32_t magic;
    uint32_t nkeys;
    uint32_t flags;           /* SL_APP_* */
    uint32_t _pad;
    char     about[64];       /* one line for `ERROR unknown app` help */
    /* memory estimate checked at boot: bytes = mem_const + mem_lin*k + mem_quad*k*k, k = value of key mem_key
       (mem_key "" = no key); per-process bytes add mem_per_proc * procs */
    char     mem_key[16];
    int64_t  mem_const, mem_lin, mem_quad, mem_per_proc;
    struct sl_keyspec keys[SL_MAX_KEYS];
};

#endif
