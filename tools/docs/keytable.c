/*
 * keytable.c - the scenario language's own keys as KEY lines (kernel/scenario.h), from the parser's tables on
 * the host: every global setting and every key a job has. These do not depend on the build's policies or apps
 * (a listing boot, list=keys, prints those too), so the harness reads this file instead of keeping a copy of
 * the names (schedlab.keytable), and make builds it with the kernel (build/scenario-keys.txt).
 */
#include <stdio.h>
#include "scenario.h"

int main(void)
{
    char line[512];
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
