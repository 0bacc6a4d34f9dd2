"""policy=adaptive on random mixes in the simulator, checked with the regime invariants (regime_checks.py).

Each case draws, from its own seed, a hart count the other tests do not use, two to four jobs of the simulator's
apps (its BOOT apps=, so a new modelled app is in with no edit) arriving at staggered times, and some of the
policy's options (window, confirm, prior, margin, decisive). An app runs its defaults, with adapt=no where the
simulator models only that under an allotting policy (it says so: each app is probed alone first); the apps this
test knows run the work in WORK and a variant drawn for them. Simulated time is deterministic, so a failure
reproduces from the case's seed. What such mixes found: the trace reader took a preemption, merged after the run
on another hart that it made possible (one tick, records ordered by hart), for a process waiting beside its
running partners (gangcheck.waits: cases 8 and 26 failed before its fix).
"""
from __future__ import annotations

import functools
import random

import pytest

from schedlab import trace as tr
from schedlab.sim import sim_boot
from helpers import assert_all_ok
from regime_checks import (QUANTUM_MS, assert_filler_served, assert_gang_rows_coscheduled, assert_partitions_disjoint,
                           assert_regimes_exact, regimes)

HARTS = [3, 5, 6, 7, 12, 16]
OPTIONS = {"window": [1, 2, 4, 8], "confirm": [1, 2, 3], "prior": ["part", "gang"], "margin": [0, 25, 100],
           "decisive": [0, 2, 8]}
#: Work for the apps this test knows, a job living for several quanta (windows end, shares shrink under running
#: jobs, jobs move), and variants drawn on top of it; an app it does not know runs its defaults.
WORK = {"synth": "grain=2000,var=1000,iters=1500", "oddeven": "n=4096", "gauss": "n=128,mem=8M", "knary": "h=8"}
VARIANTS = {"synth": ["barrier=spin", "barrier=block", "barrier=twophase", "adapt=no", "barrier=spin,adapt=no"],
            "oddeven": ["barrier=spin", "barrier=block,adapt=no"], "gauss": ["barrier=spin", "variant=fine,adapt=no"]}


@functools.lru_cache(maxsize=None)
def runnable_specs() -> tuple[str, ...]:
    """Each modelled app's spec that the simulator runs under policy=adaptive at 2 harts and that verifies its
    answer: the app with its defaults, or with adapt=no; an app it runs neither way (chaos, which deadlocks by
    design in the modes the simulator models) is left out."""
    apps = sim_boot(1, "job=synth:procs=1,iters=1").boot["apps"]
    specs = []
    for app in apps:
        for keys in ("", "adapt=no"):
            run = sim_boot(2, f"policy=adaptive job={app}" + (f":{keys}" if keys else ""))
            if run.exit_code == 0 and run.results and run.results[0]["check"] == "ok":
                specs.append(f"{app}:{keys}" if keys else app)
                break
    return tuple(specs)


def random_case(seed: int) -> tuple[int, str]:
    r = random.Random(seed)
    specs = runnable_specs()
    jobs = []
    for _ in range(r.randint(2, 4)):
        app, _, keys = r.choice(specs).partition(":")
        if app in WORK:
            keys = ",".join([WORK[app], r.choice(VARIANTS.get(app, [""]))]).strip(",")
        keys = ",".join(k for k in (keys, f"at={r.choice([0, 0, 1, 3, 7, 15])}ms") if k)
        jobs.append(f"job={app}:{keys}")
    options = [f"{k}={r.choice(v)}" for k, v in r.sample(sorted(OPTIONS.items()), r.randint(0, 3))]
    return r.choice(HARTS), " ".join([f"seed={seed} policy=adaptive trace=on quantum={QUANTUM_MS}ms", *options, *jobs])


def test_the_cases_draw_from_the_simulators_apps():
    specs = runnable_specs()
    assert {"synth", "hog", "knary"} <= {s.partition(":")[0] for s in specs}, specs
    harts, bootargs = random_case(1)
    assert harts in HARTS and random_case(1) == (harts, bootargs)  # a case is its seed's


@pytest.mark.parametrize("seed", range(1, 41))
def test_random_mixes_keep_the_regime_invariants(seed):
    harts, bootargs = random_case(seed)
    run = sim_boot(harts, bootargs)
    assert_all_ok(run)
    trace = tr.parse_trace(run.console)
    assert trace.complete and not any(trace.dropped.values()), bootargs
    timeline = regimes(trace)
    assert_gang_rows_coscheduled(trace, timeline, run.results)
    assert_partitions_disjoint(trace, timeline, harts, run.results)
    assert_filler_served(trace, timeline, harts)
    assert_regimes_exact(run.results, timeline)
