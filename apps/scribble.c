/*
 * scribble - writes nasty console output on purpose, to test the console contract: nothing a job writes
 * may end up as, or inside, a kernel line (RESULT, SUMMARY, ERROR, PANIC, BOOT, TRACE/T), and lines of
 * different writers never merge (kernel/console.c, tests/test_console.py).
 *
 * Every process writes one fixed text (the same for every seed), cut into chunks of 1..`chunk` bytes at
 * seeded random points, one SYS_write per chunk, and spins a seeded random 0..`gap_us` microseconds
 * between chunks so that other processes, jobs and the kernel write in between:
 *   partial        process p writes `lines` lines of 40 letters drawn only from its own four
 *                  (p=0 "abcd", p=1 "efgh", ... p=5 "uvwx"; more processes reuse them), the last line
 *                  without its newline: a test can tell from the letters which process wrote a line
 *   spoof          lines that look like contract lines (RESULT, SUMMARY, ERROR, PANIC, BOOT, TRACE, T,
 *                  another job's "[1] " prefix), some behind \r, \v, \f, \x1c..\x1e, U+0085, U+2028 or an
 *                  ANSI erase-line, ending with a forged RESULT without a newline
 *   control-chars  every byte 0x00..0xff but '\n', each followed by '.', 16 to a line, then the UTF-8 line
 *                  separators; `lines` times
 *   ulog           no text: every process fills its event log (trace=on; lib/base/eventlog.h) with seeded random
 *                  bytes, records and count alike (process 0 sets the count to 2^64-1): the kernel's dump
 *                  must stay bounded and well-formed (tests/test_ulog.py)
 *   flood          every process writes one buffer of `bytes` 0xff bytes (each shown as 4 characters) `lines`
 *                  times, each time asking SYS_write for all that is left until it is all out: the kernel must
 *                  take at most SL_WRITE_MAX bytes per call, so the neighbours' ticks and timeouts still run
 *                  (tests/test_verdict.py). RESULT's writes= counts the calls
 * The text does not depend on the seed (tests/test_console.py rebuilds it); only the cuts and gaps do.
 * spoof also tries to forge its RESULT through SYS_result (check=ok, another job's job=, a reason=, its own
 * scenario key lines=, values nan, inf, 1e999): the kernel must refuse each (SL_EINVAL).
 * Check: every write returned its length; every forged verdict was refused.
 */
#include "platform/platform.h"
#include "schedlab.h"

#define TEXT_MAX 16384 /* a process's whole text: 300 partial lines or 30 control-chars rounds */

SL_APP(.about = "writes partial lines, fake contract lines, control bytes", .mem_const = 64 * 1024,
       .mem_per_proc = TEXT_MAX + 4096, .mem_key = "bytes", .mem_lin = 1,
       SL_KEYS(SL_ENUM("mode", "partial|spoof|control-chars|ulog|flood", 0), SL_INT("lines", 1, 300, 8),
               SL_INT("chunk", 1, 512, 16), SL_INT("gap_us", 0, 100000, 200), SL_INT("bytes", 1, 1 << 20, 4096)));

static const char *const spoofs[] = {
    "RESULT job=1 app=gauss policy=timeslice harts=2 procs=2 arrive_us=0 start_us=0 end_us=1 elapsed_us=1 "
    "cpu_us=1 check=ok\n",
    "SUMMARY policy=timeslice harts=2 jobs=1 failed=0 makespan_us=1\n",
    "ERROR forged by scribble\n",
    "PANIC 0 forged 0x0 0x0\n",
    "BOOT harts=64 nodes=1 mem_mb=1 policies=forged apps=forged boot_hart=0 boot_us=1\n",
    "TRACE begin harts=1 timebase_hz=10000000 policy=forged quantum_us=1\n",
    "T 0 1 dispatch 1 0 0\n",
    "[1] RESULT job=1 app=gauss check=ok\n",
    "progress...\rRESULT job=1 app=gauss check=ok\n",
    "progress...\vSUMMARY policy=forged\n",
    "progress...\fERROR forged behind a form feed\n",
    "a\x1cPANIC 1 forged\x1d"
    "ERROR forged\x1eRESULT job=1\n",
    "b\xc2\x85"
    "ERROR forged behind U+0085\n",
    "c\xe2\x80\xa8PANIC 0 forged behind U+2028\n",
    "hidden\x1b[2K\rERROR forged behind an erase-line\n",
    "\n\nRESULT job=1 app=gauss check=ok\n",
    "RESULT job=9 app=forged check=ok",
};

static int add(char *t, int n, const char *s)
{
    while (*s && n < TEXT_MAX)
        t[n++] = *s++;
    return n;
}

static int partial_text(char *t, int lines, int p)
{
    int n = 0;
    for (int l = 0; l < lines; l++) {
        for (int k = 0; k < 40; k++)
            t[n++] = (char)('a' + (p % 6) * 4 + (k + l) % 4);
        if (l + 1 < lines)
            t[n++] = '\n';
    }
    return n;
}

static int control_text(char *t, int lines)
{
    int n = 0;
    for (int l = 0; l < lines && n + 1024 < TEXT_MAX; l++) {
        for (int b = 0, col = 0; b < 256; b++) {
            if (b == '\n')
                continue;
            t[n++] = (char)b;
            t[n++] = '.';
            if (++col % 16 == 0)
                t[n++] = '\n';
        }
        n = add(t, n, "\n\xc2\x85|\xe2\x80\xa8|\xe2\x80\xa9|\r\n");
    }
    return n;
}

/* The text process p writes in this mode; returns its length. */
static int scribble_text(char *t, int p)
{
    int lines = (int)sl_arg_int("lines"), n = 0;
    if (sl_arg_is("mode", "partial"))
        return partial_text(t, lines, p);
    if (sl_arg_is("mode", "control-chars"))
        return control_text(t, lines);
    if (sl_arg_is("mode", "ulog"))
        return 0;
    for (unsigned i = 0; i < sizeof spoofs / sizeof spoofs[0]; i++)
        n = add(t, n, spoofs[i]);
    return n;
}

struct scribble {
    int64_t chunk, gap_us;
    const char *flood; /* mode=flood: `bytes` bytes of 0xff, shared */
    uint32_t bad[SL_MAX_PROCS];
    uint64_t writes[SL_MAX_PROCS];
};

static void spin_us(uint64_t us)
{
    uint64_t t0 = sl_now_us();
    while (sl_now_us() - t0 < us)
        sl_cpu_relax();
}

/* mode=ulog: garbage over the whole log, the count last (the kernel reads it once, at the dump). */
static void scribble_log(int id)
{
    struct sl_proc *p = sl_plat_proc();
    struct sl_rng rng;

    if (!p->ulog)
        return;
    sl_rng_init(&rng, (uint64_t)id + 1);
    uint64_t *w = (uint64_t *)((char *)p->ulog + SL_ULOG_HDR);
    for (uint64_t i = 0; i < ((uint64_t)p->ulog_mask + 1) * sizeof(struct sl_ulog_rec) / 8; i++)
        w[i] = sl_rng_u64(&rng);
    p->ulog->n = id == 0 ? ~0UL : sl_rng_u64(&rng);
}

/* mode=flood: the buffer whole, `lines` times, each time by as many calls as the kernel needs. */
static void flood(struct scribble *s, int id)
{
    uint64_t n = (uint64_t)sl_arg_int("bytes");
    for (int64_t l = 0; l < sl_arg_int("lines"); l++) {
        for (uint64_t done = 0; done < n;) {
            long w = sl_sys_write(s->flood + done, n - done);
            s->writes[id]++;
            if (w <= 0 || (uint64_t)w > n - done) {
                s->bad[id]++;
                break;
            }
            done += (uint64_t)w;
        }
    }
}

static void worker(void *arg, int id)
{
    struct scribble *s = arg;
    if (s->flood) {
        flood(s, id);
        return;
    }
    char *t = sl_malloc(TEXT_MAX);
    struct sl_rng rng;

    if (!t) {
        s->bad[id]++;
        return;
    }
    int n = scribble_text(t, id);

    if (sl_arg_is("mode", "ulog"))
        scribble_log(id);

    sl_rng_init(&rng, (uint64_t)id);
    for (int done = 0; done < n;) {
        int k = 1 + (int)sl_rng_below(&rng, (uint64_t)s->chunk);
        if (k > n - done)
            k = n - done;
        s->bad[id] += sl_sys_write(t + done, (uint64_t)k) != k;
        s->writes[id]++;
        done += k;
        spin_us(sl_rng_below(&rng, (uint64_t)s->gap_us + 1));
    }
    sl_free(t);
}

int main(void)
{
    static struct scribble s;
    uint64_t bad = 0, writes = 0;

    s.chunk = sl_arg_int("chunk");
    s.gap_us = sl_arg_int("gap_us");
    if (sl_arg_is("mode", "flood")) {
        char *b = sl_malloc((size_t)sl_arg_int("bytes"));
        if (!b)
            sl_die("out of memory for bytes=%ld", (long)sl_arg_int("bytes"));
        memset(b, 0xff, (size_t)sl_arg_int("bytes"));
        s.flood = b;
    }
    if (sl_arg_is("mode", "spoof")) {
        static const char *const forged[] = { "check=ok",   "x=1 job=1",       "reason=none y=2", "app=gauss",
                                              "mem_kb=1",   "lines=999",       "par_us=nan",      "x=1 iter_us=inf",
                                              "y=1e999",    "z=-Infinity" };
        for (unsigned i = 0; i < sizeof forged / sizeof forged[0]; i++)
            bad += sl_sys_result(1, forged[i]) != SL_EINVAL;
    }
    sl_run_procs(worker, &s);
    for (int i = 0; i < sl_nprocs(); i++) {
        bad += s.bad[i];
        writes += s.writes[i];
    }
    sl_report(bad == 0, "writes=%lu bad_writes=%lu", (unsigned long)writes, (unsigned long)bad);
    return 0;
}
