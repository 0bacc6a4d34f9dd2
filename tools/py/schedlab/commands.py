"""The commands ``run``, ``compare``, ``sweep`` and ``trace``: boot, report, export, decide the exit status.

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

from . import busy, executor, inputs, kernel_elf, model_limits
from . import comparison as cmp
from . import model as machine
from . import pace, trace_window
from .console import parse_console
from .mix import GLOBAL_SETTINGS, background_apps, override, split_tokens, token_key
from .qemu import ICOUNT_SHIFT, MEMORY, REPO_ROOT, HarnessError, Run, host_cores, is_deterministic
from .scenario import Scenario, scenario_from_args
from .stats import Spread
from .table import (calib_line, comparison_table, format_table, gang_table, model_report, ms, ranking_line,
                    results_table, spread, summary_line, switch_line, trace_paragraph)
from .pftrace import write_perfetto
from .trace import NO_TRACE, Trace, app_names, draw_gantt, gang_violations, parse_trace, switch_stats, to_chrome
from .writers import dumps, run_meta, write_csv, write_json

#: The mix ``compare`` uses when given none (same as tools/scenarios/default-mix.scn).
DEFAULT_MIX = ["job=gauss", "job=oddeven"]
#: Most harts chosen by default (fewer if the host has fewer cores).
DEFAULT_MAX_CPUS = 4
#: Lines of raw console shown for a failed run that printed no ERROR/PANIC.
CONSOLE_TAIL = 15
#: Where ``run --trace`` saves boot n's files (``run-<n>.log/.json/.png``) without ``--trace-out``.
DEFAULT_TRACE_PREFIX = REPO_ROOT / "build" / "trace" / "run"

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def default_cpus() -> int:
    return min(host_cores(), DEFAULT_MAX_CPUS)


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _settings(args: Namespace, scenario: Scenario, default_repeat: int) -> tuple[int, int]:
    """(cpus, repeat): command line first, then the scenario header, then defaults; refuses an unpaced timed
    boot of more harts than host cores, and resolves pace=auto (_pace)."""
    cpus = args.cpus or scenario.cpus or default_cpus()
    repeat = inputs.whole_number("repeat", args.repeat or scenario.repeat or default_repeat, 1, inputs.MAX_REPEAT)
    args.qemu_extra = inputs.qemu_extra(getattr(args, "qemu_extra", None)) or None
    _check_model(args, cpus, scenario.tokens)
    _pace(args, cpus, scenario.tokens)
    return cpus, repeat


def _pace(args: Namespace, cpus: int, tokens) -> None:
    """Refuse unpaced timed boots of more harts than host cores (pace.needs_pace says how to run them), and
    turn --model ...,pace=auto into one R for every boot of the command (pace.resolve)."""
    sim = getattr(args, "sim", False)
    why = pace.needs_pace(cpus, _deterministic(args, tokens), sim, getattr(args, "model", None))
    if why:
        raise HarnessError(why)
    if getattr(args, "model", None) and not sim:
        args.model = pace.resolve(args.model, cpus, kernel=getattr(args, "kernel", None), say=note)


def _sim_tag(args: Namespace) -> str:
    """Marks every header of a simulated run: its numbers are a model's, not a measurement."""
    return " SIMULATED" if getattr(args, "sim", False) else ""


def _check_model(args: Namespace, cpus: int, tokens) -> None:
    """Before any boot: the --model spec is valid (ModelError names what is wrong), and the scenario does not
    say model= itself (only --model loads the plugin that makes the token true)."""
    model_limits.check(getattr(args, "model", None), cpus, machine.mem_mb(MEMORY))
    if any(token_key(t) == "model" for t in tokens):
        raise HarnessError("the scenario has a model= token: choose the machine model with --model "
                           "<profile>[,key=value...], which also loads the plugin")


def _model_tag(args: Namespace, cpus: int) -> str:
    """Marks every header of a run under the machine model with its canonical spec."""
    spec = machine.canonical(getattr(args, "model", None), cpus)
    return "" if spec == machine.NONE else f"  model={spec}"


def _task(args: Namespace, cpus: int, tokens) -> executor.Task:
    """One boot of the command as a task (executor.py runs it where --jobs/--executor say, judging the host)."""
    if getattr(args, "sim", False):
        return executor.sim_task(cpus, " ".join(tokens), timeout=args.timeout, model=getattr(args, "model", None))
    return executor.qemu_task(cpus, " ".join(tokens), kernel=args.kernel, timeout=args.timeout,
                              extra=args.qemu_extra or (), deterministic=args.deterministic,
                              model=getattr(args, "model", None))


def _boot(args: Namespace, cpus: int, tokens) -> Run:
    return executor.current().run(_task(args, cpus, tokens))


def _boots(args: Namespace, cpus: int, token_lists):
    """The Runs of these boots in order, as many at a time as the executor runs. A loop that breaks drops the
    generator, which cancels the boots not started yet (executor.Executor.map)."""
    return executor.current().map(_task(args, cpus, tokens) for tokens in token_lists)


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
VIRTUAL_REFUSAL = (
    "schedlab: compare refuses to compute slowdowns from virtual times: with clock=virtual every hart "
    "takes turns on one host thread and the clock counts the instructions of all harts, so a job alone "
    "and the same job in a mix are not timed as on a parallel machine. Drop --deterministic (and "
    "clock=virtual) to measure, or pass --allow-virtual for instruction-count ratios.")


def _deterministic(args: Namespace, tokens) -> bool:
    """The boots run in deterministic mode: --deterministic, or clock=virtual among the tokens."""
    return bool(getattr(args, "deterministic", False)) or is_deterministic(" ".join(tokens))


def failure_report(run: Run) -> str:
    """What to show for a failed run: its ERROR/PANIC lines and failed jobs with their own ERROR lines,
    else the console's tail."""
    lines = [f"{run.verdict}: cpus={run.cpus} bootargs: {run.bootargs}"]
    if run.timed_out:
        lines.append(f"TIMEOUT: killed after {run.seconds:.0f} s (raise --timeout, or the kernel hung)")
    lines += run.errors + run.panics
    failed_jobs = [r for r in run.results if r.get("check") != "ok"]
    for r in failed_jobs:
        lines.append(f"job {r.get('job')} ({r.get('app')}) check={r.get('check')}"
                     + (f" reason={r['reason']}" if "reason" in r else ""))
        lines += ["  " + e for e in run.parsed.job_errors(r.get("job"))]
    reported = {r.get("job") for r in failed_jobs}
    lines += [e for job in sorted(run.output) if job not in reported for e in run.parsed.job_errors(job)]
    if not (run.errors or run.panics or failed_jobs):
        tail = run.console.splitlines()[-CONSOLE_TAIL:]
        lines.append(f"no ERROR/PANIC line; last {len(tail)} console lines:" if tail else "no console output")
        lines += ["| " + line for line in tail]
    return "\n".join(lines)


def unreadable(run: Run) -> str | None:
    """The contract lines of a finished boot the harness could not read (a RESULT without its keys, a time
    that is not a number the kernel prints...): they give no numbers, and the run counts as failed."""
    if run.timed_out or not run.parsed.malformed:
        return None
    return ("contract lines not in the kernel's format (ignored, the run counts as failed):\n"
            + "\n".join("  " + line for line in run.parsed.malformed))


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
    """The tokens with ``trace=on`` (appended unless already there; a ``trace=off`` is dropped)."""
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


def run_command(args: Namespace) -> int:
    scenario = scenario_from_args(args.scenario)
    cpus, repeat = _settings(args, scenario, default_repeat=1)
    tracing = args.trace or args.trace_out is not None
    tokens = with_trace_on(scenario.tokens) if tracing else scenario.tokens
    entries, failed = [], 0
    for index, run in enumerate(_boots(args, cpus, [tokens] * repeat)):
        entries.append((run_meta(index, run), run))
        print(f"== run {index + 1}/{repeat}  cpus={cpus}{_sim_tag(args)}{_model_tag(args, cpus)}  {run.verdict}"
              f"{_busy_tag(run)}  ({run.seconds:.1f} s)  bootargs: {run.bootargs}")
        if _busy_tag(run) and repeat > 1:     # one boot: the closing BUSY HOST paragraph says it
            print(f"busy host: {run.busy}")
        if args.verbose:
            print(run.console.rstrip())
        if run.results:
            print(results_table(run.results))
        print(summary_line(run.summary))
        if run.model != machine.NONE:
            print(model_report(run))
        if run.virtual_clock:
            print(VIRTUAL_NOTE)
        traced = _trace(args, run, trace_prefix(args.trace_out, index + 1, repeat)) if tracing else True
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
                                     if _deterministic(args, tokens) else ""))
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


def _discover_policies(args: Namespace, cpus: int, settings, jobs) -> tuple[list[str] | None, Run]:
    """Boot the mix under the kernel's default policy and read the policies from BOOT."""
    # only the settings every policy takes: a policy's own options (alternates=...) would be refused here
    settings = [t for t in settings if token_key(t) in GLOBAL_SETTINGS]
    tokens = override(settings, policy=None, **({"quantum": args.quantum} if args.quantum else {}))
    tokens += [job.token for job in jobs]
    note("[discover] mix under the kernel's default policy ...")
    run = _boot(args, cpus, tokens)
    if not run.ok:
        return None, run
    listed = (run.boot or {}).get("policies")
    if not listed:
        ran = (run.summary or {}).get("policy")
        listed = [ran] if ran else None
        note(f"note: the kernel's BOOT line lists no policies; comparing only '{ran}'")
    elif len(listed) == 1:
        note(f"note: the kernel was built with one policy only; comparing just '{listed[0]}'")
    return listed, run


def _unknown_policies(asked: list[str], known: list[str] | None, option: str = "--policies") -> str | None:
    """The refusal for names in ``asked`` the kernel does not have (None when all are known, or unknown)."""
    bad = [p for p in asked if known is not None and p not in known]
    if not bad:
        return None
    return (f"{option}: unknown polic{'ies' if len(bad) > 1 else 'y'} {', '.join(repr(p) for p in bad)}: this "
            f"kernel has {', '.join(known)}")


def _check_policies_first(args: Namespace, asked: list[str]) -> None:
    """Refuse misspelt --policies before any boot: the names are read from the kernel ELF (kernel_elf.py; the
    simulator's from its binary). When they cannot be read, the first boot's BOOT line is checked instead."""
    if not asked:
        return
    if getattr(args, "sim", False):
        from .sim import ensure_sim
        path = ensure_sim()
    else:
        path = Path(args.kernel) if args.kernel else REPO_ROOT / "build" / "kernel.elf"
    refusal = _unknown_policies(asked, kernel_elf.policies(path))
    if refusal:
        raise HarnessError(refusal + "; nothing was booted")


def _compare_marks(done, jobs) -> dict:
    """(policy, job index) -> 'BUSY k/n' over the boots its row is computed from (alone and mix), when any."""
    counts: dict = defaultdict(lambda: [0, 0])
    for trial, run in done:
        for job in ([trial.job] if trial.job else jobs):
            cell = counts[trial.policy, job.index]
            cell[0] += busy.count([run])
            cell[1] += 1
    return {key: busy.mark(*cell) for key, cell in counts.items() if cell[0]}


def compare_command(args: Namespace) -> int:
    scenario = scenario_from_args(args.scenario, default_tokens=DEFAULT_MIX)
    virtual = _deterministic(args, scenario.tokens)
    if virtual and not args.allow_virtual:
        note(VIRTUAL_REFUSAL)
        return EXIT_USAGE
    # a deterministic boot repeats itself exactly: one of each unless asked
    cpus, repeat = _settings(args, scenario, default_repeat=1 if virtual else 3)
    settings, jobs = split_tokens(scenario.tokens)
    if not any(not j.background for j in jobs):
        note("schedlab: compare needs at least one foreground job (job=<app> not in "
             "the background set) in the mix")
        return EXIT_USAGE

    done: list[tuple[cmp.Trial, Run]] = []
    if args.policies:
        policies = [p for p in args.policies.split(",") if p]
        _check_policies_first(args, policies)
        discovery = None
    else:
        policies, discovery = _discover_policies(args, cpus, settings, jobs)
        if policies is None:
            print(failure_report(discovery))
            return EXIT_FAILED
        settings, jobs = split_tokens(scenario.tokens, background_apps(discovery.boot))
        if not any(not j.background for j in jobs):
            note("schedlab: every job of the mix is a background app (BOOT background=)")
            return EXIT_USAGE

    trials = cmp.plan(settings, jobs, policies, repeat, args.quantum,
                      (discovery.boot or {}).get("options") if discovery is not None else None,
                      vary_seed=not args.same_seed)
    if discovery is not None:
        ran = (discovery.summary or {}).get("policy")
        reusable = [t for t in trials if (t.kind, t.policy, t.repeat) == (cmp.MIX, ran, 0)]
        if reusable:        # the discovery boot is that trial already: do not boot it twice
            trial = reusable[0]
            trials.remove(trial)
            done.append((cmp.Trial(ran, cmp.MIX, 0, tuple(discovery.bootargs.split())), discovery))

    failures, checked = [], discovery is not None
    for number, (trial, run) in enumerate(zip(trials, _boots(args, cpus, (t.tokens for t in trials))), 1):
        done.append((trial, run))
        if not checked and (run.boot or {}).get("policies"):
            checked = True           # the ELF could not tell: the first BOOT line does, before more boots
            refusal = _unknown_policies(policies, run.boot["policies"])
            if refusal:
                raise HarnessError(refusal + f"; stopped after {number} boot{'s' if number > 1 else ''}")
        note(f"[{number}/{len(trials)}] {trial.describe()}: {run.verdict} ({run.seconds:.1f} s)")
        garbled = unreadable(run)
        if not run.ok or garbled:
            failures.append(run)
            print(garbled or failure_report(run))
            if not args.keep_going:
                break

    machine.check_same([(trial.describe(), run.model) for trial, run in done], "compare")
    outcomes = cmp.aggregate(done, jobs, policies, repeat)
    print(f"== compare: cpus={cpus}{_sim_tag(args)} repeats={repeat} policies={','.join(policies)}"
          f"  mix: {' '.join(j.token for j in jobs)}" + ("  clock=virtual" if virtual else "")
          + _model_tag(args, cpus))
    if virtual:
        print(VIRTUAL_NOTE + "; slowdowns are instruction-count ratios (--allow-virtual)")
    print(calib_line([run.calib for _, run in done]))
    print(comparison_table(outcomes, _compare_marks(done, jobs)))
    print(ranking_line(outcomes))
    flagged = busy.warning(run for _, run in done)
    if flagged:
        print(flagged)
    entries = [(run_meta(i, run, repeat=trial.repeat, kind=trial.kind,
                         alone_job=trial.job.index + 1 if trial.job else None), run)
               for i, (trial, run) in enumerate(done)]
    if not _export(args, "compare", entries, cmp.outcomes_to_dict(outcomes)):
        return EXIT_FAILED
    if failures:
        note(f"schedlab: {len(failures)} run(s) failed" + ("" if args.keep_going else "; stopped"))
        return EXIT_FAILED
    return EXIT_OK
