"""Command-line interface: every command registered one way, in ``COMMANDS`` (registry.py) - ``schedlab run``,
``compare``, ``sweep``, ``trace`` and ``reproduce`` with their options here (clients of the core, core.py, through
commands.py), and the commands whose modules parse their own arguments: ``calibrate``, ``validate``,
``experiment``, ``bench``, ``explore``, ``check``, ``record-consoles``.

Exit status: 0 when every boot's verdict was ok, 1 when a run failed or timed
out, 2 for usage problems (bad arguments, missing kernel, QEMU or scenario, a
log without a trace dump).
"""

from __future__ import annotations

import argparse
import sys

from . import commands, commands_batch, executor, inputs, trace_window
from .qemu import DEFAULT_TIMEOUT, HarnessError
from .registry import Commands

EPILOG = """\
A scenario is kernel bootargs: tokens such as policy=gang quantum=5ms seed=3
job=gauss:n=256,procs=2,barrier=spin job=hog. A positional argument without '='
names a scenario file (a path, or NAME / NAME.scn under tools/scenarios);
tokens after it are appended. Set SCHEDLAB_QEMU to use another QEMU binary.
"""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cpus", type=inputs.argparse_int(1), metavar="N",
                        help="harts (-smp); default: the scenario's '# cpus:' or min(host cores, 4)")
    parser.add_argument("--repeat", type=inputs.argparse_int(1, inputs.MAX_REPEAT), metavar="R",
                        help=f"boots per configuration (at most {inputs.MAX_REPEAT})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"kill a boot that runs longer (default {DEFAULT_TIMEOUT:.0f})")
    parser.add_argument("--json", metavar="FILE", help="write runs and per-job records as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write per-job records as CSV")
    parser.add_argument("--qemu-extra", metavar="ARGS", help='extra QEMU arguments, e.g. "-numa ..."')
    parser.add_argument("--kernel", metavar="PATH", help="kernel ELF (default build/kernel.elf)")
    parser.add_argument("--deterministic", action="store_true",
                        help="boot with clock=virtual under QEMU -icount on one host thread: the same scenario "
                             "and seed give the same console and trace byte for byte on any host; times are "
                             "virtual (1 ns per instruction, all harts summed)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each raw console")
    parser.add_argument("--sim", action="store_true",
                        help="run in the simulator (make sim) instead of QEMU: any --cpus; output says sim=")
    parser.add_argument("--allow-busy", action="store_true",
                        help="write --json/--csv/--out under docs/ even from boots the busy-host check flagged")
    _model_option(parser)
    executor.add_options(parser)


def _model_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="PROFILE[,KEY=V...][,pace=R|auto]",
                        help="boot under the machine model (tools/model/README.md): a profile of tools/model/"
                             "profiles (butterfly, symmetry, iris, ksr1, modern...) with keys overridden, e.g. "
                             "modern,l2_kb=512; pace=R (instructions/s per hart) or pace=auto makes wall time "
                             "model time at any --cpus, alone (pace=auto) or after a profile (default: none)")


#: schedlab's commands, in --help's order (registry.py): the parsed ones with their options below, then the
#: delegated ones, whose modules parse their own arguments.
COMMANDS = Commands(__package__)
COMPARE_EPILOG = (EPILOG + "\nDefault mix: " + " ".join(commands.DEFAULT_MIX)
                  + ". Background apps (hog) are never run alone.")
SWEEP_EPILOG = EPILOG + """
--vary KEY=V1,V2,...: a setting (quantum, seed, trace, timeout), a policy option
(alternates=off,on), or jobN.KEY for key KEY of the scenario's N-th job (job1.grain=100,1000,10000).
Repeat r runs with seed base+r (base: the scenario's seed=, else 1) unless --same-seed.
Writes PREFIX.json (points, runs, records), PREFIX.csv (points) and PREFIX.png."""
TRACE_EPILOG = ("Open the .pftrace in https://ui.perfetto.dev: one CPU track per hart, jobs as processes and "
                "their processes as threads with running/runnable/sleeping states, slot switches and partition "
                "changes on tracks of their own.  The JSON (also chrome://tracing) has one row per hart.")


@COMMANDS.command("run", "boot a scenario, print its results", commands.run_command, EPILOG, raw=True)
def _run_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--trace", action="store_true",
                   help="boot with trace=on; save each boot's console, Chrome trace, "
                        "Perfetto trace and Gantt chart")
    p.add_argument("--trace-out", metavar="PREFIX",
                   help="write PREFIX.log/.json/.pftrace/.png (PREFIX-<n>.* with --repeat; implies --trace; "
                        "default build/trace/run-<n>)")
    p.add_argument("scenario", nargs="+", metavar="TOKEN|SCENARIO",
                   help="bootargs tokens, or a scenario file (+ extra tokens)")


@COMMANDS.command("compare", "run each job alone and the mix under each policy; report slowdowns",
                  commands.compare_command, COMPARE_EPILOG, raw=True)
def _compare_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--policies", metavar="P1,P2", help="policies to compare (default: all the kernel lists)")
    p.add_argument("--quantum", metavar="Q", help="set quantum=Q (e.g. 5ms) in every run")
    p.add_argument("--keep-going", action="store_true", help="continue after a failed run")
    p.add_argument("--allow-virtual", action="store_true",
                   help="with --deterministic (or clock=virtual): compute slowdowns from virtual times anyway")
    p.add_argument("--same-seed", action="store_true",
                   help="every repeat with the scenario's seed (default: repeat r uses seed+r)")
    p.add_argument("scenario", nargs="*", metavar="TOKEN|SCENARIO", help="the mix (default: gauss + oddeven)")


@COMMANDS.command("sweep", "vary one key over values (under one or more policies); table, CSV, JSON and a plot",
                  commands_batch.sweep_command, SWEEP_EPILOG, raw=True)
def _sweep_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--vary", required=True, metavar="KEY=V1,V2,...", help="the key and its values")
    p.add_argument("--policies", metavar="P1,P2",
                   help="run every value under each (default: the scenario's policy, or the kernel's default)")
    p.add_argument("--metric", default="elapsed_us", metavar="KEY",
                   help="the RESULT key to summarise per job (default elapsed_us; e.g. par_us, iter_us)")
    p.add_argument("--out", metavar="PREFIX", help="output files PREFIX.json/.csv/.png "
                   "(default build/sweep/<key>; --json/--csv name those files instead)")
    p.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    p.add_argument("--same-seed", action="store_true", help="every repeat with the scenario's seed")
    p.add_argument("--keep-going", action="store_true", help="continue after a failed run")
    p.add_argument("--resume", action="store_true", help="continue an interrupted sweep: boots already in "
                   "PREFIX.journal.jsonl (same kernel build, tokens, seed, harts, model) are not booted again")
    p.add_argument("scenario", nargs="+", metavar="TOKEN|SCENARIO",
                   help="bootargs tokens, or a scenario file (+ extra tokens)")


@COMMANDS.command("trace", "turn a saved console of a trace=on boot into a Perfetto trace, a Chrome JSON and a "
                  "Gantt chart", commands.trace_command, TRACE_EPILOG)
def _trace_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", metavar="CONSOLE_LOG", help="the saved console ('-': standard input)")
    p.add_argument("-o", "--output", required=True, metavar="FILE.json", help="Chrome trace JSON to write")
    p.add_argument("--pftrace", metavar="FILE.pftrace",
                   help="the Perfetto protobuf trace to write (default: FILE.json's name with .pftrace; "
                        "'' for none)")
    p.add_argument("--png", metavar="FILE.png", help="also draw the per-hart Gantt chart (needs matplotlib)")
    p.add_argument("--stats", action="store_true",
                   help="print slot-switch statistics and the gang co-scheduling check per job")
    p.add_argument("--grace", type=float, default=0.0, metavar="US",
                   help="with --stats: ignore the first US microseconds of each ready wait (default 0)")
    trace_window.add_arguments(p)


def _reproduce_minutes() -> tuple[str, str]:
    """A full reproduce's expected minutes and a quick one's, from the sections' budgets."""
    from . import reproduce as rp
    sections = rp.load_all()
    return tuple(f"{rp.expected_minutes(sections, q):.0f}" for q in (False, True))


def _reproduce_epilog() -> str:
    full, quick = _reproduce_minutes()
    return ("Each section boots its scenarios with seeds varied across repeats and writes paper | model | ours "
            f"| verdict. A full run takes about {full} minutes at --cpus 2; --quick about {quick} (--list: "
            "each section's). Measure on an idle machine with harts <= host cores: a run the busy-host check "
            "flags is not written to docs/ without --allow-busy.")


@COMMANDS.command("reproduce", "regenerate every headline result of the papers into docs/results.md",
                  commands_batch.reproduce_command, _reproduce_epilog)
def _reproduce_options(p: argparse.ArgumentParser) -> None:
    quick = _reproduce_minutes()[1]
    p.add_argument("--quick", action="store_true", help=f"fewer repeats and points (about {quick} minutes)")
    p.add_argument("--only", metavar="NAME[,NAME]",
                   help="only these sections (see --list); a name may be a shell pattern, e.g. 'sim16-*'")
    p.add_argument("--cpus", type=inputs.argparse_int(1), default=2, metavar="N", help="harts (default 2)")
    p.add_argument("--repeat", type=inputs.argparse_int(1, inputs.MAX_REPEAT), metavar="R",
                   help="repeats per configuration (the full run's default: each section's own, 3 to 20)")
    p.add_argument("--out", default=None, metavar="DIR", help="where results.md, results.json and figures/ go "
                   "(default docs/)")
    p.add_argument("--allow-busy", action="store_true",
                   help="write docs/ even when boots ran on a busy host (without it such results go to "
                        "build/reproduce-busy/ instead)")
    p.add_argument("--replace", action="store_true",
                   help="write into --out even when its results were written with another --cpus or --quick: "
                        "with --only those sections replace theirs and the others are kept, a whole run "
                        "discards them (without it such a run is refused before any boot)")
    p.add_argument("--deterministic", action="store_true",
                   help="every QEMU boot in deterministic mode (clock=virtual): instruction-counted times, the same "
                        "results on any host and at any --jobs; a check of the pipeline, never written to docs/ "
                        "(default --out build/reproduce-deterministic)")
    p.add_argument("--paced", action="store_true",
                   help="run the paced sections too (the papers' results at 4-16 processors on QEMU with paced "
                        "harts, reproduce/paced.py: their time is budgeted apart, see --list); --only runs any "
                        "section it names")
    p.add_argument("--list", action="store_true", help="list the sections with their expected times and exit")
    p.add_argument("--resume", action="store_true", help="continue an interrupted reproduce: boots already in "
                   "OUT/results.journal.jsonl (same kernel build, tokens, seed, harts, model) are not booted again")
    _model_option(p)
    executor.add_options(p)


COMMANDS.delegate_all((
    ("calibrate", "sim_calibrate",
     "measure the simulator's costs on QEMU into tools/sim/calib/<name>.json (a quiet machine only)"),
    ("validate", "sim_validate", "the simulator against QEMU: slowdowns side by side (a quiet machine only)"),
    ("experiment", "experiments",
     "one-off measurements: ab, wakecost, determinism, cache-corruption, model-overhead (schedlab experiment --help)"),
    ("bench", "bench", "mechanism costs on QEMU and the host as BENCH lines (make bench; a quiet machine only)"),
    ("explore", "explore", "perturbed deterministic boots of scenarios drawn from the build, each checked; a "
     "failure prints the line that replays it"),
    ("check", "check", "a policy file or name checked for the properties a scheduler must have, on QEMU and the "
     "simulator: a report card, replay lines, grading (schedlab check --help)"),
    ("record-consoles", "record_consoles",
     "boot the real kernel to re-record the consoles the harness tests replay (tests/data/consoles)"),
))

#: The delegated commands' modules and lines, derived from COMMANDS (for readers such as the reference pages).
DELEGATED = {c.name: (c.module, c.about) for c in COMMANDS if c.delegated}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedlab", description="Run schedlab scenarios under QEMU and compare scheduling policies.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    COMMANDS.add_to(parser.add_subparsers(dest="command", required=True))
    return parser


def _delegate(name: str, argv: list[str]) -> int:
    try:
        return COMMANDS.main_of(name)(argv) or 0
    except HarnessError as exc:
        print(f"schedlab {name}: error: {exc}", file=sys.stderr)
        return commands.EXIT_USAGE
    except KeyboardInterrupt:
        print(f"schedlab {name}: interrupted", file=sys.stderr)
        return 130


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in COMMANDS and COMMANDS[argv[0]].delegated:
        return _delegate(argv[0], argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("cpus", "repeat"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1")
    if getattr(args, "timeout", 1) <= 0:
        parser.error("--timeout must be positive")
    if getattr(args, "grace", 0) < 0:
        parser.error("--grace must not be negative")
    if getattr(args, "sim", False) and getattr(args, "deterministic", False):
        parser.error("--deterministic picks how QEMU runs; --sim boots no QEMU: use one of them")
    if getattr(args, "jobs", 1) < 1:
        parser.error("--jobs must be at least 1")
    if getattr(args, "reserve_cores", None) is not None and args.reserve_cores < 0:
        parser.error("--reserve-cores must not be negative")
    try:
        with executor.use(executor.from_args(args, cpus=getattr(args, "cpus", None))):
            return args.func(args)
    except HarnessError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return commands.EXIT_USAGE
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130
