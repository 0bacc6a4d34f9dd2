"""The simulator (make sim, tools/sim): its engine, its barrier model, the kernel's policy invariants on its
traces, determinism, its build contract (a new policy is picked up; a missing core service fails the
link), its console contract against the kernel's (a bad scenario's ERROR line and a timeout's, byte for byte
and with the same exit status, booted on QEMU beside it; PANIC only for a bug), and the QEMU-vs-simulator
validation pipeline on a tiny mix.

Every run uses the ASan/UBSan build (build/sim-asan, `make sim-asan`, a prerequisite of make test) when it
exists. The policy checks are the QEMU tests' own (tests/schedule_checks.py), called with a simulator in place of QEMU.
"""

import json
import os
import re
import subprocess

import pytest

import schedule_checks as checks
from helpers import schedlab_cmd, seed_sim_build
from schedlab import reproduce as rp
from schedlab import trace as tr
from schedlab.qemu import REPO_ROOT
from schedlab.check import battery
from schedlab.sim import sim_boot

ASAN = REPO_ROOT / "build" / "sim-asan" / "schedlab-sim"
if ASAN.is_file():
    os.environ.setdefault("SCHEDLAB_SIM", str(ASAN))
CALIB = json.loads((REPO_ROOT / "tools" / "sim" / "calib" / "default.json").read_text())


def simboot(cpus, bootargs, timeout=120, deterministic=False):
    """The `boot` fixture's signature; the simulator is deterministic whatever `deterministic` says."""
    return sim_boot(cpus, bootargs, timeout=timeout)


def run_ok(cpus, bootargs):
    run = simboot(cpus, bootargs)
    assert run.ok, run.console[-2000:]
    assert run.boot["sim"] and run.summary["sim"] and all(r["sim"] for r in run.results)
    return run


def elapsed(run, job=1):
    return next(r for r in run.results if r["job"] == job)["elapsed_us"]


# ---------------------------------------------------------------- the engine and the barrier model

def test_events_are_handled_in_time_order():
    trace = tr.parse_trace(run_ok(4, "trace=on policy=timeslice quantum=1ms job=synth:procs=6,iters=50,var=500 "
                                     "job=sleeper:procs=2,iters=5,sleep_us=300").console)
    for hart in range(4):
        times = [r.time_us for r in trace.records if r.hart == hart]
        assert times == sorted(times)


def test_spin_barrier_releases_when_the_last_arrives():
    # one iteration, very uneven work: both leave the barrier together, after the slower one's work; process 1
    # exits there, process 0 after its check (proc_end)
    run = run_ok(2, "trace=on job=synth:procs=2,iters=1,grain=1000,var=100000,barrier=spin")
    exits = {r.proc: r.time_us for r in tr.parse_trace(run.console).records if r.event == "exit"}
    assert len(exits) == 2 and abs(exits[0] - exits[1] - CALIB["proc_end_ns"] / 1000) < 5
    assert run.results[0]["par_us"] >= 1000 * CALIB["synth_unit_ns"] / 1000


def test_process_zero_creates_the_others_and_joins_them():
    # as lib/base/procs.c: the others come to life after process 0's set-up, one proc_create apart; process 0 exits
    # last, after the others and its check; par_us is inside elapsed_us
    run = run_ok(4, "trace=on job=synth:procs=4,iters=50,grain=1000,barrier=block")
    recs = tr.parse_trace(run.console).records
    new = {r.proc: r.time_us for r in recs if r.event == "new"}
    exits = {r.proc: r.time_us for r in recs if r.event == "exit"}
    assert new[0] == 0 and new[1] == pytest.approx(CALIB["proc_start_ns"] / 1000, abs=1)
    assert new[1] < new[2] < new[3]
    assert exits[0] >= max(exits[p] for p in (1, 2, 3)) + CALIB["proc_end_ns"] / 1000 - 1
    result = run.results[0]
    assert 0 < result["par_us"] < result["elapsed_us"]


@pytest.mark.parametrize("harts,widths", [(2, (2, 2, 2)), (3, (2, 3, 1, 4))])
def test_timeslice_spreads_each_job_over_the_harts(harts, widths):
    checks.timeslice_spreads_each_job_over_the_harts(simboot, harts, widths)


def test_a_preempted_spinner_delays_everyone():
    # two spinning processes on one hart: a turn (a quantum) ends with the spinner's own arrival at the next
    # episode, so it takes a quantum per two episodes; blocking hands the hart over at once
    spin = run_ok(1, "quantum=1ms job=synth:procs=2,iters=12,grain=100,barrier=spin").results[0]["par_us"]
    block = run_ok(1, "quantum=1ms job=synth:procs=2,iters=12,grain=100,barrier=block").results[0]["par_us"]
    assert spin >= 5 * 1000 and block < 1000, (spin, block)


def futex_calls(cpus, bootargs):
    """The simulator's --stats count of the barriers' futex_wait and futex_wake system calls."""
    binary = os.environ.get("SCHEDLAB_SIM") or str(REPO_ROOT / "build" / "sim" / "schedlab-sim")
    out = subprocess.run([binary, "--cpus", str(cpus), "--stats", bootargs], capture_output=True, text=True,
                         timeout=120, check=True)
    m = re.search(r"futex_wait calls (\d+), futex_wake calls (\d+)", out.stderr)
    assert m, out.stderr
    return int(m[1]), int(m[2])


def test_a_waiter_entering_futex_wait_is_woken_even_if_released_first():
    # lib/wait/wait.c: a waiter sets the sleepers bit before its futex_wait, and the releaser wakes whenever it sees
    # the bit, also when the waiter has not fallen asleep yet. Under gang both processes leave a slot switch
    # together and arrive at the barrier together: those episodes must cost the releaser a futex_wake too
    # (the simulator had skipped it, and its gang slowdowns came out 30 % low)
    for policy in ("gang", "timeslice"):
        waits, wakes = futex_calls(2, f"policy={policy} quantum=2ms job=synth:procs=2,iters=2000,grain=300,"
                                      "barrier=block job=hog:procs=2")
        assert waits >= 2000 and wakes == waits, (policy, waits, wakes)


def test_a_futex_wake_that_kicks_an_idle_hart_costs_the_waker_its_calibrated_price(tmp_path):
    # kbench's wake_call_ns (futex_wake_kick_ns) is what a releaser pays when its wake sends the other hart an
    # IPI; make it 10 us dearer and the job's CPU time grows by 10 us per wake, nothing else
    binary = os.environ.get("SCHEDLAB_SIM") or str(REPO_ROOT / "build" / "sim" / "schedlab-sim")
    cpu = []
    for extra in (0, 10000):
        calib = dict(CALIB, futex_wake_kick_ns=CALIB["syscall_ns"] + extra)
        path = tmp_path / f"c{extra}.json"
        path.write_text(json.dumps(calib))
        out = subprocess.run([binary, "--cpus", "2", "--calib", str(path), "--stats",
                              "job=synth:procs=2,iters=300,grain=2000,barrier=block"],
                             capture_output=True, text=True, timeout=120, check=True)
        cpu.append(int(re.search(r"cpu_us=(\d+)", out.stdout)[1]))
        wakes = int(re.search(r"futex_wake calls (\d+)", out.stderr)[1])
    assert wakes >= 300 and cpu[1] - cpu[0] == pytest.approx(wakes * 10, rel=0.05), (cpu, wakes)


@pytest.mark.parametrize("wait", ["spin", "block", "twophase", "adaptive"])
def test_every_policy_and_wait_kind_finishes(sim_policy, wait):
    """Every policy the simulator was built with (conftest: its BOOT line), so a new policy file is in."""
    run = run_ok(4, f"policy={sim_policy} quantum=1ms job=synth:procs=4,iters=200,barrier={wait} "
                    f"job=oddeven:procs=3,n=256,barrier={wait} job=gauss:procs=2,n=48,barrier={wait} "
                    "job=sleeper:procs=1,iters=3,sleep_us=500 job=hog:procs=2")
    contract = battery.judge_contract(run, None)             # schedlab check's: every verdict, every job ok
    assert contract.status == "pass" and run.summary["jobs"] == 5, contract.detail


def test_same_scenario_same_bytes_and_the_seed_matters():
    args = "trace=on policy=timeslice quantum=1ms seed=7 job=synth:procs=3,iters=300,var=800 job=hog:procs=2"
    a, b = simboot(3, args), simboot(3, args)
    assert a.console == b.console
    c = simboot(3, args.replace("seed=7", "seed=8"))
    assert c.console != a.console


# ---------------------------------------------------------------- the kernel's contract: ERROR, PANIC, exit status

#: Scenarios the kernel's parser refuses (tests/host/test_scenario.c's cases, on the real apps, and the checks that
#: read the environment: harts, free memory, the app list, the policies). Kernel and simulator must print the same
#: one ERROR line and exit 2.
BAD_SCENARIOS = [
    "policy=nosuch job=gauss", "job=matmul", "job=gauss:bogus=1", "job=gauss:procs=0", "job=gauss:procs=two",
    "quantum=50us job=gauss", "quantum=10xs job=gauss", "seed=99999999999999999999999 job=gauss",
    "trace=yes job=gauss", "calib=1 job=gauss", "timeout=0s job=gauss", "clock=fast job=gauss",
    "alternates=on job=gauss", "colour=blue job=gauss", "gauss", "", "job=", "job=gauss:", "job=gauss:n",
    "job=gauss:n=64,", "job=gauss:adapt=no,adapt=yes", "job=gauss:n=1", "job=gauss:sync=lock",
    "job=gauss:sync=\x1b[2J", "job=synth:at=86401s", "job=gauss:mem=1G", "job=gauss:n=65536",
    "job=gauss:n=2500 job=gauss:n=2500", "job=gauss:n=64," + "b" * 510, "job=hog " * 65,
]


@pytest.mark.parametrize("bootargs", BAD_SCENARIOS, ids=lambda a: a[:40] or "empty")
def test_a_bad_scenario_gets_the_kernels_error_line_and_exit_status(boot, bootargs):
    kernel = boot(2, bootargs, timeout=120)
    assert kernel.exit_code == 2 and len(kernel.errors) == 1, kernel.console[-1500:]
    sim = simboot(2, bootargs)
    assert (sim.exit_code, sim.errors) == (2, kernel.errors), sim.console
    assert sim.console == kernel.errors[0] + "\n"          # nothing else: no BOOT, no PANIC


@pytest.mark.parametrize("bootargs", ["timeout=5ms job=gauss:n=64,at=1s",
                                      "timeout=1500us trace=on job=synth:procs=1,at=1s job=hog:procs=1,at=2s"])
def test_a_timeout_is_the_kernels_error_and_exit_status(boot, bootargs):
    # every job arrives after the watchdog, so the verdict is the same on any host
    kernel = boot(2, bootargs, timeout=120)
    assert kernel.exit_code == 4 and len(kernel.errors) == 1, kernel.console[-1500:]
    sim = simboot(2, bootargs)
    assert (sim.exit_code, sim.errors, sim.panics) == (4, kernel.errors, []), sim.console[-1500:]
    assert sim.boot["sim"] and not sim.results and sim.summary is None
    assert bool(sim.traces) == bool(kernel.traces)


def test_the_free_memory_is_the_kernels_to_the_page(boot):
    # the largest mem= the simulator accepts (found by bisection in the simulator, in 4 KiB steps), and one page
    # more, which it refuses: the kernel must agree on both
    def accepts(run):
        assert run.exit_code in (2, 4), run.console[-1500:]   # refused, or admitted and cut by the watchdog
        return run.exit_code == 4

    def scenario(kib):
        return f"calib=off timeout=1ms job=hog:procs=1,mem={kib}K"

    lo, hi = 1024, 1024 * 1024                  # KiB: 1 MiB is free, 1 GiB is not
    assert accepts(simboot(2, scenario(lo))) and not accepts(simboot(2, scenario(hi)))
    while hi - lo > 4:
        mid = (lo + hi) // 8 * 4
        lo, hi = (mid, hi) if accepts(simboot(2, scenario(mid))) else (lo, mid)
    assert accepts(boot(2, scenario(lo), timeout=120)) and not accepts(boot(2, scenario(hi), timeout=120)), (lo, hi)


def test_the_simulators_own_refusals_are_errors_too():
    for bootargs, says in [("job=tbench:procs=2", "no model of app tbench"), ("job=knary:mode=static", "mode=static is not"),
                           ("job=oddeven:sched=gss", "sched=gss is not modelled")]:
        run = simboot(2, bootargs)
        assert run.exit_code == 2 and len(run.errors) == 1 and says in run.errors[0], run.console
        assert not run.panics and run.boot is None


def test_every_app_of_the_build_is_modelled_or_refused_cleanly(boot):
    """The simulator's BOOT lists the apps it models; every other app the kernel has (its BOOT's apps=: the
    chapter-5 apps, knary, ...) gets one ERROR naming it, before any BOOT, and exit 2 - never a PANIC."""
    kernel_apps = boot(1, "job=synth:iters=1,grain=10").boot["apps"]
    modelled = run_ok(2, "job=synth:procs=1,iters=1").boot["apps"]
    assert set(modelled) < set(kernel_apps), (modelled, kernel_apps)
    for app in sorted(set(kernel_apps) - set(modelled)):
        run = simboot(2, f"job={app}")
        assert run.exit_code == 2 and not run.panics and run.boot is None, (app, run.console[-1500:])
        assert len(run.errors) == 1, run.errors
        assert run.errors[0].startswith(f"ERROR job={app}: the simulator has no model of app {app} "), run.errors


def test_a_sweep_keeps_the_simulators_reason(tmp_path):
    out = schedlab_cmd("sweep", "--sim", "--cpus", "2", "--repeat", "1", "--vary", "job1.n=64,0", "--no-plot",
                       "--out", str(tmp_path / "sw"), "job=gauss:n=64", timeout=300)
    said = out.stdout + out.stderr
    assert out.returncode != 0 and "n=0, expected a whole number" in said and "no ERROR line" not in said, said


def test_valid_late_arrivals_are_no_stuck_scenario():
    # the parser allows arrivals up to 24 h; the simulator has no simulated-time limit of its own
    run = run_ok(2, "job=synth:procs=1,iters=10,at=3601s job=synth:procs=1,iters=10,at=86400s")
    assert [r["arrive_us"] for r in run.results] == [3601 * 10**6, 86400 * 10**6]


def test_the_host_time_limit_says_what_it_is():
    # a day of simulated ticks takes far longer than a millisecond of host time on any host
    binary = os.environ.get("SCHEDLAB_SIM") or str(REPO_ROOT / "build" / "sim" / "schedlab-sim")
    out = subprocess.run([binary, "--cpus", "2", "--host-limit", "0.001", "job=synth:procs=1,at=86400s"],
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    errors = [line for line in out.stdout.splitlines() if line.startswith("ERROR")]
    assert out.returncode == 4 and len(errors) == 1 and "PANIC" not in out.stdout, out.stdout
    assert errors[0].startswith("ERROR host-time limit:") and "--host-limit" in errors[0] and "1(synth)" in errors[0]


# ---------------------------------------------------------------- the kernel's invariants on simulated traces

def test_gang_coschedules_every_gang():
    checks.gang_coschedules_every_gang(simboot)


def test_partitions_are_disjoint():
    checks.harts_are_exclusive_between_repartitions(simboot)


def test_global_migrates_never_doubles_and_serves_fifo():
    checks.global_migrates_never_doubles_and_serves_fifo(simboot)


def test_sixteen_harts_gang():
    trace = tr.parse_trace(run_ok(16, "trace=on policy=gang quantum=2ms job=gauss:procs=16,n=96,barrier=spin "
                                      "job=gauss:procs=8,n=96,barrier=spin job=hog:procs=16").console)
    checks.assert_coscheduled(trace)


# ---------------------------------------------------------------- the build contract

def _make_sim(tmp_path, policy_file):
    seed_sim_build(tmp_path / "sim")          # make sim's objects: what is compiled here is the policy file
    return subprocess.run(["make", "--no-print-directory", f"SIM_OUT={tmp_path}/sim", f"EXTRA_POLICIES={policy_file}",
                           f"{tmp_path}/sim/schedlab-sim"], cwd=REPO_ROOT, capture_output=True, text=True)


def test_a_new_policy_file_runs_in_the_simulator(tmp_path):
    build = _make_sim(tmp_path, "tests/policies/fifo.c")
    assert build.returncode == 0, build.stderr
    run = subprocess.run([f"{tmp_path}/sim/schedlab-sim", "--cpus", "3", "policy=fifo job=synth:procs=3,iters=50"],
                         cwd=REPO_ROOT, capture_output=True, text=True)
    assert run.returncode == 0 and "SUMMARY policy=fifo" in run.stdout, run.stdout + run.stderr


def test_a_policy_needing_a_missing_core_service_fails_to_link(tmp_path):
    src = (REPO_ROOT / "tests/policies/fifo.c").read_text()
    bad = tmp_path / "needy.c"
    bad.write_text(src.replace('"fifo"', '"needy"').replace("fifo_class", "needy_class")
                   + "\nvoid needy_probe(void) { sched_arm_timer(); }\n")
    build = _make_sim(tmp_path, str(bad))
    assert build.returncode != 0 and "sched_arm_timer" in build.stderr, build.stderr[-2000:]


def test_a_policy_bug_is_a_panic_never_an_error(tmp_path):
    # a policy that never picks what it queued leaves every hart idle with nothing pending: stuck, a bug (PANIC,
    # exit 3) found after a bounded number of quanta; a policy's own panic() is the kernel's PANIC line
    src = (REPO_ROOT / "tests/policies/fifo.c").read_text()
    lazy = tmp_path / "lazy.c"
    lazy.write_text(src.replace('"fifo"', '"lazy"').replace("fifo_class", "lazy_class")
                    .replace('fifo_wake, .choices = "back|front"', 'lazy_pick, .choices = "never|panic"')
                    .replace("SCHED_OPT(fifo_wake)", "SCHED_OPT(lazy_pick)")
                    .replace("struct proc *p = runq_pop(&queue);",
                             'struct proc *p = 0;\n    if (SCHED_OPT(lazy_pick)) panic("lazy: picked nothing");'))
    assert "lazy_pick" in lazy.read_text() and "picked nothing" in lazy.read_text(), "tests/policies/fifo.c changed"
    build = _make_sim(tmp_path, str(lazy))
    assert build.returncode == 0, build.stderr[-2000:]
    for pick, cause, says in [("never", "stuck", "never picks its ready processes"),
                              ("panic", "panic", "lazy: picked nothing")]:
        run = subprocess.run([f"{tmp_path}/sim/schedlab-sim", "--cpus", "2",
                              f"policy=lazy lazy_pick={pick} quantum=1ms job=synth:procs=2,iters=5"],
                             cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
        panics = [line for line in run.stdout.splitlines() if line.startswith("PANIC")]
        assert run.returncode == 3 and len(panics) == 1, run.stdout + run.stderr
        assert panics[0].split()[2] == cause and says in panics[0] and "ERROR" not in run.stdout, panics


# ---------------------------------------------------------------- the validation pipeline (QEMU at CPUS=2)

@pytest.mark.qemu
def test_validation_pipeline_on_a_tiny_mix(tmp_path):
    out = schedlab_cmd("validate", "--tiny", "--cpus", "2", "--json", str(tmp_path / "v.json"), timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "slowdown qemu" in out.stdout and "sim" in out.stdout
    assert (tmp_path / "v.json").is_file()


@pytest.mark.parametrize("harts", [8, 16])
def test_partition_leaves_a_job_alone_with_a_hart_per_process_in_place(harts):
    """partition.c's pull: a blocking job alone, one process per hart, is never moved (the kernel's own policy
    file: before the fix, oddeven at 16 harts was moved 915 times while each hart's own waiter waited to run)."""
    run = run_ok(harts, "policy=partition quantum=2ms job=oddeven:n=4000,barrier=block")
    assert run.results[0]["migrations"] == 0, run.results[0]


def test_process_control_follows_the_allotment():
    """Under partition an adapt=yes barrier job runs on as many processes as it has harts: while a second job
    holds one of the two harts, the first job's processes overlap on harts for at most one barrier episode
    after each repartition (control happens at an episode's release), and it still finishes every iteration."""
    run = run_ok(2, "trace=on policy=partition quantum=2ms job=synth:procs=2,iters=400,grain=2000,barrier=spin "
                    "job=synth:procs=2,iters=100,grain=2000,barrier=spin,at=1ms")
    trace = tr.parse_trace(run.console)
    reps = [(r.time_us, r.arg) for r in trace.records if r.event == "rep" and r.job == 1]
    shrink = next(t for t, n in reps if n == 1)
    grow = next((t for t, n in reps if n == 2 and t > shrink), trace.end_us)
    runs = [i for i in tr.intervals(trace) if i.job == 1]
    both = sum(max(0.0, min(a.end_us, b.end_us, grow) - max(a.start_us, b.start_us, shrink))
               for a in runs for b in runs if a.proc < b.proc)
    episode = elapsed(run, 1) / 400
    assert both <= 3 * episode, (both, episode)
    assert suspensions(trace), "no process of the adaptive job was suspended"
    adapt_no = run_ok(2, "trace=on policy=partition quantum=2ms job=synth:procs=2,iters=400,grain=2000,"
                         "barrier=spin,adapt=no job=synth:procs=2,iters=100,grain=2000,barrier=spin,at=1ms")
    assert not suspensions(tr.parse_trace(adapt_no.console))


def suspensions(trace):
    """Job 1's sleeps from its first repartition to its first exit: with spinning barriers, only process
    control's (the others are the start's wait for a worker and process 0's join)."""
    first_rep = min(r.time_us for r in trace.records if r.event == "rep" and r.job == 1)
    first_exit = min(r.time_us for r in trace.records if r.event == "exit" and r.job == 1)
    return [r for r in trace.records if r.event == "blk" and r.job == 1 and first_rep < r.time_us < first_exit]


# ---------------------------------------------------------------- the 16-processor sections (reproduce/sim16.py)

def _sim16(out):
    """`schedlab reproduce --only 'sim16-*' --out out`, in-process; its sections and docs/sim-16.md's text."""
    ctx = rp.Ctx(out=out, progress=lambda msg: None)
    sections = rp.run(["sim16-*"], ctx)
    return sections, (out / "sim-16.md").read_text()


def test_sixteen_processor_sections_are_complete_and_reproducible(tmp_path):
    """The simulator's 16-processor results are sections of `schedlab reproduce`: every experiment's table and
    plot in results.md and on the one page sim-16.md and, where the simulation differs from the paper or the
    model, the sentence saying why; the simulator is deterministic, so a second run writes the same page. The
    P_M rule is a property of blocking barriers, not a timing: each row lies on ceil(16/P)."""
    from schedlab.reproduce import sim16
    done, doc = _sim16(tmp_path / "a")
    assert [s.name for s in done] == [sim16.section_name(f) for f in sim16.EXPERIMENTS]
    assert not any(s.error for s in done), [s.error for s in done if s.error]
    md = (tmp_path / "a" / "results.md").read_text()
    for s in done:
        # simulated rows are judged by the QEMU sections' own criteria and say so, or shown as measured
        assert f"## {s.title}" in md and s.rows and all(r.verdict.endswith("(simulated)") or r.verdict == "measured"
                                                        for r in s.rows), [r.verdict for r in s.rows]
        assert s.figures and all((tmp_path / "a" / "figures" / f).is_file() for f in s.figures), s.name
    sections = doc.split("\n## ")[1:]
    assert len(sections) == len(sim16.EXPERIMENTS)
    for section in sections:
        rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
        assert len(rows) >= 2, section[:200]
        assert all(float(r[2]) == float(r[2]) for r in rows[1:]), section[:200]  # every simulated cell a number
    noted = {s.splitlines()[0] for s in sections
             if any(line and not line.startswith(("|", "![")) for line in s.split("|\n", 1)[-1].splitlines())}
    for title in ("Markatos 3.5.1", "Markatos 3.5.3", "Markatos Figs. 3.5/3.6", "Feitelson", "Tucker"):
        assert any(t.startswith(title) for t in noted), (title, noted)
    pm = next(s for s in sections if s.startswith("Markatos Fig. 3.7"))
    for r in [line.split(" | ") for line in pm.splitlines() if line.startswith("| P=")]:
        assert abs(float(r[2]) / float(r[3].rstrip(" |")) - 1) < 0.05, r
    assert _sim16(tmp_path / "b")[1] == doc
