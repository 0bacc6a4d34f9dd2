"""Malformed and cut consoles (issue 25, item 12): ``tools/schedlab trace``, ``run`` and ``compare`` accept a
console cut anywhere in its TRACE or ULOG dump and answer anything the kernel cannot print with a clear error
or by leaving the line out - never a traceback, never a hang.  No QEMU: consoles are written by hand (the
trace's with test_trace.dump, the library's with test_ulog.ulog_block) or replayed by the fake QEMU.
"""

import json
import signal

import pytest

from schedlab import cli, console, trace
from schedlab.qemu import HarnessError
from helpers import CONSOLE, GAUSS, SUMMARY, run_cli
from trace_data import NESTED, dump, ulog_block

KERNEL = dump({0: ["0 run 1 0 -1", "100 pre 1 0 0"], 1: ["0 run 1 1 -1", "100 exit 1 1 0"]})
TRACED = "OpenSBI v1.1\n" + KERNEL + ulog_block(NESTED) + "SUMMARY policy=gang harts=2 jobs=1 failed=0 makespan_us=9\n"


@pytest.fixture(autouse=True)
def no_hang():
    """Every test here must end in seconds: a parser loop over a huge hart count fails the test, not CI."""
    def stop(signum, frame):
        raise TimeoutError("the parser ran for more than 20 s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _trace_cli(tmp_path, text):
    log = tmp_path / "cut.log"
    log.write_text(text)
    return cli.main(["trace", str(log), "-o", str(tmp_path / "t.json"), "--pftrace", ""])


def test_a_cut_anywhere_in_the_dumps_is_read_as_far_as_it_goes(tmp_path, capsys):
    """Every cut point from the TRACE begin line to the end of the ULOG dump: `trace` writes a JSON."""
    start = TRACED.index("TRACE begin") + len("TRACE begin harts=2 timebase_hz=1000000 policy=gang quantum_us=1000\n")
    end = TRACED.index("SUMMARY")
    ulog_start = TRACED.index("ULOG begin")
    cuts = list(range(start, end + 1))
    assert sum(c > ulog_start for c in cuts) > 100          # most of the cuts are inside the ULOG dump
    for cut in cuts:
        parsed = trace.parse_trace(TRACED[:cut])
        assert len(parsed.records) == (4 if cut > ulog_start else len(parsed.records))
        assert all(r.event in trace.KNOWN_EVENTS for r in parsed.records)
    for cut in (ulog_start + 30, TRACED.index("U 1 1 5") + 6, TRACED.index("ULOG job=1 proc=1") + 20):
        assert _trace_cli(tmp_path, TRACED[:cut]) == 0, cut
        assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    capsys.readouterr()


def test_a_bad_line_before_the_last_is_still_an_error():
    bad = TRACED.replace("U 1 0 12 block 5 0", "U 1 0 12 block")
    with pytest.raises(HarnessError, match="bad library record"):
        trace.parse_trace(bad)
    bad = TRACED.replace("ULOG job=1 proc=1 records=3 dropped=0", "ULOG job=1 proc=1 rec")
    with pytest.raises(HarnessError, match="bad ULOG block"):
        trace.parse_trace(bad)


@pytest.mark.parametrize("text, message", [
    (KERNEL.replace("harts=2", "harts=100000000"), "harts=100000000 is not 1..64"),
    (KERNEL.replace("harts=2", "harts=65"), "is not 1..64"),
    (KERNEL.replace("harts=2", "harts=" + "9" * 400), "is not 1..64"),
    (KERNEL.replace("timebase_hz=1000000", "timebase_hz=" + "1" * 400), "bad TRACE header"),
    (KERNEL.replace("quantum_us=1000", "quantum_us=1e400"), "bad TRACE header"),
    (KERNEL.replace("T 0 100 pre", "T 0 " + "1" * 400 + " pre"), "bad trace record"),
    (KERNEL.replace("T 0 100 pre", "T 0 " + "1" * 5000 + " pre"), "bad trace record"),
    (KERNEL.replace("T 0 100 pre", "T 0 -5 pre"), "bad trace record"),
    (KERNEL.replace("T 0 100 pre", f"T 0 {1 << 63} pre"), "bad trace record"),
    (KERNEL.replace("T 0 100 pre 1 0 0", "T 0 100 pre 70000 0 0"), "bad trace record"),
    (KERNEL.replace("T 0 100 pre 1 0 0", f"T 0 100 pre 1 0 {1 << 40}"), "bad trace record"),
    (KERNEL.replace("records=2", f"records={1 << 63}", 1), "bad TRACE block"),
    (KERNEL + ulog_block({(1, 0): [f"{1 << 64} mark 1 0", "5 mark 1 0"]}), "bad library record"),
    (KERNEL + ulog_block({(1, 0): ["-3 mark 1 0", "5 mark 1 0"]}), "bad library record"),
    (KERNEL + ulog_block({(1, 0): ["3 mark 1 70000", "5 mark 1 0"]}), "bad library record"),
    (KERNEL + ulog_block({(1, 0): ["3 mark " + "7" * 400 + " 0", "5 mark 1 0"]}), "bad library record"),
])
def test_what_the_kernel_cannot_print_is_a_clear_error(text, message, tmp_path, capsys):
    with pytest.raises(HarnessError, match=message):
        trace.parse_trace(text + "SUMMARY policy=gang harts=2 jobs=1 failed=0 makespan_us=9\n")
    assert _trace_cli(tmp_path, text + "SUMMARY x\n") == 2
    assert "schedlab: error:" in capsys.readouterr().err


def test_huge_or_non_numbers_never_become_ints_or_results():
    assert console.parse_value("1" * 5000) == "1" * 5000 and console.parse_value(str(1 << 64)) == 1 << 64
    for bad in ("abc", "9" * 400, "-5", str(1 << 64), "1.5"):
        parsed = console.parse_console(GAUSS.replace(f"elapsed_us={_value(GAUSS, 'elapsed_us')}",
                                                     f"elapsed_us={bad}") + "\n")
        assert parsed.results == [] and len(parsed.malformed) == 1, bad
    parsed = console.parse_console(SUMMARY.replace("makespan_us=", "makespan_us=x") + "\n")
    assert parsed.summary is None and parsed.malformed


def _value(line, key):
    return next(w.partition("=")[2] for w in line.split() if w.startswith(key + "="))


def test_run_and_compare_with_a_garbled_result_report_it(fake, capsys):  # noqa: F811
    garbled = CONSOLE.replace(f"elapsed_us={_value(GAUSS, 'elapsed_us')}", "elapsed_us=abc")
    fake.canned(garbled)
    assert run_cli(fake, "run", "--cpus", "2", "--repeat", "2", "job=gauss") == 1
    out = capsys.readouterr().out
    assert "not in the kernel's format" in out and "elapsed_us=abc" in out
    assert run_cli(fake, "compare", "--cpus", "2", "--repeat", "1", "--policies", "gang", "job=gauss") == 1
    captured = capsys.readouterr()
    assert "elapsed_us=abc" in captured.out + captured.err


def test_a_scribbled_time_at_or_past_2_63_is_bogus_not_an_error(tmp_path, capsys):
    """A job writes its own log: any u64 time the kernel prints is read, and one past the dump (or 2^63) is
    counted bogus, as the kernel's dump of a scribbled log must stay readable."""
    for now in ("now=1000", "now=x"):
        text = KERNEL + ulog_block({(1, 0): [f"{(1 << 64) - 1} mark 1 0", f"{1 << 63} mark 1 0", "5 mark 1 0"]})
        parsed = trace.parse_trace(text.replace("now=1000", now))
        assert [r.ticks for r in parsed.lib.records] == [5] and parsed.lib.bogus == 2
    assert _trace_cli(tmp_path, text) == 0
    capsys.readouterr()
