"""tools/schedlab reproduce (tools/py/schedlab/reproduce/): the registry, the writer, and one small section
end to end (the pipeline stays alive; the numbers are the full run's business, never a test's)."""

import json
import os
import shutil

import pytest

from schedlab import cli
from schedlab import reproduce as rp
from schedlab.qemu import REPO_ROOT


def test_every_section_registers_with_a_budget():
    exps = rp.load_all()
    names = [e.name for e in exps]
    assert len(names) == len(set(names)) >= 10
    plain = [e for e in exps if not e.paced]
    assert sum(e.full_seconds for e in plain) <= 30 * 60 and sum(e.quick_seconds for e in plain) <= 5 * 60
    paced = [e for e in exps if e.paced]      # reproduce --paced: more harts than cores, budgeted apart
    assert sum(e.full_seconds for e in paced) <= 30 * 60


def test_rows_need_a_known_verdict_and_a_reason_when_not_reproduced():
    with pytest.raises(ValueError):
        rp.Row("x", "1", "-", "1", "maybe")
    with pytest.raises(ValueError):
        rp.Row("x", "1", "-", "2", "partially")
    assert rp.Row("x", "1", "-", "2", "partially", "because").why == "because"


def test_numbers_and_verdicts():
    assert rp.fmt_spread([3.0, 1.0, 2.0]) == "2.00 (1.00..3.00)"
    assert rp.fmt_spread([5.0], "{:.0f}", " %") == "5 %"
    assert rp.verdict_within(1.1, 1.0, 0.15) == "reproduced"
    assert rp.verdict_within(1.3, 1.0, 0.15) == "partially"
    assert rp.verdict_within(2.0, 1.0, 0.15) == "not reproduced"


def test_results_md_and_json(tmp_path):
    ctx = rp.Ctx(out=tmp_path, progress=lambda msg: None)
    sections = [rp.Section("a", "Paper X: a claim", "X 1999", "`job=synth`",
                           [rp.Row("slowdown", "2.0", "2.0", "2.1 (2.0..2.2)", "reproduced"),
                            rp.Row("speedup", "16", "15", "-", "not on this machine", "needs 16 harts")],
                           "A sentence.", data={"v": [1, 2]}),
                rp.Section("b", "Paper Y", "-", "-", [], "", error="boot failed")]
    md = rp.write_results(sections, ctx).read_text()
    assert "## Paper X: a claim" in md and "| slowdown | 2.0 | 2.0 | 2.1 (2.0..2.2) | reproduced |" in md
    assert "not on this machine: needs 16 harts" in md and "This section failed to run" in md
    assert ("Verdicts on the papers' results (2 rows): quantitative 1 (1 reproduced, 0 partially, 0 not reproduced; "
            "1 of them still judged in a section's code, not by a declared criterion)") in md
    assert "not on this machine 1." in md
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["sections"][0]["data"] == {"v": [1, 2]}


def test_unknown_section_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["reproduce", "--only", "nonesuch", "--out", str(tmp_path)]) == 2
    assert "no section named nonesuch" in capsys.readouterr().err


@pytest.mark.qemu
def test_one_section_end_to_end(boot, tmp_path):
    assert cli.main(["reproduce", "--quick", "--only", "gang-switch", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "results.md").read_text()
    assert "## The cost of a gang slot switch" in md and "| overhead, % of the quantum |" in md
    assert json.loads((tmp_path / "results.json").read_text())["sections"][0]["name"] == "gang-switch"


def _section(name, ours):
    return rp.Section(name, f"Title of {name}", "-", "-", [rp.Row("claim", "1", "-", ours, "reproduced")], "")


def test_only_merges_into_the_results_already_there(tmp_path):
    """--only replaces its sections and keeps the others (in the registry's order); the header says what was
    re-run; results from another --cpus are not mixed in."""
    first, second = [e.name for e in rp.load_all()][:2]
    ctx = rp.Ctx(out=tmp_path, progress=lambda msg: None)
    rp.write_results([_section(first, "1.0"), _section(second, "2.0")], ctx)
    rp.write_results([_section(first, "1.5")], rp.Ctx(out=tmp_path, progress=lambda msg: None), partial=True)
    md = (tmp_path / "results.md").read_text()
    assert md.index(f"## Title of {first}") < md.index(f"## Title of {second}")
    assert "| claim | 1 | - | 1.5 | reproduced |" in md and "| claim | 1 | - | 2.0 | reproduced |" in md
    assert "| 1.0 |" not in md and "2 reproduced" in md
    assert f"Re-run since: `tools/schedlab reproduce --only {first} --cpus 2`" in md
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [s["name"] for s in doc["sections"]] == [first, second] and doc["reruns"][0]["sections"] == [first]
    rp.write_results([_section(second, "3.0")], rp.Ctx(cpus=4, out=tmp_path, progress=lambda msg: None),
                     partial=True)
    assert [s["name"] for s in json.loads((tmp_path / "results.json").read_text())["sections"]] == [second]


# ---------------------------------------------------------------- a failing section, and results never dropped

@pytest.fixture
def fake_sections(monkeypatch):
    """Two registered sections of our own (the registry's others stay out of rp.run by --only)."""
    calls = []

    def ok(ctx):
        calls.append("ok")
        return _section("t-ok", "1.0")

    def broken(ctx):
        calls.append("broken")
        return rp.Section("t-broken", "T", "-", "-", [rp.Row("x", "1", "-", "2", "partially")], "")

    rp.load_all()
    monkeypatch.setitem(rp.SECTIONS, "t-broken", rp.SectionSpec("t-broken", "Broken", 1, 1, 1, broken))
    monkeypatch.setitem(rp.SECTIONS, "t-ok", rp.SectionSpec("t-ok", "Fine", 2, 1, 1, ok))
    return calls


def test_any_exception_in_a_section_is_contained_and_reported(fake_sections, tmp_path, capsys):
    """A section that raises anything (here a Row without its reason) fails alone: the next runs, both are
    written, and the command says which failed (exit 1)."""
    assert cli.main(["reproduce", "--only", "t-broken,t-ok", "--out", str(tmp_path)]) == 1
    assert fake_sections == ["broken", "ok"]
    md = (tmp_path / "results.md").read_text()
    assert "This section failed to run" in md and "ValueError: row 'x'" in md and "needs its reason" in md
    assert "| claim | 1 | - | 1.0 | reproduced |" in md
    assert "sections that failed to run: t-broken" in capsys.readouterr().err


def test_gang_switch_verdicts_carry_their_reasons(monkeypatch):
    """On a busy host the switch costs and skews exceed the thesis's: every such row says why."""
    from types import SimpleNamespace
    from schedlab.reproduce import markatos_gang
    stats = SimpleNamespace(count=5, skew_median_us=900.0, latency_median_us=950.0, cost_median_us=5910.0,
                            overhead_pct=None)
    monkeypatch.setattr(markatos_gang.tr, "parse_trace", lambda traces: None)
    monkeypatch.setattr(markatos_gang.tr, "switch_stats", lambda trace: stats)
    ctx = SimpleNamespace(reps=lambda full, quick: 2, boot=lambda tokens, seed: SimpleNamespace(traces=[]))
    section = markatos_gang.slot_switch(ctx)
    # the absolute costs have no paper number for this machine (measured); the share of the quantum does, and
    # with no switch acked by every hart there is nothing to judge it by
    assert [r.verdict for r in section.rows] == ["measured", "not on this machine", "measured", "measured"]
    assert all(r.why for r in section.rows if r.verdict not in ("reproduced", "measured"))
    stats.overhead_pct = 5.0
    over = markatos_gang.slot_switch(ctx).rows[1]
    assert over.verdict == "not reproduced" and "0.5" in over.why and over.criterion["target"] == 0.5


def test_hood_reason_never_says_negative_longer():
    from schedlab.reproduce import hood
    assert "17 % less time" in hood._threads_why(83.0, 100.0) and "-" not in hood._threads_why(83.0, 100.0)[:60]
    assert "20 % longer" in hood._threads_why(120.0, 100.0)


def _full_results(tmp_path, quick=False, cpus=2):
    names = [e.name for e in rp.load_all() if not e.name.startswith("t-")][:3]
    rp.write_results([_section(n, "1.0") for n in names], rp.Ctx(out=tmp_path, quick=quick, cpus=cpus,
                                                                progress=lambda msg: None))
    return names, (tmp_path / "results.md").read_text(), (tmp_path / "results.json").read_text()


def test_only_quick_into_full_results_is_refused_before_any_boot(fake_sections, tmp_path, capsys):
    """reproduce --only X --quick over a full run's results: nothing runs, nothing is dropped, and the message
    names --quick (not --cpus) and the ways out."""
    names, md, js = _full_results(tmp_path)
    assert cli.main(["reproduce", "--quick", "--only", "t-ok", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert fake_sections == [] and (tmp_path / "results.md").read_text() == md
    assert (tmp_path / "results.json").read_text() == js
    assert "differ in --quick" in err and "--cpus (" not in err and "--out DIR" in err and "--replace" in err
    assert f"drop 3 sections ({', '.join(names)})" in err


def test_other_cpus_or_whole_run_refused_and_replace_allows(fake_sections, tmp_path, capsys):
    _, md, _ = _full_results(tmp_path)
    assert cli.main(["reproduce", "--cpus", "1", "--only", "t-ok", "--out", str(tmp_path)]) == 2
    assert "differ in --cpus (2 there, 1 here)" in capsys.readouterr().err and fake_sections == []
    (tmp_path / "results.json").write_text("{not json")
    assert cli.main(["reproduce", "--only", "t-ok", "--out", str(tmp_path)]) == 2
    assert "unreadable" in capsys.readouterr().err and (tmp_path / "results.md").read_text() == md
    assert cli.main(["reproduce", "--cpus", "1", "--only", "t-ok", "--replace", "--out", str(tmp_path)]) == 0
    assert [s["name"] for s in json.loads((tmp_path / "results.json").read_text())["sections"]] == ["t-ok"]


def test_replace_of_one_section_replaces_that_section_not_the_file(fake_sections, tmp_path):
    """--only X --quick --replace over a full run's results kept none of them; now X replaces
    its own section, the others stay, the file keeps its mode and the header names the quick re-run."""
    names, _, _ = _full_results(tmp_path)
    assert cli.main(["reproduce", "--quick", "--only", "t-ok", "--replace", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [s["name"] for s in doc["sections"]] == ["t-ok"] + names
    assert (doc["cpus"], doc["quick"]) == (2, False)
    assert "Re-run since: `tools/schedlab reproduce --quick --only t-ok --cpus 2`" in (tmp_path / "results.md").read_text()


def test_same_settings_only_merges(fake_sections, tmp_path):
    names, _, _ = _full_results(tmp_path)
    assert cli.main(["reproduce", "--only", "t-ok", "--out", str(tmp_path)]) == 0
    assert [s["name"] for s in json.loads((tmp_path / "results.json").read_text())["sections"]] == ["t-ok"] + names


def test_one_time_estimate_everywhere(capsys):
    """README, --help and --list quote the registry's sums (rounded to whole minutes)."""
    import re
    from pathlib import Path
    exps = rp.load_all()
    full, quick = (round(rp.expected_minutes(exps, q)) for q in (False, True))
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert f"(~{full} min)" in readme and f"(~{quick} min)" in readme
    assert re.findall(r"reproduce.*\(~(\d+) min\)", readme) == [str(full), str(quick)]
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"about {full} minutes" in out and f"--quick about {quick}" in out
    assert cli.main(["reproduce", "--list"]) == 0
    assert f"expected {rp.expected_minutes(exps, False):.1f} min" in capsys.readouterr().out


def test_every_row_that_can_fail_is_given_a_reason():
    """Statically: a Row(...) whose verdict is not the literal "reproduced" passes a why (the 6th argument or
    why=), so no verdict path can reach Row's check without one (gang-switch's skew row had none)."""
    import ast
    from pathlib import Path
    missing = []
    for path in sorted(Path(rp.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Row" and len(node.args) >= 5:
                verdict = node.args[4]
                fixed = isinstance(verdict, ast.Constant) and verdict.value in ("reproduced", "measured")
                if not fixed and len(node.args) < 6 and not any(k.arg == "why" for k in node.keywords):
                    missing.append(f"{path.name}:{node.lineno}")
    assert missing == []


def test_the_runs_calibration_card_comes_from_a_boot_at_its_harts_and_model(monkeypatch, tmp_path):
    """A section booting one hart first (ipi_ns=na) or under its own machine-model profile (a slower card) must
    not become the run's card that constants() and the header take: the first boot at --cpus under the run's
    own model does."""
    from schedlab import qemu as q
    cards = {(1, "none"): {"ipi_ns": "na", "switch_ns": 80.0}, (2, "iris"): {"ipi_ns": 9000.0, "switch_ns": 300.0},
             (2, "none"): {"ipi_ns": 1500.0, "switch_ns": 75.0}}

    def fake_boot(cpus, words, timeout=0, model=None):
        spec = "iris" if model else "none"
        run = q.Run(cpus=cpus, bootargs=" ".join(words), argv=[], console="", exit_code=0, model=spec)
        run.parsed.calib = dict(cards[(cpus, spec)])
        return run

    monkeypatch.setattr(rp.qemu, "boot", fake_boot)
    monkeypatch.setattr(rp.busy, "assess", lambda run: rp.busy.Verdict())
    ctx = rp.Ctx(cpus=2, out=tmp_path)
    ctx.boot("job=gauss", cpus=1)
    ctx.boot("job=gauss", model="iris")
    assert ctx.calib is None
    ctx.boot("job=gauss")
    assert ctx.calib == cards[(2, "none")]


def test_a_failed_rerun_never_replaces_a_section_under_docs():
    """Under docs/ an --only run whose section failed keeps the results already there."""
    out = REPO_ROOT / "docs" / f"hostile-reproduce-{os.getpid()}"
    name = rp.load_all()[0].name
    try:
        rp.write_results([_section(name, "1.0")], rp.Ctx(out=out, progress=lambda msg: None))
        failed = rp.Section(name, f"Title of {name}", "-", "-", [], "", error="boot failed")
        rp.write_results([failed], rp.Ctx(out=out, progress=lambda msg: None), partial=True)
        doc = json.loads((out / "results.json").read_text())
        assert [(s["name"], s["error"]) for s in doc["sections"]] == [(name, "")]
        assert "| claim | 1 | - | 1.0 | reproduced |" in (out / "results.md").read_text()
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_a_boot_the_busy_check_flags_is_booted_again(monkeypatch):
    """Ctx.boot boots a flagged scenario again (same seed), up to BUSY_REBOOTS times: the result is the first
    boot the check passed, and only a boot flagged every time counts as busy (keeping the run out of docs/)."""
    from types import SimpleNamespace
    from schedlab import busy
    verdicts = iter([["calibration ipi 21 us"], [], ["ipi"], ["ipi"], ["ipi"]])
    booted = []

    def fake_boot(cpus, words, **kw):
        booted.append(list(words))
        return SimpleNamespace(busy=busy.Verdict(next(verdicts)), boot={}, calib=None, cpus=cpus,
                               timed_out=False, exit_code=0, n=len(booted))
    monkeypatch.setattr(rp.executor, "boot", fake_boot)
    said = []
    ctx = rp.Ctx(cpus=2, progress=said.append)
    assert ctx.boot("job=synth", seed=3).n == 2
    assert ctx.boots == 1 and ctx.reboots == 1 and ctx.busy_boots == 0
    assert booted[0] == booted[1] and "seed=3" in booted[0] and any("booting it again" in m for m in said)
    assert ctx.boot("job=synth", seed=4).n == 2 + 1 + rp.BUSY_REBOOTS
    assert ctx.busy_boots == 1 and ctx.reboots == 1 + rp.BUSY_REBOOTS
    assert "booted again" in rp._reboot_words(3) and rp._reboot_words(0) == ""
