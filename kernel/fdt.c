/*
 * fdt.c - read the flattened device tree that OpenSBI hands the boot hart.
 *
 * We walk the structure block once and keep what the kernel needs: the harts under /cpus (hart ids from
 * `reg`, NUMA node from `numa-node-id`, skipping harts whose status is not "okay"), the timebase, every
 * /memory@* region with its node, the /reserved-memory ranges, and /chosen/bootargs. Everything in the
 * blob is big-endian. The blob itself is listed as reserved memory, so the kernel may keep pointers into
 * it (the bootargs are not copied: they can be as long as the device tree allows).
 */
#ifdef SCHEDLAB_HOST
#include <stdio.h>
#include <string.h>
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ROUNDUP(x, a) (((x) + (a)-1) & ~((uint64_t)(a)-1))
#define MIN(a, b)     ((a) < (b) ? (a) : (b))
#define MAX(a, b)     ((a) > (b) ? (a) : (b))
#else
#include "kernel.h"
#endif
#include "fdt.h"

#define FDT_MAGIC      0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP        4
#define FDT_END        9

static uint32_t be32(const void *p)
{
    const uint8_t *b = p;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static uint64_t read_cells(const uint8_t *p, int cells)
{
    uint64_t v = 0;
    for (int i = 0; i < cells; i++)
        v = v << 32 | be32(p + 4 * i);
    return v;
}

/* Which node we are in, as far as the kernel cares. */
enum where { W_OTHER, W_ROOT, W_CPUS, W_CPU, W_MEMORY, W_CHOSEN, W_RESV_PARENT, W_RESV };

struct walk {
    struct platform *pl;
    enum where stack[16];
    int depth;
    int addr_cells, size_cells; /* of the root, used for /memory and /reserved-memory */
    int cpu_addr_cells;
    /* the cpu node being read */
    uint64_t cpu_reg;
    int cpu_node, cpu_ok, cpu_is_cpu;
    /* the memory node being read */
    const uint8_t *mem_reg;
    uint32_t mem_reg_len;
    int mem_node;
    int bad_bootargs; /* /chosen/bootargs is not a NUL-terminated string */
};

static enum where classify(enum where parent, const char *name)
{
    if (parent == W_ROOT) {
        if (!strcmp(name, "cpus"))
            return W_CPUS;
        if (!strncmp(name, "memory@", 7) || !strcmp(name, "memory"))
            return W_MEMORY;
        if (!strcmp(name, "chosen"))
            return W_CHOSEN;
        if (!strcmp(name, "reserved-memory"))
            return W_RESV_PARENT;
    }
    if (parent == W_CPUS && !strncmp(name, "cpu@", 4))
        return W_CPU;
    if (parent == W_RESV_PARENT)
        return W_RESV;
    return W_OTHER;
}

static void add_regions(struct walk *w, struct mem_region *arr, int *n, int max, const uint8_t *reg, uint32_t len,
                        int node)
{
    int step = 4 * (w->addr_cells + w->size_cells);
    for (uint32_t off = 0; step && off + step <= len && *n < max; off += step) {
        arr[*n].base = read_cells(reg + off, w->addr_cells);
        arr[*n].size = read_cells(reg + off + 4 * w->addr_cells, w->size_cells);
        arr[*n].node = node;
        (*n)++;
    }
}

static void on_prop(struct walk *w, const char *name, const uint8_t *val, uint32_t len)
{
    struct platform *pl = w->pl;
    switch (w->stack[w->depth]) {
    case W_ROOT:
        if (!strcmp(name, "#address-cells"))
            w->addr_cells = be32(val);
        else if (!strcmp(name, "#size-cells"))
            w->size_cells = be32(val);
        break;
    case W_CPUS:
        if (!strcmp(name, "timebase-frequency"))
            pl->timebase_hz = len == 8 ? read_cells(val, 2) : be32(val);
        else if (!strcmp(name, "#address-cells"))
            w->cpu_addr_cells = be32(val);
        break;
    case W_CPU:
        if (!strcmp(name, "reg"))
            w->cpu_reg = read_cells(val, w->cpu_addr_cells);
        else if (!strcmp(name, "numa-node-id"))
            w->cpu_node = be32(val);
        else if (!strcmp(name, "status"))
            w->cpu_ok = !strcmp((const char *)val, "okay") || !strcmp((const char *)val, "ok");
        else if (!strcmp(name, "device_type"))
            w->cpu_is_cpu = !strcmp((const char *)val, "cpu");
        break;
    case W_MEMORY:
        if (!strcmp(name, "reg")) {
            w->mem_reg = val;
            w->mem_reg_len = len;
        } else if (!strcmp(name, "numa-node-id")) {
            w->mem_node = be32(val);
        }
        break;
    case W_CHOSEN:
        if (!strcmp(name, "bootargs") && len > 0 && val[len - 1] == 0)
            pl->bootargs = (const char *)val;
        else if (!strcmp(name, "bootargs"))
            w->bad_bootargs = 1;
        break;
    case W_RESV:
        if (!strcmp(name, "reg"))
            add_regions(w, pl->resv, &pl->nresv, ARRAY_SIZE(pl->resv), val, len, 0);
        break;
    default: break;
    }
}

static void on_begin(struct walk *w, enum where what)
{
    if (what == W_CPU) {
        w->cpu_reg = ~0UL;
        w->cpu_node = 0;
        w->cpu_ok = 1;
        w->cpu_is_cpu = 1;
    } else if (what == W_MEMORY) {
        w->mem_reg = 0;
        w->mem_node = 0;
    }
}

static void on_end(struct walk *w, enum where what)
{
    struct platform *pl = w->pl;
    if (what == W_CPU && w->cpu_ok && w->cpu_is_cpu && w->cpu_reg != ~0UL) {
        if (pl->nharts == SL_MAX_HARTS) {
            pl->too_many_harts = 1;
            return;
        }
        /* insertion in ascending hart-id order: the index is the hart's rank */
        int i = pl->nharts++;
        while (i > 0 && pl->hartid[i - 1] > w->cpu_reg) {
            pl->hartid[i] = pl->hartid[i - 1];
            pl->hart_node[i] = pl->hart_node[i - 1];
            i--;
        }
        pl->hartid[i] = w->cpu_reg;
        pl->hart_node[i] = w->cpu_node;
    } else if (what == W_MEMORY && w->mem_reg) {
        add_regions(w, pl->mem, &pl->nmem, ARRAY_SIZE(pl->mem), w->mem_reg, w->mem_reg_len, w->mem_node);
    }
}

int fdt_parse(const void *dtb, struct platform *pl, char *err, size_t errlen)
{
    const uint8_t *b = dtb;
    if (be32(b) != FDT_MAGIC) {
        snprintf(err, errlen, "no device tree at %p (bad magic)", dtb);
        return -1;
    }
    uint32_t total = be32(b + 4), off_struct = be32(b + 8), off_strings = be32(b + 12);
    const uint8_t *p = b + off_struct, *end = b + total;
    const char *strings = (const char *)b + off_strings;
    struct walk w = { .pl = pl, .addr_cells = 2, .size_cells = 1, .cpu_addr_cells = 1 };
    w.stack[0] = W_OTHER;

    pl->resv[pl->nresv++] = (struct mem_region){ (uint64_t)(uintptr_t)dtb, total, 0 };
    pl->bootargs = "";
    while (p < end) {
        uint32_t tok = be32(p);
        p += 4;
        if (tok == FDT_BEGIN_NODE) {
            const char *name = (const char *)p;
            p += ROUNDUP(strlen(name) + 1, 4);
            enum where parent = w.stack[w.depth];
            enum where what = w.depth == 0 && name[0] == 0 ? W_ROOT : classify(parent, name);
            if (w.depth + 1 >= (int)ARRAY_SIZE(w.stack)) {
                snprintf(err, errlen, "device tree nests too deep");
                return -1;
            }
            w.stack[++w.depth] = what;
            on_begin(&w, what);
        } else if (tok == FDT_END_NODE) {
            on_end(&w, w.stack[w.depth]);
            w.depth--;
        } else if (tok == FDT_PROP) {
            uint32_t len = be32(p), nameoff = be32(p + 4);
            on_prop(&w, strings + nameoff, p + 8, len);
            p += 8 + ROUNDUP(len, 4);
        } else if (tok == FDT_NOP) {
            continue;
        } else {
            break; /* FDT_END or garbage */
        }
    }
    pl->nnodes = 1;
    for (int i = 0; i < pl->nharts; i++)
        pl->nnodes = MAX(pl->nnodes, pl->hart_node[i] + 1);
    for (int i = 0; i < pl->nmem; i++)
        pl->nnodes = MAX(pl->nnodes, pl->mem[i].node + 1);
    if (pl->nharts == 0 || pl->nmem == 0 || pl->timebase_hz == 0) {
        snprintf(err, errlen, "device tree lacks %s",
                 pl->nharts == 0     ? "/cpus"
                     : pl->nmem == 0 ? "/memory"
                                     : "timebase-frequency");
        return -1;
    }
    if (w.bad_bootargs) {
        snprintf(err, errlen, "/chosen/bootargs is not a NUL-terminated string");
        return -1;
    }
    if (pl->nnodes > SL_MAX_NODES) {
        snprintf(err, errlen, "%d NUMA nodes; at most %d are supported", pl->nnodes, SL_MAX_NODES);
        return -1;
    }
    return 0;
}
