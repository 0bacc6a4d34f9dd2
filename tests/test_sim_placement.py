"""The simulator's gauss home=own and hog ws= (tools/sim/apps/gauss.c and hog.c, sim_touch.c's touch_own): each
worker's block on the node of the hart it allocated from, and the hog's working set swept through the simulated
caches after every block. Counts only, from deterministic simulated runs (charge=off: no stall in the
schedule); the keys' ranges are the app's own, refused by the kernel's parser the simulator runs."""

import os
import subprocess

import pytest

from schedlab.qemu import REPO_ROOT
from schedlab.sim import ensure_sim, sim_argv, sim_boot

ASAN = REPO_ROOT / "build" / "sim-asan" / "schedlab-sim"
if ASAN.is_file():
    os.environ.setdefault("SCHEDLAB_SIM", str(ASAN))

GAUSS = "seed=1 job=gauss:n=64,sync=barrier,barrier=block,{}"
# one hart, 1 ms quanta: oddeven's 2048 keys (8 KiB, 128 lines) stay in a 32 KiB L1 alone; without an L2 behind
# it, every line a sweep pushed out is a miss (an LLC hit) when oddeven gets the hart back
EVICT = "modern,l2_kb=0,l2_ways=0"
MIX = "seed=1 policy=timeslice quantum=1ms job=oddeven:procs=1,n=2048 job=hog:procs=1,ws={}"


def counts(run, app):
    assert run.ok and not run.parsed.malformed, run.console[-1500:]
    r = next(x for x in run.results if x["app"] == app)
    assert r["check"] == "ok"
    return r, run.parsed.model_jobs[r["job"]]


def test_rows_at_home_cut_coarse_grains_remote_accesses_under_butterfly():
    """butterfly at 2 harts (no caches, a node each): home=one puts the matrix on process 0's node, so process 1
    reads and writes its rows remotely; home=own leaves it only the pivot rows' copies. The work is the same:
    accesses grow only by the copies (about n^2/2 words read and as many written) and the blocks' pages."""
    n = 64
    one = counts(sim_boot(2, GAUSS.format("variant=coarse,home=one"), model="butterfly", charge=False), "gauss")[1]
    own = counts(sim_boot(2, GAUSS.format("variant=coarse,home=own"), model="butterfly", charge=False), "gauss")[1]
    assert own["remote"] * 4 < one["remote"], (one, own)
    assert one["accesses"] < own["accesses"] < one["accesses"] + 4 * n * n, (one, own)
    assert own["misses"] == own["accesses"] == own["local"] + own["remote"]


def test_home_own_changes_nothing_where_rows_always_have_homes():
    """variant=fine place=mcs keeps every row in its home's buffer whatever home= says (apps/gauss/fine.c): the
    same bytes either way; place=lb with home=own moves its rows from one matrix into those buffers."""
    mcs = [subprocess.run(sim_argv(2, GAUSS.format(f"variant=fine,place=mcs,home={h}"), model="butterfly",
                                   charge=False), capture_output=True, text=True, check=True).stdout
           for h in ("one", "own")]
    assert mcs[0].replace("home=one", "home=own") == mcs[1]
    lb = {h: counts(sim_boot(2, GAUSS.format(f"variant=fine,place=lb,home={h}"), model="butterfly", charge=False),
                    "gauss") for h in ("one", "own")}
    assert lb["one"][0]["copies"] == lb["own"][0]["copies"] > 0
    assert lb["one"][1]["remote"] > 0 and lb["own"][1]["remote"] > 0


def test_a_hogs_working_set_evicts_its_co_runners_lines():
    """ws=0: the hog keeps its work in registers and oddeven's keys survive its quanta in the L1; ws=64 (twice the
    L1) flushes them, so oddeven takes more misses a switch - at most its 128 key lines more each time it gets
    the hart back. The hog's own sweep misses every line of every block."""
    plain, swept = (sim_boot(1, MIX.format(ws), model=EVICT, charge=False) for ws in (0, 64))
    (r0, m0), (r1, m1) = counts(plain, "oddeven"), counts(swept, "oddeven")
    assert r0["switches"] == r1["switches"] > 2 and m0["accesses"] == m1["accesses"]
    per_switch = (m1["misses"] - m0["misses"]) / r1["switches"]
    assert 32 <= per_switch <= 128, (m0, m1, r1["switches"])
    hog, hm = counts(swept, "hog")
    assert hog["ws_kb"] == 64 and hog["ws_bad"] == 0 and hog["work"] > 0
    lines = 64 * 1024 // 64                  # a load and a store of a word a line, and g->ws_words reloaded
    assert hm["misses"] >= hog["work"] * lines and hm["accesses"] >= 3 * hog["work"] * lines, (hog, hm)
    assert "ws_kb" not in counts(plain, "hog")[0]


@pytest.mark.parametrize("job, says", [
    ("job=gauss:n=16,home=far", "home=far, expected one or own"),
    ("job=synth:iters=5 job=hog:ws=9000", "ws=9000, expected a whole number from 0 to 8192"),
    ("job=synth:iters=5 job=hog:ws=-1", "ws=-1"),
])
def test_the_simulator_refuses_what_the_app_refuses_in_one_line(job, says):
    ensure_sim()
    run = sim_boot(2, job)
    errors = [line for line in run.console.splitlines() if line.startswith("ERROR")]
    assert not run.ok and len(errors) == 1 and says in errors[0], run.console[-800:]
