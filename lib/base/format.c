/*
 * format.c - sl_vsnprintf, the formatter behind sl_printf and sl_report.
 *
 * A subset of C's printf, enough for reports and diagnostics:
 *   conversions  %d %i %u %x %X %p %s %c %% %f %e
 *   flags        '-' (left-justify) '0' (zero-pad) '+' (sign)
 *   width, .precision (digits or '*'), lengths hh h l ll z
 * Floats are printed from their binary value with at most 17 fraction
 * digits; the last digit may differ from glibc's correctly rounded one.
 * Like snprintf, it returns the length the whole output would have had and
 * writes at most cap-1 bytes plus a NUL (cap > 0).
 *
 * No allocation and no global state: safe to call from any process at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "schedlab.h"

struct out {
    char *buf;
    size_t cap;
    size_t len; /* bytes produced so far, including those that did not fit */
};

struct spec {
    int left, zero, plus;
    int width;
    int prec; /* -1: none given */
    int lng;  /* 0 int, 1 long, 2 long long, -1 short, -2 char */
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->cap)
        o->buf[o->len] = c;
    o->len++;
}

/* Emit sign + body padded to the field width. Zero padding goes between the
   sign and the body, space padding outside both. */
static void field(struct out *o, const struct spec *sp, const char *sign, const char *body, int n)
{
    int ns = 0, pad;

    while (sign[ns])
        ns++;
    pad = sp->width - ns - n;
    if (!sp->left && !sp->zero)
        for (; pad > 0; pad--)
            put(o, ' ');
    for (int i = 0; i < ns; i++)
        put(o, sign[i]);
    if (!sp->left && sp->zero)
        for (; pad > 0; pad--)
            put(o, '0');
    for (int i = 0; i < n; i++)
        put(o, body[i]);
    for (; pad > 0; pad--)
        put(o, ' ');
}

/* Digits of v in base into the end of tmp[64]; returns the start. */
static char *utoa(uint64_t v, unsigned base, int upper, char *end)
{
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char *p = end;
    do {
        *--p = dig[v % base];
        v /= base;
    } while (v);
    return p;
}

static void fmt_uint(struct out *o, struct spec sp, uint64_t v, unsigned base, int upper, const char *sign)
{
    char tmp[64], *end = tmp + sizeof tmp, *p = utoa(v, base, upper, end);

    if (sp.prec >= 0) { /* precision = minimum digits */
        while (end - p < sp.prec && p > tmp)
            *--p = '0';
        sp.zero = 0;
    }
    field(o, &sp, sign, p, (int)(end - p));
}

static const uint64_t tens[18] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
};

/* "ip.frac" with prec fraction digits into tmp; returns its length. */
static int fixed(char *tmp, uint64_t ip, uint64_t frac, int prec)
{
    char buf[64], *end = buf + sizeof buf, *p = utoa(ip, 10, 0, end);
    int n = 0;

    while (p < end)
        tmp[n++] = *p++;
    if (prec > 0) {
        tmp[n++] = '.';
        for (int i = prec - 1; i >= 0; i--)
            tmp[n++] = (char)('0' + frac / tens[i] % 10);
    }
    return n;
}

/* v >= 0, finite. Exponent form d.ddde+XX. */
static int fmt_exp(char *tmp, double v, int prec)
{
    int e = 0, n;
    uint64_t m;

    if (v != 0) {
        while (v >= 10) {
            v /= 10;
            e++;
        }
        while (v < 1) {
            v *= 10;
            e--;
        }
    }
    m = (uint64_t)(v * (double)tens[prec] + 0.5);
    if (m >= 10 * tens[prec]) { /* 9.99.. rounded up to 10 */
        m /= 10;
        e++;
    }
    n = fixed(tmp, m / tens[prec], m % tens[prec], prec);
    tmp[n++] = 'e';
    tmp[n++] = e < 0 ? '-' : '+';
    if (e < 0)
        e = -e;
    if (e >= 100)
        tmp[n++] = (char)('0' + e / 100);
    tmp[n++] = (char)('0' + e / 10 % 10);
    tmp[n++] = (char)('0' + e % 10);
    return n;
}

static void fmt_double(struct out *o, struct spec sp, double v, char conv)
{
    char tmp[96];
    const char *sign = sp.plus ? "+" : "";
    int n, prec = sp.prec < 0 ? 6 : sp.prec > 17 ? 17 : sp.prec;

    if (__builtin_signbit(v)) {
        sign = "-";
        v = -v;
    }
    if (v != v || v > 1.7976931348623157e308) {
        sp.zero = 0;
        field(o, &sp, sign, v != v ? "nan" : "inf", 3);
        return;
    }
    if (conv == 'e' || v >= 1e18) {
        n = fmt_exp(tmp, v, prec);
    } else {
        uint64_t ip = (uint64_t)v;
        uint64_t frac = (uint64_t)((v - (double)ip) * (double)tens[prec] + 0.5);
        if (frac >= tens[prec]) {
            frac -= tens[prec];
            ip++;
        }
        n = fixed(tmp, ip, frac, prec);
    }
    field(o, &sp, sign, tmp, n);
}

static int64_t arg_int(va_list *ap, int lng)
{
    if (lng == 2)
        return va_arg(*ap, long long);
    if (lng == 1)
        return va_arg(*ap, long);
    if (lng == -1)
        return (short)va_arg(*ap, int);
    if (lng == -2)
        return (signed char)va_arg(*ap, int);
    return va_arg(*ap, int);
}

static uint64_t arg_uint(va_list *ap, int lng)
{
    if (lng == 2)
        return va_arg(*ap, unsigned long long);
    if (lng == 1)
        return va_arg(*ap, unsigned long);
    if (lng == -1)
        return (unsigned short)va_arg(*ap, unsigned);
    if (lng == -2)
        return (unsigned char)va_arg(*ap, unsigned);
    return va_arg(*ap, unsigned);
}

/* Parse flags, width, precision and length at *fmt (just past '%'). */
static const char *parse_spec(const char *f, struct spec *sp, va_list *ap)
{
    *sp = (struct spec){ .prec = -1 };
    for (;; f++) {
        if (*f == '-')
            sp->left = 1;
        else if (*f == '0')
            sp->zero = 1;
        else if (*f == '+')
            sp->plus = 1;
        else
            break;
    }
    if (*f == '*') {
        sp->width = va_arg(*ap, int);
        f++;
    }
    for (; *f >= '0' && *f <= '9'; f++)
        sp->width = sp->width * 10 + (*f - '0');
    if (sp->width < 0) {
        sp->left = 1;
        sp->width = -sp->width;
    }
    if (*f == '.') {
        f++;
        sp->prec = 0;
        if (*f == '*') {
            sp->prec = va_arg(*ap, int);
            f++;
        }
        for (; *f >= '0' && *f <= '9'; f++)
            sp->prec = sp->prec * 10 + (*f - '0');
    }
    for (;; f++) {
        if (*f == 'l')
            sp->lng = sp->lng == 1 ? 2 : 1;
        else if (*f == 'z')
            sp->lng = 1;
        else if (*f == 'h')
            sp->lng = sp->lng == -1 ? -2 : -1;
        else
            break;
    }
    if (sp->left)
        sp->zero = 0;
    return f;
}

static void convert(struct out *o, const struct spec *sp, char c, va_list *ap)
{
    switch (c) {
    case 'd':
    case 'i': {
        int64_t v = arg_int(ap, sp->lng);
        uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
        fmt_uint(o, *sp, u, 10, 0, v < 0 ? "-" : sp->plus ? "+" : "");
        break;
    }
    case 'u': fmt_uint(o, *sp, arg_uint(ap, sp->lng), 10, 0, ""); break;
    case 'x': fmt_uint(o, *sp, arg_uint(ap, sp->lng), 16, 0, ""); break;
    case 'X': fmt_uint(o, *sp, arg_uint(ap, sp->lng), 16, 1, ""); break;
    case 'p': fmt_uint(o, *sp, (uintptr_t)va_arg(*ap, void *), 16, 0, "0x"); break;
    case 'f':
    case 'e': fmt_double(o, *sp, va_arg(*ap, double), c); break;
    case 'c': {
        char ch = (char)va_arg(*ap, int);
        field(o, sp, "", &ch, 1);
        break;
    }
    case 's': {
        const char *s = va_arg(*ap, const char *);
        int n = 0;
        if (!s)
            s = "(null)";
        while (s[n] && (sp->prec < 0 || n < sp->prec))
            n++;
        field(o, sp, "", s, n);
        break;
    }
    default: /* %% and anything unknown: literal */
        put(o, '%');
        if (c != '%')
            put(o, c);
    }
}

int sl_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap)
{
    struct out o = { buf, cap, 0 };
    struct spec sp;
    va_list aq;

    va_copy(aq, ap);
    while (*fmt) {
        if (*fmt != '%') {
            put(&o, *fmt++);
            continue;
        }
        fmt = parse_spec(fmt + 1, &sp, &aq);
        if (*fmt == 0)
            break;
        convert(&o, &sp, *fmt++, &aq);
    }
    va_end(aq);
    if (cap > 0)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return (int)o.len;
}

int sl_snprintf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = sl_vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}
