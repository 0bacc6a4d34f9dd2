/* cache.h - the machine model's caches, coherence directory and NUMA map (issue 24; tools/model/README.md).
 * Pure C11: no QEMU, no glib. The QEMU plugin (plugin.c) calls model_access on every guest load and store.
 *
 * What it models (README's table):
 *  - one line size; per hart a private L1 and L2 (either may be absent, size 0), then a last-level cache
 *    shared by the harts of a node (absent: size 0); each set-associative with exact LRU when accesses are
 *    serialized. With no cache at all every access is served by memory.
 *  - coherence by invalidation: a directory word per physical line holds a bit per hart that may hold the
 *    line (harts <= 64). A store by h leaves only h's bit; a fill by h sets h's bit. A private tag match whose
 *    bit is clear is a coherence miss (SERVED_COH) - so is a tag match in the node's LLC when no hart of the
 *    node has the bit (another node stored since the LLC got it). Bits are not cleared by evictions.
 *  - NUMA: nodes split the harts contiguously (node of hart h = h*nodes/harts) and the RAM evenly, in
 *    order from ram_base; a miss of every cache is served by local or remote memory.
 *
 * Threads: model_access(m, h, ...) for one h must come from one thread at a time (the vCPU's own thread);
 * different harts may call it concurrently. Private caches are per hart and plain. The directory and the
 * LLCs are shared, touched with relaxed atomic loads/stores (fills with a relaxed atomic OR); no locks.
 * Under concurrent accesses to one LLC set its LRU is approximate (a touch may be lost, two harts may fill
 * the same line into two ways, or both into one way, losing one); the directory may lose a racing bit
 * (an extra or a missed coherence miss). Serialized, everything is exact (tests/host/test_cache_model.c). */
#ifndef MODEL_CACHE_H
#define MODEL_CACHE_H
#include <stddef.h>
#include <stdint.h>

#define MODEL_MAX_HARTS 64  /* one directory bit per hart in a uint64 */

struct model_params {
    int line_b, l1_kb, l1_ways, l2_kb, l2_ways, llc_kb, llc_ways;
    int l2_cycles, llc_cycles, coh_cycles, mem_cycles, remote_cycles, nodes;
    int harts;                  /* set by the caller, not a profile key */
    uint64_t ram_base, ram_bytes;
};

/* Where an access was served. The extra cycles of each are the profile's: 0, l2_cycles, llc_cycles,
   coh_cycles, mem_cycles, remote_cycles. */
enum model_served { SERVED_L1, SERVED_L2, SERVED_LLC, SERVED_COH, SERVED_LOCAL, SERVED_REMOTE };
#define MODEL_NSERVED 6

struct model;

/* A model for p, or NULL with a message in err (naming the key) if p is inconsistent: a cache's size not
   a whole number of sets of ways lines, line_b not a power of two in 16..1024, harts not in 1..64, nodes
   not in 1..harts, RAM not whole lines. The directory (ram_bytes/line_b words) is allocated zeroed and
   filled lazily by the OS; none with no cache at all. */
struct model *model_new(const struct model_params *p, char *err, size_t errlen);
void model_free(struct model *m);

/* One data access by hart h (0..harts-1) at physical address pa; returns where it was served and sets
   *cycles to that level's extra cycles (0 for an L1 hit). An address outside RAM or a bad h: SERVED_L1
   and 0 cycles, nothing changes. A hit in the first private level is the fast path: no atomic RMW. */
enum model_served model_access(struct model *m, int h, uint64_t pa, int is_store, uint32_t *cycles);

int model_node_of_hart(const struct model *m, int h);      /* -1 for a bad h */
int model_node_of_addr(const struct model *m, uint64_t pa); /* -1 outside RAM */

/* Sets the profile key `key` of p to the decimal integer `value`: 0, or -1 with a message naming the key
   for an unknown key or a bad value (not a non-negative integer, out of the key's range). Checks each
   value alone; model_new checks them together. harts and the RAM are not keys: the caller sets them. */
int model_param_set(struct model_params *p, const char *key, const char *value, char *err, size_t errlen);
extern const char *const model_param_keys[]; /* README's table order, NULL-terminated */

/* "l1", "l2", "llc", "coh", "local", "remote"; "?" for anything else. */
const char *model_served_name(enum model_served s);

#endif
