"""The library's event logs: the kernel's ``ULOG`` dump, which follows its ``TRACE`` dump.

The model.  Booted with ``trace=on``, every process of a job records the
thread library's own events - barrier arrivals and releases, a wait going to
sleep in the kernel and waking, steals, thread switches, process-control
suspensions and resumptions, loop-scheduler grabs, an app's marks - into a
ring of its own (lib/base/eventlog.h).  The kernel dumps the rings right after
``TRACE end``, on the same clock (ticks since the same t0):

    ULOG begin jobs=<n> now=<ticks of the dump>
    ULOG job=<j> proc=<p> records=<n> dropped=<d>
    U <job> <proc> <ticks> <event> <arg> <aux>       (n lines, oldest first)
    ULOG job=<j> off=no-room                         (a job whose logs did not fit the kernel's budget)
    ULOG end

Records of events this module does not know (``?``: a job scribbled on its
log) are skipped; so are later kinds, and records dated after the dump's
``now`` (scribbled too: counted in ``bogus``).  ``arg`` and ``aux`` per event are in
include/schedlab/abi.h (enum sl_ulog_ev).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .console import bounded, decimal, parse_fields
from .qemu import HarnessError

#: Events the library records (abi.h, enum sl_ulog_ev).
LIB_EVENTS = frozenset({"arrive", "release", "block", "unblock", "steal", "switch", "suspend", "resume", "grab",
                        "mark"})
#: Pairs that open and close a stretch of time on their process: (begin, end) -> the stretch's name.
LIB_SPANS = {("arrive", "release"): "barrier", ("block", "unblock"): "sleep", ("suspend", "resume"): "suspended"}


@dataclass(frozen=True)
class LibRecord:
    """One ``U`` line."""

    job: int
    proc: int
    ticks: int
    time_us: float
    event: str
    arg: int
    aux: int


@dataclass
class LibLog:
    """Every process's records (per process in the order recorded), what was dropped, and jobs left out."""

    records: list[LibRecord] = field(default_factory=list)
    dropped: dict[tuple[int, int], int] = field(default_factory=dict)
    off: list[int] = field(default_factory=list)
    present: bool = False       # the dump had a ULOG block at all
    bogus: int = 0              # records skipped: an unknown event, or a time after the dump
    complete: bool = False      # the dump reached ``ULOG end``


#: What the kernel can print in a ``U`` line (kernel/ulog.c: job and proc ints, ticks a u64 - any value, since
#: the job writes its own log; one at or past 2^63 or the dump's ``now`` is counted bogus - arg an int32, aux a
#: uint16); a line outside these is not the kernel's.
U_FIELDS = (("job", 0, (1 << 31) - 1), ("proc", 0, (1 << 31) - 1), ("ticks", 0, (1 << 64) - 1),
            ("arg", -(1 << 31), (1 << 31) - 1), ("aux", 0, 0xFFFF))
U_FORMAT = ("U <job> <proc> <ticks 0..2^64-1> <event> <arg: an int32> <aux 0..65535>")
#: Ticks a record may carry and still be placed on the timeline (Perfetto's timestamps are signed 64-bit).
MAX_TICKS = (1 << 63) - 1


def _record(rest: str, hz: int, line: str) -> LibRecord | None:
    words = rest.split()
    if len(words) != 6:
        raise HarnessError(f"bad library record (expected {U_FORMAT}): {line}")
    values = [decimal(words[i]) for i in (0, 1, 2, 4, 5)]
    if not all(bounded(v, low, high) for v, (_, low, high) in zip(values, U_FIELDS)):
        raise HarnessError(f"bad library record (numbers out of the kernel's ranges: {U_FORMAT}): {line}")
    job, proc, ticks, arg, aux = values
    if words[3] not in LIB_EVENTS:
        return None
    return LibRecord(job, proc, ticks, ticks * 1e6 / hz, words[3], arg, aux)


def parse_ulog(lines: Iterable[str], hz: int) -> LibLog:
    """The ``ULOG`` dump among ``lines`` (other lines are ignored); an empty LibLog when there is none.

    A complete dump (``ULOG end``) must hold as many records per process as it announced; a cut-off one is
    taken as far as it goes, and its last line, if it is the input's last line and malformed (the console was
    cut inside it), is dropped - as in the TRACE dump.
    """
    lines = [raw.strip() for raw in lines]
    log = LibLog()
    current: tuple[int, int] | None = None
    announced: dict[tuple[int, int], int] = {}
    seen: dict[tuple[int, int], int] = {}
    inside = complete = False
    limit: int | None = None
    for index, line in enumerate(lines, 1):
        try:
            keyword, _, rest = line.partition(" ")
            if keyword == "ULOG" and rest.startswith("begin"):
                inside, log.present = True, True
                now = parse_fields(rest).get("now")
                limit = now if bounded(now, 0, MAX_TICKS) else None
            elif not inside or complete:
                continue
            elif keyword == "ULOG" and rest.startswith("end"):
                complete = True
            elif keyword == "ULOG":
                fields = parse_fields(rest)
                if fields.get("off") is not None and isinstance(fields.get("job"), int):
                    log.off.append(fields["job"])
                    continue
                values = [fields.get(k) for k in ("job", "proc", "records", "dropped")]
                if not all(bounded(v, 0, (1 << 64) - 1) for v in values):   # dropped= is the job's own count
                    raise HarnessError("bad ULOG block (needs job=, proc=, records=, dropped=, each 0..2^64-1): "
                                       + line)
                current = (values[0], values[1])
                announced[current], log.dropped[current], seen[current] = values[2], values[3], 0
            elif keyword == "U":
                if current is None:
                    raise HarnessError(f"library record before any 'ULOG job=' line: {line}")
                seen[current] += 1
                record = _record(rest, hz, line)
                if record is None or record.ticks > (MAX_TICKS if limit is None else min(limit, MAX_TICKS)):
                    log.bogus += 1
                else:
                    if (record.job, record.proc) != current:
                        raise HarnessError(f"library record of job {record.job} proc {record.proc} in the block of "
                                           f"job {current[0]} proc {current[1]}: {line}")
                    log.records.append(record)
        except HarnessError:
            if index == len(lines) and not complete:
                break                   # the console was cut inside its last line
            raise
    log.complete = complete
    if complete:
        wrong = [f"job {j} proc {p}: {announced[(j, p)]} announced, {seen[(j, p)]} found"
                 for (j, p) in announced if announced[(j, p)] != seen[(j, p)]]
        if wrong:
            raise HarnessError("ULOG record counts do not match (console lines lost?): " + "; ".join(wrong))
    return log


def roles(log: LibLog) -> list[tuple[LibRecord, str, str]]:
    """Every record with its role on its process's timeline: (record, role, name), in the dump's order.

    Per process, a begin event (``arrive``, ``block``, ``suspend``) opens a stretch of time that the
    matching end event closes, innermost first, so stretches nest like a stack: both get role "begin" /
    "end" and the stretch's name (``barrier``, ``sleep``, ``suspended``).  Everything else is an
    "instant" named after its event: an end without its begin on that process (a worker that arrived on
    one process and was released on another after a suspension), a begin never closed, a steal, a grab.
    """
    ends = {end: (begin, name) for (begin, end), name in LIB_SPANS.items()}
    begins = {begin: name for (begin, _), name in LIB_SPANS.items()}
    role = ["instant"] * len(log.records)
    stacks: dict[tuple[int, int], list[int]] = {}
    for i, r in enumerate(log.records):
        stack = stacks.setdefault((r.job, r.proc), [])
        if r.event in begins:
            stack.append(i)
        elif r.event in ends and stack and log.records[stack[-1]].event == ends[r.event][0]:
            role[stack.pop()], role[i] = "begin", "end"
    return [(r, role[i], begins.get(r.event) or ends.get(r.event, (None, r.event))[1] if role[i] != "instant"
             else r.event) for i, r in enumerate(log.records)]
