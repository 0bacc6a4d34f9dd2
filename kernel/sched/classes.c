/*
 * classes.c - the policies built into this kernel. Each policy file registers its struct sched_class with
 * SCHED_CLASS (sched.h), which puts a pointer in the .sched_classes section; here they are found, put in
 * `order`, checked against the contract (its mandatory hooks set, sane option declarations: a PANIC naming
 * the policy otherwise), and described to the scenario parser (names, options, per-job keys) and to the
 * BOOT line. And the panics of the hooks' wrappers (hooks.h), out of line.
 */
#include "hooks.h"

extern const struct sched_class *const __start_sched_classes[], *const __stop_sched_classes[];

static const struct sched_class *sorted[SCEN_MAX_POLICIES];
static struct scen_policy table[SCEN_MAX_POLICIES];
static int nclasses = -1;

static int count_named(const struct scen_option *o, int max)
{
    int n = 0;
    while (n < max && o[n].name[0])
        n++;
    return n;
}

/* The first mandatory hook c leaves NULL, or 0 (sched.h: the others are optional, hooks.h). */
static const char *missing_hook(const struct sched_class *c)
{
    if (!c->enqueue) return "enqueue";
    if (!c->pick_next) return "pick_next";
    return 0;
}

/* Names a job key may not take: the keys every job has (scenario_job_key). An option may not take a global
   setting's (scenario_setting). Both from the parser's own tables. */
typedef const struct scen_keydoc *(*key_table)(int i);

static int in_table(key_table table, const char *name)
{
    for (int i = 0; table(i); i++)
        if (!strcmp(table(i)->name, name))
            return 1;
    return 0;
}

/* An option or job key the parser could never give a valid value, or could never reach: what is wrong. */
static const char *bad_option(const struct scen_option *o, key_table reserved)
{
    if (in_table(reserved, o->name))
        return "takes a name the scenario language already has";
    if (strchr(o->name, '=') || strchr(o->name, ',') || strchr(o->name, ':') || strchr(o->name, ' '))
        return "has '=', ',', ':' or a space in its name";
    if (o->choices[0]) {
        int n = 1;
        for (const char *c = o->choices; *c; c++)
            n += *c == '|';
        return o->def < 0 || o->def >= n ? "has a default past its choices" : 0;
    }
    if (o->min > o->max)
        return "is a number with min > max (a choice list needs choices)";
    return o->def < o->min || o->def > o->max ? "has a default outside [min, max]" : 0;
}

/* A policy file that breaks the contract (sched.h) stops the boot here, naming itself and what to fix -
   not later, as a jump to address 0 from inside the core. Every policy built is checked, chosen or not. */
static void check_class(const struct sched_class *c)
{
    if (strlen(c->name) >= sizeof(((struct scenario *)0)->policy))
        panic("policy '%s': a name has at most %d characters (struct scenario, scenario.h)", c->name,
              (int)sizeof(((struct scenario *)0)->policy) - 1);
    const char *hook = missing_hook(c);
    if (hook)
        panic("policy '%s' has no %s hook: enqueue and pick_next are mandatory in its struct sched_class, the "
              "other hooks optional (sched.h)", c->name, hook);
    if (c->proc_new && !c->abandoned)
        panic("policy '%s' has proc_new but no abandoned hook: set abandoned to what undoes proc_new (exited, "
              "if that does), for a process whose creation failed after proc_new (sched.h)", c->name);
    for (int i = 0; i < count_named(c->options, SCEN_MAX_OPTS); i++)
        if (bad_option(&c->options[i], scenario_setting))
            panic("policy '%s': option '%s' %s (sched.h, scenario.h)", c->name, c->options[i].name,
                  bad_option(&c->options[i], scenario_setting));
    for (int i = 0; i < count_named(c->job_keys, SCEN_MAX_JOB_KEYS); i++)
        if (bad_option(&c->job_keys[i], scenario_job_key))
            panic("policy '%s': job key '%s' %s (sched.h, scenario.h)", c->name, c->job_keys[i].name,
                  bad_option(&c->job_keys[i], scenario_job_key));
}

/* Once, on the boot hart before the others start: the section's classes in `order`. */
static void collect(void)
{
    if (nclasses >= 0)
        return;
    nclasses = 0;
    for (const struct sched_class *const *c = __start_sched_classes; c < __stop_sched_classes; c++) {
        if (nclasses == SCEN_MAX_POLICIES)
            panic("more than %d policies built (SCEN_MAX_POLICIES, scenario.h)", SCEN_MAX_POLICIES);
        if (!(*c)->name || !(*c)->name[0])
            panic("a policy built has no name: set .name in its struct sched_class (sched.h)");
        check_class(*c);
        int k = nclasses++;
        while (k > 0 && sorted[k - 1]->order > (*c)->order) {
            sorted[k] = sorted[k - 1];
            k--;
        }
        sorted[k] = *c;
    }
    for (int i = 0; i < nclasses; i++)
        table[i] = (struct scen_policy){ sorted[i]->name,
                                         sorted[i]->options, count_named(sorted[i]->options, SCEN_MAX_OPTS),
                                         sorted[i]->job_keys, count_named(sorted[i]->job_keys, SCEN_MAX_JOB_KEYS) };
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
    static char names[SCEN_MAX_POLICIES * 24];
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

/* "gang.alternates=off|on,...,lottery.lottery_turn=1..100": every policy's options (jobkeys: its per-job
   keys), for the BOOT line; a number's range is min..max. A list that does not fit is a panic, not a
   silently shorter BOOT line. */
static const char *list_of(char *list, size_t len, int jobkeys)
{
    collect();
    size_t n = 0;
    for (int i = 0; i < nclasses; i++) {
        const struct scen_option *o = jobkeys ? table[i].jkeys : table[i].opts;
        for (int k = 0; k < (jobkeys ? table[i].njkeys : table[i].nopts); k++) {
            n += o[k].choices[0] ? snprintf(list + n, n < len ? len - n : 0, "%s%s.%s=%s", n ? "," : "",
                                            table[i].name, o[k].name, o[k].choices)
                                 : snprintf(list + n, n < len ? len - n : 0, "%s%s.%s=%ld..%ld", n ? "," : "",
                                            table[i].name, o[k].name, o[k].min, o[k].max);
            if (n >= len)
                panic("the policies' %s do not fit in %d characters (classes.c)", jobkeys ? "job keys" : "options",
                      (int)len - 1);
        }
    }
    return n ? list : "none";
}

const char *sched_option_list(void)
{
    static char list[1024];
    return list_of(list, sizeof list, 0);
}

const char *sched_job_key_list(void)
{
    static char list[512];
    return list_of(list, sizeof list, 1);
}

/* ---- the hooks' wrappers' panics (hooks.h) ---- */

void sched_hook_panic(struct cpu *c, const char *hook, const char *what)
{
    c->hook = 0; /* panic prints */
    panic("policy '%s' hook %s %s (sched.h)", sched->name, hook, what);
}

void sched_hook_printed(struct cpu *c, const char *line)
{
    if (!strncmp(line, "PANIC ", 6))
        return; /* the hook's own invariant check, or one of these */
    static char what[96];
    char head[33];
    int n = 0;
    while (n < 32 && line[n] && line[n] != '\n')
        n++;
    memcpy(head, line, n);
    head[n] = 0;
    snprintf(what, sizeof what, "printed (a line beginning '%s'): a hook must not print", head);
    sched_hook_panic(c, c->hook, what);
}

static const char *state_name(enum pstate s)
{
    static const char *const names[] = { "FREE", "READY", "RUNNING", "BLOCKED", "ZOMBIE" };
    return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "?";
}

void sched_bad_pick(struct cpu *c, struct proc *p)
{
    if (p->state != P_READY)
        panic("policy '%s' hook pick_next on hart %d returned process %d.%d in state %s: it must return a READY "
              "process (sched.h)", sched->name, c->id, p->job->id, p->idx, state_name(p->state));
    if (p->hart != c->id)
        panic("policy '%s' hook pick_next on hart %d returned process %d.%d bound to hart %d: it must return a "
              "process with p->hart == c->id (sched.h)", sched->name, c->id, p->job->id, p->idx, p->hart);
    panic("policy '%s' hook pick_next on hart %d returned process %d.%d, the current process of hart %d "
          "(sched.h)", sched->name, c->id, p->job->id, p->idx, p->on_cpu->id);
}
