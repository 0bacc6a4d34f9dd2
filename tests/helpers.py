"""What the test modules share (tests never import one another: they import this, and take the fixtures of
conftest.py): assertions on a run, the consoles recorded from real boots that the harness tests replay, and
the harness's command run in-process (``run_cli``, with the ``fake`` QEMU) or as a user runs it
(``schedlab_cmd``), and the explorer's executor stood in for (``every_boot_is``)."""

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab import cli, explore

REPO = Path(__file__).resolve().parents[1]


def assert_all_ok(run):
    """The boot ended by itself, every job verified its answer, and nothing printed ERROR or PANIC."""
    assert not run.timed_out, run.console[-2000:]
    assert not run.panics and not run.errors, run.console[-2000:]
    assert not run.parsed.job_errors(), run.parsed.job_errors()    # no app printed ERROR (sl_die) either
    assert run.exit_code == 0, run.console[-2000:]
    assert run.results and all(r["check"] == "ok" for r in run.results), run.results
    assert run.summary["failed"] == 0 and run.summary["jobs"] == len(run.results)


#: A small scenario of each bundled app (tests/test_apps.py boots each; test_model_counts takes one per app).
APPS = {
    "gauss-barrier-spin": "job=gauss:n=64,sync=barrier,barrier=spin",
    "gauss-barrier-block": "job=gauss:n=64,sync=barrier,barrier=block",
    "gauss-cond-spin": "job=gauss:n=64,sync=cond,barrier=spin",
    "gauss-cond-block": "job=gauss:n=64,sync=cond,barrier=block",
    "oddeven-spin": "job=oddeven:n=300,barrier=spin",
    "oddeven-block": "job=oddeven:n=300,barrier=block",
    "synth-spin": "job=synth:grain=200,var=200,iters=200,barrier=spin",
    "synth-block": "job=synth:grain=200,var=200,iters=200,barrier=block",
    "msort-mcs": "job=msort:n=2000,leaf=16,place=mcs",
    "msort-lb": "job=msort:n=2000,leaf=16,place=lb",
    "grassfire-mcs": "job=grassfire:n=48,place=mcs",
    "grassfire-coarse": "job=grassfire:n=48,variant=coarse",
    "sor-spin": "job=sor:n=24,iters=3,sched=afs,barrier=spin",
    "tclosure-block": "job=tclosure:n=40,sched=trapezoid,barrier=block",
    "adjoint-spin": "job=adjoint:n=12,sched=mod-factoring,barrier=spin",
    "hog-with-gauss": "job=gauss:n=48,barrier=block job=hog",
    "fault-badptr": "job=fault:kind=badptr",
    "scribble-partial": "job=scribble:mode=partial,lines=4,gap_us=50",
    "chaos-random": "job=chaos:mode=random,calls=200",
}


# ---------------------------------------------------------------- the harness's command

def run_cli(fake, *argv):
    """Run the CLI in-process with the fake kernel (the ``fake`` fixture); returns the exit status."""
    return cli.main([argv[0], "--kernel", fake.kernel_path, *argv[1:]])


def schedlab_cmd(*argv, timeout=300, env=None):
    """``tools/schedlab ARGV...`` in a child process from the checkout, as a user runs it (with this test's
    interpreter, installed package or not); the CompletedProcess with text stdout and stderr."""
    return subprocess.run([sys.executable, str(REPO / "tools" / "schedlab"), *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


# ---------------------------------------------------------------- recorded consoles (tests/data/consoles)

CONSOLES = REPO / "tests" / "data" / "consoles"
RECORDED = json.loads((CONSOLES / "index.json").read_text())


def recorded(name: str) -> str:
    """A console recorded from a real boot (`tools/schedlab record-consoles`), as QEMU printed it."""
    return (CONSOLES / f"{name}.console").read_bytes().decode("utf-8", "replace")


def line_of(text: str, prefix: str) -> str:
    """The first line of a console that starts with prefix, without its line ending."""
    return next(line.rstrip("\r") for line in text.split("\n") if line.startswith(prefix))


def value_of(line: str, key: str) -> str:
    """The value of key=value in a console line, read without the harness's parser."""
    return next(word.partition("=")[2] for word in line.split() if word.startswith(key + "="))


CONSOLE = recorded("gang-trace")          # policy=gang trace=on, gauss (job 1) and hog (job 2), CPUS=2
GAUSS = line_of(CONSOLE, "RESULT job=1 ")
SUMMARY = line_of(CONSOLE, "SUMMARY ")


LOOPSCHED = REPO / "build" / "host" / "loopsched"


def host_grabs(sched, n, p):
    """The library's loop scheduler on the host (build/host/loopsched, P processes taking turns): its grabs and
    remote grabs over a loop of n iterations."""
    if not LOOPSCHED.is_file():
        pytest.skip("build/host/loopsched is missing: run `make host`")
    out = subprocess.run([str(LOOPSCHED), "--sched", sched, "--n", str(n), "--p", str(p), "--quiet"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    last = dict(kv.split("=") for kv in out.stdout.split())
    return int(last["grabs"]), int(last["remote"])


# ---------------------------------------------------------------- builds the tests make themselves

@contextlib.contextmanager
def build_lock(out):
    """An exclusive lock for building into the directory ``out`` (``<out>.lock`` beside it): pytest-xdist's
    workers (make test runs one per core) and two sessions in one tree take turns, and the second finds the
    build up to date instead of writing the same files at the same time."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield out
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def seed_build(out, parts, base=REPO / "build", skip=()):
    """Start the build directory ``out`` from the main build's (``base``) subdirectories ``parts``, copied with
    their timestamps, so that make there compiles only what differs - the extra policy file, or everything if
    the stamps (KCHECKS=) or the sources say so - instead of every file of the tree again. Nothing that is
    linked is copied: make links ``out``'s own kernel or simulator. A part ``out`` already has, or the main
    build lacks, is left alone (make builds it). ``skip``: names not to copy (generated for their build dir)."""
    for part in parts:
        src, dst = Path(base) / part, Path(out) / part
        if src.is_dir() and not dst.exists():
            shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(*skip))


#: What a kernel build elsewhere (make B=...) takes from build/: its objects and the apps; apps_blob.S names
#: its own build directory's ELFs, so it is made again there.
KERNEL_PARTS, KERNEL_SKIP = ("kernel", "u", "apps"), ("apps_blob.*",)


def seed_kernel_build(out):
    seed_build(out, KERNEL_PARTS, skip=KERNEL_SKIP)


def seed_sim_build(sim_out):
    """A simulator build elsewhere (make SIM_OUT=...) starts from build/sim's objects (the same flags)."""
    seed_build(sim_out, ("obj",), base=REPO / "build" / "sim")


def every_boot_is(monkeypatch, make_run, check_task=lambda task: None):
    """explore's executor and listing stood in for: each task checked, each boot's Run made by make_run."""
    class Ex:
        slots = 1
        def __enter__(self): return self
        def __exit__(self, *a): pass
        def map(self, tasks):
            for task in tasks:
                check_task(task)
            return [timed(make_run()) for _ in tasks]
    def timed(run):     # a stand-in Run: host seconds as a real one has them
        if not hasattr(run, "seconds"):
            run.seconds = 0.25
        return run
    monkeypatch.setattr(explore, "build_listing", lambda kernel=None: (["gang"], ["synth"], set()))
    monkeypatch.setattr(explore.executor, "use", lambda ex: ex)
    monkeypatch.setattr(explore.executor, "from_args", lambda args, cpus=1: Ex())
