"""Fine-grain threads on QEMU: gauss variant=fine (Markatos 3.3.4 versions 1 and 2) with memory-conscious
(place=mcs) and load-balancing (place=lb) placement, sync=barrier and sync=cond, at CPUS=1, 2 and 4 with
more processes than harts; the row copies each placement must make (mcs copies only pivot rows, once per
process and column; lb three rows per update); the same under gang and partition, with process control
suspending the homes of pinned threads; knary (work stealing) and its static partition with more
processes than harts under gang and partition; every barrier shape with every wait kind under gang; and
the host build of fine gauss (no QEMU).

The apps check their own answers (gauss: x against the known solution, every update found its rows
ready, the update and thread counts add up; knary: the closed-form node count and checksum); these tests
add the counts the definitions give."""

import subprocess

import pytest

from conftest import REPO_ROOT
from helpers import assert_all_ok

SHAPES = ["central", "tree", "combination"]
WAITS = ["spin", "block", "twophase", "adaptive"]


def updates(n):
    """Threads (i, k), i > k: one per row update."""
    return n * (n - 1) // 2


def mcs_copies(n, procs):
    """Pivot copies under mcs: in column k every process holding a row below k except the pivot's home."""
    total = 0
    for k in range(n - 1):
        below = n - 1 - k                           # rows k+1 .. n-1
        holders = min(procs, below)                 # their homes i % procs, all distinct while below < procs
        total += holders - (1 if below >= procs else 0)   # home(k) = k % procs holds one of them iff below >= procs
    return total


def by_key(run, **keys):
    return [r for r in run.results if all(r.get(k) == v for k, v in keys.items())]


def check_fine(r, n):
    assert r["check"] == "ok" and r["variant"] == "fine"
    assert r["maxerr"] <= 1e-9
    assert r["threads"] == updates(n) + r["procs"] + 1      # the updates, a set-up thread per process, main
    if r["place"] == "lb":
        assert r["copies"] == 3 * updates(n)                # pivot and row in, row back
    elif r["away"] == 0:
        assert r["copies"] == mcs_copies(n, r["procs"])
    if r["procs"] > 1 and r["place"] == "mcs" and r["away"] == 0:
        assert r["copies"] < updates(n)


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_fine_gauss_both_placements_both_syncs(boot, cpus):
    n, procs = 64, cpus + 1
    jobs = [f"job=gauss:n={n},variant=fine,place={place},sync={sync},barrier={wait},procs={procs}"
            for place, sync, wait in [("mcs", "barrier", "spin"), ("lb", "barrier", "block"),
                                      ("mcs", "cond", "twophase"), ("lb", "cond", "adaptive")]]
    run = boot(cpus, ["quantum=1ms", "timeout=100s", *jobs], timeout=150)
    assert_all_ok(run)
    assert len(run.results) == 4
    for r in run.results:
        assert r["procs"] == procs
        check_fine(r, n)
    for sync in ("barrier", "cond"):
        (mcs,), (lb,) = by_key(run, place="mcs", sync=sync), by_key(run, place="lb", sync=sync)
        assert mcs["away"] == 0                              # pinned at the row's home: never elsewhere
        assert mcs["copies"] < lb["copies"]


def test_fine_gauss_one_process_copies_nothing_under_mcs(boot):
    run = boot(1, ["job=gauss:n=48,variant=fine,place=mcs,procs=1", "job=gauss:n=48,variant=fine,place=lb,procs=1"],
               timeout=120)
    assert_all_ok(run)
    (mcs,), (lb,) = by_key(run, place="mcs"), by_key(run, place="lb")
    assert mcs["copies"] == 0 and lb["copies"] == 3 * updates(48)


def test_fine_gauss_under_gang(boot):
    n = 64
    run = boot(2, ["policy=gang", "quantum=1ms", "timeout=100s",
                   f"job=gauss:n={n},variant=fine,place=mcs,sync=cond,barrier=block,procs=3",
                   f"job=gauss:n={n},variant=fine,place=lb,sync=barrier,barrier=adaptive,procs=2",
                   f"job=gauss:n={n},variant=fine,place=mcs,sync=barrier,barrier=spin,procs=2"], timeout=150)
    assert_all_ok(run)
    for r in run.results:
        check_fine(r, n)


def test_fine_gauss_under_partition_with_process_control(boot):
    # adapt=yes: the library suspends processes when the competing job arrives; pinned threads of a
    # suspended home are rescued by the others (away > 0 then), and the answer stays right
    n = 96
    run = boot(2, ["policy=partition", "quantum=2ms", "timeout=100s",
                   f"job=gauss:n={n},variant=fine,place=mcs,sync=cond,barrier=block,procs=4,adapt=yes",
                   f"job=gauss:n={n},variant=fine,place=lb,sync=barrier,barrier=twophase,procs=3,adapt=no",
                   "job=hog:procs=2,at=5ms"], timeout=150)
    assert_all_ok(run)
    for r in by_key(run, app="gauss"):
        check_fine(r, n)
    (adaptive,) = by_key(run, app="gauss", adapt="yes")
    assert adaptive["copies"] <= 3 * updates(n)


def test_fine_rejects_a_loop_scheduler(boot):
    run = boot(1, "job=gauss:n=16,variant=fine,sched=gss", timeout=60)
    assert run.exit_code == 1
    assert run.results[0]["check"] == "FAIL"
    assert any(line.startswith("ERROR gauss:") and
               "sched=gss needs variant=coarse" in line for line in run.output[1])
    # the app's ERROR is its output; the kernel adds one line of its own: the job ended with a status
    assert len(run.errors) == 1 and run.errors[0].startswith("ERROR job 1 (gauss) ended") and "status 1" in run.errors[0]


def nodes(h, d):
    return sum(d ** i for i in range(h))


@pytest.mark.parametrize("policy", ["gang", "partition"])
@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_knary_with_more_processes_than_harts(boot, policy, cpus):
    procs = 2 * cpus + 1
    run = boot(cpus, [f"policy={policy}", "quantum=2ms", "timeout=100s",
                      f"job=knary:h=6,d=4,s=1,work=100,procs={procs}",
                      f"job=knary:h=6,d=4,s=0,work=100,procs={procs},mode=static,adapt=no"], timeout=150)
    assert_all_ok(run)
    for r in run.results:
        assert r["policy"] == policy and r["procs"] == procs and r["nodes"] == nodes(6, 4)
    (steal,) = by_key(run, mode="steal")
    assert steal["threads"] == nodes(6, 4)


#: processes per synth job under gang: more than the harts where that keeps the boot short (a gang job
#: wider than the machine runs part by part, so each of its barriers waits for a slot switch)
GANG_PROCS = {1: 2, 2: 3, 4: 4}


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_every_shape_with_every_wait_under_gang(boot, cpus):
    procs = GANG_PROCS[cpus]
    jobs = [f"job=synth:procs={procs},grain=100,var=300,iters=20,barrier={w},shape={s}"
            for s in SHAPES for w in WAITS]
    run = boot(cpus, ["policy=gang", "quantum=1ms", "timeout=100s", *jobs], timeout=150)
    assert_all_ok(run)
    assert {(r["shape"], r["barrier"]) for r in run.results} == {(s, w) for s in SHAPES for w in WAITS}
    for r in run.results:
        assert r["policy"] == "gang" and r["procs"] == procs
        assert r["badstep"] == 0 and r["badwork"] == 0
        if r["barrier"] == "spin":
            assert r["sleeps"] == 0


@pytest.mark.parametrize("place", ["mcs", "lb"])
@pytest.mark.parametrize("sync", ["barrier", "cond"])
def test_fine_gauss_on_the_host(place, sync):
    exe = REPO_ROOT / "build" / "host" / "gauss"
    if not exe.is_file():
        pytest.skip("build/host/gauss is missing: run `make host`")
    n, procs = 64, 3
    out = subprocess.run([str(exe), f"n={n}", "variant=fine", f"place={place}", f"sync={sync}",
                          "barrier=block", f"procs={procs}"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    line = next(l for l in out.stdout.splitlines() if l.startswith("RESULT"))
    r = dict(kv.split("=", 1) for kv in line.split()[1:])
    assert r["check"] == "ok" and float(r["maxerr"]) <= 1e-9
    assert int(r["threads"]) == updates(n) + procs + 1
    assert int(r["copies"]) == (mcs_copies(n, procs) if place == "mcs" else 3 * updates(n))
