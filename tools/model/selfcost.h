/* selfcost.h - the cache model's own host time per way an access is served (selfcost.c). */
#ifndef MODEL_SELFCOST_H
#define MODEL_SELFCOST_H
#include "cache.h"

/* ns[s]: host ns one model_access takes when served by s, measured on a scratch model of p's shape (0 where
   no pattern produced s alone, e.g. coherence). 0, or -1 if p is invalid. */
int model_self_cost(const struct model_params *p, double ns[MODEL_NSERVED]);

#endif
