"""The defects a hostile round found in the harness and the model's inputs, one test (or more) each,
named by item; each failed before its fix. Harness tests take the ``fake`` QEMU (tests/fake_qemu.py) and the
simulator; none boots a real QEMU. Correctness only: the bounded waits below are deadlines, never measured.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import schedlab
from helpers import run_cli
from schedlab import api, busy, cli, executor, inputs, model, model_limits, sweep
from schedlab.journal import Journal
from schedlab.qemu import REPO_ROOT, HarnessError, Run
from schedlab.console import parse_console

#: A console the harness takes for a finished boot.
CONSOLE = ("BOOT harts=1 nodes=1 mem_mb=256 policies=timeslice apps=synth boot_hart=0 boot_us=1\n"
           "RESULT job=1 app=synth policy=timeslice harts=1 procs=1 arrive_us=0 start_us=1 end_us=2 elapsed_us=5 "
           "cpu_us=1 check=ok\nSUMMARY policy=timeslice harts=1 jobs=1 failed=0 makespan_us=2\n")
MODERN = model.load_profile("modern")


def _wait_for(predicate, seconds: float) -> bool:
    """Poll until ``predicate()`` or the deadline (a bound on a wait, not a measurement)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# ---------------------------------------------------------------- 1: nodes QEMU's virt boots

@pytest.mark.parametrize("nodes,harts", [(4, 4), (3, 3), (8, 8)])
def test_1_nodes_beyond_what_virt_boots_are_refused(nodes, harts):
    with pytest.raises(model.ModelError, match=f"nodes={nodes} at {harts} harts: QEMU 7.2's virt"):
        model_limits.check(f"butterfly,nodes={nodes}", harts, host_bytes=1 << 40)


def test_1_a_paced_machine_without_a_profile_has_one_node():
    assert model_limits.check("pace=10000000", 4, host_bytes=1 << 30).canonical == "pace=10000000"


def test_1_nodes_clamped_to_the_harts_and_two_nodes_pass():
    assert model_limits.check("butterfly,nodes=64", 2, host_bytes=1 << 40)["nodes"] == 2
    assert model_limits.check("modern", 4, host_bytes=1 << 40)["nodes"] == 2


def test_1_the_cli_refuses_before_booting(fake, capsys):
    fake.canned(CONSOLE)
    assert run_cli(fake, "run", "--cpus", "4", "--model", "butterfly,nodes=4", "--sim", "job=synth") == 2
    assert "boots at most 2 NUMA nodes" in capsys.readouterr().err
    assert run_cli(fake, "run", "--cpus", "4", "--deterministic", "--model", "butterfly,nodes=4", "job=synth") == 2
    assert "boots at most 2 NUMA nodes" in capsys.readouterr().err and fake.calls() == []


def test_1_the_simulator_refuses_the_same_nodes():
    """The simulator's C limit is the harness's (one number on both sides, kept equal here)."""
    source = (REPO_ROOT / "tools" / "sim" / "sim_mem.c").read_text()
    assert f"#define SIM_MAX_NODES {model_limits.QEMU_MAX_NODES}\n" in source
    sim = REPO_ROOT / "build" / "sim" / "schedlab-sim"
    if not sim.is_file():
        pytest.skip("build/sim/schedlab-sim is not built (make sim)")
    argv = [str(sim), "--cpus", "4", "--apps", str(REPO_ROOT / "build" / "apps"), "--profiles",
            str(model.PROFILE_DIR), "--model"]
    refused = subprocess.run(argv + ["butterfly,nodes=4", "job=synth:iters=5"], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 2 and "at most 2 NUMA nodes" in refused.stderr, refused.stderr
    clamped = subprocess.run(argv[:2] + ["2"] + argv[3:] + ["butterfly,nodes=64", "job=synth:iters=5"],
                             capture_output=True, text=True, timeout=60)
    assert clamped.returncode == 0 and "RESULT" in clamped.stdout, clamped.stderr


# ---------------------------------------------------------------- 2: a lost Dask worker

def test_2_a_dask_worker_killed_mid_boot_is_survived(fake, tmp_path, monkeypatch):
    """A LocalCluster of one worker (processes, with its nanny); the first boot SIGKILLs its worker. The retry
    must not depend on the image scattered to the dead worker: every run comes back ok."""
    distributed = pytest.importorskip("distributed", reason="needs the distributed package (make deps)")
    from schedlab.executor_dask import Dask
    fake.canned(CONSOLE, mode="killparent")
    mark = tmp_path / "killed"
    monkeypatch.setenv("FAKE_QEMU_MARK", str(mark))
    monkeypatch.setenv("SCHEDLAB_IMAGE_CACHE", str(tmp_path / "images"))
    monkeypatch.setenv("SCHEDLAB_CORE_LOCKS", str(tmp_path / "locks"))
    tools_py = str(Path(executor.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([tools_py, os.environ.get("PYTHONPATH", "")]))
    tasks = [executor.qemu_task(1, f"job=synth seed={n}", kernel=fake.kernel_path, deterministic=True)
             for n in (1, 2, 3)]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"cores": 1},
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        runs = list(Dask(client=client).map(tasks))
    assert mark.exists()                # the worker was killed, and its boot with it (item 8 on a worker)
    assert _wait_for(lambda: not _alive(int(mark.read_text())), 20), "a QEMU outlived its Dask worker"
    assert [r.ok for r in runs] == [True, True, True], [r.console for r in runs]
    assert [r.bootargs.split()[1] for r in runs] == ["seed=1", "seed=2", "seed=3"]


# ---------------------------------------------------------------- 3: compare from two threads

def test_3_two_threads_comparing_leave_stdout_whole(fake, capsys, monkeypatch):
    """Thread A enters compare, waits (bounded) for B to enter too, and leaves first. Before: B's redirect
    restored A's buffer as sys.stdout, and later prints vanished."""
    fake.sim()
    entered, left = threading.Event(), threading.Event()
    real_main = cli.main

    def main(argv):
        first = threading.current_thread().name == "A"
        if not first:
            entered.set()
        status = real_main(argv)
        if first:
            entered.wait(1.0)               # serialized compares: B cannot enter, the wait just ends
            left.set()
        else:
            left.wait(5.0)
        return status

    monkeypatch.setattr(cli, "main", main)
    stdout = sys.stdout
    rows = {}

    def compare(name):
        rows[name] = schedlab.compare("job=gauss job=oddeven", cpus=2, policies="timeslice,gang", repeat=1,
                                      kernel=fake.kernel_path)
    threads = [threading.Thread(target=compare, args=(n,), name=n) for n in "AB"]
    threads[0].start()
    assert _wait_for(lambda: len(fake.calls()) > 0, 30)
    threads[1].start()
    print("the main thread's line")         # while a quiet compare runs: must reach the real stdout
    for thread in threads:
        thread.join(60)
    assert sys.stdout is stdout and len(rows) == 2 and rows["A"] == rows["B"]
    print("after both")
    out = capsys.readouterr().out
    assert "the main thread's line" in out and "after both" in out and "== compare" not in out


# ---------------------------------------------------------------- 4: nothing failed or flagged reaches docs/

@pytest.fixture
def docs_path():
    """A file name under the repository's docs/ that no one has (removed after the test)."""
    path = REPO_ROOT / "docs" / f"hostile-test-{os.getpid()}.json"
    yield path
    for leftover in path.parent.glob(path.stem + "*"):
        leftover.unlink()


def test_4_a_failed_run_is_not_written_under_docs(fake, docs_path, capsys):
    fake.replay("unknown-app")
    assert run_cli(fake, "run", "--cpus", "1", "--json", str(docs_path), "job=gaus") == 1
    assert not docs_path.exists() and "failed, and docs/ holds only" in capsys.readouterr().err


def test_4_a_trace_of_a_failed_run_is_not_written_under_docs(fake, docs_path, capsys):
    fake.replay("unknown-app")
    prefix = docs_path.with_suffix("")
    assert run_cli(fake, "run", "--cpus", "1", "--trace-out", str(prefix), "job=gaus") == 1
    assert not list(prefix.parent.glob(prefix.name + "*")) and "trace: not writing" in capsys.readouterr().err


def test_4_a_hog_started_just_before_the_boot_flags_it(busy_check):
    """The load average lags; the others' share of the CPU during the boot does not."""
    busy_check.load = busy.HostLoad(0.1, 2, ())
    run = Run(cpus=2, bootargs="job=synth", argv=[], console=CONSOLE, exit_code=0, parsed=parse_console(CONSOLE))
    run.others_cores = 1.0              # two `yes` hogs beside a 2-hart boot on 2 cores
    assert busy.assess(run).busy and "other processes kept 1.0 of 2 cores busy" in str(run.busy)
    run.others_cores = 0.05
    assert not busy.assess(run).busy


def test_4_the_others_share_is_the_host_less_our_children():
    before = busy.CpuSample(host_busy=100.0, children=10.0, wall=50.0)
    after = busy.CpuSample(host_busy=106.0, children=12.0, wall=52.0)
    assert busy.others_cores(before, after) == pytest.approx(2.0)
    assert busy.others_cores(before, busy.CpuSample(100.1, 10.0, 50.1)) is None     # too short to judge
    assert busy.cpu_sample() is None or busy.cpu_sample().host_busy > 0


def test_4_an_unpinned_boot_is_measured(fake, monkeypatch):
    fake.canned(CONSOLE)
    samples = iter([busy.CpuSample(0.0, 0.0, 0.0), busy.CpuSample(3.0, 1.0, 1.0)])
    monkeypatch.setattr(busy, "cpu_sample", lambda: next(samples))
    run = executor.run_task(executor.qemu_task(1, "job=synth", kernel=fake.kernel_path))
    assert run.others_cores == pytest.approx(2.0)


# ---------------------------------------------------------------- 5: user errors are one line

@pytest.mark.parametrize("entry", [{}, "garbage", {"cpus": 1, "bootargs": "", "argv": [], "console": 5,
                                                   "exit_code": 0, "timed_out": False, "seconds": 1.0}])
def test_5_a_journal_line_that_is_no_run_is_skipped(tmp_path, entry):
    path = tmp_path / "j.journal.jsonl"
    path.write_text(json.dumps({"key": "k", "n": 1, "run": entry}) + "\n")
    journal = Journal(path, resume=True)
    assert journal.lookup("k", 1) is None and journal.ignored == 1 and "1 line(s)" in journal.summary()


@pytest.mark.parametrize("address", ["dask://", "dask://127.0.0.1", "http://127.0.0.1:18786", "local",
                                     "dask://[::1", "dask://h:0", "dask://h:99999", "dask://h:８７"])
def test_5_a_bad_executor_address_is_one_line(fake, capsys, address):
    assert run_cli(fake, "run", "--executor", address, "job=synth") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected dask://HOST:PORT" in err and "Traceback" not in err


def test_5_good_executor_addresses_are_read():
    assert inputs.executor_address("dask://10.0.0.1:8786") == "tcp://10.0.0.1:8786"
    assert inputs.executor_address("tcp://node-3.lab:8786") == "tcp://node-3.lab:8786"
    assert inputs.executor_address("[::1]:8786") == "tcp://[::1]:8786"


def test_5_an_unterminated_qemu_extra_is_one_line(fake, capsys):
    assert run_cli(fake, "run", "--qemu-extra", '"unterminated', "job=synth") == 2
    err = capsys.readouterr().err
    assert "--qemu-extra" in err and "No closing quotation" in err and fake.calls() == []


@pytest.fixture
def profile(monkeypatch, tmp_path):
    """A profiles directory of its own: modern.conf copied, and a writable place for broken ones."""
    where = tmp_path / "profiles"
    where.mkdir()
    shutil.copy(model.PROFILE_DIR / "modern.conf", where / "modern.conf")
    monkeypatch.setattr(model, "PROFILE_DIR", where)
    return where


def test_5_a_profile_that_is_not_utf8_is_one_line(profile, fake, capsys):
    (profile / "bad.conf").write_bytes((profile / "modern.conf").read_bytes() + b"\xff\n")
    with pytest.raises(model.ModelError, match=r"bad.conf is not UTF-8 text \(byte 0xff"):
        model_limits.check("bad", 2)
    assert run_cli(fake, "run", "--model", "bad", "--sim", "job=synth") == 2
    assert "not UTF-8" in capsys.readouterr().err


# ---------------------------------------------------------------- 6: a huge --repeat is refused

def test_6_a_huge_repeat_is_refused_before_anything(fake, capsys):
    with pytest.raises(SystemExit):
        cli.main(["compare", "--sim", "--cpus", "1", "--repeat", "1000000000", "job=gauss"])
    assert "--repeat: 1000000000: expected a whole number 1..10000" in capsys.readouterr().err
    with pytest.raises(HarnessError, match="repeat=1000000000"):
        schedlab.compare("job=gauss", cpus=1, repeat=10 ** 9, sim=True)
    scenario = fake.path / "many.scn"
    scenario.write_text("# repeat: 1000000000\njob=synth\n")
    assert run_cli(fake, "run", "--cpus", "1", str(scenario)) == 2 and fake.calls() == []


# ---------------------------------------------------------------- 7: caches that exhaust the host

def test_7_caches_beyond_the_host_memory_are_refused():
    spec = "modern,line_b=16,l1_kb=1048576,l1_ways=64,l2_kb=1048576,l2_ways=64"
    values = dict(model.parse_spec(spec).values)
    need = model_limits.footprint_bytes(values, 4, 256)
    assert need > (2 << 30)             # 64 Mi lines a level, 4 bytes a tag, 4 harts: 2 GB of tags alone
    with pytest.raises(model.ModelError, match=r"need .* GB of host memory at 4 harts"):
        model_limits.check(spec, 4, host_bytes=4 << 30)
    assert model_limits.check("modern", 4, host_bytes=4 << 30) is not None


# ---------------------------------------------------------------- 8: QEMU dies with the harness

def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux /proc")
def test_8_sigkill_of_the_cli_takes_qemu_with_it(fake, tmp_path):
    fake.canned("OpenSBI v1.1\n", mode="hang")
    selfpid = tmp_path / "qemu.pid"
    env = {**os.environ, "FAKE_QEMU_SELFPID": str(selfpid),
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "tools" / "py"), os.environ.get("PYTHONPATH", "")])}
    cli_proc = subprocess.Popen([sys.executable, "-m", "schedlab", "run", "--kernel", fake.kernel_path, "--cpus",
                                 "1", "--timeout", "120", "job=synth"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    grandchild = tmp_path / "child.pid"
    try:
        assert _wait_for(lambda: selfpid.is_file() and selfpid.read_text() and grandchild.is_file(), 60)
        pid = int(selfpid.read_text())
        assert _alive(pid)
        cli_proc.kill()
        cli_proc.wait(30)
        assert _wait_for(lambda: not _alive(pid), 20), f"QEMU (pid {pid}) outlived the harness"
    finally:
        for path in (selfpid, grandchild):
            if path.is_file() and path.read_text():
                try:
                    os.kill(int(path.read_text()), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if cli_proc.poll() is None:
            cli_proc.kill()


# ---------------------------------------------------------------- 9: a torn journal line

def test_9_a_torn_line_does_not_swallow_the_next_record(tmp_path):
    path = tmp_path / "j.journal.jsonl"
    run = Run(cpus=1, bootargs="job=synth", argv=[], console=CONSOLE, exit_code=0, parsed=parse_console(CONSOLE))
    first = Journal(path)
    first.store("a", 1, run)
    first.close()
    with open(path, "a") as handle:
        handle.write('{"key": "b", "n": 1, "run": {"cpus"')           # killed mid-write
    again = Journal(path, resume=True)
    again.store("c", 1, run)
    again.close()
    third = Journal(path, resume=True)
    assert third.lookup("a", 1) and third.lookup("c", 1) and third.ignored == 1


# ---------------------------------------------------------------- 10: one command per output

def test_10_a_second_sweep_on_the_same_out_is_refused(fake, tmp_path, capsys):
    fake.sim()
    out = tmp_path / "shared"
    holder = Journal(tmp_path / "shared.journal.jsonl")         # the first sweep, still running
    assert run_cli(fake, "sweep", "--cpus", "2", "--repeat", "1", "--vary", "quantum=2ms,5ms", "--no-plot",
                   "--out", str(out), "job=gauss") == 2
    assert "in use by another command" in capsys.readouterr().err and fake.calls() == []
    holder.close()
    assert run_cli(fake, "sweep", "--cpus", "2", "--repeat", "1", "--vary", "quantum=2ms,5ms", "--no-plot",
                   "--out", str(out), "job=gauss") == 0


# ---------------------------------------------------------------- 11: user errors are not retried

@pytest.mark.parametrize("said", ["-bogusflag: invalid option", "Parameter 'smp.cpus' expects integer"])
def test_11_qemu_refusing_its_command_line_is_reported_once(fake, capsys, said):
    fake.canned(f"qemu-system-riscv64: {said}\n", exit_code=1)
    assert run_cli(fake, "run", "--cpus", "1", "--qemu-extra=-bogusflag", "job=synth") == 2
    assert f"QEMU refused its command line: qemu-system-riscv64: {said}" in capsys.readouterr().err
    assert len(fake.calls()) == 1                   # not retried as an infrastructure failure


@pytest.mark.parametrize("cpus", [1.5, "2", True, None, 0, 65])
def test_11_12_api_cpus_must_be_a_whole_number(fake, cpus):
    with pytest.raises(HarnessError, match="cpus="):
        schedlab.run("job=synth", cpus=cpus, kernel=fake.kernel_path)
    with pytest.raises(HarnessError, match="cpus="):
        schedlab.compare("job=synth", cpus=cpus, kernel=fake.kernel_path)
    assert fake.calls() == []


# ---------------------------------------------------------------- 12: small ones

@pytest.mark.parametrize("spec", ["modern,l1_kb=３２", "modern,l1_kb=32 ", " modern", "modern,l1_kb=3\u00a02"])
def test_12_full_width_digits_and_spaces_in_a_spec_are_refused(spec):
    with pytest.raises(model.ModelError, match="ASCII with no spaces"):
        model_limits.check(spec, 2)


def test_12_full_width_digits_on_the_command_line_are_refused(fake, capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--cpus", "３", "job=synth"])
    assert "expected a whole number written in the digits 0-9" in capsys.readouterr().err


def test_12_a_setting_given_twice_is_refused(fake, capsys):
    assert run_cli(fake, "run", "--cpus", "1", "window=4", "window=5", "job=synth") == 2
    assert "window= is given twice (window=4 window=5)" in capsys.readouterr().err and fake.calls() == []


def test_12_a_profile_that_is_a_directory_says_so(profile):
    (profile / "iris.conf").mkdir()
    with pytest.raises(model.ModelError, match="iris.conf is not a regular file"):
        model_limits.check("iris", 2)


@pytest.mark.parametrize("kwargs,match", [
    ({"repeat": 0}, "repeat=0"), ({"model": 5}, "model 5"), ({"policies": [None]}, "policies="),
    ({"policies": []}, "policies="), ({"policies": ""}, "policies="), ({"tokens": ""}, "empty mix"),
    ({"timeout": "600"}, "timeout="), ({"quiet": "yes"}, "quiet="), ({"tokens": [1]}, "tokens=")])
def test_12_api_arguments_of_the_wrong_kind_are_one_line(fake, kwargs, match):
    given = {"tokens": "job=gauss", **kwargs}
    with pytest.raises(HarnessError, match=match) as caught:
        schedlab.compare(given.pop("tokens"), cpus=1, kernel=fake.kernel_path, **given)
    assert "\n" not in str(caught.value) and fake.calls() == []


def test_12_a_failed_row_keeps_its_policy():
    """A point that asked no policy and failed before printing one (a lost worker) joins its policy's row."""
    vary = sweep.Vary("quantum", ("2ms",))
    points = sweep.plan(vary, ["job=synth"], [None], 2)
    ok = Run(cpus=1, bootargs="", argv=[], console=CONSOLE, exit_code=0, parsed=parse_console(CONSOLE))
    lost = executor.failed_run(executor.qemu_task(1, "job=synth"), "a lost worker")
    labels = {s.policy for s in sweep.summarise([(points[0], lost), (points[1], ok)], vary, "elapsed_us")}
    assert labels == {"timeslice"}


# ---------------------------------------------------------------- 13: the simulator follows its source list

@pytest.mark.skipif(shutil.which("make") is None or shutil.which("cc") is None, reason="needs make and cc")
def test_13_a_removed_policy_leaves_the_simulator(tmp_path):
    """Built with tests/policies/fifo.c, then without it: the second build has no fifo. Before: nothing was
    newer than the simulator, so it was not linked again and still ran fifo. (The built objects are copied,
    timestamps kept, so only what differs is compiled.)"""
    out = tmp_path / "sim"
    if (REPO_ROOT / "build" / "sim" / "obj").is_dir():
        shutil.copytree(REPO_ROOT / "build" / "sim" / "obj", out / "obj", symlinks=True)

    def build(*extra):
        done = subprocess.run(["make", "-s", f"SIM_OUT={out}", *extra, f"{out}/schedlab-sim"], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        boot = subprocess.run([str(out / "schedlab-sim"), "--cpus", "1", "--apps", str(REPO_ROOT / "build" / "apps"),
                               "policy=fifo job=synth:procs=1,iters=2"], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=120)
        return boot
    assert "RESULT" in build("EXTRA_POLICIES=tests/policies/fifo.c").stdout
    after = build()
    assert after.returncode != 0 and "RESULT" not in after.stdout, after.stdout[-1000:]
    assert "fifo" not in (out / "sources.list").read_text()


# ---------------------------------------------------------------- the fuzz test of the harness's own inputs

FUZZ_SEED, FUZZ_EACH = 48, 2000
_PIECES = ["modern", "iris", "butterfly", "none", "bogus", ",", "=", "l1_kb", "nodes", "line_b", "llc_ways", "0",
           "1", "2", "32", "64", "1048576", "99999999999999999999", "-1", "３２", " ", "\t", "\u00a0", "é", "\x00",
           "/", "..", "[", "]", ":", "dask://", "tcp://", "http://", "127.0.0.1", "::1", "8786", "h", "%", "\n"]
#: Values of every type an API caller might hand over.
_VALUES = [None, 0, 1, 2, -1, 1.5, float("nan"), float("inf"), 10 ** 12, True, False, "", "2", "job=gauss",
           "job=gauss job=oddeven", "timeslice,gang", ",", "modern", "modern,nodes=64", [], [None], [""], ["gang"],
           ["job=gauss"], [1], (), {}, b"job=gauss", object()]


def _text(rng, pieces=_PIECES, most=8) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))


def _spec(rng) -> str:
    """A spec: random pieces, or a profile with key=value pairs of real and junk keys and values."""
    if rng.random() < 0.3:
        return _text(rng)
    keys = list(model.KEYS) + ["pace", "lead", "bogus", "", "L1_KB"]
    values = ["0", "1", "2", "3", "16", "32", "64", "512", "1024", "65", "1048576", "-1", "x", "", "３", "auto",
              "10000000"]
    pairs = [f"{rng.choice(keys)}={rng.choice(values)}" for _ in range(rng.randint(0, 4))]
    head = rng.choice(["modern", "iris", "butterfly", "ksr1", "symmetry", "nope", "pace=auto", "pace=10000000"])
    return ",".join([head] + pairs)


def _address(rng) -> str:
    if rng.random() < 0.3:
        return _text(rng)
    host = rng.choice(["127.0.0.1", "node-1.lab", "[::1]", "[::1", "::1", "", "h", "-h", "a" * 300])
    port = rng.choice(["8786", "0", "65535", "65536", "", "８", "x", "8786/path"])
    return f"{rng.choice(['dask://', 'tcp://', 'http://', ''])}{host}{rng.choice([':', '', '::'])}{port}"


def _one_line_or_none(call):
    """Run ``call``: a value, or a HarnessError of one line; anything else fails the test."""
    try:
        return call()
    except HarnessError as exc:
        assert "\n" not in str(exc).strip(), str(exc)
        return None


def _journal_lines(rng, count: int) -> list[str]:
    """Valid entries, their mutations (keys dropped, types changed, cut short) and noise."""
    run = Run(cpus=1, bootargs="job=synth", argv=["q"], console=CONSOLE, exit_code=0, parsed=parse_console(CONSOLE))
    good = {"key": "k", "n": 1, "run": __import__("schedlab.journal").journal.run_to_dict(run)}
    lines = []
    for i in range(count):
        entry = json.loads(json.dumps(good))
        entry["key"] = f"k{i}"
        target = entry["run"] if rng.random() < 0.7 else entry
        for _ in range(rng.randint(0, 2)):
            name = rng.choice(sorted(target))
            if rng.random() < 0.3:
                del target[name]
            else:
                target[name] = rng.choice([v for v in _VALUES if isinstance(v, (type(None), int, float, str, list, dict))])
        text = json.dumps(entry, allow_nan=True)
        if rng.random() < 0.2:
            text = text[:rng.randint(0, len(text))]
        lines.append(text if rng.random() < 0.9 else _text(rng))
    return lines


def test_fuzz_the_harness_inputs(tmp_path, fake):
    """Spec strings, journal lines, executor addresses and the API's argument types, FUZZ_EACH of each (seeded):
    every one is taken or refused with one line - never a traceback."""
    import random
    rng = random.Random(FUZZ_SEED)
    taken = {"spec": 0, "address": 0}
    for _ in range(FUZZ_EACH):
        harts = rng.randint(1, 9)
        spec = _spec(rng)
        taken["spec"] += _one_line_or_none(lambda: model_limits.check(spec, harts, host_bytes=1 << 34)) is not None
        taken["address"] += _one_line_or_none(lambda: inputs.executor_address(_address(rng))) is not None
    assert all(0 < n < FUZZ_EACH for n in taken.values()), taken      # both taken and refused inputs
    path = tmp_path / "fuzz.journal.jsonl"
    path.write_text("\n".join(_journal_lines(rng, FUZZ_EACH)) + "\n")
    journal = Journal(path, resume=True)
    found = [journal.lookup(f"k{i}", 1) for i in range(FUZZ_EACH)]
    assert all(r is None or isinstance(r.console, str) for r in found)
    written = [line for line in path.read_text().splitlines() if line.strip()]
    # every line is an entry (keys may repeat: the last one stands) or ignored, and both kinds occur
    assert journal.resumed + journal.ignored <= len(written) and journal.resumed > 0 and journal.ignored > 0
    journal.close()
    missing = str(tmp_path / "no-kernel.elf")           # what passes the checks stops at the missing kernel
    for _ in range(FUZZ_EACH // 5):
        pick = lambda: rng.choice(_VALUES)              # noqa: E731
        _one_line_or_none(lambda: api._compare_args(pick(), pick(), pick(), pick(), pick(), pick(), pick(),
                                                    pick(), pick(), pick(), pick(), pick()))
        _one_line_or_none(lambda: schedlab.run(pick(), cpus=pick(), kernel=missing, sim=rng.choice([False, 1]),
                                               deterministic=pick(), model=pick(), timeout=pick(),
                                               qemu_extra=pick()))
    assert fake.calls() == []


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_13_the_kernel_follows_its_lists_of_objects_and_apps(tmp_path):
    """make -t marks a kernel with fifo.c up to date (nothing is compiled); make -q then asks whether the kernel
    without it, or with fewer apps, needs linking again. Before: no (nothing was newer), the stale kernel stood."""
    b = tmp_path / "b"
    for directory in (REPO_ROOT / "build").glob("*"):
        if directory.name in ("kernel", "u", "apps") and directory.is_dir():
            for sub in [directory, *(p for p in directory.rglob("*") if p.is_dir())]:
                (b / sub.relative_to(REPO_ROOT / "build")).mkdir(parents=True, exist_ok=True)
    for sub in ("kernel/sched", "u/lib", "u/apps", "apps", "extra/tests/policies"):
        (b / sub).mkdir(parents=True, exist_ok=True)
    fifo = "EXTRA_POLICIES=tests/policies/fifo.c"

    def make(*args):
        return subprocess.run(["make", "-s", f"B={b}", "KCHECKS=0", *args, f"{b}/kernel.elf"], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=300)
    touched = make("-t", fifo)
    assert touched.returncode == 0, touched.stderr[-2000:]
    assert make("-q", fifo).returncode == 0                 # up to date as it is
    assert make("-q").returncode == 1                       # fifo.c gone: link again
    apps = sorted(p.stem for p in (REPO_ROOT / "apps").glob("*.c"))[:2]
    assert make("-q", fifo, f"APPS={' '.join(apps)}").returncode == 1     # apps gone: embed again
