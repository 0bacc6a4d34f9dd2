/* cache_ref.h - a naive reference of the machine model's caches for tests/host/test_cache_model.c, written
 * from the rules in tools/model/README.md and cache.h, sharing no code with tools/model/cache.c: each level
 * is a list of (line, last use) per set, the LRU way the one with the smallest last use; lines by division,
 * sets by modulo, the directory a plain array. Serialized accesses only. */
#ifndef CACHE_REF_H
#define CACHE_REF_H
#include <stdint.h>
#include <stdlib.h>
#include "cache.h"

struct rway {
    uint64_t line, last;
    int valid;
};

struct rcache {
    int sets, ways;
    uint64_t clock;
    struct rway *w; /* sets * ways */
};

struct ref {
    struct model_params p;
    int nlines;
    struct rcache *l1, *l2, *llc; /* per hart, per hart, per node; NULL when absent */
    uint64_t *dir;
};

static struct rcache *
rc_new(int n, int kb, int ways, int line_b)
{
    struct rcache *c;

    if (kb == 0)
        return NULL;
    c = calloc((size_t)n, sizeof *c);
    for (int i = 0; i < n; i++) {
        c[i].ways = ways;
        c[i].sets = kb * 1024 / (line_b * ways);
        c[i].w = calloc((size_t)(c[i].sets * ways), sizeof *c[i].w);
    }
    return c;
}

static void
rc_free(struct rcache *c, int n)
{
    for (int i = 0; c && i < n; i++)
        free(c[i].w);
    free(c);
}

static int
rc_has(const struct rcache *c, uint64_t line)
{
    const struct rway *s = c->w + (line % (uint64_t)c->sets) * (uint64_t)c->ways;

    for (int i = 0; i < c->ways; i++)
        if (s[i].valid && s[i].line == line)
            return 1;
    return 0;
}

/* Uses line: refreshes it, or puts it in the first empty way, else in the least recently used one. */
static void
rc_use(struct rcache *c, uint64_t line)
{
    struct rway *s = c->w + (line % (uint64_t)c->sets) * (uint64_t)c->ways, *v = NULL;

    c->clock++;
    for (int i = 0; i < c->ways; i++)
        if (s[i].valid && s[i].line == line)
            v = &s[i];
    for (int i = 0; !v && i < c->ways; i++)
        if (!s[i].valid)
            v = &s[i];
    if (!v) {
        v = &s[0];
        for (int i = 1; i < c->ways; i++)
            if (s[i].last < v->last)
                v = &s[i];
    }
    v->valid = 1;
    v->line = line;
    v->last = c->clock;
}

static void
ref_init(struct ref *r, const struct model_params *p)
{
    r->p = *p;
    r->nlines = (int)(p->ram_bytes / (uint64_t)p->line_b);
    r->l1 = rc_new(p->harts, p->l1_kb, p->l1_ways, p->line_b);
    r->l2 = rc_new(p->harts, p->l2_kb, p->l2_ways, p->line_b);
    r->llc = rc_new(p->nodes, p->llc_kb, p->llc_ways, p->line_b);
    r->dir = calloc((size_t)r->nlines, sizeof *r->dir);
}

static void
ref_free(struct ref *r)
{
    rc_free(r->l1, r->p.harts);
    rc_free(r->l2, r->p.harts);
    rc_free(r->llc, r->p.nodes);
    free(r->dir);
}

static int
ref_node_of_hart(const struct ref *r, int h)
{
    return h * r->p.nodes / r->p.harts;
}

static int
ref_node_of_addr(const struct ref *r, uint64_t pa)
{
    uint64_t per = r->p.ram_bytes / (uint64_t)r->p.nodes;
    int n = (int)((pa - r->p.ram_base) / per);

    return n < r->p.nodes ? n : r->p.nodes - 1;
}

/* The rules, straight: private tag match (bit clear: coherence), else the node's LLC (no bit of the node:
   coherence), else memory by node; every level passed through uses the line; store = only my bit,
   a load outside my private levels adds my bit. */
static enum model_served
ref_access(struct ref *r, int h, uint64_t pa, int is_store)
{
    uint64_t line, bit = 1ull << h, node_bits = 0;
    int node = ref_node_of_hart(r, h), mine;
    enum model_served s;

    if (pa < r->p.ram_base || pa >= r->p.ram_base + r->p.ram_bytes || h < 0 || h >= r->p.harts)
        return SERVED_L1;
    if (!r->l1 && !r->l2 && !r->llc)
        return ref_node_of_addr(r, pa) == node ? SERVED_LOCAL : SERVED_REMOTE;
    line = (pa - r->p.ram_base) / (uint64_t)r->p.line_b;
    mine = (r->dir[line] & bit) != 0;
    for (int g = 0; g < r->p.harts; g++)
        if (ref_node_of_hart(r, g) == node)
            node_bits |= 1ull << g;
    if (r->l1 && rc_has(&r->l1[h], line))
        s = mine ? SERVED_L1 : SERVED_COH;
    else if (r->l2 && rc_has(&r->l2[h], line))
        s = mine ? SERVED_L2 : SERVED_COH;
    else if (r->llc && rc_has(&r->llc[node], line))
        s = (r->dir[line] & node_bits) ? SERVED_LLC : SERVED_COH;
    else
        s = ref_node_of_addr(r, pa) == node ? SERVED_LOCAL : SERVED_REMOTE;
    if (r->l1)
        rc_use(&r->l1[h], line);
    if (r->l2 && s != SERVED_L1)
        rc_use(&r->l2[h], line);
    if (r->llc && s != SERVED_L1 && s != SERVED_L2)
        rc_use(&r->llc[node], line);
    if (is_store)
        r->dir[line] = bit;
    else if (s != SERVED_L1 && s != SERVED_L2)
        r->dir[line] |= bit;
    return s;
}

/* Whether the reference thinks p's cache shapes are whole sets. */
static int
ref_valid(const struct model_params *p)
{
    const int kb[3] = { p->l1_kb, p->l2_kb, p->llc_kb }, ways[3] = { p->l1_ways, p->l2_ways, p->llc_ways };

    for (int i = 0; i < 3; i++)
        if (kb[i] && (kb[i] * 1024) % (p->line_b * ways[i]) != 0)
            return 0;
    return 1;
}

#endif
