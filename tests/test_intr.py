"""Timers and IPIs without the firmware (kernel/intr.c): the kernel drives Sstc's stimecmp and the ACLINT
SSWI itself where the device tree says they exist, falls back to the SBI where they do not, and irq=sbi forces
the SBI. The BOOT line names the path taken; every path must schedule correctly (the timings are `make bench`'s).
"""

import pytest

from helpers import assert_all_ok

#: IPI- and timer-heavy: gang slot switches (broadcast IPIs), futex hand-offs across harts (wakes of idle
#: harts), sleeps (futex timeouts on the launcher hart's timer) and a short quantum.
MIX = ("policy=gang quantum=1ms job=gauss:n=96,procs=2 job=oddeven:n=600,barrier=block "
       "job=kbench:what=futex,procs=2,ops=300 job=sleeper:iters=10,sleep_us=500,procs=2")


@pytest.mark.parametrize("cpus", [1, 2, 3])
@pytest.mark.parametrize("irq", ["auto", "sbi"])
def test_every_path_schedules_correctly(boot, cpus, irq):
    run = boot(cpus, f"{MIX} irq={irq}", timeout=240)
    assert_all_ok(run)
    if irq == "sbi":
        assert (run.boot["timer"], run.boot["ipi"]) == ("sbi", "sbi")
    else:
        assert (run.boot["timer"], run.boot["ipi"]) == ("sstc", "sswi")   # QEMU virt,aclint=on has both
    slept = [r for r in run.results if r["app"] == "sleeper"]
    assert slept[0]["bad_sleep"] == 0


def test_direct_paths_under_every_policy(boot, policy):
    run = boot(2, f"policy={policy} quantum=1ms job=synth:iters=200,barrier=block job=hog job=sleeper:iters=5")
    assert_all_ok(run)
    assert (run.boot["timer"], run.boot["ipi"]) == ("sstc", "sswi")


def test_without_aclint_ipis_take_the_sbi(boot):
    run = boot(2, MIX, extra=["-machine", "aclint=off"])
    assert_all_ok(run)
    assert (run.boot["timer"], run.boot["ipi"]) == ("sstc", "sbi")


def test_without_sstc_the_timer_takes_the_sbi(boot):
    run = boot(3, MIX, extra=["-cpu", "rv64,sstc=off"])
    assert_all_ok(run)
    assert (run.boot["timer"], run.boot["ipi"]) == ("sbi", "sswi")


@pytest.mark.parametrize("irq, extra, paths", [
    ("sbi", (), ("sbi", "sbi")),                                     # its TIME on stimecmp, IPIs through MSWI
    ("auto", ("-machine", "aclint=off"), ("sstc", "sbi")),           # IPIs through the CLINT's msip
    ("auto", ("-cpu", "rv64,sstc=off"), ("sbi", "sswi")),            # TIME on the ACLINT MTIMER's mtimecmp
    ("sbi", ("-machine", "aclint=off", "-cpu", "rv64,sstc=off"), ("sbi", "sbi")),   # both on the CLINT
])
def test_deterministic_firmware_serves_every_path(boot, irq, extra, paths):
    """Deterministic boots run the project's firmware (firmware/fw.c), not OpenSBI: each SBI path the kernel
    can take must work under it too."""
    run = boot(3, f"{MIX} irq={irq}", extra=list(extra), deterministic=True, timeout=240)
    assert run.argv[run.argv.index("-bios") + 1].endswith("firmware/fw.elf")
    assert_all_ok(run)
    assert (run.boot["timer"], run.boot["ipi"]) == paths
    assert [r for r in run.results if r["app"] == "sleeper"][0]["bad_sleep"] == 0


def test_bad_irq_value_is_a_clear_error(boot):
    run = boot(1, "job=synth irq=direct", timeout=60)
    assert run.exit_code not in (0, None)
    assert len(run.errors) == 1 and "irq=direct" in run.errors[0] and "irq=sbi" in run.errors[0]


def test_kbench_sees_ticks_and_real_wakes(boot):
    """The two kbench modes `make bench` reads its tick and wake figures from: with a 200 us quantum the
    spinning process sees every tick as a gap; with a delay before each hand-off the receivers block, so
    real wakes are counted (not necessarily all: a receiver its hart has not run yet never blocked), and so
    are the waker's futex_wake calls that found someone asleep (wake_call_ns, the simulator's kick cost)."""
    run = boot(2, "quantum=200us job=kbench:what=tick,procs=1,ops=50 "
                  "job=kbench:what=futex,procs=2,ops=40,delay_us=300")
    assert_all_ok(run)
    tick, futex = run.results if run.results[0]["what"] == "tick" else run.results[::-1]
    assert tick["gaps"] == 50 and tick["tick_ns"] > 0
    assert 1 <= futex["woken"] <= 40 and futex["wake_ns"] > 0
    assert futex["woken"] <= futex["wake_calls"] <= 40 and futex["wake_call_ns"] > 0
