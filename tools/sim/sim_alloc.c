/*
 * sim_alloc.c - the library's allocator (lib/base/alloc.c) as an app's blocks see it under --model: which
 * addresses its blocks get, and the pages the kernel zeroes for them. One struct sim_heap per job, kept by
 * the app's model (tools/sim/apps/tclosure.c, adjoint.c).
 */
#include "sim.h"
#include "sim_kit.h"
#include "sim_mem.h"

/* A big block's whole pages, its header in. */
uint64_t alloc_pages(uint64_t bytes) { return (bytes + 64 + 4095) & ~4095UL; }

/* The allocator's other blocks (lib/base/alloc.c). A small one's class (16 << c bytes) gets its first block by
   carving a 64 KB chunk from SYS_alloc (zeroed by the kernel) and writing a header into each block; the free
   list hands out the chunk's last block first, and a freed block is its class's next. Only the classes of
   1 KB and up (c >= 6) are the app's here: the smaller ones are carved by the library's own start-up blocks
   (barrier, hand-out), which are start-up's, not modelled. A big block is fresh zeroed pages, or the big block
   freed last if it is large enough. Returns the block's address, 0 where not modelled; *ns gets the stall. */
uint64_t alloc_block(struct sim_heap *a, int id, int h, uint64_t bytes, uint64_t *ns)
{
    if (bytes > 2048) {
        uint64_t b = a->big_freed;
        if (b && a->big_freed_b >= bytes)
            return a->big_freed = 0, b;
        b = mem_alloc(id, alloc_pages(bytes), mem_node_of_hart(h));
        *ns += mem_touch(id, h, b, alloc_pages(bytes), 8, 1);
        return b + 64;
    }
    int c = 0;
    while ((16u << c) < bytes)
        c++;
    uint64_t step = 16 + (16u << c), b;
    if (c < 6)
        return 0;
    if ((b = a->freed[c]))
        return a->freed[c] = 0, b;
    if (!a->chunk[c]) {
        a->chunk[c] = mem_alloc(id, 64 * 1024, mem_node_of_hart(h));
        *ns += mem_touch(id, h, a->chunk[c], 64 * 1024, 8, 1);
        for (uint64_t off = 0; off + step <= 64 * 1024; off += step)
            *ns += mem_touch(id, h, a->chunk[c] + off, 16, 8, 1);
        a->left[c] = (uint32_t)(64 * 1024 / step);
    }
    return a->left[c] ? a->chunk[c] + --a->left[c] * step + 16 : 0;
}

void alloc_unblock(struct sim_heap *a, uint64_t b, uint64_t bytes)
{
    int c = 0;
    while ((16u << c) < bytes)
        c++;
    if (bytes > 2048)
        a->big_freed = b, a->big_freed_b = bytes;
    else if (b)
        a->freed[c] = b;
}

/* A block of bytes written whole (then read whole if rw), or left alone: its stall. */
uint64_t alloc_use(struct sim_heap *a, int id, int h, uint64_t bytes, int elem, int rw, uint64_t *addr)
{
    uint64_t ns = 0, b = alloc_block(a, id, h, bytes, &ns);
    if (b)
        ns += mem_touch(id, h, b, bytes, elem, 1) + (rw ? mem_touch(id, h, b, bytes, elem, 0) : 0);
    *addr = b;
    return ns;
}

