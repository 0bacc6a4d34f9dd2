/* The model's self-measurement (tools/model/selfcost.c) under ASan/UBSan: each pattern is served where it is
   meant to be, so every way a miss can be served gets its own figure (the figures are times: only their
   presence is checked, never their size). */
#include <string.h>
#include "check.h"
#include "selfcost.h"

static struct model_params shape(int l1_kb, int l1_ways, int l2_kb, int l2_ways, int llc_kb, int llc_ways, int nodes)
{
    struct model_params p = { .line_b = 64, .l1_kb = l1_kb, .l1_ways = l1_ways, .l2_kb = l2_kb, .l2_ways = l2_ways,
                              .llc_kb = llc_kb, .llc_ways = llc_ways, .l2_cycles = 10, .llc_cycles = 40,
                              .coh_cycles = 70, .mem_cycles = 200, .remote_cycles = 400, .nodes = nodes,
                              .harts = 2, .ram_base = 0x80000000UL, .ram_bytes = 256UL << 20 };
    return p;
}

int main(void)
{
    double ns[MODEL_NSERVED];
    struct model_params modern = shape(32, 8, 1024, 8, 32768, 16, 2);
    CHECK(model_self_cost(&modern, ns) == 0);
    CHECK(ns[SERVED_L1] > 0 && ns[SERVED_L2] > 0 && ns[SERVED_LLC] > 0 && ns[SERVED_LOCAL] > 0);
    CHECK(ns[SERVED_REMOTE] > 0);                        /* two nodes: the other node's memory */

    struct model_params one_level = shape(64, 2, 0, 0, 0, 0, 1);
    CHECK(model_self_cost(&one_level, ns) == 0);
    CHECK(ns[SERVED_L1] > 0 && ns[SERVED_LOCAL] > 0 && ns[SERVED_L2] == 0 && ns[SERVED_LLC] == 0);
    CHECK(ns[SERVED_REMOTE] == 0);

    struct model_params direct = shape(64, 1, 1024, 1, 0, 0, 1);   /* iris: two direct-mapped levels */
    direct.line_b = 16;
    CHECK(model_self_cost(&direct, ns) == 0);
    CHECK(ns[SERVED_L1] > 0 && ns[SERVED_L2] > 0 && ns[SERVED_LOCAL] > 0);

    struct model_params none = shape(0, 0, 0, 0, 0, 0, 2);        /* butterfly: memory only */
    CHECK(model_self_cost(&none, ns) == 0);
    CHECK(ns[SERVED_L1] == 0 && ns[SERVED_LOCAL] > 0 && ns[SERVED_REMOTE] > 0);

    struct model_params bad = shape(33, 7, 0, 0, 0, 0, 1);          /* not a whole number of sets */
    CHECK(model_self_cost(&bad, ns) == -1);
    return check_done("test_selfcost");
}
