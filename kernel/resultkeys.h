/*
 * resultkeys.h - which key=value pairs a job may add to its RESULT line (SYS_result), kept pure (no kernel
 * state) so the host tests can try every edge (tests/host/test_resultkeys.c).
 *
 * The RESULT line is the kernel's word: what the app reports goes after the keys the kernel prints, and
 * a parser that keeps the last copy of a key would take the app's. So an app may not report
 *   - a key the kernel prints itself (job=, check=, reason=...: result_kernel_keys),
 *   - one of the job's scenario keys, which RESULT prints from the scenario (n=5 shadowed by n=999),
 *   - a value a reader would take for a number that is not finite: nan or inf in any spelling C or Python
 *     accept (any case, signed, "infinity", "nan(...)"), or a decimal of magnitude 1e308 or more (1e999,
 *     which Python reads as inf). Such values became NaN/Infinity in JSON, which strict parsers refuse,
 *     and nan medians.
 * result_keys_refused() says whether any pair of `keys` ("k=v k=v ...") breaks one of these rules; `args`
 * is the job's scenario keys as RESULT prints them ("n=5,variant=coarse,...").
 */
#ifndef RESULTKEYS_H
#define RESULTKEYS_H

#include <stddef.h>

static const char *const result_kernel_keys[] = {
    "job",   "app",    "policy",   "harts",    "procs",  "arrive_us",  "start_us", "end_us",     "elapsed_us", "cpu_us",
    "check", "reason", "switches", "preempts", "blocks", "blocked_us", "adapt",    "migrations", "mem_kb",
    /* policy=adaptive's time per regime (kernel/sched/adaptive/adaptive.c) */
    "gang_us", "part_us", "fill_us", "regime_moves", "regime",
};

static inline char rk_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* The len bytes at s are the word w; fold: ignoring case (w in lower case). */
static inline int rk_same(const char *s, size_t len, const char *w, int fold)
{
    size_t i = 0;
    while (i < len && w[i] && (fold ? rk_lower(s[i]) : s[i]) == w[i])
        i++;
    return i == len && !w[i];
}

static inline int rk_word_is(const char *s, size_t len, const char *w) { return rk_same(s, len, w, 1); }

/* Is the key k (len bytes) one of the keys of args ("a=1,b=2")? */
static inline int rk_is_scenario_key(const char *args, const char *k, size_t len)
{
    for (const char *a = args; *a;) {
        size_t alen = 0;
        while (a[alen] && a[alen] != '=' && a[alen] != ',')
            alen++;
        if (alen == len) {
            size_t i = 0;
            while (i < len && a[i] == k[i])
                i++;
            if (i == len)
                return 1;
        }
        while (*a && *a != ',')
            a++;
        while (*a == ',')
            a++;
    }
    return 0;
}

/* Is the value v (len >= 1 bytes) a number that is not finite, or one of magnitude 1e308 or more? */
static inline int rk_nonfinite(const char *v, size_t len)
{
    size_t i = v[0] == '+' || v[0] == '-';
    const char *w = v + i;
    size_t wl = len - i;
    if (rk_word_is(w, wl, "inf") || rk_word_is(w, wl, "infinity") || rk_word_is(w, wl, "nan") ||
        (wl >= 4 && rk_word_is(w, 4, "nan(")))
        return 1;
    /* a decimal [digits][.digits][e[+-]digits]: its magnitude is that of its first non-zero digit */
    long intd = 0, zeros = 0, nonzero = 0, point = 0, ndigits = 0, exp = 0;
    for (; i < len && ((v[i] >= '0' && v[i] <= '9') || (v[i] == '.' && !point)); i++) {
        if (v[i] == '.') {
            point = 1;
            continue;
        }
        ndigits++;
        if (v[i] != '0' || nonzero) {
            nonzero = 1;
            intd += !point; /* a digit of the integer part, from the first non-zero one on */
        } else if (point) {
            zeros++; /* a zero after the point, before any non-zero digit */
        }
    }
    if (!ndigits || !nonzero)
        return 0; /* not a number, or zero */
    long mag = intd ? intd - 1 : -(zeros + 1);
    if (i < len && rk_lower(v[i]) == 'e') {
        int neg = i + 1 < len && v[i + 1] == '-';
        i += 1 + (i + 1 < len && (v[i + 1] == '+' || v[i + 1] == '-'));
        if (i == len || v[i] < '0' || v[i] > '9')
            return 0; /* "1e", "1e+": not a number */
        for (; i < len && v[i] >= '0' && v[i] <= '9'; i++)
            if (exp < 100000000)
                exp = exp * 10 + (v[i] - '0');
        mag += neg ? -exp : exp;
    }
    return i == len && mag >= 308;
}

static inline int result_keys_refused(const char *keys, const char *args)
{
    for (const char *k = keys; *k;) {
        size_t len = 0, vlen = 0;
        while (k[len] && k[len] != ' ' && k[len] != '=')
            len++;
        for (size_t i = 0; i < sizeof result_kernel_keys / sizeof result_kernel_keys[0]; i++)
            if (rk_same(k, len, result_kernel_keys[i], 0))
                return 1;
        if (rk_is_scenario_key(args, k, len))
            return 1;
        if (k[len] == '=') {
            while (k[len + 1 + vlen] && k[len + 1 + vlen] != ' ')
                vlen++;
            if (vlen && rk_nonfinite(k + len + 1, vlen))
                return 1;
        }
        while (*k && *k != ' ')
            k++;
        while (*k == ' ')
            k++;
    }
    return 0;
}

#endif
