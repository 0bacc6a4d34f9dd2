/* Unit tests of a batch's scenarios in the bootargs (kernel/batch.c, batch_scenario_at and batch_has_next):
   each scenario's tokens come out whole with single spaces, "then" only as a token of its own ends one, the
   offset of the next is just past that "then", a trailing "then" ends the batch, an empty scenario and one too
   long for the buffer are refused, and a scenario comes out the same whether its "then" ends the bootargs or
   more follows (a prefix boots alike). */
#include <string.h>
#include "check.h"
#include "batch.h"

static int scenario(const char *args, size_t at, char *buf, size_t len, size_t *next)
{
    return batch_scenario_at(args, at, buf, len, next);
}

int main(void)
{
    char buf[64];
    size_t next = 99;
    /* one scenario: no "then", next 0, the tokens with single spaces */
    CHECK(scenario("  policy=gang\tjob=synth  ", 0, buf, sizeof buf, &next) == 0);
    CHECK(!strcmp(buf, "policy=gang job=synth") && next == 0);
    /* a batch: each scenario from the offset the previous one gave */
    const char *b = "policy=gang job=a then  policy=global job=thenx job=b then seed=2 then";
    CHECK(scenario(b, 0, buf, sizeof buf, &next) == 0 && !strcmp(buf, "policy=gang job=a"));
    CHECK(next == strlen("policy=gang job=a then") && batch_has_next(b, next));
    CHECK(scenario(b, next, buf, sizeof buf, &next) == 0 && !strcmp(buf, "policy=global job=thenx job=b"));
    CHECK(batch_has_next(b, next));
    CHECK(scenario(b, next, buf, sizeof buf, &next) == 0 && !strcmp(buf, "seed=2"));
    CHECK(next == strlen(b) && !batch_has_next(b, next)); /* a trailing "then" ends the batch */
    CHECK(!batch_has_next("a then   ", 6) && batch_has_next("a then b", 6) && !batch_has_next("a", 0));
    /* empty scenarios: "then" first, two in a row; an empty bootargs is no batch and no error */
    CHECK(scenario("then a", 0, buf, sizeof buf, &next) == -2);
    CHECK(scenario("a then then b", 6, buf, sizeof buf, &next) == -2);
    CHECK(scenario("", 0, buf, sizeof buf, &next) == 0 && buf[0] == 0 && next == 0);
    /* too long for the buffer: refused, never written past it */
    char small[8];
    CHECK(scenario("abcd efgh then x", 0, small, sizeof small, &next) == -1);
    CHECK(scenario("abc def then x", 0, small, sizeof small, &next) == 0 && !strcmp(small, "abc def"));
    /* a "then" at the very end of the bootargs (a batch's prefix) ends its scenario as one before more text */
    size_t more = 0;
    CHECK(scenario("job=a then", 0, buf, sizeof buf, &next) == 0 && next == 10 && !strcmp(buf, "job=a"));
    CHECK(scenario("job=a then job=b", 0, buf, sizeof buf, &more) == 0 && more == next && !strcmp(buf, "job=a"));
    return check_done("test_batch");
}
