"""The simulator's validation split into a fitting set (runs alone only) and a held-out set
fixed in code, the headline counting the held-out set only. The split, the tolerances and the judging are
checked as data; the pipeline runs with the simulator standing in for QEMU (no timing is asserted: only what
is booted, fitted and counted)."""

import json
import re
import shutil

import pytest

from schedlab import sim_validate as sv
from schedlab import sim_validate_heldout as ho
from schedlab.sim import ensure_sim, sim_boot


def test_seeds_are_held_out():
    assert not set(ho.HELD_SEEDS) & set(ho.FIT_SEEDS)
    assert not set(ho.HELD_SEEDS) & {1, 2, 3}        # the fitted listing's seeds (validate --seeds' default)


def _keys(token: str) -> dict:
    body = token.split(":", 1)[1] if ":" in token else ""
    return dict(kv.split("=", 1) for kv in body.split(",") if "=" in kv)


@pytest.mark.parametrize("tiny", [False, True])
def test_every_held_out_mix_has_something_the_fit_never_saw(tiny):
    fit = [t for w in ho.FIT_WAITS for t in ho.fit_jobs(w, tiny=tiny)]
    fit_apps = {sv.app_of(t) for t in fit}
    fit_waits = {_keys(t).get("barrier") for t in fit}
    cases = ho.held_out(tiny=tiny)
    assert {c.klass for c in cases} >= ({"other waits", "staggered"} if tiny else
                                        {"other waits", "other quanta", "other apps", "staggered"})
    for c in cases:
        new = [c.quantum != ho.FIT_QUANTUM] + [
            sv.app_of(t) not in fit_apps or _keys(t).get("barrier") not in fit_waits or "at" in _keys(t)
            for t in c.jobs]
        assert any(new), c
        assert not set(c.jobs) <= set(fit) or c.quantum != ho.FIT_QUANTUM, c


def test_tolerances_are_stated_with_reasons():
    for name, (tol, reason) in ho.TOL.items():
        assert 0 < tol < 1 and len(reason) > 30, name
    # every tolerance the headline and the table judge by is declared
    src = open(ho.__file__).read()
    used = set(re.findall(r'within\([^,]+, "(\w+)"\)', src)) | set(re.findall(r'TOL\["(\w+)"\]', src))
    assert used <= set(ho.TOL), used - set(ho.TOL)


def test_ranking_agreement_can_fail_and_respects_ties():
    q = {"timeslice": 3.0, "gang": 1.5, "partition": 2.0}
    assert ho.agrees(q, {"timeslice": 2.5, "gang": 1.1, "partition": 1.4}) == (True, True)
    assert ho.agrees(q, {"timeslice": 1.0, "gang": 3.0, "partition": 2.0}) == (False, False)   # reversed
    assert ho.agrees(q, {"timeslice": 3.0, "gang": 2.1, "partition": 2.0}) == (False, False)   # best swapped
    tied = {"timeslice": 3.0, "gang": 1.50, "partition": 1.52}        # QEMU does not order gang and partition
    assert ho.agrees(tied, {"timeslice": 3.0, "gang": 1.6, "partition": 1.5}) == (True, True)
    assert ho.agrees(tied, {"timeslice": 1.0, "gang": 1.6, "partition": 1.5}) == (False, False)


def _row(klass, policy, q, s, det=False, mix="m", fitted=False):
    r = {"cpus": 2, "class": klass, "mix": mix, "policy": policy, "job": "job=synth:procs=2", "quantum": "2ms",
         "deterministic": det, "alone_q": [100.0], "alone_s": [104.0], "slow_q": [q], "slow_s": [s]}
    r = ho.summarize(r)
    return {**r, "fitted": True} if fitted else r


def test_headline_counts_the_held_out_set_only_by_class():
    rows = [_row("other waits", "timeslice", 2.0, 2.1), _row("other waits", "gang", 1.0, 1.5),
            _row("staggered", "timeslice", 2.0, 2.0, mix="s"), _row("staggered", "gang", 1.2, 1.1, mix="s"),
            _row("other apps", "gang", 1.0, 1.0, det=True)]
    fitted = [_row("fit", "gang", 1.0, 9.0, fitted=True) for _ in range(5)]
    lines = ho.headline(rows + fitted)
    assert lines == ho.headline(rows)                     # fitted rows change nothing
    text = "\n".join(lines)
    assert "slowdowns at 2 harts, real time: 3 of 4 within 15 %" in text
    assert "other waits 1/2" in text and "staggered 2/2" in text
    assert "slowdowns at 2 harts, deterministic: 1 of 1" in text
    assert "the whole ranking agrees in 2 of 2 mixes, the best policy in 2 of 2" in text
    miss = {"cpus": 2, "class": "misses", "gauss_error": 0.05, "hog_error": 0.5}
    assert "miss counts (deterministic, under the model): 1 of 2 within 15 %" in "\n".join(ho.headline(rows + [miss]))
    assert all(f"{k} {ho.pct(v[0])}" in lines[-1] for k, v in ho.TOL.items())


def test_hog_step_comes_from_its_own_run():
    class Run:
        results = [{"app": "sleeper"}, {"app": "hog", "work": 100, "block": 5000, "cpu_us": 4000}]
    assert ho.hog_step_ns(Run()) == pytest.approx(8.0)
    tokens = ho.hog_cal_tokens(2, 101)
    assert "job=hog:procs=2" in tokens and "job=sleeper" in tokens and "work=0" in tokens
    assert not any(tokens.split("seed=101 ")[1] in " ".join(c.jobs) for c in ho.held_out())


def test_pipeline_fits_on_runs_alone_and_compares_only_held_out_seeds(tmp_path, monkeypatch):
    """The simulator stands in for QEMU (the default calibration); every boot is recorded: the fit's are runs
    alone at fit seeds, no fitted run is compared, and every compared run has a held-out seed."""
    ensure_sim()
    booted = []
    _sim_for_qemu(monkeypatch, booted)
    rows = ho.run([2], (False,), tiny=True, policies=["timeslice", "gang"], log=lambda s: None)
    seeds = [int(re.search(r"seed=(\d+)", a).group(1)) for a in booted]
    fit_boots = [a for a, s in zip(booted, seeds) if s in ho.FIT_SEEDS]
    assert fit_boots and all(a.count("job=") == 1 for a in fit_boots)          # alone, never a mix
    assert set(seeds) <= set(ho.FIT_SEEDS) | set(ho.HELD_SEEDS[:1])
    compared = {tuple(sorted(r["seeds"])) for r in rows}
    assert compared == {tuple(ho.HELD_SEEDS[:1])}
    assert {r["class"] for r in rows} == {"other waits", "staggered", "misses"}
    assert any("job=hog" in a and "job=sleeper" in a for a in booted)          # the hog's calibration run
    for r in rows:
        if r["class"] != "misses":
            assert r["slow_q"] and r["slow_s"] and r["alone_error"] is not None
    json.dumps(rows)                                                           # --json can write them
    text = "\n".join(ho.headline(rows))
    assert "rankings of the policies per mix (real time)" in text and "of 2 mixes" in text


def _sim_for_qemu(monkeypatch, booted):
    def fake_qemu(cpus, args, timeout=0, deterministic=False, model=None):
        booted.append(args)
        return sim_boot(cpus, args, model=model)

    def fake_wake(cpus, where, deterministic=False, model=None):
        path = where / f"calib-{len(list(where.iterdir()))}.json"
        shutil.copy(sv.DEFAULT_CALIB, path)
        return str(path), {}
    monkeypatch.setattr(ho, "boot", fake_qemu)
    monkeypatch.setattr(sv, "boot", fake_qemu)
    monkeypatch.setattr(sv, "wake_calib", fake_wake)


def test_the_sim_validation_section_reports_the_held_out_set_only(monkeypatch):
    """reproduce's sim-validation section (quick): a row per held-out slowdown and ranking (miss counts only in
    the full run), the headline stored for the header; no compared run has a fit seed."""
    from types import SimpleNamespace
    from schedlab.reproduce import simulated
    ensure_sim()
    booted = []
    _sim_for_qemu(monkeypatch, booted)
    sec = simulated.validation(SimpleNamespace(quick=True, cpus=2))
    classes = {c.klass for c in ho.quick_cases(ho.held_out())}
    assert all(any(f", {k}, " in r.label for r in sec.rows) for k in classes)
    assert any(r.label.startswith("ranking") for r in sec.rows)
    assert not any(r.label.startswith("misses") for r in sec.rows)          # quick: deterministic boots left out
    assert {r["policy"] for r in sec.data["cases"]} == {"timeslice", "gang"}
    assert all(r.verdict in ("reproduced", "shape reproduced") or r.why for r in sec.rows)
    assert sec.data["headline"][0].startswith("Held-out set only") and sec.notes.startswith("Held-out set only")
    assert all(set(c["seeds"]) == {ho.HELD_SEEDS[0]} for c in sec.data["cases"])


def test_paced_held_out_set_paces_every_qemu_boot_at_more_harts(monkeypatch):
    """validate --pace R --cpus 4: every QEMU boot of the fit and the held-out set is paced, each job has one
    process per hart, and the misses class (deterministic, unpaced) is left out; the headline says paced."""
    ensure_sim()
    seen = []

    def fake_qemu(cpus, args, timeout=0, deterministic=False, model=None):
        seen.append((cpus, args, model, deterministic))
        return sim_boot(cpus, args)
    _sim_for_qemu(monkeypatch, [])
    monkeypatch.setattr(ho, "boot", fake_qemu)
    monkeypatch.setattr(sv, "boot", fake_qemu)
    rows = ho.run([4], (False,), tiny=True, model="pace=3000000@4", paced=True, log=lambda s: None)
    assert seen and all(m == "pace=3000000@4" and c == 4 and not d for c, _a, m, d in seen)
    assert all("procs=4" in t for _c, a, _m, _d in seen for t in a.split() if t.startswith("job=synth"))
    assert "misses" not in {r["class"] for r in rows}
    assert "slowdowns at 4 harts, real time (pace=3000000@4 QEMU)" in "\n".join(ho.headline(rows))
