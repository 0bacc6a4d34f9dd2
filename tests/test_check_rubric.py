"""schedlab check's grading mode on the worked assignment (docs/assignment/stride/): the reference solution
(tests/policies/stride.c) scores full marks against the shipped rubric, and three planted bugs - each a
one-line change a student could make - lose the points of the item that should catch them and keep the
others: starvation (the pass never advances: the first job with work always wins), a share off by 2x (every
job strides as if it had the default tickets: 1-ticket jobs get twice their share), a broken invariant (a
preempted process goes back to the front of its job's queue, ahead of its job's older waiters).

Cheap by construction: one kernel carries the reference, the three bugs and the skeleton (renamed), and
the test tree's other policies (check_boots.tree_build, where the bugs are written), built once; the
reference is graded on QEMU at 2 harts (the churn and share mixes: two boots), each bug on the one boot that
shows its bug, and the reference's card stands in for its measured behaviour. Every boot is deterministic.
"""

import re

import pytest

from check_boots import BUGS, tree_build
from conftest import REPO_ROOT
from schedlab.check import rubric

RUBRIC = REPO_ROOT / "docs" / "assignment" / "stride" / "rubric.toml"


@pytest.fixture(scope="module")
def targets():
    return tree_build()


@pytest.fixture(scope="module")
def shipped():
    return rubric.load(RUBRIC)


@pytest.fixture(scope="module")
def reference_grade(targets, shipped):
    return rubric.grade(targets["stride"], shipped, only=["churn@qemu-2", "share@qemu-2"])


def earned(result) -> dict:
    return {i["check"]: (i["earned"], i["points"]) for i in result["items"]}


@pytest.mark.qemu
def test_the_reference_scores_full_marks(reference_grade, shipped):
    assert reference_grade["total"] == shipped.total == 100, rubric.show(reference_grade)
    card = reference_grade["card"]
    assert [t.name for t in card.topologies] == ["qemu-2"]
    assert all(card.cell(c, "qemu-2").status == "pass" for c in ("contract", "progress", "work-conservation",
                                                                "fairness", "invariants"))


@pytest.mark.qemu
@pytest.mark.parametrize("bug", list(BUGS))
def test_a_planted_bug_loses_the_points_it_should(targets, shipped, reference_grade, bug):
    check, case = BUGS[bug][2], BUGS[bug][3]
    result = rubric.grade(targets[f"stride_{bug}"], shipped, only=[case], reference_card=reference_grade["card"])
    got = earned(result)
    assert got[check][0] == 0, rubric.show(result)
    assert got["contract"] == (20, 20), rubric.show(result)          # every bug still boots cleanly
    if bug != "starve":                                             # a starved job has no share to measure
        judged = {i["check"] for i in result["items"] if i["lost"] != [rubric.NOT_JUDGED]}
        kept = {c: e for c, e in got.items() if c != check and c in judged}
        assert kept and all(e == p for e, p in kept.values()), rubric.show(result)
    assert any(re.search(r"lost: qemu-2", line) for line in rubric.show(result).splitlines())


def test_the_skeleton_builds(targets):
    """The assignment's skeleton compiles as given (it boots too: the rubric grades it at 50 of 100)."""
    assert targets["skel"].kernel.is_file()
