"""Is a paced boot's time model time?  The validation of paced harts (tools/model/pace.h, docs/pacing.md).

    schedlab experiment pacing scaling [--harts 1,2,4,8,16] [--pace R|auto] [--repeat 3]
    schedlab experiment pacing spread  [--harts 4,8] [--repeat 5] [--pace R|auto] [--hog N]
    schedlab experiment pacing misses  [--model modern] [--pace R] [--repeat 3]
    schedlab experiment pacing versus  [--repeat 5] [--pace R|auto] [--policies P,Q] [MIX TOKENS...]

* ``scaling``: an app with no communication to speak of - synth with one process per hart, a few long
  iterations - should take the same time at every hart count (weak scaling), and a coarse Gauss (n=192) shows
  the strong scaling of an app that does communicate. Prints each hart count's median and its ratio to one hart.
* ``spread``: repeats of the same paced boot (gauss n=192, one process per hart): median and spread
  ((max - min) / median), beside ``--hog N`` busy processes on the host if asked - a paced boot's time should
  not move with the host's load while the host can carry harts x R.
* ``misses``: a one-hart job under a profile, paced and unpaced: pacing changes when things happen, not what the
  model counts.
* ``versus``: ``compare`` of a mix at 2 harts (harts <= cores: both are meaningful), unpaced and paced, with
  ``--repeat`` seeds each: the policies' ranking and each slowdown's median, side by side, with the unpaced
  runs' own spread.

Every boot is timed: run it on a quiet machine (``spread --hog`` makes its own load on purpose). R defaults to
pace=auto for the largest hart count, one R for the whole experiment.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import model as machine
from .. import pace as pacing
from ..qemu import REPO_ROOT, boot
from ..table import format_table

SYNTH = "job=synth:grain=40000,iters=10,procs={harts}"          # 10 x 200k instructions per process
GAUSS = "job=gauss:n=192,procs={harts}"


def _rate(spec: str, harts: int) -> str:
    """The model spec with pace=auto resolved once for ``harts`` harts."""
    return pacing.resolve(spec, harts)


def _par_us(run) -> float | None:
    values = [r.get("par_us") for r in run.results if isinstance(r.get("par_us"), int)]
    return float(values[0]) if run.ok and values else None


def _boots(harts: int, scenario: str, spec: str, repeat: int) -> tuple[list[float], int]:
    """par_us of each ok boot, and how many were flagged (pace fidelity)."""
    from .. import busy
    times, flagged = [], 0
    for seed in range(1, repeat + 1):
        run = boot(harts, f"calib=off seed={seed} {scenario.format(harts=harts)}", model=spec)
        t = _par_us(run)
        if t is None:
            print(f"pacing: a boot failed: {run.verdict}: {run.bootargs}", file=sys.stderr)
            continue
        flagged += busy.judge_paced(run.model_end, harts).busy
        times.append(t)
    return times, flagged


def _spread(times: list[float]) -> str:
    if not times:
        return "-"
    med = statistics.median(times)
    return f"{100 * (max(times) - min(times)) / med:.1f} %"


def scaling(args) -> int:
    harts = [int(h) for h in args.harts.split(",")]
    spec = _rate(args.pace, max(harts))
    print(f"# pacing scaling: model={spec}, {args.repeat} boots each; weak: {SYNTH}; strong: {GAUSS}")
    rows, base = [], {}
    for h in harts:
        cells = [h]
        for name, scenario in (("synth", SYNTH), ("gauss", GAUSS)):
            times, flagged = _boots(h, scenario, spec, args.repeat)
            med = statistics.median(times) if times else None
            base.setdefault(name, med)
            ratio = (med / base[name] if name == "synth" else base[name] / med) if med and base[name] else None
            cells += [f"{med / 1000:.1f}" if med else "-", f"{ratio:.3f}" if ratio else "-", _spread(times),
                      flagged]
        rows.append(cells)
    print(format_table(["harts", "synth ms", "synth / 1 hart", "spread", "flagged",
                        "gauss ms", "gauss speedup", "spread", "flagged"], rows))
    return 0


def _hogs(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def spread(args) -> int:
    harts = [int(h) for h in args.harts.split(",")]
    spec = _rate(args.pace, max(harts))
    hogs = _hogs(args.hog)
    try:
        print(f"# pacing spread: model={spec}, {GAUSS}, {args.repeat} boots each, {args.hog} host hogs beside")
        rows = []
        for h in harts:
            times, flagged = _boots(h, GAUSS, spec, args.repeat)
            rows.append([h, f"{statistics.median(times) / 1000:.2f}" if times else "-",
                         " ".join(f"{t / 1000:.1f}" for t in times), _spread(times), flagged])
        print(format_table(["harts", "median ms", "each ms", "spread", "flagged"], rows))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return 0


def misses(args) -> int:
    paced_spec = f"{args.model},pace={args.pace}"
    scenario = "calib=off job=gauss:n=96,procs=1 job=oddeven:n=2048,procs=1"
    rows = []
    for seed in range(1, args.repeat + 1):
        counts = []
        for spec in (args.model, paced_spec):
            run = boot(1, f"seed={seed} {scenario}", model=spec)
            jobs = run.parsed.model_jobs
            counts.append([jobs.get(r["job"], {}).get("misses") for r in run.results])
        for job, (plain, paced) in enumerate(zip(*counts), 1):
            diff = f"{100 * (paced - plain) / plain:+.2f} %" if plain and paced is not None else "-"
            rows.append([seed, job, plain, paced, diff])
    print(f"# pacing misses: one hart, {scenario}, model={args.model} unpaced and paced at {args.pace}")
    print(format_table(["seed", "job", "misses unpaced", "misses paced", "difference"], rows))
    return 0


def _compare(extra: list[str], mix: list[str], out: Path) -> dict:
    argv = [sys.executable, str(REPO_ROOT / "tools" / "schedlab"), "compare", "--cpus", "2", "--allow-busy",
            "--json", str(out), *extra, *mix]
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["comparison"] if out.is_file() else {}


def _slowdowns(comparison: dict) -> dict:
    """(policy, job) -> (median, low, high) of the slowdown; and the policy's mean of medians."""
    out = {}
    for policy in comparison.get("policies", []):
        for job in policy["jobs"]:
            s = job.get("slowdown") or {}
            if s.get("median") is not None:
                out[policy["policy"], job["job"]] = (s["median"], s.get("min", s["median"]), s.get("max", s["median"]))
    return out


def _ranking(slow: dict) -> list[str]:
    means = {}
    for (policy, _), (median, _, _) in slow.items():
        means.setdefault(policy, []).append(median)
    return sorted(means, key=lambda p: statistics.mean(means[p]))


def versus(args) -> int:
    spec = _rate(args.pace, 2)
    extra = ["--repeat", str(args.repeat)] + (["--policies", args.policies] if args.policies else [])
    with tempfile.TemporaryDirectory() as tmp:
        plain = _slowdowns(_compare(extra, args.mix, Path(tmp) / "plain.json"))
        paced = _slowdowns(_compare([*extra, "--model", spec], args.mix, Path(tmp) / "paced.json"))
    rows = []
    for key in sorted(plain):
        p, q = plain[key], paced.get(key)
        within = q is not None and (abs(q[0] - p[0]) <= 0.10 * p[0] or p[1] <= q[0] <= p[2])
        rows.append([*key, f"{p[0]:.2f} [{p[1]:.2f}, {p[2]:.2f}]", f"{q[0]:.2f}" if q else "-",
                     f"{q[0] / p[0]:.3f}" if q else "-", "yes" if within else "NO"])
    print(f"# pacing versus: compare --cpus 2 {' '.join(extra)} {' '.join(args.mix) or '(default mix)'}; "
          f"paced: --model {spec}")
    print(format_table(["policy", "job", "unpaced slowdown [min, max]", "paced", "paced / unpaced",
                        "within 10 % or the spread"], rows))
    print(f"ranking unpaced: {' < '.join(_ranking(plain))}")
    print(f"ranking paced:   {' < '.join(_ranking(paced))}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="schedlab experiment pacing", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    for name, harts, repeat in (("scaling", "1,2,4,8,16", 3), ("spread", "4,8", 5)):
        p = sub.add_parser(name)
        p.add_argument("--harts", default=harts)
        p.add_argument("--repeat", type=int, default=repeat)
        p.add_argument("--pace", default="pace=auto", help="the model spec (default pace=auto)")
        if name == "spread":
            p.add_argument("--hog", type=int, default=0, help="busy processes beside the boots")
    p = sub.add_parser("misses")
    p.add_argument("--model", default="modern")
    p.add_argument("--pace", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p = sub.add_parser("versus")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--pace", default="pace=auto")
    p.add_argument("--policies")
    p.add_argument("mix", nargs="*")
    args = parser.parse_args(argv)
    try:
        machine.parse_spec(getattr(args, "pace", "") if args.what != "misses" else args.model)
    except machine.ModelError as exc:
        parser.error(str(exc))
    return {"scaling": scaling, "spread": spread, "misses": misses, "versus": versus}[args.what](args)
