/*
 * fuzz_scenario - the scenario parser (kernel/scenario.c, with the kernel's formatter) under random and
 * mutated bootargs, ASan/UBSan. Two drivers share one checker, fuzz_one():
 *
 *   the standalone fuzzer (default; part of `make host-test`): a fixed seed, a time budget
 *     (SCHEDLAB_FUZZ_SECONDS, default 20), inputs from three generators - token soup built from a
 *     dictionary (the settings, the real app specs' keys and choices, boundary numbers, separators),
 *     mutations of a seed corpus (the .scn files of tools/scenarios and the scenarios in README.md and the
 *     pages under docs/), and mutations
 *     of inputs that parsed. It prints how many inputs it ran and how fast.
 *   libFuzzer (-DFUZZ_LIBFUZZER, `make fuzz` with clang): byte 0 picks the environment, byte 1 the
 *     error buffer's size, the rest is the bootargs.
 *
 * The app specs are the real ones: the ".slapp" section of each app's host object (FUZZ_SPEC_DIR).
 *
 * Invariants checked on every input
 *   failure: the message is NUL-terminated inside the buffer, non-empty, printable ASCII, starts with
 *            "bad token '", "no job=" or "jobs " (jobs that cannot fit in memory together), and not one byte
 *            is written after the buffer;
 *   success: every field is in range (policy built, quantum, times, flags), every job names a known app
 *            whose spec it carries, procs 1..SL_MAX_PROCS, its args are exactly the spec's keys in order
 *            with valid values, its memory estimate fits; and the scenario printed back as canonical
 *            bootargs parses to the identical struct.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fuzz_scenario.h"

#ifndef FUZZ_CORPUS_DIR
#define FUZZ_CORPUS_DIR "tools/scenarios"
#endif
#ifndef FUZZ_README
#define FUZZ_README "README.md:docs"
#endif
#ifndef FUZZ_SPEC_DIR
#define FUZZ_SPEC_DIR "build/host/obj/apps"
#endif

#ifndef FUZZ_LIBFUZZER   /* libFuzzer brings its own main (fuzz_check.c) */
/* ---- the standalone fuzzer ---- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int pick(int n) { return n > 0 ? (int)(rnd() % (uint64_t)n) : 0; }

#define MAXIN 2048
#define MAXWORDS 2048
#define MAXCORPUS 1024

struct words { char *w[MAXWORDS]; int n; };
static struct words settings, values, keys, appwords, seps, dict;
static char *corpus[MAXCORPUS];
static int ncorpus, nshipped;
static char *goods[256];                  /* inputs that parsed: mutated again */
static int ngoods;

static void add(struct words *ws, const char *w)
{
    for (int i = 0; i < ws->n; i++)
        if (!strcmp(ws->w[i], w))
            return;
    if (ws->n < MAXWORDS)
        ws->w[ws->n++] = strdup(w);
    if (ws != &dict)
        add(&dict, w);
}

static const char *any(const struct words *ws) { return ws->w[pick(ws->n)]; }

static void build_dict(void)
{
    /* the global settings and every job's keys come from the parser's own tables (scenario.h); these are
       policies' options */
    static const char *const set[] = { "wakeboost", "alternates", "gangfit", "turn" };
    static const char *const val[] = {
        "timeslice", "gang", "partition", "global", "lottery", "batch", "interactive",
        "on", "off", "yes", "no", "first", "best", "real", "virtual", "auto", "sbi", "poll", "keys", "none",
        "0us", "99us",
        "100us", "10ms", "10s", "11s", "86400s", "86401s", "86400000000us", "1ms", "0", "1", "2", "64", "65", "128",
        "129", "4096", "9223372036854775807", "9223372036854775808", "18446744073709551615",
        "18446744073709551616", "99999999999999999999999", "-1", "+1", "0x10", "1e3", "", "000000000000000000000001",
    };
    static const char *const sep[] = { " ", " ", " ", ",", ":", "=", "\t", "\n", "  ", "\r", "\x01", "\xff", "%s",
                                       "%n", "'" };
    for (int i = 0; scenario_setting(i); i++)
        add(&settings, scenario_setting(i)->name);
    for (size_t i = 0; i < sizeof set / sizeof *set; i++)
        add(&settings, set[i]);
    for (size_t i = 0; i < sizeof val / sizeof *val; i++)
        add(&values, val[i]);
    for (size_t i = 0; i < sizeof sep / sizeof *sep; i++)
        add(&seps, sep[i]);
    for (int i = 0; scenario_job_key(i); i++)
        add(&keys, scenario_job_key(i)->name);
    add(&keys, "tickets"), add(&keys, "class");
    add(&appwords, "nosuchapp"), add(&appwords, "abcdefghijklmnop");
    char num[80];
    for (int i = 0; i < nspecs; i++) {
        add(&appwords, specs[i].name);
        for (uint32_t k = 0; k < specs[i].spec.nkeys; k++) {
            const struct sl_keyspec *ks = &specs[i].spec.keys[k];
            add(&keys, ks->name);
            if (ks->kind == SL_KEY_INT) {
                const int64_t v[] = { ks->min, ks->max, ks->def };
                for (int j = 0; j < 3; j++) {
                    snprintf(num, sizeof num, "%lld", (long long)v[j]);
                    add(&values, num);
                }
                snprintf(num, sizeof num, "%lld", (long long)ks->min - (ks->min > INT64_MIN));
                add(&values, num);
                snprintf(num, sizeof num, "%llu", (unsigned long long)ks->max + 1);
                add(&values, num);
            } else {
                add(&values, ks->choices);                       /* "a|b|c" itself */
                for (const char *c = ks->choices; *c;) {
                    size_t clen = strcspn(c, "|");
                    snprintf(num, sizeof num, "%.*s", (int)(clen < 79 ? clen : 79), c);
                    add(&values, num);
                    c += clen + (c[clen] == '|');
                }
            }
        }
    }
}

static void add_corpus(const char *s)
{
    if (ncorpus < MAXCORPUS && *s && strlen(s) < MAXIN)
        corpus[ncorpus++] = strdup(s);
}

/* Every .scn file in dir, comments dropped, lines joined: each should parse. */
static void load_scenarios(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char path[1024], line[1024], all[MAXIN] = "";
        if (len < 5 || strcmp(e->d_name + len - 4, ".scn"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f)) {
            line[strcspn(line, "#\n")] = 0;
            if (line[strspn(line, " \t")] && strlen(all) + strlen(line) + 2 < sizeof all)
                strcat(strcat(all, " "), line);
        }
        if (f)
            fclose(f);
        add_corpus(all);
    }
    if (d)
        closedir(d);
    nshipped = ncorpus;
}

/* The scenarios in a Markdown file: from each line that mentions job=, the words that look like tokens. */
static void load_page(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, "job="))
            continue;
        char out[MAXIN] = "";
        for (char *w = strtok(line, " \t\n`\""); w; w = strtok(NULL, " \t\n`\"")) {
            for (int i = 0; i < settings.n; i++) {
                size_t sl = strlen(settings.w[i]);
                if (!strncmp(w, settings.w[i], sl) && w[sl] == '=' && strlen(out) + strlen(w) + 2 < sizeof out) {
                    strcat(strcat(out, out[0] ? " " : ""), w);
                    break;
                }
            }
        }
        add_corpus(out);
    }
    if (f)
        fclose(f);
}

/* The scenarios of the documentation: `paths` is a ':'-separated list of Markdown files and folders, a folder
   read for its *.md files and its subfolders, in name order (the corpus, and so the run, is the same on every
   host). */
static void load_pages(const char *paths)
{
    char list[1024];
    snprintf(list, sizeof list, "%s", paths);
    for (char *save = NULL, *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        struct dirent **names;
        int n = scandir(p, &names, NULL, alphasort);
        if (n < 0) {
            load_page(p); /* a file, or nothing */
            continue;
        }
        for (int i = 0; i < n; i++) {
            const char *name = names[i]->d_name, *dot = strrchr(name, '.');
            char sub[1024];
            int page = dot && !strcmp(dot, ".md"), folder = names[i]->d_type == DT_DIR ||
                                                             (names[i]->d_type == DT_UNKNOWN && !dot);
            if (name[0] != '.' && (page || folder) && snprintf(sub, sizeof sub, "%s/%s", p, name) < (int)sizeof sub)
                load_pages(sub);
            free(names[i]);
        }
        free(names);
    }
}

static void append(char *buf, size_t *n, const char *s)
{
    size_t l = strlen(s);
    if (*n + l < MAXIN) {
        memcpy(buf + *n, s, l + 1);
        *n += l;
    }
}

/* job=<app>[:k=v,...]: mostly real apps with their own keys and values, sometimes anything. */
static void gen_job(char *buf, size_t *n)
{
    int si = pick(nspecs);
    append(buf, n, "job=");
    append(buf, n, pick(8) ? specs[si].name : any(&appwords));
    int nk = pick(6);
    for (int k = 0; k < nk; k++) {
        append(buf, n, k ? (pick(20) ? "," : any(&seps)) : ":");
        const struct sl_appspec *s = &specs[si].spec;
        int r = pick(10);
        if (r < 6 && s->nkeys) {
            append(buf, n, s->keys[pick((int)s->nkeys)].name);
        } else if (r < 9) {
            static const char *const common[] = { "procs", "at", "adapt" };
            append(buf, n, common[pick(3)]);
        } else {
            append(buf, n, any(&keys));
        }
        append(buf, n, pick(15) ? "=" : any(&seps));
        append(buf, n, any(&values));
    }
}

static void gen_soup(char *buf)
{
    size_t n = 0;
    buf[0] = 0;
    int ntok = 1 + pick(8);
    for (int t = 0; t < ntok; t++) {
        if (t)
            append(buf, &n, pick(10) ? " " : any(&seps));
        int r = pick(10);
        if (r < 5) {
            gen_job(buf, &n);
        } else if (r < 9) {
            append(buf, &n, any(&settings));
            append(buf, &n, pick(20) ? "=" : any(&seps));
            append(buf, &n, any(&values));
        } else {
            for (int k = pick(4); k >= 0; k--)
                append(buf, &n, any(&dict));
        }
    }
}

/* One random edit of buf in place. */
static void mutate(char *buf)
{
    size_t len = strlen(buf), pos = (size_t)pick((int)len + 1);
    char tmp[MAXIN];
    switch (pick(9)) {
    case 0:                                              /* a byte: printable, separator or anything */
        if (len) {
            int r = pick(4);
            buf[pos % len] = (char)(r == 0 ? 1 + pick(255) : r == 1 ? " ,:="[pick(4)] : 32 + pick(95));
        }
        break;
    case 1: case 2: {                                    /* a dictionary word */
        const char *w = any(&dict);
        if (len + strlen(w) < MAXIN) {
            memmove(buf + pos + strlen(w), buf + pos, len - pos + 1);
            memcpy(buf + pos, w, strlen(w));
        }
        break;
    }
    case 3: {                                            /* delete a span */
        size_t k = (size_t)pick(16) + 1;
        if (pos + k > len)
            k = len - pos;
        memmove(buf + pos, buf + pos + k, len - pos - k + 1);
        break;
    }
    case 4: {                                            /* duplicate a span (more jobs, keys given twice) */
        size_t k = (size_t)pick(64) + 1;
        if (pos + k > len)
            k = len - pos;
        if (len + k < MAXIN) {
            memcpy(tmp, buf + pos, k);
            memmove(buf + pos + k, buf + pos, len - pos + 1);
            memcpy(buf + pos, tmp, k);
        }
        break;
    }
    case 5: {                                            /* a digit run becomes a boundary number */
        char *d = strpbrk(buf + pos, "0123456789");
        if (d) {
            size_t dl = strspn(d, "0123456789");
            const char *w = any(&values);
            snprintf(tmp, sizeof tmp, "%s%s", w, d + dl);
            if ((size_t)(d - buf) + strlen(tmp) < MAXIN)
                strcpy(d, tmp);
        }
        break;
    }
    case 6: {                                            /* a long run: tokens near and over 511 bytes */
        size_t k = 400 + (size_t)pick(300);
        char c = pick(2) ? 'a' : any(&seps)[0];
        if (len + k < MAXIN) {
            memmove(buf + pos + k, buf + pos, len - pos + 1);
            memset(buf + pos, c ? c : 'a', k);
        }
        break;
    }
    case 7:                                              /* splice another corpus entry in */
        snprintf(tmp, sizeof tmp, "%.*s %s%s", (int)pos, buf, corpus[pick(ncorpus)], buf + pos);
        strcpy(buf, tmp);
        break;
    default:                                             /* cut */
        buf[pos] = 0;
    }
}

static void gen_input(char *buf)
{
    int r = pick(10);
    if (r < 3 || (r >= 8 && ngoods == 0)) {
        gen_soup(buf);
        return;
    }
    snprintf(buf, MAXIN, "%s", r < 8 ? corpus[pick(ncorpus)] : goods[pick(ngoods)]);
    for (int m = 1 + pick(r < 8 ? 6 : 3); m > 0; m--)
        mutate(buf);
}

static size_t pick_errlen(void)
{
    int r = pick(20);
    return r < 16 ? 400 : r == 16 ? 0 : r == 17 ? 1 : (size_t)(2 + pick(120));
}

static void keep_good(const char *buf)
{
    if (ngoods < (int)(sizeof goods / sizeof *goods)) {
        goods[ngoods++] = strdup(buf);
    } else {
        int i = pick(ngoods);
        free(goods[i]);
        goods[i] = strdup(buf);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* For libFuzzer (make fuzz): the corpus as seed files (2 selector bytes, then the bootargs) and the
   dictionary in its format. */
static void write_seeds(const char *dir, const char *dictfile)
{
    char path[1024];
    for (int i = 0; i < ncorpus; i++) {
        snprintf(path, sizeof path, "%s/seed-%03d", dir, i);
        FILE *f = fopen(path, "wb");
        if (!f)
            continue;
        fputs("\x21", f);
        fputc(0, f);
        fputs(corpus[i], f);
        fclose(f);
    }
    FILE *f = fopen(dictfile, "w");
    for (int i = 0; f && i < dict.n; i++) {
        if (!dict.w[i][0])
            continue;
        fputc('"', f);
        for (const unsigned char *c = (const unsigned char *)dict.w[i]; *c; c++)
            fprintf(f, *c >= ' ' && *c <= '~' && *c != '"' && *c != '\\' ? "%c" : "\\x%02x", *c);
        fputs("\"\n", f);
    }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    const char *specdir = FUZZ_SPEC_DIR, *corpusdir = FUZZ_CORPUS_DIR, *readme = FUZZ_README;
    const char *seeds = NULL, *dictfile = NULL, *one = NULL;
    double seconds = getenv("SCHEDLAB_FUZZ_SECONDS") ? atof(getenv("SCHEDLAB_FUZZ_SECONDS")) : 20;
    uint64_t seed = getenv("SCHEDLAB_FUZZ_SEED") ? strtoull(getenv("SCHEDLAB_FUZZ_SEED"), NULL, 0) : 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--specs")) specdir = argv[i + 1];
        else if (!strcmp(argv[i], "--corpus")) corpusdir = argv[i + 1];
        else if (!strcmp(argv[i], "--readme")) readme = argv[i + 1];
        else if (!strcmp(argv[i], "--write-seeds")) seeds = argv[i + 1];
        else if (!strcmp(argv[i], "--write-dict")) dictfile = argv[i + 1];
        else if (!strcmp(argv[i], "--one")) one = argv[i + 1];
        else {
            fprintf(stderr, "usage: fuzz_scenario [--seconds S] [--seed N] [--specs DIR] [--corpus DIR] [--readme PATHS]\n"
                            "                     [--write-seeds DIR --write-dict FILE] [--one BOOTARGS]\n");
            return 2;
        }
    }
    rng_state = seed;
    load_specs(specdir);
    build_dict();
    load_scenarios(corpusdir);
    load_pages(readme);
    add_corpus("job=gauss");
    if (seeds && dictfile) {
        write_seeds(seeds, dictfile);
        return 0;
    }
    if (one) {
        for (unsigned sel = 0; sel < 64; sel++)
            fuzz_one(one, sel, 400);
        printf("fuzz_scenario: '%s' held every invariant in 64 environments\n", one);
        return 0;
    }
    /* the shipped scenarios parse where every policy and tracing exist */
    for (int i = 0; i < nshipped; i++) {
        struct scen_env env = make_env(0x21);
        struct scenario *sc = malloc(sizeof *sc);
        char err[400];
        if (scenario_parse(corpus[i], &env, sc, err, sizeof err))
            fail(corpus[i], "a shipped scenario does not parse", err);
        free(sc);
    }
    double t0 = now_s(), t = t0;
    long count = 0;
    char buf[MAXIN];
    for (; t - t0 < seconds; count++) {
        if ((count & 63) == 0)
            t = now_s();
        gen_input(buf);
        long ok_before = n_ok;
        fuzz_one(buf, (unsigned)pick(64), pick_errlen());
        if (n_ok > ok_before && pick(4) == 0)
            keep_good(buf);
    }
    t = now_s() - t0;
    printf("fuzz_scenario: %ld inputs in %.1f s (%.0f/s), %ld parsed, %ld rejected, every invariant held "
           "(seed %llu; %d apps + 2 synthetic, %d corpus entries, %d dictionary words)\n",
           count, t, count / (t > 0 ? t : 1), n_ok, n_fail, (unsigned long long)seed, nspecs - 2, ncorpus, dict.n);
    return 0;
}
#endif
