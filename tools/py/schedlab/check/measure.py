"""What the battery measures in one boot's schedule trace (trace.py's records), each a number with a stated
definition, so a check is a comparison of a number with a bound.

* ready waits: a process is *ready-waiting* from ``new``/``wake``/``pre``/``yld`` until its next ``run``
  (trace.py's reading of the records, ``gangcheck.waits``); a wait still open when the dump ends never ran.
  Waits count from the trace's first dispatch at the earliest: before it the launcher is still creating the
  jobs that arrive at time 0 (kernel/launcher.c) and no policy has been asked to run anything.
* allotment: under a policy that allots (``rep J 0 n`` records), job J holds n harts from that record on;
  a job with no ``rep`` yet holds none that the trace says (None: the policy does not allot).
* idle: a hart is idle from its ``idle`` record (it found nothing to run) to its next ``run``.
* share: job J's hart time in a window = the sum of its run intervals clipped to the window; its share =
  that over all jobs' hart time in the window.
* draws: each ``run`` record in a window, with the jobs that had a ready process then (a wait begun at or
  before it and not ended before it, nor by an earlier dispatch of the same instant) - the pool a policy
  that draws a winner per dispatch drew from.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .. import gangcheck, trace as tr

Span = tuple[float, float]


@dataclass(frozen=True)
class Wait:
    job: int
    proc: int
    start_us: float
    end_us: float
    ran: bool                       # False: still waiting when the dump ended

    @property
    def us(self) -> float:
        return self.end_us - self.start_us


def waits(trace: tr.Trace) -> list[Wait]:
    """Every ready wait of the trace, ordered by start."""
    out = []
    last_run = {}
    for r in trace.records:
        if r.event == "run":
            last_run[(r.job, r.proc)] = r.time_us
    first = min(last_run.values(), default=trace.start_us)
    first = min((r.time_us for r in trace.records if r.event == "run"), default=first)
    for (job, proc), spans in gangcheck.waits(trace).items():
        for w in spans:
            ran = w.end_us < trace.end_us or last_run.get((job, proc), -1.0) >= w.end_us
            out.append(Wait(job, proc, max(w.start_us, first), w.end_us, ran))
    return sorted(out, key=lambda w: (w.start_us, w.job, w.proc))


def allotments(trace: tr.Trace) -> dict[int, list[tuple[float, int]]] | None:
    """job -> [(time, harts held from then on)], from ``rep`` records; None when the trace has none."""
    reps = defaultdict(list)
    for r in trace.records:
        if r.event == "rep":
            reps[r.job].append((r.time_us, r.arg))
    return dict(reps) if reps else None


def allotment_at(steps: list[tuple[float, int]] | None, t: float) -> int:
    """Harts held at time t by a job whose allotment steps are ``steps`` (0 before the first)."""
    held = 0
    for when, n in steps or ():
        if when > t:
            break
        held = n
    return held


def unallotted(spans_by_job, wait: Wait) -> bool:
    """True when the waiting process's job held no hart for the whole wait (space sharing's rule: a job
    without harts waits for a departure, which the contract's 'every job ends' covers)."""
    steps = (spans_by_job or {}).get(wait.job)
    if spans_by_job is None:
        return False
    times = [wait.start_us] + [t for t, _ in steps or () if wait.start_us < t < wait.end_us]
    return all(allotment_at(steps, t) == 0 for t in times)


def busy_spans(trace: tr.Trace) -> dict[int, list[Span]]:
    """hart -> its run intervals as spans, ordered."""
    spans = defaultdict(list)
    for i in tr.intervals(trace):
        spans[i.hart].append((i.start_us, i.end_us))
    return spans


def idle_spans(trace: tr.Trace) -> list[Span]:
    """Every stretch in which some hart is idle (merged over harts): from an ``idle`` record (the hart found
    nothing to run) to that hart's next ``run``, or the dump's end. The gap between a process leaving a hart
    and the next one's ``run`` is the switch itself, not idleness."""
    idle, since = [], {}
    for r in trace.records:
        if r.event == "idle":
            since.setdefault(r.hart, r.time_us)
        elif r.event == "run" and r.hart in since:
            idle.append((since.pop(r.hart), r.time_us))
    idle += [(t, trace.end_us) for t in since.values()]
    return _merge(idle)


def _merge(spans: list[Span]) -> list[Span]:
    out: list[list[float]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def overlap_us(span: Span, spans: list[Span]) -> float:
    """Time of ``span`` covered by the (merged) ``spans``."""
    return sum(max(0.0, min(span[1], e) - max(span[0], s)) for s, e in spans)


def window(trace: tr.Trace, jobs) -> Span | None:
    """The stretch in which every job of ``jobs`` had started running and none had ended: from the latest
    first ``run`` to the earliest last interval end; None if there is no such stretch."""
    first, last = {}, {}
    for i in tr.intervals(trace):
        first.setdefault(i.job, i.start_us)
        last[i.job] = max(last.get(i.job, 0.0), i.end_us)
    if any(j not in first for j in jobs):
        return None
    span = (max(first[j] for j in jobs), min(last[j] for j in jobs))
    return span if span[1] > span[0] else None


def hart_time(trace: tr.Trace, span: Span) -> dict[int, float]:
    """job -> its hart time within ``span``."""
    got = defaultdict(float)
    for i in tr.intervals(trace):
        got[i.job] += max(0.0, min(span[1], i.end_us) - max(span[0], i.start_us))
    return dict(got)


def draws(trace: tr.Trace, span: Span) -> list[tuple[float, int, set]]:
    """[(time, the dispatched job, the jobs ready then)] for the ``run`` records within ``span``: one sweep
    over the waits' starts and ends and the dispatches. At one instant the starts come first, then the
    dispatches in the trace's order (by hart), each ending its own process's wait as it goes - harts that
    draw at one tick draw one after another, a winner gone from the later draws' pools - then other ends."""
    ws = waits(trace)
    runs = [r for r in trace.records if r.event == "run" and r.job > 0]
    events = sorted([(w.start_us, 0, i) for i, w in enumerate(ws)] + [(w.end_us, 2, i) for i, w in enumerate(ws)]
                    + [(r.time_us, 1, k) for k, r in enumerate(runs)])
    waiting, out = defaultdict(set), []         # (job, proc) -> its open waits
    for t, kind, i in events:
        if kind == 1:
            r = runs[i]
            if span[0] <= t <= span[1]:
                out.append((t, r.job, {job for (job, _), open_ in waiting.items() if open_} | {r.job}))
            waiting[(r.job, r.proc)].clear()
        elif kind == 0:
            waiting[(ws[i].job, ws[i].proc)].add(i)
        else:
            waiting[(ws[i].job, ws[i].proc)].discard(i)
    return out


def mean_allotment(steps, span: Span) -> float:
    """A job's allotment averaged over ``span`` (time-weighted)."""
    cuts = [span[0]] + [t for t, _ in steps or () if span[0] < t < span[1]] + [span[1]]
    total = sum(allotment_at(steps, a) * (b - a) for a, b in zip(cuts, cuts[1:]))
    return total / (span[1] - span[0])


def double_runs(trace: tr.Trace) -> list[tuple[int, int, float]]:
    """(job, proc, time) where a process's run intervals on two harts overlap: it ran twice at once."""
    by_proc = defaultdict(list)
    for i in tr.intervals(trace):
        by_proc[(i.job, i.proc)].append(i)
    bad = []
    for (job, proc), runs in by_proc.items():
        runs.sort(key=lambda i: i.start_us)
        for a, b in zip(runs, runs[1:]):
            if b.start_us < a.end_us and a.hart != b.hart:
                bad.append((job, proc, b.start_us))
    return bad
