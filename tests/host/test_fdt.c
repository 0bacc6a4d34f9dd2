/* Unit tests of the device-tree reader (kernel/fdt.c) on synthetic blobs: sparse hart ids, disabled harts,
   NUMA nodes on cpus and memory, reserved memory, bootargs, and what a blob must have. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "fdt.h"

/* ---- a tiny flattened-device-tree writer ---- */
static uint8_t blob[32768];
static uint32_t structs[7000], nstruct;
static char strings[1024];
static uint32_t nstrings;

static uint32_t be(uint32_t v) { return __builtin_bswap32(v); }
static void word(uint32_t v) { structs[nstruct++] = be(v); }

static void bytes(const void *p, size_t n)
{
    uint8_t *dst = (uint8_t *)&structs[nstruct];
    memset(dst, 0, (n + 3) & ~3u);
    memcpy(dst, p, n);
    nstruct += (uint32_t)((n + 3) / 4);
}

static uint32_t string_off(const char *s)
{
    for (uint32_t o = 0; o < nstrings; o += (uint32_t)strlen(strings + o) + 1)
        if (!strcmp(strings + o, s))
            return o;
    uint32_t o = nstrings;
    strcpy(strings + o, s);
    nstrings += (uint32_t)strlen(s) + 1;
    return o;
}

static void begin(const char *name) { word(1); bytes(name, strlen(name) + 1); }
static void end(void) { word(2); }
static void prop(const char *name, const void *val, uint32_t len)
{
    word(3);
    word(len);
    word(string_off(name));
    bytes(val, len);
}
static void prop_u32(const char *name, uint32_t v) { v = be(v); prop(name, &v, 4); }
static void prop_str(const char *name, const char *s) { prop(name, s, (uint32_t)strlen(s) + 1); }
static void prop_reg(const char *name, uint64_t base, uint64_t size)
{
    uint32_t r[4] = { be((uint32_t)(base >> 32)), be((uint32_t)base), be((uint32_t)(size >> 32)), be((uint32_t)size) };
    prop(name, r, sizeof r);
}

static void *finish(void)
{
    word(9);
    uint32_t off_struct = 40, off_strings = off_struct + nstruct * 4, total = off_strings + nstrings;
    uint32_t hdr[10] = { be(0xd00dfeed), be(total), be(off_struct), be(off_strings), be(16), be(17), 0, 0, 0, 0 };
    memcpy(blob, hdr, sizeof hdr);
    memcpy(blob + off_struct, structs, nstruct * 4);
    memcpy(blob + off_strings, strings, nstrings);
    nstruct = nstrings = 0;
    return blob;
}

static void cpu(uint32_t id, int node, const char *status)
{
    char name[32];
    snprintf(name, sizeof name, "cpu@%u", id);
    begin(name);
    prop_str("device_type", "cpu");
    prop_u32("reg", id);
    if (node >= 0)
        prop_u32("numa-node-id", (uint32_t)node);
    if (status)
        prop_str("status", status);
    begin("interrupt-controller");
    end();
    end();
}

/* A machine with harts 9, 0, 4 (and 7 disabled), two NUMA nodes, reserved memory and bootargs. */
static void *sparse_numa_machine(void)
{
    begin("");
    prop_u32("#address-cells", 2);
    prop_u32("#size-cells", 2);
    begin("chosen");
    prop_str("bootargs", "policy=timeslice job=gauss:n=64");
    end();
    begin("reserved-memory");
    prop_u32("#address-cells", 2);
    prop_u32("#size-cells", 2);
    begin("mmode_resv0@80000000");
    prop_reg("reg", 0x80000000, 0x80000);
    end();
    end();
    begin("memory@88000000");
    prop_str("device_type", "memory");
    prop_reg("reg", 0x88000000, 0x8000000);
    prop_u32("numa-node-id", 1);
    end();
    begin("memory@80000000");
    prop_str("device_type", "memory");
    prop_reg("reg", 0x80000000, 0x8000000);
    prop_u32("numa-node-id", 0);
    end();
    begin("cpus");
    prop_u32("#address-cells", 1);
    prop_u32("#size-cells", 0);
    prop_u32("timebase-frequency", 10000000);
    cpu(9, 1, NULL);
    cpu(0, 0, "okay");
    cpu(7, 1, "disabled");
    cpu(4, 0, NULL);
    begin("cpu-map");
    end();
    end();
    end();
    return finish();
}

static void test_sparse_harts_and_numa(void)
{
    static struct platform pl;
    char err[128];
    memset(&pl, 0, sizeof pl);
    CHECK(fdt_parse(sparse_numa_machine(), &pl, err, sizeof err) == 0);
    CHECK(pl.nharts == 3);
    CHECK(pl.hartid[0] == 0 && pl.hartid[1] == 4 && pl.hartid[2] == 9);     /* ascending, disabled one left out */
    CHECK(pl.hart_node[0] == 0 && pl.hart_node[1] == 0 && pl.hart_node[2] == 1);
    CHECK(pl.nnodes == 2 && pl.timebase_hz == 10000000);
    CHECK(pl.nmem == 2);
    CHECK(pl.mem[0].base == 0x88000000 && pl.mem[0].size == 0x8000000 && pl.mem[0].node == 1);
    CHECK(pl.mem[1].base == 0x80000000 && pl.mem[1].node == 0);
    CHECK(pl.nresv == 2);                                                   /* the blob itself + mmode_resv0 */
    CHECK(pl.resv[1].base == 0x80000000 && pl.resv[1].size == 0x80000);
    CHECK(!strcmp(pl.bootargs, "policy=timeslice job=gauss:n=64"));
}

static void test_bad_blobs(void)
{
    static struct platform pl;
    char err[128];
    uint8_t junk[64] = { 1, 2, 3 };
    memset(&pl, 0, sizeof pl);
    CHECK(fdt_parse(junk, &pl, err, sizeof err) == -1 && strstr(err, "magic"));

    begin("");                                  /* no /cpus at all */
    begin("memory@80000000");
    prop_reg("reg", 0x80000000, 0x1000000);
    end();
    end();
    memset(&pl, 0, sizeof pl);
    CHECK(fdt_parse(finish(), &pl, err, sizeof err) == -1 && strstr(err, "/cpus"));
}

static void test_too_many_harts(void)
{
    static struct platform pl;
    char err[128];
    begin("");
    begin("memory@80000000");
    prop_reg("reg", 0x80000000, 0x1000000);
    end();
    begin("cpus");
    prop_u32("timebase-frequency", 10000000);
    for (uint32_t i = 0; i < SL_MAX_HARTS + 2; i++)
        cpu(i, -1, NULL);
    end();
    end();
    memset(&pl, 0, sizeof pl);
    CHECK(fdt_parse(finish(), &pl, err, sizeof err) == 0);
    CHECK(pl.too_many_harts && pl.nharts == SL_MAX_HARTS);
}

/* A minimal machine: one hart, 16 MiB, and /chosen/bootargs given as raw bytes (args NULL: no /chosen). */
static void *machine_with_bootargs(const char *args, uint32_t len)
{
    begin("");
    begin("memory@80000000");
    prop_reg("reg", 0x80000000, 0x1000000);
    end();
    begin("cpus");
    prop_u32("timebase-frequency", 10000000);
    cpu(0, -1, NULL);
    end();
    if (args) {
        begin("chosen");
        prop("bootargs", args, len);
        end();
    }
    end();
    return finish();
}

/* Bootargs far beyond the old 2 KiB buffer arrive whole (issue 10: a scenario whose 2048th byte fell inside
   a token ran a different scenario); bootargs that are not a string are refused, not read past. */
static void test_long_bootargs(void)
{
    static struct platform pl;
    static char args[20000];
    char err[128];
    size_t n = 0;
    while (n + 64 < sizeof args - 32)
        n += (size_t)snprintf(args + n, sizeof args - n, "job=synth:iters=5,procs=8,barrier=block ");
    n += (size_t)snprintf(args + n, sizeof args - n, "job=fault:kind=store");
    memset(&pl, 0, sizeof pl);
    CHECK(fdt_parse(machine_with_bootargs(args, (uint32_t)n + 1), &pl, err, sizeof err) == 0);
    CHECK(strlen(pl.bootargs) == n && !strcmp(pl.bootargs, args));
    CHECK(!strcmp(pl.bootargs + n - 20, "job=fault:kind=store"));

    memset(&pl, 0, sizeof pl);
    CHECK(fdt_parse(machine_with_bootargs("job=gauss", 9), &pl, err, sizeof err) == -1 && strstr(err, "bootargs"));

    memset(&pl, 0, sizeof pl);                  /* no /chosen/bootargs at all: an empty scenario */
    CHECK(fdt_parse(machine_with_bootargs(NULL, 0), &pl, err, sizeof err) == 0 && pl.bootargs && !pl.bootargs[0]);
}

/* A hart with its riscv,isa and its interrupt controller's phandle (0: no phandle). */
static void cpu_isa(uint32_t id, const char *isa, uint32_t intc_phandle)
{
    char name[32];
    snprintf(name, sizeof name, "cpu@%u", id);
    begin(name);
    prop_str("device_type", "cpu");
    prop_u32("reg", id);
    prop_str("riscv,isa", isa);
    begin("interrupt-controller");
    prop_u32("#interrupt-cells", 1);
    if (intc_phandle)
        prop_u32("phandle", intc_phandle);
    end();
    end();
}

/* A software-interrupt device at base serving the harts whose controllers' phandles are listed, in register
   order: an ACLINT SSWI or MSWI (compat) lists one line per hart; a SiFive CLINT (timer_too) lists each
   hart's line and then its M-timer line (7). A child node checks that a device is judged on its own
   properties, not its children's. */
static void swi(const char *compat, uint64_t base, const uint32_t *phandles, int n, uint32_t line, int timer_too)
{
    char name[32], compat_list[64];
    uint32_t intx[4 * 8];
    int k = 0;
    snprintf(name, sizeof name, "swi@%llx", (unsigned long long)base);
    begin(name);
    int len = snprintf(compat_list, sizeof compat_list, "vendor,thing%c%s", 0, compat);
    prop("compatible", compat_list, (uint32_t)len + 1);
    if (!strcmp(compat, "riscv,aclint-mtimer")) { /* QEMU's order: mtime (after the last mtimecmp), then mtimecmp */
        uint64_t r[] = { base + 0x7ff8, 8, base, 0x7ff8 };
        uint32_t cells[8];
        for (int i = 0; i < 4; i++) {
            cells[2 * i] = be((uint32_t)(r[i] >> 32));
            cells[2 * i + 1] = be((uint32_t)r[i]);
        }
        prop("reg", cells, sizeof cells);
    } else {
        prop_reg("reg", base, 0x4000);
    }
    for (int i = 0; i < n; i++) {
        intx[k++] = be(phandles[i]);
        intx[k++] = be(line);
        if (timer_too) {
            intx[k++] = be(phandles[i]);
            intx[k++] = be(7);
        }
    }
    prop("interrupts-extended", intx, (uint32_t)(4 * k));
    begin("child");
    prop_str("compatible", "something-else");
    end();
    end();
}

static void sswi(uint64_t base, const uint32_t *phandles, int n, uint32_t line)
{
    swi("riscv,aclint-sswi", base, phandles, n, line, 0);
}

/* Two sockets, each with its own SSWI (as QEMU virt builds with -smp 4,sockets=2), listed before /cpus; hart
   6 lists no sstc, hart 2 is in no SSWI device. */
static void *aclint_machine(int sstc_everywhere, int line)
{
    static const uint32_t socket0[] = { 0x11, 0x12 }, socket1[] = { 0x14 };
    begin("");
    prop_u32("#address-cells", 2);
    prop_u32("#size-cells", 2);
    begin("memory@80000000");
    prop_reg("reg", 0x80000000, 0x1000000);
    end();
    begin("soc");
    prop_u32("#address-cells", 2);
    prop_u32("#size-cells", 2);
    sswi(0x2f00000, socket0, 2, (uint32_t)line);
    sswi(0x2f04000, socket1, 1, (uint32_t)line);
    swi("riscv,aclint-mswi", 0x2000000, socket0, 2, 3, 0);   /* socket 0's M-mode registers: ACLINT MSWI */
    swi("riscv,aclint-mtimer", 0x2004000, socket0, 2, 7, 0); /* and MTIMER */
    swi("sifive,clint0", 0x2010000, socket1, 1, 3, 1);       /* socket 1's: a CLINT (msip, then mtimecmp) */
    end();
    begin("cpus");
    prop_u32("#address-cells", 1);
    prop_u32("#size-cells", 0);
    prop_u32("timebase-frequency", 10000000);
    cpu_isa(0, "rv64imafdch_zicsr_zifencei_sstc", 0x11);
    cpu_isa(1, "rv64imafdch_sstc_zicsr", 0x12);
    cpu_isa(2, "rv64imafdch_zicsr_sstc", 0x13);
    cpu_isa(6, sstc_everywhere ? "rv64imafdch_sstc" : "rv64imafdch_zicsr_sstcx", 0x14);
    end();
    end();
    return finish();
}

static void test_interrupt_hardware(void)
{
    static struct platform pl;
    char err[128];
    memset(&pl, 0, sizeof pl);
    CHECK(fdt_parse(aclint_machine(1, 1), &pl, err, sizeof err) == 0);
    CHECK(pl.nharts == 4 && pl.sstc == 1);
    CHECK(pl.sswi_reg[0] == 0x2f00000 && pl.sswi_reg[1] == 0x2f00004);
    CHECK(pl.sswi_reg[2] == 0);                   /* no device lists hart 2's controller */
    CHECK(pl.sswi_reg[3] == 0x2f04000);           /* hart index 3 is hart id 6, first in the second socket */
    CHECK(pl.mswi_reg[0] == 0x2000000 && pl.mswi_reg[1] == 0x2000004);
    CHECK(pl.mswi_reg[2] == 0 && pl.mswi_reg[3] == 0x2010000);
    CHECK(pl.mtimecmp_reg[0] == 0x2004000 && pl.mtimecmp_reg[1] == 0x2004008);
    CHECK(pl.mtimecmp_reg[2] == 0 && pl.mtimecmp_reg[3] == 0x2014000);

    memset(&pl, 0, sizeof pl);                    /* "sstcx" is not sstc: one hart without it, no Sstc */
    CHECK(fdt_parse(aclint_machine(0, 1), &pl, err, sizeof err) == 0);
    CHECK(pl.sstc == 0);

    memset(&pl, 0, sizeof pl);                    /* a device wired to another line is no SSWI of ours */
    CHECK(fdt_parse(aclint_machine(1, 3), &pl, err, sizeof err) == 0);
    CHECK(pl.sswi_reg[0] == 0 && pl.sswi_reg[3] == 0);
    CHECK(pl.mswi_reg[0] == 0x2000000);           /* the MSWI's own line is its own */

    memset(&pl, 0, sizeof pl);                    /* the older machines: no isa extensions, no ACLINT */
    CHECK(fdt_parse(sparse_numa_machine(), &pl, err, sizeof err) == 0);
    CHECK(pl.sstc == 0 && pl.sswi_reg[0] == 0);
}

int main(void)
{
    test_interrupt_hardware();
    test_long_bootargs();
    test_sparse_harts_and_numa();
    test_bad_blobs();
    test_too_many_harts();
    return check_done("test_fdt");
}
