/*
 * console.c - formatted output, the job's verdict, and fatal setup errors.
 *
 * Output is formatted into a buffer on the caller's stack and written with
 * one SYS_write (of at most SL_WRITE_MAX bytes, all of which the kernel
 * takes), which the kernel never interleaves with other writes, so a
 * line printed by one process is never torn by another. Lines longer than
 * the buffer are cut and end in "...\n". The kernel shows each line a job
 * writes as "[<job id>] <text>" (no line a job writes can pass for a kernel
 * contract line), so sl_die's "ERROR <app>: ..." is the job's output; the
 * kernel's RESULT line carries the verdict (check=FAIL error=<word>).
 */
#include "schedlab.h"

#define LINE_MAX SL_WRITE_MAX /* a line is one SYS_write, which the kernel never splits */

/* Keys a layer above adds to every report (sl_report_keys_from): the workers' process control. */
static int (*extra_keys)(char *buf, size_t cap);

void sl_report_keys_from(int (*keys)(char *buf, size_t cap)) { __atomic_store_n(&extra_keys, keys, __ATOMIC_RELEASE); }

/* Every byte, however few the kernel takes per call (SYS_write is a short write). */
static void write_all(const char *buf, uint64_t n)
{
    while (n > 0) {
        long w = sl_sys_write(buf, n);
        if (w <= 0)
            return;
        buf += w;
        n -= (uint64_t)w;
    }
}

static void write_buf(char *buf, int n)
{
    if (n >= LINE_MAX) { /* truncated: mark it */
        n = LINE_MAX - 1;
        buf[n - 4] = '.';
        buf[n - 3] = '.';
        buf[n - 2] = '.';
        buf[n - 1] = '\n';
    }
    if (n > 0)
        write_all(buf, (uint64_t)n);
}

int sl_printf(const char *fmt, ...)
{
    char buf[LINE_MAX];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = sl_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    write_buf(buf, n);
    return n;
}

/* Keys beyond SL_RESULT_MAX are dropped at the last whole key that fits. */
void sl_report(int ok, const char *fmt, ...)
{
    char buf[LINE_MAX];
    int (*keys)(char *, size_t) = __atomic_load_n(&extra_keys, __ATOMIC_ACQUIRE);
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = sl_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (keys && n >= 0 && (size_t)n + 2 < sizeof buf) { /* process control's keys, when the job adapts */
        buf[n] = ' ';
        int k = keys(buf + n + 1, sizeof buf - (size_t)n - 1);
        if (k > 0)
            n += 1 + k;
        else
            buf[n] = 0;
    }
    if (n > SL_RESULT_MAX) {
        n = SL_RESULT_MAX;
        while (n > 0 && buf[n] != ' ')
            n--;
        buf[n] = 0;
        sl_printf("WARNING %s: RESULT keys cut to %d bytes\n", (const char *)sl_info()->app, n);
    }
    if (sl_sys_result(ok, buf) == SL_EINVAL) /* a key the kernel or the scenario prints, or nan/inf */
        sl_printf("WARNING %s: the kernel refused the RESULT keys '%s'\n", (const char *)sl_info()->app, buf);
}

void sl_die(const char *fmt, ...)
{
    char msg[LINE_MAX - 64], word[32];
    va_list ap;
    int i;

    va_start(ap, fmt);
    sl_vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sl_printf("ERROR %s: %s\n", (const char *)sl_info()->app, msg);
    for (i = 0; i < (int)sizeof word - 1 && msg[i] && msg[i] != ' ' && msg[i] != ':'; i++)
        word[i] = msg[i];
    word[i] = 0;
    sl_report(0, "error=%s", word);
    sl_sys_exit(1);
}
