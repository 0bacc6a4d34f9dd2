"""reproduce/criteria.py: verdicts computed from declared criteria, every criterion falsifiable, and the committed
docs/results.json recomputable from its rows' criteria and measurements."""

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from schedlab import reproduce as rp
from schedlab.reproduce import criteria as cr

DOCS = Path(rp.REPO) / "docs"


def _results() -> dict:
    return json.loads((DOCS / "results.json").read_text())


def _rows(doc):
    return [(s["name"], r) for s in doc["sections"] for r in s["rows"]]


# ---------------------------------------------------------------- the kinds

def test_within_partly_and_side():
    c = cr.within("x", 2.0, 0.1, "2", "p. 1", "r", partly=0.3)
    assert cr.judge(c, {"x": [2.1, 1.9, 2.05]}) == "reproduced"
    assert cr.judge(c, {"x": [2.5]}) == "partially"
    assert cr.judge(c, {"x": [3.0]}) == "not reproduced"
    s = cr.within("r", 1.06, 0.3, "1.06", "T. 4.1", "r", side=1.0)
    assert cr.judge(s, {"r": [1.1]}) == "reproduced"
    assert cr.judge(s, {"r": [0.95]}) == "not reproduced"     # within 30 % of 1.06, but faster, not slower


def test_bound_ordering_trend():
    b = cr.bound("o", "<", 10, "less than 10 %", "Fig. 3.6", "stated as a bound", domain=(-100, 1000))
    assert cr.judge(b, {"o": [4.0]}) == "reproduced" and cr.judge(b, {"o": [12.0]}) == "not reproduced"
    o = cr.ordering(["a", "b"], "a slower", "s", "r")
    assert cr.judge(o, {"a": [3], "b": [2]}) == "shape reproduced"
    assert cr.judge(o, {"a": [2], "b": [2]}) == "shape not reproduced"
    q = cr.trend(["l1", "l2", "l4"], [1, 2, 4], "quadratic", "s", "r", exponent=2.0, tol=0.5)
    assert cr.judge(q, {"l1": [1], "l2": [4], "l4": [16]}) == "shape reproduced"
    assert cr.judge(q, {"l1": [1], "l2": [2], "l4": [4]}) == "shape not reproduced"
    assert cr.judge(q, {"l1": [1], "l2": [1], "l4": [7798]}) == "shape not reproduced"     # exp. 4's 7798
    p = cr.trend(["p1", "p2", "p4", "p8"], [1, 2, 4, 8], "peaks at 4", "s", "r", peak_at=4)
    assert cr.judge(p, {"p1": [1], "p2": [1.8], "p4": [2.5], "p8": [2.0]}) == "shape reproduced"
    assert cr.judge(p, {"p1": [1], "p2": [1.8], "p4": [2.5], "p8": [3.0]}) == "shape not reproduced"


def test_measured_harts_and_simulated():
    assert cr.judge(cr.measured(), {"x": [1]}) == "measured"
    c = cr.within("x", 39, 0.25, "39 %", "Fig. 3.5", "r", domain=(-100, 1000), needs_harts=8)
    assert cr.judge(c, {"x": [73]}, harts=2) == "not on this machine"
    assert cr.judge(c, {"x": [1.86]}, harts=16, simulated=True) == "not reproduced (simulated)"
    assert cr.judge(c, {"x": [40]}, harts=8) == "reproduced"
    assert cr.judge(c, {}, harts=8) == "not on this machine"        # nothing measured


def test_a_criterion_that_cannot_fail_is_refused():
    # Markatos ch. 2's old band: 1.0..2.09 at P = 2 passes every parallel run (the domain of a speedup at 2)
    with pytest.raises(cr.CriterionError):
        cr.within("s", 1.545, 0.36, "1..2.09", "Fig. 2.2", "r", domain=(1.0, 2.0))
    with pytest.raises(cr.CriterionError):
        cr.bound("c", "<=", 500, "<= 500 us", "3.4.2", "r", domain=(0.0, 400.0))
    with pytest.raises(cr.CriterionError):
        cr.within("x", 1.0, 0.1, "1", "s", "r", partly=0.05)         # partly must be wider than rel
    with pytest.raises(cr.CriterionError):
        cr.within("x", 2.0, 0.1, "", "s", "r")                      # no paper number or claim
    with pytest.raises(cr.CriterionError):
        cr.falsifier(cr.measured())


@pytest.mark.parametrize("c", [
    cr.within("x", 2.0, 0.15, "2", "s", "r", domain=(0.0, 2.0)),
    cr.within("x", 1.06, 0.15, "1.06", "s", "r", partly=0.45, side=1.0, domain=(0.0, 10.0)),
    cr.bound("x", ">", 2.0, "more than twice", "s", "r"),
    cr.ordering(["a", "b", "c"], "a > b > c", "s", "r"),
    cr.trend(["a", "b"], [1, 4], "linear", "s", "r", exponent=1.0, tol=0.3),
    cr.trend(["a", "b", "c"], [1, 4, 8], "peak at 4", "s", "r", peak_at=4, needs_harts=8),
])
def test_every_kind_has_a_failing_input_in_its_domain(c):
    m = cr.falsifier(c)
    lo, hi = c.domain or (0.0, math.inf)
    assert all(lo <= v <= hi for vs in m.values() for v in vs)
    assert cr.judge(c, m, harts=c.needs_harts or 2) not in cr.PASSING


def test_criteria_round_trip_through_json():
    c = cr.within("x", 1.41, 0.15, "101 / 71.5", "Table 4.1", "r", partly=0.45, side=1.0, domain=(0.0, 10.0))
    assert cr.Criterion.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    z = cr.bound("o", "<=", 0.0, "zero", "s", "r", domain=(-1.0, 1.0))
    assert cr.Criterion.from_dict(json.loads(json.dumps(z.to_dict()))) == z      # a bound at 0 survives


def test_a_row_cannot_pass_without_a_paper_number_or_a_criterion():
    with pytest.raises(ValueError):
        rp.Row("latency (us)", "-", "-", "69.4", "reproduced")
    assert rp.Row("latency (us)", "-", "-", "69.4", "measured").verdict == "measured"
    row = rp.judged("x", cr.within("x", 2.0, 0.1, "2", "s", "r"), {"x": [3.0]})
    assert row.verdict == "not reproduced" and row.why and row.criterion["target"] == 2.0


# ---------------------------------------------------------------- the committed results

def test_every_row_with_a_criterion_recomputes_and_can_fail():
    judged = 0
    for name, r in _rows(_results()):
        if not r.get("criterion"):
            continue
        c = cr.Criterion.from_dict(r["criterion"])
        assert cr.judge(c, r["measured"], r.get("harts"), r.get("simulated", False)) == r["verdict"], (name, r["label"])
        if c.kind != "measured":
            failing = cr.falsifier(c)
            assert cr.judge(c, failing, c.needs_harts or r.get("harts")) not in cr.PASSING, (name, r["label"])
        judged += 1
    assert judged >= 60


def test_no_row_passes_without_a_paper_number_or_claim():
    for name, r in _rows(_results()):
        if r["verdict"] in cr.PASSING and r["verdict"] != cr.MEASURED:
            assert r.get("criterion") or r["paper"].strip() not in ("", "-"), (name, r["label"])


def test_the_header_counts_match_the_rows():
    doc = _results()
    line = next(ln for ln in (DOCS / "results.md").read_text().splitlines() if ln.startswith("Verdicts on the"))
    counts = rp.counts(rp._load_sections(doc))
    total = sum(sum(v.values()) for k, v in counts.items() if k != "undeclared")
    assert f"({total} rows)" in line
    rows = [r for s in doc["sections"] if not s["name"].startswith("sim-") for r in s["rows"]]
    assert total == len(rows)
    for col, word in (("quantitative", "quantitative"), ("shape", "shape"), ("measured", "measured"),
                      ("simulated", "simulated"), ("elsewhere", "not on this machine")):
        n = sum(1 for r in rows if cr.category(r["verdict"]) == col)
        assert re.search(rf"{word} {n}\b", line), (word, n, line)
    assert f"{counts['undeclared']} of them still judged" in line


def test_regenerating_from_the_stored_data_changes_nothing(tmp_path):
    """docs/results.* are what the framework makes of the stored measurements: rejudge reproduces them."""
    shutil.copy(DOCS / "results.json", tmp_path / "results.json")
    rp.rejudge(tmp_path)
    assert json.loads((tmp_path / "results.json").read_text())["sections"] == _results()["sections"]
    assert (tmp_path / "results.md").read_text() == (DOCS / "results.md").read_text()
