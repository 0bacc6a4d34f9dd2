"""Markatos chapter 4 under the machine model (tools/py/schedlab/reproduce/markatos_ch4.py): the thesis's
reasoning as pure functions against values worked by hand, the ratios and the model column from made-up boots,
and each section end to end with --quick (a real boot under its profile, into a temporary --out). Counts and
structure only, never timings: the verdicts of the end-to-end runs are the full run's business."""

import json

import pytest

from schedlab import cli
from schedlab.model import load_profile
from schedlab.reproduce import markatos_ch4 as ch4


def test_cost_cycles_weights_each_level_by_its_profile_cost():
    iris, fly = load_profile("iris"), load_profile("butterfly")
    counts = {"l2_hits": 10, "llc_hits": 0, "coherence": 2, "local": 3, "remote": 0, "accesses": 999}
    assert ch4.cost_cycles(counts, iris) == 10 * iris["l2_cycles"] + 2 * iris["coh_cycles"] + 3 * iris["mem_cycles"]
    # butterfly: only the remote accesses, at remote_cycles, when the levels say so
    assert ch4.cost_cycles({"local": 100, "remote": 7}, fly, ("remote",)) == 7 * fly["remote_cycles"]
    assert ch4.cost_cycles({}, fly) == 0


def test_predicted_ratio_spreads_the_extra_stalls_over_the_processors():
    # 1e6 cycles of 2000 ps = 2000 us; over 2 processors 1000 us on a base of 1000 us: twice the time
    assert ch4.predicted_ratio(1000, 1e6, 2000, 2) == pytest.approx(2.0)
    assert ch4.predicted_ratio(1000, 0, 2000, 2) == 1.0
    assert ch4.predicted_ratio(1000, -5e5, 2000, 1) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        ch4.predicted_ratio(0, 1, 1, 1)


def test_avoided_share_of_lb_misses():
    # MCS eliminates all of a thread's traffic: all of LB's misses are avoided, whatever P > 1
    assert ch4.avoided_share(1.0, 2) == pytest.approx(1.0) and ch4.avoided_share(1.0, 8) == pytest.approx(1.0)
    # a third (Grassfire), P = 2: LB misses 1 - 1/6 = 5/6, MCS 2/3: (5/6 - 4/6) / (5/6) = 1/5
    assert ch4.avoided_share(1 / 3, 2) == pytest.approx(0.2)
    # half (merge sort), P = 2: (3/4 - 1/2) / (3/4) = 1/3; on one processor LB places everything at home
    assert ch4.avoided_share(0.5, 2) == pytest.approx(1 / 3)
    assert ch4.avoided_share(0.5, 1) == pytest.approx(0.0)
    # more processors, more of LB's threads away from their data
    assert ch4.avoided_share(0.5, 8) > ch4.avoided_share(0.5, 4) > ch4.avoided_share(0.5, 2)
    assert ch4.share_of(100, 25) == 0.75 and ch4.share_of(0, 0) == 0.0


def test_verdict_gain_compares_the_gains_over_one():
    assert ch4.verdict_gain(1.30, 1.25) == "reproduced"            # 30 % against 25 %: within 0.3 x 25 %
    assert ch4.verdict_gain(1.10, 1.25) == "partially"             # 10 % against 25 %: within 3 x 7.5 %
    assert ch4.verdict_gain(2.00, 1.25) == "not reproduced"
    assert ch4.verdict_gain(1.04, 1.00) == "reproduced"            # a model gain of 0: the 5 % floor
    assert ch4.verdict_gain(0.80, 1.00) == "not reproduced"


def test_model_ratios_from_measured_counts():
    fly = load_profile("butterfly")
    # LB made 1e6 more remote accesses than MCS; at 1000 ps a cycle, 12 cycles: 12000 us over 2 processors
    lb = [ch4.Meas(30000.0, {"remote": 1_500_000, "local": 9}, 1000.0)]
    mcs = [ch4.Meas(20000.0, {"remote": 500_000, "local": 1}, 1000.0)]
    assert ch4.ratios(lb, mcs) == [1.5]
    assert ch4.model_ratios(lb, mcs, fly, ("remote",), 2) == [pytest.approx(1 + 6000 / 20000)]


def test_tokens_name_the_variants_the_apps_take():
    assert ch4.tokens("msort", "coarse", 64) == "job=msort:n=64,variant=coarse"
    assert ch4.tokens("grassfire", "lb", 32) == "job=grassfire:n=32,variant=fine,place=lb"
    assert ch4.tokens("gauss", "mcs", 16) == "job=gauss:n=16,variant=fine,place=mcs,sync=barrier,barrier=block"


@pytest.mark.parametrize("name,rows,figs", [
    ("markatos-table4.1-butterfly", 12, 0),                # 3 apps x 2 ratios x (butterfly, no model)
    ("markatos-figs4.1-4.3", 3 * 3 + 1, 3),                # quick: P = 2 only, no speedup rows
])
@pytest.mark.qemu
def test_section_end_to_end_quick(boot, tmp_path, name, rows, figs):
    assert cli.main(["reproduce", "--quick", "--only", name, "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    (section,) = doc["sections"]
    assert section["name"] == name and not section["error"] and len(section["rows"]) == rows
    assert all(r["verdict"] in ("reproduced", "shape reproduced", "measured") or r["why"] for r in section["rows"])
    md = (tmp_path / "results.md").read_text()
    assert "| result | paper | model | ours | verdict |" in md
    if name == "markatos-table4.1-butterfly":
        assert "101 / 71.5 = 1.41" in md and ", no model |" in md and "`butterfly` (2 nodes)" in md
        # the boots under the model counted remote accesses for every variant of every app
        for app in ch4.APPS:
            assert set(section["data"][app]["remote"]) == set(ch4.VARIANTS)
            assert all(c > 0 for v in section["data"][app]["remote"].values() for c in v)
    else:
        for app in ch4.APPS:
            assert all(m > 0 for v in section["data"][app]["misses"].values() for m in v)
        assert "not on this machine" in md
    try:
        import matplotlib  # noqa: F401 - the figures are drawn only with it (common.plot)
    except ImportError:
        figs = 0
    assert len(section["figures"]) == figs and all((tmp_path / "figures" / f).is_file() for f in section["figures"])


def test_reasons_follow_the_numbers():
    assert "bounds nothing" in ch4.gain_why(0.8, 1.05, "x", 0, 2e6, "remote accesses")
    assert "+1.0 M accesses more" in ch4.gain_why(1.5, 1.1, "x", 1e6)
    assert "overlapped" in ch4.gain_why(1.0, 1.3, "x", 1e6)


def test_sections_registered_within_their_budgets():
    from schedlab import reproduce as rp
    exps = {e.name: e for e in rp.load_all()}
    for name in ("markatos-table4.1-butterfly", "markatos-figs4.1-4.3"):
        assert exps[name].quick_seconds <= 15 and exps[name].full_seconds <= 150
    # beside the no-model Table 4.1, which stays
    assert "markatos-table4.1" in exps
