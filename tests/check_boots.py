"""The battery's boots for the suite. The policy-generic tests judge a policy's boots by schedlab check's
definitions (tools/py/schedlab/check/battery.py: contract, progress, work conservation, fairness, the
declared invariants), never by checks of their own, and read them from the battery's own cases, each booted
once per test session however many tests read it - across pytest-xdist's workers too (make test runs one per
core): the first worker to need a case boots it under a lock and stores its Run beside the session's
temporary directories; the others read it back. Every case is deterministic (QEMU in deterministic mode, or
the simulator), so the one boot stands for any other, and the key is the executor's (kernel image hash,
tokens, harts, model, extra arguments): another kernel is another boot.

    def test_x(battery_session, policy):            # the fixture imported from here
        decl = declaration_of(policy)
        case = cases_on(policy, decl, "qemu-2")["contract"]
        run, verdicts = judged(battery_session, case, decl, kernel_under_test())

The test tree's policies (tests/policies/*.c) and the worked assignment's planted bugs and skeleton are one
kernel, built once (``tree_build``) for tests/test_check_builtins.py and tests/test_check_rubric.py.
"""

import fcntl
import json
import os
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from schedlab import executor
from schedlab.check import battery, declare, kbuild, run as check_run
from schedlab.journal import run_from_dict, run_to_dict

TEST_POLICIES = REPO_ROOT / "tests" / "policies"
#: the worked assignment (docs/assignment/stride/): its reference solution, skeleton and planted bugs
REFERENCE = TEST_POLICIES / "stride.c"
SKELETON = REPO_ROOT / "docs" / "assignment" / "stride" / "stride.c"
SOURCES = REPO_ROOT / "build" / "check" / "tests-stride-src"
#: bug -> (the reference's line, the bug's line(s), the rubric check that must lose its points, the one case
#: of the battery that shows it): starvation (the pass never advances: the first job with work always wins),
#: a share off by 2x (every job strides as if it had the default tickets), a broken invariant (a preempted
#: process goes back to the front of its job's queue, ahead of its job's older waiters)
BUGS = {
    "starve": ("    sj->pass += sj->stride;\n", "", "progress", "share@qemu-2"),
    "share2x": ("    sj->pass += sj->stride;\n", "    sj->pass += STRIDE1 / 10;\n", "fairness", "share@qemu-2"),
    "order": ("    runq_push_back(&sj->queue, p);\n",
              "    if (how == ENQ_PREEMPT)\n        runq_push_front(&sj->queue, p);\n    else\n"
              "        runq_push_back(&sj->queue, p);\n", "invariants", "churn@qemu-2"),
}
_memo: dict = {}


def session_dir(tmp_path_factory) -> Path:
    """A directory every worker of this session shares: xdist gives each worker a basetemp under one root."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "battery-boots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def battery_session(tmp_path_factory) -> Path:
    """``session_dir``, as a fixture: a test module imports it by name."""
    return session_dir(tmp_path_factory)


def declaration_of(policy: str) -> declare.Declaration:
    """The policy's declaration from its file: the tree's (kernel/sched/) or the test tree's."""
    if declare.tree_source(policy) is None:
        for path in sorted(TEST_POLICIES.glob("*.c")):
            if declare.policy_name(path) == policy:
                return declare.declaration(policy, path)
    return declare.declaration(policy)


def topology(name: str) -> battery.Topology:
    return next(t for t in battery.FULL + battery.QUICK if t.name == name)


def cases_on(policy: str, decl, topo: str) -> dict:
    """mix -> the battery's case of ``policy`` on topology ``topo``."""
    return {c.mix: c for c in battery.cases(policy, decl, [topology(topo)])}


def booted(session: Path, case: battery.Case, kernel: Path):
    """The case's Run, booted once per session (module docstring)."""
    task = check_run.task(case, kbuild.Target("", None, Path(kernel), None))   # the kernel is all a task reads
    key = task.key()
    if key not in _memo:
        path = session / f"{key}.json"
        with open(session / f"{key}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.is_file():
                _memo[key] = run_from_dict(json.loads(path.read_text()))
            else:
                _memo[key] = executor.Sequential().run(task)
                path.write_text(json.dumps(run_to_dict(_memo[key])))
    return _memo[key]


def judged(session: Path, case: battery.Case, decl, kernel: Path):
    """(the case's Run, the battery's verdicts on it)."""
    run = booted(session, case, kernel)
    return run, battery.judge(case, run, decl)


def failures(verdicts) -> list[str]:
    return [f"{v.check}: {v.detail}" for v in verdicts if v.status == "fail"]


# ---------------------------------------------------------------- the test tree's kernel

def renamed(text: str, name: str) -> str:
    return text.replace('"stride"', f'"{name}"').replace("stride_class", f"{name}_class")


def _keep(path: Path, text: str) -> Path:
    """Write only what changed, so make finds the last session's objects up to date."""
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path


def tree_build() -> dict:
    """policy -> kbuild.Target: one checked kernel with every policy file of tests/policies, the assignment's
    three planted bugs (stride_<bug>) and its skeleton (skel). QEMU only: rogue.c calls a service the
    simulator's core does not have (its own header)."""
    SOURCES.mkdir(parents=True, exist_ok=True)
    ref = REFERENCE.read_text()
    policies = [(declare.policy_name(p), p) for p in sorted(TEST_POLICIES.glob("*.c"))]
    for bug, (line, replacement, _, _) in BUGS.items():
        assert line in ref, f"tests/policies/stride.c changed: {line!r} is gone"
        name = f"stride_{bug}"
        policies.append((name, _keep(SOURCES / f"{name}.c", renamed(ref.replace(line, replacement), name))))
    policies.append(("skel", _keep(SOURCES / "skel.c", renamed(SKELETON.read_text(), "skel"))))
    return kbuild.build_many(policies, REPO_ROOT / "build" / "check" / "tests-tree", quiet=True, sim=False)
