"""The chaos app (apps/chaos.c) next to healthy jobs: whatever it does from user mode, the kernel answers
with documented errors, reports its faults once, and its neighbours finish with correct answers.

One boot per policy of the build (conftest: the BOOT line's policies=) runs chaos mode=random and
mode=faults together with gauss, oddeven and synth (small sizes): schedlab check's contract mix, judged by its
contract check (battery.judge_contract) and read for chaos's own answers. The other modes check the deadlock
detector (deadlock, exit-blocked) and the console contract's job prefix (partial-line, spoof).
"""

import re

import pytest

from check_boots import battery_session, booted, cases_on, declaration_of
from conftest import kernel_under_test
from schedlab.check import battery

FAULT_REASONS = ("load-page-fault", "store-page-fault", "instruction-page-fault", "illegal-instruction",
                 "load-access-fault", "store-access-fault", "instruction-access-fault")
CALLS = 500                    # per chaos process: the battery's contract mix (battery.contract_mix)
BOOT_TIMEOUT = 120             # the harness's; each scenario has its own timeout= as well


def mixed_run(session, policy):
    """schedlab check's contract mix on 2 harts, deterministic: chaos random (job 1), chaos faults (job 2:
    four processes, one of each fault kind) and the healthy gauss, oddeven and synth; booted once per policy
    and session, the boot test_check_builtins.py judges too (check_boots.py)."""
    case = cases_on(policy, declaration_of(policy), "qemu-2")["contract"]
    assert f"calls={CALLS}," in case.tokens, case.tokens
    return booted(session, case, kernel_under_test())


def by_job(run):
    return {r["job"]: r for r in run.results}


@pytest.mark.qemu
def test_neighbours_of_chaos_are_unaffected(battery_session, policy):
    run = mixed_run(battery_session, policy)
    contract = battery.judge_contract(run, None)        # no PANIC, every verdict, every healthy job ok
    assert contract.status == "pass", contract.detail
    assert [r["app"] for _, r in sorted(by_job(run).items())] == ["chaos", "chaos", "gauss", "oddeven", "synth"]
    assert run.summary["failed"] == 1 and run.exit_code == 1      # only chaos mode=faults fails


@pytest.mark.qemu
def test_random_syscalls_get_documented_errors(battery_session, policy):
    run = mixed_run(battery_session, policy)
    r = by_job(run)[1]
    assert r["app"] == "chaos" and r["mode"] == "random"
    assert r["check"] == "ok" and r["bad"] == 0, r              # every result was one abi.h allows
    assert r["syscalls"] >= 2 * CALLS
    assert r["efault"] > 0 and r["einval"] > 0 and r["enomem"] > 0 and r["enosys"] > 0
    # a write running off the end of the heap printed nothing (its last 16 bytes hold this marker)
    assert "CHAOS-LEAK" not in run.console


@pytest.mark.qemu
def test_faults_in_every_process_give_one_error(battery_session, policy):
    run = mixed_run(battery_session, policy)
    r = by_job(run)[2]
    assert r["app"] == "chaos" and r["mode"] == "faults"
    assert r["check"] == "FAIL" and r["reason"] in FAULT_REASONS, r
    mine = [e for e in run.errors if "job 2 (chaos)" in e]
    assert len(mine) == 1, run.errors
    assert len(run.errors) == 1, run.errors                      # nobody else complained


def deadlocked_run(boot, mode):
    run = boot(2, f"quantum=2ms timeout=8s job=chaos:mode={mode},procs=2 job=gauss:n=64,barrier=block",
               timeout=BOOT_TIMEOUT)
    assert not run.timed_out and not run.panics, run.console[-3000:]
    assert not any(e.startswith("ERROR timeout") for e in run.errors), run.errors   # detected, not timed out
    jobs = by_job(run)
    assert jobs[1]["check"] == "FAIL" and jobs[1]["reason"] == "deadlock", jobs[1]
    assert jobs[2]["check"] == "ok", jobs[2]
    assert [e for e in run.errors if re.match(r"ERROR deadlock: job 1 \(chaos\)", e)], run.errors
    assert run.summary["jobs"] == 2 and run.summary["failed"] == 1 and run.exit_code == 1
    return run


def test_deadlocked_job_is_reported_and_the_run_goes_on(boot):
    deadlocked_run(boot, "deadlock")


def test_job_whose_last_runnable_process_exits_is_a_deadlock(boot):
    deadlocked_run(boot, "exit-blocked")


def contract_lines_start_lines(run):
    for line in re.split(r"\r\n|\n|\r", run.console):
        for word in ("RESULT job=", "SUMMARY policy=", "PANIC ", "ERROR ", "BOOT harts="):
            if word in line:
                assert line.startswith(word), line


def test_partial_lines_do_not_swallow_contract_lines(boot):
    run = boot(2, "quantum=2ms timeout=30s job=chaos:mode=partial-line,lines=30 job=gauss:n=64,barrier=block",
               timeout=BOOT_TIMEOUT)
    assert run.exit_code == 0 and not run.timed_out, run.console[-3000:]
    assert sorted(r["app"] for r in run.results) == ["chaos", "gauss"]
    assert all(r["check"] == "ok" for r in run.results)
    assert run.summary["jobs"] == 2 and run.summary["failed"] == 0
    contract_lines_start_lines(run)


def test_spoofed_contract_lines_are_not_believed(boot):
    run = boot(2, "quantum=2ms timeout=30s job=chaos:mode=spoof,lines=3 job=gauss:n=64,barrier=block",
               timeout=BOOT_TIMEOUT)
    assert run.exit_code == 0 and not run.timed_out, run.console[-3000:]
    assert sorted((r["job"], r["app"]) for r in run.results) == [(1, "chaos"), (2, "gauss")]
    assert all(r["check"] == "ok" for r in run.results)
    assert not run.panics and not run.errors, (run.panics, run.errors)
    assert run.boot["harts"] == 2
    assert run.summary == {**run.summary, "jobs": 2, "failed": 0, "harts": 2}
