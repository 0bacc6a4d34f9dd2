/*
 * printf.c - vsnprintf for the kernel: %d %i %u %x %p %s %c %% with the l/ll/z length modifiers,
 * a field width, '0' padding and '-' for left alignment. Output is always terminated and truncated
 * to the buffer; the return value is the length it would have had (like C's snprintf).
 */
#include "kernel.h"

struct out {
    char *buf;
    size_t size, len;
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, int left, char pad)
{
    int fill = width > (int)n ? width - (int)n : 0;
    if (!left)
        while (fill-- > 0)
            put(o, pad);
    while (n--)
        put(o, *s++);
    if (left)
        while (fill-- > 0)
            put(o, ' ');
}

static void put_number(struct out *o, uint64_t v, int neg, int base, int width, int left, char pad)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (neg) {
        if (pad == '0') {
            put(o, '-');
            width--;
        } else {
            tmp[n++] = '-';
        }
    }
    char s[24];
    for (int i = 0; i < n; i++)
        s[i] = tmp[n - 1 - i];
    put_padded(o, s, n, width, left, pad);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = { buf, size, 0 };
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        fmt++;
        int left = 0, width = 0, lng = 0;
        char pad = ' ';
        if (*fmt == '-') { left = 1; fmt++; }
        if (*fmt == '0') { pad = '0'; fmt++; }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l' || *fmt == 'z') { lng = 1; fmt++; }
        switch (*fmt) {
        case 'd': case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            put_number(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0, 10, width, left, pad);
            break;
        }
        case 'u':
            put_number(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 0, 10, width, left, pad);
            break;
        case 'x':
            put_number(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 0, 16, width, left, pad);
            break;
        case 'p':
            put(&o, '0'); put(&o, 'x');
            put_number(&o, (uint64_t)va_arg(ap, void *), 0, 16, width, left, pad);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            put_padded(&o, s, strlen(s), width, left, ' ');
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        case 0:
            fmt--;
            break;
        default:
            put(&o, '%');
            put(&o, *fmt);
        }
    }
    if (size)
        buf[o.len < size ? o.len : size - 1] = 0;
    return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
