/*
 * keytable.c - the scenario language's own keys as KEY lines (kernel/scenario.h), from the parser's tables on
 * the host: every global setting and every key a job has. These do not depend on the build's policies or apps
 * (a listing boot, list=keys, prints those too), so the harness reads this file instead of keeping a copy of
 * the names (schedlab.keytable), and make builds it with the kernel (build/scenario-keys.txt).
 *
 * `keytable result-keys` prints instead the RESULT keys the kernel prints itself (kernel/resultkeys.h, which
 * SYS_result refuses an app), one `RESULTKEY <name>` line each: the reference of the console contract lists
 * them beside those a boot's lines show.
 */
#include <stdio.h>
#include <string.h>
#include "scenario.h"
#include "resultkeys.h"

int main(int argc, char **argv)
{
    char line[512];
    if (argc > 1 && !strcmp(argv[1], "result-keys")) {
        for (size_t i = 0; i < sizeof result_kernel_keys / sizeof result_kernel_keys[0]; i++)
            printf("RESULTKEY %s\n", result_kernel_keys[i]);
        return ferror(stdout) != 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: keytable [result-keys]\n");
        return 2;
    }
    for (int i = 0; scenario_setting(i); i++) {
        scenario_key_line(line, sizeof line, "setting", scenario_setting(i));
        puts(line);
    }
    for (int i = 0; scenario_job_key(i); i++) {
        scenario_key_line(line, sizeof line, "job", scenario_job_key(i));
        puts(line);
    }
    puts("KEY end");
    return ferror(stdout) != 0;
}
