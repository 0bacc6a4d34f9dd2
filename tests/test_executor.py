"""The executor's task contract (tools/py/schedlab/executor.py, issue 30): results in submission order,
one retry of a failure that is the harness's and then a reported failure, resume from the journal without
booting twice, the --jobs clamp and the cores each boot is given (checked from /proc), and a Dask
LocalCluster's records equal to a sequential run's. Correctness only: nothing here is timed."""
import json
import os
import shlex
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import run_cli
from schedlab import affinity, executor, qemu
from schedlab.console import parse_console
from schedlab.journal import Journal

#: A console the harness takes for a finished boot (BOOT, one ok RESULT, SUMMARY).
CONSOLE = ("BOOT harts=1 nodes=1 mem_mb=256 policies=timeslice apps=synth boot_hart=0 boot_us=1\n"
           "RESULT job=1 app=synth policy=timeslice harts=1 procs=1 arrive_us=0 start_us=1 end_us=2 elapsed_us={n} "
           "cpu_us=1 check=ok\nSUMMARY policy=timeslice harts=1 jobs=1 failed=0 makespan_us=2\n")


@pytest.fixture(autouse=True)
def core_locks(tmp_path, monkeypatch):
    """Each test's core locks in a directory of its own: a real run beside it never waits for a test."""
    monkeypatch.setenv("SCHEDLAB_CORE_LOCKS", str(tmp_path / "locks"))


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "kernel.elf"
    path.write_bytes(b"\x7fELF fake")
    return str(path)


def task(kernel, n, deterministic=True, cpus=1):
    return executor.qemu_task(cpus, f"job=synth seed={n}", kernel=kernel, deterministic=deterministic)


def made_run(cpus, bootargs, exit_code=0, console=None):
    seed = bootargs.split("seed=")[1].split()[0] if "seed=" in bootargs else "0"
    text = CONSOLE.format(n=seed) if console is None else console
    return qemu.Run(cpus=cpus, bootargs=bootargs, argv=["qemu-system-riscv64"], console=text, exit_code=exit_code,
                    parsed=parse_console(text))


class FakeBoot:
    """qemu.boot replaced: records each call's affinity; ``hook(n, affinity)`` may wait, fail or raise."""

    def __init__(self, hook=None):
        self.calls, self.hook, self.lock = [], hook, threading.Lock()

    def __call__(self, cpus, bootargs, kernel=None, timeout=0, extra=(), deterministic=False, model=None,
                 affinity=None):
        with self.lock:
            self.calls.append((bootargs, affinity))
        n = int(bootargs.split("seed=")[1].split()[0])
        exit_code = self.hook(n, affinity) if self.hook else 0
        return made_run(cpus, bootargs, exit_code if isinstance(exit_code, int) else 0)


@pytest.fixture
def fake_boot(monkeypatch):
    def install(hook=None):
        boot = FakeBoot(hook)
        monkeypatch.setattr(qemu, "boot", boot)
        return boot
    return install


# ---------------------------------------------------------------- order, retries

def test_results_come_back_in_submission_order(kernel, fake_boot):
    """Boot 0 cannot finish before boot 3 has (it waits for it), and two run at once (a barrier both must
    reach): the Runs still come back 0, 1, 2, 3."""
    last_done, both = threading.Event(), threading.Barrier(2, timeout=60)

    def hook(n, _):
        if n in (0, 1):
            both.wait()
        if n == 0:
            assert last_done.wait(60)
        if n == 3:
            last_done.set()
    boot = fake_boot(hook)
    ex = executor.Local(4, cores=[0, 1, 2, 3], reserve=0)
    try:
        runs = list(ex.map(task(kernel, n) for n in range(4)))
    finally:
        ex.close()
    assert [r.bootargs for r in runs] == [f"job=synth seed={n}" for n in range(4)]
    assert [r.results[0]["elapsed_us"] for r in runs] == [0, 1, 2, 3]
    assert len(boot.calls) == 4 and all(r.placement["attempts"] == 1 for r in runs)


@pytest.mark.parametrize("make", [executor.Sequential, lambda: executor.Local(2, cores=[0, 1], reserve=0)])
def test_one_retry_then_the_failure_is_reported(kernel, fake_boot, make, capsys):
    """Seed 1 fails once (an exception), seed 2 twice (QEMU killed by a signal): 1 is retried and ok, 2 is
    retried once and comes back as a failed Run that says why; none is dropped, order kept."""
    tries = {}

    def hook(n, _):
        tries[n] = tries.get(n, 0) + 1
        if n == 1 and tries[n] == 1:
            raise OSError("worker lost")
        return -9 if n == 2 else 0
    fake_boot(hook)
    ex = make()
    try:
        runs = list(ex.map(task(kernel, n) for n in range(4)))
    finally:
        ex.close()
    assert tries == {0: 1, 1: 2, 2: 2, 3: 1}
    assert [r.ok for r in runs] == [True, True, False, True]
    assert runs[1].placement["attempts"] == 2 and "failure" not in runs[1].placement
    assert runs[2].placement["attempts"] == 2 and "killed by signal 9" in runs[2].placement["failure"]
    err = capsys.readouterr().err
    assert "retrying once" in err and "failed twice, reported as failed" in err


def test_an_exception_twice_is_a_failed_run_with_the_reason(kernel, fake_boot):
    def hook(n, _):
        raise RuntimeError("no QEMU on this worker")
    fake_boot(hook)
    run = executor.Sequential().run(task(kernel, 5))
    assert not run.ok and run.exit_code == -1 and run.verdict == "FAIL (exit -1)"
    assert "infrastructure failure" in run.console and "no QEMU on this worker" in run.placement["failure"]


def test_a_kernel_verdict_is_not_retried_but_qemu_failing_to_start_is(fake):
    """A job's failure is the kernel's verdict (booted once); QEMU exiting before the kernel printed
    anything is the harness's failure (booted twice, then reported)."""
    fake.replay("job-error")
    run = executor.Sequential().run(executor.qemu_task(2, "job=fault", kernel=fake.kernel_path))
    assert not run.ok and len(fake.calls()) == 1 and "failure" not in run.placement
    fake.canned("qemu-system-riscv64: could not load kernel\n", exit_code=1)
    run = executor.Sequential().run(executor.qemu_task(2, "job=gauss", kernel=fake.kernel_path))
    assert not run.ok and len(fake.calls()) == 3
    assert "before the kernel printed BOOT" in run.placement["failure"]


def test_commands_stop_at_a_failure_and_cancel_what_has_not_started(kernel, fake_boot):
    boot = fake_boot()
    ex = executor.Local(2, cores=[0, 1], reserve=0)
    try:
        for n, run in enumerate(ex.map(task(kernel, n) for n in range(50))):
            if n == 1:
                break
    finally:
        ex.close()
    assert len(boot.calls) <= 2 * ex.slots + 2          # the window, not the 50


def test_closing_kills_the_boots_still_running(fake):
    """A command that stops early (or Ctrl-C) closes the executor: QEMUs still running are killed, not waited
    for (they run in sessions of their own, which SIGINT does not reach)."""
    fake.canned("OpenSBI v1.1\n", mode="hang")
    ex = executor.Local(2, cores=[0, 1], reserve=0)
    futures = [ex._start(executor.qemu_task(1, f"job=gauss seed={n}", kernel=fake.kernel_path, deterministic=True))
               for n in range(2)]
    for _ in range(600):
        if len(qemu.OWN_PIDS) == 2:
            break
        time.sleep(0.05)
    assert len(qemu.OWN_PIDS) == 2
    ex.close()
    assert [f.result().exit_code for f in futures] == [-9, -9] and not qemu.OWN_PIDS


def test_compare_with_jobs_prints_and_writes_what_the_sequential_one_does(fake, capsys, tmp_path):
    """The tables, the ranking and the records of a compare are the same with --jobs 2 as one boot after
    another (on the fake kernel), but for where each boot ran."""
    fake.sim()
    outputs = []
    for jobs in ("1", "2"):
        path = tmp_path / f"jobs{jobs}.json"
        assert run_cli(fake, "compare", "--cpus", "1", "--repeat", "2", "--policies", "gang,timeslice",
                       "--jobs", jobs, "--reserve-cores", "0", "--json", str(path), "job=gauss", "job=oddeven") == 0
        records = json.loads(path.read_text())["records"]
        outputs.append((capsys.readouterr().out, [{k: v for k, v in r.items() if k != "cores"} for r in records]))
    assert outputs[0] == outputs[1] and len(outputs[0][1]) == 2 * 2 * (2 + 2)
    assert "gang" in outputs[0][0] and "slowdown" in outputs[0][0]


# ---------------------------------------------------------------- resume

def test_resume_boots_only_what_the_journal_lacks(kernel, fake_boot, tmp_path):
    boot = fake_boot()
    path = tmp_path / "j.jsonl"
    tasks = [task(kernel, 1), task(kernel, 1), task(kernel, 2)]   # seed 1 twice: two measurements, both kept
    first = list(executor.Sequential(Journal(path)).map(tasks))
    assert len(boot.calls) == 3 and len(path.read_text().splitlines()) == 3
    with open(path, "a") as handle:
        handle.write('{"key": "torn')                            # a write cut by the interrupt
    again = list(executor.Sequential(Journal(path, resume=True)).map(tasks + [task(kernel, 1), task(kernel, 3)]))
    assert len(boot.calls) == 5                                   # the third seed-1 run and seed 3 only
    assert [r.console for r in again[:3]] == [r.console for r in first]
    assert [r.placement for r in again[:3]] == [r.placement for r in first]


def test_a_failure_of_the_harness_is_not_journaled(kernel, fake_boot, tmp_path):
    fake_boot(lambda n, _: -9)
    path = tmp_path / "j.jsonl"
    executor.Sequential(Journal(path)).run(task(kernel, 1))
    assert not path.exists() or path.read_text() == ""


def test_a_journal_key_names_the_kernel_build(tmp_path):
    a, b = tmp_path / "a.elf", tmp_path / "b.elf"
    a.write_bytes(b"one build")
    b.write_bytes(b"another build")
    keys = {executor.qemu_task(1, "job=synth seed=1", kernel=k).key() for k in (a, b)}
    keys.add(executor.qemu_task(1, "job=synth seed=2", kernel=a).key())
    keys.add(executor.qemu_task(2, "job=synth seed=1", kernel=a).key())
    keys.add(executor.qemu_task(1, "job=synth seed=1", kernel=a, deterministic=True).key())
    keys.add(executor.qemu_task(1, "job=synth seed=1", kernel=a, model="iris").key())
    assert len(keys) == 6


def test_sweep_resume_after_an_interrupt_measures_nothing_twice(fake, capsys, tmp_path):
    fake.sim()
    prefix = tmp_path / "q"
    argv = ["sweep", "--cpus", "2", "--repeat", "3", "--vary", "quantum=2ms,5ms", "--out", str(prefix), "--no-plot",
            "job=gauss", "job=oddeven"]
    assert run_cli(fake, *argv) == 0
    whole = json.loads(prefix.with_suffix(".json").read_text())["records"]
    journal = prefix.with_name("q.journal.jsonl")
    lines = journal.read_text().splitlines()
    assert len(lines) == 6 and len(fake.calls()) == 6
    journal.write_text("\n".join(lines[:4]) + "\n")               # interrupted after four boots
    assert run_cli(fake, *argv, "--resume") == 0
    assert len(fake.calls()) == 8                                 # the two missing, nothing else
    assert "resume: 4 boots taken from" in capsys.readouterr().err
    assert json.loads(prefix.with_suffix(".json").read_text())["records"] == whole


# ---------------------------------------------------------------- the --jobs clamp and the cores

def test_the_jobs_clamp():
    assert affinity.timed_slots(2, 1, 8) == (2, None)
    slots, why = affinity.timed_slots(8, 2, 8)                    # (8 - 1) // 2
    assert slots == 3 and "--jobs 8: 3 timed boots at a time (8 host cores, 1 left free" in why
    assert affinity.timed_slots(4, 1, 2)[0] == 1                  # 2 cores: one 1-hart boot beside the reserve
    assert affinity.timed_slots(4, 1, 2, reserve=0)[0] == 2
    assert affinity.timed_slots(4, 2, 2)[0] == 1                  # nothing fits beside the reserve: one at a time
    assert affinity.timed_slots(4, 8, 2)[0] == 1


@pytest.mark.parametrize("deterministic", [False, True])
def test_boots_side_by_side_never_share_a_core(kernel, fake_boot, deterministic):
    """8 boots of 1 hart, --jobs 8 on 4 cores with 1 reserved: timed boots never on core 0 and never two on a
    core; deterministic ones may use every core, still one each."""
    running, seen, most, lock = set(), [], [0], threading.Lock()

    def hook(n, cores):
        with lock:
            assert not running & set(cores), f"core shared: {running} and {cores}"
            running.update(cores)
            seen.append(tuple(cores))
            most[0] = max(most[0], len(running))
        time.sleep(0.01)            # hold the cores a moment, so boots overlap (no time is asserted)
        with lock:
            running.difference_update(cores)
    fake_boot(hook)
    ex = executor.Local(8, cores=[0, 1, 2, 3], reserve=1)
    try:
        runs = list(ex.map(task(kernel, n, deterministic=deterministic) for n in range(8)))
    finally:
        ex.close()
    assert len(seen) == 8 and all(len(c) == 1 for c in seen)
    used = {c for cores in seen for c in cores}
    assert used <= ({0, 1, 2, 3} if deterministic else {1, 2, 3})
    assert sorted(r.placement["cores"] for r in runs) == sorted(affinity.cores_text(c) for c in seen)
    assert most[0] <= (4 if deterministic else 3)


def test_a_timed_boot_gets_cpus_cores_of_its_own(kernel, fake_boot):
    seen = []
    fake_boot(lambda n, cores: seen.append(sorted(cores)))
    ex = executor.Local(4, cores=[0, 1, 2, 3, 4], reserve=1)
    try:
        runs = list(ex.map(task(kernel, n, deterministic=False, cpus=2) for n in range(4)))
    finally:
        ex.close()
    assert all(len(c) == 2 and 0 not in c for c in seen)
    assert all(r.placement["cores"] in ("1-2", "3-4", "1,3", "1,4", "2-3", "2,4") for r in runs)


THREADED_QEMU = '''
import os, sys, threading, time
ready, done = threading.Barrier(4), threading.Event()
def vcpu():
    ready.wait(); done.wait()
threads = [threading.Thread(target=vcpu) for _ in range(3)]
for t in threads: t.start()
ready.wait()
for tid in sorted(os.listdir("/proc/self/task")):
    for line in open(f"/proc/self/task/{tid}/status"):
        if line.startswith("Cpus_allowed_list:"):
            print("THREAD", tid, line.split(":", 1)[1].strip())
done.set()
for t in threads: t.join()
sys.exit(0)
'''


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("with_taskset", [True, False])
def test_every_qemu_thread_is_on_the_cores_it_was_given(tmp_path, monkeypatch, kernel, with_taskset):
    """A QEMU (here a fake one starting three vCPU threads) pinned by the executor: every one of its threads'
    Cpus_allowed_list (/proc) is exactly the core the boot was given, through taskset or the trampoline."""
    script = tmp_path / "threaded_qemu.py"
    script.write_text(THREADED_QEMU)
    monkeypatch.setenv("SCHEDLAB_QEMU", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}")
    if not with_taskset:
        monkeypatch.setattr(affinity.shutil, "which", lambda name: None)
    for core in affinity.host_cores():
        pool = affinity.CorePool([core], reserve=0)
        run = executor.run_task(task(kernel, 1), pool)
        threads = [line.split() for line in run.console.splitlines() if line.startswith("THREAD")]
        assert len(threads) == 4, run.console
        assert {t[2] for t in threads} == {str(core)}
        assert run.placement["cores"] == str(core)


# ---------------------------------------------------------------- a Dask LocalCluster

@pytest.mark.qemu
def test_a_dask_cluster_gives_the_sequential_records(tmp_path, monkeypatch, capsys):
    """A deterministic-mode sweep (4 boots) on a LocalCluster of two workers declaring one core each: the
    records and consoles equal the sequential run's byte for byte, but for where they ran (host, cores)."""
    distributed = pytest.importorskip("distributed", reason="the Dask test needs the distributed package "
                                                            "(make deps installs it)")
    from schedlab import cli
    tools_py = str(Path(executor.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([tools_py, os.environ.get("PYTHONPATH", "")]))
    argv = ["sweep", "--deterministic", "--cpus", "1", "--repeat", "2", "--vary", "job1.iters=2,4", "--no-plot",
            "job=synth:procs=1"]
    assert cli.main([*argv, "--out", str(tmp_path / "seq")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"cores": 1},
                                  dashboard_address=None) as cluster:
        assert cli.main([*argv, "--out", str(tmp_path / "dask"), "--executor", cluster.scheduler_address]) == 0
    seq, dask = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("seq", "dask"))

    def without_place(rows, drop=("host", "cores")):
        return json.dumps([{k: v for k, v in r.items() if k not in drop} for r in rows], sort_keys=False)
    assert len(seq["records"]) == 4
    assert without_place(dask["records"]) == without_place(seq["records"])
    assert without_place(dask["runs"], ("host", "cores", "seconds")) == \
        without_place(seq["runs"], ("host", "cores", "seconds"))
    assert {r["cores"] for r in dask["records"]} <= {affinity.cores_text([c]) for c in affinity.host_cores()}


@pytest.mark.qemu
def test_a_deterministic_reproduce_section_is_the_same_at_any_jobs(tmp_path):
    """reproduce --deterministic: instruction-counted boots, so --jobs 2 (side by side) writes the rows that
    --jobs 1 writes, number for number; and docs/ is refused for such results."""
    from helpers import schedlab_cmd
    rows = []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        done = schedlab_cmd("reproduce", "--deterministic", "--quick", "--only", "markatos-table4.1", "--out",
                            str(out), "--jobs", str(jobs), timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        results = json.loads((out / "results.json").read_text())
        assert results["written"]["deterministic"] is True
        assert "deterministic mode" in (out / "results.md").read_text()
        rows.append([s["rows"] for s in results["sections"]])
    assert rows[0] == rows[1] and rows[0][0]
    refused = schedlab_cmd("reproduce", "--deterministic", "--quick", "--only", "markatos-table4.1", "--out",
                           "docs", timeout=120)
    assert refused.returncode != 0 and "docs/ holds only wall-clock" in refused.stderr
