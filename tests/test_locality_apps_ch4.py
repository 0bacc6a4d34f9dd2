"""Markatos chapter 4's fine-grain applications beside gauss (Table 4.1, Figs. 4.2-4.3): msort (a thread per
subdivision, apps/msort.c) and grassfire (a thread per image row per sweep, apps/grassfire.c), each with
place=mcs and place=lb and its coarse-grain variant, under timeslice and partition, under the butterfly
machine model, and refused cleanly by the simulator.

The apps check their own answers (msort: order and two checksums of the keys; grassfire: a sequential
two-pass distance transform, sweeps = depth + 1, and in both the thread and placement counts add up);
these tests add what the definitions predict: the tree's node and leaf counts and the keys mcs must move
(only those of the merges above the per-process chunks), grassfire's row copies under mcs and coarse (only
the neighbour rows across block edges), and that the image's depth does not depend on P, variant or
placement. Counts and answers only, never timings."""

import pytest

from helpers import assert_all_ok


# ---------------------------------------------------------------- what msort's tree is (apps/msort.c build())

def msort_tree(n, procs, leaf, coarse):
    """The nodes (lo, hi, p0, p1) msort builds, and chunk p's bounds clo[p]..clo[p+1]."""
    nodes, clo = [], [0] * (procs + 1)
    clo[procs] = n

    def build(lo, hi, p0, p1):
        nodes.append((lo, hi, p0, p1))
        if p1 - p0 == 1:
            if coarse or hi - lo <= leaf:
                return
            mid = lo + (hi - lo) // 2
            build(lo, mid, p0, p1)
            build(mid, hi, p0, p1)
        else:
            pm = p0 + (p1 - p0) // 2
            mid = lo + (hi - lo) * (pm - p0) // (p1 - p0)
            clo[pm] = mid
            build(lo, mid, p0, pm)
            build(mid, hi, pm, p1)

    build(0, n, 0, procs)
    return nodes, clo


def msort_expect(n, procs, leaf, coarse=False):
    """(threads made, leaves, keys mcs moves): a thread per node, a set-up thread per process, main; mcs
    runs a node at the process holding most of its keys, so only nodes spanning chunks move keys."""
    nodes, clo = msort_tree(n, procs, leaf, coarse)
    leaves = sum(1 for lo, hi, p0, p1 in nodes if p1 - p0 == 1 and (coarse or hi - lo <= leaf))
    moved = 0
    for lo, hi, p0, p1 in nodes:
        if p1 - p0 > 1:
            moved += (hi - lo) - max(clo[p + 1] - clo[p] for p in range(p0, p1))
    return len(nodes) + procs + 1, leaves, moved


def test_msort_tree_model_is_self_consistent():
    # the helper itself: chunks tile [0, n), a binary tree has leaves = (nodes + 1) / 2
    for n, procs, leaf in [(1000, 1, 16), (1000, 3, 1), (4096, 4, 64), (77, 7, 5)]:
        nodes, clo = msort_tree(n, procs, leaf, False)
        assert clo[0] == 0 and clo[-1] == n and all(a < b for a, b in zip(clo, clo[1:]))
        threads, leaves, _ = msort_expect(n, procs, leaf)
        assert leaves == (len(nodes) + 1) // 2
    assert msort_expect(1000, 4, 16, coarse=True)[:2] == (7 + 4 + 1, 4)
    assert msort_expect(1000, 2, 16)[2] == 500                          # the root's merge: half the keys


def check_msort(r):
    n, procs, leaf, coarse = r["n"], r["procs"], r["leaf"], r["variant"] == "coarse"
    threads, leaves, moved = msort_expect(n, procs, leaf, coarse)
    assert r["check"] == "ok" and r["unsorted"] == 0
    assert r["threads"] == threads and r["leaves"] == leaves
    assert r["local"] + r["away"] == threads - procs - 1
    if r["place"] == "mcs" and r["away"] == 0:                          # nobody rescued a suspended home's thread
        assert r["remote_keys"] == moved
    if coarse:
        assert r["place"] == "mcs"


# ---------------------------------------------------------------- grassfire

def check_grassfire(r):
    n, procs = r["n"], r["procs"]
    per = procs if r["variant"] == "coarse" else n
    assert r["check"] == "ok" and r["wrong"] == 0
    assert r["sweeps"] == r["depth"] + 1
    assert r["threads"] == r["sweeps"] * per + procs + 1
    assert r["local"] + r["away"] == r["sweeps"] * n                    # every row of every sweep, once
    if r["place"] == "mcs" and r["away"] == 0:                          # only the rows across the P - 1 block edges
        assert r["copies"] == 2 * (procs - 1) * r["sweeps"]


def jobs_both_apps(procs):
    return [f"job=msort:n=3000,leaf=16,place=mcs,procs={procs}",
            f"job=msort:n=3000,leaf=16,place=lb,procs={procs}",
            f"job=msort:n=3000,variant=coarse,procs={procs}",
            f"job=grassfire:n=72,place=mcs,procs={procs}",
            f"job=grassfire:n=72,place=lb,procs={procs}",
            f"job=grassfire:n=72,variant=coarse,procs={procs}"]


def check_both_apps(run):
    assert_all_ok(run)
    assert len(run.results) == 6
    for r in run.results:
        (check_msort if r["app"] == "msort" else check_grassfire)(r)
    assert all(r["depth"] >= 2 for r in run.results if r["app"] == "grassfire")   # images with some depth


@pytest.mark.parametrize("policy", ["timeslice", "partition"])
def test_both_apps_both_placements_and_coarse(boot, policy):
    # under partition six jobs share two harts and adapt=yes suspends a process of each: its pinned
    # threads are rescued by the other (away > 0 then), and the answers must stay right
    run = boot(2, [f"policy={policy}", "quantum=2ms", "timeout=100s", *jobs_both_apps(2)], timeout=180)
    check_both_apps(run)
    assert all(r["policy"] == policy for r in run.results)
    if policy == "timeslice":                                           # nothing suspended: placement as made
        by = {(r["app"], r["variant"], r["place"]): r for r in run.results}
        for app, moved in [("msort", "remote_keys"), ("grassfire", "copies")]:
            mcs, lb, coarse = by[app, "fine", "mcs"], by[app, "fine", "lb"], by[app, "coarse", "mcs"]
            assert mcs["away"] == 0 and coarse["away"] == 0
            assert lb["away"] > 0 and lb[moved] > mcs[moved]


def test_both_apps_under_the_butterfly_model(boot):
    run = boot(2, ["quantum=2ms", "timeout=100s", *jobs_both_apps(2)], timeout=240, model="butterfly")
    check_both_apps(run)
    assert run.boot["model"].split(",")[0] == "butterfly" and run.boot["nodes"] == 2


def test_more_processes_than_harts_and_uneven_chunks(boot):
    # procs=3 and 4 on 2 harts: msort's chunks split unevenly (1/3, 2/3 of a node), leaves of one key.
    # The same jobs (so the same per-job seeds: the same keys and images) at procs=1 give the same depths:
    # the answer does not depend on P, the variant or the placement
    def jobs(p3, p4):
        return ["quantum=1ms", "timeout=100s",
                f"job=msort:n=1001,leaf=1,procs={p3}", f"job=msort:n=997,leaf=7,place=lb,procs={p3}",
                f"job=msort:n=5,leaf=1,procs={min(p4, 5)}",
                f"job=grassfire:n=96,procs={p3}", f"job=grassfire:n=96,place=lb,procs={p3}",
                f"job=grassfire:n=96,variant=coarse,procs={p4}"]
    many, one = boot(2, jobs(3, 4), timeout=180), boot(2, jobs(1, 1), timeout=180)
    for run in (many, one):
        assert_all_ok(run)
        for r in run.results:
            (check_msort if r["app"] == "msort" else check_grassfire)(r)
    for a, b in zip(sorted(many.results, key=lambda r: r["job"]), sorted(one.results, key=lambda r: r["job"])):
        assert a["job"] == b["job"] and a["app"] == b["app"]
        if a["app"] == "grassfire":
            assert (a["depth"], a["sweeps"]) == (b["depth"], b["sweeps"]) and a["depth"] >= 2
            assert b["copies"] == 0 and b["away"] == 0                  # one process holds every row


@pytest.mark.parametrize("bootargs, says", [
    ("job=msort:n=64,variant=coarse,place=lb", "place=lb needs variant=fine"),
    ("job=grassfire:n=16,variant=coarse,place=lb", "place=lb needs variant=fine"),
    ("job=msort:n=2,procs=3", "n=2 must be at least procs=3"),
])
def test_what_the_apps_refuse(boot, bootargs, says):
    run = boot(1, bootargs, timeout=60)
    app = bootargs.split(":")[0].removeprefix("job=")
    assert run.exit_code == 1 and run.results[0]["check"] == "FAIL"
    assert any(line.startswith(f"ERROR {app}:") and says in line for line in run.output[1]), run.output


def test_deterministic_mode_places_the_same_way_twice(boot):
    # lb breaks ties at random and both apps make threads as work completes: in deterministic mode two
    # boots must still print the same bytes (placement counts and all)
    jobs = ["policy=partition", "quantum=2ms", "job=msort:n=2000,leaf=16,place=lb,procs=3",
            "job=grassfire:n=48,place=lb", "job=grassfire:n=48,place=mcs,procs=3"]
    first, second = (boot(2, jobs, timeout=180, deterministic=True) for _ in range(2))
    assert_all_ok(first)
    assert first.console == second.console
