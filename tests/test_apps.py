"""Every bundled app computes a verified answer under timeslice on 1, 2 and 4 harts, with spinning and
blocking waits; apps check their own results (check=ok), the kernel reports them."""

import pytest

from helpers import APPS, assert_all_ok


@pytest.mark.parametrize("cpus", [1, 2, 4])
@pytest.mark.parametrize("name", list(APPS))
def test_app_correct_under_timeslice(boot, name, cpus):
    run = boot(cpus, "quantum=2ms " + APPS[name], timeout=180)
    assert_all_ok(run)
    for r in run.results:
        assert r["policy"] == "timeslice" and r["procs"] == cpus


def test_app_keys_and_defaults_reach_the_result_line(boot):
    run = boot(2, "job=gauss:n=40,sync=cond,procs=1", timeout=60)
    assert_all_ok(run)
    r = run.results[0]
    assert (r["n"], r["variant"], r["sync"], r["barrier"], r["procs"]) == (40, "coarse", "cond", "spin", 1)


def test_hog_reports_the_cpu_it_got(boot):
    run = boot(2, "quantum=2ms job=oddeven:n=256,barrier=block job=hog:procs=2", timeout=120)
    assert_all_ok(run)
    hog = next(r for r in run.results if r["app"] == "hog")
    fg = next(r for r in run.results if r["app"] == "oddeven")
    assert hog["cpu_us"] > 0 and hog["work"] > 0
    assert hog["end_us"] >= fg["end_us"]          # it ran until the foreground ended
