"""Ready waits and the gang co-scheduling check, read from a schedule trace (trace.py parses it).

A process is *ready-waiting* from the record that makes it runnable until its next dispatch (``waits``); under
``policy=gang`` a job's processes share one row of the slot matrix, so one of them running while another waits
ready in the same row, outside a slot switch's window, breaks co-scheduling (``gang_violations``; Ousterhout
1982). The explorer, ``schedlab check`` and ``schedlab trace --gang`` judge gangs by it.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass

from .trace import Interval, Span, Trace, held, intervals, spans_by_hart, stops, switch_stats

#: Violation spans kept per job for error messages.
WORST_SPANS = 5


@dataclass(frozen=True)
class GangCheck:
    """The co-scheduling check of one job.

    ``violation_us`` is pair-time: summed over ordered pairs (p, q) of processes
    in the same row, so it can exceed the job's wall time.  ``fraction`` =
    violation_us / run_us (0 when the job never ran).  ``worst`` holds the
    longest spans (start_us, end_us, p, q) in which p ran while q waited.
    """

    job: int
    violation_us: float
    run_us: float
    fraction: float
    worst: list[tuple[float, float, int, int]]


@dataclass(frozen=True)
class Wait:
    """Process waited ready from start_us to end_us, to be run in ``row`` (None: never ran) on ``hart`` (the hart
    whose ``run`` ended the wait; None: none did)."""

    start_us: float
    end_us: float
    row: int | None
    hart: int | None = None


def waits(trace: Trace) -> dict[tuple[int, int], list[Wait]]:
    """Ready-waiting periods per (job, proc).

    A process is ready-waiting after ``new``/``wake`` (unless running or already
    ready: merged records of different harts may show a ``wake`` just after the
    ``run`` it caused) or ``pre``/``yld``, until its ``run``, ``blk`` or
    ``exit``.  A wait still open at the end ends at ``trace.end_us``.  Its row is
    that of the ``run`` ending it, else of the process's previous ``run``.
    Records of one tick merge by hart, so a ``pre``/``yld`` may follow the ``run``
    on another hart that it made possible (simulated, 5 harts: hart 0 ran a process
    at the tick hart 1 preempted it): one from a hart other than the process's
    running one is that earlier run's end, and the process is not waiting.
    """
    state: dict[tuple[int, int], str] = {}
    since: dict[tuple[int, int], float] = {}
    row: dict[tuple[int, int], int] = {}
    on: dict[tuple[int, int], int] = {}
    found: dict[tuple[int, int], list[Wait]] = defaultdict(list)
    for r in trace.records:
        key = (r.job, r.proc)
        now = state.get(key)
        if r.event in ("pre", "yld") and now == "running" and on.get(key, r.hart) != r.hart:
            continue
        if r.event in ("run", "blk", "exit"):
            if r.event == "run":
                row[key], on[key] = r.arg, r.hart
            if now == "ready":
                found[key].append(Wait(since[key], r.time_us, row.get(key), r.hart if r.event == "run" else None))
            state[key] = {"run": "running", "blk": "blocked", "exit": "gone"}[r.event]
        elif (r.event in ("pre", "yld") and now not in ("ready", "gone")) or \
                (r.event in ("new", "wake") and now in (None, "blocked")):
            state[key], since[key] = "ready", r.time_us
    for key, now in state.items():
        if now == "ready":
            found[key].append(Wait(since[key], trace.end_us, row.get(key)))
    return found


def _same_row(run_slot: int, wait_row: int | None) -> bool:
    """Rows -1 (not gang) and None (never ran) match every row."""
    return run_slot == -1 or wait_row is None or wait_row == -1 or run_slot == wait_row


def _merge(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _subtract(span: Span, holes: list[Span], hole_ends: list[float]) -> list[Span]:
    """``span`` minus the sorted, disjoint ``holes`` (``hole_ends``: their ends, for bisection)."""
    start, end = span
    pieces = []
    for hole_start, hole_end in holes[bisect.bisect_right(hole_ends, start):]:
        if hole_start >= end:
            break
        if hole_start > start:
            pieces.append((start, hole_start))
        start = max(start, hole_end)
    if start < end:
        pieces.append((start, end))
    return pieces


def _overlaps(runs: list[Interval], ready: list[Wait]) -> list[tuple[Span, Wait]]:
    """Where one of ``runs`` overlaps one of ``ready`` of the same row (both sorted, each disjoint), with the wait."""
    spans, i, j = [], 0, 0
    while i < len(runs) and j < len(ready):
        run, wait = runs[i], ready[j]
        start, end = max(run.start_us, wait.start_us), min(run.end_us, wait.end_us)
        if start < end and _same_row(run.slot, wait.row):
            spans.append(((start, end), wait))
        if run.end_us <= wait.end_us:
            i += 1
        else:
            j += 1
    return spans


def _after_own(start: float, grace_us: float, held: list[Span]) -> float:
    """When ``grace_us`` of a hart's own time has passed from ``start``: its ``held`` spans (sorted, disjoint:
    handed over or stopped) do not count - the hart had no time to dispatch in."""
    t, left = start, grace_us
    for hold_start, hold_end in held:
        if hold_end <= t:
            continue
        if hold_start >= t + left:
            break
        left -= max(0.0, hold_start - t)
        t = hold_end
    return t + left


def gang_violations(trace: Trace, grace_us: float = 0.0) -> dict[int, GangCheck]:
    """Per job that ran: how long its processes ran while a gang member waited ready.

    Not counted: time inside a switch window (up to the next switch when a hart
    never acknowledged it), a perturbed boot's stop of a hart and ``grace_us`` after it,
    the first ``grace_us`` of each ready-waiting period, and any time the waiting process was blocked, exited
    or not yet created.  Correct gang scheduling of spinning apps gives ~0.
    A perturbed boot's hand-over of a hart (``held``) is not counted against a process that hart was to run,
    nor does it or a stop of that hart use up that wait's grace (the hart's own time): handed over, the hart
    dispatched nothing, and many in one kernel path (a job's pages freed, a race point each) add up to a stop -
    but unlike a stop it excuses no other hart's lateness.
    """
    runs: dict[tuple[int, int], list[Interval]] = defaultdict(list)
    for interval in intervals(trace):
        runs[(interval.job, interval.proc)].append(interval)
    handed, stopped = held(trace), spans_by_hart(trace, "stop")
    held_by = {hart: (spans, [end for _, end in spans])
               for hart, spans in ((h, _merge(raw)) for h, raw in handed.items())}
    # the grace is the hart's own time: neither its hand-overs nor its stops use it up
    not_own = {h: _merge(handed.get(h, []) + stopped.get(h, [])) for h in handed.keys() | stopped.keys()}
    graced = {key: [Wait(start, w.end_us, w.row, w.hart) for w in ws
                    for start in [_after_own(w.start_us, grace_us, not_own.get(w.hart, []))]
                    if start < w.end_us]
              for key, ws in waits(trace).items()}
    # a stopped hart resumes where it stood and needs its dispatch latency again: the grace follows a stop
    windows = _merge([(s.time_us, s.window_end_us) for s in switch_stats(trace).switches
                      if s.window_end_us > s.time_us] + [(start, end + grace_us) for start, end in stops(trace)])
    window_ends = [end for _, end in windows]

    def excused(span: Span, wait: Wait) -> list[Span]:
        pieces = _subtract(span, windows, window_ends)
        hart_held = held_by.get(wait.hart)
        return [p for piece in pieces for p in _subtract(piece, *hart_held)] if hart_held else pieces

    checks = {}
    for job in sorted({job for job, _ in runs}):
        procs = sorted({proc for j, proc in runs.keys() | graced.keys() if j == job})
        spans = [(start, end, p, q)
                 for p in procs for q in procs if p != q
                 for overlap, wait in _overlaps(runs.get((job, p), []), graced.get((job, q), []))
                 for start, end in excused(overlap, wait)]
        violation = sum((end - start for start, end, _, _ in spans), 0.0)
        run_us = sum((i.duration_us for p in procs for i in runs.get((job, p), [])), 0.0)
        worst = sorted(spans, key=lambda s: (s[0] - s[1], s[0]))[:WORST_SPANS]
        checks[job] = GangCheck(job, violation, run_us, violation / run_us if run_us else 0.0, worst)
    return checks
