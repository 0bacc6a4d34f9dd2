/*
 * console.c - the serial console (ns16550 UART at 0x10000000 on QEMU virt), output only.
 * kprintf formats into a buffer first and writes the whole text under console_lock, so lines from
 * different harts never interleave: the console contract (RESULT, SUMMARY, ERROR lines) depends on it.
 */
#include "kernel.h"

#define UART_BASE 0x10000000UL
#define UART_THR 0
#define UART_LSR 5
#define UART_LSR_THRE 0x20

static struct spinlock console_lock = SPINLOCK_INIT("console");

static void uart_putc(char c)
{
    volatile uint8_t *u = (volatile uint8_t *)UART_BASE;
    while (!(u[UART_LSR] & UART_LSR_THRE))
        ;
    u[UART_THR] = (uint8_t)c;
}

void console_write(const char *s, size_t n)
{
    acquire(&console_lock);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            uart_putc('\r');
        uart_putc(s[i]);
    }
    release(&console_lock);
}

void kprintf(const char *fmt, ...)
{
    char buf[1024];            /* a RESULT line with every app key fits */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 1)
        n = sizeof buf - 1;
    console_write(buf, n);
}
