"""Markatos chapter 5's applications (apps/sor.c, apps/tclosure.c, apps/adjoint.c) on QEMU, at tiny sizes.

Each app checks its own answer (sor and adjoint bitwise against a sequential recomputation, tclosure against
a breadth-first search of its input): here under timeslice and under partition (beside a hog, so process
control moves the workers), under the machine model (iris), and with every loop scheduler. The grab counts
an app reports (grabs= summed over its loops= parallel loops, remote=) must be the host simulation's
(build/host/loopsched, `make host`) for the same iterations per loop and processes: the count depends on N
and P only, for every scheduler; which grabs are remote is fixed too except for AFS and MOD-FACTORING,
whose local/remote split follows the timing. Correctness and counts only, never a timing.
"""


import pytest

from helpers import assert_all_ok, host_grabs


SCHEDS = ["static", "ss", "gss", "factoring", "trapezoid", "afs", "mod-factoring", "best-static"]
#: the schedulers whose local/remote split depends on who comes first
TIMING_SPLIT = {"afs", "mod-factoring"}

#: a tiny scenario per app (keys after job=<app>:)
TINY = {
    "sor": "n=24,iters=3",
    "tclosure": "n=40",
    "adjoint": "n=12",
}


def loop_shape(r):
    """(iterations per loop, loops) of one RESULT, from the app's own keys: what the host tool is run with."""
    if r["app"] == "sor":
        return r["n"] - 2, 2 * r["iters"]
    if r["app"] == "tclosure":
        return r["n"], r["n"]
    return r["n"] * r["n"], 1


def assert_counts(r):
    n, loops = loop_shape(r)
    assert r["loops"] == loops, r
    grabs, remote = host_grabs(r["sched"], n, r["procs"])
    assert r["grabs"] == loops * grabs, (r, grabs)
    if r["sched"] in TIMING_SPLIT:
        assert 0 <= r["remote"] <= r["grabs"], r
        if r["procs"] == 1:
            assert r["remote"] == 0, r
    else:
        assert r["remote"] == loops * remote, (r, remote)


def assert_answer(r):
    assert r["check"] == "ok", r
    if r["app"] == "tclosure":
        assert r["bad"] == 0 and r["closure"] >= r["edges"] > 0, r
    else:
        assert r["diff"] == 0, r


@pytest.mark.parametrize("app", list(TINY))
@pytest.mark.parametrize("policy", ["timeslice", "partition"])
def test_answer_under_two_policies(boot, app, policy):
    """Alone, and beside a hog (under partition the job then holds one hart: its two workers share it)."""
    jobs = [f"job={app}:{TINY[app]},procs=2,sched=afs,barrier=block",
            f"job={app}:{TINY[app]},procs=2,sched=gss,barrier=block job=hog:procs=2"]
    for scenario in jobs:
        run = boot(2, f"policy={policy} quantum=2ms timeout=100s {scenario}", timeout=150)
        assert_all_ok(run)
        r = next(r for r in run.results if r["app"] == app)
        assert r["policy"] == policy
        assert_answer(r)
        assert_counts(r)


@pytest.mark.parametrize("app", list(TINY))
def test_answer_under_the_iris_model(boot, app):
    run = boot(2, f"job={app}:{TINY[app]},procs=2,sched=factoring", model="iris")
    assert_all_ok(run)
    assert_answer(run.results[0])
    assert_counts(run.results[0])
    assert run.parsed.model_end is not None and run.parsed.model_jobs[1]["accesses"] > 0, run.console[-2000:]


@pytest.mark.parametrize("procs", [2, 3])
@pytest.mark.parametrize("app", list(TINY))
def test_every_loop_scheduler_answers_and_counts_as_the_host_tool(boot, app, procs):
    """Every scheduler as a job of one boot (blocking barriers: more processes than harts)."""
    extra = {"tclosure": ["", ",graph=random,density=10"], "adjoint": ["", ",order=reverse"]}.get(app, [""])
    jobs = [f"job={app}:{TINY[app]}{x},procs={procs},sched={s},barrier=block" for s in SCHEDS for x in extra]
    run = boot(2, ["quantum=2ms", "timeout=200s", *jobs], timeout=250)
    assert_all_ok(run)
    assert sorted(r["sched"] for r in run.results) == sorted(SCHEDS * len(extra))
    for r in run.results:
        assert r["procs"] == procs
        assert_answer(r)
        assert_counts(r)


@pytest.mark.parametrize("sched", ["mod-factoring", "factoring"])
def test_gauss_coarse_takes_mod_factoring(boot, sched):
    """gauss coarse deals rows [k+1, n) of step k from the scheduler (the KSR-1 table has MOD-FACTORING): its
    grabs are the host tool's summed over the steps."""
    n, procs = 24, 2
    run = boot(2, f"job=gauss:n={n},procs={procs},sched={sched},barrier=block", timeout=120)
    assert_all_ok(run)
    r = run.results[0]
    steps = [host_grabs(sched, n - 1 - k, procs) for k in range(n - 1)]
    assert r["grabs"] == sum(g for g, _ in steps), r
    if sched == "factoring":
        assert r["remote"] == r["grabs"], r
    else:
        assert 0 <= r["remote"] <= r["grabs"], r
