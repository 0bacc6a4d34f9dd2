/*
 * rv_libc.c - the few C library functions gcc may emit calls to, for the
 * freestanding kernel target (struct copies and initialisations become
 * memcpy/memset calls even under -ffreestanding). On the host the C
 * library provides them; this file is empty there.
 *
 * Each function is compiled without loop-pattern recognition, otherwise gcc
 * may turn the loop in memset into a call to memset.
 */
#ifdef SL_TARGET_KERNEL

#include <stddef.h>
#include <stdint.h>

#define NOPATTERN __attribute__((optimize("no-tree-loop-distribute-patterns")))

typedef uint64_t __attribute__((may_alias)) word_t; /* a word view of any bytes */

/* Word loops when both pointers share 8-byte alignment, bytes otherwise. */
static int aligned8(const void *a, const void *b) { return (((uintptr_t)a | (uintptr_t)b) & 7) == 0; }

NOPATTERN void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    if (aligned8(d, 0) && n >= 8) {
        uint64_t w = (unsigned char)c;
        w |= w << 8;
        w |= w << 16;
        w |= w << 32;
        for (; n >= 8; n -= 8, d += 8)
            *(word_t *)d = w;
    }
    while (n-- > 0)
        *d++ = (unsigned char)c;
    return dst;
}

NOPATTERN void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (aligned8(d, s))
        for (; n >= 8; n -= 8, d += 8, s += 8)
            *(word_t *)d = *(const word_t *)s;
    while (n-- > 0)
        *d++ = *s++;
    return dst;
}

NOPATTERN void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d <= s || d >= s + n)
        return memcpy(dst, src, n);
    while (n-- > 0) /* overlapping, dst above src: copy backwards */
        d[n] = s[n];
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n > 0; n--, x++, y++)
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
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n > 0; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (*a == 0)
            return 0;
    }
    return 0;
}

char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (*s == 0)
            return 0;
    }
}

#endif
