"""One core, two machines: the same scenarios booted on QEMU (deterministic mode) and run in the simulator
(tools/sim) must give the same verdicts and the same RESULT lines' keys, since both run the kernel's own
process and job state machine (kernel/sched/life.[ch]) and print through the kernel's own formatter
(kernel/contract.c). Timings are not compared: QEMU and the simulator are different machines.

Compared per scenario: the exit status; SUMMARY's jobs= and failed=; per job, check= and reason=, and the
set of RESULT keys; the ERROR lines, with hex words (a futex's address: the simulator has none) masked.
The one allowed difference in keys: what an app reports about its own computation (gauss's maxerr=,
oddeven's sorted=...) which the simulator's model of the app does not compute; such keys sit in the
kernel's line between check= and switches= (the app's section), and the simulator never prints a key the
kernel does not. For chaos's deadlock modes, whose report the model makes, the key sets are equal.

Scenarios: under every policy of the build, a gauss/oddeven mix, chaos mode=deadlock beside gauss (the
deadlocked job is ended, its neighbour goes on), and chaos mode=exit-blocked (process 0 exits while the
others wait for ever: a deadlock too).
"""

import os
import re

import pytest

from schedlab.qemu import REPO_ROOT
from schedlab.sim import sim_boot

ASAN = REPO_ROOT / "build" / "sim-asan" / "schedlab-sim"
if ASAN.is_file():
    os.environ.setdefault("SCHEDLAB_SIM", str(ASAN))

CPUS = 2
SCENARIOS = {
    "mix": "job=gauss:n=32 job=oddeven:n=64",
    "deadlock": "job=chaos:mode=deadlock job=gauss:n=32",
    "exit-blocked": "job=chaos:mode=exit-blocked,procs=3",
}


def both(policy, scenario, boot):
    bootargs = f"policy={policy} {SCENARIOS[scenario]}"
    kernel = boot(CPUS, bootargs, timeout=120, deterministic=True)
    sim = sim_boot(CPUS, bootargs, timeout=120)
    for run in (kernel, sim):
        assert not run.timed_out and not run.panics, run.console[-2000:]
        assert run.summary is not None, run.console[-2000:]
    return kernel, sim


def by_job(run):
    return {r["job"]: r for r in run.results}


def app_section(line_keys):
    """The keys of a RESULT line between check= and switches=: its scenario keys, the app's report, reason=."""
    keys = list(line_keys)
    return set(keys[keys.index("check") + 1:keys.index("switches")])


def masked(errors):
    return sorted(re.sub(r"0x[0-9a-f]+", "0x?", e) for e in errors)


def test_the_simulator_has_the_kernels_policies(boot):
    kernel = boot(1, "job=gauss:n=16,procs=1", timeout=120, deterministic=True)
    sim = sim_boot(1, "job=gauss:n=16,procs=1", timeout=120)
    assert sim.boot["policies"] == kernel.boot["policies"]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_same_verdicts_and_result_keys(boot, policy, scenario):
    kernel, sim = both(policy, scenario, boot)
    assert sim.exit_code == kernel.exit_code, (kernel.console[-1500:], sim.console[-1500:])
    for key in ("jobs", "failed"):
        assert sim.summary[key] == kernel.summary[key], (kernel.summary, sim.summary)
    assert masked(sim.errors) == masked(kernel.errors)
    kjobs, sjobs = by_job(kernel), by_job(sim)
    assert sorted(sjobs) == sorted(kjobs)
    for job, k in kjobs.items():
        s = sjobs[job]
        assert (s["check"], s.get("reason")) == (k["check"], k.get("reason")), (k, s)
        skeys = set(s) - {"sim"}
        assert skeys <= set(k), f"job {job}: keys only the simulator prints: {sorted(skeys - set(k))}"
        only_kernel = set(k) - skeys
        assert only_kernel <= app_section(k), f"job {job}: kernel keys missing in the simulator: {only_kernel}"
        if k["app"] == "chaos":
            assert skeys == set(k), (sorted(k), sorted(skeys))


def test_deadlock_verdicts_are_the_kernels(boot):
    """The verdicts compared above are the deadlock detector's: both report the chaos job deadlocked and end
    it, and the neighbour finishes with check=ok (so the comparison cannot pass on two silent failures)."""
    policy = "timeslice"
    for scenario in ("deadlock", "exit-blocked"):
        for run in both(policy, scenario, boot):
            chaos = next(r for r in run.results if r["app"] == "chaos")
            assert chaos["check"] == "FAIL" and chaos["reason"] == "deadlock", chaos
            assert [e for e in run.errors if e.startswith("ERROR deadlock: job 1 (chaos)")], run.errors
            assert all(r["check"] == "ok" for r in run.results if r["app"] != "chaos")
            assert run.exit_code == 1 and run.summary["failed"] == 1
