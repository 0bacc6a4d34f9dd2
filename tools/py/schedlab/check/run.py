"""Running the battery: every case a task of the existing executor (``--jobs``, Dask), judged as it comes
back, with one progress line per boot on stderr, and the verdicts gathered into a card: per check and
topology the worst verdict (fail > pass > not-declared > not-run) with the case that decided it.

Every failure carries the one line that replays it: ``tools/schedlab check <policy> --case <mix@topology>``
boots exactly that case again (the same tokens, deterministic mode, perturb seed) and prints its verdicts
with details; the card's JSON also has the bare boot command.
"""

from __future__ import annotations

import os
import shlex
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import executor
from ..qemu import HarnessError
from . import battery
from .battery import CHECKS, Case, Verdict
from .declare import Declaration
from .kbuild import Target, _shown

BOOT_TIMEOUT = 300.0
RANK = {"fail": 3, "pass": 2, "not-declared": 1, "not-run": 0}


@dataclass
class Cell:
    """One check on one topology."""
    status: str = "not-run"
    detail: str = ""
    case: str = ""
    value: float | None = None
    replay: str = ""
    boot: str = ""


@dataclass
class Card:
    policy: str
    target: Target
    decl: Declaration
    topologies: list
    cells: dict = field(default_factory=dict)       # (check, topology name) -> Cell
    notes: list = field(default_factory=list)
    baseline: dict = field(default_factory=dict)    # baseline.py's result
    boots: int = 0

    def cell(self, check: str, topo: str) -> Cell:
        return self.cells.setdefault((check, topo), Cell())

    def failed(self) -> list[str]:
        """The checks that failed somewhere, in CHECKS order."""
        return [c for c in CHECKS if any(self.cell(c, t.name).status == "fail" for t in self.topologies)]


def boot_line(case: Case, target: Target) -> str:
    t = case.topo
    if t.engine == "sim":
        model = f" --model {t.model}" if t.model else ""
        return f"SCHEDLAB_SIM={_shown(target.sim)} tools/schedlab run --sim --cpus {t.harts}{model} {case.tokens}"
    extra = f" --qemu-extra {shlex.quote(t.extra)}" if t.extra else ""
    model = f" --model {t.model}" if t.model else ""
    return (f"tools/schedlab run --deterministic --cpus {t.harts} --kernel {_shown(target.kernel)}{model}{extra} "
            f"{case.tokens}")


def replay_line(case: Case, target: Target) -> str:
    return f"tools/schedlab check {target.check_arg()} --case {case.id}"


def task(case: Case, target: Target) -> executor.Task:
    t = case.topo
    if t.engine == "sim":
        return executor.sim_task(t.harts, case.tokens, timeout=BOOT_TIMEOUT, model=t.model, deterministic=True)
    return executor.qemu_task(t.harts, case.tokens, target.kernel, BOOT_TIMEOUT, t.extra, True, t.model)


@contextmanager
def simulator(target: Target):
    """The simulator with the checked policy as the one executor.sim_task runs ($SCHEDLAB_SIM), for the
    battery's duration."""
    before = os.environ.get("SCHEDLAB_SIM")
    if target.sim:
        os.environ["SCHEDLAB_SIM"] = str(target.sim)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SCHEDLAB_SIM", None)
        else:
            os.environ["SCHEDLAB_SIM"] = before


def record(card: Card, case: Case, verdicts: list[Verdict]) -> None:
    for v in verdicts:
        cell = card.cell(v.check, case.topo.name)
        if RANK[v.status] > RANK[cell.status] or (v.status == cell.status == "pass" and (v.value or 0) > (cell.value or 0)):
            cell.status, cell.detail, cell.case, cell.value = v.status, v.detail, case.id, v.value
            cell.replay = replay_line(case, card.target) if v.status == "fail" else ""
            cell.boot = boot_line(case, card.target)


def mark_undeclared(card: Card) -> None:
    for t in card.topologies:
        for check, declared in (("progress", card.decl.progress), ("work-conservation", card.decl.work_conserving),
                                ("fairness", card.decl.share != "none"), ("invariants", bool(card.decl.invariants))):
            if not declared:
                card.cell(check, t.name).status = "not-declared"


def execute(card: Card, cases: list[Case], out=sys.stderr) -> None:
    """Boot every case on the current executor and record its verdicts; a failure's replay line goes to
    stdout. The caller has the simulator in place (``simulator``)."""
    ex = executor.current()
    for n, (case, run) in enumerate(zip(cases, ex.map([task(c, card.target) for c in cases])), 1):
        try:
            verdicts = battery.judge(case, run, card.decl)
        except HarnessError as exc:          # a trace the parser refuses: the contract is broken
            verdicts = [Verdict("contract", "fail", f"unreadable console: {exc}")]
        record(card, case, verdicts)
        card.boots += 1
        bad = [v for v in verdicts if v.status == "fail"]
        print(f"check: [{n}/{len(cases)}] {case.id}: " + ("ok" if not bad else
              "FAIL " + ", ".join(v.check for v in bad)), file=out, flush=True)
        for v in bad:
            print(f"FAIL {v.check} {case.id}: {v.detail}\n  replay: {replay_line(case, card.target)}", flush=True)
    mark_undeclared(card)


def battery_cases(card: Card) -> list[Case]:
    """The battery's cases; the simulator's topologies are left out (with a note) when there is none."""
    topologies = card.topologies
    if card.target.sim is None and any(t.engine == "sim" for t in topologies):
        card.notes.append(f"simulator topologies not run: {card.target.sim_problem}")
        topologies = [t for t in topologies if t.engine != "sim"]
    return battery.cases(card.policy, card.decl, topologies)
