"""The keys that let the locality experiments show their effect - gauss's home=own (each
process's rows on its own node, and coarse grain's pivot row copied to a node-local buffer once per column, as
the thesis's Butterfly programs did) and the hog's ws= (a node-local working set swept after every block, so the
hog evicts other jobs' lines). Counts and answers only (deterministic QEMU under the machine model), never
timings. The simulator's models of both: tests/test_sim_placement.py."""

import pytest

from helpers import assert_all_ok

GAUSS = "job=gauss:n=64,sync=barrier,barrier=block,{}"


def model_jobs(run) -> dict:
    return {r["app"]: run.parsed.model_jobs.get(r["job"], {}) for r in run.results}


def test_gauss_rows_at_home_cut_coarse_grains_remote_accesses(boot):
    """Under butterfly (no caches, 2 nodes), home=one puts the matrix on process 0's node, so process 1 reads
    and writes its rows remotely; home=own leaves it only the pivot rows' copies (n per column it does not
    own): far fewer remote accesses, fewer than fine grain under MCS makes, and the same answer."""
    remote = {}
    for keys in ("variant=coarse,home=one", "variant=coarse,home=own", "variant=coarse,sync=cond,home=own",
                 "variant=fine,place=mcs", "variant=fine,place=lb,home=own"):
        run = boot(2, GAUSS.format(keys).replace("sync=barrier,", "" if "sync=cond" in keys else "sync=barrier,"),
                   timeout=180, deterministic=True, model="butterfly")
        assert_all_ok(run)
        r = run.results[0]
        assert r["check"] == "ok" and float(r["maxerr"]) < 1e-9
        remote[keys] = model_jobs(run)["gauss"]["remote"]
    assert remote["variant=coarse,home=own"] * 4 < remote["variant=coarse,home=one"], remote
    assert remote["variant=coarse,home=own"] < remote["variant=fine,place=mcs"], remote
    assert remote["variant=coarse,sync=cond,home=own"] * 4 < remote["variant=coarse,home=one"], remote


def test_hog_working_set_is_swept_and_checked(boot):
    """ws=64: every process sweeps its 64 KiB after every block; the hog checks every word at the end, and
    under modern (32 KB L1) the sweep misses the L1 on every line: its L1 misses grow with the blocks it did."""
    run = boot(2, "policy=timeslice quantum=2ms job=synth:procs=2,iters=40,grain=2000 job=hog:procs=2,ws=64",
               timeout=180, deterministic=True, model="modern")
    assert_all_ok(run)
    hog = next(r for r in run.results if r["app"] == "hog")
    assert hog["ws_kb"] == 64 and hog["ws_bad"] == 0 and hog["work"] > 0
    m = model_jobs(run)["hog"]               # an L1 miss is an L2 hit or a miss past the L2
    assert m["l2_hits"] + m["misses"] >= hog["work"] * (64 * 1024 // 64) // 2, (hog, m)
    plain = boot(2, "policy=timeslice quantum=2ms job=synth:procs=2,iters=40,grain=2000 job=hog:procs=2",
                 timeout=180, deterministic=True)
    assert "ws_kb" not in next(r for r in plain.results if r["app"] == "hog")


@pytest.mark.parametrize("bootargs, says", [
    ("job=gauss:n=16,home=far", "home=far, expected one or own"),
    ("job=hog:ws=9000", "ws"),
    ("job=hog:ws=-1", "ws"),
])
def test_bad_values_are_refused(boot, bootargs, says):
    run = boot(1, bootargs, timeout=60)
    assert run.exit_code != 0 and any("ERROR" in line and says in line for line in run.console.splitlines()), \
        run.console[-800:]
