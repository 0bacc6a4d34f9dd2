/*
 * chaos - stresses the kernel from user mode, seeded (seed=, 0: the job's seed from its info page). Its
 * neighbours must not notice; what it checks itself goes into its RESULT line.
 *
 *   random        every process makes `calls` syscalls with hostile arguments: pointers into the kernel,
 *                 outside Sv39, with high bits set, misaligned, unmapped, read-only or not executable;
 *                 lengths that are huge or wrap past 2^64; unknown syscall numbers; futex timeouts that
 *                 overflow. Each result must be one the ABI documents for it (include/schedlab/abi.h: SL_EFAULT,
 *                 SL_EINVAL, ...); check=ok iff every one was (bad=0). First, process 0 checks that a
 *                 failed call has no effect: a write or a topology copy running off the end of the heap
 *                 prints and changes nothing, and a SYS_alloc larger than memory leaves the memory free.
 *   deadlock      all processes wait forever on futexes: the kernel must detect it and go on
 *   exit-blocked  process 0 exits while the others wait forever on a futex
 *   partial-line  writes `lines` pieces of text without a newline, yielding between them
 *   spoof         writes `lines` rounds of lines that look like the console contract's RESULT, SUMMARY,
 *                 PANIC, ERROR and BOOT lines (some after a '\r')
 *   faults        every process faults at the same moment, kinds load, store, exec and illegal dealt
 *                 round-robin (see apps/fault.c): one ERROR line for the job, check=FAIL with the reason
 *   syncstat      every process writes seeded garbage over the whole sync statistics page (abi.h struct
 *                 sl_sync: every record, counts running backwards, times beyond any window) `calls` times,
 *                 yielding between rounds, where the kernel mapped one (policy=adaptive; elsewhere it only
 *                 yields): the policy must stay correct for everyone (reports garbage= rounds written)
 *
 * Only partial-line and spoof run on the host build; the other modes need the schedlab kernel.
 */
#include "schedlab.h"

SL_APP(.about = "stresses the kernel from user mode (seeded); see mode=", .mem_const = 1024 * 1024,
       .mem_per_proc = 64 * 1024 + 4096,
       SL_KEYS(SL_ENUM("mode", "random|deadlock|exit-blocked|partial-line|spoof|faults|syncstat", 0),
               SL_INT("seed", 0, INT64_MAX, 0), SL_INT("calls", 1, 10000000, 1000), SL_INT("lines", 1, 100000, 20)));

#define KERNEL_VA    0x80200000UL /* the kernel image: mapped, but not for U-mode */
#define HOLE_VA      0x40004000UL /* between the info page and the app's text: never mapped */
#define ALLOC_BUDGET (64 * 1024)  /* bytes each process may really allocate */

enum call {
    C_WRITE,
    C_WRITE_HUGE,
    C_WAIT_BAD,
    C_WAIT_MISALIGNED,
    C_WAIT_AGAIN,
    C_WAIT_TIMEOUT,
    C_WAKE_BAD,
    C_WAKE,
    C_TOPO_BAD,
    C_TOPO_RO,
    C_TOPO,
    C_ALLOC_BAD,
    C_ALLOC,
    C_CREATE_BAD,
    C_RESULT_BAD,
    C_RESULT_LONG,
    C_UNKNOWN,
    C_RELAX,
    C_IDENT,
    NCALLS
};
static const char *const call_names[NCALLS] = {
    "write",    "write-huge", "wait-bad",     "wait-misaligned", "wait-again", "wait-timeout",
    "wake-bad", "wake",       "topology-bad", "topology-ro",     "topology",   "alloc-bad",
    "alloc",    "create-bad", "result-bad",   "result-long",     "unknown",    "relax",
    "ident",
};

struct tally { /* one per process, written only by it */
    uint64_t calls, ok, efault, einval, eagain, etimedout, enomem, enosys, bad;
    uint64_t allocated, last_time;
    uint32_t word; /* futex word only this process waits on */
    char first_bad[120];
} __attribute__((aligned(64)));

struct chaos {
    uint64_t seed;
    int64_t calls, lines;
    uint64_t memtotal;
    struct tally *t;
    uint32_t late; /* process 1 sleeps on it with an "infinite" timeout; 0 wakes it */
    uint32_t garbage; /* mode=syncstat: rounds of garbage written */
    long late_r;
    uint32_t arrived; /* faults: processes at the starting line */
};

static const char rodata_word[64] = "read-only: the kernel must not write here";
static char nul_free[SL_RESULT_MAX + 100]; /* no NUL in its first SL_RESULT_MAX bytes */

#ifdef SL_TARGET_KERNEL
/* A syscall with any number and registers, past the library's typed stubs. */
static long raw(uint64_t n, uint64_t a0, uint64_t a1, uint64_t a2)
{
    register uint64_t r_a0 asm("a0") = a0;
    register uint64_t r_a1 asm("a1") = a1;
    register uint64_t r_a2 asm("a2") = a2;
    register uint64_t r_a7 asm("a7") = n;
    asm volatile("ecall" : "+r"(r_a0) : "r"(r_a1), "r"(r_a2), "r"(r_a7) : "memory");
    return (long)r_a0;
}
#else
static long raw(uint64_t n, uint64_t a0, uint64_t a1, uint64_t a2)
{
    (void)n, (void)a0, (void)a1, (void)a2;
    sl_die("mode=%s needs the schedlab kernel", sl_arg_str("mode"));
}
#endif

static uint64_t pick(struct sl_rng *r, uint64_t n) { return sl_rng_below(r, n); }

/* An address no user access may succeed at (aligned to 4 unless misaligned is asked for). */
static uint64_t bad_ptr(struct sl_rng *r)
{
    static const uint64_t fixed[] = {
        0,
        8,
        0x1000,
        0x100000,
        0x10000000,
        SL_USER_BASE - 8,
        HOLE_VA,
        HOLE_VA + 0x800,
        SL_USER_TOP,
        SL_USER_TOP - 4 + 0x1000,
        KERNEL_VA,
        0x80000000UL,
        1UL << 38,
        (1UL << 38) | SL_HEAP_VA,
        0xffffffc000000000UL | SL_HEAP_VA,
        0x8000000000000000UL,
        ~0UL - 3,
        ~0UL - 4095,
    };
    uint64_t a = pick(r, 4) ? fixed[pick(r, sizeof fixed / sizeof *fixed)] : sl_rng_u64(r);
    if ((a >> 31) == 0 && a >= SL_USER_BASE && !(a >= HOLE_VA && a < HOLE_VA + 0x1000))
        a = HOLE_VA + (a & 0xffc); /* a random one that fell into user space: into the hole */
    return a & ~3UL;
}

static int is(long r, long a, long b) { return r == a || r == b; }

/* One hostile call of kind c; 1 if its result is one the ABI allows. */
static int one_call(struct chaos *z, struct tally *t, struct sl_rng *r, int id, enum call c, uint64_t *a, long *res)
{
    static const uint64_t lens[] = { 0, 1, 8, 64, 4096, 65536, 1 << 20 };
    static const uint64_t huge[] = { (1 << 20) + 1, 1UL << 32, 1UL << 40, ~0UL, ~0UL - 4095 };
    volatile struct sl_info *info = sl_info();
    long x;
    a[0] = a[1] = a[2] = 0;
    switch (c) {
    case C_WRITE:
        a[0] = bad_ptr(r), a[1] = lens[pick(r, 7)];
        x = *res = raw(SYS_write, a[0], a[1], 0);
        return a[1] == 0 ? x == 0 : x == SL_EFAULT;
    case C_WRITE_HUGE: /* too long: refused before the pointer is looked at */
        a[0] = pick(r, 2) ? bad_ptr(r) : (uint64_t)t, a[1] = huge[pick(r, 5)];
        x = *res = raw(SYS_write, a[0], a[1], 0);
        return x == SL_EINVAL;
    case C_WAIT_BAD:
        a[0] = bad_ptr(r), a[1] = sl_rng_u64(r), a[2] = pick(r, 2) ? 0 : sl_rng_u64(r);
        x = *res = raw(SYS_futex_wait, a[0], a[1], a[2]);
        return x == SL_EFAULT;
    case C_WAIT_MISALIGNED:
        a[0] = (pick(r, 2) ? (uint64_t)&t->word : bad_ptr(r)) + 1 + pick(r, 3), a[1] = t->word;
        x = *res = raw(SYS_futex_wait, a[0], a[1], 0);
        return x == SL_EINVAL;
    case C_WAIT_AGAIN: /* the value differs: never sleeps, whatever the timeout */
        a[0] = pick(r, 2) ? (uint64_t)&t->word : (uint64_t)&info->magic;
        a[1] = *(volatile uint32_t *)a[0] + 1 + pick(r, 1000), a[2] = pick(r, 2) ? 0 : ~0UL - pick(r, 3);
        x = *res = raw(SYS_futex_wait, a[0], a[1], a[2]);
        return x == SL_EAGAIN;
    case C_WAIT_TIMEOUT:
        a[0] = (uint64_t)&t->word, a[1] = t->word, a[2] = 1 + pick(r, 300);
        x = *res = raw(SYS_futex_wait, a[0], a[1], a[2]);
        return is(x, SL_ETIMEDOUT, 0);
    case C_WAKE_BAD:
        a[0] = bad_ptr(r) | pick(r, 4), a[1] = sl_rng_u64(r);
        x = *res = raw(SYS_futex_wake, a[0], a[1], 0);
        return is(x, SL_EFAULT, SL_EINVAL);
    case C_WAKE: /* nobody sleeps on these */
        a[0] = pick(r, 2) ? (uint64_t)&t->word : (uint64_t)&info->nharts, a[1] = sl_rng_u64(r);
        x = *res = raw(SYS_futex_wake, a[0], a[1], 0);
        return x == 0;
    case C_TOPO_BAD:
        a[0] = bad_ptr(r);
        x = *res = raw(SYS_topology, a[0], 0, 0);
        return x == SL_EFAULT;
    case C_TOPO_RO: { /* readable, not writable: info page, text, rodata */
        const uint64_t ro[] = { SL_INFO_VA, SL_TEXT_VA, (uint64_t)rodata_word };
        a[0] = ro[pick(r, 3)];
        x = *res = raw(SYS_topology, a[0], 0, 0);
        return x == SL_EFAULT && rodata_word[0] == 'r';
    }
    case C_TOPO: {
        struct sl_topology tp;
        a[0] = (uint64_t)&tp;
        x = *res = raw(SYS_topology, a[0], 0, 0);
        return x == 0 && tp.nharts == info->nharts && tp.nnodes == info->nnodes;
    }
    case C_ALLOC_BAD: {
        const uint64_t sizes[] = { 0, z->memtotal + 4096, 1UL << 40, 1UL << 63, ~0UL, ~0UL - 4094 };
        const int64_t nodes[] = { -2, (int64_t)info->nnodes, 99, INT64_MIN, (int64_t)0x100000000L };
        int bad_node = pick(r, 3) == 0;
        a[0] = bad_node ? 4096 : sizes[pick(r, 6)], a[1] = bad_node ? (uint64_t)nodes[pick(r, 5)] : (uint64_t)-1;
        x = *res = raw(SYS_alloc, a[0], a[1], 0);
        return a[0] == 0 || bad_node ? x == SL_EINVAL : x == SL_ENOMEM;
    }
    case C_ALLOC: { /* a real one, within the budget: mapped, zeroed, writable */
        if (t->allocated >= ALLOC_BUDGET)
            return one_call(z, t, r, id, C_ALLOC_BAD, a, res);
        a[0] = 1 + pick(r, 8192), a[1] = pick(r, 2) ? (uint64_t)-1 : 0;
        x = *res = raw(SYS_alloc, a[0], a[1], 0);
        if (x < (long)SL_HEAP_VA || (uint64_t)x >= SL_USER_TOP || (x & 4095))
            return 0;
        uint64_t n = (a[0] + 4095) & ~4095UL;
        t->allocated += n;
        for (volatile uint8_t *p = (uint8_t *)x; p < (uint8_t *)x + n; p++)
            if (*p != 0)
                return 0;
        *(volatile uint8_t *)x = 1;
        return 1;
    }
    case C_CREATE_BAD: /* never executable: no process is made */
        a[0] = pick(r, 3) ? bad_ptr(r) : pick(r, 2) ? SL_INFO_VA : (uint64_t)rodata_word, a[1] = sl_rng_u64(r);
        x = *res = raw(SYS_proc_create, a[0], a[1], 0);
        return x == SL_EFAULT;
    case C_RESULT_BAD:
        a[0] = pick(r, 2), a[1] = bad_ptr(r);
        x = *res = raw(SYS_result, a[0], a[1], 0);
        return x == SL_EFAULT;
    case C_RESULT_LONG: /* no NUL within SL_RESULT_MAX bytes */
        a[0] = pick(r, 2), a[1] = (uint64_t)nul_free;
        x = *res = raw(SYS_result, a[0], a[1], 0);
        return x == SL_EINVAL;
    case C_UNKNOWN: {
        const uint64_t nrs[] = { 0, SYS_NSYSCALLS, 100, ~0UL, (1UL << 32) | SYS_write, (uint64_t)-SYS_write };
        a[0] = pick(r, 2) ? nrs[pick(r, 6)] : SYS_NSYSCALLS + pick(r, 1000);
        x = *res = raw(a[0], bad_ptr(r), sl_rng_u64(r), 0);
        return x == SL_ENOSYS;
    }
    case C_RELAX: { /* a spin pause or a library race point: 0; any other kind: refused */
        uint64_t k = pick(r, 2) ? pick(r, SL_RACE_NKINDS) : pick(r, 2) ? SL_RACE_NKINDS + pick(r, 1000) : sl_rng_u64(r);
        a[0] = k;
        x = *res = raw(SYS_relax, a[0], sl_rng_u64(r), 0);
        return k < SL_RACE_NKINDS ? x == 0 : x == SL_EINVAL;
    }
    default: { /* identity, time, yield */
        long self = raw(SYS_self, 0, 0, 0), hart = raw(SYS_hart, 0, 0, 0), y = raw(SYS_yield, 0, 0, 0);
        uint64_t now = (uint64_t)raw(SYS_time, 0, 0, 0);
        int ok = self == id && hart >= 0 && hart < (long)info->nharts && y == 0 && now >= t->last_time;
        t->last_time = now;
        *res = self;
        return ok;
    }
    }
}

static void count(struct tally *t, long res)
{
    t->efault += res == SL_EFAULT, t->einval += res == SL_EINVAL, t->eagain += res == SL_EAGAIN;
    t->etimedout += res == SL_ETIMEDOUT, t->enomem += res == SL_ENOMEM, t->enosys += res == SL_ENOSYS;
    t->ok += res >= 0;
}

static void note_bad(struct tally *t, const char *what, const uint64_t *a, long res)
{
    if (t->bad++ == 0)
        sl_snprintf(t->first_bad, sizeof t->first_bad, "first_bad=%s:0x%lx:0x%lx:0x%lx->%ld", what, (unsigned long)a[0],
                    (unsigned long)a[1], (unsigned long)a[2], res);
}

static void random_worker(void *arg, int id)
{
    struct chaos *z = arg;
    struct tally *t = &z->t[id];
    struct sl_rng r;
    uint64_t a[3] = { 0 };
    sl_rng_seed(&r, z->seed, (uint64_t)id);
    if (id == 1) { /* an "infinite" timeout must not wrap into the past */
        a[0] = (uint64_t)&z->late, a[2] = ~0UL;
        z->late_r = raw(SYS_futex_wait, a[0], 0, a[2]);
        t->calls++;
        count(t, z->late_r);
        if (!is(z->late_r, 0, SL_EAGAIN))
            note_bad(t, "wait-forever", a, z->late_r);
    }
    for (int64_t i = 0; i < z->calls; i++) {
        enum call c = (enum call)pick(&r, NCALLS);
        long res = 0;
        int ok = one_call(z, t, &r, id, c, a, &res);
        t->calls++;
        count(t, res);
        if (!ok)
            note_bad(t, call_names[c], a, res);
    }
    if (id == 0) {
        __atomic_store_n(&z->late, 1, __ATOMIC_RELEASE);
        raw(SYS_futex_wake, (uint64_t)&z->late, SL_WAKE_ALL, 0);
    }
}

/* Process 0, alone: failed calls must have no effect. The page SYS_alloc just returned is followed by
   unmapped memory until the next SYS_alloc; its last 16 bytes hold a marker. */
static void no_partial_effects(struct chaos *z, struct tally *t)
{
    static const char marker[17] = "CHAOS-LEAK-MARK!";
    uint64_t a[3] = { 4096, (uint64_t)-1, 0 };
    long page = raw(SYS_alloc, 4096, (uint64_t)-1, 0), res;
    t->calls++;
    if (page < (long)SL_HEAP_VA) {
        note_bad(t, "alloc-page", a, page);
        return;
    }
    char *end = (char *)page + 4096 - 16;
    memcpy(end, marker, 16);
    a[0] = (uint64_t)end, a[1] = 64;
    res = raw(SYS_write, a[0], a[1], 0); /* must print nothing: the test looks for the marker */
    t->calls++, count(t, res);
    if (res != SL_EFAULT)
        note_bad(t, "write-off-the-heap", a, res);
    res = raw(SYS_topology, a[0], 0, 0); /* must write nothing */
    t->calls++, count(t, res);
    if (res != SL_EFAULT || memcmp(end, marker, 16))
        note_bad(t, "topology-off-the-heap", a, res);
    res = raw(SYS_result, 1, a[0], 0); /* the keys run into unmapped memory */
    t->calls++, count(t, res);
    if (res != SL_EFAULT)
        note_bad(t, "result-off-the-heap", a, res);
    a[0] = z->memtotal + 4096, a[1] = (uint64_t)-1;
    res = raw(SYS_alloc, a[0], a[1], 0); /* more than there is: refused, nothing kept */
    t->calls++, count(t, res);
    if (res != SL_ENOMEM)
        note_bad(t, "alloc-more-than-memory", a, res);
    a[0] = 65536;
    res = raw(SYS_alloc, a[0], a[1], 0); /* so this one still fits */
    t->calls++, count(t, res);
    t->allocated += 65536;
    if (res < (long)SL_HEAP_VA)
        note_bad(t, "alloc-after-refusal", a, res);
}

static int run_random(struct chaos *z)
{
    int n = sl_nprocs();
    struct sl_topology tp;
    if (sl_sys_topology(&tp) != 0)
        sl_die("topology failed");
    for (uint32_t i = 0; i < tp.nnodes && i < SL_MAX_NODES; i++)
        z->memtotal += tp.node_mem_bytes[i];
    memset(nul_free, 'x', sizeof nul_free);
    no_partial_effects(z, &z->t[0]);
    sl_run_procs(random_worker, z);

    struct tally s = { 0 };
    const char *first = "";
    for (int i = 0; i < n; i++) {
        struct tally *t = &z->t[i];
        s.calls += t->calls, s.ok += t->ok, s.efault += t->efault, s.einval += t->einval, s.eagain += t->eagain;
        s.etimedout += t->etimedout, s.enomem += t->enomem, s.enosys += t->enosys, s.bad += t->bad;
        if (t->bad && !first[0])
            first = t->first_bad;
    }
    sl_report(s.bad == 0,
              "syscalls=%lu bad=%lu efault=%lu einval=%lu eagain=%lu etimedout=%lu enomem=%lu enosys=%lu ok=%lu%s%s",
              (unsigned long)s.calls, (unsigned long)s.bad, (unsigned long)s.efault, (unsigned long)s.einval,
              (unsigned long)s.eagain, (unsigned long)s.etimedout, (unsigned long)s.enomem, (unsigned long)s.enosys,
              (unsigned long)s.ok, first[0] ? " " : "", first);
    return 0;
}

/* ---- the modes that end badly on purpose ---- */

static uint32_t never; /* nobody ever changes or wakes it */

static void wait_forever(void *arg, int id)
{
    (void)arg, (void)id;
    for (;;)
        raw(SYS_futex_wait, (uint64_t)&never, 0, 0);
}

static void proc_wait_forever(void *arg, int index) { wait_forever(arg, index); }

static int run_exit_blocked(void)
{
    static struct sl_procstart ps = { proc_wait_forever, 0 };
    for (int i = 1; i < sl_nprocs(); i++)
        if (sl_sys_proc_create(&ps) < 0)
            sl_die("proc_create failed for process %d", i);
    sl_report(1, "blocked=%d", sl_nprocs() - 1);
    return 0; /* process 0 exits; the others never wake */
}

static void illegal(void)
{
#ifdef SL_TARGET_KERNEL
    uint64_t v;
    asm volatile("csrr %0, mstatus" : "=r"(v));
    (void)v;
#endif
}

static void fault_worker(void *arg, int id)
{
    struct chaos *z = arg;
    uintptr_t zero = 0;
    asm volatile("" : "+r"(zero)); /* an opaque 0: gcc turns a visible null store into a trap */
    __atomic_add_fetch(&z->arrived, 1, __ATOMIC_ACQ_REL);
    for (int spins = 0; __atomic_load_n(&z->arrived, __ATOMIC_ACQUIRE) < (uint32_t)sl_nprocs() && spins < 100000;
         spins++)
        if (spins % 64 == 63)
            sl_yield(); /* the others may share this hart */
    switch ((z->seed + (uint64_t)id) % 4) {
    case 0: (void)*(volatile uint64_t *)KERNEL_VA; break;
    case 1: *(volatile uint64_t *)zero = 1; break;
    case 2: ((void (*)(void))(zero + 0x1000))(); break;
    default: illegal();
    }
}

static void run_lines(const char *mode, int64_t lines)
{
    static const char *const spoofs[] = {
        "RESULT job=1 app=gauss policy=timeslice harts=2 procs=2 arrive_us=0 start_us=0 end_us=1 elapsed_us=1 "
        "cpu_us=1 check=FAIL reason=spoofed\n",
        "SUMMARY policy=timeslice harts=2 jobs=9 failed=9 makespan_us=1\n",
        "PANIC 0 spoofed 0x0 0x0\n",
        "ERROR spoofed by chaos\n",
        "BOOT harts=99 nodes=1 mem_mb=1 policies=spoof apps=spoof boot_hart=0 boot_us=0\n",
        "half a line\rRESULT job=99 app=spoof policy=spoof harts=1 procs=1 arrive_us=0 start_us=0 end_us=0 "
        "elapsed_us=0 cpu_us=0 check=ok\n",
    };
    for (int64_t i = 0; i < lines; i++) {
        if (!strcmp(mode, "spoof"))
            for (size_t k = 0; k < sizeof spoofs / sizeof *spoofs; k++)
                sl_sys_write(spoofs[k], strlen(spoofs[k]));
        else
            sl_printf("partial-%ld ", (long)i);
        sl_yield();
    }
    sl_report(1, "rounds=%ld", (long)lines); /* not lines=: the scenario key is in RESULT already */
}

/* mode=syncstat: garbage over every record of the sync statistics page, round after round. */
static void syncstat_worker(void *arg, int id)
{
    struct chaos *z = arg;
    struct sl_rng r;
    int mapped = (sl_info()->flags & SL_INFO_SYNCSTAT) != 0;
    sl_rng_seed(&r, z->seed, (uint64_t)id);
    for (int64_t i = 0; i < z->calls; i++) {
        for (int k = 0; mapped && k < SL_MAX_PROCS; k++) {
            volatile struct sl_sync *rec = (volatile struct sl_sync *)(SL_SYNC_VA + SL_SYNC_OFFSET(k));
            uint64_t v = sl_rng_u64(&r);
            rec->episodes = (uint32_t)(v & 7 ? v : 0);   /* often backwards, sometimes zero */
            rec->waits = (uint32_t)(v >> 32);
            rec->in_wait = (uint32_t)(v >> 17);
            rec->wait_ticks = v & 1 ? ~0UL : sl_rng_u64(&r); /* beyond any window, or anything */
        }
        if (mapped)
            __atomic_add_fetch(&z->garbage, 1, __ATOMIC_RELAXED);
        sl_sys_yield();
    }
}

int main(void)
{
    const char *mode = sl_arg_str("mode");
    struct chaos z = { .seed = (uint64_t)sl_arg_int("seed"),
                       .calls = sl_arg_int("calls"),
                       .lines = sl_arg_int("lines") };
    if (z.seed == 0)
        z.seed = sl_info()->seed;
    if (!strcmp(mode, "partial-line") || !strcmp(mode, "spoof")) {
        run_lines(mode, z.lines);
        return 0;
    }
#ifndef SL_TARGET_KERNEL
    sl_die("mode=%s needs the schedlab kernel", mode);
#endif
    if (!strcmp(mode, "deadlock")) {
        sl_run_procs(wait_forever, 0);
    } else if (!strcmp(mode, "exit-blocked")) {
        return run_exit_blocked();
    } else if (!strcmp(mode, "syncstat")) {
        sl_run_procs(syncstat_worker, &z);
        sl_report(1, "garbage=%ld", (long)z.garbage);
        return 0;
    } else if (!strcmp(mode, "faults")) {
        sl_run_procs(fault_worker, &z);
        sl_report(0, "fault=none"); /* the kernel failed to stop every fault (reason= is the kernel's key) */
        return 0;
    }
    z.t = sl_alloc_node((size_t)sl_nprocs() * sizeof(struct tally), -1); /* line-aligned */
    if (!z.t)
        sl_die("out of memory for %d processes", sl_nprocs());
    memset(z.t, 0, (size_t)sl_nprocs() * sizeof(struct tally));
    return run_random(&z);
}
