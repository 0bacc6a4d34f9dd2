"""The locality sections of reproduce (issue 26): Markatos ch. 5's loop schedulers and Tucker & Gupta's point 4
under the machine model.  The pure helpers (the thesis's model, the records) are checked against hand-worked
numbers; each section's row code runs on made-up boots (every row built, every verdict with its reason, in
full and quick mode), and once end to end with --quick on real boots."""

import json
from types import SimpleNamespace

import pytest

from schedlab import cli
from schedlab import reproduce as rp
from schedlab.reproduce import markatos_loops as ml
from schedlab.reproduce import tucker_cache as tc
from schedlab.reproduce.markatos_partition import tucker_jobs, tucker_scenario


# ---------------------------------------------------------------- pure helpers

def test_miss_cost_charges_each_level_its_cycles():
    prof = {"l2_cycles": 13, "llc_cycles": 0, "coh_cycles": 29, "mem_cycles": 29, "remote_cycles": 100}
    counts = {"l2_hits": 1000, "llc_hits": 5, "coherence": 10, "local": 20, "remote": 2, "misses": 37}
    # 13000 + 290 + 580 + 200 cycles of 2000 ps
    assert ml.miss_cost_us(counts, prof, 2000) == pytest.approx(14070 * 2000 / 1e6)
    assert ml.miss_cost_us({}, prof, 2000) == 0


def test_first_chunk_imbalance_is_the_theses_gss_argument():
    # adjoint: the first N/P iterations of a triangle hold 1 - (1 - 1/P)^2 of the work: (2P-1)/P of a fair share
    for p in (2, 4):
        assert ml.first_chunk_imbalance(ml.loop_weights("adjoint", 50), p) == pytest.approx((2 * p - 1) / p, rel=0.01)
    # transitive closure, skewed: at P = 2 the clique (40 %) is all in the first half: nearly all work on one
    f = ml.first_chunk_imbalance(ml.loop_weights("tclosure", 100), 2)
    assert 1.9 < f < 2.0
    assert ml.first_chunk_imbalance([[1.0] * 64], 4) == pytest.approx(1.0)
    assert ml.first_chunk_imbalance([[3.0, 1.0]], 1) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        ml.loop_weights("gauss", 8)


def test_tclosure_weights_follow_the_clique():
    w = ml.loop_weights("tclosure", 10, 40)         # clique 0..3
    assert len(w) == 10 and w[0][1] == 10 and w[0][0] == 1 and w[0][5] == 1 and w[5][1] == 1


def test_predicted_time_and_group_ratio():
    # AFS 100 us with 20 us of misses on 2 harts; a scheduler with 60 us of misses, balanced: 90 + 30
    assert ml.predicted_us(100, 20, 60, 2) == pytest.approx(120)
    assert ml.predicted_us(100, 20, 20, 2, imbalance=1.5) == pytest.approx(145)
    assert ml.group_ratio({"gss": 30, "factoring": 10, "afs": 10}, ("gss", "factoring"), ("afs",)) == 2
    assert ml.group_ratio({"afs": 1}, ("gss",), ("afs",)) is None


def test_plan_runs_each_app_with_the_schedulers_it_takes():
    full = ml.plan(False)
    assert ("iris", "gauss", "best-static") not in full and ("ksr1", "sor", "best-static") in full
    assert {p for p, _a, _s in full} == {"iris", "ksr1", "symmetry"}
    assert len(full) == len(set(full)) == 2 * sum(len(s) for _t, s in ml.APPS.values()) + len(ml.SYMMETRY)
    assert set(ml.plan(True)) < set(full) and {a for _p, a, _s in ml.plan(True)} == {"gauss"}


def test_tucker_builder_is_shared():
    assert tucker_scenario(2, "global", "yes") == "policy=global " + " ".join(f"{j},adapt=yes" for j in tucker_jobs(2))
    assert [j.split(":")[0] for j in tucker_jobs(2)] == ["job=gauss", "job=synth", "job=oddeven"]


def test_tucker_helpers():
    assert tc.working_set_lines(256, 2, 64) == 256 * 256 * 8 // 2 // 64
    assert tc.refetch_us(10, 100, 300, 1000) == pytest.approx(300.0)
    g, p = {"elapsed_us": 1000.0, "stall_us": 300.0}, {"elapsed_us": 600.0, "stall_us": 100.0}
    assert tc.stall_share(g, p) == pytest.approx(0.5)
    assert tc.stall_share(p, g) is None
    assert tc.misses_per_switch({"misses": 1100, "switches": 10}, {"misses": 100}) == 100
    assert tc.coherence_share({"misses": 100, "coherence": 80}, {"misses": 20, "coherence": 0}) == pytest.approx(1.0)
    assert tc.coherence_share({"misses": 10, "coherence": 5}, {"misses": 20, "coherence": 0}) == 0.0


def test_mix_records_join_results_and_model_lines():
    run = _run([("gauss", 1, 5000, 40)], {1: {"accesses": 9, "misses": 7, "coherence": 3, "llc_hits": 2,
                                              "stall_us": 12}})
    assert tc.mix_records(run) == {"gauss": {"elapsed_us": 5000.0, "switches": 40, "migrations": 2, "accesses": 9,
                                             "misses": 7, "coherence": 3, "llc_hits": 2, "stall_us": 12.0}}
    assert tc.mix_records(_run([("synth", 2, 10, 1)], {}))["synth"]["misses"] == 0


# ---------------------------------------------------------------- the sections on made-up boots

def _run(jobs, model_jobs, cycle_ps=1500):
    results = [{"job": j, "app": a, "elapsed_us": el, "par_us": el, "switches": sw, "migrations": 2, "grabs": 4,
                "remote": 1} for a, j, el, sw in jobs]
    return SimpleNamespace(results=results, parsed=SimpleNamespace(
        model_jobs=model_jobs, model_end={"cycle_ps": cycle_ps} if model_jobs else None))


class FakeCtx:
    """What a section calls on ctx, booting nothing: affinity schedulers miss less and run faster, global
    time-sharing stalls and takes longer."""

    def __init__(self, tmp_path, quick):
        self.cpus, self.quick, self.figdir, self.booted, self.same = 2, quick, tmp_path, [], False

    def reps(self, full, quick):
        return quick if self.quick else full

    def boot(self, tokens, seed=1, cpus=None, model=None):
        self.booted.append((tokens, model))
        if tokens.startswith("policy="):
            glob = tokens.startswith("policy=global")
            jobs = [(a, k, (3000 if glob else 1200) * k + seed, 50 if glob else 3) for k, a in
                    enumerate(("gauss", "synth", "oddeven"), 1)]
            counts = {} if model == "none" else {k: {"accesses": 10 ** 6,
                                                     "misses": (9000 if glob and not self.same else 1000) * k,
                                                     "coherence": 10, "stall_us": (400 if glob else 100) * k}
                                                 for k in (1, 2, 3)}
            return _run(jobs, counts)
        sched = tokens.split("sched=")[1]
        aff = sched in ml.AFFINITY
        t = (100 if aff else 150) * 1000 + seed
        counts = {"misses": 10 ** 4 if aff else 10 ** 5, "coherence": 10, "l2_hits": 5, "llc_hits": 0,
                  "local": 10 ** 4 if aff else 10 ** 5, "remote": 0, "stall_us": 10}
        return _run([(tokens.split(":")[0][4:], 1, t, 0)], {1: counts})


@pytest.mark.parametrize("quick", [False, True])
def test_loops_section_rows_from_fake_boots(tmp_path, quick):
    ctx = FakeCtx(tmp_path, quick)
    sec = ml.loops(ctx)
    assert len(ctx.booted) == len(ml.plan(quick)) * ctx.reps(2, 1)
    assert {m for _t, m in ctx.booted} == ({"iris", "ksr1", "symmetry"})
    labels = {r.label: r for r in sec.rows}
    gauss = labels["gauss, iris: GSS / AFS" if quick else
                   "gauss, iris: GSS, FACTORING, TRAPEZOID / STATIC, AFS, MOD-FACTORING"]
    assert gauss.verdict == "shape reproduced" and gauss.ours.startswith("1.50")
    assert labels["gauss, iris: misses, fewest of GSS/FACTORING/TRAPEZOID over most of the affinity schedulers"
                  ].verdict == "shape reproduced"
    assert any(r.verdict == "not on this machine" and "16" in r.why for r in sec.rows)
    assert all(r.verdict in ("reproduced", "shape reproduced") or r.why for r in sec.rows)
    assert "| iris, gauss |" in sec.notes and sec.figures


def test_tucker_cache_section_rows_from_fake_boots(tmp_path):
    ctx = FakeCtx(tmp_path, quick=False)
    sec = tc.cache_corruption(ctx)
    assert {m for _t, m in ctx.booted} == {"none", "modern"} and len(ctx.booted) == 4 * 3
    by = {r.label.split(":")[0]: r for r in sec.rows}
    # stall saved 300 of 1800 us saved: 17 %, well under half
    share = next(r for r in sec.rows if "stall time saved" in r.label)
    assert share.ours.startswith("16.7 %") and share.verdict != "reproduced" and share.why
    assert next(r for r in sec.rows if "three jobs' stall" in r.label).verdict == "shape reproduced"
    assert by and all(r.verdict in ("reproduced", "shape reproduced") or r.why for r in sec.rows)
    ctx.same = True                     # global took no more misses: the reason says so, with the counts
    per_switch = next(r for r in tc.cache_corruption(ctx).rows if "misses per switch" in r.label)
    assert per_switch.verdict == "not reproduced" and "as many misses under global" in per_switch.why


# ---------------------------------------------------------------- end to end

@pytest.mark.qemu
@pytest.mark.parametrize("name,title", [("markatos-ch5", "## Markatos ch. 5: the loop schedulers"),
                                        ("tucker-gupta-cache", "## Tucker & Gupta's point 4")])
def test_locality_section_end_to_end(boot, tmp_path, name, title):
    assert cli.main(["reproduce", "--quick", "--only", name, "--out", str(tmp_path)]) == 0
    md = (tmp_path / "results.md").read_text()
    assert title in md and "This section failed" not in md
    sec = json.loads((tmp_path / "results.json").read_text())["sections"][0]
    assert sec["name"] == name and sec["rows"] and not sec["error"]
    # every boot under a profile had its job's MODEL line joined: misses counted
    if name == "markatos-ch5":
        recs = [r for v in sec["data"].values() for r in v]
        assert recs and all(r["misses"] > 0 and r["cost_us"] > 0 and r["par_us"] > 0 for r in recs)
    else:
        assert all(r["gauss"]["misses"] > 0 for r in sec["data"]["modern/global"])
        assert all(r["gauss"]["misses"] == 0 for r in sec["data"]["none/global"])
