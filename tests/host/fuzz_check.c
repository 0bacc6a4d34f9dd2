/*
 * fuzz_check.c - the scenario fuzzer's checker, shared by both drivers (fuzz_scenario.c: the standalone
 * fuzzer in make host-test; and libFuzzer's entry below, with -DFUZZ_LIBFUZZER): the real app specs, the
 * environments the kernel would pass, and fuzz_one(), which parses one input and checks every invariant.
 * The invariants are listed in fuzz_scenario.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fuzz_scenario.h"

#ifndef FUZZ_SPEC_DIR
#define FUZZ_SPEC_DIR "build/host/obj/apps"
#endif

/* ---- the app specs, from the host objects' .slapp sections ---- */

struct fuzz_spec specs[MAX_SPECS];
int nspecs;
static char app_names[512];

static int load_spec(const char *path, const char *name)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    static char buf[4 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const Elf64_Ehdr *h = (const void *)buf;
    if (n < sizeof *h || memcmp(h->e_ident, ELFMAG, SELFMAG) || h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_shoff + (uint64_t)h->e_shnum * sizeof(Elf64_Shdr) > n || h->e_shstrndx >= h->e_shnum)
        return -1;
    const Elf64_Shdr *sh = (const void *)(buf + h->e_shoff);
    for (int i = 0; i < h->e_shnum; i++) {
        uint64_t nameoff = sh[h->e_shstrndx].sh_offset + sh[i].sh_name;
        if (nameoff + 7 > n || memcmp(buf + nameoff, ".slapp", 7) || sh[i].sh_size < sizeof(struct sl_appspec) ||
            sh[i].sh_offset + sizeof(struct sl_appspec) > n || nspecs == MAX_SPECS - 2 || strlen(name) >= 16)
            continue;
        memcpy(&specs[nspecs].spec, buf + sh[i].sh_offset, sizeof(struct sl_appspec));
        if (specs[nspecs].spec.magic != SL_APPSPEC_MAGIC || specs[nspecs].spec.nkeys > SL_MAX_KEYS)
            return -1;
        strcpy(specs[nspecs].name, name);
        nspecs++;
        return 0;
    }
    return -1;
}

/* Apps that no real one is like: key names and choices as long as the spec allows (with nkeys =
   SL_MAX_KEYS the canonical args overflow SL_ARGS_MAX), and a memory estimate that saturates. */
static void add_synthetic_spec(const char *name, int nkeys)
{
    struct sl_appspec *s = &specs[nspecs].spec;
    memset(s, 0, sizeof *s);
    s->magic = SL_APPSPEC_MAGIC;
    s->nkeys = (uint32_t)nkeys;
    strcpy(s->mem_key, "kkkkkkkkkkkkkk0");
    s->mem_quad = INT64_MAX;
    s->mem_per_proc = 1 << 20;
    for (int i = 0; i < nkeys; i++) {
        struct sl_keyspec *k = &s->keys[i];
        memcpy(k->name, "kkkkkkkkkkkkkk", 14);
        k->name[14] = (char)('0' + i);
        if (i % 2 == 0) {
            k->kind = SL_KEY_INT, k->min = i, k->max = i == 0 ? INT64_MAX : 1000000 * i, k->def = i;
        } else {
            k->kind = SL_KEY_ENUM, k->def = i % 3;
            memset(k->choices, 'c', sizeof k->choices - 1);      /* "ccc...c|a|bb", 63 bytes */
            memcpy(k->choices + sizeof k->choices - 6, "|a|bb", 5);
            k->choices[i] = 'x';
        }
    }
    strcpy(specs[nspecs].name, name);
    nspecs++;
    snprintf(app_names + strlen(app_names), sizeof app_names - strlen(app_names), ", %s", name);
}

void load_specs(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024], name[64];
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 3 || len >= sizeof name || strcmp(e->d_name + len - 2, ".o"))
            continue;
        memcpy(name, e->d_name, len - 2);
        name[len - 2] = 0;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (load_spec(path, name) == 0)
            snprintf(app_names + strlen(app_names), sizeof app_names - strlen(app_names), "%s%s",
                     nspecs > 1 ? ", " : "", name);
    }
    if (d)
        closedir(d);
    if (nspecs == 0) {
        fprintf(stderr, "fuzz_scenario: no app specs in %s (build the host apps: make host)\n", dir);
        exit(2);
    }
    add_synthetic_spec("zzlong", 4);
    add_synthetic_spec("zzwide", SL_MAX_KEYS);
}

static const struct sl_appspec *lookup(const char *name)
{
    for (int i = 0; i < nspecs; i++)
        if (!strcmp(specs[i].name, name))
            return &specs[i].spec;
    return NULL;
}

/* ---- environments: what the kernel would pass ---- */

/* the built-in policies with their options, as kernel/sched/'s classes declare them */
static const struct scen_option ts_opts[] = { { "wakeboost", "off|on", 0, "", 0, 0 } };
static const struct scen_option gang_opts[] = { { "alternates", "off|on", 0, "", 0, 0 },
                                                { "gangfit", "first|best", 0, "", 0, 0 } };
/* and one like tests/policies/lottery.c: a numeric option, a numeric and a choice per-job key */
static const struct scen_option lot_opts[] = { { .name = "turn", .def = 1, .min = 1, .max = 64 } };
static const struct scen_option lot_keys[] = { { .name = "tickets", .def = 10, .min = 1, .max = 10000 },
                                               { .name = "class", .choices = "batch|interactive" } };
static const struct scen_policy policy_table[] = { { "timeslice", ts_opts, 1, 0, 0 }, { "gang", gang_opts, 2, 0, 0 },
                                                   { "partition", 0, 0, 0, 0 }, { "global", 0, 0, 0, 0 },
                                                   { "lottery", lot_opts, 1, lot_keys, 2 } };

static const struct scen_policy *chosen_policy(const struct scen_env *env, const char *name)
{
    for (int i = 0; i < env->npolicies; i++)
        if (!strcmp(env->policy_table[i].name, name))
            return &env->policy_table[i];
    return NULL;
}

struct scen_env make_env(unsigned sel)
{
    static const int harts[] = { 1, 2, 4, 64 };
    static const uint64_t mem[] = { 256ULL << 20, 8ULL << 20, 4ULL << 30, UINT64_MAX };
    struct scen_env e = { .nharts = harts[sel & 3], .free_bytes = mem[(sel >> 2) & 3], .lookup = lookup,
                          .apps = app_names, .policy_table = policy_table, .npolicies = (sel >> 4) & 1 ? 1 : 5,
                          .trace_built = (sel >> 5) & 1 };
    return e;
}

/* ---- the checker ---- */

void fail(const char *input, const char *what, const char *err)
{
    fprintf(stderr, "fuzz_scenario: INVARIANT BROKEN: %s\n  input: '", what);
    for (const unsigned char *c = (const unsigned char *)input; *c; c++)
        fprintf(stderr, *c >= ' ' && *c <= '~' && *c != '\\' ? "%c" : "\\x%02x", *c);
    fprintf(stderr, "'\n  message: '%s'\n", err ? err : "");
    abort();
}

static int value_ok(const struct sl_keyspec *k, const char *v)
{
    if (k->kind == SL_KEY_INT) {
        char *end;
        long long x = strtoll(v, &end, 10);
        return *v && !*end && x >= k->min && x <= k->max;
    }
    size_t len = strlen(v);
    for (const char *c = k->choices; *c;) {
        size_t clen = strcspn(c, "|");
        if (clen == len && !strncmp(c, v, len))
            return 1;
        c += clen + (c[clen] == '|');
    }
    return 0;
}

/* args == "k1=v1,k2=v2,..." with exactly the spec's keys in order and valid values */
static int args_ok(const struct sl_appspec *s, const char *args)
{
    const char *a = args;
    for (uint32_t i = 0; i < s->nkeys; i++) {
        size_t nl = strlen(s->keys[i].name);
        if (i && *a++ != ',')
            return 0;
        if (strncmp(a, s->keys[i].name, nl) || a[nl] != '=')
            return 0;
        a += nl + 1;
        char v[64];
        size_t vl = strcspn(a, ",");
        if (vl >= sizeof v)
            return 0;
        memcpy(v, a, vl);
        v[vl] = 0;
        char back[64];
        if (!value_ok(&s->keys[i], v) || scenario_arg(args, s->keys[i].name, back, sizeof back) || strcmp(back, v))
            return 0;
        a += vl;
    }
    return *a == 0;
}

/* " name=<value>" of a policy option or job key: the choice word, or the number. */
static size_t policy_value_text(const struct scen_option *o, long v, char *out, size_t len)
{
    if (!o->choices[0])
        return (size_t)snprintf(out, len, " %s=%ld", o->name, v);
    const char *c = o->choices;
    for (long k = 0; k < v; k++)
        c = strchr(c, '|') + 1;
    return (size_t)snprintf(out, len, " %s=%.*s", o->name, (int)strcspn(c, "|"), c);
}

/* The parsed scenario as bootargs that say exactly the same. */
static size_t canonical(const struct scen_env *env, const struct scenario *sc, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "policy=%s quantum=%luus seed=%lu trace=%s calib=%s irq=%s", sc->policy,
                                (unsigned long)sc->quantum_us, (unsigned long)sc->seed, sc->trace ? "on" : "off",
                                sc->calib ? "on" : "off", sc->irq_sbi ? "sbi" : "auto");
    const struct scen_policy *p = chosen_policy(env, sc->policy);
    for (int i = 0; p && i < p->nopts && n < len; i++)             /* its options, as the choice words */
        n += policy_value_text(&p->opts[i], sc->popt[i], out + n, len - n);
    if (sc->timeout_us && n < len)
        n += (size_t)snprintf(out + n, len - n, " timeout=%luus", (unsigned long)sc->timeout_us);
    if (n < len)
        n += (size_t)snprintf(out + n, len - n, " clock=%s", sc->clock_virtual ? "virtual" : "real");
    for (int i = 0; i < sc->njobs && n < len; i++) {
        const struct scen_job *j = &sc->jobs[i];
        n += (size_t)snprintf(out + n, len - n, " job=%s:%s%sprocs=%d,at=%luus,adapt=%s", j->app, j->args,
                              j->args[0] ? "," : "", j->procs, (unsigned long)j->at_us, j->adaptive ? "yes" : "no");
        for (int k = 0; p && k < p->njkeys && n < len; k++) {
            size_t at = n;
            n += policy_value_text(&p->jkeys[k], j->pkey[k], out + n, len - n);
            if (at < len)
                out[at] = ',';                                  /* a job's key: ",name=value" */
        }
    }
    return n;
}

/* Equal as the kernel reads them: strings up to their NUL (the bytes after it are not part of them). */
static int same_scenario(const struct scenario *a, const struct scenario *b)
{
    if (strcmp(a->policy, b->policy) || a->quantum_us != b->quantum_us || a->seed != b->seed || a->trace != b->trace ||
        a->calib != b->calib || a->irq_sbi != b->irq_sbi || a->timeout_us != b->timeout_us || a->clock_virtual != b->clock_virtual ||
        memcmp(a->popt, b->popt, sizeof a->popt) || a->njobs != b->njobs)
        return 0;
    for (int i = 0; i < a->njobs; i++) {
        const struct scen_job *x = &a->jobs[i], *y = &b->jobs[i];
        if (strcmp(x->app, y->app) || x->spec != y->spec || x->procs != y->procs || x->at_us != y->at_us ||
            x->adaptive != y->adaptive || strcmp(x->args, y->args) || x->mem_bytes != y->mem_bytes ||
            memcmp(x->pkey, y->pkey, sizeof x->pkey) || strcmp(x->pargs, y->pargs))
            return 0;
    }
    return 1;
}

/* v is a value the option can have (a choice's index, or a number in range); 0 for no option at all. */
static int policy_value_ok(const struct scen_option *o, long v)
{
    if (!o)
        return v == 0;
    if (!o->choices[0])
        return v >= o->min && v <= o->max;
    int n = 1;
    for (const char *c = o->choices; *c; c++)
        n += *c == '|';
    return v >= 0 && v < n;
}

static void check_ok(const char *input, const struct scen_env *env, const struct scenario *sc)
{
    const struct scen_policy *p = chosen_policy(env, sc->policy);
    if (!p || sc->quantum_us < SCEN_MIN_QUANTUM_US || sc->quantum_us > SCEN_MAX_QUANTUM_US ||
        sc->timeout_us > SCEN_MAX_TIME_US || sc->trace > 1 || sc->calib > 1 || (sc->trace && !env->trace_built))
        fail(input, "a setting out of range", NULL);
    for (int i = 0; i < SCEN_MAX_OPTS; i++)
        if (!policy_value_ok(i < p->nopts ? &p->opts[i] : 0, sc->popt[i]))
            fail(input, "a policy option out of range", NULL);
    if (sc->njobs < 1 || sc->njobs > SCEN_MAX_JOBS)
        fail(input, "njobs out of range", NULL);
    for (int i = 0; i < sc->njobs; i++) {
        const struct scen_job *j = &sc->jobs[i];
        if (!memchr(j->app, 0, sizeof j->app) || !j->spec || lookup(j->app) != j->spec)
            fail(input, "a job without a known app", NULL);
        if (j->procs < 1 || j->procs > SL_MAX_PROCS || j->at_us > SCEN_MAX_TIME_US || j->adaptive > 1)
            fail(input, "a job's procs, at or adapt out of range", NULL);
        if (!memchr(j->args, 0, sizeof j->args) || !args_ok(j->spec, j->args))
            fail(input, "a job's args are not its spec's keys with valid values", j->args);
        if (j->mem_bytes > env->free_bytes)
            fail(input, "a job admitted with more memory than is free", NULL);
        for (int k = 0; k < SCEN_MAX_JOB_KEYS; k++)
            if (!policy_value_ok(k < p->njkeys ? &p->jkeys[k] : 0, j->pkey[k]))
                fail(input, "a policy's job key out of range", NULL);
        if (!memchr(j->pargs, 0, sizeof j->pargs))
            fail(input, "a job's policy keys not terminated", NULL);
    }
    static char again[SCEN_MAX_JOBS * 600 + 400];
    if (canonical(env, sc, again, sizeof again) >= sizeof again)
        fail(input, "canonical form too long", NULL);
    struct scenario *sc2 = malloc(sizeof *sc2);
    char err[400];
    if (scenario_parse(again, env, sc2, err, sizeof err))
        fail(again, "the canonical form of a good scenario does not parse", err);
    if (!same_scenario(sc, sc2))
        fail(input, "the canonical form parses to a different scenario", again);
    free(sc2);
}

static void check_err(const char *input, const char *err, size_t errlen)
{
    if (errlen == 0)
        return;
    const char *nul = memchr(err, 0, errlen);
    if (!nul)
        fail(input, "error message not NUL-terminated inside its buffer", NULL);
    if (errlen > 1 && nul == err)
        fail(input, "empty error message", NULL);
    for (const char *c = err; c < nul; c++)
        if (*c < ' ' || *c > '~')
            fail(input, "error message with a byte that is not printable ASCII", err);
    /* a bad token, no job at all, or jobs that cannot be in memory together (check_overlap) */
    static const char *const starts[] = { "bad token '", "no job=", "jobs " };
    size_t len = (size_t)(nul - err);
    int named = 0;
    for (int i = 0; i < 3; i++)
        named |= !strncmp(err, starts[i], len < strlen(starts[i]) ? len : strlen(starts[i]));
    if (!named)
        fail(input, "error message names no token", err);
}

#define GUARD 32
long n_ok, n_fail;

/* Parse input (NUL-terminated) in environment sel with an error buffer of errlen bytes; check it all. */
void fuzz_one(const char *input, unsigned sel, size_t errlen)
{
    struct scen_env env = make_env(sel);
    size_t inlen = strlen(input);
    char *in = malloc(inlen + 1);             /* exactly sized: ASan catches reads past the end */
    memcpy(in, input, inlen + 1);
    struct scenario *sc = malloc(sizeof *sc);
    memset(sc, 0xa5, sizeof *sc);
    char *err = malloc(errlen + GUARD);
    memset(err, 0x5a, errlen + GUARD);
    int r = scenario_parse(in, &env, sc, err, errlen);
    for (size_t g = errlen; g < errlen + GUARD; g++)
        if (err[g] != 0x5a)
            fail(input, "a byte written after the error buffer", NULL);
    if (r == 0) {
        n_ok++;
        check_ok(input, &env, sc);
    } else {
        n_fail++;
        if (r != -1)
            fail(input, "scenario_parse returned neither 0 nor -1", NULL);
        check_err(input, err, errlen);
    }
    free(err);
    free(sc);
    free(in);
}

/* ---- libFuzzer entry ---- */
#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    load_specs(getenv("SCHEDLAB_FUZZ_SPECS") ? getenv("SCHEDLAB_FUZZ_SPECS") : FUZZ_SPEC_DIR);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t errlens[] = { 400, 400, 400, 400, 1, 2, 17, 0 };
    if (size < 2 || size > 8192)
        return 0;
    char *s = malloc(size - 1);
    memcpy(s, data + 2, size - 2);
    s[size - 2] = 0;
    if (strlen(s) == size - 2)              /* an embedded NUL ends the bootargs early: not a new input */
        fuzz_one(s, data[0], errlens[data[1] & 7]);
    free(s);
    return 0;
}
#endif
