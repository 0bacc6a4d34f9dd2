/* Which keys a job may add to its RESULT (kernel/resultkeys.h): the kernel's keys and the job's scenario
   keys are refused, and so is every value a reader would take for a number that is not finite. The value
   check is compared with the C library's strtod on random decimals around the edges (huge exponents, long
   mantissas, leading zeros) and on every spelling of nan and inf, under UBSan. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "resultkeys.h"

static uint64_t rng = 7;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int nonfinite(const char *v) { return rk_nonfinite(v, strlen(v)); }

/* The harness's number grammar (tools/py/schedlab/console.py _FLOAT, without inf/nan):
   [+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)? */
static int is_decimal(const char *v)
{
    const char *p = v + (*v == '+' || *v == '-');
    int before = 0, after = 0;
    while (*p >= '0' && *p <= '9')
        p++, before++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            after++;
    if (!before && !after)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        p += *p == '+' || *p == '-';
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == 0;
}

static void random_decimal(char *b, size_t cap)
{
    static const char *const mant[] = { "0", "1", "9", "17976931348623157", "99999999999999999999", "0.000", "1.5",
                                        "000123", "0.00000000123", ".5", "5.", "100000000000000000000000000000" };
    size_t n = 0;
    if (rnd() % 3 == 0)
        b[n++] = rnd() % 2 ? '-' : '+';
    if (rnd() % 2) {
        const char *m = mant[rnd() % (sizeof mant / sizeof *mant)];
        n += (size_t)snprintf(b + n, cap - n, "%s", m);
    } else {
        for (int k = 1 + (int)(rnd() % 40); k > 0 && n + 2 < cap; k--)
            b[n++] = rnd() % 12 == 0 ? '.' : (char)('0' + rnd() % 10);
    }
    if (rnd() % 4 != 0 && n + 24 < cap) {
        static const long exps[] = { 0, 1, 290, 299, 300, 306, 307, 308, 309, 310, 320, 400, 999, 100000, 99999999999 };
        long e = exps[rnd() % (sizeof exps / sizeof *exps)] + (long)(rnd() % 3) - 1;
        if (rnd() % 3 == 0)
            e = -e;
        n += (size_t)snprintf(b + n, cap - n, "%c%s%ld", rnd() % 2 ? 'e' : 'E', e >= 0 && rnd() % 2 ? "+" : "", e);
    }
    b[n] = 0;
}

static void test_values(void)
{
    static const char *const refused[] = { "nan", "NaN", "-nan", "+NAN", "inf", "-inf", "Inf", "INFINITY",
                                           "-Infinity", "nan(0x1)", "1e999", "-1e308", "1e308", "1.8e308",
                                           "0.001e311", "100e306", "9999e305" };
    static const char *const fine[] = { "0", "1", "-1", "7.77e-16", "1e307", "9.99e307", "123.456", "1e-999",
                                        "0e999", "nano", "info", "nan1", "inference", "abc", "0x10", "1e", "e5",
                                        "1.2.3", "--1", "0.0000e400", "99999999999999999999999e285" };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        CHECK(nonfinite(refused[i]));
        if (!nonfinite(refused[i]))
            fprintf(stderr, "  accepted %s\n", refused[i]);
    }
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        CHECK(!nonfinite(fine[i]));
        if (nonfinite(fine[i]))
            fprintf(stderr, "  refused %s\n", fine[i]);
    }
    char b[128];
    for (int i = 0; i < 500000; i++) {
        random_decimal(b, sizeof b);
        char *end;
        double x = strtod(b, &end);
        int whole = *end == 0 && end != b;
        if (is_decimal(b)) {
            CHECK(whole);
            if (nonfinite(b)) /* refused: at least 1e308, so at least that after rounding */
                CHECK(!isfinite(x) || fabs(x) >= 1e308);
            else /* accepted: below 1e308, so finite (rounding may reach 1e308 itself) */
                CHECK(isfinite(x) && fabs(x) <= 1e308);
        } else {
            CHECK(!nonfinite(b)); /* not a number at all: only nan/inf spellings are refused */
        }
        if (check_failed > 20)
            break;
    }
}

static void test_keys(void)
{
    const char *args = "n=5,variant=coarse,barrier=spin";
    CHECK(!result_keys_refused("", args));
    CHECK(!result_keys_refused("maxerr=7.77e-16 par_us=798", args));
    CHECK(!result_keys_refused("nn=1 n_rows=2 N=3 variants=x", args));   /* near misses are keys of their own */
    CHECK(!result_keys_refused("flag", args));                          /* a key without a value */
    CHECK(!result_keys_refused("error=sched=gss", args));
    CHECK(result_keys_refused("n=999", args));                          /* shadows the scenario's n=5 */
    CHECK(result_keys_refused("x=1 barrier=block", args));
    CHECK(result_keys_refused("check=ok", args));
    CHECK(result_keys_refused("x=1 mem_kb=1", args));
    CHECK(!result_keys_refused("CHECK=ok", args));                      /* keys are case-sensitive */
    CHECK(result_keys_refused("par_us=nan", args));
    CHECK(result_keys_refused("par_us=1 iter_us=inf", args));
    CHECK(result_keys_refused("x=1e999", args));
    CHECK(!result_keys_refused("  a=1   b=2  ", args));
    CHECK(!result_keys_refused("a=", args));
    CHECK(!result_keys_refused("=5", ""));
    CHECK(result_keys_refused("n", args));                              /* n alone would still shadow n=5 */
}

int main(void)
{
    test_values();
    test_keys();
    return check_done("test_resultkeys");
}
