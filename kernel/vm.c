/*
 * vm.c - Sv39 address spaces.
 *
 * Layout of every page table (root = 512 gigapage entries):
 *   entry 0      0x00000000-0x3fffffff  devices (UART, test device), kernel only, one gigapage
 *   entry 1      0x40000000-0x7fffffff  the job's user space: [SL_USER_BASE, SL_USER_TOP), 4 KiB pages
 *   entry 2..    0x80000000-...         RAM, identity mapped, kernel only (RWX, global), gigapages
 * The kernel pagetable has entries 0 and 2..; a job's root copies them and adds entry 1. So the kernel
 * runs unchanged whichever job's satp is loaded, traps need no trampoline, and the kernel reaches any
 * physical page through its identity address. User pointers are never dereferenced directly: they are
 * translated through the job's page table with the access checked (uvm_translate).
 *
 * All or nothing: uvm_check looks at every page of a user range before a copy or a console write uses
 * any of it, so a bad range fails without a partial effect; uvm_alloc either maps the whole range or
 * gives back every page it took. User pages are never unmapped while their job lives, so a range that
 * passed uvm_check stays good (no TLB shootdown is ever needed).
 */
#include "kernel.h"
#include "uaccess.h"

pagetable_t kernel_pagetable;

static void *zalloc(void)
{
    void *p = kalloc_page(0);
    if (p)
        memset(p, 0, PAGE_SIZE);
    return p;
}

void vm_init(void)
{
    kernel_pagetable = zalloc();
    if (!kernel_pagetable)
        panic("no memory for the kernel page table");
    uint64_t hi = 0;
    for (int i = 0; i < plat.nmem; i++)
        hi = MAX(hi, plat.mem[i].base + plat.mem[i].size);
    kernel_pagetable[0] = PA2PTE(0) | PTE_V | PTE_R | PTE_W | PTE_G | PTE_A | PTE_D;
    for (uint64_t gb = 2; gb < 256 && (gb << 30) < hi; gb++)
        kernel_pagetable[gb] = PA2PTE(gb << 30) | PTE_V | PTE_R | PTE_W | PTE_X | PTE_G | PTE_A | PTE_D;
}

uint64_t vm_satp(pagetable_t pt) { return SATP_SV39 | ((uint64_t)pt >> PAGE_SHIFT); }

pagetable_t uvm_create(void)
{
    pagetable_t pt = zalloc();
    if (!pt)
        return 0;
    memcpy(pt, kernel_pagetable, PAGE_SIZE);
    pagetable_t l1 = zalloc();
    if (!l1) {
        kfree_page(pt);
        return 0;
    }
    pt[1] = PA2PTE(l1) | PTE_V;
    return pt;
}

/* The leaf PTE for user va, creating the level-0 table when create is set. */
static pte_t *walk(pagetable_t pt, uint64_t va, int create)
{
    if (va < SL_USER_BASE || va >= SL_USER_TOP)
        return 0;
    pagetable_t l1 = (pagetable_t)PTE2PA(pt[1]);
    pte_t *e = &l1[VPN(va, 1)];
    if (!(*e & PTE_V)) {
        if (!create)
            return 0;
        pagetable_t l0 = zalloc();
        if (!l0)
            return 0;
        *e = PA2PTE(l0) | PTE_V;
    }
    pagetable_t l0 = (pagetable_t)PTE2PA(*e);
    return &l0[VPN(va, 0)];
}

/* Map one user page; if va is mapped already, add perm to it (segments may share a page). */
int uvm_map(pagetable_t pt, uint64_t va, uint64_t pa, uint64_t perm)
{
    pte_t *e = walk(pt, va, 1);
    if (!e)
        return -1;
    if (*e & PTE_V)
        *e |= perm;
    else
        *e = PA2PTE(pa) | perm | PTE_U | PTE_V | PTE_A | PTE_D;
    return 0;
}

/* Back [va, va+len) with zeroed pages from node; pages already mapped are kept (perm added to them).
   First every page it needs is taken onto a private list (page-table pages are made on the way and
   stay, empty, with the address space), then all are mapped; if memory runs out first, the list goes
   back to the allocator and nothing new is mapped - a failed request never eats the memory other jobs
   need, nor leaves pages nobody was given. */
int uvm_alloc(pagetable_t pt, uint64_t va, uint64_t len, uint64_t perm, int node)
{
    if (!uva_range_ok(va, len))
        return -1;
    uint64_t start = va & ~(PAGE_SIZE - 1), end = va + len;
    void *list = 0; /* each page's first word links the next */
    for (uint64_t a = start; a < end; a += PAGE_SIZE) {
        pte_t *e = walk(pt, a, 1);
        void *page = e && !(*e & PTE_V) ? kalloc_page(node) : 0;
        if (!e || (!(*e & PTE_V) && !page)) {
            while (list) {
                void *next = *(void **)list;
                kfree_page(list);
                list = next;
            }
            return -1;
        }
        if (page) {
            *(void **)page = list;
            list = page;
        }
    }
    for (uint64_t a = start; a < end; a += PAGE_SIZE) {
        pte_t *e = walk(pt, a, 0);
        if (*e & PTE_V) {
            *e |= perm;
            continue;
        }
        void *page = list;
        list = *(void **)page;
        memset(page, 0, PAGE_SIZE);
        *e = PA2PTE(page) | perm | PTE_U | PTE_V | PTE_A | PTE_D;
    }
    return 0;
}

/* Take [va, va+len) out of the page table without freeing the pages behind it (their owner keeps them:
   ulog.c). Page-table pages stay; the caller flushes TLBs if any hart may hold the mappings. */
void uvm_unmap(pagetable_t pt, uint64_t va, uint64_t len)
{
    for (uint64_t a = va & ~(PAGE_SIZE - 1); a < va + len; a += PAGE_SIZE) {
        pte_t *e = walk(pt, a, 0);
        if (e)
            *e = 0;
    }
}

void uvm_free(pagetable_t pt)
{
    pagetable_t l1 = (pagetable_t)PTE2PA(pt[1]);
    for (int i = 0; i < 512; i++) {
        if (!(l1[i] & PTE_V))
            continue;
        pagetable_t l0 = (pagetable_t)PTE2PA(l1[i]);
        for (int k = 0; k < 512; k++)
            if (l0[k] & PTE_V)
                kfree_page((void *)PTE2PA(l0[k]));
        kfree_page(l0);
    }
    kfree_page(l1);
    kfree_page(pt);
}

uint64_t uvm_translate(pagetable_t pt, uint64_t va, uint64_t perm)
{
    pte_t *e = walk(pt, va, 0);
    if (!e || !(*e & PTE_V) || !(*e & PTE_U) || (*e & perm) != perm)
        return 0;
    return PTE2PA(*e) | (va & (PAGE_SIZE - 1));
}

/* 0 if every byte of [va, va+len) is user memory mapped with perm; -1 otherwise (also when it wraps). */
int uvm_check(pagetable_t pt, uint64_t va, uint64_t len, uint64_t perm)
{
    if (len == 0)
        return 0; /* touches nothing, wherever it points */
    if (!uva_range_ok(va, len))
        return -1;
    for (uint64_t a = va & ~(PAGE_SIZE - 1); a < va + len; a += PAGE_SIZE)
        if (!uvm_translate(pt, a, perm))
            return -1;
    return 0;
}

int copy_from_user(pagetable_t pt, void *dst, uint64_t src, size_t n)
{
    uint8_t *d = dst;
    if (uvm_check(pt, src, n, PTE_R) < 0)
        return -1;
    while (n) {
        uint64_t pa = uvm_translate(pt, src, PTE_R);
        if (!pa)
            return -1;
        size_t k = MIN(n, PAGE_SIZE - (src & (PAGE_SIZE - 1)));
        memcpy(d, (void *)pa, k);
        d += k, src += k, n -= k;
    }
    return 0;
}

int copy_to_user(pagetable_t pt, uint64_t dst, const void *src, size_t n)
{
    const uint8_t *s = src;
    if (uvm_check(pt, dst, n, PTE_W) < 0)
        return -1;
    while (n) {
        uint64_t pa = uvm_translate(pt, dst, PTE_W);
        if (!pa)
            return -1;
        size_t k = MIN(n, PAGE_SIZE - (dst & (PAGE_SIZE - 1)));
        memcpy((void *)pa, s, k);
        s += k, dst += k, n -= k;
    }
    return 0;
}
