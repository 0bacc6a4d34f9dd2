"""What the machine model costs: every app of the build alone, with no model, under a profile whose costs are
all zero (the instrumentation alone: every access looked up, nothing charged) and under a real profile.

    schedlab experiment model-overhead [--cpus 2] [--repeat 3] [--model modern] [APP ...]

Per app: the median over --repeat boots (seeds 1..R, the three kinds alternated so a drifting host hits them
alike) of the boot's wall time (QEMU start to exit, what a user waits) and of the job's elapsed_us, and each
model's ratio to no model. The zero-cost profile shows what looking up every access costs; the real one adds
what its misses are charged. Measure on an idle host at --cpus <= host cores.
"""
from __future__ import annotations

import argparse
import statistics
import sys

from .. import qemu

#: Long enough to measure; an app not listed runs with its defaults.
SCENARIOS = {
    "gauss": "job=gauss:n=256",
    "oddeven": "job=oddeven:n=4096",
    "synth": "job=synth:iters=20000",
    "memwalk": "job=memwalk:kb=512,passes=20",
    "knary": "job=knary",
    "sleeper": "job=sleeper",
    "fault": "job=fault:kind=badptr",              # the kinds that end check=ok (the others fail on purpose)
    "scribble": "job=scribble:mode=partial,lines=4,gap_us=50",
    "chaos": "job=chaos:mode=random,calls=200",
}
ZERO_COSTS = ",l2_cycles=0,llc_cycles=0,coh_cycles=0,mem_cycles=0,remote_cycles=0"


def built_apps(cpus):
    run = qemu.boot(cpus, "calib=off job=memwalk:kb=4,passes=1")
    return [a for a in run.boot["apps"] if a not in run.boot["background"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab experiment model-overhead", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", default="modern", help="the real profile (default modern)")
    ap.add_argument("apps", nargs="*", help="apps (default: every foreground app the build has)")
    args = ap.parse_args(argv)
    apps = args.apps or built_apps(args.cpus)
    kinds = [("none", None), ("zero-cost", args.model + ZERO_COSTS), (args.model, args.model)]
    print(f"# cpus={args.cpus} repeat={args.repeat}: median wall s / elapsed ms, and x no model")
    print(f"{'app':10} " + "  ".join(f"{k:>24}" for k, _ in kinds))
    for app in apps:
        scenario = SCENARIOS.get(app, f"job={app}")
        wall = {k: [] for k, _ in kinds}
        elapsed = {k: [] for k, _ in kinds}
        for seed in range(1, args.repeat + 1):
            for name, spec in kinds:
                run = qemu.boot(args.cpus, f"seed={seed} {scenario}", model=spec)
                if not run.ok:
                    sys.exit(f"{app} under {name} failed:\n{run.console[-1500:]}")
                wall[name].append(run.seconds)
                elapsed[name].append(run.results[0]["elapsed_us"] / 1000)
        base_w, base_e = statistics.median(wall["none"]), statistics.median(elapsed["none"])
        cells = []
        for name, _ in kinds:
            w, e = statistics.median(wall[name]), statistics.median(elapsed[name])
            cells.append(f"{w:5.2f}s {e:7.1f}ms x{w / base_w:4.2f}/{e / base_e:4.2f}")
        print(f"{app:10} " + "  ".join(f"{c:>24}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
