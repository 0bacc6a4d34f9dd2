"""Schedule traces: the kernel's ``TRACE`` dump, what happened on each hart, and exports.

The model.  Booted with ``trace=on``, every hart appends records to its own
ring; at the end of the run the kernel dumps the rings, one block per hart,
before the SUMMARY line:

    TRACE begin harts=<H> timebase_hz=<hz> policy=<name> quantum_us=<q>
    TRACE hart=<h> records=<n> dropped=<d>
    T <hart> <ticks> <event> <job> <proc> <arg>      (n lines, time non-decreasing)
    ...
    TRACE end

``ticks`` count the time CSR from the scenario's t0; a record's ``time_us`` is
``ticks * 1e6 / timebase_hz``.  ``job`` 0 and ``proc`` -1 mean none.  A ring
that overwrote ``dropped`` records lost the oldest ones, so its block starts
mid-run.  The blocks are merged into one list ordered by (time, hart, order in
the block); records of events this module does not know are skipped, so
later kinds never break it.

Events, by what they say about process P of job J:

* ``run J P S``: P was dispatched on the recording hart; S is P's gang row
  (slot) under ``policy=gang``, -1 otherwise.  It opens a *run interval*,
  closed by the next ``pre``/``yld``/``blk``/``exit`` of the same (J, P) on
  the same hart.
* ``pre``, ``yld`` (still runnable), ``blk`` (not runnable until a ``wake``),
  ``exit`` (gone): P left the hart.
* ``new J P h`` / ``wake J P h``: P became runnable (bound to hart h, or -1),
  recorded on the creating / waking hart.  After ``new``, ``wake``, ``pre`` or
  ``yld`` P is *ready-waiting* until its next ``run``.
* ``idle``: the hart found nothing to run (it was not running a process).
* ``slot 0 -1 S`` / ``early 0 -1 S``: this hart started a gang *slot switch*
  to row S because the quantum ended / early (nothing of the current row left
  to run); ``ack 0 -1 S``: this hart acted on that switch (every hart records
  one, the initiator too).  ``rep J 0 n``: job J's allotment became n harts.
  ``regime J old arg`` (policy=adaptive): job J moved from regime ``old`` to
  ``arg & 3`` (``REGIMES``), with its measurements packed in arg (``regime_move``).
* ``stop - -1 us`` (a perturbed boot, ``perturb=``): the recording hart stopped for ``us`` of virtual time, as
  a preempted vCPU; ``stops`` gives the spans, which schedule checks discount as they do switch windows.

What is derived from them:

* ``intervals``: the run intervals, per hart.
* ``switch_stats``: per slot switch at time t, each hart's ack and its *entry*
  (its first ``run``/``idle`` after the ack, or the ack itself when it kept
  running its process); skew = spread of the entries, latency = last entry - t,
  cost of a hart = entry - ack, overhead = median per-switch mean cost as a
  percentage of the quantum.  The *switch window* is [t, last entry], or up to
  the next switch when some hart never acked (its host thread stalled).
* ``gang_violations`` (gangcheck.py): the co-scheduling invariant.  Two processes of a job in
  the same row are a gang: while one runs, the other should not be
  ready-waiting.  The check sums, over ordered pairs (p, q), the time p runs
  while q is ready-waiting, outside switch windows and after a grace period at
  the start of each wait.
* ``to_chrome`` (Perfetto / chrome://tracing JSON) and ``draw_gantt`` (PNG).
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .console import bounded, decimal, parse_fields
from .qemu import HarnessError
from .ulog import LibLog, parse_ulog

#: Events that end the run interval of their (job, proc) on the recording hart.
LEAVE_EVENTS = frozenset({"pre", "yld", "blk", "exit"})
#: Events that start a slot switch.
SWITCH_EVENTS = frozenset({"slot", "early"})
KNOWN_EVENTS = LEAVE_EVENTS | SWITCH_EVENTS | {"run", "new", "wake", "idle", "ack", "rep", "regime", "stop", "held"}
#: policy=adaptive's regimes, by the number a ``regime`` record carries (kernel/trace.h).
REGIMES = ("part", "gang", "fill")


def regime_move(r) -> tuple[str, str, int, int | None]:
    """(old, new, wait %, grain us or None) of a ``regime J old arg`` record (kernel/trace.h's packing)."""
    grain = r.arg >> 9
    return (REGIMES[r.proc] if 0 <= r.proc < 3 else "?", REGIMES[r.arg & 3] if r.arg & 3 < 3 else "?",
            r.arg >> 2 & 127, None if grain >= (1 << 22) - 1 else grain)
#: Header keys of ``TRACE begin``.
HEADER_KEYS = ("harts", "timebase_hz", "policy", "quantum_us")
#: What the kernel can print, and so all the parser accepts (kernel/trace.c; anything else is not a dump of
#: this kernel, and bounding it keeps a malformed console from becoming a traceback or an hours-long loop):
#: harts 1..SL_MAX_HARTS; ticks, counts and rates below 2^63 (a signed 64-bit field in Perfetto's protobuf,
#: and ~29,000 years at 10 MHz); T's job a uint16, proc an int8, arg an int.
MAX_HARTS = 64
MAX_U63 = (1 << 63) - 1
MAX_QUANTUM_US = 10_000_000                 # the scenario parser's 10 s
T_FIELDS = (("hart", 0, MAX_HARTS - 1), ("ticks", 0, MAX_U63), ("job", 0, 0xFFFF), ("proc", -128, 127),
            ("arg", -(1 << 31), (1 << 31) - 1))
NO_TRACE = "no trace in this log: boot with trace=on"
NO_MATPLOTLIB = "--png needs matplotlib: pip install matplotlib or make deps"

#: A stretch of time (start_us, end_us).
Span = tuple[float, float]


@dataclass(frozen=True)
class Record:
    """One ``T`` line."""

    hart: int
    ticks: int
    time_us: float
    event: str
    job: int
    proc: int
    arg: int


@dataclass
class Trace:
    """One boot's dump: header, per-hart dropped counts, records merged by time.

    ``complete`` is False when the dump was cut off (no ``TRACE end``).  ``lib``
    holds the library's event logs that follow it (``ulog``; empty without them).
    """

    harts: int
    timebase_hz: int
    policy: str
    quantum_us: float
    dropped: dict[int, int]
    records: list[Record]
    complete: bool = True
    lib: LibLog = field(default_factory=LibLog)
    window: Span | None = None          # a part of the dump (trace_window.clip): its start and end

    @property
    def start_us(self) -> float:
        if self.window:
            return self.window[0]
        return self.records[0].time_us if self.records else 0.0

    @property
    def end_us(self) -> float:
        """Time of the dump's last record (or the window's end): where still-open intervals end."""
        if self.window:
            return self.window[1]
        return self.records[-1].time_us if self.records else 0.0

    def on_hart(self, hart: int) -> list[Record]:
        return [r for r in self.records if r.hart == hart]


# ---------------------------------------------------------------- parsing

def _ints(fields: dict, keys: tuple[str, ...], line: str, what: str, high: int = MAX_U63) -> list[int]:
    values = [fields.get(k) for k in keys]
    if not all(bounded(v, 0, high) for v in values):
        raise HarnessError(f"bad {what} (needs {', '.join(f'{k}=<0..{high}>' for k in keys)}): {line}")
    return values


def _header(rest: str, line: str) -> dict:
    fields = parse_fields(rest)
    harts = fields.get("harts")
    if not bounded(harts, 1, MAX_HARTS):
        raise HarnessError(f"bad TRACE header: harts={harts} is not 1..{MAX_HARTS}, the most this kernel runs: {line}")
    hz, = _ints(fields, ("timebase_hz",), line, "TRACE header")
    quantum = fields.get("quantum_us")
    if hz < 1 or "policy" not in fields or not isinstance(quantum, (int, float)) or isinstance(quantum, bool) \
            or not 0 <= quantum <= MAX_QUANTUM_US:
        raise HarnessError(f"bad TRACE header (needs harts=1..{MAX_HARTS}, timebase_hz=1.., policy=, "
                           f"quantum_us=0..{MAX_QUANTUM_US}): {line}")
    return {"harts": harts, "timebase_hz": hz, "policy": str(fields["policy"]), "quantum_us": float(quantum)}


def _record(rest: str, hz: int) -> Record | None:
    """The record of a ``T`` line; None for an unknown event; ValueError if malformed or out of the kernel's
    ranges (``T_FIELDS``)."""
    words = rest.split()
    if len(words) >= 3 and words[2] not in KNOWN_EVENTS:
        return None
    if len(words) != 6:
        raise ValueError(rest)
    values = [decimal(words[i]) for i in (0, 1, 3, 4, 5)]
    if not all(bounded(v, low, high) for v, (_, low, high) in zip(values, T_FIELDS)):
        raise ValueError(rest)
    hart, ticks, job, proc, arg = values
    return Record(hart, ticks, ticks * 1e6 / hz, words[2], job, proc, arg)


def parse_trace(text_or_lines: str | Iterable[str]) -> Trace:
    """The trace dump in a console (text or lines, e.g. ``Run.traces``); other lines are ignored.

    Raises ``HarnessError`` when there is no dump, when it is malformed, or when a
    complete dump's block holds a different number of records than it announced.
    A cut-off dump (no ``TRACE end``) is accepted as far as it goes; its last
    line, if it is the input's last line and malformed, is dropped.
    """
    lines = [line.strip() for line in
             (text_or_lines.splitlines() if isinstance(text_or_lines, str) else text_or_lines)]
    header: dict | None = None
    complete = False
    hart: int | None = None
    dropped: dict[int, int] = {}
    announced: dict[int, int] = {}
    seen: dict[int, int] = {}
    records: list[Record] = []
    for index, line in enumerate(lines, 1):
        keyword, _, rest = line.partition(" ")
        if keyword == "TRACE" and rest.split()[:1] == ["begin"] and header is not None:
            raise HarnessError("more than one TRACE dump in this log: save one boot per log")
        try:
            if keyword == "TRACE" and rest.split()[:1] == ["begin"]:
                header = _header(rest, line)
            elif header is None or complete:
                continue
            elif keyword == "TRACE" and rest.split()[:1] == ["end"]:
                complete = True
            elif keyword == "TRACE":
                hart, count, lost = _ints(parse_fields(rest), ("hart", "records", "dropped"), line, "TRACE block")
                if not 0 <= hart < header["harts"] or hart in announced:
                    raise HarnessError(f"TRACE block for hart {hart} unexpected "
                                       f"(harts=0..{header['harts'] - 1}, one block each): {line}")
                announced[hart], dropped[hart], seen[hart] = count, lost, 0
            elif keyword == "T":
                if hart is None:
                    raise HarnessError(f"trace record before any 'TRACE hart=' line: {line}")
                seen[hart] += 1
                try:
                    record = _record(rest, header["timebase_hz"])
                except ValueError:
                    raise HarnessError(f"bad trace record (expected T <hart 0..{MAX_HARTS - 1}> <ticks 0..2^63-1> "
                                       f"<event> <job 0..65535> <proc -128..127> <arg: an int>): {line}") from None
                if record is None:
                    continue
                if record.hart != hart:
                    raise HarnessError(f"trace record of hart {record.hart} in the block of hart {hart}: {line}")
                records.append(record)
        except HarnessError:
            if index == len(lines) and not complete:
                break                       # the console was cut inside its last line (a killed QEMU)
            raise
    if header is None:
        raise HarnessError(NO_TRACE)
    if complete:
        wrong = [f"hart {h}: {announced[h]} announced, {seen[h]} found" for h in announced if announced[h] != seen[h]]
        if wrong:
            raise HarnessError("TRACE record counts do not match (console lines lost?): " + "; ".join(wrong))
    records.sort(key=lambda r: (r.ticks, r.hart))        # stable: keeps block order on ties
    return Trace(dropped=dropped, records=records, complete=complete, lib=parse_ulog(lines, header["timebase_hz"]),
                 **header)


# ---------------------------------------------------------------- run intervals

@dataclass(frozen=True)
class Interval:
    """Process ``proc`` of ``job`` ran on ``hart`` from ``start_us`` to ``end_us``.

    ``end_event`` is the record that ended it (``pre``, ``yld``, ``blk``,
    ``exit``), ``end`` when it was still running at the dump's last record, or
    ``run`` when the hart recorded another dispatch without the leaving (a
    kernel tracing bug, shown rather than hidden).
    """

    hart: int
    job: int
    proc: int
    slot: int
    start_us: float
    end_us: float
    end_event: str

    @property
    def duration_us(self) -> float:
        return self.end_us - self.start_us


def intervals(trace: Trace) -> list[Interval]:
    """Every run interval, ordered by (start, hart).

    An interval still open at its hart's last record ends at ``trace.end_us``
    (the last record of the whole dump), with ``end_event`` ``end``.  A leaving
    record without its ``run`` (lost to a ring overwrite) opens nothing.
    """
    done: list[Interval] = []
    running: dict[int, Record] = {}
    for r in trace.records:
        current = running.get(r.hart)
        if r.event == "run":
            if current is not None:
                done.append(_interval(current, r.time_us, "run"))
            running[r.hart] = r
        elif r.event in LEAVE_EVENTS and current is not None and (r.job, r.proc) == (current.job, current.proc):
            done.append(_interval(current, r.time_us, r.event))
            del running[r.hart]
    done += [_interval(r, trace.end_us, "end") for r in running.values()]
    done.sort(key=lambda i: (i.start_us, i.hart))
    return done


def _interval(run: Record, end_us: float, end_event: str) -> Interval:
    return Interval(run.hart, run.job, run.proc, run.arg, run.time_us, end_us, end_event)


# ---------------------------------------------------------------- slot switches

@dataclass(frozen=True)
class Switch:
    """One slot switch: started by ``hart`` at ``time_us`` towards row ``slot``.

    ``acks`` and ``entries`` map each hart that acknowledged the switch to the
    time of its ``ack`` and of its entry into the new slot; ``missing`` lists
    the harts that recorded no ack before the next switch.
    """

    time_us: float
    hart: int
    slot: int
    early: bool
    acks: dict[int, float]
    entries: dict[int, float]
    missing: tuple[int, ...]
    until_us: float = math.inf          # the next switch's start (or the dump's end)

    @property
    def end_us(self) -> float:
        """End of the switch window: the last hart's entry (the start when no hart acked)."""
        return max(self.entries.values(), default=self.time_us)

    @property
    def window_end_us(self) -> float:
        """Where the gang check resumes: the last entry, or - when some hart never acked (its host thread
        stalled past the slot) - the next switch, since that hart may have run the old slot throughout."""
        return self.until_us if self.missing else self.end_us

    @property
    def skew_us(self) -> float | None:
        return max(self.entries.values()) - min(self.entries.values()) if self.entries else None

    @property
    def latency_us(self) -> float | None:
        return self.end_us - self.time_us if self.entries else None

    @property
    def costs_us(self) -> dict[int, float]:
        return {h: self.entries[h] - ack for h, ack in self.acks.items()}

    @property
    def mean_cost_us(self) -> float | None:
        return statistics.fmean(self.costs_us.values()) if self.acks else None


@dataclass(frozen=True)
class SwitchStats:
    """Every slot switch and their summary; the medians and maxima are None without switches."""

    switches: list[Switch]
    count: int
    quantum: int                        # switches because the quantum ended (``slot``)
    early: int                          # early switches
    missing_acks: int                   # (switch, hart) pairs without an ack
    skew_median_us: float | None
    skew_max_us: float | None
    latency_median_us: float | None
    latency_max_us: float | None
    cost_median_us: float | None        # median over every (switch, hart) cost
    overhead_pct: float | None          # 100 * median per-switch mean cost / quantum


def _ack_and_entry(records: list[Record], times: list[float], start: float, until: float,
                   slot: int) -> tuple[float, float] | None:
    """(ack, entry) of one hart for the switch to ``slot`` in [start, until), or None without an ack. A hart
    that left its process after the ack but ran nothing before the next switch was still switching then: its
    entry is ``until`` (deterministic mode, 4 harts: a hart acked last, preempted 0.2 us later, and the next
    switch began before it ran anything - the window had ended at the ack)."""
    ack, left = None, False
    for r in records[bisect.bisect_left(times, start):]:
        if r.time_us >= until:
            break
        if ack is None:
            if r.event == "ack" and r.arg == slot:
                ack = r.time_us
        elif r.event in ("run", "idle"):
            return ack, r.time_us
        else:
            left = left or r.event in LEAVE_EVENTS
    if ack is None:
        return None
    return ack, until if left and until != math.inf else ack


def switch_stats(trace: Trace) -> SwitchStats:
    """Each ``slot``/``early`` record as a ``Switch``, bounded by the next one, and the summary."""
    per_hart = {h: trace.on_hart(h) for h in range(trace.harts)}
    times = {h: [r.time_us for r in records] for h, records in per_hart.items()}
    starts = [r for r in trace.records if r.event in SWITCH_EVENTS]
    switches = []
    for index, start in enumerate(starts):
        until = starts[index + 1].time_us if index + 1 < len(starts) else math.inf
        found = {h: _ack_and_entry(per_hart[h], times[h], start.time_us, until, start.arg)
                 for h in range(trace.harts)}
        switches.append(Switch(
            start.time_us, start.hart, start.arg, start.event == "early",
            acks={h: f[0] for h, f in found.items() if f}, entries={h: f[1] for h, f in found.items() if f},
            missing=tuple(h for h, f in found.items() if f is None), until_us=min(until, trace.end_us)))
    acked = [s for s in switches if s.entries]
    skews = [s.skew_us for s in acked]
    latencies = [s.latency_us for s in acked]
    costs = [c for s in acked for c in s.costs_us.values()]
    means = [s.mean_cost_us for s in acked]
    return SwitchStats(
        switches=switches, count=len(switches), quantum=sum(not s.early for s in switches),
        early=sum(s.early for s in switches), missing_acks=sum(len(s.missing) for s in switches),
        skew_median_us=_median(skews), skew_max_us=max(skews, default=None),
        latency_median_us=_median(latencies), latency_max_us=max(latencies, default=None),
        cost_median_us=_median(costs),
        overhead_pct=100 * statistics.median(means) / trace.quantum_us if means and trace.quantum_us > 0 else None)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def stops(trace: Trace) -> list[Span]:
    """The spans (start_us, end_us) in which a hart of a perturbed boot stood stopped (``stop`` records)."""
    return sorted(span for spans in spans_by_hart(trace, "stop").values() for span in spans)


def held(trace: Trace) -> dict[int, list[Span]]:
    """Per hart, the spans (start_us, end_us) in which a perturbed boot's draw had handed it over (``held``
    records: it waited the other harts' turns, kernel/perturb.h)."""
    return spans_by_hart(trace, "held")


def spans_by_hart(trace: Trace, event: str) -> dict[int, list[Span]]:
    """Per hart, the spans (start_us, start_us + arg) of its ``event`` records (``stop``, ``held``)."""
    per: dict[int, list[Span]] = defaultdict(list)
    for r in trace.records:
        if r.event == event and r.arg > 0:
            per[r.hart].append((r.time_us, r.time_us + r.arg))
    return dict(per)


# ---------------------------------------------------------------- exports

def app_names(results: list[dict]) -> dict[int, str]:
    """Job id -> app name, from parsed RESULT lines."""
    return {r["job"]: str(r["app"]) for r in results if isinstance(r.get("job"), int) and "app" in r}


def app_name(apps: dict[int, str], job: int) -> str:
    return apps.get(job, f"job{job}")


def to_chrome(trace: Trace, apps: dict[int, str] | None = None) -> dict:
    """The trace in Chrome's trace-event JSON format (Perfetto, chrome://tracing).

    One thread per hart (``tid`` = hart), one complete event per run interval
    named ``<app>#<job>.<proc>``, global instant events for slot switches and
    thread instant events for ``rep``; times in microseconds.
    """
    apps = apps or {}
    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0,
                           "args": {"name": f"schedlab policy={trace.policy}"}}]
    for hart in range(trace.harts):
        events.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": hart, "args": {"name": f"hart {hart}"}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": 0, "tid": hart, "args": {"sort_index": hart}})
    for i in intervals(trace):
        app = app_name(apps, i.job)
        events.append({"ph": "X", "name": f"{app}#{i.job}.{i.proc}", "cat": "run", "ts": i.start_us,
                       "dur": i.duration_us, "pid": 0, "tid": i.hart,
                       "args": {"job": i.job, "proc": i.proc, "slot": i.slot, "app": app, "end": i.end_event}})
    for r in trace.records:
        if r.event in SWITCH_EVENTS:
            events.append({"ph": "i", "s": "g", "name": f"{'early switch' if r.event == 'early' else 'slot'} {r.arg}",
                           "cat": "switch", "ts": r.time_us, "pid": 0, "tid": r.hart,
                           "args": {"slot": r.arg, "early": r.event == "early", "hart": r.hart}})
        elif r.event == "rep":
            events.append({"ph": "i", "s": "t", "name": f"{app_name(apps, r.job)}#{r.job} gets {r.arg} harts",
                           "cat": "rep", "ts": r.time_us, "pid": 0, "tid": r.hart,
                           "args": {"job": r.job, "harts": r.arg}})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"policy": trace.policy, "harts": trace.harts, "timebase_hz": trace.timebase_hz,
                          "quantum_us": trace.quantum_us, "dropped": trace.dropped, "complete": trace.complete}}


def draw_gantt(trace: Trace, apps: dict[int, str] | None, path: str | Path) -> None:
    """A PNG with one row per hart (hart 0 on top), one colour per job, and the slot switches."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise HarnessError(NO_MATPLOTLIB) from None
    apps = apps or {}
    figure = Figure(figsize=(12, 1.5 + 0.35 * trace.harts), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    bars: dict[int, dict[int, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for i in intervals(trace):
        bars[i.job][i.hart].append((i.start_us / 1000, i.duration_us / 1000))
    for colour, job in enumerate(sorted(bars)):
        label = f"job {job} ({app_name(apps, job)})"
        for hart, spans in bars[job].items():
            ax.broken_barh(spans, (hart - 0.4, 0.8), facecolors=f"C{colour % 10}", label=label)
            label = None
    for early, style, label in ((False, "solid", "slot switch"), (True, "dashed", "early switch")):
        xs = [r.time_us / 1000 for r in trace.records if r.event in SWITCH_EVENTS and (r.event == "early") == early]
        if xs:
            ax.vlines(xs, -0.5, trace.harts - 0.5, colors="0.35", linewidth=0.6, linestyles=style, label=label)
    reps = [r for r in trace.records if r.event == "rep"]
    if reps:
        ax.plot([r.time_us / 1000 for r in reps], [r.hart for r in reps], linestyle="none", marker="v",
                color="black", markersize=5, label="repartition")
    ax.set_yticks(range(trace.harts), [f"hart {h}" for h in range(trace.harts)])
    ax.set_ylim(trace.harts - 0.5, -0.5)
    if trace.window:
        ax.set_xlim(trace.window[0] / 1000, trace.window[1] / 1000)
    ax.set_xlabel("time since t0 (ms)")
    lost = sum(trace.dropped.values())
    ax.set_title(f"policy={trace.policy}  harts={trace.harts}  quantum={trace.quantum_us / 1000:g} ms"
                 + (f"  ({lost} oldest records lost)" if lost else ""))
    if bars or reps:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    figure.savefig(path, dpi=110)
