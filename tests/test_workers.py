"""Adaptive workers (lib/workers/workers.c, lib/threads/procctl.c) and policy=global under QEMU.

The barrier apps run their P workers as user-level threads, worker i pinned to process i at start.
Under partition with adapt=yes (now the default of every bundled app) the processes the allotment no
longer covers suspend at a safe point and their workers run on the processes that remain; when harts
come back the processes resume and the workers go home. These tests change allotments many times
(short jobs arriving and leaving next to an adaptive job) and check correctness and invariants only:
every answer verified, processes really suspended and resumed, nobody lost. policy=global is checked
from the schedule trace: processes migrate, never run on two harts at once, and a ready process waits
for a bounded number of dispatches (one FIFO for all harts).
"""

import pytest

from helpers import assert_all_ok
from schedule_checks import global_migrates_never_doubles_and_serves_fifo

SHAPES = ["central", "tree", "combination"]
KINDS = ["spin", "block", "twophase", "adaptive"]


def churn(first_ms=5, count=4, gap_ms=50):
    """Short jobs (a few ms each) arriving one after another, far enough apart not to overlap: each arrival
    shrinks the other jobs' allotments and each departure grows them again."""
    return [f"job=synth:procs=1,iters=100,grain=300,barrier=block,at={first_ms + i * gap_ms}ms" for i in range(count)]


def adaptive_result(run, app):
    """The RESULT of the one job of `app` with more than one process (the churn jobs have one)."""
    (r,) = [r for r in run.results if r["app"] == app and r["procs"] > 1]
    assert r["adapt"] == "yes", r
    return r


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_synth_workers_follow_allotment_every_shape_and_kind(boot, shape, kind):
    # deterministic mode: which churn jobs arrive while synth runs no longer depends on the host's load
    run = boot(2, ["policy=partition", "quantum=2ms", "timeout=120s",
                   f"job=synth:procs=3,iters=2500,grain=300,var=300,barrier={kind},shape={shape}", *churn()],
               timeout=180, deterministic=True)
    assert_all_ok(run)
    r = adaptive_result(run, "synth")
    assert r["badwork"] == 0 and r["badstep"] == 0
    # 3 processes on 2 harts: one suspends at once; the arrivals shrink it further and their departures grow it
    assert r["suspends"] >= 2 and r["resumes"] >= 1, r


@pytest.mark.parametrize("cpus", [1, 2, 3, 4])
def test_coarse_apps_follow_allotment_at_every_width(boot, cpus):
    run = boot(cpus, ["policy=partition", "quantum=2ms", "timeout=120s",
                      f"job=gauss:n=160,procs={cpus + 1},sync=barrier,barrier=twophase,shape=tree",
                      f"job=gauss:n=160,procs={cpus + 1},sync=cond,barrier=block,at=1ms",
                      f"job=oddeven:n=3000,procs={cpus + 1},barrier=adaptive,shape=combination,at=2ms",
                      *churn(first_ms=3, count=3)], timeout=240)
    assert_all_ok(run)
    for r in run.results:
        if r["app"] in ("gauss", "oddeven"):
            assert r["adapt"] == "yes" and r["suspends"] >= 1, r     # more workers than harts: someone suspends


def test_suspended_process_with_every_worker_blocked(boot):
    """Four workers blocking at every barrier while the allotment goes 2 -> 1 -> 2 several times: the
    suspended processes' workers are parked in a wait when their process leaves; each wake-up must
    find them a running process (no lost wake-up, no deadlock: the watchdog would fire)."""
    run = boot(2, ["policy=partition", "quantum=1ms", "timeout=120s",
                   "job=synth:procs=4,iters=3000,grain=100,var=2000,barrier=block",
                   *churn(first_ms=1, count=6, gap_ms=30)], timeout=180)
    assert_all_ok(run)
    r = adaptive_result(run, "synth")
    assert r["suspends"] >= 3 and r["resumes"] >= 1, r


def test_hog_adapts_and_keeps_its_checksums(boot):
    run = boot(2, "policy=partition job=hog:procs=2 job=synth:procs=2,iters=1500,at=5ms", timeout=120)
    assert_all_ok(run)
    (hog,) = [r for r in run.results if r["app"] == "hog"]
    assert hog["bad"] == 0 and hog["suspends"] >= 1


@pytest.mark.parametrize("policy", ["timeslice", "gang", "global"])
def test_no_process_control_outside_partition(boot, policy):
    """Only a policy that allots harts makes a job adaptive: elsewhere one worker per process, nobody
    suspends, and the RESULT line carries no process-control keys."""
    run = boot(2, f"policy={policy} job=synth:procs=3,iters=100 job=oddeven:n=500,procs=2,barrier=block",
               timeout=120)
    assert_all_ok(run)
    assert all("suspends" not in r for r in run.results)


def test_adapt_no_keeps_fixed_processes(boot):
    # 100 iterations outlast the hog's arrival at 2 ms many times over (the partition shrinks under the job)
    run = boot(2, "policy=partition job=synth:procs=3,iters=100,adapt=no job=hog:procs=1,at=2ms", timeout=120)
    assert_all_ok(run)
    (synth,) = [r for r in run.results if r["app"] == "synth"]
    assert synth["adapt"] == "no" and "suspends" not in synth


# ---------------------------------------------------------------- policy=global

def test_global_is_built_and_listed(boot):
    run = boot(1, "policy=global job=synth:iters=10")
    assert_all_ok(run)
    assert "global" in run.boot["policies"]


def test_global_migrates_never_doubles_and_serves_fifo(boot):
    global_migrates_never_doubles_and_serves_fifo(boot)
