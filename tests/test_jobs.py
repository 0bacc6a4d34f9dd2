"""Jobs and processes under timeslice: more processes than harts, staggered arrivals, a faulting job next to
healthy ones, wakeboost, and the invariants of the RESULT/SUMMARY lines."""

import pytest

from helpers import assert_all_ok
from schedule_checks import timeslice_spreads_each_job_over_the_harts


def check_result_invariants(run):
    for r in run.results:
        assert r["arrive_us"] <= r["start_us"] <= r["end_us"], r
        assert r["elapsed_us"] == r["end_us"] - r["start_us"], r
        assert r["harts"] == run.summary["harts"]
    assert run.summary["makespan_us"] >= max(r["end_us"] for r in run.results)


@pytest.mark.parametrize("bootargs", [
    "quantum=1ms job=gauss:n=64,procs=5,barrier=block",
    "quantum=1ms job=gauss:n=64,procs=3,barrier=spin",
    "quantum=1ms job=oddeven:n=200,procs=7,barrier=block",
    "quantum=1ms job=synth:grain=100,iters=100,procs=4,barrier=spin",
])
def test_more_processes_than_harts(boot, bootargs):
    run = boot(2, bootargs, timeout=180)
    assert_all_ok(run)
    check_result_invariants(run)


@pytest.mark.parametrize("harts,widths", [(2, (2, 2, 2)), (3, (2, 3, 1, 4))])
def test_timeslice_spreads_each_job_over_the_harts(boot, harts, widths):
    timeslice_spreads_each_job_over_the_harts(boot, harts, widths)


def test_staggered_arrivals(boot):
    run = boot(2, "job=gauss:n=64 job=oddeven:n=256,at=150ms,barrier=block "
                  "job=synth:grain=100,iters=50,at=300ms,barrier=block", timeout=120)
    assert_all_ok(run)
    check_result_invariants(run)
    by_app = {r["app"]: r for r in run.results}
    assert by_app["gauss"]["arrive_us"] < 50_000
    assert by_app["oddeven"]["arrive_us"] >= 150_000
    assert by_app["synth"]["arrive_us"] >= 300_000


@pytest.mark.parametrize("kind", ["load", "store", "exec", "illegal"])
def test_faulting_job_is_killed_and_the_others_go_on(boot, kind):
    run = boot(2, f"job=gauss:n=64,barrier=block job=fault:kind={kind},procs=2 job=oddeven:n=200,barrier=block",
               timeout=120)
    assert not run.timed_out and not run.panics
    assert run.exit_code == 1
    by_app = {r["app"]: r for r in run.results}
    assert by_app["fault"]["check"] == "FAIL"
    assert by_app["fault"]["reason"].endswith(("fault", "instruction")), by_app["fault"]
    assert by_app["gauss"]["check"] == "ok" and by_app["oddeven"]["check"] == "ok"
    assert run.summary["failed"] == 1 and run.summary["jobs"] == 3
    assert any("fault" in e and "killed" in e for e in run.errors)


def test_wakeboost_keeps_blocking_jobs_correct(boot):
    run = boot(2, "wakeboost=on job=oddeven:n=256,barrier=block job=hog:procs=2", timeout=120)
    assert_all_ok(run)


def test_seed_changes_the_data_but_not_the_verdict(boot):
    a = boot(1, "seed=7 job=gauss:n=32,procs=1", timeout=60)
    b = boot(1, "seed=8 job=gauss:n=32,procs=1", timeout=60)
    assert_all_ok(a)
    assert_all_ok(b)
