/* Unit tests of the scenario parser (kernel/scenario.c) on the host, under ASan/UBSan. */
#include <string.h>
#include "check.h"
#include "scenario.h"

static const struct sl_appspec gauss = {
    .magic = SL_APPSPEC_MAGIC, .nkeys = 3, .mem_key = "n", .mem_quad = 16, .mem_const = 4096,
    .keys = {
        { .name = "n", .kind = SL_KEY_INT, .min = 2, .max = 4096, .def = 256 },
        { .name = "sync", .kind = SL_KEY_ENUM, .def = 0, .choices = "barrier|cond" },
        { .name = "barrier", .kind = SL_KEY_ENUM, .def = 1, .choices = "spin|block" },
    },
};
static const struct sl_appspec hog = { .magic = SL_APPSPEC_MAGIC, .nkeys = 0, .flags = SL_APP_BACKGROUND };

static const struct sl_appspec *lookup(const char *name)
{
    if (!strcmp(name, "gauss"))
        return &gauss;
    if (!strcmp(name, "hog"))
        return &hog;
    return NULL;
}

/* two policies with options of their own, as sched.h's classes declare them */
static const struct scen_option ts_opts[] = { { "wakeboost", "off|on", 0, "", 0, 0 } };
static const struct scen_option gang_opts[] = { { "alternates", "off|on", 0, "", 0, 0 },
                                                { "gangfit", "first|best", 0, "", 0, 0 } };
/* a third with a numeric option and per-job keys, as tests/policies/lottery.c */
static const struct scen_option lot_opts[] = { { .name = "turn", .def = 1, .min = 1, .max = 64 },
                                               { .name = "bias", .def = 0, .min = -20, .max = 19 } };
static const struct scen_option lot_keys[] = { { .name = "tickets", .def = 10, .min = 1, .max = 10000 },
                                               { .name = "class", .choices = "batch|interactive" } };
static const struct scen_policy two_policies[] = { { "timeslice", ts_opts, 1, 0, 0 }, { "gang", gang_opts, 2, 0, 0 },
                                                   { "lottery", lot_opts, 2, lot_keys, 2 } };

static struct scen_env env = { .nharts = 4, .free_bytes = 64ULL << 20, .lookup = lookup, .apps = "gauss, hog",
                               .policy_table = two_policies, .npolicies = 1,
                               .trace_built = 1 };

static struct scenario sc;
static char err[400];

static int parse(const char *args) { return scenario_parse(args, &env, &sc, err, sizeof err); }

/* the parse fails and the message names the token and contains `what` */
static int fails(const char *args, const char *token, const char *what)
{
    if (parse(args) == 0)
        return 0;
    int ok = strstr(err, token) && strstr(err, what);
    if (!ok)
        fprintf(stderr, "  message for '%s' was: %s\n", args, err);
    return ok;
}

static void test_defaults(void)
{
    CHECK(parse("job=gauss") == 0);
    CHECK(!strcmp(sc.policy, "timeslice"));
    CHECK(sc.quantum_us == 10000 && sc.seed == 1 && sc.trace == 0 && sc.timeout_us == 0 && sc.popt[0] == 0);
    CHECK(sc.clock_virtual == 0);
    CHECK(sc.calib == SCEN_DEFAULT_CALIB);
    CHECK(sc.njobs == 1 && sc.jobs[0].procs == 4 && sc.jobs[0].at_us == 0);
    CHECK(!strcmp(sc.jobs[0].args, "n=256,sync=barrier,barrier=block"));
}

static void test_full(void)
{
    CHECK(parse("  policy=timeslice quantum=500us seed=42 trace=on timeout=30s wakeboost=on "
                "job=gauss:n=64,barrier=spin,procs=2,at=1500ms job=hog:procs=3  ") == 0);
    CHECK(sc.quantum_us == 500 && sc.seed == 42 && sc.trace == 1 && sc.timeout_us == 30000000 && sc.popt[0] == 1);
    CHECK(sc.njobs == 2);
    CHECK(!strcmp(sc.jobs[0].args, "n=64,sync=barrier,barrier=spin"));
    CHECK(sc.jobs[0].procs == 2 && sc.jobs[0].at_us == 1500000);
    CHECK(sc.jobs[0].mem_bytes >= 64 * 64 * 16);
    CHECK(!strcmp(sc.jobs[1].app, "hog") && sc.jobs[1].procs == 3 && sc.jobs[1].args[0] == 0);
    CHECK(parse("job=gauss quantum=2ms quantum=1s") == 0 && sc.quantum_us == 1000000);   /* last one wins */
    CHECK(parse("clock=virtual job=gauss") == 0 && sc.clock_virtual == 1);
    CHECK(parse("clock=virtual job=gauss clock=real") == 0 && sc.clock_virtual == 0);
}

static void test_bad_tokens(void)
{
    CHECK(fails("policy=fifo job=gauss", "policy=fifo", "no policy 'fifo' in this build (policies: timeslice)"));
    CHECK(fails("policy=gang job=gauss", "policy=gang", "no policy 'gang'"));
    CHECK(fails("job=matmul", "job=matmul", "unknown app 'matmul'"));
    CHECK(fails("job=gauss:bogus=1", "job=gauss:bogus=1", "no key 'bogus'"));
    CHECK(fails("job=gauss:procs=0", "procs=0", "from 1 to"));
    CHECK(fails("job=gauss:procs=129", "procs=129", "from 1 to"));
    CHECK(fails("job=gauss:procs=two", "procs=two", "whole number"));
    CHECK(fails("job=gauss:procs=-1", "procs=-1", "whole number"));
    CHECK(fails("quantum=0 job=gauss", "quantum=0", "quantum"));
    CHECK(fails("quantum= job=gauss", "quantum=", "quantum"));
    CHECK(fails("quantum=10 job=gauss", "quantum=10", "quantum"));
    CHECK(fails("quantum=10xs job=gauss", "quantum=10xs", "quantum"));
    CHECK(fails("quantum=50us job=gauss", "quantum=50us", "from 100us"));
    CHECK(fails("seed=abc job=gauss", "seed=abc", "whole number"));
    CHECK(fails("seed=99999999999999999999999 job=gauss", "seed=9999", "whole number"));
    CHECK(fails("trace=yes job=gauss", "trace=yes", "trace=on or trace=off"));
    CHECK(fails("calib=1 job=gauss", "calib=1", "calib=on or calib=off"));
    CHECK(fails("calib= job=gauss", "calib=", "calib=on or calib=off"));
    CHECK(parse("calib=on job=gauss") == 0 && sc.calib == 1);
    CHECK(parse("calib=on calib=off job=gauss") == 0 && sc.calib == 0);   /* last one wins */
    env.trace_built = 0;
    CHECK(fails("trace=on job=gauss", "trace=on", "not available yet"));
    CHECK(parse("trace=off job=gauss") == 0);
    env.trace_built = 1;
    CHECK(fails("timeout=0s job=gauss", "timeout=0s", "positive time"));
    CHECK(fails("clock=fast job=gauss", "clock=fast", "clock=real or clock=virtual"));
    CHECK(fails("clock= job=gauss", "clock=", "clock=real or clock=virtual"));
    CHECK(fails("wakeboost=1 job=gauss", "wakeboost=1", "expected off or on"));
    CHECK(fails("job=gauss:adapt=1", "adapt=1", "adapt=yes or adapt=no"));
    CHECK(fails("job=gauss:adapt=no,adapt=yes", "adapt=yes", "twice"));
    CHECK(parse("job=gauss:adapt=yes job=gauss") == 0);
    CHECK(sc.jobs[0].adaptive == 1 && sc.jobs[1].adaptive == 0);    /* default: the spec's flag */
    CHECK(fails("job=gauss:n=1", "n=1", "from 2 to 4096"));
    CHECK(fails("job=gauss:n=12a", "n=12a", "whole number"));
    CHECK(fails("job=gauss:sync=lock", "sync=lock", "barrier or cond"));
    CHECK(fails("job=gauss:n=4096", "n=4096", "MiB"));               /* 256 MiB estimate > 64 MiB free */
    CHECK(fails("job=gauss:n=64,n=65", "n=65", "twice"));
    CHECK(fails("job=gauss:n", "job=gauss:n", "not key=value"));
    CHECK(fails("job=gauss:", "job=gauss:", "nothing after"));
    CHECK(fails("job=gauss:n=64,", "job=gauss:n=64,", "comma"));
    CHECK(fails("job=", "job=", "expected job=<app>"));
    CHECK(fails("job=gauss:at=5", "at=5", "time"));
    CHECK(fails("colour=blue job=gauss", "colour=blue", "unknown setting"));
    CHECK(fails("gauss", "gauss", "key=value"));
    CHECK(fails("", "no job=", "nothing to run"));
    CHECK(fails("policy=timeslice", "no job=", "nothing to run"));
}

static void test_limits(void)
{
    char big[64 * 12 + 64] = "";
    for (int i = 0; i < 64; i++)
        strcat(big, "job=hog ");
    CHECK(parse(big) == 0 && sc.njobs == 64);
    strcat(big, "job=hog");
    CHECK(fails(big, "job=hog", "more than 64 jobs"));
    char longtok[700];
    memset(longtok, 'a', sizeof longtok - 1);
    longtok[sizeof longtok - 1] = 0;
    CHECK(fails(longtok, "aaaa", "longer than"));
    /* the whole message, as the kernel's formatter prints it (it once lacked %.40s: issue 10, defect 5) */
    char want[120];
    snprintf(want, sizeof want, "bad token '%.40s...': longer than 511 characters", longtok);
    CHECK(!strcmp(err, want));
    char jobtok[700] = "job=gauss:n=64,";
    memset(jobtok + strlen(jobtok), 'b', sizeof jobtok - 1 - strlen(jobtok));
    CHECK(parse("job=hog") == 0);
    CHECK(fails(jobtok, "job=gauss:n=64,bbbb", "longer than 511 characters"));
    snprintf(want, sizeof want, "bad token '%.40s...': longer than 511 characters", jobtok);
    CHECK(!strcmp(err, want));
    CHECK(fails("job=gauss:at=99999999999999s", "at=", "time"));
}

/* Found by fuzz_scenario: a message quoting a token with control bytes (a '\r' could fake a new console
   line), and enum values longer than 47 bytes cut short in the args. */
static const struct sl_appspec longenum = {
    .magic = SL_APPSPEC_MAGIC, .nkeys = 1,
    .keys = { { .name = "mode", .kind = SL_KEY_ENUM, .def = 1,
                .choices = "short|a_choice_of_fifty_seven_bytes_as_long_as_the_field_allows" } },
};
static const struct sl_appspec *lookup_long(const char *name) { return strcmp(name, "le") ? NULL : &longenum; }

static void test_found_by_fuzzing(void)
{
    CHECK(fails("job=gauss:sync=\rRESULT\x1b[2J", "sync=?RESULT?[2J", "barrier or cond"));
    for (const char *c = err; *c; c++)
        CHECK(*c >= ' ' && *c <= '~');
    CHECK(fails("\x01\xff", "'?" "?'", "key=value"));
    struct scen_env e = env;
    e.lookup = lookup_long;
    CHECK(scenario_parse("job=le", &e, &sc, err, sizeof err) == 0);
    CHECK(!strcmp(sc.jobs[0].args, "mode=a_choice_of_fifty_seven_bytes_as_long_as_the_field_allows"));
}

static void test_arg_lookup(void)
{
    char v[16];
    CHECK(scenario_arg("n=256,sync=barrier,barrier=spin", "sync", v, sizeof v) == 0 && !strcmp(v, "barrier"));
    CHECK(scenario_arg("n=256,sync=barrier,barrier=spin", "barrier", v, sizeof v) == 0 && !strcmp(v, "spin"));
    CHECK(scenario_arg("n=256,sync=barrier", "syn", v, sizeof v) != 0);
    CHECK(scenario_arg("", "n", v, sizeof v) != 0);
}

/* Memory limits (issue 10): mem= or the estimate with slack, and the jobs certain to overlap must fit. */
static void test_memory_limits(void)
{
    CHECK(parse("job=gauss:n=1100") == 0);
    uint64_t est = sc.jobs[0].mem_bytes;
    CHECK(est >= 1100ULL * 1100 * 16 && sc.jobs[0].mem_limit == SCEN_MEM_SLACK(est));
    CHECK(parse("job=gauss:n=64,mem=3M job=hog:mem=512K") == 0);
    CHECK(sc.jobs[0].mem_limit == 3ULL << 20 && sc.jobs[1].mem_limit == 512ULL << 10);
    CHECK(fails("job=gauss:mem=0M", "mem=0M", "size like"));
    CHECK(fails("job=gauss:mem=12", "mem=12", "size like"));
    CHECK(fails("job=gauss:mem=1T", "mem=1T", "size like"));
    CHECK(fails("job=gauss:mem=1M,mem=2M", "mem=2M", "twice"));
    CHECK(fails("job=gauss:mem=100G", "mem=100G", "free"));

    /* two of these fit in 64 MiB, three do not */
    CHECK(parse("job=gauss:n=1100 job=gauss:n=1100") == 0);
    CHECK(parse("job=gauss:n=1100 job=gauss:n=1100 job=gauss:n=1100") == -1 && strstr(err, "jobs 1,2,3") &&
          strstr(err, "in memory together"));
    /* foreground jobs that arrive at different times may never overlap: accepted */
    CHECK(parse("job=gauss:n=1100 job=gauss:n=1100,at=1s job=gauss:n=1100,at=2s job=gauss:n=1100,at=2s") == 0);
    CHECK(parse("job=gauss:n=1100,at=1s job=gauss:n=1100,at=1s job=gauss:n=1100,at=1s") == -1 &&
          strstr(err, "from 1000 ms"));
    /* a background job stays until every foreground job ends, so it overlaps every later arrival */
    CHECK(parse("job=hog:mem=30M job=gauss:n=1100,at=1s") == 0);
    CHECK(parse("job=hog:mem=30M job=gauss:n=1100,at=1s job=gauss:n=1100,at=1s") == -1 && strstr(err, "jobs 1,2,3"));
    CHECK(parse("job=gauss:n=1100,at=1s job=gauss:n=1100,at=1s job=hog:mem=30M,at=2s") == 0);
}

/* A policy's own options (issue 11): checked against the chosen policy, in any order relative to policy=. */
static void test_policy_options(void)
{
    struct scen_env saved = env;
    env.npolicies = 2;
    CHECK(parse("job=gauss") == 0 && !strcmp(sc.policy, "timeslice") && sc.popt[0] == 0);
    CHECK(parse("wakeboost=on job=gauss") == 0 && sc.popt[0] == 1);
    CHECK(parse("policy=gang job=gauss") == 0 && sc.popt[0] == 0 && sc.popt[1] == 0);   /* defaults */
    CHECK(parse("gangfit=best policy=gang alternates=on job=gauss") == 0 && sc.popt[0] == 1 && sc.popt[1] == 1);
    CHECK(parse("policy=timeslice policy=gang alternates=on job=gauss") == 0 && !strcmp(sc.policy, "gang"));
    CHECK(fails("alternates=on job=gauss", "alternates=on", "an option of policy gang, not of timeslice"));
    CHECK(fails("policy=gang wakeboost=on job=gauss", "wakeboost=on", "an option of policy timeslice, not of gang"));
    CHECK(fails("policy=gang gangfit=worst job=gauss", "gangfit=worst", "expected first or best"));
    CHECK(fails("policy=gang bogus=1 job=gauss", "bogus=1", "alternates=, gangfit="));   /* lists its options */
    CHECK(fails("policy=fifo job=gauss", "policy=fifo", "no policy 'fifo'"));
    CHECK(fails("policy= job=gauss", "policy=", "no policy ''"));
    env = saved;
}

/* model= and idle=, which make and the harness add for the machine model (tools/model/README.md) */
static void test_model_tokens(void)
{
    CHECK(parse("job=gauss") == 0 && sc.model[0] == 0 && sc.idle_poll == 0);
    CHECK(parse("model=iris,l1_kb=64,nodes=1 idle=poll job=gauss") == 0 && !strcmp(sc.model, "iris,l1_kb=64,nodes=1") &&
          sc.idle_poll == 1);
    CHECK(parse("model=iris model=none job=gauss") == 0 && sc.model[0] == 0); /* last one wins */
    CHECK(parse("idle=poll idle=auto job=gauss") == 0 && sc.idle_poll == 0);
    CHECK(fails("model= job=gauss", "model=", "model=<profile>"));
    CHECK(fails("model=Iris job=gauss", "model=Iris", "model=<profile>"));
    CHECK(fails("model=iris;rm job=gauss", "model=iris;rm", "model=<profile>"));
    char big[SCEN_MODEL_LEN + 32] = "model=";
    memset(big + 6, 'a', SCEN_MODEL_LEN);
    strcat(big, " job=gauss");
    CHECK(parse(big) != 0 && strstr(err, "model=<profile>"));
    CHECK(fails("idle=halt job=gauss", "idle=halt", "idle=auto"));
    CHECK(fails("idle= job=gauss", "idle=", "idle=auto"));
}

/* perturb=<seed>[,depth=<d>] (kernel/perturb.h): only with clock=virtual, wherever either token stands */
static void test_perturb_token(void)
{
    CHECK(parse("job=gauss") == 0 && sc.perturb == 0);
    CHECK(parse("clock=virtual perturb=7 job=gauss") == 0 && sc.perturb && sc.perturb_seed == 7 &&
          sc.perturb_depth == SCEN_DEFAULT_PERTURB_DEPTH);
    CHECK(parse("perturb=9,depth=5 job=gauss clock=virtual") == 0 && sc.perturb_seed == 9 && sc.perturb_depth == 5);
    CHECK(fails("perturb=7 job=gauss", "perturb=7", "clock=virtual"));
    CHECK(fails("clock=virtual perturb=x job=gauss", "perturb=x", "perturb=<seed>"));
    CHECK(fails("clock=virtual perturb=1,depth=9 job=gauss", "perturb=1,depth=9", "depth=<1..8>"));
    CHECK(fails("clock=virtual perturb=1,depth=0 job=gauss", "perturb=1,depth=0", "depth=<1..8>"));
    CHECK(fails("clock=virtual perturb=1,deep=2 job=gauss", "perturb=1,deep=2", "depth=<1..8>"));
    CHECK(fails("clock=virtual perturb= job=gauss", "perturb=", "perturb=<seed>"));
}

/* Numeric options and a policy's per-job keys (issue 25): checked against the chosen policy like its
   options, defaults filled in, canonical in pargs for the RESULT line. */
static void test_policy_numbers_and_job_keys(void)
{
    struct scen_env saved = env;
    env.npolicies = 3;
    CHECK(parse("policy=lottery job=gauss") == 0 && sc.popt[0] == 1 && sc.popt[1] == 0);
    CHECK(sc.jobs[0].pkey[0] == 10 && sc.jobs[0].pkey[1] == 0 && !strcmp(sc.jobs[0].pargs, "tickets=10 class=batch"));
    CHECK(parse("policy=lottery turn=64 bias=-20 job=gauss:tickets=3,n=64 job=gauss:class=interactive,tickets=10000")
          == 0);
    CHECK(sc.popt[0] == 64 && sc.popt[1] == -20);
    CHECK(sc.jobs[0].pkey[0] == 3 && !strcmp(sc.jobs[0].args, "n=64,sync=barrier,barrier=block"));
    CHECK(!strcmp(sc.jobs[0].pargs, "tickets=3 class=batch"));
    CHECK(sc.jobs[1].pkey[0] == 10000 && sc.jobs[1].pkey[1] == 1);
    CHECK(!strcmp(sc.jobs[1].pargs, "tickets=10000 class=interactive"));
    CHECK(parse("job=gauss:tickets=5 policy=lottery") == 0 && sc.jobs[0].pkey[0] == 5);   /* any order */
    CHECK(fails("policy=lottery turn=0 job=gauss", "turn=0", "expected a whole number from 1 to 64"));
    CHECK(fails("policy=lottery turn=65 job=gauss", "turn=65", "from 1 to 64"));
    CHECK(fails("policy=lottery turn=1x job=gauss", "turn=1x", "from 1 to 64"));
    CHECK(fails("policy=lottery bias=-21 job=gauss", "bias=-21", "from -20 to 19"));
    CHECK(fails("policy=lottery bias=- job=gauss", "bias=-", "from -20 to 19"));
    CHECK(fails("policy=lottery bias=--1 job=gauss", "bias=--1", "from -20 to 19"));
    CHECK(fails("policy=lottery bias=9223372036854775808 job=gauss", "bias=9223372036854775808", "from -20 to 19"));
    CHECK(fails("policy=lottery job=gauss:tickets=0", "job=gauss:tickets=0", "tickets=0, expected a whole number "
                "from 1 to 10000"));
    CHECK(fails("policy=lottery job=gauss:class=fast", "job=gauss:class=fast", "expected batch or interactive"));
    CHECK(fails("policy=lottery job=gauss:tickets=2,tickets=3", "tickets=2,tickets=3", "tickets given twice"));
    CHECK(fails("job=gauss:tickets=3", "job=gauss:tickets=3", "tickets= is a job key of policy lottery, not of "
                "timeslice"));
    CHECK(fails("policy=gang job=hog:tickets=3", "job=hog:tickets=3", "not of gang"));
    CHECK(fails("policy=lottery job=gauss:tikets=3", "job=gauss:tikets=3", "tickets (policy lottery)"));
    CHECK(fails("policy=lottery tickets=3 job=gauss", "tickets=3", "give it in a job, like job=<app>:tickets=3"));
    CHECK(fails("policy=gang turn=2 job=gauss", "turn=2", "an option of policy lottery, not of gang"));
    CHECK(parse("policy=timeslice job=gauss") == 0 && sc.jobs[0].pargs[0] == 0);   /* no keys: nothing on RESULT */
    env = saved;
}

/* A policy's job key named like an app's key: refused, naming both, rather than silently given to one. */
static void test_job_key_clash(void)
{
    static const struct scen_option n_key[] = { { .name = "n", .def = 1, .min = 1, .max = 9 } };
    static const struct scen_policy clash[] = { { "timeslice", ts_opts, 1, n_key, 1 } };
    struct scen_env saved = env;
    env.policy_table = clash;
    CHECK(fails("job=gauss:n=64", "job=gauss:n=64", "'n' is a key of gauss and a job key of policy timeslice"));
    CHECK(parse("job=hog:n=3") == 0 && sc.jobs[0].pkey[0] == 3);    /* hog has no n: it is the policy's */
    env = saved;
}

/* The limits a policy's declarations have (scenario.h): 8 options, 23-character names, 63-character choices. */
static void test_policy_declaration_limits(void)
{
    static struct scen_option many[SCEN_MAX_OPTS];
    static const char long_choices[] = "aaaaaaaaaaaaaaa|bbbbbbbbbbbbbbb|ccccccccccccccc|ddddddddddddddd";
    _Static_assert(sizeof long_choices == sizeof many[0].choices, "63 characters of choices");
    for (int i = 0; i < SCEN_MAX_OPTS; i++) {
        memcpy(many[i].name, "option_0_with_a_long_nm", 24);                        /* 23 characters */
        many[i].name[7] = (char)('0' + i);
        memcpy(many[i].choices, long_choices, sizeof long_choices);
    }
    CHECK(SCEN_MAX_OPTS == 8 && strlen(many[7].name) == 23);
    const struct scen_policy wide[] = { { "wide", many, SCEN_MAX_OPTS, 0, 0 } };
    struct scen_env saved = env;
    env.policy_table = wide;
    CHECK(parse("option_7_with_a_long_nm=ddddddddddddddd option_0_with_a_long_nm=bbbbbbbbbbbbbbb job=hog") == 0);
    CHECK(sc.popt[7] == 3 && sc.popt[0] == 1 && sc.popt[3] == 0);
    CHECK(fails("option_5_with_a_long_nm=e job=hog", "option_5_with_a_long_nm=e",
                "expected aaaaaaaaaaaaaaa, bbbbbbbbbbbbbbb, ccccccccccccccc or ddddddddddddddd"));
    env = saved;
}

int main(void)
{
    test_model_tokens();
    test_perturb_token();
    test_policy_declaration_limits();
    test_policy_options();
    test_policy_numbers_and_job_keys();
    test_job_key_clash();
    test_memory_limits();
    test_defaults();
    test_full();
    test_bad_tokens();
    test_limits();
    test_arg_lookup();
    test_found_by_fuzzing();
    return check_done("test_scenario");
}
