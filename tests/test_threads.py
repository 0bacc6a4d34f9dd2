"""User-level threads (lib/threads/uthread.c) on the kernel: Hood's knary tree of threads computes its closed-form
node count and checksum under the default policy (timeslice) with more processes than harts, with
thread-heavy and wide trees, next to a competing job; tbench's own checks pass and it prints its BENCH
lines. Threads migrate between processes, so a lost, duplicated or corrupted thread, or a register the
context switch failed to keep, shows up as check=FAIL."""

import re

import pytest

from helpers import assert_all_ok


def knary(run):
    return next(r for r in run.results if r["app"] == "knary")


def nodes(h, d):
    return sum(d ** i for i in range(h))


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_knary_correct_with_more_processes_than_harts(boot, cpus):
    procs = 2 * cpus + 1
    run = boot(cpus, f"quantum=2ms job=knary:h=6,d=4,s=1,work=100,procs={procs}", timeout=120)
    assert_all_ok(run)
    r = knary(run)
    assert r["policy"] == "timeslice" and r["procs"] == procs and r["harts"] == cpus
    assert r["nodes"] == nodes(6, 4) and r["threads"] == nodes(6, 4)


@pytest.mark.parametrize("s", [0, 4])
def test_knary_serial_children_dial_from_parallel_to_serial(boot, s):
    run = boot(2, f"quantum=2ms job=knary:h=5,d=4,s={s},work=50,procs=3", timeout=120)
    assert_all_ok(run)
    assert knary(run)["nodes"] == nodes(5, 4)


@pytest.mark.parametrize("shape", ["h=12,d=2,s=0,work=0", "h=3,d=32,s=0,work=0"])
def test_thread_heavy_runs_are_correct(boot, shape):
    run = boot(2, f"quantum=2ms job=knary:{shape},procs=4", timeout=120)
    assert_all_ok(run)
    h, d = (int(kv.split("=")[1]) for kv in shape.split(",")[:2])
    r = knary(run)
    assert r["nodes"] == nodes(h, d) and r["threads"] == nodes(h, d)


def test_threads_move_between_processes(boot):
    # enough work (tens of ms) that the second process is up long before the tree is done
    run = boot(2, "quantum=2ms job=knary:h=7,d=4,s=0,work=1000,procs=2", timeout=120)
    assert_all_ok(run)
    r = knary(run)
    assert r["nodes"] == nodes(7, 4)
    assert r["steals"] >= 1          # the other process took work: threads ran on both


def test_knary_next_to_a_competing_job(boot):
    run = boot(2, "quantum=2ms job=knary:h=6,d=4,s=0,work=100,procs=2 job=hog:procs=2", timeout=120)
    assert_all_ok(run)
    assert knary(run)["nodes"] == nodes(6, 4)


def test_tbench_checks_pass_and_prints_bench_lines(boot):
    run = boot(2, "job=tbench:batches=3,ops=200", timeout=120)
    assert_all_ok(run)
    r = next(r for r in run.results if r["app"] == "tbench")
    # the other processes are busy during the first spawn+join batches: nobody steals, every thread runs
    # on its joiner's stack (with idle thieves, later, some are stolen first: those run on their own)
    assert 3 * 200 <= r["inlined"] <= 2 * 3 * 200
    for name in ("spawn_join_vs_call", "uthread_yield_ns", "steal_ns"):
        m = re.search(rf"^BENCH {name} ([0-9.]+) (ratio|ns)\s*$", "\n".join(run.output[1]), re.M)
        assert m and float(m.group(1)) > 0, name
