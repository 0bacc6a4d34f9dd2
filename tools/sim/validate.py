#!/usr/bin/env python3
"""The simulator against QEMU (issue 15, item 4): slowdowns side by side, with the error.

For every policy x wait kind, a mix (synth + oddeven with that wait kind, and a hog) runs under QEMU and
in the simulator at --cpus (default: 2, then 1); so does each foreground job alone under the same policy.
A job's slowdown is its elapsed time in the mix over its elapsed time alone; the table gives QEMU's, the
simulator's, and the simulator's error relative to QEMU (target: within 15 %). Every case is printed,
those that miss too.

    python3 tools/sim/validate.py                 # the full set: a quiet machine, ~100 short boots
    python3 tools/sim/validate.py --tiny          # the pipeline only (make test): one small mix at CPUS=2

QEMU timings mean something only on a quiet machine with harts <= host cores: run the full set there.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schedlab_harness.qemu import boot  # noqa: E402
from schedlab_harness.sim import sim_boot  # noqa: E402

POLICIES = ("timeslice", "gang", "partition", "global")
WAITS = ("spin", "block", "twophase", "adaptive")


def mixes(tiny: bool) -> list[tuple[str, list[str]]]:
    """(policy, foreground job tokens); every mix also has a hog."""
    if tiny:
        return [("timeslice", ["job=synth:procs=2,iters=40,grain=2000,barrier=spin"])]
    return [(p, [f"job=synth:procs=2,iters=3000,grain=2000,barrier={w}",
                 f"job=oddeven:procs=2,n=2048,barrier={w}"]) for p in POLICIES for w in WAITS]


def elapsed(run, app: str) -> float:
    if not run.ok:
        raise RuntimeError(f"run failed: {run.bootargs}\n{run.console[-1500:]}")
    return next(float(r["elapsed_us"]) for r in run.results if r["app"] == app)


def one_case(cpus: int, policy: str, jobs: list[str], quantum: str) -> list[dict]:
    head = [f"policy={policy}", f"quantum={quantum}", "seed=1"]
    mix = head + jobs + [f"job=hog:procs={cpus}"]
    runs = {"qemu": boot(cpus, " ".join(mix), timeout=600), "sim": sim_boot(cpus, " ".join(mix))}
    rows = []
    for token in jobs:
        app = token.split("=", 1)[1].split(":", 1)[0]
        alone = " ".join(head + [token])
        row = {"cpus": cpus, "policy": policy, "job": token, "quantum": quantum}
        for kind, run in runs.items():
            solo = boot(cpus, alone, timeout=600) if kind == "qemu" else sim_boot(cpus, alone)
            row[f"{kind}_alone_us"] = elapsed(solo, app)
            row[f"{kind}_mix_us"] = elapsed(run, app)
            row[f"{kind}_slowdown"] = row[f"{kind}_mix_us"] / row[f"{kind}_alone_us"]
        row["error"] = row["sim_slowdown"] / row["qemu_slowdown"] - 1.0
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiny", action="store_true", help="one small mix: checks the pipeline, not the model")
    ap.add_argument("--cpus", type=int, action="append", help="harts (repeatable; default 2 and 1)")
    ap.add_argument("--quantum", default="2ms")
    ap.add_argument("--json", metavar="FILE", help="write every row as JSON")
    args = ap.parse_args(argv)
    cpus_list = args.cpus or ([2] if args.tiny else [2, 1])
    rows = []
    print(f"{'cpus':>4} {'policy':<10} {'job':<48} {'slowdown qemu':>13} {'sim':>7} {'error':>7}")
    for cpus in cpus_list:
        for policy, jobs in mixes(args.tiny):
            for row in one_case(cpus, policy, jobs, args.quantum):
                rows.append(row)
                miss = "" if abs(row["error"]) <= 0.15 else "  MISS (>15 %)"
                print(f"{cpus:>4} {policy:<10} {row['job'][4:]:<48} {row['qemu_slowdown']:>13.2f} "
                      f"{row['sim_slowdown']:>7.2f} {row['error'] * 100:>6.1f}%{miss}", flush=True)
    within = sum(abs(r["error"]) <= 0.15 for r in rows)
    print(f"{within} of {len(rows)} cases within 15 % (simulated with the calibration named in each RESULT's sim=)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
