/*
 * alloc.c - a small thread-safe allocator over SYS_alloc.
 *
 * SYS_alloc hands out zeroed pages and never takes them back, so this
 * allocator recycles instead of returning:
 *   small  payloads up to SMALL_MAX bytes: power-of-two size classes from 16
 *          bytes, each with a free list; a class is refilled by carving one
 *          CHUNK from SYS_alloc. 16-byte aligned.
 *   big    everything larger, and every sl_alloc_node block: whole pages
 *          straight from SYS_alloc; freed ones go to one list and are reused
 *          first-fit (same node, big enough) without splitting. The payload
 *          starts BIG_HDR bytes in, so it is cache-line (64-byte) aligned.
 * Every block carries a header just before its payload saying which kind it
 * is. One spinlock guards all lists: apps allocate at setup, not in their
 * timed loops.
 *
 * Memory the app asks for is what the spec's estimate must cover: a small
 * block costs at most twice its size plus 16, a big one its size plus BIG_HDR
 * rounded up to a page, plus one CHUNK per size class in use.
 */
#include "schedlab.h"
#include "base/spinlock.h"

#define PAGE      4096u
#define CHUNK     (64u * 1024)
#define NCLASS    8 /* 16 .. 2048 */
#define SMALL_MAX (16u << (NCLASS - 1))
#define HDR       16u
#define BIG_HDR   64u
#define MAGIC     0x5a4cu
#define BIG       (-1)

/* Sits right before the payload; 16 bytes, so small payloads stay aligned. */
struct hdr {
    uint16_t magic;
    int16_t cls;  /* size class, or BIG */
    int16_t node; /* big: node asked for (-1 = any) */
    uint16_t _pad;
    uint64_t size;    /* big: bytes from the start of the pages to their end */
    struct hdr *next; /* only while on a free list; overlaps the payload */
};

static struct sl_spinlock lock;
static struct hdr *smallfree[NCLASS];
static struct hdr *bigfree;
static uint64_t sysbytes; /* taken from SYS_alloc, under lock */

static void *sysalloc(uint64_t bytes, int node)
{
    long a = sl_sys_alloc(bytes, node);

    if (a < 0)
        return 0;
    sysbytes += bytes;
    return (void *)a;
}

static int size_class(size_t bytes)
{
    int c = 0;
    while ((16u << c) < bytes)
        c++;
    return c;
}

/* Carve one chunk into blocks of class c; lock held. */
static int refill(int c)
{
    uint32_t step = HDR + (16u << c);
    char *p = sysalloc(CHUNK, -1);

    if (!p)
        return -1;
    for (uint32_t off = 0; off + step <= CHUNK; off += step) {
        struct hdr *h = (struct hdr *)(p + off);
        h->magic = MAGIC;
        h->cls = (int16_t)c;
        h->next = smallfree[c];
        smallfree[c] = h;
    }
    return 0;
}

static void *small_alloc(size_t bytes)
{
    int c = size_class(bytes);
    struct hdr *h;

    sl_spin_lock(&lock);
    if (!smallfree[c] && refill(c) < 0) {
        sl_spin_unlock(&lock);
        return 0;
    }
    h = smallfree[c];
    smallfree[c] = h->next;
    sl_spin_unlock(&lock);
    return (char *)h + HDR;
}

/* First fit on the big free list, else fresh pages; the header sits at
   BIG_HDR - HDR into the pages. */
static void *big_alloc(size_t bytes, int node)
{
    uint64_t need = ((uint64_t)bytes + BIG_HDR + PAGE - 1) / PAGE * PAGE;
    struct hdr **pp, *h;
    char *base;

    sl_spin_lock(&lock);
    for (pp = &bigfree; (h = *pp) != 0; pp = &h->next) {
        if (h->size >= need && h->node == node) {
            *pp = h->next;
            sl_spin_unlock(&lock);
            return (char *)h + HDR;
        }
    }
    base = sysalloc(need, node);
    sl_spin_unlock(&lock);
    if (!base)
        return 0;
    h = (struct hdr *)(base + BIG_HDR - HDR);
    h->magic = MAGIC;
    h->cls = BIG;
    h->node = (int16_t)node;
    h->size = need;
    return base + BIG_HDR;
}

void *sl_malloc(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    return bytes <= SMALL_MAX ? small_alloc(bytes) : big_alloc(bytes, -1);
}

void *sl_alloc_node(size_t bytes, int node) { return big_alloc(bytes ? bytes : 1, node); }

/* Recycled blocks are not zero, so clear them; fresh pages already are. */
void *sl_calloc(size_t n, size_t size)
{
    void *p;

    if (size && n > (size_t)-1 / size)
        return 0;
    p = sl_malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void sl_free(void *p)
{
    struct hdr *h;

    if (!p)
        return;
    h = (struct hdr *)((char *)p - HDR);
    if (h->magic != MAGIC)
        sl_die("sl_free: bad pointer %p", p);
    sl_spin_lock(&lock);
    if (h->cls == BIG) {
        h->next = bigfree;
        bigfree = h;
    } else {
        h->next = smallfree[h->cls];
        smallfree[h->cls] = h;
    }
    sl_spin_unlock(&lock);
}

uint64_t sl_alloc_sysbytes(void)
{
    uint64_t n;

    sl_spin_lock(&lock);
    n = sysbytes;
    sl_spin_unlock(&lock);
    return n;
}
