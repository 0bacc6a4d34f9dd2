/*
 * fdt.c - read the flattened device tree that OpenSBI hands the boot hart.
 *
 * We walk the structure block once and keep what the kernel needs: the harts under /cpus (hart ids from
 * `reg`, NUMA node from `numa-node-id`, skipping harts whose status is not "okay"), the timebase, every
 * /memory@* region with its node, the /reserved-memory ranges, /chosen/bootargs, and the interrupt hardware
 * S-mode can drive without the SBI: the Sstc extension in every hart's riscv,isa, and ACLINT SSWI devices
 * (each hart's setssip register, found through the phandle of the hart's interrupt controller in the
 * device's interrupts-extended). It also finds each hart's M-mode registers the same way - its software
 * interrupt (ACLINT MSWI, or a SiFive CLINT's msip) and its timer compare (ACLINT MTIMER, or the CLINT's
 * mtimecmp): the kernel cannot write those; the firmware of deterministic boots (firmware/fw.c) parses
 * the tree with this file and drives them.
 * Everything in the
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
enum where { W_OTHER, W_ROOT, W_CPUS, W_CPU, W_CPU_INTC, W_MEMORY, W_CHOSEN, W_RESV_PARENT, W_RESV };

#define MAX_DEPTH 16
#define MAX_HART_REGS 24 /* devices with a register per hart (an SSWI, MSWI and MTIMER per socket on QEMU virt) */
#define IRQ_SSOFT     1  /* a hart-local interrupt controller's line for the supervisor software interrupt */
#define IRQ_MSOFT     3  /* ... for the machine software interrupt */
#define IRQ_MTIMER    7  /* ... for the machine timer interrupt */
#define CLINT_MTIMECMP 0x4000 /* a SiFive CLINT's mtimecmp registers, from its base */

/* The devices with a register per hart, by compatible string */
enum { DEV_SSWI = 1, DEV_MSWI = 2, DEV_MTIMER = 4, DEV_CLINT = 8 };

/* A bank of per-hart registers (of an ACLINT SSWI, MSWI or MTIMER, or a CLINT's msip or mtimecmp): its first
   register, the stride, the controller line the registers serve and the device's interrupts-extended;
   resolved against the harts at the end. */
struct hart_regs {
    uint64_t base;
    uint32_t stride, line;
    const uint8_t *intx;
    uint32_t intx_len;
};

struct walk {
    struct platform *pl;
    enum where stack[MAX_DEPTH];
    int depth;
    int acells[MAX_DEPTH], scells[MAX_DEPTH]; /* #address-cells, #size-cells of the node at each depth */
    int addr_cells, size_cells;               /* of the root, used for /memory and /reserved-memory */
    int cpu_addr_cells;
    /* the cpu node being read */
    uint64_t cpu_reg;
    int cpu_node, cpu_ok, cpu_is_cpu, cpu_sstc;
    uint32_t cpu_intc; /* phandle of its interrupt-controller child, 0 if none */
    uint32_t hart_intc[SL_MAX_HARTS];
    int nsstc; /* harts whose riscv,isa lists sstc */
    /* the device node being read (any node outside /cpus, /memory, /chosen, /reserved-memory): its
       properties come before its children, so it is judged at its first child or its end */
    int dev_depth; /* the depth of the node the fields below describe, or -1 */
    int dev_kind; /* DEV_*, or 0: a device of no interest */
    const uint8_t *dev_reg, *dev_intx;
    uint32_t dev_reg_len, dev_intx_len;
    struct hart_regs banks[MAX_HART_REGS];
    int nbanks;
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
    if (parent == W_CPU && !strcmp(name, "interrupt-controller"))
        return W_CPU_INTC;
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

/* Does the string list val (len bytes of NUL-terminated strings) contain s? */
static int strlist_has(const uint8_t *val, uint32_t len, const char *s)
{
    size_t n = strlen(s);
    for (uint32_t off = 0; off < len;) {
        const char *e = (const char *)val + off;
        size_t m = 0;
        while (off + m < len && e[m])
            m++;
        if (m == n && !memcmp(e, s, n))
            return 1;
        off += (uint32_t)m + 1;
    }
    return 0;
}

/* Does a riscv,isa string ("rv64imafdch_zicsr_..._sstc") name the multi-letter extension ext? */
static int isa_has(const uint8_t *val, uint32_t len, const char *ext)
{
    size_t n = strlen(ext);
    const char *isa = (const char *)val;
    if (!len || val[len - 1])
        return 0;
    for (const char *p = strchr(isa, '_'); p; p = strchr(p + 1, '_'))
        if (!strncmp(p + 1, ext, n) && (p[1 + n] == '_' || p[1 + n] == 0))
            return 1;
    return 0;
}

static void dev_prop(struct walk *w, const char *name, const uint8_t *val, uint32_t len)
{
    if (w->dev_depth != w->depth) {
        w->dev_depth = w->depth;
        w->dev_kind = 0;
        w->dev_reg = w->dev_intx = 0;
    }
    if (!strcmp(name, "compatible"))
        w->dev_kind = strlist_has(val, len, "riscv,aclint-sswi")     ? DEV_SSWI
                      : strlist_has(val, len, "riscv,aclint-mswi")   ? DEV_MSWI
                      : strlist_has(val, len, "riscv,aclint-mtimer") ? DEV_MTIMER
                      : strlist_has(val, len, "sifive,clint0")       ? DEV_CLINT
                                                                     : 0;
    else if (!strcmp(name, "reg")) {
        w->dev_reg = val;
        w->dev_reg_len = len;
    } else if (!strcmp(name, "interrupts-extended")) {
        w->dev_intx = val;
        w->dev_intx_len = len;
    }
}

static void add_bank(struct walk *w, uint64_t base, uint32_t stride, uint32_t line)
{
    if (w->nbanks < MAX_HART_REGS)
        w->banks[w->nbanks++] = (struct hart_regs){ base, stride, line, w->dev_intx, w->dev_intx_len };
}

/* The device node at dev_depth has all its properties: keep its banks of per-hart registers. An MTIMER's
   reg lists its mtimecmp registers and its mtime register, in either order (the binding's, or QEMU's):
   the mtimecmp bank is the lower address (mtime follows the last mtimecmp in the ACLINT's layout). */
static void dev_done(struct walk *w)
{
    int d = w->dev_depth;
    w->dev_depth = -1;
    int ac = w->acells[d - 1], sc = w->scells[d - 1];
    uint32_t step = 4 * (uint32_t)(ac + sc);
    if (!w->dev_kind || !w->dev_reg || !w->dev_intx || ac < 1 || ac > 2 || w->dev_reg_len < step)
        return;
    uint64_t base = read_cells(w->dev_reg, ac);
    for (uint32_t off = step; w->dev_kind == DEV_MTIMER && off + step <= w->dev_reg_len; off += step)
        base = MIN(base, read_cells(w->dev_reg + off, ac));
    switch (w->dev_kind) {
    case DEV_SSWI: add_bank(w, base, 4, IRQ_SSOFT); break;
    case DEV_MSWI: add_bank(w, base, 4, IRQ_MSOFT); break;
    case DEV_MTIMER: add_bank(w, base, 8, IRQ_MTIMER); break;
    case DEV_CLINT:
        add_bank(w, base, 4, IRQ_MSOFT);
        add_bank(w, base + CLINT_MTIMECMP, 8, IRQ_MTIMER);
        break;
    }
}

/* Each hart's registers. A device's interrupts-extended lists (phandle of a hart's interrupt controller,
   line) pairs - the controllers have #interrupt-cells = 1 - and a bank's registers follow the entries on
   its line in order: the j-th such entry's hart has the register at base + stride j. (An ACLINT device
   lists only its line; a CLINT lists each hart's M-soft and M-timer lines.) */
static void resolve_banks(struct walk *w)
{
    struct platform *pl = w->pl;
    for (int d = 0; d < w->nbanks; d++) {
        const struct hart_regs *b = &w->banks[d];
        uint64_t *reg = b->line == IRQ_SSOFT ? pl->sswi_reg : b->line == IRQ_MSOFT ? pl->mswi_reg : pl->mtimecmp_reg;
        uint32_t j = 0;
        for (uint32_t k = 0; 8 * k + 8 <= b->intx_len; k++) {
            uint32_t ph = be32(b->intx + 8 * k), line = be32(b->intx + 8 * k + 4);
            if (line != b->line)
                continue;
            for (int h = 0; h < pl->nharts; h++)
                if (ph && w->hart_intc[h] == ph && !reg[h])
                    reg[h] = b->base + (uint64_t)b->stride * j;
            j++;
        }
    }
}

static void on_prop(struct walk *w, const char *name, const uint8_t *val, uint32_t len)
{
    if (len == 4 && !strcmp(name, "#address-cells"))
        w->acells[w->depth] = (int)be32(val);
    else if (len == 4 && !strcmp(name, "#size-cells"))
        w->scells[w->depth] = (int)be32(val);
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
        else if (!strcmp(name, "riscv,isa"))
            w->cpu_sstc = isa_has(val, len, "sstc");
        break;
    case W_CPU_INTC:
        if (len == 4 && (!strcmp(name, "phandle") || !strcmp(name, "linux,phandle")))
            w->cpu_intc = be32(val);
        break;
    case W_OTHER: dev_prop(w, name, val, len); break;
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
    if (w->dev_depth >= 0 && w->dev_depth < w->depth)
        dev_done(w);         /* the parent device's properties are complete */
    w->acells[w->depth] = 2; /* the defaults the devicetree specification gives */
    w->scells[w->depth] = 1;
    if (what == W_CPU) {
        w->cpu_reg = ~0UL;
        w->cpu_node = 0;
        w->cpu_ok = 1;
        w->cpu_is_cpu = 1;
        w->cpu_sstc = 0;
        w->cpu_intc = 0;
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
            w->hart_intc[i] = w->hart_intc[i - 1];
            i--;
        }
        pl->hartid[i] = w->cpu_reg;
        pl->hart_node[i] = w->cpu_node;
        w->hart_intc[i] = w->cpu_intc;
        w->nsstc += w->cpu_sstc;
    } else if (w->dev_depth == w->depth) {
        dev_done(w);
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
    struct walk w = { .pl = pl, .addr_cells = 2, .size_cells = 1, .cpu_addr_cells = 1, .dev_depth = -1 };
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
            if (w.depth + 1 >= MAX_DEPTH) {
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
    resolve_banks(&w);
    pl->sstc = pl->nharts > 0 && w.nsstc == pl->nharts;
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
