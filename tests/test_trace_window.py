"""trace --from/--to: a window of a trace keeps what happened in it, a process running at its start from the
window's edge, and the chart, the Chrome JSON and the statistics show only it; a window that is empty,
inverted, outside the trace or not a time is refused with the trace's span. Boots nothing (make check)."""

import json

import pytest

from trace_data import COSCHEDULED, LOG, dump
from schedlab import cli
from schedlab.qemu import HarnessError
from schedlab.trace import intervals, parse_trace, switch_stats
from schedlab.trace_window import clip, parse_time

pytestmark = pytest.mark.check


def test_a_window_starts_the_running_processes_at_its_edge_and_ends_them_at_its_end():
    window = clip(parse_trace(dump(COSCHEDULED)), 500, 1500)
    got = [(i.hart, i.job, i.proc, i.start_us, i.end_us) for i in intervals(window)]
    assert got == [(0, 1, 0, 500, 1001), (1, 1, 1, 500, 1004), (0, 2, 0, 1002, 1500), (1, 2, 1, 1005, 1500)]
    assert all(500 <= r.time_us <= 1500 for r in window.records)
    assert (window.start_us, window.end_us) == (500, 1500)
    assert switch_stats(window).count == 1           # the switch at 1000; the one at 2000 is past the window


def test_one_end_left_out_is_the_trace_own():
    trace = parse_trace(dump(COSCHEDULED))
    assert clip(trace, None, 1500).start_us == trace.start_us
    assert clip(trace, 1500, None).end_us == trace.end_us


@pytest.mark.parametrize("start, end, words", [
    (1500, 500, "is inverted"), (800, 800, "is empty"), (3000, None, "outside the trace"),
    (None, 0, "outside the trace")])
def test_a_window_with_nothing_in_it_is_refused_with_the_trace_span(start, end, words):
    with pytest.raises(HarnessError, match=words) as refused:
        clip(parse_trace(dump(COSCHEDULED)), start, end)
    assert "spans 0..2.501 ms" in str(refused.value)


def test_times_are_the_chart_unit_ms_unless_suffixed():
    assert [parse_time(t, "--from") for t in ("40", "40ms", "500us", "1.5s", ".5")] == [40000, 40000, 500, 1.5e6, 500]
    for bad in ("-1", "1x", "", "ms"):
        with pytest.raises(HarnessError, match="--from"):
            parse_time(bad, "--from")


def test_the_trace_command_exports_only_the_window(tmp_path, capsys):
    log = tmp_path / "run.log"
    log.write_text(LOG)
    out = tmp_path / "w.json"
    command = ["trace", str(log), "-o", str(out), "--pftrace", ""]
    assert cli.main(command + ["--from", "0.5", "--to", "1.5ms"]) == 0
    slices = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    assert slices and all(500 <= e["ts"] and e["ts"] + e["dur"] <= 1500 for e in slices)
    capsys.readouterr()
    assert cli.main(command + ["--from", "2", "--to", "1"]) != 0
    assert "inverted" in capsys.readouterr().err


def test_the_perfetto_trace_of_a_window_switches_only_inside_it():
    pytest.importorskip("perfetto")
    from schedlab.pftrace import read_switches, tid_of, to_perfetto
    switches = read_switches(to_perfetto(clip(parse_trace(dump(COSCHEDULED)), 500, 1500), {}))
    assert {cpu: [(ns, nxt) for ns, _, _, nxt in events] for cpu, events in switches.items()} == {
        0: [(500_000, tid_of(1, 0)), (1_001_000, 0), (1_002_000, tid_of(2, 0)), (1_500_000, 0)],
        1: [(500_000, tid_of(1, 1)), (1_004_000, 0), (1_005_000, tid_of(2, 1)), (1_500_000, 0)]}
