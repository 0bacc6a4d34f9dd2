/*
 * kprintf.h - the kernel's formatter (kernel/printf.c) as host code sees it.
 *
 * In the kernel, vsnprintf/snprintf are the kernel's own (declared in kernel.h). Pure kernel files that
 * also compile for the host (scenario.c) include this header instead, and on the host the names map to
 * kvsnprintf/ksnprintf: the host tests then run the kernel's formatter, not the C library's, and the C
 * library's stays available to compare against. Include it after any C library header.
 */
#ifndef KPRINTF_H
#define KPRINTF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef SCHEDLAB_HOST
#define vsnprintf kvsnprintf
#define snprintf ksnprintf
#endif

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
