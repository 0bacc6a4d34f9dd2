"""A job's start-up in the simulator's memory (issue 28, item 3; tools/sim/sim_start.c): the library's heap, the
further processes' stacks and the page-table pages the kernel zeroes in the job's own system calls, which QEMU's
plugin counts as the job's misses. Correctness only, never timings: the counts follow from the model's sizes,
the sizes from the build (checked against QEMU's mem_kb), and a run is the same bytes twice."""

import os
import re
import subprocess

import pytest

from schedlab.qemu import REPO_ROOT
from schedlab.sim import ensure_sim, sim_argv, sim_boot

ASAN = REPO_ROOT / "build" / "sim-asan" / "schedlab-sim"
if ASAN.is_file():
    os.environ.setdefault("SCHEDLAB_SIM", str(ASAN))

KIB = 1024
STACK = 64 * KIB            # SL_STACK_SIZE (include/schedlab/abi.h)
STRIDE = 1024 * KIB         # SL_STACK_STRIDE
TOP = 0x80000000            # SL_STACK_TOP
SPAN = 2 * 1024 * KIB       # what one Sv39 level-0 page-table page maps
HEAP = {"synth": 216, "hog": 152}   # sim_start.c's table, KiB, + 16 KiB (a worker's thread stack) per process


def stats(cpus, bootargs, model):
    """The run's stdout, its `sim: start-up` lines as {job: {heap_kb, stacks_kb, table_pages}} and the bytes of
    a process's kernel state (its trap frame and context) it says."""
    ensure_sim()
    p = subprocess.run(sim_argv(cpus, bootargs, model=model) + ["--stats"], capture_output=True, text=True,
                       check=True)
    got = {}
    for m in re.finditer(r"^sim: start-up job=(\d+) heap_kb=(\d+) stacks_kb=(\d+) table_pages=(\d+)$", p.stderr,
                         re.M):
        got[int(m[1])] = {"heap_kb": int(m[2]), "stacks_kb": int(m[3]), "table_pages": int(m[4])}
    kstate = int(re.search(r"^sim: kernel state (\d+) bytes a process", p.stderr, re.M)[1])
    return p.stdout, got, kstate


def result(stdout, job):
    line = re.search(rf"^RESULT job={job} .*$", stdout, re.M)[0]
    return dict(kv.split("=", 1) for kv in line.split()[1:])


def table_pages(procs, heap_bytes):
    """Page-table pages a job's own system calls zero: its heap's 2 MiB spans, and a stack window's span that
    no earlier process's stack reached (process 0's, at admission, is not the job's)."""
    span = [(TOP - i * STRIDE - STACK) // SPAN for i in range(procs)]
    return -(-heap_bytes // SPAN) + sum(span[i] != span[i - 1] for i in range(1, procs))


def model_line(stdout, job):
    m = re.search(rf"^MODEL job={job} accesses=(\d+) misses=(\d+) ", stdout, re.M)
    return (int(m[1]), int(m[2])) if m else (0, 0)


@pytest.mark.parametrize("profile, line_b", [("iris", 16), ("modern", 64), ("ksr1", 128)])
@pytest.mark.parametrize("procs", [1, 2, 3, 4])
def test_start_up_misses_are_the_lines_the_model_zeroes(profile, line_b, procs):
    """synth touches nothing but its start-up and its processes' kernel state: every zeroed line is a cold
    miss, and each process's kernel state misses once, on the hart it stays on (timeslice binds it)."""
    out, got, kstate = stats(2, f"job=synth:procs={procs},iters=20", profile)
    heap = (HEAP["synth"] + 16 * procs) * KIB
    want = {"heap_kb": heap // KIB, "stacks_kb": 64 * (procs - 1), "table_pages": table_pages(procs, heap)}
    assert got == {1: want}
    assert result(out, 1)["migrations"] == "0"
    zeroed = heap + (procs - 1) * STACK + want["table_pages"] * 4096
    accesses, misses = model_line(out, 1)
    # beyond the zeroed lines: each process's kernel state, and the kernel's own lines at its ticks and
    # switches (sim_kernel.c: its 512 B of kernel stack once at least, and the shared words, some of them
    # again after the other hart wrote them)
    floor = zeroed // line_b + procs * (-(-kstate // line_b) + -(-512 // line_b))
    assert floor <= misses <= floor + 20 * (procs + 1) + 12 * int(result(out, 1)["switches"]), misses - floor
    assert accesses > zeroed // 8 + procs * kstate // 8


def test_a_hog_under_the_model_gets_its_start_up_misses():
    """A hog keeps its work in registers: before, it had no MODEL line at all; QEMU counts its start-up."""
    out, got, kstate = stats(2, "policy=timeslice quantum=1ms job=synth:procs=1,iters=200 job=hog:procs=2",
                             "modern")
    heap = (HEAP["hog"] + 16 * 2) * KIB
    assert got[2] == {"heap_kb": heap // KIB, "stacks_kb": 64, "table_pages": 1}
    assert result(out, 2)["migrations"] == "0"
    # and its kernel state and kernel stack (512 B) each miss once a process, the kernel's shared words at its
    # ticks and switches (sim_kernel.c) a few times a switch
    floor = (heap + STACK + 4096) // 64 + 2 * (-(-kstate // 64) + 512 // 64)
    assert floor <= model_line(out, 2)[1] <= floor + 40 + 12 * int(result(out, 2)["switches"])


def test_a_process_that_changes_harts_meets_its_kernel_state_in_the_other_harts_cache():
    """Under global, 3 blocking processes on 2 harts go back to whichever hart is free: beyond its cold
    lines, a process's kernel state is a coherence miss each time it comes back on the other hart."""
    out, got, kstate = stats(2, "policy=global quantum=1ms job=synth:procs=3,iters=500,barrier=block", "modern")
    heap = (HEAP["synth"] + 16 * 3) * KIB
    assert got[1] == {"heap_kb": heap // KIB, "stacks_kb": 128, "table_pages": 2}
    cold = (heap + 2 * STACK + 2 * 4096) // 64 + 3 * -(-kstate // 64)
    m = re.search(r"^MODEL job=1 accesses=\d+ misses=(\d+) .* coherence=(\d+) ", out, re.M)
    assert int(m[2]) > 0 and int(m[1]) > cold
    quiet, _, _ = stats(2, "policy=timeslice quantum=1ms job=synth:procs=2,iters=500,barrier=block", "modern")
    # bound to their harts: their kernel states stay put; what moves is the kernel's shared words (sim_kernel.c)
    q = re.search(r"^MODEL job=1 accesses=\d+ misses=(\d+) .* coherence=(\d+) ", quiet, re.M)
    assert int(q[2]) < int(m[2])


def test_start_up_is_deterministic():
    argv = sim_argv(2, "policy=gang quantum=1ms job=gauss:n=64,procs=2 job=hog:procs=2", model="modern")
    ensure_sim()
    outs = [subprocess.run(argv, capture_output=True, check=True).stdout for _ in range(2)]
    assert outs[0] == outs[1]
    assert b"\nMODEL job=2 " in outs[0]


def test_start_up_lands_before_the_apps_clock():
    """The zeroing's stall goes into process 0's set-up and proc_create, before the first barrier: a job's
    par_us is its work's alone, whatever its start-up costs."""
    plain = sim_boot(2, "job=synth:procs=2,iters=50")
    slow = sim_boot(2, "job=synth:procs=2,iters=50", model="butterfly")
    assert plain.ok and slow.ok
    assert slow.results[0]["par_us"] == plain.results[0]["par_us"]
    assert slow.results[0]["start_us"] == plain.results[0]["start_us"]
    assert slow.results[0]["elapsed_us"] > plain.results[0]["elapsed_us"]


# The heap table against the build: QEMU's mem_kb less the stacks is the job's heap (library and arrays).
@pytest.mark.parametrize("bootargs", [
    "job=synth:procs=1,iters=10",
    "job=synth:procs=2,iters=10",
    "job=synth:procs=1,iters=10 job=hog:procs=2",
    "job=gauss:n=256,variant=coarse,sync=barrier,procs=2",
    "job=sor:n=256,iters=1,sched=static,procs=2",
    "job=oddeven:n=1000,procs=2",
])
def test_the_heap_sizes_are_the_builds(boot, bootargs):
    q = boot(2, bootargs, timeout=120, deterministic=True)
    assert q.ok, q.console[-2000:]
    _, got, _ = stats(2, bootargs, "modern")
    for r in q.results:
        assert got[r["job"]]["heap_kb"] == r["mem_kb"] - 64 * r["procs"], (r["app"], got)
