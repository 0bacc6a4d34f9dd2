"""tools/schedlab sweep and the statistics it shares with compare (tools/py/schedlab/sweep.py, stats.py).

The bootstrap is checked on synthetic data with a fixed generator (deterministic: the same data always give
the same interval, and the coverage over many synthetic samples is near the nominal 95%); --vary's errors
by their messages; the sweep's files on the fake QEMU of test_harness (exact numbers) and on a tiny real sweep
(short boots: only that the files are there and agree, never the timings).
"""

import csv
import json

import numpy as np
import pytest

from schedlab import cli, mix, stats, sweep
from schedlab.qemu import HarnessError
from helpers import run_cli

# ---------------------------------------------------------------- bootstrap on synthetic data


def test_bootstrap_is_deterministic_and_brackets_the_median():
    data = np.random.default_rng(7).lognormal(0.0, 0.5, size=40)
    first, second = stats.bootstrap_ci(data), stats.bootstrap_ci(list(data))
    assert first == second
    low, high = first
    assert data.min() <= low < float(np.median(data)) < high <= data.max()
    assert stats.bootstrap_ci(data, seed=1) != first                    # it is the seed that fixes it
    narrow, wide = stats.bootstrap_ci(data, level=0.5), stats.bootstrap_ci(data, level=0.99)
    assert wide[0] <= low <= narrow[0] and narrow[1] <= high <= wide[1]


def test_bootstrap_degenerate_inputs():
    assert stats.bootstrap_ci([]) is None and stats.bootstrap_ci([5.0]) is None
    assert stats.bootstrap_ci([5.0, None]) is None
    assert stats.bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    with pytest.raises(ValueError):
        stats.bootstrap_ci([1.0, 2.0], level=1.0)


def test_bootstrap_coverage_near_nominal():
    # 300 samples of 25 from a normal distribution with median 10: the 95% interval should contain 10 in
    # about 95% of them (the percentile bootstrap of a median runs a little off at n=25: allow 88..99%)
    rng = np.random.default_rng(2024)
    hits = 0
    for _ in range(300):
        low, high = stats.bootstrap_ci(rng.normal(10.0, 2.0, size=25), resamples=500)
        hits += low <= 10.0 <= high
    assert 0.88 <= hits / 300 <= 0.99


def test_spread_carries_the_interval_but_compares_without_it():
    spread = stats.Spread.of([4, 1, 2, None, 3])
    assert spread == stats.Spread(2.5, 1, 4, 4) and spread.ci is not None
    assert spread.to_dict()["ci_low"] == spread.ci[0] and spread.scaled(2).ci == (2 * spread.ci[0], 2 * spread.ci[1])
    assert stats.Spread.of([7]).ci is None and stats.Spread.of([7]).to_dict()["ci_high"] is None


# ---------------------------------------------------------------- seeds across repeats


def test_repeat_seed():
    assert mix.repeat_seed(["policy=gang"], 0) == ["policy=gang"]
    assert mix.repeat_seed(["policy=gang"], 2) == ["policy=gang", "seed=3"]          # the kernel's default is 1
    assert mix.repeat_seed(["seed=7", "quantum=1ms"], 1) == ["seed=8", "quantum=1ms"]
    assert mix.repeat_seed(["seed=7", "seed=9"], 1) == ["seed=10"]                   # the last one counts
    assert mix.repeat_seed(["seed=x"], 1) == ["seed=x"]                              # the kernel refuses it


def test_compare_same_seed(fake, capsys):  # noqa: F811
    fake.sim()
    assert run_cli(fake, "compare", "--repeat", "2", "--policies", "gang", "--same-seed", "job=gauss") == 0
    assert not any("seed=" in b for b in fake.bootargs())


# ---------------------------------------------------------------- --vary


@pytest.mark.parametrize("text, message", [
    ("quantum", "expected KEY=V1,V2"),
    ("quantum=", "empty value"),
    ("quantum=1ms,,2ms", "empty value"),
    ("quantum=1ms,1ms", "'1ms' is given twice"),
    ("quantum=1 ms", "may not contain spaces"),
    ("job1.grain=1:2", "may not contain"),
    ("policy=gang,timeslice", "--policies"),
    ("job=gauss,oddeven", "jobN.<key>"),
    ("job0.grain=1", "numbered from 1"),
    ("job1.Grain=1", "not a key name"),
    ("Quantum=1ms", "unknown key 'Quantum'"),
])
def test_parse_vary_errors(text, message):
    with pytest.raises(HarnessError, match=message):
        sweep.parse_vary(text)


def test_vary_applies_to_settings_and_jobs():
    settings, jobs = mix.split_tokens(["quantum=10ms", "job=synth:grain=5,iters=9", "job=hog"])
    assert sweep.apply(sweep.parse_vary("quantum=2ms,5ms"), "2ms", settings, jobs)[0] == ["quantum=2ms"]
    vary = sweep.parse_vary("job1.grain=100,1000")
    assert (vary.job, vary.key, vary.name) == (1, "grain", "job1.grain")
    _, changed = sweep.apply(vary, "100", settings, jobs)
    assert [j.token for j in changed] == ["job=synth:iters=9,grain=100", "job=hog"]
    _, changed = sweep.apply(sweep.parse_vary("job2.procs=1,2"), "2", settings, jobs)
    assert changed[1].token == "job=hog:procs=2" and changed[1].background
    with pytest.raises(HarnessError, match=r"job index 3 out of range: the scenario has 2 jobs \(job1=synth, job2=hog\)"):
        sweep.apply(sweep.parse_vary("job3.grain=1"), "1", settings, jobs)


def test_unknown_plain_key_named_with_the_known_ones():
    options = {"gang": {"alternates": ["off", "on"]}, "timeslice": {"wakeboost": ["off", "on"]}}
    sweep.check_known(sweep.parse_vary("alternates=off,on"), options)
    sweep.check_known(sweep.parse_vary("quantum=1ms"), options)
    with pytest.raises(HarnessError, match=r"unknown key 'wibble'.*\(alternates, wakeboost\)"):
        sweep.check_known(sweep.parse_vary("wibble=1"), options)


def test_plan_is_repeat_major_with_seeds():
    points = sweep.plan(sweep.parse_vary("quantum=2ms,5ms"), ["job=gauss"], ["gang", "timeslice"], 2)
    assert [(p.repeat, p.value, p.policy) for p in points[:4]] == [
        (0, "2ms", "gang"), (0, "2ms", "timeslice"), (0, "5ms", "gang"), (0, "5ms", "timeslice")]
    assert points[0].tokens(None) == ["quantum=2ms", "policy=gang", "job=gauss"]
    assert points[4].tokens(None) == ["seed=2", "quantum=2ms", "policy=gang", "job=gauss"]
    seeds = sweep.plan(sweep.parse_vary("seed=4,5"), ["job=gauss"], [None], 2)
    assert [p.tokens(None) for p in seeds[2:]] == [["seed=4", "job=gauss"], ["seed=5", "job=gauss"]]


# ---------------------------------------------------------------- the command on the fake QEMU


def test_sweep_files_on_the_fake_kernel(fake, capsys, tmp_path):  # noqa: F811
    fake.sim()
    prefix = tmp_path / "out" / "q"
    status = run_cli(fake, "sweep", "--cpus", "2", "--repeat", "3", "--policies", "gang,timeslice",
                      "--vary", "quantum=2ms,5ms", "--out", str(prefix), "job=gauss", "job=oddeven")
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert len(fake.bootargs()) == 3 * 2 * 2
    rows = [line.split() for line in out.splitlines() if line.startswith(("gang ", "timeslice "))]
    # the fake kernel: gauss 10 ms alone, x1.5 under gang and x2 under timeslice with two jobs
    assert ["gang", "2ms", "1", "gauss", "3", "15.000", "15.000..15.000", "15.000..15.000"] in rows
    assert ["timeslice", "5ms", "2", "oddeven", "3", "40.000", "40.000..40.000", "40.000..40.000"] in rows
    document = json.loads(prefix.with_suffix(".json").read_text())
    assert document["command"] == "sweep" and document["sweep"]["vary"] == "quantum"
    assert len(document["sweep"]["points"]) == 2 * 2 * 2 and len(document["runs"]) == 12
    assert {r["value"] for r in document["records"]} == {"2ms", "5ms"}
    with open(prefix.with_suffix(".csv"), newline="") as handle:
        points = list(csv.DictReader(handle))
    assert len(points) == 8 and {p["policy"] for p in points} == {"gang", "timeslice"}
    assert prefix.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_stops_at_a_value_the_kernel_refuses(fake, capsys, tmp_path):  # noqa: F811
    fake.sim()
    status = run_cli(fake, "sweep", "--repeat", "2", "--vary", "bogus=1,2", "--out", str(tmp_path / "x"),
                      "job=gauss")
    assert status == 2
    err = capsys.readouterr().err
    assert "--vary bogus: the kernel refused the scenario at bogus=1: ERROR bad token 'bogus=1'" in err
    assert len(fake.bootargs()) == 1


def test_sweep_job_index_out_of_range_boots_nothing(fake, capsys, tmp_path):  # noqa: F811
    fake.sim()
    assert run_cli(fake, "sweep", "--vary", "job2.grain=1,2", "--out", str(tmp_path / "x"), "job=gauss") == 2
    assert "job index 2 out of range" in capsys.readouterr().err and fake.bootargs() == []


# ---------------------------------------------------------------- a tiny real sweep


@pytest.mark.qemu
def test_tiny_real_sweep(tmp_path, capsys):
    prefix = tmp_path / "iters"
    status = cli.main(["sweep", "--cpus", "1", "--repeat", "2", "--vary", "job1.iters=10,20", "--out", str(prefix),
                       "job=synth:grain=10"])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert "job1.iters" in out and "95% CI" in out
    document = json.loads(prefix.with_suffix(".json").read_text())
    assert len(document["runs"]) == 4 and all(r["verdict"] == "ok" for r in document["runs"])
    assert sorted(r["iters"] for r in document["records"]) == [10, 10, 20, 20]
    assert [r["bootargs"].count("seed=") for r in document["runs"]] == [0, 0, 1, 1]
    points = document["sweep"]["points"]
    assert [(p["value"], p["n"]) for p in points] == [("10", 2), ("20", 2)]
    assert all(p["min"] <= p["ci_low"] <= p["median"] <= p["ci_high"] <= p["max"] for p in points)
    assert prefix.with_suffix(".png").stat().st_size > 1000
    assert len(prefix.with_suffix(".csv").read_text().splitlines()) == 3


def test_sweep_table_follows_the_policies_order(fake, capsys, tmp_path):  # noqa: F811
    """--policies timeslice,gang lists timeslice first (not sorted by name), values in --vary order."""
    fake.sim()
    assert run_cli(fake, "sweep", "--repeat", "1", "--policies", "timeslice,gang", "--vary", "quantum=5ms,2ms",
                    "--no-plot", "--out", str(tmp_path / "q"), "job=gauss") == 0
    rows = [line.split()[:2] for line in capsys.readouterr().out.splitlines()
            if line.startswith(("gang ", "timeslice "))]
    assert rows == [["timeslice", "5ms"], ["timeslice", "2ms"], ["gang", "5ms"], ["gang", "2ms"]]
    points = json.loads((tmp_path / "q.json").read_text())["sweep"]["points"]
    assert [p["policy"] for p in points] == ["timeslice", "timeslice", "gang", "gang"]


def test_the_plot_rings_the_points_of_busy_boots(tmp_path, monkeypatch):
    """A saved plot says which points a busy host made noisy, as the table's BUSY marks do."""
    figure_module = pytest.importorskip("matplotlib.figure")
    vary = sweep.parse_vary("quantum=2ms,5ms")
    summaries = [sweep.Summary("gang", v, 1, "gauss", False, stats.Spread.of([1000.0, 1100.0]), busy=b, boots=2)
                 for v, b in (("2ms", 0), ("5ms", 1))]
    seen = []
    monkeypatch.setattr(figure_module.Figure, "savefig", lambda figure, path, **kw: seen.append(
        [(c.get_label(), len(c.get_offsets())) for ax in figure.axes for c in ax.collections
         if c.get_label().lstrip("_") == sweep.BUSY_LABEL]))
    sweep.draw(summaries, vary, "elapsed_us", tmp_path / "s.png", "t")
    sweep.draw([s for s in summaries if not s.busy], vary, "elapsed_us", tmp_path / "q.png", "t")
    assert seen == [[(sweep.BUSY_LABEL, 1)], []]
