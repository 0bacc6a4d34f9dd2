/*
 * printf.c - vsnprintf for the kernel: the part of C's printf the kernel's messages use.
 *
 *   conversions  %d %i %u %x %X %o %p %s %c %%
 *   flags        '-' (left-justify) '0' (zero-pad) '+' ' ' (sign) '#' (0x / 0 prefix)
 *   width        digits or '*' (a negative '*' width left-justifies)
 *   .precision   digits or '*': at most that many bytes of a %s (the string need not be terminated
 *                beyond them), at least that many digits of an integer; a negative '*' means none
 *   lengths      hh h l ll z j t  (l, ll, z, j, t are 64-bit on rv64 and on the x86_64 host)
 *
 * Contract (like C's snprintf, and checked against glibc by tests/host/test_printf.c): at most size-1
 * bytes are written, followed by a NUL whenever size > 0; the return value is the length the whole
 * output would have had. Differences from glibc: %p of NULL prints 0x0 (glibc: "(nil)"); an unknown
 * conversion is printed as it stands ("%q"); no floating point.
 *
 * On the host (SCHEDLAB_HOST) the functions are called kvsnprintf/ksnprintf (kernel/kprintf.h), so the
 * host tests run this code and not the C library's.
 */
#ifdef SCHEDLAB_HOST
#include <string.h>
#include "kprintf.h"
#else
#include "kernel.h"
#endif

struct out {
    char *buf;
    size_t size, len; /* len: bytes produced so far, including those that did not fit */
};

struct spec {
    int left, zero, plus, space, alt;
    int width;
    int prec; /* -1: none */
    int len;  /* 'H' hh, 'h', 'l' (64-bit: l ll z j t), 0 int */
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void put_n(struct out *o, char c, int n)
{
    while (n-- > 0)
        put(o, c);
}

/* prefix, then zeros, then body, padded with spaces to the width (zero padding went into zeros). */
static void field(struct out *o, const struct spec *sp, const char *prefix, int zeros, const char *body, int n)
{
    int plen = (int)strlen(prefix);
    int fill = sp->width - plen - zeros - n;
    if (!sp->left)
        put_n(o, ' ', fill);
    for (int i = 0; i < plen; i++)
        put(o, prefix[i]);
    put_n(o, '0', zeros);
    for (int i = 0; i < n; i++)
        put(o, body[i]);
    if (sp->left)
        put_n(o, ' ', fill);
}

/* An integer: neg is its sign, v its magnitude. */
static void number(struct out *o, const struct spec *sp, uint64_t v, int neg, int base, int upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24], body[24];
    int n = 0;
    for (uint64_t x = v; x; x /= (unsigned)base)
        tmp[n++] = digits[x % (unsigned)base];
    if (v == 0 && sp->prec != 0)
        tmp[n++] = '0'; /* "%.0d" of 0 prints no digit at all */
    for (int i = 0; i < n; i++)
        body[i] = tmp[n - 1 - i];

    char prefix[3] = "";
    if (neg)
        prefix[0] = '-';
    else if (sp->plus)
        prefix[0] = '+';
    else if (sp->space)
        prefix[0] = ' ';
    else if (sp->alt && base == 16 && v)
        prefix[0] = '0', prefix[1] = upper ? 'X' : 'x';

    int zeros = sp->prec > n ? sp->prec - n : 0;
    if (sp->alt && base == 8 && zeros == 0 && (n == 0 || body[0] != '0'))
        zeros = 1; /* "%#o": the first digit is a 0 */
    if (sp->zero && !sp->left && sp->prec < 0) {
        int fill = sp->width - (int)strlen(prefix) - zeros - n;
        if (fill > 0)
            zeros += fill;
    }
    field(o, sp, prefix, zeros, body, n);
}

static void string(struct out *o, const struct spec *sp, const char *s)
{
    if (!s)
        s = sp->prec < 0 || sp->prec >= 6 ? "(null)" : ""; /* as glibc */
    int n = 0;
    while ((sp->prec < 0 || n < sp->prec) && s[n]) /* never reads past the precision */
        n++;
    field(o, sp, "", 0, s, n);
}

/* The flags, width, precision and length of one conversion; *fmt is left on the conversion letter. */
static void parse_spec(const char **fmt, va_list *ap, struct spec *sp)
{
    const char *f = *fmt;
    *sp = (struct spec){ .prec = -1 };
    for (;; f++) {
        if (*f == '-')
            sp->left = 1;
        else if (*f == '0')
            sp->zero = 1;
        else if (*f == '+')
            sp->plus = 1;
        else if (*f == ' ')
            sp->space = 1;
        else if (*f == '#')
            sp->alt = 1;
        else
            break;
    }
    if (*f == '*') {
        sp->width = va_arg(*ap, int);
        if (sp->width < 0) {
            sp->left = 1;
            sp->width = sp->width == -sp->width ? 0 : -sp->width; /* INT_MIN: no width */
        }
        f++;
    } else {
        while (*f >= '0' && *f <= '9' && sp->width < 100000000)
            sp->width = sp->width * 10 + (*f++ - '0');
        while (*f >= '0' && *f <= '9')
            f++;
    }
    if (*f == '.') {
        f++;
        sp->prec = 0;
        if (*f == '*') {
            sp->prec = va_arg(*ap, int);
            if (sp->prec < 0)
                sp->prec = -1;
            f++;
        } else {
            while (*f >= '0' && *f <= '9' && sp->prec < 100000000)
                sp->prec = sp->prec * 10 + (*f++ - '0');
            while (*f >= '0' && *f <= '9')
                f++;
        }
    }
    if (f[0] == 'h' && f[1] == 'h')
        sp->len = 'H', f += 2;
    else if (*f == 'h')
        sp->len = 'h', f++;
    else if (f[0] == 'l' && f[1] == 'l')
        sp->len = 'l', f += 2;
    else if (*f == 'l' || *f == 'z' || *f == 'j' || *f == 't')
        sp->len = 'l', f++;
    *fmt = f;
}

static int64_t signed_arg(va_list *ap, int len)
{
    if (len == 'l')
        return va_arg(*ap, int64_t);
    int v = va_arg(*ap, int);
    return len == 'H' ? (signed char)v : len == 'h' ? (short)v : v;
}

static uint64_t unsigned_arg(va_list *ap, int len)
{
    if (len == 'l')
        return va_arg(*ap, uint64_t);
    unsigned v = va_arg(*ap, unsigned);
    return len == 'H' ? (unsigned char)v : len == 'h' ? (unsigned short)v : v;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = { buf, size, 0 };
    va_list args;
    va_copy(args, ap);
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        const char *start = fmt++;
        struct spec sp;
        parse_spec(&fmt, &args, &sp);
        switch (*fmt) {
        case 'd':
        case 'i': {
            int64_t v = signed_arg(&args, sp.len);
            number(&o, &sp, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0, 10, 0);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o':
            sp.plus = sp.space = 0; /* signs are for %d and %i only */
            number(&o, &sp, unsigned_arg(&args, sp.len), 0, *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16, *fmt == 'X');
            break;
        case 'p': {
            uint64_t v = (uint64_t)(uintptr_t)va_arg(args, void *);
            sp.alt = 0;
            sp.plus = sp.space = 0;
            struct spec hex = sp;
            hex.width = 0;
            char body[24];
            struct out t = { body, sizeof body, 0 };
            number(&t, &hex, v, 0, 16, 0); /* the digits, then "0x" + digits as one field */
            field(&o, &sp, "0x", 0, body, t.len < sizeof body ? (int)t.len : (int)sizeof body - 1);
            break;
        }
        case 's': string(&o, &sp, va_arg(args, const char *)); break;
        case 'c': {
            char c = (char)va_arg(args, int);
            field(&o, &sp, "", 0, &c, 1);
            break;
        }
        case '%': put(&o, '%'); break;
        case 0: /* a lone '%' at the end: print what there is */
            for (; start < fmt; start++)
                put(&o, *start);
            fmt--;
            break;
        default:
            for (; start <= fmt; start++)
                put(&o, *start);
        }
    }
    va_end(args);
    if (size)
        buf[o.len < size ? o.len : size - 1] = 0;
    return o.len > 0x7fffffff ? 0x7fffffff : (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
