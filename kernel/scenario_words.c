/*
 * scenario_words.c - the scenario language's words: whole numbers, times, sizes, on/off, choice lists and
 * key=value splitting. Pure functions of their text (no parser state, no messages: scenario.c says what was
 * wrong), shared by the kernel, the simulator and the host tools through scenario.c.
 */
#ifdef SCHEDLAB_HOST
#include <string.h>
#include "kprintf.h"
#else
#include "kernel.h"
#endif
#include "scenario.h"
#include "scenario_words.h"

/* Strict unsigned decimal: digits only, no overflow. */
int scen_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* "<n>us", "<n>ms" or "<n>s" -> microseconds. */
int scen_parse_time_us(const char *s, uint64_t *out)
{
    char num[24];
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, s, n);
    num[n] = 0;
    uint64_t v, mul;
    if (scen_parse_u64(num, &v))
        return -1;
    const char *unit = s + n;
    if (!strcmp(unit, "us"))
        mul = 1;
    else if (!strcmp(unit, "ms"))
        mul = 1000;
    else if (!strcmp(unit, "s"))
        mul = 1000000;
    else
        return -1;
    if (v > SCEN_MAX_TIME_US / mul)
        return -1;
    *out = v * mul;
    return 0;
}

int scen_parse_onoff(const char *s, int *out)
{
    if (!strcmp(s, "on"))
        *out = 1;
    else if (!strcmp(s, "off"))
        *out = 0;
    else
        return -1;
    return 0;
}

/* Split "key=value" in place of a copy; returns value or NULL if there is no '='. */
char *scen_split_eq(char *tok)
{
    char *eq = strchr(tok, '=');
    if (!eq)
        return NULL;
    *eq = 0;
    return eq + 1;
}

int scen_choice_index(const char *choices, const char *val)
{
    size_t len = strlen(val);
    int i = 0;
    for (const char *c = choices; *c; i++) {
        const char *bar = strchr(c, '|');
        size_t clen = bar ? (size_t)(bar - c) : strlen(c);
        if (clen == len && len && !strncmp(c, val, len))
            return i;
        c += clen + (bar ? 1 : 0);
    }
    return -1;
}

/* Copy the def-th choice of "a|b|c" into out. */
void scen_choice_at(const char *choices, int def, char *out, size_t outlen)
{
    const char *c = choices;
    for (int i = 0; i < def && strchr(c, '|'); i++)
        c = strchr(c, '|') + 1;
    size_t n = strchr(c, '|') ? (size_t)(strchr(c, '|') - c) : strlen(c);
    if (n >= outlen)
        n = outlen - 1;
    memcpy(out, c, n);
    out[n] = 0;
}

/* "a|b|c" -> "a, b or c" for messages. */
void scen_choices_words(const char *choices, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *c = choices; *c && o + 6 < outlen; c++) {
        if (*c == '|') {
            const char *sep = strchr(c + 1, '|') ? ", " : " or ";
            for (; *sep && o + 1 < outlen; sep++)
                out[o++] = *sep;
        } else {
            out[o++] = *c;
        }
    }
    out[o] = 0;
}

/* Strict signed decimal within [min, max]. */
int scen_parse_long(const char *s, long min, long max, long *out)
{
    uint64_t v;
    int neg = *s == '-';
    if (scen_parse_u64(s + neg, &v) || v > (uint64_t)INT64_MAX)
        return -1;
    long x = neg ? -(long)v : (long)v;
    if (x < min || x > max)
        return -1;
    *out = x;
    return 0;
}

/* "<n>K", "<n>M" or "<n>G" (KiB, MiB, GiB) -> bytes; 0 on success. */
int scen_parse_size(const char *s, uint64_t *out)
{
    char num[24];
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    if (n == 0 || n >= sizeof num || !s[n] || s[n + 1])
        return -1;
    memcpy(num, s, n);
    num[n] = 0;
    uint64_t v;
    int shift = s[n] == 'K' ? 10 : s[n] == 'M' ? 20 : s[n] == 'G' ? 30 : -1;
    if (shift < 0 || scen_parse_u64(num, &v) || v == 0 || v > (UINT64_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

int scenario_arg(const char *args, const char *key, char *val, size_t vallen)
{
    size_t klen = strlen(key);
    for (const char *a = args; *a;) {
        const char *comma = strchr(a, ',');
        size_t len = comma ? (size_t)(comma - a) : strlen(a);
        if (len > klen && !strncmp(a, key, klen) && a[klen] == '=') {
            size_t v = len - klen - 1;
            if (v >= vallen)
                v = vallen - 1;
            memcpy(val, a + klen + 1, v);
            val[v] = 0;
            return 0;
        }
        a += len + (comma ? 1 : 0);
    }
    return -1;
}
