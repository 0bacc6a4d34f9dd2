"""The console contract: kernel lines always start a line and nothing a job writes can pass for one.

Every line a job writes reaches the console as ``[<job id>] <text>`` with unsafe bytes shown as ``\\xHH``
(kernel/console.c). The parser tests need no QEMU; the boot test runs apps/scribble (partial lines,
forged contract lines, every control byte) next to a healthy job and checks that the parser sees exactly
the kernel's lines and each job's text, whole and in order, on its own prefixed lines.
"""

import json
import re

import pytest

from schedlab import commands, console, qemu, writers


# ---------------------------------------------------------------- what scribble writes (apps/scribble.c)

SPOOFS = [
    "RESULT job=1 app=gauss policy=timeslice harts=2 procs=2 arrive_us=0 start_us=0 end_us=1 elapsed_us=1 "
    "cpu_us=1 check=ok\n",
    "SUMMARY policy=timeslice harts=2 jobs=1 failed=0 makespan_us=1\n",
    "ERROR forged by scribble\n",
    "PANIC 0 forged 0x0 0x0\n",
    "BOOT harts=64 nodes=1 mem_mb=1 policies=forged apps=forged boot_hart=0 boot_us=1\n",
    "TRACE begin harts=1 timebase_hz=10000000 policy=forged quantum_us=1\n",
    "T 0 1 dispatch 1 0 0\n",
    "[1] RESULT job=1 app=gauss check=ok\n",
    "progress...\rRESULT job=1 app=gauss check=ok\n",
    "progress...\vSUMMARY policy=forged\n",
    "progress...\fERROR forged behind a form feed\n",
    "a\x1cPANIC 1 forged\x1dERROR forged\x1eRESULT job=1\n",
    "b\u0085ERROR forged behind U+0085\n",
    "c\u2028PANIC 0 forged behind U+2028\n",
    "hidden\x1b[2K\rERROR forged behind an erase-line\n",
    "\n\nRESULT job=1 app=gauss check=ok\n",
    "RESULT job=9 app=forged check=ok",
]


def partial_text(lines: int, p: int) -> bytes:
    rows = ["".join(chr(ord("a") + (p % 6) * 4 + (k + l) % 4) for k in range(40)) for l in range(lines)]
    return "\n".join(rows).encode()


def control_text(lines: int) -> bytes:
    out = bytearray()
    for _ in range(lines):
        for col, b in enumerate(b for b in range(256) if b != ord("\n")):
            out += bytes([b]) + b"."
            if (col + 1) % 16 == 0:
                out += b"\n"
        out += "\n\u0085|\u2028|\u2029|\r\n".encode()
    return bytes(out)


def shown(raw: bytes) -> str:
    """How the kernel shows a job's bytes: '\\n' ends a line, tab and printable ASCII as they are."""
    return "".join(chr(b) if b in (9, 10) or 0x20 <= b < 0x7F else f"\\x{b:02x}" for b in raw)


# ---------------------------------------------------------------- the parser (no QEMU)

JOB_CONSOLE = (
    "OpenSBI v1.1\r\n"
    "BOOT harts=2 nodes=1 mem_mb=256 policies=timeslice apps=gauss,scribble boot_hart=0 boot_us=9\r\n"
    "[2] progress...\r\n"
    "RESULT job=1 app=gauss policy=timeslice harts=2 procs=2 arrive_us=0 start_us=1 end_us=9 elapsed_us=8 "
    "cpu_us=9 check=ok\r\n"
    "[2] RESULT job=1 app=gauss policy=timeslice harts=2 procs=2 arrive_us=0 start_us=0 end_us=1 "
    "elapsed_us=1 cpu_us=1 check=ok\r\n"
    "[2] \\x0dERROR forged\r\n"
    "[2] \r\n"
    "[2]\r\n"
    "[12]   indented text  \r\n"
    "[2] [1] PANIC 0 x 0x0 0x0\r\n"
    "[2] ERROR scribble: out of memory\r\n"
    "RESULT job=2 app=scribble policy=timeslice harts=2 procs=1 arrive_us=0 start_us=1 end_us=9 elapsed_us=8 "
    "cpu_us=9 check=FAIL error=out reason=exit-status-1\r\n"
    "SUMMARY policy=timeslice harts=2 jobs=2 failed=1 makespan_us=9\r\n"
)


def test_job_lines_are_output_never_contract_lines():
    parsed = console.parse_console(JOB_CONSOLE)
    assert [r["job"] for r in parsed.results] == [1, 2]
    assert parsed.results[0]["start_us"] == 1                   # the kernel's, not the forged one
    assert parsed.errors == [] and parsed.panics == [] and parsed.traces == [] and parsed.malformed == []
    assert parsed.summary["jobs"] == 2 and parsed.boot["harts"] == 2
    assert parsed.output[2][0] == "progress..."
    assert parsed.output[2][1].startswith("RESULT job=1 ") and parsed.output[2][2] == "\\x0dERROR forged"
    assert parsed.output[2][3:5] == ["", ""]                    # empty job lines, with or without the space
    assert parsed.output[2][5] == "[1] PANIC 0 x 0x0 0x0"        # a forged prefix stays the writer's text
    assert parsed.output[12] == ["  indented text  "]
    assert 1 not in parsed.output
    assert parsed.job_lines() == parsed.output[2] + parsed.output[12]
    assert parsed.job_errors() == ["[2] ERROR scribble: out of memory"] == parsed.job_errors(2)


def test_cut_job_line_at_the_end_is_dropped_when_incomplete():
    parsed = console.parse_console("[3] done\r\n[3] half a li", complete=False)
    assert parsed.output == {3: ["done"]}


def test_failure_report_shows_the_jobs_own_error():
    run = qemu.Run(2, "job=gauss job=scribble", [], JOB_CONSOLE, 1, parsed=console.parse_console(JOB_CONSOLE))
    report = commands.failure_report(run).splitlines()
    at = report.index("job 2 (scribble) check=FAIL reason=exit-status-1")
    assert report[at + 1] == "  [2] ERROR scribble: out of memory"
    assert not any("forged" in line for line in report)


def test_failure_report_shows_errors_of_jobs_without_result():
    text = "[1] ERROR gauss: stuck\r\nERROR timeout: the run passed timeout=10ms; jobs not finished: 1(gauss)\r\n"
    run = qemu.Run(2, "job=gauss", [], text, 4, parsed=console.parse_console(text))
    report = commands.failure_report(run)
    assert "ERROR timeout" in report and "[1] ERROR gauss: stuck" in report


def test_json_keeps_each_jobs_output(tmp_path):
    run = qemu.Run(2, "", [], JOB_CONSOLE, 1, parsed=console.parse_console(JOB_CONSOLE))
    writers.write_json(tmp_path / "out.json", "run", [(writers.run_meta(0, run), run)])
    document = json.loads((tmp_path / "out.json").read_text())
    assert document["runs"][0]["output"]["2"][0] == "progress..."
    assert document["runs"][0]["errors"] == []


def test_bench_reads_bench_lines_of_job_output(monkeypatch, capsys):
    from schedlab import bench
    text = ("BENCH forged_by_kernel_side 1 ns\r\n[1] BENCH call_ns 3.25 ns\r\n[1] BENCH steal_ns 120.0 ns\r\n"
            "[1] progress BENCH no 1 ns\r\nRESULT job=1\r\n")
    run = qemu.Run(2, "", [], text, 0, parsed=console.parse_console(text))
    monkeypatch.setattr(bench.qemu, "boot", lambda *a, **k: run)
    bench.on_qemu("job=tbench")
    assert capsys.readouterr().out.splitlines() == ["BENCH call_ns 3.25 ns", "BENCH steal_ns 120.0 ns"]


# ---------------------------------------------------------------- a boot

KERNEL_LINE = re.compile(r"(CALIB|RESULT|SUMMARY) ")      # CALIB: the calibration card, before t0
JOB_LINE = re.compile(r"\[(\d+)\]( |\Z)")


def test_jobs_cannot_forge_or_break_contract_lines(boot):
    run = boot(2, "quantum=1ms job=scribble:mode=partial,lines=6,procs=3,chunk=12,gap_us=300 "
                  "job=scribble:mode=spoof,procs=1,chunk=9 job=gauss:n=48,barrier=block "
                  "job=scribble:mode=control-chars,lines=2,procs=1,chunk=20", timeout=180)
    assert run.exit_code == 0 and not run.timed_out, run.console[-2000:]
    assert not run.errors and not run.panics            # the forged ERROR and PANIC lines are job output
    assert not run.parsed.malformed and all(r["check"] == "ok" for r in run.results), run.results
    assert sorted((r["job"], r["app"]) for r in run.results) == [
        (1, "scribble"), (2, "scribble"), (3, "gauss"), (4, "scribble")]
    assert run.summary["jobs"] == 4 and run.boot["harts"] == 2 and not run.traces

    # after BOOT, every line is a kernel CALIB/RESULT/SUMMARY or starts with a job's prefix
    lines = run.console.splitlines()
    after = lines[next(i for i, line in enumerate(lines) if line.startswith("BOOT ")) + 1:]
    kinds = [KERNEL_LINE.match(line) or JOB_LINE.match(line) for line in after if line]
    assert all(kinds), [line for line, kind in zip(after, kinds) if not kind]
    assert sum(1 for line in after if line.startswith("RESULT ")) == 4
    assert sum(1 for line in after if line.startswith("SUMMARY ")) == 1
    assert {int(m.group(1)) for m in kinds if m.re is JOB_LINE} == {1, 2, 4}
    assert all(re.fullmatch(r"[\t\x20-\x7e]*", line) for line in after)     # nothing left to hide text

    # partial: each line holds one process's letters only, and each process's text arrives whole
    for p in range(3):
        letters = set(partial_text(1, p).decode())
        mine = [line for line in run.output[1] if set(line) & letters]
        assert all(set(line) <= letters for line in mine), mine
        assert "".join(mine) == shown(partial_text(6, p)).replace("\n", "")
    assert len(run.output[1]) >= 3 * 6

    # spoof and control-chars: one process each, so the whole text comes out in order
    spoof = "".join(SPOOFS).encode()
    assert "".join(run.output[2]) == shown(spoof).replace("\n", "")
    assert "".join(run.output[4]) == shown(control_text(2)).replace("\n", "")
