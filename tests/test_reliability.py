"""No run can hang, lose a job or run a different scenario than the one given (issue 10).

Each test here failed on the kernel before its fix: long bootargs were cut at
2047 bytes, running out of process slots or exiting with an error left the
job's other processes waiting for ever, a stack overflow wrote silently into
the next process's stack, and a killed job could print several ERROR lines.
Deadlocks are tested with the chaos app (tests/test_chaos.py).
"""


#: Every test boot carries a watchdog: a regression must fail, never hang the suite.
GUARD = "timeout=60s"


def by_job(run):
    return {r["job"]: r for r in run.results}


def job_errors(run, job):
    return [e for e in run.errors if e.startswith(f"ERROR job {job} ") or f": job {job} (" in e]


def test_bootargs_longer_than_2_kib_arrive_whole(boot):
    tokens = ["job=synth:iters=5,procs=1,grain=10,barrier=block"] * 60 + ["job=fault:kind=store", GUARD]
    bootargs = " ".join(tokens)
    assert len(bootargs) > 2900                     # the old kernel kept 2047 bytes
    run = boot(2, bootargs)
    assert not run.timed_out and run.summary is not None
    assert run.summary["jobs"] == 61 and run.summary["failed"] == 1
    jobs = by_job(run)
    assert jobs[61]["app"] == "fault" and jobs[61]["check"] == "FAIL"
    assert all(jobs[i]["check"] == "ok" for i in range(1, 61))


def test_running_out_of_process_slots_fails_those_jobs_and_finishes_the_rest(boot):
    # five jobs of 128 processes need 640 of the kernel's 512 process slots at once
    run = boot(2, ["job=synth:procs=128,iters=5,grain=100,barrier=block"] * 5 + [GUARD])
    assert not run.timed_out and run.summary is not None, run.console[-2000:]
    assert run.summary["jobs"] == 5 and len(run.results) == 5
    failed = [r for r in run.results if r["check"] != "ok"]
    assert failed, "640 processes cannot all exist at once"
    for r in failed:
        assert r["reason"] == "out-of-process-slots"
        assert len(job_errors(run, r["job"])) == 1
    assert run.summary["failed"] == len(failed)
    assert not run.panics


def test_a_process_exiting_with_an_error_ends_its_job(boot, policy):
    # process 1 exits with status 3 while process 0 waits for it for ever
    run = boot(2, f"policy={policy} job=fault:kind=exit,procs=3 job=gauss:n=96 {GUARD}")
    assert not run.timed_out and run.summary is not None
    jobs = by_job(run)
    assert jobs[1]["check"] == "FAIL" and jobs[1]["reason"] == "exit-status-3"
    assert jobs[2]["check"] == "ok"
    assert len(job_errors(run, 1)) == 1 and "status 3" in job_errors(run, 1)[0]


def test_a_stack_overflow_faults_in_the_guard(boot):
    run = boot(2, f"job=fault:kind=stack,procs=2 job=oddeven:n=2000 {GUARD}")
    assert not run.timed_out and run.summary is not None
    jobs = by_job(run)
    assert jobs[1]["check"] == "FAIL" and jobs[1]["reason"] == "store-page-fault"
    stack_bottom = 0x80000000 - 64 * 1024          # process 0's stack: [bottom, 0x80000000)
    addr = int(str(jobs[1]["addr"]), 16)
    assert stack_bottom - 16 * 1024 <= addr < stack_bottom, hex(addr)
    errors = job_errors(run, 1)
    assert len(errors) == 1 and "stack overflow" in errors[0]
    assert jobs[2]["check"] == "ok"


def test_watchdog_names_a_sub_millisecond_timeout_exactly(boot):
    run = boot(1, "job=synth:iters=1000000 timeout=1500us")
    assert run.exit_code == 4
    assert any("timeout=1500us" in e for e in run.errors), run.errors


def test_a_job_cannot_take_more_than_its_memory_limit(boot):
    # gauss n=768 needs ~5 MiB; mem=1M refuses it, and its neighbour is untouched
    run = boot(2, f"job=gauss:n=768,mem=1M job=oddeven:n=2000 {GUARD}")
    assert not run.timed_out and run.summary is not None
    jobs = by_job(run)
    assert jobs[1]["check"] == "FAIL" and jobs[1]["reason"] == "memory-limit"
    assert jobs[1]["mem_kb"] <= 1024
    assert len(job_errors(run, 1)) == 1 and "memory" in job_errors(run, 1)[0]
    assert jobs[2]["check"] == "ok" and jobs[2]["mem_kb"] > 0


def test_jobs_that_cannot_fit_together_are_refused_at_boot(boot):
    run = boot(2, "job=gauss:n=3000 job=gauss:n=3000")
    assert run.exit_code == 2 and not run.results
    assert len(run.errors) == 1 and "jobs 1,2 are in memory together" in run.errors[0]
