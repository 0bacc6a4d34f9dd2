"""tools/schedlab reproduce (tools/schedlab_harness/reproduce/): the registry, the writer, and one small section
end to end (the pipeline stays alive; the numbers are the full run's business, never a test's)."""

import json

import pytest

from schedlab_harness import cli
from schedlab_harness import reproduce as rp


def test_every_section_registers_with_a_budget():
    exps = rp.load_all()
    names = [e.name for e in exps]
    assert len(names) == len(set(names)) >= 10
    assert sum(e.full_seconds for e in exps) <= 30 * 60 and sum(e.quick_seconds for e in exps) <= 5 * 60


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
    assert "Verdicts on the papers' results: 1 reproduced, 0 partially, 0 not reproduced, 1 not on this machine." in md
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
