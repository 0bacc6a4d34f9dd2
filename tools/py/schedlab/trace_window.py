"""A time window of a trace: ``schedlab trace --from A --to B`` keeps what happened between A and B.

A whole boot's trace drawn at once is a grey band: hundreds of slot switches and run intervals in 12 inches.
A window of a few quanta shows each one. Times are the trace's own: milliseconds since the scenario's t0, as
the Gantt chart's axis and ``trace``'s summary print them (a bare number is ms; ``us``, ``ms`` and ``s``
suffixes are taken too). Either end may be left out (the trace's start, its end).

``clip`` gives the windowed trace, which every export then draws as it draws a whole one (the Gantt chart,
the Chrome JSON, the Perfetto trace, the statistics): the records whose time is in [A, B]; for each hart that
was running a process at A, a ``run`` record of that process at A, so its interval starts at the window's edge
instead of vanishing; the library's records in [A, B]; and the window's bounds as the trace's start and end,
where intervals still open at B end. A process that was waiting at A shows its state from its first record in
the window on. An empty or inverted window, or one outside the trace, is an error that says the trace's span.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .qemu import HarnessError
from .trace import Record, Trace, intervals

_TIME = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(us|ms|s)?\Z")
_UNIT_US = {"us": 1.0, "ms": 1000.0, "s": 1e6, None: 1000.0}


def parse_time(text: str, option: str) -> float:
    """``text`` (a number of ms, or with a us/ms/s suffix) in microseconds; HarnessError naming ``option``."""
    match = _TIME.match(text.strip())
    if not match:
        raise HarnessError(f"{option} {text!r}: expected a time since t0 in ms (e.g. 40, 40ms, 500us or 1.5s)")
    return float(match.group(1)) * _UNIT_US[match.group(2)]


def add_arguments(parser) -> None:
    """``--from`` and ``--to`` on an argparse (sub)parser."""
    parser.add_argument("--from", dest="window_from", metavar="MS",
                        help="draw and export only from this time on (ms since t0, as the chart's axis; "
                             "also 500us, 1.5s)")
    parser.add_argument("--to", dest="window_to", metavar="MS", help="... up to this time (default: the end)")


def from_args(trace: Trace, args) -> Trace:
    """``trace`` clipped to the window of ``args.window_from``/``args.window_to`` (unchanged without them)."""
    start, end = getattr(args, "window_from", None), getattr(args, "window_to", None)
    if start is None and end is None:
        return trace
    return clip(trace, None if start is None else parse_time(start, "--from"),
                None if end is None else parse_time(end, "--to"))


def _span(trace: Trace) -> str:
    return f"{trace.start_us / 1000:g}..{trace.end_us / 1000:g} ms"


def clip(trace: Trace, from_us: float | None, to_us: float | None) -> Trace:
    """The part of ``trace`` in [from_us, to_us] (None: the trace's own start or end)."""
    if not trace.records:
        raise HarnessError("the trace has no records: there is nothing to window")
    start = trace.start_us if from_us is None else from_us
    end = trace.end_us if to_us is None else to_us
    if from_us is not None and to_us is not None and to_us <= from_us:
        raise HarnessError(f"the window {start / 1000:g}..{end / 1000:g} ms is "
                           f"{'empty' if end == start else 'inverted'}: --to must be after --from "
                           f"(the trace spans {_span(trace)})")
    if start >= trace.end_us or end <= trace.start_us:
        raise HarnessError(f"the window {start / 1000:g}..{end / 1000:g} ms is outside the trace, which spans "
                           f"{_span(trace)}")
    ticks = round(start * trace.timebase_hz / 1e6)
    edge = [Record(i.hart, ticks, start, "run", i.job, i.proc, i.slot)
            for i in intervals(trace) if i.start_us < start < i.end_us]
    inside = [r for r in trace.records if start <= r.time_us <= end]
    lib = replace(trace.lib, records=[r for r in trace.lib.records if start <= r.time_us <= end])
    return replace(trace, records=sorted(edge, key=lambda r: r.hart) + inside, lib=lib, window=(start, end))
