/*
 * scenario_words.h - the scenario parser's words (scenario_words.c): private to scenario.c and the tools that
 * build it. Each returns 0 (or a pointer/index) on success and -1 (NULL) when the text is not such a word.
 */
#ifndef SCENARIO_WORDS_H
#define SCENARIO_WORDS_H

#include <stddef.h>
#include <stdint.h>

int scen_parse_u64(const char *s, uint64_t *out);                   /* strict decimal, no overflow */
int scen_parse_long(const char *s, long min, long max, long *out);  /* strict signed decimal in [min, max] */
int scen_parse_time_us(const char *s, uint64_t *out);               /* <n>us | <n>ms | <n>s */
int scen_parse_size(const char *s, uint64_t *out);                  /* <n>K | <n>M | <n>G, in bytes */
int scen_parse_onoff(const char *s, int *out);                      /* on | off */
char *scen_split_eq(char *tok);                                     /* "k=v": cut at '=', return v */
int scen_choice_index(const char *choices, const char *val);        /* val's index in "a|b|c", or -1 */
void scen_choice_at(const char *choices, int def, char *out, size_t outlen); /* the def-th choice */
void scen_choices_words(const char *choices, char *out, size_t outlen);      /* "a, b or c" */


/* The parser's state, for scenario.c and the settings' parsers here; FAIL writes the message, returns -1. */
struct scen_parser {
    const struct scen_env *env;
    struct scenario *sc;
    char *err;
    size_t errlen;
};
#define FAIL(ps, ...) (snprintf((ps)->err, (ps)->errlen, __VA_ARGS__), -1)

/* key=val as the global setting key: 0 taken, -1 refused (the message in ps), 1 no setting has that name */
int scen_setting(struct scen_parser *ps, const char *key, const char *tok, const char *val);
void scen_setting_names(char *out, size_t outlen);       /* "policy=, quantum=, ..., job=" */
int scen_parse_job(struct scen_parser *ps, const char *tok, const char *val); /* job= (scenario.c) */

#endif
