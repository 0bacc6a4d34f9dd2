/*
 * kalloc.c - physical page allocator with one free list per NUMA node.
 *
 * Every page of every /memory region above the kernel image, minus the reserved ranges (firmware, the
 * device tree blob), is free at boot, in its region's node. A node hands out pages given back first (its
 * free list: a free page's first word links it to the next, last freed first), then pages never handed out
 * yet, from each region's cursor upwards - lowest address first, later regions of a node before earlier
 * ones, the order a list built at boot would give. Boot touches no free page: a list linking every page
 * would write to all of guest memory, and QEMU's host process would fault all of it in at every boot. A
 * page is written once when it is first handed out, as the list's link was. Each node has its own lock;
 * kalloc_page(node) falls back to the other nodes in order when the asked node is empty, so "node-local" is
 * a preference, never a failure.
 */
#include "kernel.h"

extern char kernel_end[];

struct run {
    struct run *next;
};

/* Pages [next, end) of one region, never handed out yet (reserved pages among them are skipped). */
struct fresh {
    uint64_t start, next, end;
};

static struct node_pages {
    struct spinlock lock;
    struct run *free;          /* pages given back */
    uint64_t nfree;            /* free pages: on the list and not yet reached by a cursor */
    int nfresh;
    struct fresh fresh[PLAT_MAX_MEM]; /* one per region of the node */
    uint64_t lo, hi; /* the node's physical range (union of its regions) */
} nodes[SL_MAX_NODES];

static int overlaps_reserved(uint64_t pa)
{
    for (int i = 0; i < plat.nresv; i++)
        if (pa + PAGE_SIZE > plat.resv[i].base && pa < plat.resv[i].base + plat.resv[i].size)
            return 1;
    return 0;
}

/* Pages of [start, end) (page-aligned) that overlap no reserved range: counted a run at a time - from pa,
   either the reserved range holding pa's page is skipped, or every page up to the next range's first is
   free - so boots do not pay a loop per page (deterministic boots count every instruction). */
static uint64_t unreserved_pages(uint64_t start, uint64_t end)
{
    uint64_t n = 0;
    for (uint64_t pa = start; pa < end;) {
        uint64_t next = end, skip_to = 0;
        for (int i = 0; i < plat.nresv; i++) {
            uint64_t lo = plat.resv[i].base & ~(PAGE_SIZE - 1);
            uint64_t hi = ROUNDUP(plat.resv[i].base + plat.resv[i].size, PAGE_SIZE);
            if (pa >= lo && pa < hi)
                skip_to = MAX(skip_to, hi);
            else if (lo > pa && lo < next)
                next = lo;
        }
        if (skip_to) {
            pa = skip_to;
        } else {
            n += (next - pa) / PAGE_SIZE;
            pa = next;
        }
    }
    return n;
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
        uint64_t end = (r->base + r->size) & ~(PAGE_SIZE - 1);
        if (end <= start || np->nfresh == PLAT_MAX_MEM)
            continue;
        np->fresh[np->nfresh++] = (struct fresh){ start, start, end };
        np->nfree += unreserved_pages(start, end); /* counted, not touched */
    }
}

/* Zero every page ever handed out (each region's [start, next), reserved pages aside), so that the next
   scenario of a batch (batch.c) finds memory as a fresh boot does. Only the restarting hart runs. */
void kalloc_scrub(void)
{
    for (int n = 0; n < SL_MAX_NODES; n++)
        for (int i = 0; i < nodes[n].nfresh; i++)
            for (uint64_t pa = nodes[n].fresh[i].start; pa < nodes[n].fresh[i].next; pa += PAGE_SIZE)
                if (!overlaps_reserved(pa))
                    memset((void *)pa, 0, PAGE_SIZE);
}

int page_node(uint64_t pa)
{
    for (int n = 0; n < plat.nnodes; n++)
        if (pa >= nodes[n].lo && pa < nodes[n].hi)
            return n;
    return 0;
}

/* The next page no one has had, from the node's last region with one left (np->lock held; 0: none). */
static void *take_fresh(struct node_pages *np)
{
    for (int i = np->nfresh - 1; i >= 0; i--) {
        struct fresh *f = &np->fresh[i];
        while (f->next < f->end) {
            uint64_t pa = f->next;
            f->next += PAGE_SIZE;
            if (!overlaps_reserved(pa)) {
                *(volatile uint64_t *)pa = 0; /* written before anyone has it: the machine model learns
                                                 each page's address from the kernel's first access
                                                 (tools/model/plugin.c, "Physical addresses") */
                return (void *)pa;
            }
        }
    }
    return 0;
}

static void *take(struct node_pages *np)
{
    acquire(&np->lock);
    void *pa = np->free;
    if (pa)
        np->free = np->free->next;
    else
        pa = take_fresh(np);
    if (pa)
        np->nfree--;
    release(&np->lock);
    return pa;
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
