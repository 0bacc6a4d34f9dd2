/*
 * apps.c - the apps embedded in the kernel image and the ELF loader.
 *
 * The Makefile links every build/apps/<name>.elf into the kernel (build/kernel/apps_blob.S, generated) and a
 * table `embedded_apps` of {name, start, end}. At boot apps_init() checks each ELF and finds its app
 * spec in the section named ".slapp" (struct sl_appspec, include/schedlab/abi.h): the scenario parser validates the
 * app's keys against it before any job runs.
 */
#include "kernel.h"

struct embedded {
    const char *name;
    const uint8_t *start, *end;
};
extern const struct embedded embedded_apps[];

#define MAX_APPS 32
static struct app apps[MAX_APPS];
static int n_apps;

/* ELF64 (just the fields we read) */
struct elf_hdr {
    uint8_t ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct elf_phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};
struct elf_shdr {
    uint32_t name, type;
    uint64_t flags, addr, offset, size;
    uint32_t link, info;
    uint64_t addralign, entsize;
};
#define PT_LOAD  1
#define PF_X     1
#define PF_W     2
#define PF_R     4
#define EM_RISCV 243

static const struct elf_hdr *elf_check(const uint8_t *elf, size_t size)
{
    const struct elf_hdr *h = (const void *)elf;
    if (size < sizeof *h || memcmp(h->ident, "\177ELF", 4) || h->ident[4] != 2 || h->machine != EM_RISCV)
        return 0;
    if (h->phoff + (uint64_t)h->phnum * sizeof(struct elf_phdr) > size)
        return 0;
    if (h->shoff + (uint64_t)h->shnum * sizeof(struct elf_shdr) > size || h->shstrndx >= h->shnum)
        return 0;
    return h;
}

static const struct sl_appspec *find_spec(const uint8_t *elf, const struct elf_hdr *h)
{
    const struct elf_shdr *sh = (const void *)(elf + h->shoff);
    const char *names = (const char *)elf + sh[h->shstrndx].offset;
    for (int i = 0; i < h->shnum; i++) {
        if (strcmp(names + sh[i].name, ".slapp") || sh[i].size < sizeof(struct sl_appspec))
            continue;
        const struct sl_appspec *s = (const void *)(elf + sh[i].offset);
        if (s->magic == SL_APPSPEC_MAGIC && s->nkeys <= SL_MAX_KEYS)
            return s;
    }
    return 0;
}

/* A spec the parser can trust: named keys, known kinds, defaults inside their ranges. */
static const char *spec_problem(const struct sl_appspec *s)
{
    for (uint32_t i = 0; i < s->nkeys; i++) {
        const struct sl_keyspec *k = &s->keys[i];
        if (!k->name[0] || strlen(k->name) >= sizeof k->name)
            return "a key has no name";
        if (k->kind == SL_KEY_INT && (k->min > k->max || k->def < k->min || k->def > k->max))
            return "an integer key's default is outside its range";
        if (k->kind == SL_KEY_ENUM && (!k->choices[0] || strlen(k->choices) >= sizeof k->choices || k->def < 0))
            return "an enum key has no choices";
        if (k->kind != SL_KEY_INT && k->kind != SL_KEY_ENUM)
            return "a key has an unknown kind";
    }
    return 0;
}

void apps_init(void)
{
    for (const struct embedded *e = embedded_apps; e->name && n_apps < MAX_APPS; e++) {
        size_t size = e->end - e->start;
        const struct elf_hdr *h = elf_check(e->start, size);
        const struct sl_appspec *spec = h ? find_spec(e->start, h) : 0;
        if (!spec) {
            kprintf("ERROR app %s: embedded ELF is not a schedlab app (no .slapp spec); left out\n", e->name);
            continue;
        }
        const char *problem = spec_problem(spec);
        if (problem) {
            kprintf("ERROR app %s: its .slapp spec is malformed (%s); left out\n", e->name, problem);
            continue;
        }
        apps[n_apps++] = (struct app){ e->name, e->start, size, spec };
    }
}

const struct app *app_lookup(const char *name)
{
    for (int i = 0; i < n_apps; i++)
        if (!strcmp(apps[i].name, name))
            return &apps[i];
    return 0;
}

const struct app *app_at(int i) { return i >= 0 && i < n_apps ? &apps[i] : 0; }
int napps(void) { return n_apps; }

/* Map and copy the app's PT_LOAD segments into pt, pages from node. Returns the entry point, 0 on error. */
uint64_t elf_load(pagetable_t pt, const struct app *a, int node, char *err, size_t errlen)
{
    const struct elf_hdr *h = elf_check(a->elf, a->size);
    const struct elf_phdr *ph = (const void *)(a->elf + h->phoff);
    for (int i = 0; i < h->phnum; i++) {
        if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
            continue;
        uint64_t va = ph[i].vaddr, end = va + ph[i].memsz;
        if (va < SL_TEXT_VA || end > SL_HEAP_VA || ph[i].filesz > ph[i].memsz ||
            ph[i].offset + ph[i].filesz > a->size) {
            snprintf(err, errlen, "app %s: segment %d at 0x%lx..0x%lx is outside the app area", a->name, i, va, end);
            return 0;
        }
        uint64_t perm =
            (ph[i].flags & PF_R ? PTE_R : 0) | (ph[i].flags & PF_W ? PTE_W : 0) | (ph[i].flags & PF_X ? PTE_X : 0);
        if (uvm_alloc(pt, va, ph[i].memsz, perm, node) < 0) {
            snprintf(err, errlen, "app %s: out of memory loading it", a->name);
            return 0;
        }
        /* the pages are fresh, so bss is already zero: copy the file bytes page by page */
        for (uint64_t off = 0; off < ph[i].filesz;) {
            uint64_t pa = uvm_translate(pt, va + off, 0);
            uint64_t k = MIN(ph[i].filesz - off, PAGE_SIZE - ((va + off) & (PAGE_SIZE - 1)));
            memcpy((void *)pa, a->elf + ph[i].offset + off, k);
            off += k;
        }
    }
    return h->entry;
}
