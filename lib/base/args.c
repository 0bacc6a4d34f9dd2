/*
 * args.c - the app's keys, from the info page's args string.
 *
 * The kernel writes every key of the app's spec into info->args as
 * "k=v,k=v" with defaults filled in and values already validated, so a key
 * that is missing here is a bug in the app (asking for an undeclared key):
 * sl_arg_* then stop the job with sl_die.
 *
 * sl_lib_init (process 0, before main: the start code, lib/start/) copies
 * the string once and splits it in place; afterwards the table is read-only,
 * so every process may read it without locks. It is all the library's
 * start-up: the layers above start when first used (a thread run installs
 * the wait layer's hooks, a worker run its RESULT keys).
 */
#include "schedlab.h"

#define MAXARGS 16

static char argbuf[SL_ARGS_MAX + 1];
static const char *keys[MAXARGS], *vals[MAXARGS];
static int nargs;

void sl_lib_init(void)
{
    volatile struct sl_info *info = sl_info();
    char *p = argbuf;

    for (int i = 0; i < SL_ARGS_MAX && info->args[i]; i++)
        argbuf[i] = info->args[i];
    nargs = 0;
    while (*p && nargs < MAXARGS) {
        char *eq = strchr(p, '='), *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (eq && (!comma || eq < comma)) {
            *eq = 0;
            keys[nargs] = p;
            vals[nargs++] = eq + 1;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
}

const char *sl_arg_str(const char *key)
{
    for (int i = 0; i < nargs; i++)
        if (strcmp(keys[i], key) == 0)
            return vals[i];
    sl_die("missing key %s in args \"%.*s\" (not declared in the app's spec?)", key, SL_ARGS_MAX,
           (const char *)sl_info()->args);
}

int sl_arg_is(const char *key, const char *value) { return strcmp(sl_arg_str(key), value) == 0; }

int64_t sl_arg_int(const char *key)
{
    const char *s = sl_arg_str(key);
    int neg = *s == '-';
    int64_t v = 0;

    if (neg || *s == '+')
        s++;
    if (*s == 0)
        sl_die("key %s is not an integer", key);
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            sl_die("key %s is not an integer", key);
        v = v * 10 + (*s - '0');
    }
    return neg ? -v : v;
}
