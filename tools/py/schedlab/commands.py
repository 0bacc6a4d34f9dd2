"""The commands ``run``, ``compare``, ``sweep`` and ``trace``: boot, report, export, decide the exit status.
Each is a client of the core (core.py): it turns its arguments into ``core.Settings``, calls the core, prints
what came back and writes the files asked for.

``run`` and ``compare`` print tables on stdout and progress/warnings on
stderr, show every ``ERROR``/``PANIC`` line of a failed run verbatim, each
failed job with its reason and the job's own ``ERROR`` lines (``[<id>] ERROR
...``, from ``sl_die``), or the tail of the raw console when nothing says
why, and return 0 only if
every boot's verdict was ok.  A run killed for exceeding ``--timeout`` counts
as failed and is reported as ``TIMEOUT``.  ``run --trace`` also boots with
``trace=on`` and saves each boot's console, Chrome trace, Perfetto trace and Gantt chart; a
boot that printed no trace dump then counts as failed.  ``trace`` boots
nothing: it turns a saved console into those files.  ``sweep`` and ``reproduce`` are in commands_batch.py.

Every QEMU boot is judged by ``busy`` (its calibration card, other QEMUs, the load average): a busy boot is
named in the output and marks the rows computed from it, and ``--json``/``--csv``/``--out`` under docs/ are
not written from busy boots without ``--allow-busy``.  ``compare`` and ``sweep`` check ``--policies``
against the kernel ELF's policies (``kernel_elf``) before any boot.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from collections import defaultdict
from pathlib import Path

from . import batch, busy, core, inputs
from . import model as machine
from . import trace_window
from .console import parse_console
from .core import DEFAULT_MIX as _DEFAULT_MIX, failure_report, unreadable
from .mix import token_key
from .qemu import DEFAULT_TIMEOUT, ICOUNT_SHIFT, REPO_ROOT, HarnessError, Run, batch_scenarios, host_cores
from .scenario import Scenario, scenario_from_args
from .stats import Spread
from .table import (calib_line, comparison_table, format_table, gang_table, model_report, ms, ranking_line,
                    results_table, spread, summary_line, switch_line, trace_paragraph)
from .pftrace import write_perfetto
from .gangcheck import gang_violations
from .trace import NO_TRACE, Trace, app_names, draw_gantt, parse_trace, switch_stats, to_chrome
from .writers import dumps, run_meta, write_csv, write_json

#: The mix ``compare`` uses when given none (same as tools/scenarios/default-mix.scn).
DEFAULT_MIX = list(_DEFAULT_MIX)
#: Most harts chosen by default (fewer if the host has fewer cores).
DEFAULT_MAX_CPUS = 4
#: Where ``run --trace`` saves boot n's files (``run-<n>.log/.json/.png``) without ``--trace-out``.
DEFAULT_TRACE_PREFIX = REPO_ROOT / "build" / "trace" / "run"

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def default_cpus() -> int:
    return min(host_cores(), DEFAULT_MAX_CPUS)


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def settings_of(args: Namespace) -> core.Settings:
    """The boots' settings from a command's arguments (--model's spec parsed here, once)."""
    return core.Settings(kernel=getattr(args, "kernel", None), sim=getattr(args, "sim", False),
                         deterministic=getattr(args, "deterministic", False), model=getattr(args, "model", None),
                         timeout=getattr(args, "timeout", DEFAULT_TIMEOUT),
                         qemu_extra=tuple(inputs.qemu_extra(getattr(args, "qemu_extra", None))))


def _settings(args: Namespace, scenario: Scenario, default_repeat: int,
              settings: core.Settings | None = None) -> tuple[core.Settings, int, int]:
    """(settings, cpus, repeat): command line first, then the scenario header, then defaults; the settings
    (``settings_of(args)`` unless given) checked against the harts and pace=auto resolved (core.prepare)."""
    cpus = args.cpus or scenario.cpus or default_cpus()
    repeat = inputs.whole_number("repeat", args.repeat or scenario.repeat or default_repeat, 1, inputs.MAX_REPEAT)
    return core.prepare(settings or settings_of(args), cpus, scenario.tokens, say=note), cpus, repeat


def _sim_tag(settings: core.Settings) -> str:
    """Marks every header of a simulated run: its numbers are a model's, not a measurement."""
    return " SIMULATED" if settings.sim else ""


def _model_tag(settings: core.Settings, cpus: int) -> str:
    """Marks every header of a run under the machine model with its canonical spec."""
    spec = settings.canonical_model(cpus)
    return "" if spec == machine.NONE else f"  model={spec}"


def _busy_tag(run: Run) -> str:
    return "  BUSY HOST" if run.busy is not None and run.busy.busy else ""


def _docs_refusal(args: Namespace, paths, runs) -> str | None:
    """Why files under docs/ may not be written from these runs (a failed or unreadable boot; a checked
    kernel; a busy host without --allow-busy), else None."""
    inside = [str(p) for p in paths if p and busy.inside_docs(p)]
    runs = list(runs)
    failed = sum(1 for run in runs if not run.ok or unreadable(run))
    if inside and failed:
        return (f"schedlab: not writing {', '.join(inside)}: {failed} of {len(runs)} boots failed, and docs/ holds "
                "only the results of clean runs (write elsewhere to keep a failed run's records)")
    checked = sum(1 for run in runs if busy.checked(run))
    if inside and checked:
        return (f"schedlab: not writing {', '.join(inside)}: {checked} of {len(runs)} boots ran a kernel built "
                "with KCHECKS=1 (make test's build), and docs/ holds only the plain build's measurements: run "
                "`make`, then measure again")
    if not inside or getattr(args, "allow_busy", False) or not busy.count(runs):
        return None
    return (f"schedlab: not writing {', '.join(inside)}: {busy.count(runs)} of {len(list(runs))} boots ran on a "
            "busy host, and docs/ holds only measurements of a quiet one (write elsewhere, or pass --allow-busy)")


#: Printed under every result of a deterministic boot.
VIRTUAL_NOTE = (f"clock=virtual: times are instructions executed ({2 ** ICOUNT_SHIFT} ns each, all harts "
                "summed) under one QEMU host thread, not this host's time")
#: Why compare refuses virtual times without --allow-virtual.
VIRTUAL_REFUSAL = "schedlab: " + core.VIRTUAL_REFUSAL


def _export(args: Namespace, command: str, entries, comparison: dict | None = None) -> bool:
    """Write --json/--csv; False (nothing written) when they are under docs/ and a boot was busy."""
    refusal = _docs_refusal(args, (args.json, args.csv), [run for _, run in entries])
    if refusal:
        note(refusal)
        return False
    if args.json:
        write_json(args.json, command, entries, comparison)
        note(f"wrote {args.json}")
    if args.csv:
        write_csv(args.csv, entries)
        note(f"wrote {args.csv}")
    return True


# ---- traces ----

def write_trace(trace: Trace, apps: dict[int, str], json_path: str | Path, png_path: str | Path | None,
                pftrace_path: str | Path | None = None) -> None:
    """Write the Chrome trace JSON and, if asked, the Perfetto protobuf trace and the Gantt PNG (HarnessError
    without the perfetto package / matplotlib)."""
    Path(json_path).write_text(dumps(to_chrome(trace, apps)) + "\n")
    if pftrace_path is not None:
        write_perfetto(trace, apps, pftrace_path)
    if png_path is not None:
        draw_gantt(trace, apps, png_path)


def with_trace_on(tokens: list[str]) -> list[str]:
    """The tokens with ``trace=on`` (appended unless already there; a ``trace=off`` is dropped); in a batch, its
    last scenario's (the one a replay line is about: batch.py)."""
    words = [w for t in tokens for w in t.split()]
    if batch.is_batch(" ".join(words)):
        return batch.on_last(" ".join(words), lambda last: " ".join(with_trace_on(last.split()))).split()
    if "trace=on" in tokens:
        return list(tokens)
    return [t for t in tokens if token_key(t) != "trace"] + ["trace=on"]


def trace_prefix(trace_out: str | None, number: int, repeat: int) -> Path:
    """Files of boot ``number`` (1-based): ``PREFIX`` for a single boot, else ``PREFIX-<number>``."""
    if trace_out is None:
        return DEFAULT_TRACE_PREFIX.with_name(f"{DEFAULT_TRACE_PREFIX.name}-{number}")
    return Path(trace_out if repeat == 1 else f"{trace_out}-{number}")


def _save_trace(run: Run, prefix: Path) -> bool:
    """Save the console as PREFIX.log and its trace as PREFIX.json/.pftrace/.png; False when it has no trace."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    log, json_path, pftrace, png = (prefix.with_name(prefix.name + suffix)
                                    for suffix in (".log", ".json", ".pftrace", ".png"))
    log.write_text(run.console)
    try:
        trace = parse_trace(run.traces)
    except HarnessError as exc:
        problem = "the boot printed no TRACE dump" if str(exc) == NO_TRACE else str(exc)
        note(f"trace: {problem} (console saved to {log})")
        return False
    apps = app_names(run.results)
    write_trace(trace, apps, json_path, None)
    written = [log, json_path]
    for path, writer in ((pftrace, write_perfetto), (png, draw_gantt)):
        try:
            writer(trace, apps, path)
            written.append(path)
        except HarnessError as exc:          # a missing optional package costs only its file
            note(f"trace: {exc}")
    print("trace: " + "  ".join(str(p) for p in written))
    print(switch_line(switch_stats(trace)))
    return True


def _trace(args: Namespace, run: Run, prefix: Path) -> bool:
    """_save_trace, unless the files would go under docs/ from a boot that may not write there."""
    refusal = _docs_refusal(args, [prefix], [run])
    if refusal:
        note(refusal.replace("schedlab: not writing", "trace: not writing", 1))
        return False
    return _save_trace(run, prefix)


def _read_log(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(errors="replace")
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror}") from None


def trace_command(args: Namespace) -> int:
    parsed = parse_console(_read_log(args.log))
    trace = trace_window.from_args(parse_trace(parsed.traces), args)
    apps = app_names(parsed.results)
    stats = switch_stats(trace)
    pftrace = None if args.pftrace == "" else args.pftrace or Path(args.output).with_suffix(".pftrace")
    write_trace(trace, apps, args.output, args.png, pftrace)
    print(trace_paragraph(trace, apps, stats))
    if (parsed.boot or {}).get("clock") == "virtual":
        print(VIRTUAL_NOTE)
    if args.stats:
        print(switch_line(stats))
        print(f"gang check: time a process ran while another of its job and slot waited ready "
              f"(switch windows and {args.grace:g} us grace excluded)")
        print(gang_table(gang_violations(trace, args.grace), apps))
    note(f"wrote {', '.join(str(p) for p in (args.output, pftrace, args.png) if p)}")
    return EXIT_OK


# ---- run ----

def _repeat_table(runs: list[Run]) -> str:
    """Per job across repeats: median (min..max) of elapsed and cpu time."""
    by_job = defaultdict(lambda: {"app": "-", "elapsed": [], "cpu": []})
    for run in runs:
        for r in run.results:
            row = by_job[r["job"]]
            row["app"] = r["app"]
            row["elapsed"].append(r["elapsed_us"])
            row["cpu"].append(r["cpu_us"])
    flagged = busy.count(runs)
    rows = [[job, row["app"], len(row["elapsed"]), spread(Spread.of(row["elapsed"]), ms),
             spread(Spread.of(row["cpu"]), ms)] + ([busy.mark(flagged, len(runs))] if flagged else [])
            for job, row in sorted(by_job.items(), key=lambda kv: (isinstance(kv[0], str), kv[0]))]
    return format_table(["job", "app", "runs", "elapsed ms", "cpu ms"] + (["host"] if flagged else []), rows)


def _print_scenarios(run: Run) -> None:
    """A boot's RESULT table and summary; a batch's (kernel/batch.c) one of each per scenario, with its verdict."""
    if not batch.is_batch(run.bootargs):
        parts = [("", run)]
    else:
        scenarios = batch_scenarios(run.bootargs)
        runs = batch.split(run, scenarios)
        parts = [(f"-- scenario {k}/{len(scenarios)}: {part.verdict}  {part.bootargs}\n", part)
                 for k, part in enumerate(runs, 1)]
        if len(runs) < len(scenarios):
            left = f"{len(runs) + 1}" + (f"-{len(scenarios)}" if len(runs) + 1 < len(scenarios) else "")
            parts.append((f"-- scenario {left}/{len(scenarios)}: not reached (an earlier one ended the batch)\n",
                          None))
    for head, part in parts:
        print(head, end="")
        if part is not None and part.results:
            print(results_table(part.results))
        if part is not None:
            print(summary_line(part.summary))


def run_command(args: Namespace) -> int:
    scenario = scenario_from_args(args.scenario)
    settings, cpus, repeat = _settings(args, scenario, default_repeat=1)
    tracing = args.trace or args.trace_out is not None
    tokens = with_trace_on(scenario.tokens) if tracing else scenario.tokens
    entries, failed = [], 0
    for index, run in enumerate(core.boots(settings, cpus, [tokens] * repeat)):
        entries.append((run_meta(index, run), run))
        print(f"== run {index + 1}/{repeat}  cpus={cpus}{_sim_tag(settings)}{_model_tag(settings, cpus)}  {run.verdict}"
              f"{_busy_tag(run)}  ({run.seconds:.1f} s)  bootargs: {run.bootargs}")
        if _busy_tag(run) and repeat > 1:     # one boot: the closing BUSY HOST paragraph says it
            print(f"busy host: {run.busy}")
        if args.verbose:
            print(run.console.rstrip())
        _print_scenarios(run)
        if run.model != machine.NONE:
            print(model_report(run))
        if run.virtual_clock:
            print(VIRTUAL_NOTE)
        traced = _trace(args, batch.last(run), trace_prefix(args.trace_out, index + 1, repeat)) if tracing else True
        garbled = unreadable(run)
        if garbled:
            print(garbled)
        if not run.ok:
            failed += 1
            print(failure_report(run))
        elif not traced or garbled:
            failed += 1
        elif run.errors or run.panics:
            print("\n".join(run.errors + run.panics))
        print()
    if repeat > 1:
        print(f"== {repeat} runs" + ("  (clock=virtual: identical boots repeat the same times)"
                                     if settings.virtual(tokens) else ""))
        print(_repeat_table([run for _, run in entries]))
    flagged = busy.warning(run for _, run in entries)
    if flagged:
        print(flagged)
    if not _export(args, "run", entries):
        failed += 1
    if failed:
        note(f"schedlab: {failed} of {repeat} runs failed")
    return EXIT_FAILED if failed else EXIT_OK


# ---- compare ----


def _boot_line(number: int, total: int, trial, run: Run) -> None:
    """compare's progress: each boot as it finishes, and a failed boot's report."""
    note(f"[{number}/{total}] {trial.describe()}: {run.verdict} ({run.seconds:.1f} s)")
    garbled = unreadable(run)
    if not run.ok or garbled:
        print(garbled or failure_report(run))


def compare_command(args: Namespace) -> int:
    scenario = scenario_from_args(args.scenario, default_tokens=DEFAULT_MIX)
    settings = settings_of(args)
    virtual = settings.virtual(scenario.tokens)
    if virtual and not args.allow_virtual:
        note(VIRTUAL_REFUSAL)
        return EXIT_USAGE
    # a deterministic boot repeats itself exactly: one of each unless asked
    settings, cpus, repeat = _settings(args, scenario, 1 if virtual else 3, settings)
    result = core.compare(settings, scenario.tokens, cpus, repeat,
                          [p for p in (args.policies or "").split(",") if p] or None, args.quantum,
                          args.same_seed, args.keep_going, args.allow_virtual, say=note, on_boot=_boot_line)
    if not result.done:                 # the discovery boot failed
        print(failure_report(result.failures[0]))
        return EXIT_FAILED
    print(f"== compare: cpus={cpus}{_sim_tag(settings)} repeats={repeat} policies={','.join(result.policies)}"
          f"  mix: {' '.join(j.token for j in result.jobs)}" + ("  clock=virtual" if virtual else "")
          + _model_tag(settings, cpus))
    if virtual:
        print(VIRTUAL_NOTE + "; slowdowns are instruction-count ratios (--allow-virtual)")
    print(calib_line([run.calib for _, run in result.done]))
    print(comparison_table(result.outcomes, result.busy_marks()))
    print(ranking_line(result.outcomes))
    flagged = busy.warning(run for _, run in result.done)
    if flagged:
        print(flagged)
    entries = [(run_meta(i, run, repeat=trial.repeat, kind=trial.kind,
                         alone_job=trial.job.index + 1 if trial.job else None), run)
               for i, (trial, run) in enumerate(result.done)]
    if not _export(args, "compare", entries, result.to_dict()):
        return EXIT_FAILED
    if result.failures:
        note(f"schedlab: {len(result.failures)} run(s) failed" + ("" if args.keep_going else "; stopped"))
        return EXIT_FAILED
    return EXIT_OK
