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
  runs' own spread. Unpaced, a hart runs as fast as the host lets it (k x R instructions a second, k measured
  from the jobs alone); paced at R with the same quantum, a quantum holds k times fewer instructions, so every
  grain-to-quantum ratio - and a job's length in quanta - differs k-fold, and policies that spin
  uncoordinated answer to exactly that ratio. So the paced mix runs twice: with the mix's quantum (the same
  quantum on a slower machine) and with the quantum times k (the unpaced machine's instructions per quantum);
  the second is the like-for-like comparison the verdict column judges.

Every boot is timed: run it on a quiet machine (``spread --hog`` makes its own load on purpose). R defaults to
pace=auto for the largest hart count, one R for the whole experiment.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import core, keytable
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


def _alone_us(comparison: dict) -> dict:
    """(policy, job) -> the median response time of the job alone."""
    return {(policy["policy"], job["job"]): (job.get("alone_us") or {}).get("median")
            for policy in comparison.get("policies", []) for job in policy["jobs"]}


def _speed_ratio(plain: dict, paced: dict) -> float | None:
    """k: a job alone takes k times as long paced as unpaced - the unpaced harts' instructions per second over R
    (the same instructions, Markatos's and every paper's time being instructions over speed). Median over jobs."""
    ratios = [paced[key] / plain[key] for key in plain if plain[key] and paced.get(key)]
    return statistics.median(ratios) if ratios else None


def _time_us(text: str) -> int:
    """A scenario time (``10ms``, ``500us``, ``2s``) in microseconds."""
    match = re.fullmatch(r"(\d+)(us|ms|s)", text)
    if not match:
        raise ValueError(f"not a scenario time: {text!r}")
    return int(match[1]) * {"us": 1, "ms": 1000, "s": 1000000}[match[2]]


def _with_quantum(mix: list[str], factor: float) -> list[str]:
    """The mix with its quantum (its quantum= token, or the kernel's default) times ``factor``, within the
    parser's range."""
    if not any(t.startswith("job=") or "=" not in t for t in mix):
        mix = [*mix, *core.DEFAULT_MIX]           # compare's own default, now beside a quantum token
    keys = {k.name: k for k in keytable.host_table() if k.scope == "setting"}
    given = [t.split("=", 1)[1] for t in mix if t.startswith("quantum=")]
    quantum = _time_us(given[-1] if given else keys["quantum"].default)
    low, high = (_time_us(v) for v in keys["quantum"].range)
    scaled = min(high, max(low, round(quantum * factor)))
    return [t for t in mix if not t.startswith("quantum=")] + [f"quantum={scaled}us"]


def _within(unpaced, paced) -> bool:
    return paced is not None and (abs(paced[0] - unpaced[0]) <= 0.10 * unpaced[0] or unpaced[1] <= paced[0] <= unpaced[2])


def versus(args) -> int:
    spec = _rate(args.pace, 2)
    extra = ["--repeat", str(args.repeat)] + (["--policies", args.policies] if args.policies else [])
    with tempfile.TemporaryDirectory() as tmp:
        plain_run = _compare(extra, args.mix, Path(tmp) / "plain.json")
        paced_run = _compare([*extra, "--model", spec], args.mix, Path(tmp) / "paced.json")
        k = _speed_ratio(_alone_us(plain_run), _alone_us(paced_run))
        matched_mix = _with_quantum(args.mix, k) if k else None
        matched_run = _compare([*extra, "--model", spec], matched_mix, Path(tmp) / "matched.json") if k else {}
    plain, paced, matched = (_slowdowns(run) for run in (plain_run, paced_run, matched_run))
    rows = []
    for key in sorted(plain):
        p, q, m = plain[key], paced.get(key), matched.get(key)
        rows.append([*key, f"{p[0]:.2f} [{p[1]:.2f}, {p[2]:.2f}]", f"{q[0]:.2f}" if q else "-",
                     f"{m[0]:.2f} [{m[1]:.2f}, {m[2]:.2f}]" if m else "-", f"{m[0] / p[0]:.3f}" if m else "-",
                     "yes" if _within(p, m) else "NO"])
    print(f"# pacing versus: compare --cpus 2 {' '.join(extra)} {' '.join(args.mix) or '(default mix)'}; "
          f"paced: --model {spec}")
    if k:
        print(f"# k = {k:.1f}: unpaced harts ran {k:.1f} x R; the matched runs take "
              f"{next(t for t in matched_mix if t.startswith('quantum='))}")
    print(format_table(["policy", "job", "unpaced slowdown [min, max]", "paced, same quantum",
                        "paced, quantum x k [min, max]", "matched / unpaced", "within 10 % or the spread"], rows))
    print(f"ranking unpaced:                 {' < '.join(_ranking(plain))}")
    print(f"ranking paced, same quantum:     {' < '.join(_ranking(paced))}")
    print(f"ranking paced, quantum x k:      {' < '.join(_ranking(matched))}")
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
