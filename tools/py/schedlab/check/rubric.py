"""Grading mode: ``schedlab check FILE --rubric RUBRIC.toml`` prints points per item and a total.

A rubric (TOML, read with tomllib) names the battery, what the policy must promise, an optional reference
solution, and the items::

    title = "Stride scheduling with per-job tickets"
    battery = "quick"                   # quick | full: the topologies (battery.QUICK / FULL)
    pass_mark = 60                      # exit 1 below it
    only = ["qemu-2"]                   # optional: only these mixes, topologies or cases (mix@topology)

    [promises]                          # judged as if the file declared these: a submission cannot opt out
    work-conserving = "yes"
    share = "tickets"
    invariants = ["job-fifo"]

    [reference]
    file = "tests/policies/stride.c"    # measured on the same cases; items with `within` compare with it

    [[item]]
    name = "no job starves"
    check = "progress"                  # a check of battery.CHECKS
    points = 20
    within = 2.0                        # optional: measured value <= within x the reference's + slack
    slack = 1.0
    tolerance = 0.25                    # optional, fairness only: the share's relative error allowed

An item earns points x (topologies where it held / topologies where it was judged): it holds on a topology
when the check passed there (fairness: its error within the item's ``tolerance`` when given) and, with
``within``, the measured value (battery.Verdict.value: the longest wait in quanta, idle us, the share's error)
is no worse than the reference's. Every boot is deterministic (clock=virtual, or the simulator), so a grade
is the same on any host and at any ``--jobs``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .. import executor
from ..qemu import REPO_ROOT, HarnessError
from . import battery, declare, kbuild, run
from . import deterministic

KEYS = {"title", "battery", "pass_mark", "only", "promises", "reference", "item"}
NOT_JUDGED = "not judged: no case of the selection feeds this check"
ITEM_KEYS = {"name", "check", "points", "within", "slack", "tolerance"}


@dataclass
class Item:
    name: str
    check: str
    points: float
    within: float | None = None
    slack: float = 0.0
    tolerance: float | None = None


@dataclass
class Rubric:
    title: str
    battery: str
    pass_mark: float
    only: list
    promises: dict
    reference: Path | None
    items: list

    @property
    def total(self) -> float:
        return sum(i.points for i in self.items)


def load(path: str | Path) -> Rubric:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"rubric {path}: {exc}") from None
    unknown = set(data) - KEYS
    if unknown:
        raise HarnessError(f"rubric {path}: unknown key {sorted(unknown)[0]!r} (expected {', '.join(sorted(KEYS))})")
    items = []
    for n, raw in enumerate(data.get("item", []), 1):
        bad = set(raw) - ITEM_KEYS
        if bad or raw.get("check") not in battery.CHECKS or not isinstance(raw.get("points"), (int, float)):
            raise HarnessError(f"rubric {path}: item {n} needs check (one of {', '.join(battery.CHECKS)}) and points"
                               + (f"; unknown key {sorted(bad)[0]!r}" if bad else ""))
        items.append(Item(raw.get("name", raw["check"]), raw["check"], float(raw["points"]), raw.get("within"),
                          float(raw.get("slack", 0.0)), raw.get("tolerance")))
    if not items:
        raise HarnessError(f"rubric {path}: no [[item]]")
    if data.get("battery", "quick") not in ("quick", "full"):
        raise HarnessError(f"rubric {path}: battery = {data['battery']!r}: expected quick or full")
    ref = data.get("reference", {}).get("file")
    reference = (path.parent / ref if not Path(ref).is_absolute() and (path.parent / ref).is_file()
                 else REPO_ROOT / ref) if ref else None
    if reference is not None and not reference.is_file():
        raise HarnessError(f"rubric {path}: reference file {ref} not found")
    if any(i.within is not None for i in items) and reference is None:
        raise HarnessError(f"rubric {path}: an item compares `within` the reference, but [reference] names no file")
    return Rubric(data.get("title", path.stem), data.get("battery", "quick"), float(data.get("pass_mark", 0)),
                  list(data.get("only", [])), dict(data.get("promises", {})), reference, items)


def promised(decl: declare.Declaration, promises: dict) -> declare.Declaration:
    """The declaration with the rubric's promises in place of the file's."""
    for key, value in promises.items():
        text = ",".join(value) if isinstance(value, list) else ("yes" if value is True else "no" if value is False
                                                                 else str(value))
        declare._apply(decl, key, text, "rubric [promises]")
    return decl


def selected(cases: list, only: list) -> list:
    if not only:
        return cases
    return [c for c in cases if c.id in only or c.mix in only or c.topo.name in only]


def card_for(target: kbuild.Target, rubric: Rubric, only: list) -> run.Card:
    """The battery the rubric asks for, run on ``target``, judged with the rubric's promises."""
    decl = promised(declare.declaration(target.policy, target.source), rubric.promises)
    card = run.Card(target.policy, target, decl, battery.QUICK if rubric.battery == "quick" else battery.FULL)
    cases = selected(run.battery_cases(card), only)
    with run.simulator(target):
        run.execute(card, cases)
    card.topologies = [t for t in card.topologies if any(c.topo.name == t.name for c in cases)]
    return card


_reference_cards: dict = {}


def reference_values(target: kbuild.Target, rubric: Rubric, only: list) -> dict:
    """(check, topology) -> the reference's measured value, from a cache (build/check/) keyed by the kernel's
    and the rubric's bytes: the reference is booted once per kernel, rubric and selection."""
    key = hashlib.sha256(executor.file_hash(target.kernel).encode() + repr((target.policy, rubric, only))
                         .encode()).hexdigest()[:16]
    path = REPO_ROOT / "build" / "check" / f"reference-{key}.json"
    if key not in _reference_cards:
        if path.is_file():
            _reference_cards[key] = {tuple(k.split("|")): v for k, v in json.loads(path.read_text()).items()}
        else:
            card = card_for(target, rubric, only)
            _reference_cards[key] = {k: c.value for k, c in card.cells.items()}
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"|".join(k): v for k, v in _reference_cards[key].items()}))
    return _reference_cards[key]


def score(item: Item, card: run.Card, ref: dict | None) -> tuple[float, list[str]]:
    """(points earned, why points were lost per topology)."""
    judged, held, why = 0, 0, []
    for topo in card.topologies:
        cell = card.cell(item.check, topo.name)
        if cell.status == "not-run":
            continue
        judged += 1
        ok = cell.status == "pass"
        if item.tolerance is not None and item.check == "fairness" and cell.value is not None:
            ok = cell.status != "not-declared" and cell.value <= item.tolerance
        if ok and item.within is not None and ref is not None and cell.value is not None:
            bound = (ref.get((item.check, topo.name)) or 0.0) * item.within + item.slack
            if cell.value > bound:
                ok = False
                why.append(f"{topo.name}: {cell.value:.3g} > {item.within} x the reference's + {item.slack} = {bound:.3g}")
        elif not ok:
            why.append(f"{topo.name}: {cell.status}" + (f" - {cell.detail}" if cell.detail else ""))
        held += ok
    if judged == 0:
        return 0.0, [NOT_JUDGED]
    return round(item.points * held / judged, 2), why


def grade(target: kbuild.Target, rubric: Rubric, only: list | None = None, reference: kbuild.Target | None = None,
          reference_card: run.Card | None = None) -> dict:
    """{"items": [{name, check, points, earned, lost}], "total", "max", "card"}. The reference's values come
    from ``reference_card`` (a card of the same cases), else from booting ``reference`` (default: built
    from the rubric's file; cached in build/check/)."""
    only = rubric.only if only is None else only
    card = card_for(target, rubric, only)
    ref = None
    if reference_card is None and target.source and rubric.reference and \
            target.source.resolve() == rubric.reference.resolve():
        reference_card = card                   # the reference graded: its own measurements
    if reference_card is not None:
        ref = {k: c.value for k, c in reference_card.cells.items()}
    elif any(i.within is not None for i in rubric.items):
        reference = reference or kbuild.build(str(rubric.reference), quiet=True, sim=target.sim is not None)
        ref = reference_values(reference, rubric, only)
    items = []
    for item in rubric.items:
        earned, lost = score(item, card, ref)
        items.append({"name": item.name, "check": item.check, "points": item.points, "earned": earned, "lost": lost})
    total = round(sum(i["earned"] for i in items), 2)
    return {"title": rubric.title, "policy": target.policy, "items": items, "total": total, "max": rubric.total,
            "pass_mark": rubric.pass_mark, "card": card}


def show(result: dict) -> str:
    lines = [f"{result['title']}: {result['policy']}"]
    for i in result["items"]:
        lines.append(f"  {i['earned']:>6.2f} / {i['points']:<6.2f} {i['name']} ({i['check']})")
        lines += [f"           lost: {w}" for w in i["lost"]]
    lines.append(f"  total {result['total']:.2f} / {result['max']:.2f} (pass mark {result['pass_mark']:.0f})")
    return "\n".join(lines)


def main(args) -> int:
    rubric = load(args.rubric)
    target = kbuild.build(args.policy, quiet=False, sim=rubric.battery == "full" or not rubric.only or
                          any(o.startswith("sim") or "@sim" in o for o in rubric.only))
    with executor.use(executor.from_args(deterministic(args), cpus=1)):
        result = grade(target, rubric, args.only.split(",") if args.only else None)
    print(show(result))
    if args.json:
        out = {k: v for k, v in result.items() if k != "card"}
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    print(f"grade: {result['total']:.2f} / {result['max']:.2f}", file=sys.stderr)
    return 0 if result["total"] >= result["pass_mark"] else 1
