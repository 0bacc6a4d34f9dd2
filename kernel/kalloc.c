/*
 * kalloc.c - physical page allocator with one free list per NUMA node.
 *
 * Every page of every /memory region above the kernel image, minus the reserved ranges (firmware, the
 * device tree blob), goes on the free list of its region's node at boot. A free page's first word links
 * it to the next. Each node's list has its own lock; kalloc_page(node) falls back to the other nodes in
 * order when the asked node is empty, so "node-local" is a preference, never a failure.
 */
#include "kernel.h"

extern char kernel_end[];

struct run {
    struct run *next;
};

static struct node_pages {
    struct spinlock lock;
    struct run *free;
    uint64_t nfree;
    uint64_t lo, hi; /* the node's physical range (union of its regions) */
} nodes[SL_MAX_NODES];

static int overlaps_reserved(uint64_t pa)
{
    for (int i = 0; i < plat.nresv; i++)
        if (pa + PAGE_SIZE > plat.resv[i].base && pa < plat.resv[i].base + plat.resv[i].size)
            return 1;
    return 0;
}

void kalloc_init(void)
{
    for (int n = 0; n < SL_MAX_NODES; n++) {
        nodes[n].lock = (struct spinlock)SPINLOCK_INIT("kalloc", LOCK_KALLOC);
        nodes[n].lo = ~0UL;
    }
    for (int i = 0; i < plat.nmem; i++) {
        struct mem_region *r = &plat.mem[i];
        struct node_pages *np = &nodes[r->node];
        np->lo = MIN(np->lo, r->base);
        np->hi = MAX(np->hi, r->base + r->size);
        uint64_t start = ROUNDUP(MAX(r->base, (uint64_t)kernel_end), PAGE_SIZE);
        /* push from the top down so the list hands out low addresses first */
        for (uint64_t pa = (r->base + r->size) & ~(PAGE_SIZE - 1); pa >= start + PAGE_SIZE;) {
            pa -= PAGE_SIZE;
            if (overlaps_reserved(pa))
                continue;
            struct run *run = (struct run *)pa;
            run->next = np->free;
            np->free = run;
            np->nfree++;
        }
    }
}

int page_node(uint64_t pa)
{
    for (int n = 0; n < plat.nnodes; n++)
        if (pa >= nodes[n].lo && pa < nodes[n].hi)
            return n;
    return 0;
}

static void *take(struct node_pages *np)
{
    acquire(&np->lock);
    struct run *r = np->free;
    if (r) {
        np->free = r->next;
        np->nfree--;
    }
    release(&np->lock);
    return r;
}

void *kalloc_page(int node)
{
    if (node < 0 || node >= plat.nnodes)
        node = 0;
    for (int k = 0; k < plat.nnodes; k++) {
        void *p = take(&nodes[(node + k) % plat.nnodes]);
        if (p)
            return p;
    }
    return 0;
}

void kfree_page(void *pa)
{
    struct node_pages *np = &nodes[page_node((uint64_t)pa)];
    struct run *r = pa;
    acquire(&np->lock);
    r->next = np->free;
    np->free = r;
    np->nfree++;
    release(&np->lock);
}

uint64_t kalloc_free_bytes(int node)
{
    uint64_t pages = 0;
    for (int n = 0; n < plat.nnodes; n++)
        if (node < 0 || node == n)
            pages += nodes[n].nfree;
    return pages * PAGE_SIZE;
}
