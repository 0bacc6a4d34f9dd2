/* cache.c - the machine model's caches, coherence directory and NUMA map (see cache.h for what is modelled
 * and the thread rules).
 *
 * Lines are numbered from ram_base: li = (pa - ram_base) >> line_shift, a uint32 (model_new checks that
 * RAM has fewer than 2^32 - 1 lines). A set's index is li mod sets (a mask when sets is a power of two).
 *
 * Private caches (per hart, one thread): a set is `ways` uint32 tags in MRU-to-LRU order, NO_TAG for an
 * empty way. A touch moves the tag to the front; a fill drops the last. Exact LRU. The line of the hart's
 * last access is always its set's MRU, so a repeat - the common case of a hot loop - is one compare with
 * hart->last and a directory load (model_access, a leaf); a hit on way k compares k + 1 tags, moves k.
 *
 * LLC (per node, shared by its harts' threads): a set is one clock word then `ways` words, each
 * tag << 32 | stamp, where stamp is the set's clock at the way's last touch; the LRU way is the one with
 * the largest clock - stamp (unsigned, so the 32-bit clock may wrap; exact while no way goes 2^32 - 1 of
 * its set's accesses untouched). All words are read and written with relaxed atomic loads and stores, no
 * read-modify-write: racing harts may lose a clock tick or a touch, or fill one line twice (see cache.h).
 *
 * Directory: one _Atomic uint64 per line, bit h = hart h may hold the line. Read with a relaxed load on
 * every access that uses a cache; a store writes bit(h) with a relaxed store when any other bit is set; a
 * load that misses with h's bit clear sets it with a relaxed atomic OR. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

#define NO_TAG  0xffffffffu
#define LLC_EMPTY ((uint64_t)NO_TAG << 32)
#define MAX_KB  (1 << 20)   /* 1 GiB per cache */
#define MAX_WAYS 256
#define MAX_CYCLES 1000000
#ifdef __GNUC__
#define NOINLINE __attribute__((noinline)) /* keeps the fast path's frame small: no callee-saved spills */
#else
#define NOINLINE
#endif

/* One cache level's shape. sets <= 2^26 (MAX_KB * 1024 / 16). */
struct geom {
    uint32_t sets, ways, mask; /* mask = sets - 1 when sets is a power of two, else 0 and fm is used */
    int pow2;
    uint64_t fm;               /* Lemire's fastmod constant, 2^64 / sets rounded up */
};

/* One hart's private state, on its own host cache lines (only its thread writes it). */
struct hart {
    _Alignas(64) uint32_t *l1, *l2; /* tag arrays (sets * ways), NULL when the level is absent */
    _Atomic uint64_t *llc;          /* its node's LLC, NULL when absent */
    uint64_t bit;                   /* 1 << h */
    uint64_t node_mask;             /* the bits of the harts of its node */
    uint32_t last;                  /* the line of its last access in RAM when it has an L1, else NO_TAG */
    int node;
};

struct model {
    struct model_params p;
    uint64_t ram_base, ram_bytes, node_bytes; /* node_bytes = ram_bytes / nodes */
    uint32_t line_shift;
    int harts, nodes, nocache;
    struct geom g[3];             /* L1, L2, LLC */
    uint32_t cost[MODEL_NSERVED]; /* extra cycles by enum model_served */
    _Atomic uint64_t *dir;        /* one word per line; NULL when nocache */
    _Atomic uint64_t *llcs[MODEL_MAX_HARTS];
    uint32_t *priv;               /* every hart's private tags, one allocation */
    struct hart *hart;            /* harts entries */
};

static inline uint32_t
set_of(const struct geom *g, uint32_t li)
{
    if (g->pow2)
        return li & g->mask;
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;

    return (uint32_t)(((u128)(g->fm * li) * g->sets) >> 64);
#else
    return li % g->sets;
#endif
}

/* ---- private levels: MRU-ordered tags ---- */

static inline int
priv_find(const uint32_t *set, uint32_t ways, uint32_t tag)
{
    for (const uint32_t *t = set, *end = set + ways; t < end; t++)
        if (*t == tag)
            return (int)(t - set);
    return -1;
}

/* Makes tag the set's MRU: moves it from way pos, or (pos < 0) fills it, dropping the LRU way. */
static inline void
priv_promote(uint32_t *set, uint32_t ways, int pos, uint32_t tag)
{
    for (uint32_t *t = set + (pos < 0 ? ways - 1 : (uint32_t)pos); t > set; t--)
        t[0] = t[-1];
    set[0] = tag;
}

/* ---- the LLC: stamped ways, relaxed atomics ---- */

/* Touches li in its LLC set (a fill into the LRU or an empty way if absent); 1 if it was there. */
static int
llc_touch(const struct geom *g, _Atomic uint64_t *llc, uint32_t li)
{
    _Atomic uint64_t *set = llc + (size_t)set_of(g, li) * (g->ways + 1);
    uint32_t now = (uint32_t)atomic_load_explicit(&set[0], memory_order_relaxed) + 1;
    uint32_t victim = 1, oldest = 0;

    atomic_store_explicit(&set[0], now, memory_order_relaxed);
    for (uint32_t w = 1; w <= g->ways; w++) {
        uint64_t e = atomic_load_explicit(&set[w], memory_order_relaxed);
        uint32_t tag = (uint32_t)(e >> 32);
        uint32_t age = tag == NO_TAG ? UINT32_MAX : now - (uint32_t)e;

        if (tag == li) {
            atomic_store_explicit(&set[w], (uint64_t)li << 32 | now, memory_order_relaxed);
            return 1;
        }
        if (age > oldest) {
            oldest = age;
            victim = w;
        }
    }
    atomic_store_explicit(&set[victim], (uint64_t)li << 32 | now, memory_order_relaxed);
    return 0;
}

/* ---- the access ---- */

static inline enum model_served
memory_of(const struct model *m, const struct hart *hs, uint32_t li)
{
    uint64_t n = m->nodes == 1 ? 0 : ((uint64_t)li << m->line_shift) / m->node_bytes;

    if (n >= (uint64_t)m->nodes)
        n = (uint64_t)m->nodes - 1;
    return (int)n == hs->node ? SERVED_LOCAL : SERVED_REMOTE;
}

/* Everything but an L1 hit: find the line in h's private levels (a tag match with h's directory bit
   clear is a coherence miss), else in its node's LLC (a match with no bit of the node is a coherence
   miss), else memory; then make it MRU in each level looked at and update the directory. With no cache at
   all, only memory. s1 is li's L1 set (NULL: no L1) and p1 its way there (-1: none), as access_l1 found. */
static NOINLINE enum model_served
access_slow(struct model *m, struct hart *hs, uint32_t li, int is_store, uint32_t *cycles, uint32_t *s1, int p1)
{
    _Atomic uint64_t *dw;
    uint64_t d;
    int mine, p2 = -1, in_llc = 0;
    uint32_t *s2 = NULL;
    enum model_served served;

    if (m->nocache) {
        served = memory_of(m, hs, li);
        *cycles = m->cost[served];
        return served;
    }
    dw = &m->dir[li];
    d = atomic_load_explicit(dw, memory_order_relaxed);
    mine = (d & hs->bit) != 0;
    if (hs->l2 && p1 < 0) {
        s2 = hs->l2 + (size_t)set_of(&m->g[1], li) * m->g[1].ways;
        p2 = priv_find(s2, m->g[1].ways, li);
    }
    if (p1 >= 0 || p2 >= 0) {
        served = !mine ? SERVED_COH : p1 >= 0 ? SERVED_L1 : SERVED_L2;
    } else {
        if (hs->llc)
            in_llc = llc_touch(&m->g[2], hs->llc, li);
        if (in_llc)
            served = (d & hs->node_mask) ? SERVED_LLC : SERVED_COH;
        else
            served = memory_of(m, hs, li);
    }
    if (served == SERVED_COH && hs->llc && (p1 >= 0 || p2 >= 0))
        llc_touch(&m->g[2], hs->llc, li); /* the refill passes through the LLC like any private miss */
    if (s1)
        priv_promote(s1, m->g[0].ways, p1, li);
    if (hs->l2 && served != SERVED_L1) {
        if (!s2) {
            s2 = hs->l2 + (size_t)set_of(&m->g[1], li) * m->g[1].ways;
            p2 = priv_find(s2, m->g[1].ways, li);
        }
        priv_promote(s2, m->g[1].ways, p2, li);
    }
    if (is_store) {
        if (d != hs->bit)
            atomic_store_explicit(dw, hs->bit, memory_order_relaxed);
    } else if (!mine) {
        atomic_fetch_or_explicit(dw, hs->bit, memory_order_relaxed);
    }
    if (s1)
        hs->last = li;
    *cycles = m->cost[served];
    return served;
}

/* An access that is not to h's last line: a hit anywhere in its L1 set, else access_slow. */
static NOINLINE enum model_served
access_l1(struct model *m, struct hart *hs, uint32_t li, int is_store, uint32_t *cycles)
{
    uint32_t *set = hs->l1 + (size_t)set_of(&m->g[0], li) * m->g[0].ways;
    int w = priv_find(set, m->g[0].ways, li);

    if (w >= 0) {
        uint64_t d = atomic_load_explicit(&m->dir[li], memory_order_relaxed);

        if (d & hs->bit) {
            priv_promote(set, m->g[0].ways, w, li);
            hs->last = li;
            if (is_store && d != hs->bit)
                atomic_store_explicit(&m->dir[li], hs->bit, memory_order_relaxed);
            *cycles = 0;
            return SERVED_L1;
        }
    }
    return access_slow(m, hs, li, is_store, cycles, set, w);
}

/* The fast path, a leaf: the line of h's last access is the MRU way of its L1 set (every access in RAM
   makes its line the MRU of L1), so only its directory bit can make it anything but an L1 hit. */
enum model_served
model_access(struct model *m, int h, uint64_t pa, int is_store, uint32_t *cycles)
{
    uint64_t off = pa - m->ram_base;
    struct hart *hs;
    uint32_t li;

    if (off >= m->ram_bytes || (unsigned)h >= (unsigned)m->harts) {
        *cycles = 0;
        return SERVED_L1;
    }
    li = (uint32_t)(off >> m->line_shift);
    hs = &m->hart[h];
    if (li == hs->last) {
        uint64_t d = atomic_load_explicit(&m->dir[li], memory_order_relaxed);

        if (d & hs->bit) {
            if (is_store && d != hs->bit)
                atomic_store_explicit(&m->dir[li], hs->bit, memory_order_relaxed);
            *cycles = 0;
            return SERVED_L1;
        }
    }
    if (hs->l1)
        return access_l1(m, hs, li, is_store, cycles);
    return access_slow(m, hs, li, is_store, cycles, NULL, -1);
}

int
model_node_of_hart(const struct model *m, int h)
{
    return (unsigned)h < (unsigned)m->harts ? m->hart[h].node : -1;
}

int
model_node_of_addr(const struct model *m, uint64_t pa)
{
    uint64_t off = pa - m->ram_base, n;

    if (off >= m->ram_bytes)
        return -1;
    n = off / m->node_bytes;
    return n >= (uint64_t)m->nodes ? m->nodes - 1 : (int)n;
}

const char *
model_served_name(enum model_served s)
{
    static const char *const names[MODEL_NSERVED] = { "l1", "l2", "llc", "coh", "local", "remote" };

    return (unsigned)s < MODEL_NSERVED ? names[s] : "?";
}

/* ---- parameters ---- */

/* The profile keys, in README's table order, with each one's field and range. */
const char *const model_param_keys[] = { "line_b",     "l1_kb",      "l1_ways",    "l2_kb",      "l2_ways",
                                         "llc_kb",     "llc_ways",   "l2_cycles",  "llc_cycles", "coh_cycles",
                                         "mem_cycles", "remote_cycles", "nodes",   NULL };

static const struct key {
    size_t off;
    int min, max;
} keys[] = {
    { offsetof(struct model_params, line_b), 16, 1024 },
    { offsetof(struct model_params, l1_kb), 0, MAX_KB },
    { offsetof(struct model_params, l1_ways), 0, MAX_WAYS },
    { offsetof(struct model_params, l2_kb), 0, MAX_KB },
    { offsetof(struct model_params, l2_ways), 0, MAX_WAYS },
    { offsetof(struct model_params, llc_kb), 0, MAX_KB },
    { offsetof(struct model_params, llc_ways), 0, MAX_WAYS },
    { offsetof(struct model_params, l2_cycles), 0, MAX_CYCLES },
    { offsetof(struct model_params, llc_cycles), 0, MAX_CYCLES },
    { offsetof(struct model_params, coh_cycles), 0, MAX_CYCLES },
    { offsetof(struct model_params, mem_cycles), 0, MAX_CYCLES },
    { offsetof(struct model_params, remote_cycles), 0, MAX_CYCLES },
    { offsetof(struct model_params, nodes), 1, MODEL_MAX_HARTS },
};
_Static_assert(sizeof keys / sizeof keys[0] + 1 == sizeof model_param_keys / sizeof model_param_keys[0],
               "one range per key");

/* Checks key i's value v alone (shown as `text` in a message, if given): 0, or -1 with a message. */
static int
key_check(int i, long long v, const char *text, char *err, size_t errlen)
{
    const char *k = model_param_keys[i];
    char num[32];

    snprintf(num, sizeof num, "%lld", v);
    if (v < keys[i].min || v > keys[i].max) {
        snprintf(err, errlen, "model: %s=%s out of range %d..%d", k, text ? text : num, keys[i].min, keys[i].max);
        return -1;
    }
    if (i == 0 && (v & (v - 1)) != 0) {
        snprintf(err, errlen, "model: line_b=%lld is not a power of two (16..1024)", v);
        return -1;
    }
    return 0;
}

int
model_param_set(struct model_params *p, const char *key, const char *value, char *err, size_t errlen)
{
    long long v = 0;
    int i;

    if (!key || !value) {
        snprintf(err, errlen, "model: %s without a value", key ? key : "a key");
        return -1;
    }
    for (i = 0; model_param_keys[i] && strcmp(model_param_keys[i], key) != 0; i++)
        ;
    if (!model_param_keys[i]) {
        snprintf(err, errlen, "model: unknown key '%s' (keys: line_b l1_kb l1_ways l2_kb l2_ways llc_kb "
                 "llc_ways l2_cycles llc_cycles coh_cycles mem_cycles remote_cycles nodes)", key);
        return -1;
    }
    if (!*value) {
        snprintf(err, errlen, "model: %s has no value (want a non-negative integer)", key);
        return -1;
    }
    for (const char *c = value; *c; c++) {
        if (*c < '0' || *c > '9') {
            snprintf(err, errlen, "model: %s=%s is not a non-negative integer", key, value);
            return -1;
        }
        if (v < 1000000000000LL) /* saturate: anything longer is out of range anyway */
            v = v * 10 + (*c - '0');
    }
    if (key_check(i, v, value, err, errlen) < 0)
        return -1;
    *(int *)((char *)p + keys[i].off) = (int)v;
    return 0;
}

/* ---- construction ---- */

/* The shape of a level of kb KiB and `ways` ways (0 KiB: absent, sets = 0); -1 with a message if the size
   is not a whole number of sets. */
static int
geom_init(struct geom *g, const char *name, int kb, int ways, int line_b, char *err, size_t errlen)
{
    uint64_t bytes = (uint64_t)kb * 1024, per_set = (uint64_t)line_b * (uint64_t)ways;

    memset(g, 0, sizeof *g);
    if (kb == 0)
        return 0;
    if (ways < 1) {
        snprintf(err, errlen, "model: %s_kb=%d needs %s_ways >= 1", name, kb, name);
        return -1;
    }
    if (bytes % per_set != 0) {
        snprintf(err, errlen, "model: %s_kb=%d is not a whole number of sets of %s_ways=%d lines of line_b=%d "
                 "bytes (%llu bytes a set)", name, kb, name, ways, line_b, (unsigned long long)per_set);
        return -1;
    }
    g->sets = (uint32_t)(bytes / per_set);
    g->ways = (uint32_t)ways;
    g->pow2 = (g->sets & (g->sets - 1)) == 0;
    g->mask = g->pow2 ? g->sets - 1 : 0;
    g->fm = UINT64_MAX / g->sets + 1;
    return 0;
}

/* Every check of p that needs more than one key. */
static int
params_check(const struct model_params *p, char *err, size_t errlen)
{
    for (int i = 0; model_param_keys[i]; i++)
        if (key_check(i, *(const int *)((const char *)p + keys[i].off), NULL, err, errlen) < 0)
            return -1;
    if (p->harts < 1 || p->harts > MODEL_MAX_HARTS) {
        snprintf(err, errlen, "model: harts=%d out of range 1..%d", p->harts, MODEL_MAX_HARTS);
        return -1;
    }
    if (p->nodes > p->harts) {
        snprintf(err, errlen, "model: nodes=%d is more than harts=%d", p->nodes, p->harts);
        return -1;
    }
    if (p->ram_bytes == 0 || p->ram_bytes % (uint64_t)p->line_b != 0 || p->ram_base % (uint64_t)p->line_b != 0 ||
        p->ram_base + p->ram_bytes < p->ram_base || p->ram_bytes / (uint64_t)p->line_b >= NO_TAG ||
        p->ram_bytes < (uint64_t)p->line_b * (uint64_t)p->nodes) {
        snprintf(err, errlen, "model: RAM 0x%llx+0x%llx is not a whole number of line_b=%d lines, at least one "
                 "per node, fewer than 2^32", (unsigned long long)p->ram_base, (unsigned long long)p->ram_bytes,
                 p->line_b);
        return -1;
    }
    return 0;
}

/* Allocates the private tag arrays, the LLCs and the directory, all empty. */
static int
model_alloc(struct model *m, char *err, size_t errlen)
{
    size_t n1 = (size_t)m->g[0].sets * m->g[0].ways, n2 = (size_t)m->g[1].sets * m->g[1].ways;
    size_t nl = (size_t)m->g[2].sets * (m->g[2].ways + 1);

    m->hart = aligned_alloc(64, sizeof(struct hart) * (size_t)m->harts);
    if (m->hart)
        memset(m->hart, 0, sizeof(struct hart) * (size_t)m->harts);
    m->priv = (n1 + n2) ? malloc((n1 + n2) * sizeof(uint32_t) * (size_t)m->harts) : NULL;
    m->dir = m->nocache ? NULL : calloc(m->ram_bytes >> m->line_shift, sizeof *m->dir);
    if (!m->hart || ((n1 + n2) && !m->priv) || (!m->nocache && !m->dir))
        goto oom;
    if (m->priv)
        memset(m->priv, 0xff, (n1 + n2) * sizeof(uint32_t) * (size_t)m->harts); /* NO_TAG everywhere */
    for (int n = 0; nl && n < m->nodes; n++) {
        if (!(m->llcs[n] = malloc(nl * sizeof **m->llcs)))
            goto oom;
        for (size_t i = 0; i < nl; i++)
            atomic_init(&m->llcs[n][i], i % (m->g[2].ways + 1) ? LLC_EMPTY : 0);
    }
    return 0;
oom:
    snprintf(err, errlen, "model: out of memory for the caches and directory (%llu lines of RAM)",
             (unsigned long long)(m->ram_bytes >> m->line_shift));
    return -1;
}

struct model *
model_new(const struct model_params *p, char *err, size_t errlen)
{
    static const char *const names[3] = { "l1", "l2", "llc" };
    const int kb[3] = { p->l1_kb, p->l2_kb, p->llc_kb }, ways[3] = { p->l1_ways, p->l2_ways, p->llc_ways };
    struct model *m;

    if (params_check(p, err, errlen) < 0)
        return NULL;
    if (!(m = calloc(1, sizeof *m))) {
        snprintf(err, errlen, "model: out of memory");
        return NULL;
    }
    m->p = *p;
    m->ram_base = p->ram_base;
    m->ram_bytes = p->ram_bytes;
    m->harts = p->harts;
    m->nodes = p->nodes;
    m->node_bytes = p->ram_bytes / (uint64_t)p->nodes;
    while ((1 << m->line_shift) < p->line_b)
        m->line_shift++;
    for (int i = 0; i < 3; i++)
        if (geom_init(&m->g[i], names[i], kb[i], ways[i], p->line_b, err, errlen) < 0)
            goto fail;
    m->nocache = !p->l1_kb && !p->l2_kb && !p->llc_kb;
    m->cost[SERVED_L1] = 0;
    m->cost[SERVED_L2] = (uint32_t)p->l2_cycles;
    m->cost[SERVED_LLC] = (uint32_t)p->llc_cycles;
    m->cost[SERVED_COH] = (uint32_t)p->coh_cycles;
    m->cost[SERVED_LOCAL] = (uint32_t)p->mem_cycles;
    m->cost[SERVED_REMOTE] = (uint32_t)p->remote_cycles;
    if (model_alloc(m, err, errlen) < 0)
        goto fail;
    for (int h = 0; h < m->harts; h++) {
        struct hart *hs = &m->hart[h];
        size_t n1 = (size_t)m->g[0].sets * m->g[0].ways, n2 = (size_t)m->g[1].sets * m->g[1].ways;

        hs->node = h * m->nodes / m->harts;
        hs->bit = (uint64_t)1 << h;
        hs->last = NO_TAG;
        hs->l1 = n1 ? m->priv + (n1 + n2) * (size_t)h : NULL;
        hs->l2 = n2 ? m->priv + (n1 + n2) * (size_t)h + n1 : NULL;
        hs->llc = m->llcs[hs->node];
    }
    for (int h = 0; h < m->harts; h++) /* a node's mask: its harts' bits */
        for (int g = 0; g < m->harts; g++)
            if (m->hart[g].node == m->hart[h].node)
                m->hart[h].node_mask |= m->hart[g].bit;
    return m;
fail:
    model_free(m);
    return NULL;
}

void
model_free(struct model *m)
{
    if (!m)
        return;
    for (int n = 0; n < MODEL_MAX_HARTS; n++)
        free(m->llcs[n]);
    free(m->dir);
    free(m->priv);
    free(m->hart);
    free(m);
}
