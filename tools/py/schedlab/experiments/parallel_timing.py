"""Do timed boots side by side change each other's times?  The measurement behind --jobs's default rule.

    schedlab experiment parallel-timing [--cpus 1] [--repeat 5] [--jobs N] [--reserve 1,0] [--policies P,Q]
                                        [--out DIR] [MIX TOKENS...]

Runs the same ``schedlab compare`` (the mix, default gauss + oddeven, every job alone and the mix under each
policy) on this host: sequentially (``--jobs 1``), then with ``--jobs N`` for each ``--reserve-cores`` value
of ``--reserve`` (cores left free to the host; a value that leaves room for only one boot at a time is
skipped and said so), then sequentially again. For every median of the comparison - each job's time alone, in
the mix, and its slowdown, per policy - it prints parallel / sequential; the second sequential run's ratio
is the noise floor (the host drifting between the two, with nothing beside it). A ratio beyond the floor is
interference: shared caches, memory bandwidth, frequency boost (README "Running many boots").

The rule it decides (affinity.DEFAULT_RESERVE, --reserve-cores): timed boots side by side each get --cpus
cores of their own and one core is left to the host. Run it on a quiet machine with enough cores for at
least two boots beside the reserve (on 2 cores only --reserve 0 --cpus 1 can run two at a time); ``--out``
keeps each compare's JSON. The boots are timed: never on a shared or busy host (the busy check flags them).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

from .. import affinity
from ..table import format_table

DEFAULT_MIX = ["job=gauss", "job=oddeven"]


def _compare(argv: list[str], json_path: Path) -> dict | None:
    """One ``schedlab compare`` in-process (its tables hidden; progress on stderr), its comparison dict."""
    from .. import cli
    with contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(["compare", *argv, "--json", str(json_path)])
    if status != 0 or not json_path.is_file():
        print(f"parallel-timing: compare {' '.join(argv)} failed (exit {status})", file=sys.stderr)
        return None
    return json.loads(json_path.read_text())["comparison"]


def medians(comparison: dict) -> dict:
    """(policy, job, app, what) -> median, for what in alone_us, mix_us, slowdown."""
    out = {}
    for policy in comparison["policies"]:
        for job in policy["jobs"]:
            for what in ("alone_us", "mix_us", "slowdown"):
                spread = job.get(what) or {}
                if spread.get("median") is not None:
                    out[policy["policy"], job["job"], job["app"], what] = spread["median"]
    return out


def ratios(base: dict, other: dict) -> dict:
    return {k: other[k] / v for k, v in base.items() if k in other and v}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab experiment parallel-timing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=int, default=1, help="harts per boot (default 1)")
    ap.add_argument("--repeat", type=int, default=5, help="repeats of every boot (default 5)")
    ap.add_argument("--jobs", type=int, help="boots at a time (default: as many as fit with the smallest reserve)")
    ap.add_argument("--reserve", default="1,0", help="--reserve-cores values to try (default 1,0)")
    ap.add_argument("--policies", help="policies to compare (default: every one the kernel has)")
    ap.add_argument("--deterministic", action="store_true",
                    help="deterministic mode: checks the pipeline (ratios are 1 by construction), measures nothing")
    ap.add_argument("--out", help="keep each compare's JSON in this directory")
    ap.add_argument("mix", nargs="*", help=f"the mix (default {' '.join(DEFAULT_MIX)})")
    args = ap.parse_args(argv)
    cores = len(affinity.host_cores())
    reserves = [int(r) for r in args.reserve.split(",") if r != ""]
    jobs = args.jobs or max(1, (cores - min(reserves)) // args.cpus)
    common = ["--cpus", str(args.cpus), "--repeat", str(args.repeat)]     # the same seeds in every run
    common += ["--policies", args.policies] if args.policies else []
    common += ["--deterministic", "--allow-virtual"] if args.deterministic else []
    common += args.mix or DEFAULT_MIX
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="schedlab-parallel-timing-"))
    out.mkdir(parents=True, exist_ok=True)

    configs = [("sequential", ["--jobs", "1"])]
    for reserve in reserves:
        slots, _ = affinity.timed_slots(jobs, args.cpus, cores, reserve)
        if slots < 2 and not args.deterministic:
            print(f"parallel-timing: --reserve-cores {reserve} leaves room for one {args.cpus}-hart boot at a time "
                  f"on {cores} cores: skipped")
            continue
        configs.append((f"jobs={jobs} reserve={reserve}", ["--jobs", str(jobs), "--reserve-cores", str(reserve)]))
    configs.append(("sequential again", ["--jobs", "1"]))
    results = {}
    for number, (name, extra) in enumerate(configs):
        print(f"parallel-timing: {name} ...", file=sys.stderr, flush=True)
        found = _compare([*extra, *common], out / f"compare-{number}.json")
        if found is None:
            return 1
        results[name] = medians(found)
    base = results["sequential"]
    names = [n for n, _ in configs[1:]]
    table = {n: ratios(base, results[n]) for n in names}
    rows = [[p, j, app, what, f"{v:.4g}", *(f"{table[n].get((p, j, app, what), float('nan')):.3f}" for n in names)]
            for (p, j, app, what), v in sorted(base.items())]
    print(f"parallel-timing: {cores} host cores, --cpus {args.cpus}, {args.repeat} repeats (the same seeds in each "
          "run); ratios are median / sequential median (`sequential again`: the noise floor)")
    print(format_table(["policy", "job", "app", "median of", "sequential", *names], rows))
    floor = max((abs(r - 1) for r in table["sequential again"].values()), default=0.0)
    for name in names[:-1]:
        worst = max((abs(r - 1) for r in table[name].values()), default=0.0)
        print(f"{name}: largest change {worst * 100:.1f} % (noise floor {floor * 100:.1f} %): "
              + ("within the noise" if worst <= max(floor * 1.5, 0.02) else "INTERFERENCE beyond the noise"))
    print(f"compare JSON in {out}")
    return 0
