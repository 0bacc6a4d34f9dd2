"""The schedule trace as a native Perfetto protobuf trace (``.pftrace``), built with the ``perfetto`` package.

The model.  Perfetto's UI draws CPU scheduling natively from Linux ftrace
events, so the kernel's ``TRACE`` dump is translated into what Linux would
have recorded: each hart is a CPU, each job a process (pid ``job * 1000``,
named after its app), each of our processes a thread of it (tid
``job * 1000 + proc + 1``).  The UI then shows, with no plugin:

* one *CPU track* per hart with the thread that ran on it (``sched_switch``
  events in one ``FtraceEventBundle`` per hart; tid 0, the "swapper", is the
  hart running no process: idle or in the kernel between two processes);
* per thread, its *state*: Running while dispatched, Runnable after ``new``,
  ``wake`` (``sched_waking``), ``pre`` or ``yld`` (``prev_state`` R),
  Sleeping after ``blk`` (``prev_state`` S) and Dead after ``exit``.

A run interval of ``trace.intervals`` is exactly one pair of switches on its
hart: ``swapper -> thread`` at its start and ``thread -> swapper`` at its end
(an interval still open at the dump's end is closed there as Runnable; one cut
by a second ``run`` hands over directly).  Gang slot switches (``slot``,
``early``) and each hart's ``ack`` are instant events on a track of their own,
"gang slot switches"; partition changes (``rep``) are instants on a
"partition" track plus one counter track per job with its allotment in harts; policy=adaptive's moves
(``regime``) are instants on a "regime" track, named with the job, both regimes and the measurements.
The library's own events (``ULOG``, tools/py/schedlab/ulog.py) go on a
track of each thread, "library": barrier waits (arrive to release), sleeps in
a wait (block to unblock) and process-control suspensions as slices, steals,
thread switches, grabs and marks as instants - on the same clock, so a
barrier slice lines up with the thread's Running and Sleeping states above it.
Times are nanoseconds since the scenario's t0, from the kernel's ``time`` CSR.

A window of the trace (``trace --from/--to``, trace_window.py) is drawn the same way: a process running at the
window's start is switched in at that instant, one running at its end is switched out there (as Runnable),
and a thread's state shows from its first record inside the window.
"""

from __future__ import annotations

from pathlib import Path

from .qemu import HarnessError
from .trace import LEAVE_EVENTS, SWITCH_EVENTS, Trace, app_name, intervals, regime_move
from .ulog import LibRecord, roles

NO_PERFETTO = "the .pftrace needs the perfetto package: pip install perfetto or make deps"

#: ``prev_state`` of a thread leaving a CPU, as Linux encodes it (0 = R, runnable).
PREV_STATE = {"pre": 0, "yld": 0, "run": 0, "end": 0, "blk": 1, "exit": 0x10}
#: The trusted sequence of the track events (slot switches, partition changes).
SEQUENCE = 1
SWITCH_TRACK, PARTITION_TRACK, REGIME_TRACK, COUNTER_TRACK_BASE, LIB_TRACK_BASE = 1, 2, 3, 100, 1 << 32


def pid_of(job: int) -> int:
    return job * 1000


def tid_of(job: int, proc: int) -> int:
    return job * 1000 + proc + 1


def _ns(us: float) -> int:
    return round(us * 1000)


def _protos():
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2
        from perfetto.trace_builder.proto_builder import TraceProtoBuilder
    except ImportError:
        raise HarnessError(NO_PERFETTO) from None
    return perfetto_trace_pb2, TraceProtoBuilder


def _comm(apps: dict[int, str], job: int, proc: int) -> str:
    return f"{app_name(apps, job)}.{proc}"[:15]         # Linux's TASK_COMM_LEN - 1


def _process_tree(packet, trace: Trace, apps: dict[int, str]) -> None:
    tree = packet.process_tree
    threads = sorted({(r.job, r.proc) for r in trace.records if r.job > 0 and r.proc >= 0} |
                     {(r.job, r.proc) for r in trace.lib.records if r.job > 0 and r.proc >= 0})
    for job in sorted({job for job, _ in threads}):
        tree.processes.add(pid=pid_of(job), ppid=1, cmdline=[f"{app_name(apps, job)}#{job}"])
    for job, proc in threads:
        tree.threads.add(tid=tid_of(job, proc), tgid=pid_of(job), name=_comm(apps, job, proc))


def _switch(bundle, ns: int, prev: tuple[int, int] | None, prev_state: int, nxt: tuple[int, int] | None,
            apps: dict[int, str]) -> None:
    event = bundle.event.add(timestamp=ns, pid=tid_of(*prev) if prev else 0)
    switch = event.sched_switch
    switch.prev_pid, switch.prev_comm = (tid_of(*prev), _comm(apps, *prev)) if prev else (0, "swapper")
    switch.prev_state, switch.prev_prio = prev_state, 120
    switch.next_pid, switch.next_comm = (tid_of(*nxt), _comm(apps, *nxt)) if nxt else (0, "swapper")
    switch.next_prio = 120


def _cpu_bundles(trace_pb, builder, trace: Trace, apps: dict[int, str]) -> None:
    """One bundle per hart: its switches (from the run intervals) and the wakings it recorded, in time order."""
    # A hart's intervals are disjoint and in time order, so its switches are too; the stable sort by time
    # alone keeps them in that order and puts wakings after the switches of the same instant.
    events: dict[int, list[tuple[int, str, tuple[int, int], int]]] = {h: [] for h in range(trace.harts)}
    for i in intervals(trace):
        thread = (i.job, i.proc)
        events[i.hart].append((_ns(i.start_us), "in", thread, 0))
        if i.end_event != "run":        # a second run hands over in its own "in" switch
            events[i.hart].append((_ns(i.end_us), "out", thread, PREV_STATE[i.end_event]))
    for r in trace.records:
        if r.event in ("new", "wake") and r.job > 0 and r.proc >= 0:
            events[r.hart].append((_ns(r.time_us), "waking", (r.job, r.proc), r.arg if r.arg >= 0 else r.hart))
    for hart, items in events.items():
        bundle = builder.add_packet().ftrace_events
        bundle.cpu = hart
        running = None
        for ns, kind, thread, extra in sorted(items, key=lambda e: e[0]):
            if kind == "in":
                _switch(bundle, ns, running, 0, thread, apps)
                running = thread
            elif kind == "out":
                if running == thread:
                    _switch(bundle, ns, thread, extra, None, apps)
                    running = None
            else:
                waking = bundle.event.add(timestamp=ns, pid=tid_of(*running) if running else 0).sched_waking
                waking.pid, waking.comm, waking.prio = tid_of(*thread), _comm(apps, *thread), 120
                waking.success, waking.target_cpu = 1, extra


def _track(trace_pb, builder, uuid: int, name: str, counter: bool = False) -> None:
    packet = builder.add_packet()
    packet.track_descriptor.uuid = uuid
    packet.track_descriptor.name = name
    if counter:
        packet.track_descriptor.counter.unit_name = "harts"


def _instant(trace_pb, builder, ns: int, track: int, name: str, first: list[bool]) -> None:
    packet = builder.add_packet()
    packet.timestamp = ns
    packet.trusted_packet_sequence_id = SEQUENCE
    if first[0]:
        packet.sequence_flags = trace_pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        first[0] = False
    packet.track_event.type = trace_pb.TrackEvent.TYPE_INSTANT
    packet.track_event.track_uuid = track
    packet.track_event.name = name


def _event_tracks(trace_pb, builder, trace: Trace, apps: dict[int, str], first: list[bool]) -> None:
    """Slot switches and acks on one track; partition changes as instants and per-job counters."""
    if any(r.event in SWITCH_EVENTS for r in trace.records):
        _track(trace_pb, builder, SWITCH_TRACK, "gang slot switches")
    reps = [r for r in trace.records if r.event == "rep"]
    if reps:
        _track(trace_pb, builder, PARTITION_TRACK, "partition")
        for job in sorted({r.job for r in reps}):
            _track(trace_pb, builder, COUNTER_TRACK_BASE + job, f"{app_name(apps, job)}#{job} allotment", True)
    if any(r.event == "regime" for r in trace.records):
        _track(trace_pb, builder, REGIME_TRACK, "regime")
    for r in trace.records:
        ns = _ns(r.time_us)
        if r.event == "regime":
            old, new, wait, grain = regime_move(r)
            what = f"grain {grain} us, wait {wait} %" if grain is not None else "no barrier"
            _instant(trace_pb, builder, ns, REGIME_TRACK, f"{app_name(apps, r.job)}#{r.job}: {old} -> {new} ({what})",
                     first)
        elif r.event in SWITCH_EVENTS:
            what = "early switch" if r.event == "early" else "slot switch"
            _instant(trace_pb, builder, ns, SWITCH_TRACK, f"{what} to {r.arg} (hart {r.hart})", first)
        elif r.event == "ack":
            _instant(trace_pb, builder, ns, SWITCH_TRACK, f"hart {r.hart} acks slot {r.arg}", first)
        elif r.event == "rep":
            _instant(trace_pb, builder, ns, PARTITION_TRACK, f"{app_name(apps, r.job)}#{r.job} gets {r.arg} harts",
                     first)
            packet = builder.add_packet()
            packet.timestamp, packet.trusted_packet_sequence_id = ns, SEQUENCE
            packet.track_event.type = trace_pb.TrackEvent.TYPE_COUNTER
            packet.track_event.track_uuid = COUNTER_TRACK_BASE + r.job
            packet.track_event.counter_value = r.arg


def lib_track(job: int, proc: int) -> int:
    return LIB_TRACK_BASE + tid_of(job, proc)


def _lib_name(r: LibRecord, role: str, name: str) -> str:
    """What a library event is called on its track."""
    if role != "instant":
        return f"{name} (participant {r.arg})" if name == "barrier" else name
    return {"steal": f"steal from process {r.arg}", "switch": f"switch to worker {r.arg}",
            "grab": f"grab {r.arg}" + (" (another queue)" if r.aux else ""), "mark": f"mark {r.arg}",
            "arrive": f"arrive (participant {r.arg})", "release": f"release (participant {r.arg})",
            "suspend": f"suspend (allotment {r.arg})", "resume": f"resume (allotment {r.arg})"}.get(r.event, r.event)


def _lib_tracks(trace_pb, builder, trace: Trace, first: list[bool]) -> None:
    """One "library" track per thread that recorded anything, its stretches as slices, the rest as instants."""
    kinds = {"begin": trace_pb.TrackEvent.TYPE_SLICE_BEGIN, "end": trace_pb.TrackEvent.TYPE_SLICE_END,
             "instant": trace_pb.TrackEvent.TYPE_INSTANT}
    for job, proc in sorted({(r.job, r.proc) for r in trace.lib.records}):
        packet = builder.add_packet()
        packet.track_descriptor.uuid = lib_track(job, proc)
        packet.track_descriptor.name = "library"
        packet.track_descriptor.thread.pid, packet.track_descriptor.thread.tid = pid_of(job), tid_of(job, proc)
    # each process's records are in time order; a stable sort by time keeps that order on ties, so every
    # track's slices still nest
    for r, role, name in sorted(roles(trace.lib), key=lambda x: x[0].ticks):
        packet = builder.add_packet()
        packet.timestamp = _ns(r.time_us)
        packet.trusted_packet_sequence_id = SEQUENCE
        if first[0]:
            packet.sequence_flags = trace_pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            first[0] = False
        packet.track_event.type = kinds[role]
        packet.track_event.track_uuid = lib_track(r.job, r.proc)
        if role != "end":
            packet.track_event.name = _lib_name(r, role, name)


def to_perfetto(trace: Trace, apps: dict[int, str] | None = None) -> bytes:
    """The serialized Perfetto ``Trace`` proto of ``trace`` (HarnessError without the perfetto package)."""
    trace_pb, builder_class = _protos()
    apps = apps or {}
    builder = builder_class()
    _process_tree(builder.add_packet(), trace, apps)
    _cpu_bundles(trace_pb, builder, trace, apps)
    first = [True]
    _event_tracks(trace_pb, builder, trace, apps, first)
    _lib_tracks(trace_pb, builder, trace, first)
    return builder.serialize()


def write_perfetto(trace: Trace, apps: dict[int, str] | None, path: str | Path) -> None:
    Path(path).write_bytes(to_perfetto(trace, apps))


def read_switches(data: bytes) -> dict[int, list[tuple[int, int, int, int]]]:
    """Per CPU, its ``sched_switch`` events as (ns, prev_tid, prev_state, next_tid), read back with the package."""
    trace_pb, _ = _protos()
    parsed = trace_pb.Trace.FromString(data)
    out: dict[int, list[tuple[int, int, int, int]]] = {}
    for packet in parsed.packet:
        if packet.HasField("ftrace_events"):
            out.setdefault(packet.ftrace_events.cpu, []).extend(
                (e.timestamp, e.sched_switch.prev_pid, e.sched_switch.prev_state, e.sched_switch.next_pid)
                for e in packet.ftrace_events.event if e.HasField("sched_switch"))
    return out


def read_lib_events(data: bytes) -> dict[int, list[tuple[int, int, str]]]:
    """Per thread tid, its library track's events as (ns, type, name), read back with the package."""
    trace_pb, _ = _protos()
    parsed = trace_pb.Trace.FromString(data)
    owner = {p.track_descriptor.uuid: p.track_descriptor.thread.tid for p in parsed.packet
             if p.HasField("track_descriptor") and p.track_descriptor.HasField("thread")}
    out: dict[int, list[tuple[int, int, str]]] = {}
    for p in parsed.packet:
        if p.HasField("track_event") and p.track_event.track_uuid in owner:
            out.setdefault(owner[p.track_event.track_uuid], []).append((p.timestamp, p.track_event.type,
                                                                          p.track_event.name))
    return out


assert LEAVE_EVENTS <= PREV_STATE.keys()
