/*
 * console.c - the serial console (ns16550 UART at 0x10000000 on QEMU virt), output only.
 *
 * The console contract (RESULT, SUMMARY, ERROR, PANIC, BOOT, TRACE/T lines; see README "Reading the
 * output") must be unforgeable and unbreakable by jobs. The model:
 *   writer   the kernel (kprintf), or one process of a job (sys_write -> console_write_job).
 *   line     the console is either at the start of a line, or in the middle of a line that one writer
 *            opened (`open_job`/`open_proc`; job 0 is the kernel).
 * Invariants, all under console_lock:
 *   - Every kprintf starts at the beginning of a line: if any line is open it is ended with a newline
 *     first. A kprintf's text is written whole, so kernel lines never interleave with anything.
 *   - A job's bytes go out only on lines that start with its prefix "[<job id>] ", so no line a job
 *     writes can begin with a contract keyword. A process continues its own open line; if another
 *     writer holds an open line, that line is ended first and the process starts a new prefixed line.
 *     A partial line cut this way is not resumed: the process's next bytes start a new prefixed line
 *     (a '\n' that would only end the cut line is dropped, so the cut leaves no empty line).
 *   - Only '\n' ends a line and only '\t' and printable ASCII (0x20..0x7e) pass through. Every other
 *     byte - \r, \v, \f, \x1c..\x1e, escape sequences, DEL, any byte >= 0x80 (so no UTF-8 U+0085 or
 *     U+2028 either) - is shown as the text "\xHH", so nothing can move the cursor, hide text or split
 *     a line for a terminal or Python's str.splitlines(). Kernel text gets the same treatment.
 * Lock rules: console_lock is the innermost lock (kernel.h); it is taken with sched_lock or a job lock
 * held and nothing is acquired under it. Callers copy user memory before calling in.
 */
#include "cpu.h" /* struct cpu, for spin_panic's hart number */
#include "sched/core.h"

#define UART_BASE     0x10000000UL
#define UART_THR      0
#define UART_LSR      5
#define UART_LSR_THRE 0x20

static struct spinlock console_lock = SPINLOCK_INIT("console", LOCK_CONSOLE);
static int line_open;           /* the UART is not at the start of a line */
static int open_job, open_proc; /* who opened that line (job 0: the kernel) */
static int cut_job, cut_proc;   /* the last process whose open line another writer ended (job 0: none) */

static void uart_putc(char c)
{
    volatile uint8_t *u = (volatile uint8_t *)UART_BASE;
    while (!(u[UART_LSR] & UART_LSR_THRE))
        ;
    u[UART_THR] = (uint8_t)c;
}

static void uart_puts(const char *s)
{
    while (*s)
        uart_putc(*s++);
}

/* One byte of text: '\n' ends the line; unsafe bytes become "\xHH". */
static void put_safe(char ch)
{
    uint8_t c = (uint8_t)ch;
    if (c == '\n') {
        uart_putc('\r');
        uart_putc('\n');
        line_open = 0;
    } else if (c == '\t' || (c >= 0x20 && c < 0x7f)) {
        uart_putc((char)c);
    } else {
        uart_puts("\\x");
        uart_putc("0123456789abcdef"[c >> 4]);
        uart_putc("0123456789abcdef"[c & 15]);
    }
}

/* Make the UART ready for writer (job, proc): at a line start, or on that writer's own open line. */
static void take_line(int job, int proc)
{
    if (line_open && (open_job != job || open_proc != proc || job == 0)) {
        uart_putc('\r');
        uart_putc('\n');
        line_open = 0;
        cut_job = open_job;
        cut_proc = open_proc;
    }
}

/* Bytes written by process `proc` of job `job` (>= 1), already copied out of user memory. */
void console_write_job(int job, int proc, const char *s, size_t n)
{
    char prefix[16];
    snprintf(prefix, sizeof prefix, "[%d] ", job);
    acquire(&console_lock);
    take_line(job, proc);
    size_t i = 0;
    if (cut_job == job && cut_proc == proc) {
        if (n > 0 && s[0] == '\n')
            i = 1; /* the newline that ends its cut line: that line has ended already */
        cut_job = 0;
    }
    for (; i < n; i++) {
        if (!line_open) {
            uart_puts(prefix);
            line_open = 1;
            open_job = job;
            open_proc = proc;
        }
        put_safe(s[i]);
    }
    release(&console_lock);
}

static void console_write_kernel(const char *s, size_t n)
{
    acquire(&console_lock);
    take_line(0, 0);
    for (size_t i = 0; i < n; i++) {
        if (!line_open) {
            line_open = 1;
            open_job = open_proc = 0;
        }
        put_safe(s[i]);
    }
    release(&console_lock);
}

void (*console_hook_printed)(struct cpu *c, const char *line);

/* A kernel line: always starts at the beginning of a line (see the header). */
void kprintf(const char *fmt, ...)
{
    char buf[2048]; /* a RESULT line fits: ~400 kernel bytes, SL_ARGS_MAX, SL_RESULT_MAX, a reason */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 1)
        n = sizeof buf - 1;
    struct cpu *c = mycpu();
    if (c && c->hook && console_hook_printed) /* inside a policy hook (sched/hooks.h, KCHECKS) */
        console_hook_printed(c, buf);
    console_write_kernel(buf, n);
}

/* The run's last word: leave QEMU with status `code` with the console at a line start. A line another hart left
   open (a job still running when the watchdog fired) is ended, and console_lock is never released, so no
   writer can start a line that QEMU's exit would cut. */
int (*console_leaving)(int code, void (*print)(const char *line));

static void print_locked(const char *line)
{
    for (; *line; line++)
        put_safe(*line);
}

void console_exit(int code)
{
    acquire(&console_lock);
    take_line(0, 0);
    if (console_leaving)
        code = console_leaving(code, print_locked);
    platform_exit(code);
}

/* A lock rule was broken (spinlock.h). The console lock may be the broken one, or held by this very hart,
   so print without it - the line may tear with another hart's, which matters less than saying why - and
   leave QEMU with the panic status. */
void spin_panic(const struct spinlock *l, const char *what)
{
    struct cpu *c = (struct cpu *)spin_self();
    char buf[160];
    snprintf(buf, sizeof buf, "\nPANIC %d lock 0x0 0x0 %s: %s\n", c ? c->id : -1, l->name, what);
    for (const char *s = buf; *s; s++)
        put_safe(*s);
    platform_exit(3);
}
