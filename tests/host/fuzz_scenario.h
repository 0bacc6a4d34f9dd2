/* fuzz_scenario.h - what the scenario fuzzer's two files share (fuzz_check.c: specs, environments, the
   checker; fuzz_scenario.c: the standalone generator and main). */
#ifndef FUZZ_SCENARIO_H
#define FUZZ_SCENARIO_H
#include <stddef.h>
#include "scenario.h"

#define MAX_SPECS 34
struct fuzz_spec { char name[16]; struct sl_appspec spec; };
extern struct fuzz_spec specs[MAX_SPECS];   /* the real apps' specs, then the synthetic ones */
extern int nspecs;
extern long n_ok, n_fail;                   /* inputs parsed / refused so far */

void load_specs(const char *dir);           /* exits when dir has no app objects */
struct scen_env make_env(unsigned sel);     /* sel picks harts, free memory and the policies built */
void fail(const char *input, const char *what, const char *err) __attribute__((noreturn));
void fuzz_one(const char *input, unsigned sel, size_t errlen);   /* parse and check one input */
#endif
