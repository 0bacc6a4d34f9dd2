/* check.h - the smallest test harness: CHECK(cond) records a failure and goes on; check_done() prints
   the "N passed, N failed" line and returns the exit status. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (cond) {                                                                 \
            check_passed++;                                                         \
        } else {                                                                    \
            check_failed++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                           \
    } while (0)

static inline int check_done(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, check_passed, check_failed);
    return check_failed ? 1 : 0;
}
#endif
