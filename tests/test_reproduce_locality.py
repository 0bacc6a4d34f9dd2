"""The locality sections of `tools/schedlab reproduce` that compare machine-model profiles: Markatos chapter 2
(markatos-ch2) and Fig. 3.2 with caches (markatos-fig3.2-caches) - their pure helpers against hand-worked values,
the miss cost they recompute against the plugin's own stall, and each section end to end with --quick."""

import json

import pytest

from schedlab import cli
from schedlab import reproduce as rp
from schedlab.model import parse_spec
from schedlab.reproduce import markatos_caches as caches
from schedlab.reproduce import markatos_ch2 as ch2


def test_miss_cost_is_each_level_times_its_cycles():
    # the counts of a 1-hart coarse Gauss n=256 under iris; the plugin said stall_us=67299 at cycle_ps=1740,
    # with the profile's costs of then (13 a second-level hit, 29 a bus fill: since made 35 at 40 MHz)
    iris = {**dict(parse_spec("iris").values), "l2_cycles": 13, "coh_cycles": 29, "mem_cycles": 29}
    counts = {"l2_hits": 2849604, "llc_hits": 0, "coherence": 0, "local": 56320, "remote": 0}
    assert ch2.miss_cost_us(counts, iris, 1740) == pytest.approx((2849604 * 13 + 56320 * 29) * 1.74e-3)
    assert int(ch2.miss_cost_us(counts, iris, 1740)) == 67299
    butterfly = dict(parse_spec("butterfly").values)
    assert ch2.miss_cost_us({"local": 1000, "remote": 100}, butterfly, 1000) == pytest.approx((1000 + 1200) / 1000)
    assert ch2.miss_cost_us({}, butterfly, 1000) == 0


def test_speedup_model_divides_computation_and_adds_what_the_harts_miss():
    assert ch2.speedup_model(100, 0, 0, 2) == 2                      # no misses: linear
    assert ch2.speedup_model(100, 20, 40, 2) == pytest.approx(100 / 60)  # 80/2 + 40/2
    assert ch2.speedup_model(100, 20, 20, 2) == pytest.approx(100 / 50)  # misses that do not grow: still linear work
    with pytest.raises(ValueError):
        ch2.speedup_model(0, 0, 0, 2)


def test_table21_ratio_is_bandwidth_per_processor_over_integer_power():
    assert ch2.table21_ratio("symmetry") == pytest.approx(2.25 / 10)
    assert ch2.table21_ratio("iris") == pytest.approx(8 / 98)        # the thesis's "1 : 12" for the Power Series
    assert set(ch2.chapter2_criteria(2)) == {(v, p) for v in ch2.VARIANTS for p in ch2.PROFILES}
    assert set(ch2.QUICK_PROFILES) <= set(ch2.PROFILES)


def test_misses_per_dispatch_and_the_cache_model():
    assert caches.misses_per_dispatch(1000, 10) == 100
    assert caches.misses_per_dispatch(1000, 0) == 1000                # a job never dispatched twice: one turn
    assert caches.cache_model(2.0, 0, 0, 2, 100) == 2.0
    assert caches.cache_model(2.0, 10, 50, 2, 100) == pytest.approx(2.2)  # 40 extra over 2 harts x 100
    assert caches.cache_model(1.5, 50, 10, 1, 100) == pytest.approx(1.1)  # misses avoided lower it
    with pytest.raises(ValueError):
        caches.cache_model(2.0, 0, 0, 0, 100)


@pytest.mark.qemu
@pytest.mark.parametrize("profile", ["iris", "butterfly"])
def test_miss_cost_from_the_counts_is_the_plugins_stall(boot, profile):
    """job_misses recomputes the plugin's stall_us from the per-level counts and the profile (to the plugin's
    rounding down to a whole us): the sections' model columns use the same costs the boots paid."""
    run = boot(2, "job=gauss:n=64,variant=fine,place=lb,procs=2", model=profile)
    assert run.exit_code == 0, run.console[-2000:]
    counts, cost = ch2.job_misses(run)
    assert counts["misses"] > 0 and counts["stall_us"] > 0
    assert counts["stall_us"] <= cost < counts["stall_us"] + 1
    if profile == "butterfly":
        assert counts["remote"] > 0          # two nodes: one hart's accesses to the matrix are remote


def _section(tmp_path, name):
    assert cli.main(["reproduce", "--quick", "--only", name, "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    (section,) = doc["sections"]
    assert section["name"] == name and not section["error"], section["error"]
    return section, (tmp_path / "results.md").read_text()


@pytest.mark.qemu
def test_chapter2_end_to_end(tmp_path):
    section, md = _section(tmp_path, "markatos-ch2")
    assert "## Markatos Figs. 2.2-2.4" in md and "![markatos-fig2.2-2.3.png]" in md
    labels = [r["label"] for r in section["rows"]]
    for variant in ch2.VARIANTS:
        for profile in ch2.QUICK_PROFILES:
            assert f"{variant}, {profile}: speedup at P = 2 (efficiency)" in labels
            d = section["data"][f"{variant}-{profile}"]
            # the 2-hart run of a pair ran both processes under the same profile, and the model counted misses
            assert len(d["par_us_1"]) == len(d["par_us_2"]) == 1 and min(d["misses_1"] + d["misses_2"]) > 0
            assert d["speedup"] == [pytest.approx(d["par_us_1"][0] / d["par_us_2"][0])]
    # the KSR-1's curves (coarse: least time on 12 processors; fine: a peak at 4) are judged where that many run
    assert sum(r["verdict"] == "not on this machine" for r in section["rows"]) == 3
    assert all(r["why"] for r in section["rows"] if r["verdict"] not in ("reproduced", "shape reproduced"))
    assert (tmp_path / "figures" / "markatos-fig2.2-2.3.png").is_file()


@pytest.mark.qemu
def test_fig32_with_caches_end_to_end(tmp_path):
    section, md = _section(tmp_path, "markatos-fig3.2-caches")
    assert "## Markatos Fig. 3.2 with caches" in md and "misses/dispatch" in md
    for profile in ("modern", "iris"):
        d = section["data"][profile]
        for policy in caches.POLICIES:
            # every mix under a model counted the job's misses and dispatches
            assert d[policy]["mpd"][0] > 0 and d[policy]["cost_mix"][0] > 0
        assert f"{profile}: the fewest extra misses under a partition (timeslice / gang / partition)" in \
            [r["label"] for r in section["rows"]]
    assert section["data"]["none"]["timeslice"]["mpd"] == []          # no model, no misses
    assert all(r["why"] for r in section["rows"] if r["verdict"] not in ("reproduced", "shape reproduced"))
    assert (tmp_path / "figures" / "markatos-fig3.2-caches.png").is_file()


def test_budgets_declared():
    exps = {e.name: e for e in rp.load_all()}
    assert exps["markatos-ch2"].quick_seconds <= 15 and exps["markatos-ch2"].full_seconds <= 150
    assert exps["markatos-fig3.2-caches"].quick_seconds <= 15 and exps["markatos-fig3.2-caches"].full_seconds <= 150
