"""Criteria: what each row of results.md is judged by, declared as data apart from the code that measures.

A criterion carries the paper's number or a claim quoted from it (with where it is printed), the comparison, the
tolerance and a one-line reason for the tolerance.  The framework - never a section - computes a row's verdict
from its criterion and the measurements that fed it (``judge``); results.json stores both, so anyone can
recompute every verdict (tests/test_criteria.py does).  The statistic of a measured value is its median over
the repeats.

Kinds:
- ``within(of, target, rel, partly=None)``: |median - target| / |target| <= rel: ``reproduced``; <= partly (only
  when declared, with its own reason in ``reason``): ``partially``; else ``not reproduced``.
- ``bound(of, op, value)``: only where the paper itself states a bound ("less than 10 %"): holds or not.
- ``ordering(names)``: the medians of the named values are in this order, largest first (ties fail).
- ``trend(names, xs, exponent=, tol=)``: the medians grow like x^exponent (least-squares slope of log y on log x
  within tol of the exponent); ``trend(names, xs, peak_at=x)``: the medians peak at that x.
- ``measured()``: nothing in the paper to judge against: shown, never judged.
Ordering and trend give ``shape reproduced`` / ``shape not reproduced``, counted apart from numbers.

Every criterion can fail: ``falsifier`` builds measurements inside the criterion's declared ``domain`` (the
values the measured quantity can take, e.g. a speedup at P = 2 lies in 0..2) that fail it, and declaring one that
no such value fails raises ``CriterionError`` - a band that holds every parallel run judges nothing.

``needs_harts``: the paper's claim is about that many processors: a row measured on fewer is ``not on this
machine`` (kept with its criterion, for the paced QEMU runs and the simulator to judge).  A simulated row is
judged by the same criterion and says so: ``reproduced (simulated)``, ...
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass

QUANT = ("reproduced", "partially", "not reproduced")
SHAPE = ("shape reproduced", "shape not reproduced")
MEASURED = "measured"
ELSEWHERE = "not on this machine"
SIMULATED = tuple(f"{v} (simulated)" for v in QUANT + SHAPE)
VERDICTS = QUANT + SHAPE + (MEASURED, ELSEWHERE) + SIMULATED
#: verdicts that need no reason beside them
PASSING = ("reproduced", "shape reproduced", MEASURED, "reproduced (simulated)", "shape reproduced (simulated)")
OPS = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b}


class CriterionError(ValueError):
    """A criterion that is malformed, or that no value in its domain can fail."""


@dataclass(frozen=True)
class Criterion:
    kind: str                   # within | bound | ordering | trend | measured
    paper: str                  # the paper's number or quoted claim, as printed
    source: str                 # where it is printed: section, page, figure, table
    reason: str                 # one line: why this comparison and tolerance
    of: str = ""                # within, bound: the measured value's name
    target: float | None = None
    rel: float | None = None
    partly: float | None = None
    side: float | None = None   # within: a value ours must be on the same side of as the target (1 for a ratio)
    op: str = ""
    value: float | None = None
    names: tuple = ()           # ordering: largest first; trend: in the order of xs
    xs: tuple = ()
    exponent: float | None = None
    tol: float | None = None
    peak_at: float | None = None
    domain: tuple = ()          # (lo, hi) the measured quantity can take
    needs_harts: int = 0

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
                if not (v is None or v == "" or v == () or (k == "needs_harts" and not v))}

    @staticmethod
    def from_dict(d: dict) -> "Criterion":
        return Criterion(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})

    def words(self) -> str:
        """The criterion in words a reader can check against the row."""
        if self.kind == "within":
            lo, hi = self.target * (1 - self.rel), self.target * (1 + self.rel)
            s = f"within {self.rel:.0%} of {self.target:g} ({lo:.3g}..{hi:.3g})"
            if self.partly:
                s += f", partially within {self.partly:.0%}"
            if self.side is not None:
                s += f", and above {self.side:g} as the paper's is" if self.target > self.side else \
                    f", and below {self.side:g} as the paper's is"
        elif self.kind == "bound":
            s = f"{self.of} {self.op} {self.value:g}"
        elif self.kind == "ordering":
            s = "order " + " > ".join(self.names)
        elif self.kind == "trend" and self.peak_at is not None:
            s = f"peaks at x = {self.peak_at:g} of {', '.join(f'{x:g}' for x in self.xs)}"
        elif self.kind == "trend":
            s = f"grows as x^{self.exponent:g} (fitted exponent within {self.tol:g})"
        else:
            return "no paper number: measured only"
        need = f"; judged at {self.needs_harts} processors or more" if self.needs_harts else ""
        return f"{s} - {self.reason}{need}"


# ---------------------------------------------------------------- declaring

def _declared(c: Criterion) -> Criterion:
    if not c.paper or not c.source or not c.reason:
        raise CriterionError(f"a criterion needs the paper's number or claim, where it is printed, and a reason: {c}")
    if c.kind != "measured":
        falsifier(c)            # raises when nothing in the domain fails it
    return c


def within(of: str, target: float, rel: float, paper: str, source: str, reason: str, partly: float | None = None,
           side: float | None = None, domain: tuple = (0.0, math.inf), needs_harts: int = 0) -> Criterion:
    """side: ours must also lie on the target's side of this value (a ratio's 1: which of two is faster), else
    not reproduced whatever the distance - a relative band around 1.06 would otherwise take 0.95."""
    if rel <= 0 or (partly is not None and partly <= rel) or not target or (side is not None and side == target):
        raise CriterionError(f"within({of}): rel > 0, partly > rel, a target other than 0 and than side")
    return _declared(Criterion("within", paper, source, reason, of=of, target=float(target), rel=rel,
                               partly=partly, side=side, domain=tuple(domain), needs_harts=needs_harts))


def bound(of: str, op: str, value: float, paper: str, source: str, reason: str, domain: tuple = (0.0, math.inf),
          needs_harts: int = 0) -> Criterion:
    if op not in OPS:
        raise CriterionError(f"bound({of}): op {op!r} is not one of {list(OPS)}")
    return _declared(Criterion("bound", paper, source, reason, of=of, op=op, value=float(value), domain=tuple(domain),
                               needs_harts=needs_harts))


def ordering(names: list[str], paper: str, source: str, reason: str, domain: tuple = (0.0, math.inf),
             needs_harts: int = 0) -> Criterion:
    if len(names) < 2:
        raise CriterionError("an ordering needs two names or more")
    return _declared(Criterion("ordering", paper, source, reason, names=tuple(names), domain=tuple(domain),
                               needs_harts=needs_harts))


def trend(names: list[str], xs: list[float], paper: str, source: str, reason: str, exponent: float | None = None,
          tol: float | None = None, peak_at: float | None = None, domain: tuple = (0.0, math.inf),
          needs_harts: int = 0) -> Criterion:
    if len(names) != len(xs) or len(xs) < 2 or (peak_at is None) == (exponent is None):
        raise CriterionError("a trend: one name per x, two or more, and either exponent (with tol) or peak_at")
    if exponent is not None and (tol is None or tol <= 0 or min(xs) <= 0):
        raise CriterionError("a power trend needs tol > 0 and x > 0")
    if peak_at is not None and peak_at not in xs:
        raise CriterionError(f"peak_at {peak_at} is not one of the xs")
    return _declared(Criterion("trend", paper, source, reason, names=tuple(names), xs=tuple(float(x) for x in xs),
                               exponent=exponent, tol=tol, peak_at=peak_at, domain=tuple(domain),
                               needs_harts=needs_harts))


def measured(paper: str = "-", source: str = "-", reason: str = "the paper gives no number to judge this by"
             ) -> Criterion:
    return Criterion("measured", paper, source, reason)


# ---------------------------------------------------------------- judging

def stat(values) -> float:
    """A measured value's statistic: the median of its repeats (a bare number is itself)."""
    if isinstance(values, (int, float)):
        return float(values)
    vals = [float(v) for v in values if v is not None]
    if not vals:
        raise CriterionError("no measured values")
    return statistics.median(vals)


def slope(xs, ys) -> float:
    """Least-squares slope of log y on log x: the exponent of a power law through the points."""
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-12)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def _outcome(c: Criterion, m: dict) -> str:
    """The unsimulated verdict of criterion c on measurements m (name -> values)."""
    def get(name):
        if name not in m:
            raise CriterionError(f"no measurement named {name!r} (have {sorted(m)})")
        return stat(m[name])
    if c.kind == "within":
        x = get(c.of)
        if c.side is not None and (x - c.side) * (c.target - c.side) <= 0:
            return "not reproduced"
        err = abs(x - c.target) / abs(c.target)
        return "reproduced" if err <= c.rel else "partially" if c.partly and err <= c.partly else "not reproduced"
    if c.kind == "bound":
        return "reproduced" if OPS[c.op](get(c.of), c.value) else "not reproduced"
    if c.kind == "ordering":
        v = [get(n) for n in c.names]
        return SHAPE[0] if all(a > b for a, b in zip(v, v[1:])) else SHAPE[1]
    if c.kind == "trend":
        v = [get(n) for n in c.names]
        if c.peak_at is not None:
            ok = c.xs[v.index(max(v))] == c.peak_at and v.count(max(v)) == 1
        else:
            ok = abs(slope(c.xs, v) - c.exponent) <= c.tol
        return SHAPE[0] if ok else SHAPE[1]
    raise CriterionError(f"unknown criterion kind {c.kind!r}")


def judge(c: Criterion | dict, m: dict | None, harts: int | None = None, simulated: bool = False) -> str:
    """The verdict: measured (no criterion), not on this machine (fewer processors than the claim is about, or
    nothing measured), else the criterion's outcome - with " (simulated)" for a simulator's numbers."""
    c = Criterion.from_dict(c) if isinstance(c, dict) else c
    if c.kind == "measured":
        return MEASURED
    m = {k: v for k, v in (m or {}).items() if v not in (None, [], ())}
    if not all(n in m for n in needs(c)) or (c.needs_harts and (harts or 0) < c.needs_harts):
        return ELSEWHERE
    v = _outcome(c, m)
    return f"{v} (simulated)" if simulated else v


def needs(c: Criterion) -> list[str]:
    """The measured values criterion c reads."""
    return [c.of] if c.of else list(c.names)


def why(c: Criterion, m: dict | None, harts: int | None, verdict: str) -> str:
    """The reason a row did not pass, from its criterion alone (a section may give a measured cause instead)."""
    if verdict in PASSING:
        return ""
    if verdict == ELSEWHERE:
        return (f"the paper's claim is about {c.needs_harts} processors, measured here on {harts}: judged by a paced "
                "run or the simulator at that many (needs_harts)" if c.needs_harts and (harts or 0) < c.needs_harts
                else "nothing measured for it here")
    if c.kind in ("within", "bound"):
        return f"ours {stat(m[c.of]):.3g} against the criterion {c.words()}"
    v = ", ".join(f"{n} {stat(m[n]):.3g}" for n in c.names)
    extra = f"; fitted exponent {slope(c.xs, [stat(m[n]) for n in c.names]):.2f}" if c.exponent is not None else ""
    return f"{v}{extra}: not {c.words()}"


# ---------------------------------------------------------------- every criterion can fail

def _grid(c: Criterion) -> list[float]:
    lo, hi = (c.domain or (0.0, math.inf))
    ref = abs(c.target if c.target is not None else c.value if c.value is not None else 1.0) or 1.0
    hi = hi if math.isfinite(hi) else max(lo, 0.0) + 10 * ref
    lo = lo if math.isfinite(lo) else min(hi, 0.0) - 10 * ref
    return [lo + (hi - lo) * i / 400 for i in range(401)]


def falsifier(c: Criterion) -> dict:
    """Measurements inside c's domain that fail c; CriterionError when there are none (c judges nothing)."""
    if c.kind in ("within", "bound"):
        for x in _grid(c):
            if _outcome(c, {c.of: [x]}) != "reproduced":
                return {c.of: [x]}
    elif c.kind in ("ordering", "trend"):
        pts = _grid(c)
        lo, hi = max(pts[0], 1e-6), pts[-1]
        n = len(c.names)
        tries = [[lo + (hi - lo) * (i + 1) / (n + 1) for i in range(n)],            # rising
                 [lo + (hi - lo) * (n - i) / (n + 1) for i in range(n)],            # falling
                 [lo + (hi - lo) / 2] * n]                                          # flat
        for ys in tries:
            m = {name: [y] for name, y in zip(c.names, ys)}
            if _outcome(c, m) not in ("reproduced", SHAPE[0]):
                return m
    else:
        raise CriterionError(f"a {c.kind} criterion is never judged, so it has nothing to fail")
    raise CriterionError(f"no value in the domain {c.domain or '(0, inf)'} fails {c.words()}: it judges nothing")


def criterion_of(row) -> Criterion | None:
    d = row.get("criterion") if isinstance(row, dict) else getattr(row, "criterion", None)
    return Criterion.from_dict(d) if d else None


def category(verdict: str) -> str:
    """The header's column of a verdict: quantitative, shape, measured, simulated, elsewhere."""
    if verdict.endswith("(simulated)"):
        return "simulated"
    if verdict in SHAPE:
        return "shape"
    if verdict == MEASURED:
        return "measured"
    if verdict == ELSEWHERE:
        return "elsewhere"
    return "quantitative"


def tally(rows) -> dict:
    """The header's columns over rows (Row objects or dicts): quantitative, shape, measured, simulated, elsewhere
    (not on this machine), each by verdict; and how many quantitative ones carry no declared criterion."""
    out = {k: {} for k in ("quantitative", "shape", "measured", "simulated", "elsewhere")}
    undeclared = 0
    for r in rows:
        verdict = r["verdict"] if isinstance(r, dict) else r.verdict
        col = out[category(verdict)]
        col[verdict] = col.get(verdict, 0) + 1
        undeclared += not criterion_of(r) and category(verdict) == "quantitative"
    return {**out, "undeclared": undeclared}


def tally_words(c: dict) -> str:
    """The header's sentence: every column with its verdicts, in words that match the rows."""
    def total(k):
        return sum(c[k].values())

    def part(k, order):
        return ", ".join(f"{c[k].get(v, 0)} {v}" for v in order)
    return (f"Verdicts on the papers' results ({sum(total(k) for k in c if k != 'undeclared')} rows): "
            f"quantitative {total('quantitative')} ({part('quantitative', QUANT)}; {c['undeclared']} of them "
            f"still judged in a section's code, not by a declared criterion); shape {total('shape')} "
            f"({part('shape', SHAPE)}); measured {total('measured')} (no paper number: no verdict); simulated "
            f"{total('simulated')} ({part('simulated', SIMULATED)}); not on this machine {total('elsewhere')}.")


__all__ = ["Criterion", "CriterionError", "within", "bound", "ordering", "trend", "measured", "judge", "why",
           "falsifier", "stat", "slope", "category", "criterion_of", "tally", "tally_words", "VERDICTS", "QUANT",
           "SHAPE", "MEASURED",
           "ELSEWHERE", "SIMULATED", "PASSING"]
