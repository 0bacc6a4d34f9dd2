/*
 * sim_elf.c - what the simulator reads of the kernel it stands for, so that its scenario parser (the
 * kernel's, kernel/scenario.c) sees the environment the kernel's launcher gives it and refuses a scenario
 * with the very ERROR line the kernel prints:
 *
 *   the apps     every app ELF in the apps directory (build/apps: the kernel embeds each of them), in the
 *                kernel's order (make's sort by name), with the app spec of its .slapp section, as
 *                kernel/apps.c reads them. The parser knows every app the kernel knows; a job of an app
 *                the simulator has no model of is refused afterwards by sim_app_setup, by name.
 *   free memory  kalloc_free_bytes(-1) at launcher_init: the pages from the kernel image's end
 *                (the ELF's kernel_end) to the top of RAM, less the device tree's pages and the kernel
 *                page table's one page (kalloc.c, fdt.c, vm.c).
 */
#include <dirent.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

#define RAM_BASE 0x80000000UL /* QEMU virt's DRAM */

static struct sl_appspec specs[32];
static char spec_names[32][16];
static int nspecs;
static char app_list[32 * 18];

/* The whole file, or 0. */
static unsigned char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = n > (long)sizeof(Elf64_Ehdr) ? malloc((size_t)n) : 0;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = 0;
    }
    fclose(f);
    *len = n;
    return b;
}

/* Section i of the ELF in b (n bytes), or 0 when the headers do not fit in the file. */
static Elf64_Shdr *section_table(unsigned char *b, long n, int *count)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)n)
        return 0;
    *count = eh->e_shnum;
    return (Elf64_Shdr *)(b + eh->e_shoff);
}

/* The .slapp section of an app ELF (struct sl_appspec, the same bytes on RV64 and the host: LP64, LE). */
static int read_spec(const char *path, struct sl_appspec *out)
{
    long n;
    unsigned char *b = slurp(path, &n);
    int rc = -1, count;
    Elf64_Shdr *sh = b ? section_table(b, n, &count) : 0;
    int str = sh ? ((Elf64_Ehdr *)b)->e_shstrndx : 0;
    if (sh && str < count && sh[str].sh_offset < (uint64_t)n) {
        const char *names = (const char *)b + sh[str].sh_offset;
        for (int i = 0; i < count; i++)
            if (sh[str].sh_offset + sh[i].sh_name < (uint64_t)n && !strcmp(names + sh[i].sh_name, ".slapp") &&
                sh[i].sh_size >= sizeof *out && sh[i].sh_offset + sizeof *out <= (uint64_t)n) {
                memcpy(out, b + sh[i].sh_offset, sizeof *out);
                rc = out->magic == SL_APPSPEC_MAGIC ? 0 : -1;
            }
    }
    free(b);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void sim_load_apps(const char *dir)
{
    DIR *d = opendir(dir);
    char *names[64];
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 64;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len - 4 < sizeof spec_names[0] && !strcmp(e->d_name + len - 4, ".elf"))
            names[n++] = strndup(e->d_name, len - 4);
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.elf", dir, names[i]);
        if (nspecs < 32 && read_spec(path, &specs[nspecs]) == 0) {
            snprintf(spec_names[nspecs++], sizeof spec_names[0], "%s", names[i]);
            size_t k = strlen(app_list);
            snprintf(app_list + k, sizeof app_list - k, "%s%s", k ? ", " : "", names[i]);
        }
        free(names[i]);
    }
    static const char *const models[] = { "gauss", "hog", "oddeven", "sleeper", "synth" };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        if (!sim_app_spec(models[i])) {
            fprintf(stderr, "schedlab-sim: cannot read the app spec of %s/%s.elf (build the apps: make apps)\n", dir,
                    models[i]);
            exit(2);
        }
}

const struct sl_appspec *sim_app_spec(const char *app)
{
    for (int i = 0; i < nspecs; i++)
        if (!strcmp(spec_names[i], app))
            return &specs[i];
    return 0;
}

const char *sim_app_list(void) { return app_list; }

/* The value of symbol name in the ELF's symbol table, or 0. */
static uint64_t symbol(unsigned char *b, long n, const char *name)
{
    int count;
    Elf64_Shdr *sh = section_table(b, n, &count);
    for (int i = 0; sh && i < count; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= (uint32_t)count ||
            sh[i].sh_offset + sh[i].sh_size > (uint64_t)n || sh[sh[i].sh_link].sh_offset >= (uint64_t)n)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(b + sh[i].sh_offset);
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
            if (sym[k].st_name < strs->sh_size && strs->sh_offset + strs->sh_size <= (uint64_t)n &&
                !strcmp((const char *)b + strs->sh_offset + sym[k].st_name, name))
                return sym[k].st_value;
    }
    return 0;
}

/* QEMU virt's device tree is about 4.1 KiB + 376 bytes per hart (QEMU 8, -machine virt,aclint=on), and
   OpenSBI grows it by one to three KiB before it hands it on; fdt.c reserves its pages. Measured against
   the kernel's own refusals of mem= at 1, 2, 8 and 32 harts (2, 2, 3 and 5 pages), and 64 agrees (8; the
   test_sim test checks 2 harts to the page against the kernel it is built with). An error here moves
   the free memory by a page or two, which the MiB figures in the parser's messages show only when the
   free memory lies that close above a whole MiB. */
static uint64_t dtb_pages(int harts) { return (4110 + 376 * (uint64_t)harts + 2048 + PAGE_SIZE - 1) / PAGE_SIZE; }

int sim_free_bytes(const char *kernel, uint64_t mem_bytes, int harts, uint64_t *free_bytes, char *err, size_t errlen)
{
    long n;
    unsigned char *b = slurp(kernel, &n);
    uint64_t end = b ? symbol(b, n, "kernel_end") : 0;
    free(b);
    if (!end) {
        snprintf(err, errlen, "cannot read kernel_end in %s: the simulator gives the scenario parser the free "
                 "memory of the kernel it stands for (build it: make, or name it with --kernel)", kernel);
        return -1;
    }
    uint64_t top = RAM_BASE + mem_bytes, start = (end + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    uint64_t used = (dtb_pages(harts) + 1) * PAGE_SIZE; /* + the kernel page table (vm_init) */
    if (top < start + used) {
        snprintf(err, errlen, "--mem %lu MiB leaves no memory beyond the kernel image of %s", mem_bytes >> 20, kernel);
        return -1;
    }
    *free_bytes = top - start - used;
    return 0;
}
