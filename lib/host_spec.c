/*
 * host_spec.c - what the kernel does with an app's spec at boot, redone for
 * the host: check the spec itself, check a job's key=value tokens against
 * it, build the args string with defaults filled in, and compute the memory
 * estimate. Pure functions (no globals), so they can be unit-tested.
 *
 * Errors are written to err as one line a user can act on; the functions
 * return -1 then, 0 on success.
 */
#ifndef SL_TARGET_KERNEL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host.h"

#define ERR(...) (snprintf(err, errsz, __VA_ARGS__), -1)

/* Index of `val` in "a|b|c", or -1; *n = number of choices. */
static int
choice_index(const char *choices, const char *val, int *n)
{
    int idx = -1, i = 0;
    size_t vl = strlen(val);

    for (const char *p = choices;; i++) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (idx < 0 && l == vl && strncmp(p, val, l) == 0)
            idx = i;
        if (!bar)
            break;
        p = bar + 1;
    }
    *n = i + 1;
    return idx;
}

/* The def-th choice of "a|b|c" into out. */
static void
choice_at(const char *choices, int def, char *out, size_t outsz)
{
    const char *p = choices;
    size_t l;

    for (; def > 0 && strchr(p, '|'); def--)
        p = strchr(p, '|') + 1;
    l = strchr(p, '|') ? (size_t)(strchr(p, '|') - p) : strlen(p);
    snprintf(out, outsz, "%.*s", (int)l, p);
}

static int
terminated(const char *s, size_t n)
{
    return memchr(s, 0, n) != NULL;
}

static int
key_valid(const struct sl_keyspec *k, char *err, size_t errsz)
{
    int n;

    if (!terminated(k->name, sizeof k->name) || k->name[0] == 0)
        return ERR("spec: key name empty or not terminated");
    if (k->kind == SL_KEY_INT) {
        if (k->min > k->max || k->def < k->min || k->def > k->max)
            return ERR("spec: key %s: need min <= default <= max", k->name);
        return 0;
    }
    if (k->kind != SL_KEY_ENUM)
        return ERR("spec: key %s: unknown kind %u", k->name, k->kind);
    if (!terminated(k->choices, sizeof k->choices) || k->choices[0] == 0)
        return ERR("spec: key %s: choices empty or not terminated", k->name);
    choice_index(k->choices, "", &n);
    if (k->def < 0 || k->def >= n)
        return ERR("spec: key %s: default index %lld not in 0..%d", k->name,
                   (long long)k->def, n - 1);
    return 0;
}

static const struct sl_keyspec *
find_key(const struct sl_appspec *s, const char *name, size_t len)
{
    for (uint32_t i = 0; i < s->nkeys; i++)
        if (strlen(s->keys[i].name) == len && strncmp(s->keys[i].name, name, len) == 0)
            return &s->keys[i];
    return NULL;
}

int
host_spec_valid(const struct sl_appspec *s, char *err, size_t errsz)
{
    const struct sl_keyspec *mk;

    if (s->magic != SL_APPSPEC_MAGIC)
        return ERR("spec: bad magic %#x", s->magic);
    if (s->nkeys > SL_MAX_KEYS)
        return ERR("spec: %u keys, at most %d", s->nkeys, SL_MAX_KEYS);
    for (uint32_t i = 0; i < s->nkeys; i++)
        if (key_valid(&s->keys[i], err, errsz) < 0)
            return -1;
    if (!terminated(s->mem_key, sizeof s->mem_key))
        return ERR("spec: mem_key not terminated");
    if (s->mem_key[0]) {
        mk = find_key(s, s->mem_key, strlen(s->mem_key));
        if (!mk || mk->kind != SL_KEY_INT)
            return ERR("spec: mem_key %s is not an integer key", s->mem_key);
    }
    return 0;
}

static int
parse_int(const char *v, long long *out)
{
    char *end;

    if (*v == 0)
        return -1;
    *out = strtoll(v, &end, 10);
    return *end == 0 ? 0 : -1;
}

/* Check one key=value token; store its value in vals[key index]. */
static int
take_token(const struct sl_appspec *s, const char *tok, char vals[][SL_ARGS_MAX],
           char *err, size_t errsz)
{
    const char *eq = strchr(tok, '=');
    const struct sl_keyspec *k;
    long long v;
    int idx, n;

    if (!eq)
        return ERR("'%s' is not key=value", tok);
    k = find_key(s, tok, (size_t)(eq - tok));
    if (!k) {
        char keys[SL_MAX_KEYS * 17] = "";
        for (uint32_t i = 0; i < s->nkeys; i++)
            strcat(strcat(keys, " "), s->keys[i].name);
        return ERR("unknown key '%.*s'; this app's keys are:%s (and procs, seed)",
                   (int)(eq - tok), tok, keys);
    }
    idx = (int)(k - s->keys);
    if (vals[idx][0])
        return ERR("key %s given twice", k->name);
    if (k->kind == SL_KEY_INT) {
        if (parse_int(eq + 1, &v) < 0)
            return ERR("%s: expected an integer", tok);
        if (v < k->min || v > k->max)
            return ERR("%s out of range [%lld, %lld]", tok, (long long)k->min, (long long)k->max);
    } else if (choice_index(k->choices, eq + 1, &n) < 0) {
        return ERR("%s: expected one of %s", tok, k->choices);
    }
    snprintf(vals[idx], SL_ARGS_MAX, "%s", eq + 1);
    return 0;
}

int
host_spec_args(const struct sl_appspec *s, int ntok, char **tok,
               char *args, size_t argsz, char *err, size_t errsz)
{
    char vals[SL_MAX_KEYS][SL_ARGS_MAX];
    size_t len = 0;

    memset(vals, 0, sizeof vals);
    for (int i = 0; i < ntok; i++)
        if (take_token(s, tok[i], vals, err, errsz) < 0)
            return -1;
    args[0] = 0;
    for (uint32_t i = 0; i < s->nkeys; i++) {
        const struct sl_keyspec *k = &s->keys[i];
        if (!vals[i][0] && k->kind == SL_KEY_INT)
            snprintf(vals[i], SL_ARGS_MAX, "%lld", (long long)k->def);
        else if (!vals[i][0])
            choice_at(k->choices, (int)k->def, vals[i], SL_ARGS_MAX);
        len += (size_t)snprintf(args + len, len < argsz ? argsz - len : 0, "%s%s=%s",
                                i ? "," : "", k->name, vals[i]);
        if (len >= argsz)
            return ERR("keys too long for the info page (%zu bytes max)", argsz - 1);
    }
    return 0;
}

long long
host_spec_mem(const struct sl_appspec *s, const char *args, int procs)
{
    long long k = 0;
    size_t kl = strlen(s->mem_key);

    for (const char *p = args; kl && p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, s->mem_key, kl) == 0 && p[kl] == '=')
            k = atoll(p + kl + 1);
    return s->mem_const + s->mem_lin * k + s->mem_quad * k * k + s->mem_per_proc * procs;
}

#endif
