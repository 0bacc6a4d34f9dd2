/*
 * batch.h - a batch of scenarios in one deterministic boot: bootargs "S1 then S2 then ...". The model is
 * in batch.c; the pure part (finding a scenario in the bootargs) compiles for the host too (-DSCHEDLAB_HOST:
 * tests/host/test_batch.c).
 */
#ifndef BATCH_H
#define BATCH_H

#include <stddef.h>
#include <stdint.h>

#define BATCH_WORD      "then"  /* the token between two scenarios of a batch */
#define BATCH_ARGS_MAX  8192    /* a scenario of a batch, copied out of the bootargs */

/* The scenario of `args` that starts at offset `at`: its tokens up to the next lone "then" (or the end),
   copied to buf with single spaces between them. *next is the offset just past that "then", 0 if none
   ended it. Returns 0; -1 if it does not fit in len bytes; -2 if it is empty (a "then" first, or two in a
   row). Reads nothing past the "then" that ends the scenario, so a batch's first k scenarios boot alike
   whatever follows them. */
int batch_scenario_at(const char *args, size_t at, char *buf, size_t len, size_t *next);

/* 1 if a scenario follows the "then" that ends at offset next (0: none ended it); a batch may end with
   "then". */
int batch_has_next(const char *args, size_t next);

#ifndef SCHEDLAB_HOST
/* boot_main: the scenario to run now - the bootargs themselves when they hold no "then" (nothing copied),
   else this boot's scenario of the batch, or NULL with err set. The first scenario of a batch keeps a copy
   of .data (batch.c, "The restart"), so call it before anything writes .data. */
const char *batch_scenario(const char *bootargs, char *err, size_t errlen);

/* The boot hart's index and hart id, and the device tree, for the restart (boot_main, after it numbered the
   harts). */
void batch_set_boot(int boot_index, uint64_t hartid, const void *dtb);

/* console_leaving (console.h): the run's verdict is out. In a batch, prints END and returns the exit status
   when this was the last scenario, or one that did not end with a verdict of its jobs (status 0 or 1);
   otherwise recalls every hart and boots the next scenario: it does not return. */
int batch_leaving(int status, void (*print)(const char *line));
#endif

#endif
