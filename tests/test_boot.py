"""Boot, the device tree, and bad input: the kernel comes up on any number of harts and refuses every bad
scenario token with one ERROR line and a non-zero exit, within seconds."""

import pytest

from helpers import assert_all_ok

TINY = "job=synth:grain=10,iters=20"


@pytest.mark.parametrize("cpus", [1, 2, 3, 4, 5, 8, 16])
def test_boots_on_n_harts(boot, cpus):
    run = boot(cpus, TINY, timeout=120)
    assert_all_ok(run)
    assert run.boot["harts"] == cpus
    assert run.summary["harts"] == cpus
    assert 0 <= run.boot["boot_hart"] < cpus
    assert run.boot["background"] == ["hog"]          # the apps that declare SL_APP_BACKGROUND


def test_boots_on_64_harts(boot):
    run = boot(64, "job=synth:grain=10,iters=5,procs=4", timeout=240)
    assert_all_ok(run)
    assert run.boot["harts"] == 64


def test_more_harts_than_supported_is_a_clear_error(boot):
    run = boot(65, TINY, timeout=240)
    assert run.exit_code not in (0, None)
    assert len(run.errors) == 1 and "at most 64" in run.errors[0]


def test_numa_nodes_from_the_device_tree(boot):
    numa = ("-object memory-backend-ram,id=m0,size=128M -object memory-backend-ram,id=m1,size=128M "
            "-numa node,memdev=m0,cpus=0-1,nodeid=0 -numa node,memdev=m1,cpus=2-3,nodeid=1")
    run = boot(4, "job=gauss:n=48 job=oddeven:n=128", extra=numa, timeout=120)
    assert_all_ok(run)
    assert run.boot["nodes"] == 2 and run.boot["mem_mb"] == 256


BAD = [
    ("policy=fifo job=gauss", "policy=fifo"),
    ("job=gauss:adapt=maybe", "adapt=maybe"),
    ("job=matmul", "unknown app 'matmul'"),
    ("job=gauss:colour=red", "no key 'colour'"),
    ("job=gauss:procs=0", "procs=0"),
    ("job=gauss:procs=x", "procs=x"),
    ("quantum=0 job=gauss", "quantum=0"),
    ("quantum= job=gauss", "quantum="),
    ("quantum=10 job=gauss", "quantum=10"),
    ("seed=1e3 job=gauss", "seed=1e3"),
    ("timeout=never job=gauss", "timeout=never"),
    ("trace=maybe job=gauss", "trace=maybe"),
    ("gangfit=worst job=gauss", "gangfit=worst"),
    ("alternates=1 job=gauss", "alternates=1"),
    ("wakeboost=yes job=gauss", "wakeboost=yes"),
    ("job=gauss:n=8192", "MiB"),                 # 512 MiB of matrix cannot fit in 256 MiB
    ("job=oddeven:n=abc", "n=abc"),
    ("job=gauss:sync=lock", "sync=lock"),
    ("job=gauss:at=5", "at=5"),
    ("hello", "hello"),
    ("", "nothing to run"),
]


@pytest.mark.parametrize("bootargs,needle", BAD, ids=[b or "empty" for b, _ in BAD])
def test_bad_token_stops_the_boot(boot, bootargs, needle):
    run = boot(2, bootargs, timeout=60)
    assert not run.timed_out
    assert run.exit_code == 2, run.console[-1500:]
    assert len(run.errors) == 1, run.errors
    assert needle in run.errors[0]
    assert not run.results and run.summary is None and not run.panics


def test_watchdog_timeout_ends_a_run_that_would_not_finish(boot):
    run = boot(2, "timeout=300ms job=synth:grain=1000,iters=100000000", timeout=60)
    assert run.exit_code == 4
    assert any("timeout" in e and "synth" in e for e in run.errors)
