"""Unit tests of the Python harness (tools/py/schedlab), without a real QEMU.

Booting is tested against a fake QEMU, tests/fake_qemu.py, selected with SCHEDLAB_QEMU by the ``fake``
fixture (tests/conftest.py): it records its argv and plays a console recorded from a real boot (``canned``,
``hang``: the modes are in its docstring) or a tiny kernel (``sim``) whose slowdowns are exact.

The consoles are the real kernel's: ``canned`` plays (or cuts) consoles recorded
from real boots in tests/data/consoles/ (``tools/schedlab record-consoles`` regenerates
them), and ``sim`` writes its BOOT, RESULT and SUMMARY lines by changing values in
the recorded lines of FAKE_QEMU_TEMPLATE, so when the kernel's format moves these
tests see the new format.
"""

import csv
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from schedlab import cli, commands, comparison, console, mix, qemu, scenario, stats, writers
from schedlab.comparison import ALONE, MIX, Trial
from helpers import CONSOLE, GAUSS, RECORDED, REPO, SUMMARY, line_of, recorded, run_cli, value_of

LAUNCHER = REPO / "tools" / "schedlab"


# ---------------------------------------------------------------- fixtures

def fake_run(results, exit_code=0, summary=None, timed_out=False):
    """A Run carrying given RESULT dicts, as the aggregation code sees it."""
    return qemu.Run(cpus=2, bootargs="", argv=[], console="", exit_code=exit_code, timed_out=timed_out,
                    parsed=console.Console(results=list(results), summary=summary))


def result(job, app, elapsed, check="ok"):
    return {"job": job, "app": app, "elapsed_us": elapsed, "check": check}


# ---------------------------------------------------------------- console parsing

@pytest.mark.parametrize("text, value", [
    ("42", 42), ("-3", -3), ("007", 7), ("1e-12", 1e-12), ("3.5", 3.5), ("-.5", -0.5), ("2E+3", 2000.0),
    ("0x80200000", "0x80200000"), ("ok", "ok"), ("1.2.3", "1.2.3"), ("", ""), ("12us", "12us"),
])
def test_parse_value_types(text, value):
    parsed = console.parse_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_parse_console_typed_results_and_ignored_lines():
    parsed = console.parse_console(CONSOLE)        # a real console: OpenSBI's banner lines are ignored
    boot = line_of(CONSOLE, "BOOT ")
    assert parsed.boot["harts"] == 2 and parsed.boot["mem_mb"] == int(value_of(boot, "mem_mb"))
    assert parsed.boot["policies"] == value_of(boot, "policies").split(",") and "gang" in parsed.boot["policies"]
    assert parsed.boot["apps"] == value_of(boot, "apps").split(",") and "gauss" in parsed.boot["apps"]
    assert parsed.boot["background"] == ["hog"] and isinstance(parsed.boot["boot_us"], int)
    assert len(parsed.results) == 2
    gauss = parsed.results[0]
    assert gauss["job"] == 1 and gauss["elapsed_us"] == int(value_of(GAUSS, "elapsed_us")) and gauss["check"] == "ok"
    assert gauss["maxerr"] == float(value_of(GAUSS, "maxerr")) and gauss["barrier"] == "spin" and gauss["n"] == 32
    assert all(isinstance(v, int) for k, v in gauss.items() if k.endswith("_us"))
    assert parsed.summary == {"policy": "gang", "harts": 2, "jobs": 2, "failed": 0,
                              "makespan_us": int(value_of(SUMMARY, "makespan_us"))}
    dump = [line.strip() for line in CONSOLE.split("\n") if line.startswith(("TRACE ", "T ", "ULOG ", "U "))]
    assert parsed.traces == dump and dump[0].startswith("TRACE begin") and "TRACE end" in dump
    assert parsed.errors == [] and parsed.panics == [] and parsed.malformed == []


def test_error_and_panic_lines_kept_verbatim():
    text = ("ERROR unknown token 'polcy=gang': expected policy=timeslice|gang|partition\n"
            "PANIC 1 13 0x80201234 0x0 load page fault\n")
    parsed = console.parse_console(text)
    assert parsed.errors == ["ERROR unknown token 'polcy=gang': expected policy=timeslice|gang|partition"]
    assert parsed.panics == ["PANIC 1 13 0x80201234 0x0 load page fault"]
    assert parsed.results == [] and parsed.summary is None and parsed.boot is None


def test_partial_console_drops_cut_line_and_keeps_malformed_apart():
    cut = CONSOLE.split("RESULT job=2")[0] + "RESULT job=2 app=hog policy=ga"
    parsed = console.parse_console(cut, complete=False)
    assert [r["job"] for r in parsed.results] == [1]
    assert parsed.summary is None and parsed.malformed == []
    # The same text taken as complete: the cut RESULT lacks required keys.
    parsed = console.parse_console(cut, complete=True)
    assert len(parsed.results) == 1 and parsed.malformed == ["RESULT job=2 app=hog policy=ga"]


def test_result_fields_without_equals_and_repeated_keys():
    fields = console.parse_fields("a=1 flag b=x a=2")
    assert fields == {"a": 2, "flag": True, "b": "x"}


# ---------------------------------------------------------------- scenarios

def test_scenario_text_header_comments_and_tokens():
    text = textwrap.dedent("""\
        # cpus: 3
        # repeat: 4
        # Note: free text is not a directive
        policy=gang   quantum=5ms   # inline comment
        job=gauss:n=64,procs=2

        # a comment after the first token is free text
        job=hog
        """)
    parsed = scenario.parse_scenario_text(text)
    assert parsed.cpus == 3 and parsed.repeat == 4
    assert parsed.tokens == ["policy=gang", "quantum=5ms", "job=gauss:n=64,procs=2", "job=hog"]
    assert parsed.bootargs == "policy=gang quantum=5ms job=gauss:n=64,procs=2 job=hog"


@pytest.mark.parametrize("late", ["# cpus: 1", "#repeat:5", "# CPUS: 9"])
def test_scenario_directive_after_the_first_token_is_an_error(late, tmp_path):
    """Never silently ignored: the error names the file and line."""
    path = tmp_path / "late.scn"
    path.write_text(f"# cpus: 2\npolicy=gang\n{late}\njob=gauss\n")
    with pytest.raises(qemu.HarnessError, match=r"late.scn:3: directive '(cpus|repeat)' after the first token"):
        scenario.load_scenario(str(path))


def test_scenario_bad_directive_value():
    with pytest.raises(qemu.HarnessError, match="cpus"):
        scenario.parse_scenario_text("# cpus: two\njob=gauss\n")


def test_resolve_scenario_by_name_suffix_and_path(tmp_path):
    by_name = scenario.resolve_scenario("default-mix")
    assert by_name == scenario.resolve_scenario("default-mix.scn")
    own = tmp_path / "mine.scn"
    own.write_text("job=synth\n")
    assert scenario.load_scenario(str(own)).tokens == ["job=synth"]
    with pytest.raises(qemu.HarnessError, match="markatos-3.5.1"):
        scenario.resolve_scenario("no-such-scenario")


def test_scenario_from_args():
    assert scenario.scenario_from_args(["policy=gang", "job=gauss"]).tokens == ["policy=gang", "job=gauss"]
    loaded = scenario.scenario_from_args(["markatos-3.5.1", "seed=7"])
    assert loaded.cpus == 2 and loaded.tokens[-1] == "seed=7" and "job=hog" in loaded.tokens
    assert scenario.scenario_from_args([], default_tokens=["job=gauss"]).tokens == ["job=gauss"]
    with pytest.raises(qemu.HarnessError, match="more than one"):
        scenario.scenario_from_args(["default-mix", "feitelson-load"])


SETTINGS = {"policy": {"timeslice", "gang", "partition", "global"}, "quantum": None, "seed": None,
            "trace": {"on", "off"}, "timeout": None, "wakeboost": {"on", "off"}, "alternates": {"on", "off"},
            "gangfit": {"first", "best"}}
APP_KEYS = {"gauss": {"n", "variant", "sync", "barrier", "shape", "sched", "place"},
            "oddeven": {"n", "barrier", "shape", "sched"}, "synth": {"grain", "var", "iters", "barrier", "shape"},
            "hog": {"block"}, "fault": {"kind"}, "knary": {"h", "d", "s", "work", "mode"},
            "sleeper": {"iters", "sleep_us", "work"}}


@pytest.mark.parametrize("path", sorted((REPO / "tools" / "scenarios").glob("*.scn")), ids=lambda p: p.name)
def test_shipped_scenarios_use_only_contract_tokens(path):
    parsed = scenario.load_scenario(str(path))
    settings, jobs = mix.split_tokens(parsed.tokens)
    assert jobs, "a scenario needs jobs"
    for token in settings:
        key, _, value = token.partition("=")
        assert key in SETTINGS, token
        assert SETTINGS[key] is None or value in SETTINGS[key], token
    for job in jobs:
        assert job.app in APP_KEYS, job.token
        keys = job.token.partition(":")[2]
        for kv in filter(None, keys.split(",")):
            assert kv.partition("=")[0] in APP_KEYS[job.app] | {"procs", "at", "adapt"}, job.token


def test_default_mix_file_matches_builtin_default():
    assert scenario.load_scenario("default-mix").tokens == commands.DEFAULT_MIX


# ---------------------------------------------------------------- mixes

def test_background_apps_from_boot_line():
    boot = console.parse_console("BOOT harts=2 apps=gauss,hog,spin background=hog,spin\n").boot
    assert mix.background_apps(boot) == {"hog", "spin"}
    _, jobs = mix.split_tokens(["job=gauss", "job=spin"], mix.background_apps(boot))
    assert [j.background for j in jobs] == [False, True]
    assert mix.background_apps(console.parse_console("BOOT harts=2 background=\n").boot) == frozenset()
    assert mix.background_apps(None) == mix.DEFAULT_BACKGROUND_APPS      # before any boot


def test_split_tokens_and_background():
    settings, jobs = mix.split_tokens(["policy=gang", "job=gauss:n=64", "seed=2", "job=hog:procs=1", "job=oddeven"])
    assert settings == ["policy=gang", "seed=2"]
    assert [(j.index, j.app, j.background) for j in jobs] == [(0, "gauss", False), (1, "hog", True),
                                                              (2, "oddeven", False)]


def test_override_replaces_and_removes():
    assert mix.override(["policy=gang", "seed=1", "quantum=1ms"], policy="partition", quantum="5ms") == \
        ["seed=1", "policy=partition", "quantum=5ms"]
    assert mix.override(["policy=gang", "seed=1"], policy=None) == ["seed=1"]


@pytest.mark.parametrize("first_id", [0, 1])
def test_match_results_by_id_order(first_id):
    _, jobs = mix.split_tokens(["job=gauss", "job=gauss", "job=hog"])
    results = [result(first_id + 2, "hog", 9), result(first_id, "gauss", 5), result(first_id + 1, "gauss", 6)]
    matched = mix.match_results(results, jobs)
    assert {i: r["elapsed_us"] for i, r in matched.items()} == {0: 5, 1: 6, 2: 9}


def test_match_results_with_a_missing_job_falls_back_to_apps():
    _, jobs = mix.split_tokens(["job=gauss", "job=oddeven", "job=hog"])
    matched = mix.match_results([result(1, "oddeven", 7), result(2, "hog", 8)], jobs)
    assert {i: r["app"] for i, r in matched.items()} == {1: "oddeven", 2: "hog"}


# ---------------------------------------------------------------- stats

def test_spread_median_and_range():
    odd = stats.Spread.of([3, 1, 2])
    assert (odd.median, odd.low, odd.high, odd.count) == (2, 1, 3, 3)
    even = stats.Spread.of([4, 1, 2, None, 3])
    assert (even.median, even.low, even.high, even.count) == (2.5, 1, 4, 4)
    assert stats.Spread.of([]) is None and stats.Spread.of([None]) is None


def test_slowdowns_are_per_repeat_ratios():
    assert stats.slowdowns([20, 30, None, 8], [10, 10, 10, 0]) == [2.0, 3.0]
    assert stats.ratio(None, 3) is None and stats.ratio(3, 0) is None
    assert stats.mean([1.0, None, 2.0]) == 1.5 and stats.mean([]) is None


# ---------------------------------------------------------------- comparison

def test_plan_runs_each_foreground_job_alone_and_the_mix():
    settings, jobs = mix.split_tokens(["policy=gang", "seed=3", "job=gauss:procs=2", "job=hog", "job=oddeven"])
    trials = comparison.plan(settings, jobs, ["timeslice", "gang"], repeats=2, quantum="5ms")
    assert len(trials) == 2 * 2 * 3         # repeats x policies x (2 alone + 1 mix)
    assert [(t.repeat, t.policy, t.kind) for t in trials[:6]] == [
        (0, "timeslice", ALONE), (0, "timeslice", ALONE), (0, "timeslice", MIX),
        (0, "gang", ALONE), (0, "gang", ALONE), (0, "gang", MIX)]
    assert all("job=hog" not in t.tokens for t in trials if t.kind == ALONE)
    first = trials[0]
    assert first.tokens == ("seed=3", "policy=timeslice", "quantum=5ms", "job=gauss:procs=2")
    assert trials[2].tokens[-3:] == ("job=gauss:procs=2", "job=hog", "job=oddeven")


def test_aggregate_median_of_ratios_makespan_and_ranking():
    settings, jobs = mix.split_tokens(["job=gauss", "job=hog"])
    done = []
    # repeat 0: alone 10, mix 40 (ratio 4); repeat 1: alone 20, mix 40 (2); repeat 2: alone 10, mix 30 (3)
    for r, (alone, mixed) in enumerate([(10, 40), (20, 40), (10, 30)]):
        done.append((Trial("timeslice", ALONE, r, (), jobs[0]), fake_run([result(0, "gauss", alone)])))
        done.append((Trial("timeslice", MIX, r, ()), fake_run(
            [result(0, "gauss", mixed), result(1, "hog", mixed + 1)], summary={"makespan_us": mixed + 2})))
        done.append((Trial("gang", ALONE, r, (), jobs[0]), fake_run([result(0, "gauss", 10)])))
        done.append((Trial("gang", MIX, r, ()), fake_run([result(0, "gauss", 15)], summary={"makespan_us": 16})))
    outcomes = comparison.aggregate(done, jobs, ["timeslice", "gang"], repeats=3)
    ts, gang = outcomes
    gauss, hog = ts.jobs
    assert gauss.slowdown == stats.Spread(3.0, 2.0, 4.0, 3)   # median of ratios, not 40/10
    assert gauss.alone.median == 10 and gauss.mix.median == 40
    assert hog.slowdown is None and hog.alone is None and hog.mix.median == 41
    assert ts.makespan == stats.Spread(42, 32, 42, 3)
    assert gang.jobs[0].slowdown.median == 1.5 and gang.mean_slowdown == 1.5
    assert [o.policy for o in comparison.ranking(outcomes)] == ["gang", "timeslice"]
    as_dict = comparison.outcomes_to_dict(outcomes)
    assert as_dict["ranking"] == ["gang", "timeslice"]
    assert as_dict["policies"][0]["jobs"][0]["slowdown"] == {"median": 3.0, "min": 2.0, "max": 4.0, "n": 3,
                                                            "ci_low": 2.0, "ci_high": 4.0}
    json.dumps(as_dict)


def test_aggregate_ignores_failed_runs():
    _, jobs = mix.split_tokens(["job=gauss"])
    done = [(Trial("gang", ALONE, 0, (), jobs[0]), fake_run([result(0, "gauss", 10)])),
            (Trial("gang", MIX, 0, ()), fake_run([result(0, "gauss", 99, check="FAIL")], exit_code=1)),
            (Trial("gang", ALONE, 1, (), jobs[0]), fake_run([result(0, "gauss", 10)], timed_out=True)),
            (Trial("gang", MIX, 1, ()), fake_run([result(0, "gauss", 20)]))]
    (outcome,) = comparison.aggregate(done, jobs, ["gang"], repeats=2)
    assert outcome.jobs[0].slowdown is None        # no repeat has both a good alone and a good mix
    assert outcome.jobs[0].alone.count == 1 and outcome.jobs[0].mix.count == 1
    assert comparison.ranking([outcome]) == []


# ---------------------------------------------------------------- writers

def test_csv_and_json_one_record_per_job_per_run(tmp_path):
    runs = [qemu.Run(2, "job=gauss job=hog", [], CONSOLE, 0, parsed=console.parse_console(CONSOLE)),
            qemu.Run(2, "job=gauss job=hog", [], "ERROR x\n", 1, parsed=console.parse_console("ERROR x\n"))]
    entries = [(writers.run_meta(i, run, repeat=i), run) for i, run in enumerate(runs)]
    writers.write_csv(tmp_path / "out.csv", entries)
    writers.write_json(tmp_path / "out.json", "run", entries, {"k": 1})
    with open(tmp_path / "out.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2
    assert list(rows[0])[:4] == ["run", "cpus", "bootargs", "repeat"]
    assert rows[0]["app"] == "gauss" and float(rows[0]["maxerr"]) == float(value_of(GAUSS, "maxerr"))
    assert rows[1]["maxerr"] == ""
    document = json.loads((tmp_path / "out.json").read_text())
    assert document["command"] == "run" and document["comparison"] == {"k": 1}
    assert [r["verdict"] for r in document["runs"]] == ["ok", "FAIL (exit 1)"]
    assert document["runs"][1]["errors"] == ["ERROR x"]
    assert len(document["records"]) == 2 and document["records"][0]["elapsed_us"] == int(value_of(GAUSS, "elapsed_us"))


# ---------------------------------------------------------------- booting

def test_qemu_argv_is_the_make_qemu_command(monkeypatch):
    monkeypatch.delenv("SCHEDLAB_QEMU", raising=False)
    monkeypatch.setattr(qemu, "MACHINE", "virt,aclint=on")
    argv = qemu.qemu_argv(3, "policy=gang job=gauss", "k.elf", "-numa node,nodeid=0 -s")
    assert argv == ["qemu-system-riscv64", "-machine", "virt,aclint=on", "-nographic", "-bios", "default", "-no-reboot",
                    "-m", "256M", "-smp", "3", "-kernel", "k.elf", "-numa", "node,nodeid=0", "-s",
                    "-append", "policy=gang job=gauss"]
    assert qemu.qemu_argv(1, "", None)[qemu.qemu_argv(1, "", None).index("-kernel") + 1] == \
        str(REPO / "build" / "kernel.elf")
    monkeypatch.setenv("SCHEDLAB_QEMU", "/opt/q/qemu --trace x")
    assert qemu.qemu_argv(1, "")[:3] == ["/opt/q/qemu", "--trace", "x"]
    virtual = qemu.qemu_argv(2, "job=gauss clock=virtual", "k.elf")   # deterministic: the project's firmware
    assert virtual[virtual.index("-bios") + 1] == str(qemu.FIRMWARE) and "-icount" in virtual


def test_boot_with_fake_qemu_parses_console(fake):
    fake.replay("gang-trace")
    run = qemu.boot(2, ["policy=gang", "job=gauss"], kernel=fake.kernel_path, timeout=30)
    assert run.ok and run.exit_code == 0 and not run.timed_out and run.verdict == "ok"
    assert run.console.startswith("\r\nOpenSBI") and len(run.results) == 2
    assert [(r["job"], r["app"], r["check"]) for r in run.results] == [(1, "gauss", "ok"), (2, "hog", "ok")]
    assert run.boot["harts"] == 2 and "gang" in run.boot["policies"] and run.boot["background"] == ["hog"]
    assert run.summary["makespan_us"] == int(value_of(SUMMARY, "makespan_us"))
    assert run.parsed.traces[0].startswith("TRACE begin") and any(t.startswith("T ") for t in run.parsed.traces)
    assert not run.parsed.malformed and not run.errors
    assert run.bootargs == "policy=gang job=gauss"
    assert fake.calls()[0][-2:] == ["-append", "policy=gang job=gauss"]


def test_boot_job_output_and_job_error(fake):
    fake.replay("job-error")
    run = qemu.boot(1, "job=gauss", kernel=fake.kernel_path)
    assert not run.ok and run.exit_code == RECORDED["job-error"]["exit"] != 0
    assert run.output[1][0].startswith("ERROR gauss: sched=ss")          # "[1] " prefix removed
    assert run.parsed.job_errors(1) == [line_of(recorded("job-error"), "[1] ERROR")]
    assert run.errors == [line_of(recorded("job-error"), "ERROR job 1 ")]  # the kernel's own line only
    assert run.results[0]["check"] == "FAIL" and run.summary["failed"] == 1


def test_boot_nonzero_exit_is_failure(fake):
    fake.replay("bad-token")
    run = qemu.boot(2, "x=1", kernel=fake.kernel_path)
    status = RECORDED["bad-token"]["exit"]
    assert not run.ok and run.exit_code == status != 0 and run.verdict == f"FAIL (exit {status})"
    assert run.errors == [line_of(recorded("bad-token"), "ERROR ")]
    assert run.errors[0].startswith("ERROR bad token 'x=1'")


def test_boot_missing_kernel_or_qemu(fake, tmp_path, monkeypatch):
    with pytest.raises(qemu.HarnessError, match="make"):
        qemu.boot(2, "", kernel=tmp_path / "nope.elf")
    monkeypatch.setenv("SCHEDLAB_QEMU", str(tmp_path / "no-qemu"))
    with pytest.raises(qemu.HarnessError, match="qemu-system-misc"):
        qemu.boot(2, "", kernel=fake.kernel_path)


def _process_gone(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def test_timeout_kills_process_group_and_keeps_partial_output(fake):
    fake.canned(CONSOLE.split("RESULT job=2")[0] + "RESULT job=2 app=hog\n", mode="hang")
    started = time.monotonic()
    run = qemu.boot(2, "job=gauss", kernel=fake.kernel_path, timeout=1.5)
    assert time.monotonic() - started < 15
    assert run.timed_out and run.exit_code is None and not run.ok and run.verdict == "TIMEOUT"
    assert [r["app"] for r in run.results] == ["gauss"]      # cut last line dropped
    assert run.summary is None
    child = int((fake.path / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while not _process_gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _process_gone(child), "the grandchild survived: the process group was not killed"


def test_oversubscription_warning(monkeypatch):
    monkeypatch.setattr(qemu.os, "cpu_count", lambda: 2)
    assert qemu.oversubscription_warning(2) is None
    warning = qemu.oversubscription_warning(4)
    assert warning.startswith("warning:") and "4 harts" in warning and "2 cores" in warning
    assert "\n" not in warning


# ---------------------------------------------------------------- schedlab run

def test_cli_run_prints_table_and_summary(fake, capsys):
    fake.replay("gang-trace")
    assert run_cli(fake, "run", "--cpus", "2", "policy=gang", "job=gauss", "job=hog") == 0
    out, err = capsys.readouterr()
    elapsed_ms, makespan_ms = int(value_of(GAUSS, "elapsed_us")) / 1000, int(value_of(SUMMARY, "makespan_us")) / 1000
    assert "elapsed ms" in out and f"{elapsed_ms:.3f}" in out and f"maxerr={value_of(GAUSS, 'maxerr')}" in out
    assert f"summary: policy=gang harts=2 jobs=2 failed=0 makespan={makespan_ms:.3f} ms" in out
    assert err == ""
    assert fake.calls()[0][fake.calls()[0].index("-smp") + 1] == "2"


def test_cli_run_failure_shows_error_lines_verbatim(fake, capsys):
    fake.replay("unknown-app")
    assert run_cli(fake, "run", "--cpus", "1", "job=gaus") == 1
    out, _ = capsys.readouterr()
    assert line_of(recorded("unknown-app"), "ERROR ") in out and f"FAIL (exit {RECORDED['unknown-app']['exit']})" in out
    assert "unknown app 'gaus'" in out


def test_cli_run_failure_without_error_shows_console_tail(fake, capsys):
    # a host failure, not a refused command line (that one is the user's: tests/test_hostile.py)
    fake.canned("qemu-system-riscv64: cannot set up guest memory 'riscv_virt_board.ram'\n", exit_code=1)
    assert run_cli(fake, "run", "--cpus", "1", "job=gauss") == 1
    assert "| qemu-system-riscv64: cannot set up guest memory" in capsys.readouterr().out


def test_cli_run_timeout_reported(fake, capsys):
    fake.canned(CONSOLE.split("SUMMARY")[0], mode="hang")
    assert run_cli(fake, "run", "--cpus", "1", "--timeout", "1", "job=gauss") == 1
    out, _ = capsys.readouterr()
    assert "TIMEOUT" in out and "no SUMMARY line" in out


def test_cli_run_scenario_header_cpus_repeat_and_exports(fake, capsys, tmp_path):
    fake.replay("gang-trace")
    scn = tmp_path / "two.scn"
    scn.write_text("# cpus: 1\npolicy=gang\njob=gauss job=hog\n")
    status = run_cli(fake, "run", "--repeat", "2", "--json", str(tmp_path / "r.json"),
                      "--csv", str(tmp_path / "r.csv"), str(scn), "seed=5")
    assert status == 0
    calls = fake.calls()
    assert len(calls) == 2 and calls[0][calls[0].index("-smp") + 1] == "1"
    assert calls[0][-1] == "policy=gang job=gauss job=hog seed=5"
    out, _ = capsys.readouterr()
    assert "== 2 runs" in out
    records = json.loads((tmp_path / "r.json").read_text())["records"]
    assert [(r["run"], r["job"]) for r in records] == [(0, 1), (0, 2), (1, 1), (1, 2)]   # the kernel numbers jobs from 1
    assert all(r["cpus"] == 1 and r["bootargs"] == calls[0][-1] for r in records)
    with open(tmp_path / "r.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 4


def test_cli_refuses_unpaced_cpus_above_host_cores(fake, capsys):
    """More harts than host cores are timed only paced: the command boots nothing and says how to run them."""
    fake.replay("gang-trace")
    assert run_cli(fake, "run", "--cpus", "3", "--repeat", "2", "job=gauss") == 2
    err = capsys.readouterr().err
    assert "--cpus 3 on a host with 2 cores" in err and "pace=auto" in err and "--deterministic" in err
    assert fake.calls() == []
    assert run_cli(fake, "run", "--cpus", "3", "--deterministic", "job=gauss") == 0


def test_cli_missing_scenario_is_usage_error(fake, capsys):
    assert run_cli(fake, "run", "no-such-scenario") == 2
    assert "not found" in capsys.readouterr().err


# ---------------------------------------------------------------- schedlab compare

def test_cli_compare_default_mix_discovers_policies(fake, capsys, tmp_path):
    fake.sim()
    status = run_cli(fake, "compare", "--repeat", "2", "--json", str(tmp_path / "c.json"),
                      "--csv", str(tmp_path / "c.csv"))
    out, err = capsys.readouterr()
    assert status == 0, out + err
    # discovery boot (reused as timeslice's first mix) + 3 policies x 2 repeats x (2 alone + mix) - 1
    bootargs = fake.bootargs()
    assert len(bootargs) == 18
    assert bootargs[0] == "job=gauss job=oddeven"
    assert "policy=gang job=gauss" in bootargs and "policy=partition job=gauss job=oddeven" in bootargs
    assert "ranking by mean slowdown (lower is better): partition 1.20 < gang 1.50 < timeslice 2.00" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("timeslice ", "gang ", "partition "))]
    # response times from arrival: the fake kernel first dispatches every job 10 us after it arrives (mix wait)
    assert ["gang", "1", "gauss", "10.010", "15.010", "0.010", "1.50", "1.50..1.50"] in rows   # + the slowdown's CI
    assert ["timeslice", "2", "oddeven", "20.010", "40.010", "0.010", "2.00", "2.00..2.00"] in rows
    # repeat 2 runs with seed 2 (the kernel's default seed + 1), its alone and mix boots alike
    assert "seed=2 policy=gang job=gauss" in bootargs and "seed=2 policy=gang job=gauss job=oddeven" in bootargs
    document = json.loads((tmp_path / "c.json").read_text())
    assert document["comparison"]["ranking"] == ["partition", "gang", "timeslice"]
    assert len(document["runs"]) == 18
    assert {r["kind"] for r in document["records"]} == {"alone", "mix"}
    assert len(document["records"]) == 3 * 2 * 4   # per policy and repeat: 2 alone + 2 in the mix


def test_cli_compare_background_job_never_alone(fake, capsys):
    fake.sim()
    status = run_cli(fake, "compare", "--repeat", "1", "--policies", "timeslice,gang", "markatos-3.5.1")
    out, _ = capsys.readouterr()
    assert status == 0
    bootargs = fake.bootargs()
    assert len(bootargs) == 4                        # no discovery; per policy: gauss alone + mix
    assert not any("job=hog" in b and "job=gauss" not in b for b in bootargs)
    assert all(b.count("policy=") == 1 for b in bootargs)   # the file's policy=timeslice was replaced
    assert "background" in out
    assert "gang 1.50 < timeslice 2.00" in out


def test_cli_compare_single_policy_kernel_says_so(fake, capsys):
    fake.sim(policies="gang")
    assert run_cli(fake, "compare", "--repeat", "1", "--quantum", "5ms", "job=synth", "job=gauss") == 0
    out, err = capsys.readouterr()
    assert "comparing just 'gang'" in err
    assert all("quantum=5ms" in b for b in fake.bootargs())


def test_cli_compare_unknown_policy_stops_at_the_first_boot_line(fake, capsys):
    """A kernel whose policies cannot be read from its ELF (the fake's is 4 bytes): the first boot's BOOT
    line names them, and compare stops there instead of booting every valid policy first."""
    fake.sim()
    assert run_cli(fake, "compare", "--policies", "gang,bogus", "--repeat", "1", "job=gauss", "job=oddeven") == 2
    err = capsys.readouterr().err
    assert "--policies: unknown policy 'bogus': this kernel has timeslice, gang, partition" in err
    assert len(fake.bootargs()) == 1 and "stopped after 1 boot" in err


def tiny_kernel(path, names):
    """A little-endian ELF64 with what kernel_elf reads: a .sched_classes section of pointers to structs whose
    first word points to the policy's name (as SCHED_CLASS and struct sched_class lay them out)."""
    import struct
    base = 0x80200000
    rodata = bytearray()
    name_at = []
    for name in names:
        name_at.append(base + len(rodata))
        rodata += name.encode() + b"\0"
    while len(rodata) % 8:
        rodata += b"\0"
    structs = [base + len(rodata) + 32 * i for i in range(len(names))]
    for at in name_at:
        rodata += struct.pack("<Q", at) + bytes(24)           # name, then the rest of the struct
    classes = b"".join(struct.pack("<Q", a) for a in structs)
    shstrtab = b"\0.rodata\0.sched_classes\0.shstrtab\0"
    off_ro = 64
    off_cls = off_ro + len(rodata)
    off_str = off_cls + len(classes)
    shoff = off_str + len(shstrtab)
    shoff += -shoff % 8
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 2, 243, 1, base, 0, shoff,
                                                                      0, 64, 0, 0, 64, 4, 3)
    sections = [bytes(64),
                struct.pack("<IIQQQQIIQQ", 1, 1, 2, base, off_ro, len(rodata), 0, 0, 8, 0),
                struct.pack("<IIQQQQIIQQ", 9, 1, 3, base + 0x10000, off_cls, len(classes), 0, 0, 8, 0),
                struct.pack("<IIQQQQIIQQ", 24, 3, 0, 0, off_str, len(shstrtab), 0, 0, 1, 0)]
    blob = header + bytes(rodata) + classes + shstrtab
    blob += bytes(shoff - len(blob)) + b"".join(sections)
    # the .sched_classes section sits at base + 0x10000 in memory: its pointers are read from the file
    path.write_bytes(blob)
    return str(path)


def test_kernel_elf_names_its_policies(tmp_path):
    from schedlab import kernel_elf
    assert kernel_elf.policies(tiny_kernel(tmp_path / "k.elf", ["timeslice", "gang", "fifo"])) == [
        "timeslice", "gang", "fifo"]
    (tmp_path / "junk").write_bytes(b"\x7fELF")
    assert kernel_elf.policies(tmp_path / "junk") is None and kernel_elf.policies(tmp_path / "none") is None


def test_cli_compare_and_sweep_refuse_a_misspelt_policy_before_any_boot(fake, capsys, tmp_path):
    fake.sim()
    kernel = tiny_kernel(tmp_path / "k.elf", ["timeslice", "gang", "partition"])
    assert cli.main(["compare", "--kernel", kernel, "--policies", "timeslice,gnag", "job=gauss"]) == 2
    err = capsys.readouterr().err
    assert "unknown policy 'gnag': this kernel has timeslice, gang, partition; nothing was booted" in err
    assert cli.main(["sweep", "--kernel", kernel, "--policies", "gnag,timeslice", "--vary", "quantum=1ms,2ms",
                     "--out", str(tmp_path / "s"), "job=gauss"]) == 2
    assert "unknown policy 'gnag'" in capsys.readouterr().err
    assert fake.bootargs() == []
    assert cli.main(["compare", "--kernel", kernel, "--policies", "gang", "--repeat", "1", "job=gauss"]) == 0


@pytest.mark.qemu
def test_the_built_kernel_elf_lists_the_boot_lines_policies(boot):
    from schedlab import kernel_elf
    run = boot(1, "calib=off job=synth:iters=10,grain=10")
    assert sorted(kernel_elf.policies(qemu.DEFAULT_KERNEL)) == sorted(run.boot["policies"])


def test_cli_compare_failed_discovery(fake, capsys):
    fake.sim()
    assert run_cli(fake, "compare", "job=gauss", "quantum=bad", "wibble=1") == 1
    assert "ERROR bad token 'wibble=1'" in capsys.readouterr().out


def test_cli_compare_failed_job_check_exits_nonzero(fake, capsys):
    fake.sim()
    assert run_cli(fake, "compare", "--policies", "gang", "--repeat", "1", "--keep-going",
                    "job=gauss", "job=fault:kind=load") == 1
    out, _ = capsys.readouterr()
    assert "check=FAIL reason=pagefault" in out
    assert len(fake.bootargs()) == 3               # --keep-going ran the mix after fault alone failed


# ---------------------------------------------------------------- launcher and conftest

def test_launcher_runs_as_a_script(fake):
    fake.replay("gang-trace")
    assert os.access(LAUNCHER, os.X_OK)
    done = subprocess.run([str(LAUNCHER), "run", "--cpus", "1", "--kernel", fake.kernel_path, "job=gauss"],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    assert "summary: policy=gang" in done.stdout


def test_every_tool_is_a_subcommand_of_the_launcher():
    """tools/schedlab (run by python3 as before, or as a program) starts the package; the tools that were
    scripts of their own are subcommands with their own --help."""
    for argv in (["--help"], ["experiment", "--help"], ["experiment", "ab", "--help"], ["validate", "--help"],
                 ["calibrate", "--help"], ["bench", "--help"], ["record-consoles", "--help"], ["reproduce", "--list"]):
        done = subprocess.run([sys.executable, str(LAUNCHER), *argv], capture_output=True, text=True, timeout=60,
                              cwd="/")
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout.startswith("usage: schedlab") or argv[0] == "reproduce", (argv, done.stdout[:200])
    listed = subprocess.run([sys.executable, str(LAUNCHER), "reproduce", "--list"], capture_output=True, text=True,
                            timeout=60).stdout
    assert "sim16-markatos-351" in listed and "sim-validation" in listed
    assert subprocess.run([sys.executable, str(LAUNCHER), "experiment", "nonesuch"], capture_output=True,
                          text=True, timeout=60).returncode == 2


def test_no_path_edits_and_no_test_imports_another():
    """The package is imported as a package (pyproject.toml's pytest pythonpath, or installed): nothing in
    tools/ or tests/ edits the import path, and no test module imports another (shared code is in helpers.py,
    schedule_checks.py, trace_data.py and conftest.py)."""
    edit = "sys." + "path"
    sources = [*(REPO / "tools").rglob("*.py"), REPO / "tools" / "schedlab", *(REPO / "tests").glob("*.py")]
    assert not [str(f) for f in sources if edit in f.read_text()]
    for f in (REPO / "tests").glob("*.py"):
        for line in f.read_text().splitlines():
            words = line.split()
            assert not (words[:1] in (["import"], ["from"]) and len(words) > 1 and words[1].startswith("test_")), \
                (f.name, line)


def test_conftest_reports_why_qemu_tests_skip(monkeypatch, tmp_path):
    import conftest
    monkeypatch.setattr(qemu, "DEFAULT_KERNEL", tmp_path / "build" / "kernel.elf")
    monkeypatch.setattr(conftest, "REPO_ROOT", tmp_path)
    assert "run `make`" in conftest.qemu_missing_reason()
    (tmp_path / "build").mkdir()
    qemu.DEFAULT_KERNEL.write_bytes(b"")
    monkeypatch.setenv("SCHEDLAB_QEMU", "definitely-not-a-qemu-binary")
    assert "not installed" in conftest.qemu_missing_reason()


def test_compare_gives_a_policy_only_its_own_options():
    options = {"timeslice": {"wakeboost": ["off", "on"]}, "gang": {"alternates": ["off", "on"]}}
    settings = ["quantum=5ms", "wakeboost=on", "alternates=on", "bogus=1"]
    assert comparison.settings_for(settings, "timeslice", options) == ["quantum=5ms", "wakeboost=on", "bogus=1"]
    assert comparison.settings_for(settings, "gang", options) == ["quantum=5ms", "alternates=on", "bogus=1"]
    assert comparison.settings_for(settings, "global", options) == ["quantum=5ms", "bogus=1"]
    assert comparison.settings_for(settings, "global", None) == settings      # nothing known: all of them
    trials = comparison.plan(settings, [mix.Job(0, "job=gauss")], ["gang"], repeats=1, options=options)
    assert trials and all("wakeboost=on" not in t.tokens and "alternates=on" in t.tokens for t in trials)


def test_readme_says_what_a_new_user_needs():
    """README (issue 25, item 6): the scenario file format, the simulator's SCHEDLAB_SIM and --kernel, what a
    new app includes and that the simulator models only the listed apps, and no passing test called an
    expected failure."""
    readme = "\n".join(p.read_text() for p in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))])
    assert "# cpus: N" in readme and "after the first" in readme and "`#` starts a comment" in readme
    assert "SCHEDLAB_SIM=" in readme and "--kernel PATH" in readme
    assert "threads/uthread.h" in readme and "models only the apps listed" in readme
    assert "expected failures" not in readme
    assert "BUSY" in readme and "--allow-busy" in readme
