#!/usr/bin/env python3
"""Markatos 3.5.1 analogue under timeslice: each foreground job alone, then with a compute-bound
background job (hog:procs=2), repeated with seeds 1..R so the harts' quantum phases differ per repeat.
Prints per configuration the median slowdown (elapsed in mix / elapsed alone) and its min..max.

    python3 tools/experiments/markatos351.py [--cpus 2] [--repeat 5] [--oddeven-n 2048]
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from schedlab_harness import qemu  # noqa: E402


def elapsed(cpus, tokens):
    run = qemu.boot(cpus, tokens, timeout=900)
    if run.timed_out or run.exit_code != 0:
        sys.exit(f"run failed: {' '.join(tokens)}\n{run.console[-1500:]}")
    fg = [r for r in run.results if r["app"] != "hog"]
    return fg[0]["elapsed_us"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--oddeven-n", type=int, default=2048)
    args = ap.parse_args()
    warning = qemu.oversubscription_warning(args.cpus)
    if warning:
        print(warning, file=sys.stderr)
    n = args.oddeven_n
    configs = [
        ("gauss coarse barrier spin", "job=gauss:sync=barrier,barrier=spin", ""),
        (f"oddeven n={n} spin", f"job=oddeven:n={n},barrier=spin", ""),
        (f"oddeven n={n} block", f"job=oddeven:n={n},barrier=block", ""),
        (f"oddeven n={n} block wakeboost", f"job=oddeven:n={n},barrier=block", "wakeboost=on"),
    ]
    print(f"# cpus={args.cpus} repeat={args.repeat} policy=timeslice quantum=10ms background=hog:procs=2")
    print(f"{'configuration':34} {'alone ms':>10} {'mix ms':>10} {'slowdown':>9}  spread")
    for name, job, extra in configs:
        alone, mix, ratio = [], [], []
        for seed in range(1, args.repeat + 1):
            base = [f"seed={seed}"] + ([extra] if extra else [])
            a = elapsed(args.cpus, base + [job])
            m = elapsed(args.cpus, base + [job, "job=hog:procs=2"])
            alone.append(a)
            mix.append(m)
            ratio.append(m / a)
        print(f"{name:34} {statistics.median(alone) / 1000:10.1f} {statistics.median(mix) / 1000:10.1f} "
              f"{statistics.median(ratio):9.2f}  {min(ratio):.2f}..{max(ratio):.2f}", flush=True)


if __name__ == "__main__":
    main()
