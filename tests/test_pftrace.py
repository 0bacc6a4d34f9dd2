"""The native Perfetto export (tools/py/schedlab/pftrace.py), read back with the perfetto package's own protos.

The check that matters: every run interval of the trace dump is on its hart's CPU track, in order, with the
right thread and times, and each thread leaves the CPU in the state its leaving record says.
"""

from pathlib import Path

import pytest

from schedlab import cli, console, pftrace, trace
from trace_data import COSCHEDULED, LOG, SWITCHES, TIMESLICE, dump

perfetto_pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

GANG_CONSOLE = Path(__file__).parent / "data" / "consoles" / "gang-trace.console"


def cpu_intervals(data: bytes) -> dict[int, list[tuple[int, int, int, int]]]:
    """Per CPU, (tid, start_ns, end_ns, prev_state at the end) from the sched_switch events read back."""
    out = {}
    for cpu, switches in pftrace.read_switches(data).items():
        assert [s[0] for s in switches] == sorted(s[0] for s in switches), f"cpu {cpu}: switches out of order"
        spans, running = [], None
        for ns, prev, state, nxt in switches:
            assert prev == (running[0] if running else 0), f"cpu {cpu} at {ns}: prev_pid is not who ran"
            if running:
                spans.append((running[0], running[1], ns, state))
            running = (nxt, ns) if nxt else None
        assert running is None, f"cpu {cpu}: a thread is left running past the end"
        out[cpu] = spans
    return out


def expected(parsed: trace.Trace) -> dict[int, list[tuple[int, int, int, int]]]:
    out = {h: [] for h in range(parsed.harts)}
    for i in trace.intervals(parsed):
        out[i.hart].append((pftrace.tid_of(i.job, i.proc), round(i.start_us * 1000), round(i.end_us * 1000),
                            pftrace.PREV_STATE[i.end_event]))
    return out


@pytest.mark.parametrize("text", [
    dump(SWITCHES), dump(COSCHEDULED), dump(TIMESLICE, policy="timeslice"),
    dump({0: ["0 run 1 0 -1", "10 run 1 1 -1", "20 exit 1 1 0"]}, harts=1),      # a run cut by a run
    GANG_CONSOLE.read_text(),                                                     # a real kernel's dump
], ids=["switches", "coscheduled", "timeslice", "run-cut-by-run", "kernel-gang"])
def test_every_run_interval_is_on_its_cpu_track_in_order(text):
    parsed = trace.parse_trace(console.parse_console(text).traces if "BOOT" in text else text)
    assert trace.intervals(parsed)
    assert cpu_intervals(pftrace.to_perfetto(parsed)) == expected(parsed)


def test_jobs_are_processes_and_their_processes_threads():
    parsed = trace.parse_trace(dump(COSCHEDULED))
    packets = perfetto_pb.Trace.FromString(pftrace.to_perfetto(parsed, {1: "gauss"})).packet
    tree = next(p.process_tree for p in packets if p.HasField("process_tree"))
    assert {(p.pid, tuple(p.cmdline)) for p in tree.processes} == {(1000, ("gauss#1",)), (2000, ("job2#2",))}
    assert {(t.tid, t.tgid, t.name) for t in tree.threads} == {
        (1001, 1000, "gauss.0"), (1002, 1000, "gauss.1"), (2001, 2000, "job2.0"), (2002, 2000, "job2.1")}
    wakings = [(e.timestamp, e.sched_waking.pid, e.sched_waking.target_cpu)
               for p in packets if p.HasField("ftrace_events") for e in p.ftrace_events.event
               if e.HasField("sched_waking")]
    assert sorted(wakings) == [(0, 1001, 0), (0, 1002, 1), (0, 2001, 0), (0, 2002, 1)]


def test_slot_switches_and_partition_changes_have_their_own_tracks():
    parsed = trace.parse_trace(dump(SWITCHES))
    packets = perfetto_pb.Trace.FromString(pftrace.to_perfetto(parsed, {1: "gauss"})).packet
    tracks = {p.track_descriptor.uuid: p.track_descriptor.name for p in packets if p.HasField("track_descriptor")}
    assert set(tracks.values()) == {"gang slot switches", "partition", "gauss#1 allotment"}
    events = [(tracks[p.track_event.track_uuid], p.timestamp, p.track_event.name, p.track_event.counter_value)
              for p in packets if p.HasField("track_event")]
    switch_names = [name for track, _, name, _ in events if track == "gang slot switches"]
    assert [n for n in switch_names if "switch" in n] == [
        "slot switch to 1 (hart 0)", "early switch to 0 (hart 1)", "slot switch to 1 (hart 0)"]
    assert sum("acks" in n for n in switch_names) == 5
    assert ("partition", 1_700_000, "gauss#1 gets 2 harts", 0) in events
    assert ("gauss#1 allotment", 1_700_000, "", 2) in events
    assert all(p.trusted_packet_sequence_id == pftrace.SEQUENCE for p in packets if p.HasField("track_event"))


def test_cli_trace_writes_the_pftrace_next_to_the_json(tmp_path, capsys):
    log, out = tmp_path / "c.log", tmp_path / "t.json"
    log.write_text(LOG)
    assert cli.main(["trace", str(log), "-o", str(out)]) == 0
    data = (tmp_path / "t.pftrace").read_bytes()
    assert cpu_intervals(data) == expected(trace.parse_trace(LOG))
    assert f"t.pftrace" in capsys.readouterr().err
    assert cli.main(["trace", str(log), "-o", str(tmp_path / "u.json"), "--pftrace", ""]) == 0
    assert not (tmp_path / "u.pftrace").exists()
