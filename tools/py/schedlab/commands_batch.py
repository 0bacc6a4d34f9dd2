"""The commands ``sweep`` and ``reproduce``: many boots into files, kept in a journal so an interrupted
command resumes (journal.py), refused from docs/ when a boot failed or was flagged (commands.py).
"""

from __future__ import annotations

import contextlib
import sys
from argparse import Namespace
from pathlib import Path

from . import busy, core, executor
from . import model as machine
from . import sweep as sw
from . import pace
from .commands import EXIT_FAILED, EXIT_OK, _docs_refusal, _model_tag, _settings, failure_report, note
from .journal import Journal
from .qemu import REPO_ROOT, HarnessError
from .scenario import scenario_from_args
from .table import calib_line, sweep_table
from .writers import dumps, records, run_meta, run_summaries


# ---- sweep ----

def _progress(total: int):
    """A tqdm progress bar on stderr (hidden when stderr is not a terminal)."""
    try:
        from tqdm import tqdm
    except ImportError:
        raise HarnessError("sweep's progress bar needs tqdm (make deps, or pip install tqdm)") from None
    return tqdm(total=total, unit="boot", file=sys.stderr, disable=None, dynamic_ncols=True)


def _sweep_outputs(args: Namespace, vary: sw.Vary) -> tuple[Path, Path, Path | None]:
    prefix = Path(args.out) if args.out else REPO_ROOT / "build" / "sweep" / vary.name
    prefix.parent.mkdir(parents=True, exist_ok=True)
    json_path = Path(args.json) if args.json else prefix.with_name(prefix.name + ".json")
    csv_path = Path(args.csv) if args.csv else prefix.with_name(prefix.name + ".csv")
    png = None if args.no_plot else prefix.with_name(prefix.name + ".png")
    return json_path, csv_path, png


def _write_sweep(json_path: Path, csv_path: Path, entries, rows: list[dict], about: dict) -> None:
    document = {"command": "sweep", "sweep": {**about, "points": rows},
                "runs": run_summaries(entries), "records": records(entries)}
    json_path.write_text(dumps(document, indent=2) + "\n")
    import csv
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["policy"])
        writer.writeheader()
        writer.writerows(rows)


def sweep_command(args: Namespace) -> int:
    vary = sw.parse_vary(args.vary)
    scenario = scenario_from_args(args.scenario)
    settings, cpus, repeat = _settings(args, scenario, default_repeat=3)
    json_path, csv_path, png = _sweep_outputs(args, vary)
    # every finished boot is kept beside the output; --resume answers from it what is there (journal.py)
    executor.current().journal = Journal(json_path.with_name(json_path.stem + ".journal.jsonl"), args.resume)
    with contextlib.ExitStack() as stack:
        bars = []

        def shown(number: int, total: int, point, run) -> None:
            if not bars:
                bars.append(stack.enter_context(_progress(total)))
            bars[0].set_postfix_str(point.describe(vary))
            bars[0].update()
            if not run.ok:
                bars[0].write(failure_report(run))

        result = core.sweep(settings, vary, scenario.tokens, cpus, repeat,
                            [p for p in (args.policies or "").split(",") if p] or None, args.metric, args.same_seed,
                            args.keep_going, on_boot=shown)
    if args.resume:
        note(executor.current().journal.summary())
    _print_sweep(result, _model_tag(settings, cpus), args.same_seed)
    entries = [(run_meta(i, run, repeat=p.repeat, vary=vary.name, value=p.value, policy_asked=p.policy), run)
               for i, (p, run) in enumerate(result.done)]
    refusal = _docs_refusal(args, (json_path, csv_path, png), [run for _, run in result.done])
    if refusal:
        note(refusal)
        return EXIT_FAILED
    _write_sweep(json_path, csv_path, entries, result.rows(), result.about())
    written = [json_path, csv_path]
    if png is not None:
        sw.draw(result.summaries, vary, args.metric, png, f"{args.metric} vs {vary.name}: median and "
                f"{sw.ci_label()} over {repeat} repeats, {cpus} harts")
        written.append(png)
    note("wrote " + " ".join(str(p) for p in written))
    if result.failures:
        note(f"schedlab: {len(result.failures)} run(s) failed" + ("" if args.keep_going else "; stopped"))
        return EXIT_FAILED
    return EXIT_OK


def _print_sweep(result: core.Sweep, model_tag: str, same_seed: bool) -> None:
    """The sweep's header, calibration line, table and busy-host paragraph."""
    vary = result.vary
    print(f"== sweep {vary.name} over {','.join(vary.values)}: cpus={result.cpus}{model_tag} repeats={result.repeat} "
          f"seeds {'fixed' if same_seed or vary.key == 'seed' else 'seed+repeat'}; "
          f"{result.metric}: median, bootstrap {sw.ci_label()} of the median, min..max")
    print(calib_line([run.calib for _, run in result.done]))
    print(sweep_table(result.summaries, vary.name, result.metric))
    flagged = busy.warning(run for _, run in result.done)
    if flagged:
        print(flagged)


def reproduce_command(args: Namespace) -> int:
    from . import reproduce as rp
    specs = rp.load_all()
    if args.list:
        for e in specs:
            print(f"{e.name:26} {e.quick_seconds:5.0f} s quick {e.full_seconds:6.0f} s full  {e.title}"
                  + ("  (paced: --paced)" if e.paced else ""))
        print(rp.plan_line(specs, False) + "; " + rp.plan_line(specs, True).split(", ", 1)[1])
        return 0
    names = [n for n in (args.only or "").split(",") if n]
    deterministic = getattr(args, "deterministic", False)
    spec = machine.as_model(getattr(args, "model", None))     # the spec parsed once, for every section
    why = pace.needs_pace(args.cpus, deterministic, False, spec)
    if why:                             # more harts than cores: timed only paced (pace.py)
        raise HarnessError(why)
    out = Path(args.out) if args.out else rp.REPO / ("build/reproduce-deterministic" if deterministic else "docs")
    if deterministic and busy.inside_docs(out):
        raise HarnessError("reproduce --deterministic: its times are instruction counts, and docs/ holds only "
                           "wall-clock measurements: write elsewhere with --out DIR (default "
                           "build/reproduce-deterministic)")
    ctx = rp.Ctx(cpus=args.cpus, repeat=args.repeat, quick=args.quick, out=out, replace=args.replace,
                 allow_busy=args.allow_busy)
    # pace=auto: one R for every section
    ctx.model = pace.resolve(spec, args.cpus, say=note) if spec is not None and not deterministic else spec
    ctx.deterministic = deterministic
    ctx.paced = getattr(args, "paced", False)
    # every finished boot is kept beside the results; --resume answers from it what is there (journal.py)
    executor.current().journal = Journal(ctx.out / "results.journal.jsonl", getattr(args, "resume", False))
    try:
        rp.check_model_destination(ctx)
        sections = rp.run(names or None, ctx)
    except rp.ReproError as exc:
        raise HarnessError(str(exc)) from None
    if getattr(args, "resume", False):
        note(executor.current().journal.summary())
    failed = [s.name for s in sections if s.error]
    if failed:
        note("sections that failed to run: " + ", ".join(failed))
    return EXIT_FAILED if failed else EXIT_OK

