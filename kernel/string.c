/* string.c - the freestanding string and memory routines the kernel (and gcc) need. */
#include "kernel.h"

void *memset(void *d, int c, size_t n)
{
    uint8_t *p = d;
    if (((uintptr_t)p & 7) == 0 && (n & 7) == 0) {
        uint64_t v = (uint8_t)c;
        v |= v << 8;
        v |= v << 16;
        v |= v << 32;
        for (uint64_t *q = d; n; n -= 8)
            *q++ = v;
        return d;
    }
    while (n--)
        *p++ = (uint8_t)c;
    return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *dp = d;
    const uint8_t *sp = s;
    if ((((uintptr_t)dp | (uintptr_t)sp | n) & 7) == 0) {
        uint64_t *dq = d;
        const uint64_t *sq = s;
        for (; n; n -= 8)
            *dq++ = *sq++;
        return d;
    }
    while (n--)
        *dp++ = *sp++;
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (uint8_t)*a - (uint8_t)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (uint8_t)*a - (uint8_t)*b;
        if (!*a)
            return 0;
    }
    return 0;
}

/* Copy at most n-1 characters and always terminate; returns strlen(src). */
size_t strlcpy(char *d, const char *s, size_t n)
{
    size_t len = strlen(s);
    if (n) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(d, s, k);
        d[k] = 0;
    }
    return len;
}

char *strchr(const char *s, int c)
{
    for (; *s; s++)
        if (*s == (char)c)
            return (char *)s;
    return c ? 0 : (char *)s;
}

char *strcpy(char *d, const char *s)
{
    memcpy(d, s, strlen(s) + 1);
    return d;
}
