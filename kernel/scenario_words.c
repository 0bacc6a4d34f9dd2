/*
 * scenario_words.c - the scenario language's words: whole numbers, times, sizes, on/off, choice lists and
 * key=value splitting, pure functions of their text (no parser state, no messages: scenario.c says what was
 * wrong); then the global settings' table, each with its parser and message (scenario.c dispatches on it), and
 * the KEY lines that describe every key. Shared by the kernel, the simulator and the host tools through
 * scenario.c.
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

/* ---- the global settings ---- */

/* model=<profile>[,key=value...]: letters, digits, '_', ',' and '='; the kernel only echoes it (BOOT) and
   marks dispatches for the plugin (model.c). */
static int parse_model(struct scen_parser *ps, const char *tok, const char *val)
{
    size_t n = strlen(val);
    int ok = n > 0 && n < SCEN_MODEL_LEN;
    for (size_t i = 0; ok && i < n; i++)
        ok = (val[i] >= 'a' && val[i] <= 'z') || (val[i] >= '0' && val[i] <= '9') || strchr("_,=", val[i]);
    if (!ok)
        return FAIL(ps, "bad token '%s': expected model=<profile>[,key=value...] (set by make qemu MODEL=...)", tok);
    strcpy(ps->sc->model, strcmp(val, "none") ? val : "");
    return 0;
}

/* perturb=<seed>[,depth=<d>]: the seed of a perturbed deterministic boot's schedule (kernel/perturb.h), and PCT's
   depth, 1..8 (default 3). clock=virtual is checked once every token is read (it may come later). */
static int parse_perturb(struct scen_parser *ps, const char *tok, const char *val)
{
    char buf[64];
    uint64_t depth = SCEN_DEFAULT_PERTURB_DEPTH;
    if (strlen(val) >= sizeof buf)
        return FAIL(ps, "bad token '%s': expected perturb=<seed>[,depth=<1..8>]", tok);
    strcpy(buf, val);
    char *comma = strchr(buf, ',');
    if (comma) {
        *comma = 0;
        if (strncmp(comma + 1, "depth=", 6) || scen_parse_u64(comma + 7, &depth) || depth < 1 || depth > 8)
            return FAIL(ps, "bad token '%s': expected perturb=<seed>[,depth=<1..8>]", tok);
    }
    if (scen_parse_u64(buf, &ps->sc->perturb_seed))
        return FAIL(ps, "bad token '%s': expected perturb=<seed>[,depth=<1..8>] with a whole number for the seed",
                    tok);
    ps->sc->perturb = 1;
    ps->sc->perturb_depth = (int)depth;
    return 0;
}

static int set_quantum(struct scen_parser *ps, const char *tok, const char *val)
{
    if (scen_parse_time_us(val, &ps->sc->quantum_us) || ps->sc->quantum_us < SCEN_MIN_QUANTUM_US ||
        ps->sc->quantum_us > SCEN_MAX_QUANTUM_US)
        return FAIL(ps, "bad token '%s': expected a quantum from %dus to %ds, like quantum=10ms or quantum=500us", tok,
                    SCEN_MIN_QUANTUM_US, SCEN_MAX_QUANTUM_US / 1000000);
    return 0;
}

static int set_seed(struct scen_parser *ps, const char *tok, const char *val)
{
    if (scen_parse_u64(val, &ps->sc->seed))
        return FAIL(ps, "bad token '%s': expected seed=<whole number>", tok);
    return 0;
}

static int set_trace(struct scen_parser *ps, const char *tok, const char *val)
{
    if (scen_parse_onoff(val, &ps->sc->trace))
        return FAIL(ps, "bad token '%s': expected trace=on or trace=off", tok);
    if (ps->sc->trace && !ps->env->trace_built)
        return FAIL(ps, "bad token '%s': tracing is not available yet in this build (trace=off works)", tok);
    return 0;
}

static int set_timeout(struct scen_parser *ps, const char *tok, const char *val)
{
    if (scen_parse_time_us(val, &ps->sc->timeout_us) || ps->sc->timeout_us == 0)
        return FAIL(ps, "bad token '%s': expected a positive time like timeout=30s or timeout=500ms", tok);
    return 0;
}

static int set_list(struct scen_parser *ps, const char *tok, const char *val)
{
    if (strcmp(val, "keys"))
        return FAIL(ps, "bad token '%s': expected list=keys (print the key table)", tok);
    if (!ps->env->list_built)
        return FAIL(ps, "bad token '%s': only the kernel prints the key table (boot it under QEMU)", tok);
    ps->sc->list_keys = 1;
    return 0;
}

/* policy= is read before every other token (scan_policy in scenario.c) */
static int set_policy(struct scen_parser *ps, const char *tok, const char *val)
{
    (void)ps, (void)tok, (void)val;
    return 0;
}

/* The global settings. parse_token dispatches on this table, the messages list its names and the KEY lines
   print it (tools/docs/ makes the reference from them; the harness reads the host build's copy): a setting
   added here is accepted, refused with its own message, listed and documented at once. */
static const struct setting {
    struct scen_keydoc doc;
    int (*parse)(struct scen_parser *ps, const char *tok, const char *val); /* NULL: one of doc.values, */
    size_t word;                /* ... whose index goes in the int at this offset of struct scenario, */
    const char *expected;       /* ... or the message "bad token '<tok>': expected <expected>" */
} settings[] = {
    { .doc = { "policy", "<name>", 1, 0, "", "",
               "the scheduling policy, one of the build's (BOOT policies=); default: the first of them" },
      .parse = set_policy },
    { .doc = { "quantum", "<n>us|<n>ms|<n>s", SCEN_MIN_QUANTUM_US, SCEN_MAX_QUANTUM_US, "us", "10ms",
               "a hart's turn: the policy's tick may preempt its process after it" },
      .parse = set_quantum },
    { .doc = { "seed", "<n>", 1, 0, "", "1", "seeds the apps' data and the policies' random choices" },
      .parse = set_seed },
    { .doc = { "trace", "off|on", 1, 0, "", "off",
               "record every dispatch and the library's events; dumped at the end (TRACE, ULOG lines)" },
      .parse = set_trace },
    { .doc = { "irq", "auto|sbi", 1, 0, "", "auto",
               "timers and IPIs: auto uses Sstc and ACLINT SSWI where the machine has them, sbi always the SBI" },
      .word = offsetof(struct scenario, irq_sbi),
      .expected = "irq=auto (Sstc and ACLINT SSWI where the machine has them) or irq=sbi" },
    { .doc = { "calib", "off|on", 1, 0, "", "on", "measure the calibration card (a CALIB line) before t0" },
      .word = offsetof(struct scenario, calib),
      .expected = "calib=on or calib=off (the calibration card, a CALIB line)" },
    { .doc = { "timeout", "<n>us|<n>ms|<n>s", 1, SCEN_MAX_TIME_US, "us", "",
               "the watchdog for the whole run: ERROR timeout and exit status 4 when it fires; default: none" },
      .parse = set_timeout },
    { .doc = { "clock", "real|virtual", 1, 0, "", "real",
               "virtual: deterministic mode, times count instructions (QEMU -icount; make qemu DETERMINISTIC=1)" },
      .word = offsetof(struct scenario, clock_virtual),
      .expected = "clock=real or clock=virtual (make qemu DETERMINISTIC=1)" },
    { .doc = { "model", "<profile>[,key=value...]|none", 1, 0, "", "none",
               "the machine model's spec, written by make qemu MODEL= and schedlab --model (tools/model/README.md)" },
      .parse = parse_model },
    { .doc = { "idle", "auto|poll", 1, 0, "", "auto", "an idle hart: auto polls, then halts; poll never halts" },
      .word = offsetof(struct scenario, idle_poll),
      .expected = "idle=auto (poll, then halt) or idle=poll (never halt)" },
    { .doc = { "perturb", "<seed>[,depth=<1..8>]", 1, 0, "", "",
               "a perturbed deterministic boot (with clock=virtual): the seed of its schedule and PCT's depth "
               "(default 3)" },
      .parse = parse_perturb },
    { .doc = { "list", "keys", 1, 0, "", "",
               "print this key table (KEY lines) after BOOT, then run the jobs; without job= run nothing" },
      .parse = set_list },
    { .doc = { "job", "<app>[:key=value,...]", 1, 0, "", "",
               "one job, repeatable: an app and its keys (scope job, the app's own and the policy's job keys)" },
      .parse = scen_parse_job },
};
#define NSETTINGS ((int)(sizeof settings / sizeof settings[0]))

const struct scen_keydoc *scenario_setting(int i) { return i >= 0 && i < NSETTINGS ? &settings[i].doc : NULL; }

/* "policy=, quantum=, ..., job=" for messages. */
void scen_setting_names(char *out, size_t outlen)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < NSETTINGS && n < outlen; i++)
        n += snprintf(out + n, outlen - n, "%s%s=", i ? ", " : "", settings[i].doc.name);
}

int scen_setting(struct scen_parser *ps, const char *key, const char *tok, const char *val)
{
    for (int i = 0; i < NSETTINGS; i++) {
        const struct setting *s = &settings[i];
        if (strcmp(key, s->doc.name))
            continue;
        if (s->parse)
            return s->parse(ps, tok, val);
        int word = scen_choice_index(s->doc.values, val);
        if (word < 0)
            return FAIL(ps, "bad token '%s': expected %s", tok, s->expected);
        *(int *)((char *)ps->sc + s->word) = word;
        return 0;
    }
    return 1;
}

/* ---- KEY lines: the key table as text (scenario.h) ---- */

/* A time in its largest whole unit: 10000 -> "10ms". */
static void time_words(long long us, char *out, size_t outlen)
{
    if (us && us % 1000000 == 0)
        snprintf(out, outlen, "%llds", us / 1000000);
    else if (us && us % 1000 == 0)
        snprintf(out, outlen, "%lldms", us / 1000);
    else
        snprintf(out, outlen, "%lldus", us);
}

static int key_line(char *buf, size_t len, const char *scope, const char *name, const char *values, long long min,
                    long long max, const char *unit, const char *def, const char *help)
{
    char range[64] = "", lo[24], hi[24];
    if (min <= max) {
        if (unit[0])
            time_words(min, lo, sizeof lo), time_words(max, hi, sizeof hi);
        else
            snprintf(lo, sizeof lo, "%lld", min), snprintf(hi, sizeof hi, "%lld", max);
        snprintf(range, sizeof range, " range=%s..%s", lo, hi);
    }
    return snprintf(buf, len, "KEY scope=%s name=%s values=%s%s default=%s help=%s", scope, name, values, range, def,
                    help ? help : "");
}

int scenario_key_line(char *buf, size_t len, const char *scope, const struct scen_keydoc *k)
{
    return key_line(buf, len, scope, k->name, k->values, k->min, k->max, k->unit, k->def, k->help);
}

int scenario_option_line(char *buf, size_t len, const char *scope, const struct scen_option *o)
{
    char def[sizeof o->choices];
    if (o->choices[0])
        scen_choice_at(o->choices, (int)o->def, def, sizeof def);
    else
        snprintf(def, sizeof def, "%ld", o->def);
    return key_line(buf, len, scope, o->name, o->choices[0] ? o->choices : "<n>", o->choices[0] ? 1 : o->min,
                    o->choices[0] ? 0 : o->max, "", def, o->help);
}

int scenario_app_line(char *buf, size_t len, const char *app, const struct sl_appspec *spec)
{
    const char *flags = (spec->flags & SL_APP_BACKGROUND) && (spec->flags & SL_APP_ADAPTIVE) ? "background,adaptive"
                        : spec->flags & SL_APP_BACKGROUND                                  ? "background"
                        : spec->flags & SL_APP_ADAPTIVE                                    ? "adaptive"
                                                                                          : "-";
    char about[sizeof spec->about + 1];
    snprintf(about, sizeof about, "%.*s", (int)sizeof spec->about, spec->about);
    return key_line(buf, len, "app", app, flags, 1, 0, "", "", about);
}

int scenario_appkey_line(char *buf, size_t len, const char *app, const struct sl_keyspec *k)
{
    char scope[24], def[sizeof k->choices];
    snprintf(scope, sizeof scope, "app:%s", app);
    if (k->kind == SL_KEY_ENUM)
        scen_choice_at(k->choices, (int)k->def, def, sizeof def);
    else
        snprintf(def, sizeof def, "%lld", (long long)k->def);
    return key_line(buf, len, scope, k->name, k->kind == SL_KEY_ENUM ? k->choices : "<n>",
                    k->kind == SL_KEY_ENUM ? 1 : k->min, k->kind == SL_KEY_ENUM ? 0 : k->max, "", def, "");
}
