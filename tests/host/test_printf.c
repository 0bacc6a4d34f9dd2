/*
 * The kernel's formatter (kernel/printf.c, built for the host as ksnprintf) against glibc's snprintf:
 * a table of the formats the kernel uses and their neighbours, every buffer size for each (truncation,
 * the NUL, the return value, no byte written past the buffer), then random formats of the defined
 * subset of C's printf with random arguments. Under ASan/UBSan.
 */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef int (*fmt_fn)(char *, size_t, const char *, ...);

#define GUARD 16
#define BIG 4096

static int mismatches;

/* Run both formatters into buffers of every size 0..len+2 with guard bytes after them and compare
   everything: return values, the bytes, the NUL, the guard. */
static void compare_sizes(const char *what, const char *want, int want_n, int (*kernel)(char *, size_t, void *),
                          void *ctx)
{
    size_t top = (size_t)want_n + 2;
    for (size_t size = 0; size <= top; size++) {
        char *buf = malloc(size + GUARD);      /* exact size: ASan sees any write past it too */
        memset(buf, '#', size + GUARD);
        int n = kernel(buf, size, ctx);
        int ok = n == want_n;
        if (size > 0) {
            size_t keep = (size_t)want_n < size - 1 ? (size_t)want_n : size - 1;
            ok = ok && !memcmp(buf, want, keep) && buf[keep] == 0;
        }
        for (size_t g = size; g < size + GUARD; g++)
            ok = ok && buf[g] == '#';
        if (!ok && mismatches++ < 20)
            fprintf(stderr, "  %s size %zu: kernel gave %d '%.*s', glibc %d '%s'\n", what, size, n,
                    (int)(size ? strnlen(buf, size) : 0), buf, want_n, want);
        CHECK(ok);
        free(buf);
    }
}

/* ---- the table: literal formats, so gcc checks them against their arguments ---- */

struct call { const char *fmt; va_list *ap; };

static int kernel_va(char *buf, size_t size, void *ctx)
{
    struct call *c = ctx;
    va_list ap;
    va_copy(ap, *c->ap);
    int n = kvsnprintf(buf, size, c->fmt, ap);
    va_end(ap);
    return n;
}

static void same(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void same(const char *fmt, ...)
{
    char want[BIG];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int want_n = vsnprintf(want, sizeof want, fmt, ap);
    struct call c = { fmt, &ap2 };
    compare_sizes(fmt, want, want_n, kernel_va, &c);
    va_end(ap2);
    va_end(ap);
}

static void test_table(void)
{
    static char longs[600];
    memset(longs, 'a', sizeof longs - 1);
    /* what the kernel prints */
    same("ERROR bad token '%.40s...': longer than %d characters", longs, 511);
    same("RESULT job=%d app=%s policy=%s harts=%d procs=%d arrive_us=%lu start_us=%lu check=%s%s%s", 3, "gauss",
         "timeslice", 2, 128, 123456789UL, 0UL, "ok", " ", "n=64,sync=barrier");
    same("ERROR job %d (%s) killed: %s at address 0x%lx, pc 0x%lx, in process %d", 2, "chaos",
         "store-page-fault", 0xffffffffffffffffUL, 0x40010000UL, 7);
    same("PANIC %d %s 0x%lx 0x%lx scause=0x%lx sp=0x%lx", -1, "interrupt", 0UL, 1UL, 0x8000000000000005UL, 42UL);
    same("%s=%llu %lld %lld", "n", 18446744073709551615ULL, (long long)LLONG_MIN, (long long)LLONG_MAX);
    same("%u %x %i %c%% %ld %zu", 4294967295u, 0xdeadbeefu, INT_MIN, 'q', LONG_MIN, (size_t)SIZE_MAX);
    same("%02x:%02x:%02x %08lx %-6s| %6s| %-3d| %3d|", 1, 0xab, 0x100, 0x1234UL, "ab", "ab", -5, -5);
    /* precision of strings: bounded, '.*', longer and shorter than the string, zero */
    same("[%.3s] [%.0s] [%.10s] [%.*s] [%.*s] [%.*s]", "abcdef", "abc", "abc", 2, "xyz", 0, "xyz", -1, "xyz");
    same("[%8.3s] [%-8.3s] [%*s] [%-*s] [%*s]", "abcdef", "abcdef", 5, "ab", 5, "ab", -5, "ab");
    /* integers: widths, zero padding, precision, signs, alternate forms */
    same("[%5d] [%-5d] [%05d] [%05d] [%+d] [% d] [%+d] [% 05d]", 42, 42, 42, -42, 0, 7, -7, 3);
    same("[%.0d] [%.0x] [%5.0d] [%.3d] [%.3d] [%-8.3d|] [%.*d]", 0, 0u, 0, 7, -7, -7, 5, 12);
    same("[%#x] [%#x] [%#X] [%#o] [%#o] [%#.0o] [%#08x] [%#-8x|] [%o]", 255u, 0u, 255u, 8u, 0u, 0u, 255u, 255u, 511u);
    same("[%hhd] [%hhu] [%hd] [%hu] [%hhx] [%jd] [%td]", 300, 300, 70000, 70000, 511, (intmax_t)-9, (ptrdiff_t)-9);
    same("[%lu] [%lx] [%lX] [%ld] [%zx] [%llx]", 0UL, ~0UL, 0xabcdefUL, -1L, (size_t)4096, 1ULL << 63);
    same("[%c] [%3c] [%-3c|] [%%] [%d%%]", 'x', 'y', 'z', 50);
    same("[%p] [%20p] [%-20p|]", (void *)0x80200000UL, (void *)0x1000UL, (void *)0xffUL);
    same("%s%s%s%s", "", "", "", "");
    same("plain text, no conversions");
    same("%s", "");
    same("%*d|%-*d|%.*d|%*.*s|", -7, 1, 3, 2, -4, 3, 6, 2, "abc");
}

static void test_kernel_only(void)
{
    char b[64];
    /* C leaves these open; the kernel's choices, stated */
    CHECK(ksnprintf(b, sizeof b, "%p", (void *)0) == 3 && !strcmp(b, "0x0"));
    const char *volatile null = NULL;          /* volatile: gcc would see the NULL */
    CHECK(ksnprintf(b, sizeof b, "[%s]", null) == 8 && !strcmp(b, "[(null)]"));
    CHECK(ksnprintf(b, sizeof b, "[%.3s]", null) == 2 && !strcmp(b, "[]"));
    /* an unknown conversion is printed as it stands; a trailing '%' too */
    const char *unknown = "a%qb", *flagged = "%-5.2q|", *trail = "x%";    /* not literals: gcc would object */
    CHECK(ksnprintf(b, sizeof b, unknown, 1) == 4 && !strcmp(b, "a%qb"));
    CHECK(ksnprintf(b, sizeof b, flagged, 1) == 7 && !strcmp(b, "%-5.2q|"));
    CHECK(ksnprintf(b, sizeof b, trail, 1) == 2 && !strcmp(b, "x%"));
    /* %.Ns reads at most N bytes: an unterminated array is fine */
    char raw[4] = { 'a', 'b', 'c', 'd' };
    CHECK(ksnprintf(b, sizeof b, "%.4s|%.2s", raw, raw) == 7 && !strcmp(b, "abcd|ab"));
    /* size 0 writes nothing, even with a NULL buffer */
    CHECK(ksnprintf(NULL, 0, "%d", 12345) == 5);
    /* the garbled message of issue 10: with no precision the pointer went into %d */
    char tok[700];
    memset(tok, 'z', sizeof tok - 1);
    tok[sizeof tok - 1] = 0;
    char msg[200], want[200];
    int n = ksnprintf(msg, sizeof msg, "bad token '%.40s...': longer than %d characters", tok, 511);
    snprintf(want, sizeof want, "bad token '%s...': longer than 511 characters", tok + sizeof tok - 41);
    CHECK(n == (int)strlen(want) && !strcmp(msg, want));
}

/* ---- random formats: the defined part of C's printf, random arguments ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int pick(int n) { return (int)(rnd() % (uint64_t)n); }

enum argkind { A_INT, A_LONG, A_STR, A_PTR, A_CHAR };

struct rcall {
    char fmt[96];
    enum argkind kind;
    int star_w, star_p, w, p;
    long long i;
    const char *s;
    void *ptr;
};

static int rcall_with(fmt_fn f, char *buf, size_t size, const struct rcall *c)
{
    /* the '*' arguments come first, then the value */
#define ARGS3(v) (c->star_w && c->star_p ? f(buf, size, c->fmt, c->w, c->p, v) \
                  : c->star_w ? f(buf, size, c->fmt, c->w, v) \
                  : c->star_p ? f(buf, size, c->fmt, c->p, v) : f(buf, size, c->fmt, v))
    switch (c->kind) {
    case A_INT: case A_CHAR: return ARGS3((int)c->i);
    case A_LONG: return ARGS3((long long)c->i);
    case A_STR: return ARGS3(c->s);
    default: return ARGS3(c->ptr);
    }
#undef ARGS3
}

static int kernel_r(char *buf, size_t size, void *ctx) { return rcall_with(ksnprintf, buf, size, ctx); }

static const char *const strings[] = { "", "a", "hello", "0123456789abcdefghijklmnopqrstuvwxyz", "with space",
                                       "%d not a conversion" };

static long long random_int(void)
{
    switch (pick(6)) {
    case 0: return 0;
    case 1: return pick(3) - 1;
    case 2: return (long long)(rnd() % 1000) - 500;
    case 3: return pick(2) ? LLONG_MIN : LLONG_MAX;
    case 4: return pick(2) ? INT_MIN : INT_MAX;
    default: return (long long)rnd();
    }
}

/* One conversion with flags valid for it, a width or '*', a precision or '.*' where defined, a length,
   and literal text around it. */
static void random_call(struct rcall *c)
{
    static const char convs[] = "diuxXoscp";
    char conv = convs[pick(sizeof convs - 1)];
    int integer = strchr("diuxXo", conv) != NULL;
    char flags[8];
    int nf = 0;
    if (pick(3) == 0) flags[nf++] = '-';
    if (integer && pick(3) == 0) flags[nf++] = '0';
    if ((conv == 'd' || conv == 'i') && pick(4) == 0) flags[nf++] = '+';
    if ((conv == 'd' || conv == 'i') && pick(4) == 0) flags[nf++] = ' ';
    if (strchr("xXo", conv) && pick(3) == 0) flags[nf++] = '#';
    flags[nf] = 0;
    char width[16] = "", prec[16] = "";
    c->star_w = c->star_p = 0;
    if (pick(2)) {
        if (pick(3) == 0) {
            c->star_w = 1;
            c->w = pick(41) - 20;
            strcpy(width, "*");
        } else {
            snprintf(width, sizeof width, "%d", 1 + pick(30));
        }
    }
    if ((integer || conv == 's') && pick(2)) {
        if (pick(3) == 0) {
            c->star_p = 1;
            c->p = pick(31) - 5;
            strcpy(prec, ".*");
        } else {
            snprintf(prec, sizeof prec, ".%d", pick(25));
        }
    }
    const char *len = "";
    if (integer) {
        static const char *const lens[] = { "", "", "hh", "h", "l", "ll", "z", "j", "t" };
        len = lens[pick(sizeof lens / sizeof *lens)];
    }
    c->kind = integer ? (len[0] == 'l' || strchr("zjt", len[0] ? len[0] : '!') ? A_LONG : A_INT)
                      : conv == 's' ? A_STR : conv == 'p' ? A_PTR : A_CHAR;
    c->i = c->kind == A_CHAR ? 32 + pick(95) : random_int();
    c->s = strings[pick(sizeof strings / sizeof *strings)];
    c->ptr = (void *)(uintptr_t)(1 + rnd() % (pick(2) ? 0xffffUL : ~0UL));
    snprintf(c->fmt, sizeof c->fmt, "%s%%%s%s%s%s%c%s", pick(2) ? "<" : "", flags, width, prec, len, conv,
             pick(2) ? ">" : "");
}

static void test_random(int rounds)
{
    for (int r = 0; r < rounds; r++) {
        struct rcall c;
        random_call(&c);
        char want[BIG];
        int want_n = rcall_with(snprintf, want, sizeof want, &c);
        compare_sizes(c.fmt, want, want_n, kernel_r, &c);
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    test_table();
    test_kernel_only();
    test_random(rounds);
    return check_done("test_printf");
}
