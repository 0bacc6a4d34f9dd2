/* test_host_spin.c - the host backend's crowding estimate (lib/platform/host_spin.c) as pure logic: the CPU count
 * from an affinity mask, the runnable count's up/down balance (also from many threads at once, under
 * TSan in the _tsan build), and crowded = runnable > cpus at its edges. */
#include <pthread.h>
#include <stdint.h>
#include "platform/host_spin.h"
#include "check.h"

static void
test_cpus(void)
{
    CHECK(host_crowd_cpus(1, 2, 8) == 2);       /* the mask wins over the online count */
    CHECK(host_crowd_cpus(1, 1, 64) == 1);
    CHECK(host_crowd_cpus(0, 0, 4) == 4);       /* no mask: every online CPU */
    CHECK(host_crowd_cpus(0, 0, -1) == 1);      /* sysconf failed: at least one */
    CHECK(host_crowd_cpus(1, 0, 4) == 1);       /* an empty mask cannot run anything: still one */
    CHECK(host_crowd_cpus(1, 1 << 20, 4) == 0xffff);
}

static void
test_edges(void)
{
    struct host_crowd c = { 0, 0 };

    host_crowd_init(&c, 2);
    CHECK(!host_crowded(&c));
    host_crowd_up(&c);
    host_crowd_up(&c);
    CHECK(!host_crowded(&c));                   /* 2 runnable on 2 CPUs: everyone can run */
    host_crowd_up(&c);
    CHECK(host_crowded(&c));                    /* 3 on 2 */
    host_crowd_down(&c);                        /* one goes to sleep in a futex wait */
    CHECK(!host_crowded(&c));
    host_crowd_init(&c, 1);                     /* a new job on a narrower mask: the count stays */
    CHECK(c.runnable == 2 && host_crowded(&c));
    host_crowd_init(&c, 0);                     /* never fewer than one CPU */
    CHECK(c.cpus == 1);
    host_crowd_down(&c);
    host_crowd_down(&c);
    CHECK(c.runnable == 0 && !host_crowded(&c));
}

#define NT    8
#define ROUND 20000

static struct host_crowd shared;
static uint32_t seen_crowded;

/* A process's life as host_sys.c sees it: up at start, down/up around each futex wait, down at exit. */
static void *
life(void *arg)
{
    (void)arg;
    host_crowd_up(&shared);
    for (int i = 0; i < ROUND; i++) {
        host_crowd_down(&shared);
        host_crowd_up(&shared);
        if (host_crowded(&shared))
            __atomic_store_n(&seen_crowded, 1, __ATOMIC_RELAXED);
    }
    host_crowd_down(&shared);
    return NULL;
}

static void
test_balance(void)
{
    pthread_t t[NT];

    host_crowd_init(&shared, 1);
    host_crowd_up(&shared);                     /* the main thread stays runnable throughout */
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, life, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    CHECK(shared.runnable == 1);
    CHECK(!host_crowded(&shared));
    /* each thread is runnable (>= 1 besides main's) after its first up, before its last down */
    CHECK(seen_crowded == 1);
}

int
main(void)
{
    test_cpus();
    test_edges();
    test_balance();
    return check_done("test_host_spin");
}
