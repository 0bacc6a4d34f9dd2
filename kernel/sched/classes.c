/*
 * classes.c - the policies built into this kernel. Each policy file registers its struct sched_class with
 * SCHED_CLASS (sched.h), which puts a pointer in the .sched_classes section; here they are found, put in
 * `order`, and described to the scenario parser (names and options) and to the BOOT line.
 */
#include "sched.h"

extern const struct sched_class *const __start_sched_classes[], *const __stop_sched_classes[];

static const struct sched_class *sorted[SCEN_MAX_POLICIES];
static struct scen_policy table[SCEN_MAX_POLICIES];
static int nclasses = -1;

static int count_options(const struct sched_class *c)
{
    int n = 0;
    while (n < SCEN_MAX_OPTS && c->options[n].name[0])
        n++;
    return n;
}

/* Once, on the boot hart before the others start: the section's classes in `order`. */
static void collect(void)
{
    if (nclasses >= 0)
        return;
    nclasses = 0;
    for (const struct sched_class *const *c = __start_sched_classes; c < __stop_sched_classes; c++) {
        if (nclasses == SCEN_MAX_POLICIES)
            panic("more than %d policies built", SCEN_MAX_POLICIES);
        int k = nclasses++;
        while (k > 0 && sorted[k - 1]->order > (*c)->order) {
            sorted[k] = sorted[k - 1];
            k--;
        }
        sorted[k] = *c;
    }
    for (int i = 0; i < nclasses; i++)
        table[i] = (struct scen_policy){ sorted[i]->name, sorted[i]->options, count_options(sorted[i]) };
}

const struct sched_class *sched_class_by_name(const char *name)
{
    collect();
    for (int i = 0; i < nclasses; i++)
        if (!strcmp(sorted[i]->name, name))
            return sorted[i];
    return 0;
}

const char *sched_class_names(void)
{
    static char names[128];
    collect();
    if (!names[0])
        for (int i = 0; i < nclasses; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "", sorted[i]->name);
    return names;
}

const struct scen_policy *sched_policy_table(int *n)
{
    collect();
    *n = nclasses;
    return table;
}

/* "gang.alternates=on|off,gang.gangfit=first|best,...": every policy's options, for the BOOT line. */
const char *sched_option_list(void)
{
    static char list[512];
    collect();
    if (!list[0])
        for (int i = 0; i < nclasses; i++)
            for (int k = 0; k < table[i].nopts; k++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s.%s=%s", list[0] ? "," : "",
                         table[i].name, table[i].opts[k].name, table[i].opts[k].choices);
    return list[0] ? list : "none";
}
