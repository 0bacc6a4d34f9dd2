/*
 * scenario.c - parse and validate the scenario language of docs/design.md:
 *
 *   policy=timeslice|gang|partition|global   quantum=<n>us|<n>ms|<n>s   seed=<n>   trace=on|off
 *   irq=auto|sbi   calib=on|off   timeout=<n>ms|<n>s   clock=real|virtual   model=<spec>   idle=auto|poll
 *   perturb=<seed>[,depth=<d>] (with clock=virtual)   list=keys
 *   (the table `settings` below declares each, with its values, default and help)
 *   and the chosen policy's own options (struct scen_policy, declared by each policy)
 *   job=<app>[:key=value[,key=value...]]   (repeatable)
 *
 * Keys every app takes: procs=<n> (default: the number of harts), at=<time> (arrival, default 0) and
 * adapt=yes|no (partition: can the job follow its allotment; default from the app's spec);
 * the rest come from the app's spec and from the chosen policy's per-job keys (tickets=... of a lottery).
 * A policy's option or job key is a choice or a whole number in a range (struct scen_option). Every
 * token is checked; the first bad one stops the parse with a message that names it and says what was
 * expected.
 */
#ifdef SCHEDLAB_HOST
#include <string.h>
#include "kprintf.h" /* the kernel's formatter on the host too: its messages are what is tested */
#else
#include "kernel.h"
#endif
#include "scenario.h"
#include "scenario_words.h"


/* A policy option's or job key's value: a choice's index, or a number in its range; 0 on success. */
static int policy_value(const struct scen_option *o, const char *val, long *out)
{
    if (!o->choices[0])
        return scen_parse_long(val, o->min, o->max, out);
    int v = scen_choice_index(o->choices, val);
    if (v < 0)
        return -1;
    *out = v;
    return 0;
}

/* What policy_value accepts, for messages: "back or front", "a whole number from 1 to 64". */
static void policy_expected(const struct scen_option *o, char *out, size_t outlen)
{
    if (o->choices[0])
        scen_choices_words(o->choices, out, outlen);
    else
        snprintf(out, outlen, "a whole number from %ld to %ld", o->min, o->max);
}

/* The keys a job of this app takes under the chosen policy pol (may be NULL). */
static void key_list(const struct sl_appspec *spec, const struct scen_policy *pol, char *out, size_t outlen)
{
    int n = 0;
    out[0] = 0;
    for (int i = 0; scenario_job_key(i) && n >= 0 && (size_t)n < outlen; i++)
        n += snprintf(out + n, outlen - n, "%s%s", i ? ", " : "", scenario_job_key(i)->name);
    for (uint32_t i = 0; i < spec->nkeys && n > 0 && (size_t)n < outlen; i++)
        n += snprintf(out + n, outlen - n, ", %s", spec->keys[i].name);
    for (int i = 0; pol && i < pol->njkeys && n > 0 && (size_t)n < outlen; i++)
        n += snprintf(out + n, outlen - n, ", %s (policy %s)", pol->jkeys[i].name, pol->name);
}

static const struct sl_keyspec *find_key(const struct sl_appspec *spec, const char *name)
{
    for (uint32_t i = 0; i < spec->nkeys; i++)
        if (!strcmp(spec->keys[i].name, name))
            return &spec->keys[i];
    return NULL;
}

/* Per-job scratch while its keys are read: the chosen value of every app key as text. A value is a
   number or one of the key's choices, so it fits in the size of the choices field. */
#define VAL_MAX sizeof(((struct sl_keyspec *)0)->choices)
_Static_assert(VAL_MAX > 20, "a 64-bit number fits a value");
struct job_vals {
    char val[SL_MAX_KEYS][VAL_MAX];
    int given[SL_MAX_KEYS];
    int pgiven[SCEN_MAX_JOB_KEYS];
    int procs_given, at_given, adapt_given, mem_given;
};

static const struct scen_policy *find_policy(const struct scen_env *env, const char *name);
static const struct scen_option *find_option(const struct scen_option *opts, int n, const char *name);

/* ---- the keys every job has: one table, which job_key dispatches on and key_list and KEY lines print ---- */

static int procs_key(struct scen_parser *ps, const char *tok, struct scen_job *j, struct job_vals *jv, const char *val)
{
    uint64_t v;
    if (jv->procs_given++)
        return FAIL(ps, "bad token '%s': procs given twice", tok);
    if (scen_parse_u64(val, &v) || v < 1 || v > SL_MAX_PROCS)
        return FAIL(ps, "bad token '%s': procs=%s, expected a whole number from 1 to %d", tok, val, SL_MAX_PROCS);
    j->procs = (int)v;
    return 0;
}

static int at_key(struct scen_parser *ps, const char *tok, struct scen_job *j, struct job_vals *jv, const char *val)
{
    if (jv->at_given++)
        return FAIL(ps, "bad token '%s': at given twice", tok);
    if (scen_parse_time_us(val, &j->at_us))
        return FAIL(ps, "bad token '%s': at=%s, expected a time like 500ms, 2s or 100us", tok, val);
    return 0;
}

static int adapt_key(struct scen_parser *ps, const char *tok, struct scen_job *j, struct job_vals *jv, const char *val)
{
    if (jv->adapt_given++)
        return FAIL(ps, "bad token '%s': adapt given twice", tok);
    if (strcmp(val, "yes") && strcmp(val, "no"))
        return FAIL(ps, "bad token '%s': adapt=%s, expected adapt=yes or adapt=no", tok, val);
    j->adaptive = !strcmp(val, "yes");
    return 0;
}

static int mem_key(struct scen_parser *ps, const char *tok, struct scen_job *j, struct job_vals *jv, const char *val)
{
    if (jv->mem_given++)
        return FAIL(ps, "bad token '%s': mem given twice", tok);
    if (scen_parse_size(val, &j->mem_limit))
        return FAIL(ps, "bad token '%s': mem=%s, expected a size like mem=64M, mem=512K or mem=1G", tok, val);
    return 0;
}

static const struct job_common {
    struct scen_keydoc doc;
    int (*parse)(struct scen_parser *ps, const char *tok, struct scen_job *j, struct job_vals *jv, const char *val);
} job_common[] = {
    { { "procs", "<n>", 1, SL_MAX_PROCS, "", "", "the job's processes; default: the number of harts" }, procs_key },
    { { "at", "<n>us|<n>ms|<n>s", 0, SCEN_MAX_TIME_US, "us", "0ms", "the job's arrival, after t0" }, at_key },
    { { "adapt", "yes|no", 1, 0, "", "",
        "under partition: the job's workers follow its allotment; default: yes for an app built on the thread "
        "library (SL_APP_ADAPTIVE), else no" }, adapt_key },
    { { "mem", "<n>K|<n>M|<n>G", 1, 0, "", "",
        "the memory the job may take while it runs; default: the app's estimate for its keys + 1/8 + 256K" },
      mem_key },
};

const struct scen_keydoc *scenario_job_key(int i)
{
    return i >= 0 && i < (int)(sizeof job_common / sizeof job_common[0]) ? &job_common[i].doc : NULL;
}

static const struct job_common *find_job_common(const char *name)
{
    for (size_t i = 0; i < sizeof job_common / sizeof job_common[0]; i++)
        if (!strcmp(job_common[i].doc.name, name))
            return &job_common[i];
    return NULL;
}

/* key=val of a job that is no key of its app: one of the chosen policy's per-job keys, or an error that
   says whose key it is. */
static int policy_job_key(struct scen_parser *ps, const char *tok, struct scen_job *j, struct job_vals *jv,
                          const char *key, const char *val)
{
    const struct scen_policy *pol = find_policy(ps->env, ps->sc->policy);
    const struct scen_option *o = pol ? find_option(pol->jkeys, pol->njkeys, key) : NULL;
    char list[200];
    if (o) {
        int ki = (int)(o - pol->jkeys);
        if (jv->pgiven[ki]++)
            return FAIL(ps, "bad token '%s': %s given twice", tok, key);
        if (policy_value(o, val, &j->pkey[ki])) {
            policy_expected(o, list, sizeof list);
            return FAIL(ps, "bad token '%s': %s=%s, expected %s", tok, key, val, list);
        }
        return 0;
    }
    size_t n = 0;
    list[0] = 0;
    for (int i = 0; i < ps->env->npolicies; i++) {
        const struct scen_policy *other = &ps->env->policy_table[i];
        if (find_option(other->jkeys, other->njkeys, key) && n < sizeof list)
            n += snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", other->name);
    }
    if (n)
        return FAIL(ps, "bad token '%s': %s= is a job key of policy %s, not of %s", tok, key, list, ps->sc->policy);
    key_list(j->spec, pol, list, sizeof list);
    return FAIL(ps, "bad token '%s': %s has no key '%s' (keys: %s)", tok, j->app, key, list);
}

static int job_key(struct scen_parser *ps, const char *tok, struct scen_job *j, struct job_vals *jv, char *key)
{
    char *val = scen_split_eq(key);
    const struct sl_appspec *spec = j->spec;
    char list[200];
    if (!val || !*key) {
        key_list(spec, find_policy(ps->env, ps->sc->policy), list, sizeof list);
        return FAIL(ps, "bad token '%s': '%s' is not key=value (keys of %s: %s)", tok, key, j->app, list);
    }
    const struct job_common *c = find_job_common(key);
    if (c)
        return c->parse(ps, tok, j, jv, val);
    const struct sl_keyspec *k = find_key(spec, key);
    if (!k)
        return policy_job_key(ps, tok, j, jv, key, val);
    const struct scen_policy *pol = find_policy(ps->env, ps->sc->policy);
    if (pol && find_option(pol->jkeys, pol->njkeys, key))
        return FAIL(ps, "bad token '%s': '%s' is a key of %s and a job key of policy %s: a policy's job key "
                    "must not take an app's key name (rename it in the policy's file)", tok, key, j->app, pol->name);
    int ki = (int)(k - spec->keys);
    if (jv->given[ki]++)
        return FAIL(ps, "bad token '%s': %s given twice", tok, key);
    if (k->kind == SL_KEY_INT) {
        uint64_t v;
        if (scen_parse_u64(val, &v) || (int64_t)v < k->min || (int64_t)v > k->max || v > INT64_MAX)
            return FAIL(ps, "bad token '%s': %s=%s, expected a whole number from %lld to %lld", tok, key, val,
                        (long long)k->min, (long long)k->max);
        snprintf(jv->val[ki], sizeof jv->val[ki], "%llu", (unsigned long long)v);
    } else {
        if (scen_choice_index(k->choices, val) < 0) {
            scen_choices_words(k->choices, list, sizeof list);
            return FAIL(ps, "bad token '%s': %s=%s, expected %s", tok, key, val, list);
        }
        snprintf(jv->val[ki], sizeof jv->val[ki], "%s", val);
    }
    return 0;
}

/* bytes = const + lin*k + quad*k^2 + per_proc*procs, saturating. */
static uint64_t mem_estimate(const struct scen_job *j, const struct job_vals *jv)
{
    const struct sl_appspec *s = j->spec;
    unsigned __int128 k = 0;
    for (uint32_t i = 0; i < s->nkeys; i++) {
        uint64_t v;
        if (s->mem_key[0] && !strcmp(s->keys[i].name, s->mem_key) && !scen_parse_u64(jv->val[i], &v))
            k = v;
    }
    unsigned __int128 b = (unsigned __int128)(s->mem_const > 0 ? s->mem_const : 0) +
        (unsigned __int128)(s->mem_lin > 0 ? s->mem_lin : 0) * k +
        (unsigned __int128)(s->mem_quad > 0 ? s->mem_quad : 0) * k * k +
        (unsigned __int128)(s->mem_per_proc > 0 ? s->mem_per_proc : 0) * (unsigned)j->procs;
    /* the kernel's own share: a stack and its page-table pages per process */
    b += (unsigned __int128)(SL_STACK_SIZE + 8192) * (unsigned)j->procs;
    return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

/* j->pargs: every per-job key of the chosen policy with its value, "tickets=3 class=batch"; 0 if it fits. */
static int policy_args(const struct scen_policy *pol, struct scen_job *j)
{
    size_t n = 0;
    j->pargs[0] = 0;
    for (int i = 0; pol && i < pol->njkeys; i++) {
        const struct scen_option *o = &pol->jkeys[i];
        char val[sizeof o->choices];
        if (o->choices[0])
            scen_choice_at(o->choices, (int)j->pkey[i], val, sizeof val);
        else
            snprintf(val, sizeof val, "%ld", j->pkey[i]);
        n += snprintf(j->pargs + n, n < sizeof j->pargs ? sizeof j->pargs - n : 0, "%s%s=%s", i ? " " : "", o->name,
                      val);
    }
    return n >= sizeof j->pargs ? -1 : 0;
}

int scen_parse_job(struct scen_parser *ps, const char *tok, const char *spec_text)
{
    struct scenario *sc = ps->sc;
    if (sc->njobs == SCEN_MAX_JOBS)
        return FAIL(ps, "bad token '%s': more than %d jobs", tok, SCEN_MAX_JOBS);
    struct scen_job *j = &sc->jobs[sc->njobs];
    char buf[512];
    if (strlen(spec_text) >= sizeof buf)
        return FAIL(ps, "bad token '%.40s...': longer than %d characters", tok, (int)sizeof buf - 1);
    strcpy(buf, spec_text);
    char *keys = strchr(buf, ':');
    if (keys)
        *keys++ = 0;
    if (!buf[0])
        return FAIL(ps, "bad token '%s': expected job=<app>[:key=value,...] (apps: %s)", tok, ps->env->apps);
    size_t applen = strlen(buf);
    j->spec = applen < sizeof j->app ? ps->env->lookup(buf) : NULL;
    if (!j->spec)
        return FAIL(ps, "bad token '%s': unknown app '%s' (apps: %s)", tok, buf, ps->env->apps);
    memcpy(j->app, buf, applen + 1);
    j->procs = ps->env->nharts;
    j->at_us = 0;
    j->adaptive = (j->spec->flags & SL_APP_ADAPTIVE) != 0;

    const struct scen_policy *pol = find_policy(ps->env, sc->policy);
    for (int i = 0; pol && i < pol->njkeys; i++)
        j->pkey[i] = pol->jkeys[i].def;

    struct job_vals jv;
    memset(&jv, 0, sizeof jv);
    for (char *k = keys; k && *k;) {
        char *comma = strchr(k, ',');
        if (comma)
            *comma = 0;
        if (job_key(ps, tok, j, &jv, k))
            return -1;
        k = comma ? comma + 1 : NULL;
        if (k && !*k)
            return FAIL(ps, "bad token '%s': ends with a comma", tok);
    }
    if (keys && !*keys)
        return FAIL(ps, "bad token '%s': nothing after ':'", tok);

    /* canonical args, defaults filled in */
    size_t n = 0;
    j->args[0] = 0;
    for (uint32_t i = 0; i < j->spec->nkeys; i++) {
        const struct sl_keyspec *k = &j->spec->keys[i];
        if (!jv.given[i]) {
            if (k->kind == SL_KEY_INT)
                snprintf(jv.val[i], sizeof jv.val[i], "%lld", (long long)k->def);
            else
                scen_choice_at(k->choices, (int)k->def, jv.val[i], sizeof jv.val[i]);
        }
        n += snprintf(j->args + n, n < sizeof j->args ? sizeof j->args - n : 0, "%s%s=%s", i ? "," : "", k->name,
                      jv.val[i]);
    }
    if (n >= sizeof j->args)
        return FAIL(ps, "bad token '%s': the app's keys do not fit in %d characters", tok, SL_ARGS_MAX);
    if (policy_args(pol, j))
        return FAIL(ps, "bad token '%s': policy %s's job keys do not fit in %d characters", tok, pol->name,
                    (int)sizeof j->pargs - 1);

    j->mem_bytes = mem_estimate(j, &jv);
    if (j->mem_bytes > ps->env->free_bytes)
        return FAIL(ps,
                    "bad token '%s': needs about %llu MiB of memory but only %llu MiB are free (boot with more -m, or "
                    "make it smaller)",
                    tok, (unsigned long long)(j->mem_bytes >> 20), (unsigned long long)(ps->env->free_bytes >> 20));
    if (!jv.mem_given)
        j->mem_limit = j->mem_bytes > UINT64_MAX / 2 ? UINT64_MAX : SCEN_MEM_SLACK(j->mem_bytes);
    else if (j->mem_limit > ps->env->free_bytes)
        return FAIL(ps, "bad token '%s': mem= is %llu MiB but only %llu MiB are free", tok,
                    (unsigned long long)(j->mem_limit >> 20), (unsigned long long)(ps->env->free_bytes >> 20));
    sc->njobs++;
    return 0;
}

/* ---- policies and their own options ---- */

static const struct scen_policy *find_policy(const struct scen_env *env, const char *name)
{
    for (int i = 0; i < env->npolicies; i++)
        if (!strcmp(env->policy_table[i].name, name))
            return &env->policy_table[i];
    return NULL;
}

static const struct scen_option *find_option(const struct scen_option *opts, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(opts[i].name, name))
            return &opts[i];
    return NULL;
}

/* policy=<name>: the last one wins; read before every other token, so a policy's options may come
   before it. The chosen policy's options start at their defaults. */
static int parse_policy(struct scen_parser *ps, const char *tok, const char *val)
{
    const struct scen_policy *p = find_policy(ps->env, val);
    if (!p) {
        char names[160] = "";
        for (int i = 0, n = 0; i < ps->env->npolicies && n < (int)sizeof names; i++)
            n += snprintf(names + n, sizeof names - n, "%s%s", i ? "," : "", ps->env->policy_table[i].name);
        return FAIL(ps, "bad token '%s': no policy '%s' in this build (policies: %s)", tok, val, names);
    }
    snprintf(ps->sc->policy, sizeof ps->sc->policy, "%s", val);
    for (int i = 0; i < SCEN_MAX_OPTS; i++)
        ps->sc->popt[i] = i < p->nopts ? p->opts[i].def : 0;
    return 0;
}

/* key=val that is no global setting: an option of the chosen policy, or an error that says whose it is. */
static int parse_option(struct scen_parser *ps, const char *tok, const char *key, const char *val)
{
    const struct scen_policy *chosen = find_policy(ps->env, ps->sc->policy);
    const struct scen_option *o = chosen ? find_option(chosen->opts, chosen->nopts, key) : NULL;
    char list[160] = "";
    if (o) {
        if (policy_value(o, val, &ps->sc->popt[o - chosen->opts])) {
            policy_expected(o, list, sizeof list);
            return FAIL(ps, "bad token '%s': %s=%s, expected %s", tok, key, val, list);
        }
        return 0;
    }
    size_t n = 0;
    for (int i = 0; i < ps->env->npolicies; i++)
        if (find_option(ps->env->policy_table[i].opts, ps->env->policy_table[i].nopts, key) && n < sizeof list)
            n += snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", ps->env->policy_table[i].name);
    if (n)
        return FAIL(ps, "bad token '%s': %s= is an option of policy %s, not of %s", tok, key, list, ps->sc->policy);
    for (int i = 0; i < ps->env->npolicies; i++)
        if (find_option(ps->env->policy_table[i].jkeys, ps->env->policy_table[i].njkeys, key))
            return FAIL(ps, "bad token '%s': %s= is a per-job key of policy %s: give it in a job, like job=<app>:%s",
                        tok, key, ps->env->policy_table[i].name, tok);
    for (int i = 0; chosen && i < chosen->nopts && n < sizeof list; i++)
        n += snprintf(list + n, sizeof list - n, ", %s=", chosen->opts[i].name);
    char names[200];
    scen_setting_names(names, sizeof names);
    return FAIL(ps, "bad token '%s': unknown setting '%s' (expected %s%s)", tok, key, names, list);
}

static int parse_token(struct scen_parser *ps, const char *tok)
{
    char buf[512], names[200];
    if (strlen(tok) >= sizeof buf)
        return FAIL(ps, "bad token '%.40s...': longer than %d characters", tok, (int)sizeof buf - 1);
    strcpy(buf, tok);
    char *val = scen_split_eq(buf);
    const char *key = buf;
    if (!val) {
        scen_setting_names(names, sizeof names);
        return FAIL(ps, "bad token '%s': expected key=value (%s, or an option of the policy)", tok, names);
    }
    int taken = scen_setting(ps, key, tok, val);
    return taken == 1 ? parse_option(ps, tok, key, val) : taken;
}

/* Jobs certain to be in memory together: those that arrive at the same instant, with every background job
   that arrived before (it runs until every foreground job has ended). A later arrival may find earlier jobs
   gone, so nothing else is certain. Each such group must fit within their memory limits. */
static int check_overlap(struct scen_parser *ps)
{
    const struct scenario *sc = ps->sc;
    for (int i = 0; i < sc->njobs; i++) {
        uint64_t t = sc->jobs[i].at_us;
        int first = 1;
        for (int k = 0; k < i; k++)
            first &= sc->jobs[k].at_us != t;
        if (!first)
            continue;
        unsigned __int128 sum = 0;
        char ids[96] = "";
        size_t n = 0;
        for (int k = 0; k < sc->njobs; k++) {
            const struct scen_job *j = &sc->jobs[k];
            int bg = (j->spec->flags & SL_APP_BACKGROUND) != 0;
            if (j->at_us != t && !(bg && j->at_us < t))
                continue;
            sum += j->mem_limit;
            if (n < sizeof ids)
                n += snprintf(ids + n, sizeof ids - n, "%s%d", n ? "," : "", k + 1);
        }
        if (sum > ps->env->free_bytes)
            return FAIL(
                ps,
                "jobs %s%s are in memory together from %llu ms on and may take %llu MiB (their mem= limits, "
                "by default each job's estimate plus slack), but only %llu MiB are free: give some a later at=, "
                "smaller sizes or a smaller mem=",
                ids, n >= sizeof ids ? "..." : "", (unsigned long long)(t / 1000), (unsigned long long)(sum >> 20),
                (unsigned long long)(ps->env->free_bytes >> 20));
    }
    return 0;
}

/* The first pass: every policy= token, so that the policy's options are known whatever their order. */
static int scan_policy(struct scen_parser *ps, const char *bootargs)
{
    if (ps->env->npolicies && parse_policy(ps, "", ps->env->policy_table[0].name)) /* default: the first */
        return -1;
    for (const char *p = bootargs; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        size_t n = 0;
        while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\n')
            n++;
        char tok[64];
        if (n >= 7 && !strncmp(p, "policy=", 7)) {
            if (n >= sizeof tok)
                return FAIL(ps, "bad token '%.40s...': longer than %d characters", p, (int)sizeof tok - 1);
            memcpy(tok, p, n);
            tok[n] = 0;
            if (parse_policy(ps, tok, tok + 7))
                return -1;
        }
        p += n;
    }
    return 0;
}

static int parse_tokens(struct scen_parser *ps, const char *bootargs)
{
    if (scan_policy(ps, bootargs))
        return -1;
    const char *p = bootargs;
    char tok[512];
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        size_t n = 0;
        while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\n')
            n++;
        if (!n)
            break;
        if (n >= sizeof tok)
            return FAIL(ps, "bad token '%.40s...': longer than %d characters", p, (int)sizeof tok - 1);
        memcpy(tok, p, n);
        tok[n] = 0;
        p += n;
        if (parse_token(ps, tok))
            return -1;
    }
    if (ps->sc->njobs == 0 && !ps->sc->list_keys)
        return FAIL(ps, "no job= in the scenario, so there is nothing to run (e.g. job=gauss job=oddeven; apps: %s)",
                    ps->env->apps);
    if (ps->sc->perturb && !ps->sc->clock_virtual)
        return FAIL(ps, "bad token 'perturb=%lu': a perturbed boot is a deterministic one: add clock=virtual "
                        "(make qemu DETERMINISTIC=1, schedlab --deterministic)", (unsigned long)ps->sc->perturb_seed);
    return check_overlap(ps);
}

/* The message quotes the user's token: a control character there (a '\r', an escape) would end or garble
   the ERROR line on the console, so every byte that is not printable ASCII becomes '?'. */
static void printable(char *s, size_t len)
{
    for (size_t i = 0; i < len && s[i]; i++)
        if (s[i] < ' ' || s[i] > '~')
            s[i] = '?';
}

int scenario_parse(const char *bootargs, const struct scen_env *env, struct scenario *sc, char *err, size_t errlen)
{
    struct scen_parser ps = { env, sc, err, errlen };
    memset(sc, 0, sizeof *sc);
    snprintf(sc->policy, sizeof sc->policy, "timeslice");
    sc->quantum_us = SCEN_DEFAULT_QUANTUM_US;
    sc->seed = 1;
    sc->calib = SCEN_DEFAULT_CALIB;
    if (parse_tokens(&ps, bootargs) == 0)
        return 0;
    printable(err, errlen);
    return -1;
}
