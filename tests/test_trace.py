"""Unit tests of trace analysis and export (tools/py/schedlab/trace.py), without QEMU.

Every trace here is written by hand with ``dump``; most use a 1 MHz timebase
so that ticks are microseconds and the expected numbers can be checked on
paper.  The comments above each trace draw what happens on each hart.
"""

import json
import sys
from pathlib import Path

import pytest

from schedlab import cli, commands, console, gangcheck, qemu, trace
from schedlab.qemu import HarnessError
from trace_data import COSCHEDULED, LOG, SWITCHES, TIMESLICE, dump


def without(blocks, *events):
    return {h: [r for r in records if r.split()[1] not in events] for h, records in blocks.items()}


def rows(intervals):
    return [(i.hart, i.job, i.proc, i.slot, i.start_us, i.end_us, i.end_event) for i in intervals]


# ---------------------------------------------------------------- parsing

def test_parse_header_and_merge_blocks_by_time_then_hart():
    text = dump({0: ["10 run 1 0 -1", "30 pre 1 0 0", "30 run 2 0 -1"],
                 1: ["20 run 1 1 -1", "30 blk 1 1 0"]}, hz=10_000_000, policy="timeslice", quantum_us=5000)
    parsed = trace.parse_trace(text)
    assert (parsed.harts, parsed.timebase_hz, parsed.policy, parsed.quantum_us) == (2, 10_000_000, "timeslice", 5000)
    assert parsed.dropped == {0: 0, 1: 0} and parsed.complete
    assert [(r.hart, r.ticks, r.event) for r in parsed.records] == [
        (0, 10, "run"), (1, 20, "run"), (0, 30, "pre"), (0, 30, "run"), (1, 30, "blk")]
    assert parsed.records[1].time_us == pytest.approx(2.0)            # 20 ticks at 10 MHz
    assert (parsed.start_us, parsed.end_us) == pytest.approx((1.0, 3.0))


def test_console_collects_the_dump_verbatim_and_parse_accepts_lines_or_text():
    text = ("OpenSBI v1.1\nBOOT harts=2 policies=gang\n" + dump(SWITCHES)
            + "RESULT job=1 app=gauss policy=gang harts=2 procs=2 arrive_us=0 start_us=0 end_us=2001 "
              "elapsed_us=2001 cpu_us=3000 check=ok\nSUMMARY policy=gang harts=2 jobs=2 failed=0 makespan_us=2100\n")
    parsed = console.parse_console(text)
    assert parsed.traces[0].startswith("TRACE begin") and parsed.traces[-1] == "TRACE end"
    assert parsed.traces[2] == "T 0 0 run 1 0 0"
    assert len(parsed.traces) == 4 + len(SWITCHES[0]) + len(SWITCHES[1])
    assert parsed.summary["makespan_us"] == 2100 and parsed.results[0]["app"] == "gauss"
    assert trace.parse_trace(parsed.traces) == trace.parse_trace(text)
    assert trace.app_names(parsed.results) == {1: "gauss"}


def test_no_trace_says_how_to_get_one():
    with pytest.raises(HarnessError, match="no trace in this log: boot with trace=on"):
        trace.parse_trace("BOOT harts=2\nTRACE 1200 0 dispatch 1 0\nSUMMARY policy=gang\n")


def test_unknown_events_are_skipped_but_counted():
    text = dump({0: ["5 run 1 0 -1", "6 frob 1 2 3", "7 future", "9 exit 1 0 0"]}, harts=1)
    parsed = trace.parse_trace(text)
    assert [r.event for r in parsed.records] == ["run", "exit"]
    assert rows(trace.intervals(parsed)) == [(0, 1, 0, -1, 5.0, 9.0, "exit")]


@pytest.mark.parametrize("bad, message", [
    ("TRACE begin harts=2 policy=gang quantum_us=1\nTRACE end\n", "bad TRACE header"),
    (dump({0: ["5 run 1 x -1", "6 idle 0 -1 0"]}), "bad trace record"),
    (dump({0: ["5 run 1 0"], 1: []}), "bad trace record"),
    (dump({0: ["5 run 1 0 -1"]}).replace("T 0 5", "T 1 5"), "hart 1 in the block of hart 0"),
    (dump({0: ["5 run 1 0 -1"]}).replace("records=1", "records=2"), "1 announced|2 announced"),
    (dump({3: ["5 run 1 0 -1"]}), "hart 3 unexpected"),
    (dump({0: []}) + dump({0: []}), "more than one TRACE dump"),
])
def test_malformed_dumps_are_errors(bad, message):
    with pytest.raises(HarnessError, match=message):
        trace.parse_trace(bad)


def test_cut_off_dump_keeps_what_arrived():
    text = dump({0: ["5 run 1 0 -1", "8 pre 1 0 0"], 1: ["6 run 2 0 -1", "9 exit 2 0 0"]}, end=False)
    cut = text[:text.rindex("T 1 9") + len("T 1 9 ex")]         # QEMU killed mid-line
    parsed = trace.parse_trace(cut)
    assert not parsed.complete and [r.ticks for r in parsed.records] == [5, 6, 8]
    assert rows(trace.intervals(parsed))[1] == (1, 2, 0, -1, 6.0, 8.0, "end")


# ---------------------------------------------------------------- intervals

def test_intervals_end_at_leave_records_or_at_the_dumps_end():
    parsed = trace.parse_trace(dump(SWITCHES))
    assert rows(trace.intervals(parsed)) == [
        (0, 1, 0, 0, 0.0, 1004.0, "pre"), (1, 1, 1, 0, 0.0, 1011.0, "pre"),
        (0, 2, 0, 1, 1006.0, 1400.0, "blk"), (1, 2, 1, 1, 1020.0, 1450.0, "blk"),
        (1, 1, 1, 0, 1502.0, 2001.0, "end"), (0, 1, 0, 0, 1505.0, 2001.0, "end")]


def test_dropped_records_leave_the_lost_start_undrawn():
    text = dump({0: ["0 run 1 0 -1", "400 exit 1 0 0"],
                 1: ["50 pre 2 0 0", "60 run 2 1 -1", "90 exit 2 0 0", "300 yld 2 1 0"]}, dropped={1: 7})
    parsed = trace.parse_trace(text)
    assert parsed.dropped == {0: 0, 1: 7}
    assert rows(trace.intervals(parsed)) == [(0, 1, 0, -1, 0.0, 400.0, "exit"), (1, 2, 1, -1, 60.0, 300.0, "yld")]


def test_a_run_without_the_previous_leaving_closes_it():
    parsed = trace.parse_trace(dump({0: ["0 run 1 0 -1", "10 run 1 1 -1", "20 exit 1 1 0"]}, harts=1))
    assert [(i.proc, i.end_us, i.end_event) for i in trace.intervals(parsed)] == [(0, 10.0, "run"), (1, 20.0, "exit")]


# ---------------------------------------------------------------- slot switches

def test_switch_stats_on_a_hand_computed_example():
    stats = trace.switch_stats(trace.parse_trace(dump(SWITCHES)))
    first, second, third = stats.switches
    assert (first.time_us, first.hart, first.slot, first.early) == (1000.0, 0, 1, False)
    assert first.acks == {0: 1002.0, 1: 1010.0} and first.entries == {0: 1006.0, 1: 1020.0}
    assert (first.skew_us, first.latency_us, first.costs_us, first.end_us) == (14.0, 20.0, {0: 4.0, 1: 10.0}, 1020.0)
    assert (second.early, second.entries, second.skew_us, second.latency_us) == (True, {0: 1505.0, 1: 1502.0}, 3.0, 5.0)
    assert third.entries == {0: 2001.0} and third.missing == (1,) and third.costs_us == {0: 0.0}
    assert (stats.count, stats.quantum, stats.early, stats.missing_acks) == (3, 2, 1, 1)
    assert (stats.skew_median_us, stats.skew_max_us) == (3.0, 14.0)
    assert (stats.latency_median_us, stats.latency_max_us) == (5.0, 20.0)
    assert stats.cost_median_us == 2.0                      # of 4, 10, 2, 1, 0
    assert stats.overhead_pct == pytest.approx(0.15)        # median of mean costs 7, 1.5, 0 over 1000 us


def test_a_hart_still_switching_at_the_next_switch_enters_there():
    """A hart that acked, left its process and ran nothing before the next switch began was still switching:
    the window lasts until that switch (deterministic mode, 4 harts: the last ack's preemption came 0.2 us after
    it, and the gang check counted those 0.2 us as a partner running out of its slot)."""
    parsed = trace.parse_trace(dump({0: ["1000 slot 0 -1 1", "1001 ack 0 -1 1", "1002 run 1 0 1", "1030 early 0 -1 2",
                                         "1031 ack 0 -1 2"],
                                     1: ["1010 ack 0 -1 1", "1012 pre 2 0 0", "1031 ack 0 -1 2", "1032 run 1 1 2"]}))
    first = trace.switch_stats(parsed).switches[0]
    assert first.acks == {0: 1001.0, 1: 1010.0} and first.entries == {0: 1002.0, 1: 1030.0}
    assert first.window_end_us == 1030.0


def test_switch_stats_without_switches():
    stats = trace.switch_stats(trace.parse_trace(dump(TIMESLICE, policy="timeslice")))
    assert stats.switches == [] and stats.count == 0
    assert stats.skew_median_us is None and stats.overhead_pct is None


# ---------------------------------------------------------------- gang co-scheduling

def test_coscheduled_gangs_have_no_violations():
    checks = gangcheck.gang_violations(trace.parse_trace(dump(COSCHEDULED)))
    assert sorted(checks) == [1, 2]
    assert all(c.violation_us == 0 and c.fraction == 0 and c.worst == [] for c in checks.values())
    assert checks[1].run_us == 1000 + 1003 + 496 + 498
    assert checks[2].run_us == 1001 + 996


def test_switch_windows_are_what_excuses_the_hand_over():
    # Without slot/ack records there are no switch windows: the few microseconds
    # in which one hart has switched and the other not yet now count.
    checks = gangcheck.gang_violations(trace.parse_trace(dump(without(COSCHEDULED, "slot", "ack"))))
    assert checks[1].violation_us == 3 + 2        # 1.1 runs 1001..1004 while 1.0 waits; 1.1 from 2002..2004
    assert checks[2].violation_us == 3 + 2
    assert checks[2].worst == [(1002.0, 1005.0, 0, 1), (2001.0, 2003.0, 0, 1)]


def test_uncoordinated_timeslicing_violates_and_grace_trims_each_wait():
    parsed = trace.parse_trace(dump(TIMESLICE, policy="timeslice"))
    checks = gangcheck.gang_violations(parsed)
    assert (checks[1].violation_us, checks[1].run_us, checks[1].fraction) == (1000.0, 2000.0, 0.5)
    assert checks[1].worst == [(0.0, 500.0, 0, 1), (1000.0, 1500.0, 1, 0)]
    assert checks[2].violation_us == 1000.0
    graced = gangcheck.gang_violations(parsed, grace_us=200)
    assert graced[1].violation_us == 300 + 300
    assert graced[2].violation_us == 300 + 500


def test_blocked_processes_never_count_and_wakes_do():
    # 1.1 blocks at 100 and is woken by hart 0 at 900, then waits until 950 while 1.0 runs.
    blocks = {0: ["0 run 1 0 -1", "900 wake 1 1 1", "1000 exit 1 0 0"],
              1: ["0 run 1 1 -1", "100 blk 1 1 0", "101 idle 0 -1 0", "950 run 1 1 -1", "1000 exit 1 1 0"]}
    parsed = trace.parse_trace(dump(blocks, policy="timeslice"))
    assert gangcheck.gang_violations(parsed)[1].violation_us == 50
    assert gangcheck.gang_violations(parsed, grace_us=50)[1].violation_us == 0


def test_a_stopped_hart_and_its_dispatch_after_are_not_violations():
    # A perturbed boot: hart 0 wakes 1.0 at 100 and stands stopped (stop 2000 us) before dispatching it at 2150,
    # while 1.1 runs on hart 1. The stop, and the grace after it, excuse the wait; a dispatch later than that
    # counts from the grace's end.
    def blocks(run_at):
        return {0: ["0 run 1 0 0", "50 blk 1 0 0", "100 wake 1 0 0", "100 stop 0 -1 2000", f"{run_at} run 1 0 0",
                    "3000 exit 1 0 0"],
                1: ["0 run 1 1 0", "3000 exit 1 1 0"]}
    parsed = trace.parse_trace(dump(blocks(2150)))
    assert trace.stops(parsed) == [(100.0, 2100.0)]
    assert gangcheck.gang_violations(parsed, grace_us=100)[1].violation_us == 0
    late = gangcheck.gang_violations(trace.parse_trace(dump(blocks(2300))), grace_us=100)[1]
    assert late.violation_us == 100 and late.worst == [(2200.0, 2300.0, 1, 0)]
    assert gangcheck.gang_violations(trace.parse_trace(dump(blocks(2150))))[1].violation_us == 50


def test_a_held_hart_is_excused_for_its_own_processes_only():
    # A perturbed boot: hart 0 wakes 1.0 at 100, then its draws hand it over twice (held 120-420 and 430-730: it
    # waited the others' turns) before it dispatches 1.0, while 1.1 runs on hart 1. The hand-overs are not
    # hart 0's own time, so its 100 us of grace last until 800; later counts from there. Held on hart 1, they
    # excuse nothing of hart 0's lateness.
    def blocks(run_at, on=0):
        held = ["120 held 0 -1 300", "430 held 0 -1 300"]
        return {0: ["0 run 1 0 0", "50 blk 1 0 0", "100 wake 1 0 0", *(held if on == 0 else []),
                    f"{run_at} run 1 0 0", "3000 exit 1 0 0"],
                1: ["0 run 1 1 0", *(held if on == 1 else []), "3000 exit 1 1 0"]}
    parsed = trace.parse_trace(dump(blocks(800)))
    assert trace.held(parsed) == {0: [(120.0, 420.0), (430.0, 730.0)]} and trace.stops(parsed) == []
    assert gangcheck.gang_violations(parsed, grace_us=100)[1].violation_us == 0
    late = gangcheck.gang_violations(trace.parse_trace(dump(blocks(900))), grace_us=100)[1]
    assert late.violation_us == 100 and late.worst == [(800.0, 900.0, 1, 0)]
    elsewhere = gangcheck.gang_violations(trace.parse_trace(dump(blocks(800, on=1))), grace_us=100)[1]
    assert elsewhere.violation_us == 600


def test_a_wake_merged_after_the_run_it_caused_is_ignored():
    # Hart 1 wakes 1.1 and hart 0 dispatches it in the same tick: merged by hart, the
    # run comes first.  The wake must not leave 1.1 "ready-waiting" while it runs.
    blocks = {0: ["0 run 1 1 -1", "100 blk 1 1 0", "101 idle 0 -1 0", "950 run 1 1 -1", "1000 exit 1 1 0"],
              1: ["0 run 1 0 -1", "950 wake 1 1 0", "1000 exit 1 0 0"]}
    checks = gangcheck.gang_violations(trace.parse_trace(dump(blocks, policy="timeslice")))
    assert checks[1].violation_us == 0


def test_a_preemption_merged_after_the_run_it_made_possible_is_ignored():
    # Hart 1 preempts 1.0 and hart 0 dispatches it in the same tick (a slot switch moving it between harts):
    # merged by hart, the run comes first. The preemption ends 1.0's earlier run on hart 1, and 1.0 is not
    # ready-waiting while 1.1 runs beside it (found by random mixes in the simulator, 5 and 6 harts).
    blocks = {0: ["0 run 1 1 -1", "500 pre 1 1 0", "500 run 1 0 -1", "1000 exit 1 0 0"],
              1: ["0 run 1 0 -1", "500 pre 1 0 0", "500 run 1 1 -1", "1000 exit 1 1 0"]}
    checks = gangcheck.gang_violations(trace.parse_trace(dump(blocks, policy="timeslice")))
    assert checks[1].violation_us == 0 and checks[1].run_us == 2000


def test_processes_in_different_rows_are_not_a_gang():
    # Job 1 has processes in rows 0 and 1 (more processes than harts): 1.1 waiting for
    # row 1 while 1.0 runs in row 0 is expected.
    blocks = {0: ["0 new 1 1 -1", "0 run 1 0 0", "1000 slot 0 -1 1", "1000 ack 0 -1 1", "1001 pre 1 0 0",
                  "1002 run 1 1 1", "2000 exit 1 1 0"]}
    checks = gangcheck.gang_violations(trace.parse_trace(dump(blocks, harts=1)))
    assert checks[1].violation_us == 0


# ---------------------------------------------------------------- exports

def test_chrome_json_structure():
    document = trace.to_chrome(trace.parse_trace(dump(SWITCHES)), {1: "gauss"})
    assert document["displayTimeUnit"] == "ms"
    events = json.loads(json.dumps(document))["traceEvents"]
    runs = [e for e in events if e["ph"] == "X"]
    assert len(runs) == 6
    first = runs[0]
    assert (first["name"], first["cat"], first["ts"], first["dur"], first["pid"], first["tid"]) == \
        ("gauss#1.0", "run", 0.0, 1004.0, 0, 0)
    assert first["args"]["job"] == 1 and first["args"]["proc"] == 0 and first["args"]["slot"] == 0
    assert {e["name"] for e in runs} == {"gauss#1.0", "gauss#1.1", "job2#2.0", "job2#2.1"}
    switches = [e for e in events if e["ph"] == "i" and e["cat"] == "switch"]
    assert [(e["ts"], e["s"], e["args"]["early"]) for e in switches] == [
        (1000.0, "g", False), (1500.0, "g", True), (2000.0, "g", False)]
    (rep,) = [e for e in events if e.get("cat") == "rep"]
    assert rep["args"] == {"job": 1, "harts": 2} and rep["ph"] == "i"
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {0: "hart 0", 1: "hart 1"}


def test_gantt_without_matplotlib_says_how_to_install(monkeypatch, tmp_path):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(HarnessError, match="pip install matplotlib or make deps"):
        trace.draw_gantt(trace.parse_trace(dump(SWITCHES)), {}, tmp_path / "g.png")


# ---------------------------------------------------------------- schedlab trace


def test_cli_trace_writes_json_and_prints_stats(tmp_path, capsys):
    log = tmp_path / "console.log"
    log.write_text(LOG)
    out = tmp_path / "t.json"
    assert cli.main(["trace", str(log), "-o", str(out), "--stats"]) == 0
    stdout, stderr = capsys.readouterr()
    events = json.loads(out.read_text())["traceEvents"]
    assert {e["name"] for e in events if e["ph"] == "X"} >= {"gauss#1.0", "job2#2.1"}
    assert "24 records on 2 harts" in stdout and "gauss#1 (2 procs), job2#2 (2 procs)" in stdout
    assert "slot switches: 2 (2 quantum, 0 early)" in stdout
    table = [line.split()[:5] for line in stdout.splitlines() if line.startswith(("1 ", "2 "))]
    assert table == [["1", "gauss", "2.997", "0.000", "0.000"], ["2", "job2", "1.997", "0.000", "0.000"]]
    assert f"wrote {out}" in stderr


def test_cli_trace_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    log, out, png = tmp_path / "c.log", tmp_path / "t.json", tmp_path / "t.png"
    log.write_text(LOG.replace("2500 exit 1 0 0", "2400 rep 1 0 1\nT 0 2500 exit 1 0 0")
                   .replace("records=14", "records=15"))
    assert cli.main(["trace", str(log), "-o", str(out), "--png", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_trace_from_stdin_and_without_a_trace(tmp_path, capsys, monkeypatch):
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO(LOG))
    assert cli.main(["trace", "-", "-o", str(tmp_path / "s.json")]) == 0
    assert (tmp_path / "s.json").is_file()
    log = tmp_path / "plain.log"
    log.write_text("BOOT harts=2\nSUMMARY policy=gang harts=2 jobs=0 failed=0 makespan_us=1\n")
    capsys.readouterr()
    assert cli.main(["trace", str(log), "-o", str(tmp_path / "x.json")]) == 2
    assert "no trace in this log: boot with trace=on" in capsys.readouterr().err
    assert cli.main(["trace", str(tmp_path / "missing.log"), "-o", str(tmp_path / "x.json")]) == 2
    assert not (tmp_path / "x.json").exists()


# ---------------------------------------------------------------- schedlab run --trace

@pytest.fixture
def fake_qemu(fake):
    """The fake QEMU (conftest.py) printing a given console; returns (kernel path, set console, bootargs of each
    call)."""
    return fake.kernel_path, fake.canned, fake.bootargs


def test_cli_run_trace_saves_log_and_trace(fake_qemu, tmp_path, capsys, monkeypatch):
    kernel, set_console, bootargs = fake_qemu
    set_console(LOG)
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)          # fast, and shows the missing-PNG path
    prefix = tmp_path / "out" / "gang"
    assert cli.main(["run", "--kernel", kernel, "--cpus", "2", "--trace-out", str(prefix),
                     "policy=gang", "trace=off", "job=gauss"]) == 0
    assert bootargs() == ["policy=gang job=gauss trace=on"]
    out, err = capsys.readouterr()
    assert (tmp_path / "out" / "gang.log").read_text() == LOG
    assert json.loads((tmp_path / "out" / "gang.json").read_text())["traceEvents"]
    assert f"trace: {prefix}.log  {prefix}.json" in out and "slot switches: 2 (2 quantum" in out
    assert "--png needs matplotlib" in err


def test_cli_run_trace_without_a_dump_fails(fake_qemu, tmp_path, capsys):
    kernel, set_console, bootargs = fake_qemu
    set_console(LOG.split("TRACE begin")[0] + LOG.split("TRACE end\n")[1])
    assert cli.main(["run", "--kernel", kernel, "--cpus", "2", "--trace-out", str(tmp_path / "t"),
                     "job=gauss", "trace=on"]) == 1
    assert bootargs() == ["job=gauss trace=on"]
    assert "the boot printed no TRACE dump" in capsys.readouterr().err
    assert (tmp_path / "t.log").is_file()


def test_trace_files_are_numbered_per_boot():
    assert commands.trace_prefix(None, 1, 1) == qemu.REPO_ROOT / "build" / "trace" / "run-1"
    assert commands.trace_prefix(None, 3, 5) == qemu.REPO_ROOT / "build" / "trace" / "run-3"
    assert commands.trace_prefix("x/gang", 1, 1) == Path("x/gang")
    assert commands.trace_prefix("x/gang", 2, 3) == Path("x/gang-2")
    assert commands.with_trace_on(["job=a", "trace=off"]) == ["job=a", "trace=on"]
    assert commands.with_trace_on(["trace=on", "job=a"]) == ["trace=on", "job=a"]
