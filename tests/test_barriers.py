"""Barrier shapes x wait kinds, and the loop schedulers, inside the apps on QEMU under the default policy.

Every shape (central, tree, combination) with every wait kind (spin, block, twophase, adaptive) runs synth
at CPUS=1, 2 and 4 - all twelve as concurrent jobs of one boot, with more processes than harts (so
processes share harts and get preempted while others wait, and the combination barrier has groups of
several processes) - and must pass its own checks (lockstep after every barrier, the work). gauss and
oddeven then run every loop scheduler (sched=) with a few shape/wait pairs, check their answers, and
report the grab counts the schedulers' definitions give.
"""

import pytest

from helpers import assert_all_ok

SHAPES = ["central", "tree", "combination"]
WAITS = ["spin", "block", "twophase", "adaptive"]
SCHEDS = ["static", "ss", "gss", "factoring", "trapezoid", "afs"]

#: processes per job at each harts count: more than the harts; 6 gives the 4-ary tree a second level
PROCS = {1: 3, 2: 3, 4: 6}


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_every_shape_with_every_wait_under_timeslice(boot, cpus):
    procs = PROCS[cpus]
    jobs = [f"job=synth:procs={procs},grain=100,var=300,iters=150,barrier={w},shape={s}"
            for s in SHAPES for w in WAITS]
    run = boot(cpus, ["quantum=1ms", "timeout=100s", *jobs], timeout=150)
    assert_all_ok(run)
    seen = {(r["shape"], r["barrier"]) for r in run.results}
    assert seen == {(s, w) for s in SHAPES for w in WAITS}
    for r in run.results:
        assert r["procs"] == procs and r["badstep"] == 0 and r["badwork"] == 0
        if r["barrier"] == "spin":
            assert r["sleeps"] == 0            # spinning never sleeps


def test_defaults_stay_spin_central_static(boot):
    run = boot(2, "job=gauss:n=40 job=oddeven:n=64 job=synth:iters=20", timeout=60)
    assert_all_ok(run)
    for r in run.results:
        assert (r["barrier"], r["shape"]) == ("spin", "central")
        if r["app"] != "synth":
            assert r["sched"] == "static" and r["remote"] == 0


def test_loop_schedulers_in_gauss_and_oddeven(boot):
    n, m = 64, 300
    jobs = [f"job=gauss:n={n},procs=2,sched={s}" for s in SCHEDS]
    jobs += [f"job=oddeven:n={m},procs=2,sched={s}" for s in SCHEDS]
    jobs += [f"job=gauss:n={n},procs=3,sched=afs,shape=tree,barrier=twophase",
             f"job=oddeven:n={m},procs=3,sched=gss,shape=combination,barrier=adaptive",
             f"job=gauss:n={n},procs=3,sync=cond,barrier=adaptive,shape=tree"]
    run = boot(2, ["quantum=1ms", "timeout=100s", *jobs], timeout=150)
    assert_all_ok(run)
    gauss_rows = n * (n - 1) // 2                      # rows below the pivot, summed over the n-1 steps
    oddeven_pairs = sum((m - p % 2) // 2 for p in range(m))
    for r in run.results:
        if r.get("procs") != 2:
            continue
        total = gauss_rows if r["app"] == "gauss" else oddeven_pairs
        steps = n - 1 if r["app"] == "gauss" else m
        if r["sched"] == "static":
            assert r["remote"] == 0 and r["grabs"] <= 2 * steps
        elif r["sched"] == "ss":
            assert r["grabs"] == total and r["remote"] == total     # one iteration per grab
        elif r["sched"] == "afs":
            assert r["grabs"] >= 2 * steps - 1                       # at least one local grab each
        else:
            assert steps <= r["grabs"] < total and r["remote"] == r["grabs"]


def test_sched_needs_sync_barrier(boot):
    run = boot(1, "job=gauss:n=16,sync=cond,sched=gss", timeout=60)
    assert run.exit_code == 1
    assert run.results[0]["check"] == "FAIL"
    assert any(line.startswith("ERROR gauss:") and
               "sched=gss needs sync=barrier" in line for line in run.output[1])
    # the app's ERROR is its output; the kernel adds one line of its own: the job ended with a status
    assert len(run.errors) == 1 and run.errors[0].startswith("ERROR job 1 (gauss) ended") and "status 1" in run.errors[0]
