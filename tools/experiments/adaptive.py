#!/usr/bin/env python3
"""policy=adaptive against every fixed policy of the build, on mixes of a fine-grain barrier job, a coarse-grain
job with sublinear speedup, a work-stealing job (knary) and a compute-bound hog (issue 29, item 2).

    python3 tools/experiments/adaptive.py --sim --harts 8,16,32,64 --seeds 1-5       # simulated time
    python3 tools/experiments/adaptive.py --qemu --seeds 1-5 [--model modern]        # QEMU at CPUS=2

Per mix, policy and hart count: each foreground job's slowdown (elapsed in the mix / elapsed alone on the machine:
the least over the policies at the same harts, model and seed, so every policy is measured against one
denominator), their mean, and the mix's makespan (SUMMARY). Over the seeds: the median and the
spread (min..max) of the mean slowdown and of the makespan. The table marks adaptive's row `win` when its median
mean slowdown and makespan are at or below every fixed policy's and one of them strictly below, `tie` when at or
below both, else `loses to <policy>`.

The mixes are named; `--mixes` picks some. `holdout` is the mix the rule was not tuned on (issue 29: "a mix the
tests do not use should show the same"). Simulated time is deterministic, so --sim is valid on a busy host;
QEMU timings are not: run --qemu on a quiet machine (the harness flags a busy host in each boot's record).
The simulator models synth, oddeven, gauss (coarse), hog, sleeper and knary (mode=steal) only.
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from schedlab_harness import qemu  # noqa: E402
from schedlab_harness.sim import sim_boot  # noqa: E402

FINE = "synth:grain=500,var=100,iters=30000,barrier=spin"        # ~3 us of work between barriers
COARSE = "gauss:n=768,barrier=spin"                              # a barrier per row step: shrinking steps
KNARY = "knary:h=9,work=1000"                                    # work stealing, no barrier
HOG = "hog"
MIXES = {
    "fine+hog": [FINE, HOG],
    "coarse+hog": [COARSE, HOG],
    "fine+coarse": [FINE, COARSE],
    "all4": [FINE, COARSE, KNARY, HOG],
    # not tuned on: another fine-grain app (oddeven), an imbalanced coarse synth (sublinear: the slowest of P
    # workers sets each step), knary, no hog
    "holdout": ["oddeven:n=24576,barrier=spin", "synth:grain=20000,var=40000,iters=400,barrier=spin", KNARY],
}


def seeds_of(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def boot(args, harts, bootargs):
    if args.sim:
        run = sim_boot(harts, bootargs)
    else:
        run = qemu.boot(harts, bootargs, model=args.model)
    if not run.ok:
        sys.exit(f"failed: {bootargs} at {harts} harts:\n{run.console[-2000:]}")
    return run


ALONE = {}


def alone_us(args, harts, policies, spec, seed):
    """The job alone on the machine: the least elapsed time over the policies (so every policy's slowdown has
    the same denominator, and a policy that runs a job alone better is not penalised for it in the mix)."""
    key = (harts, spec, seed)
    if key not in ALONE:
        ALONE[key] = min(boot(args, harts, f"seed={seed} policy={p} quantum={args.quantum} job={spec}")
                         .results[0]["elapsed_us"] for p in policies)
    return ALONE[key]


def measure(args, harts, policies, policy, mix, seed):
    """(mean slowdown of the foreground jobs, makespan us, {app: regime or ''}) of one mix, one seed."""
    run = boot(args, harts, f"seed={seed} policy={policy} quantum={args.quantum} " + " ".join(f"job={j}" for j in mix))
    slow, regimes = [], {}
    for r in run.results:
        spec = mix[r["job"] - 1]
        regimes[f'{r["app"]}#{r["job"]}'] = r.get("regime", "")
        if r["app"] == "hog":
            continue  # background: it runs until the others end
        slow.append(r["elapsed_us"] / alone_us(args, harts, policies, spec, seed))
    return statistics.mean(slow), run.summary["makespan_us"], regimes


def spread(xs, fmt):
    return f"{fmt(statistics.median(xs))} ({fmt(min(xs))}..{fmt(max(xs))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--sim", action="store_true", help="the simulator (make sim): simulated time")
    where.add_argument("--qemu", action="store_true", help="QEMU at --harts (default 2): a quiet machine only")
    ap.add_argument("--harts", default=None, help="comma-separated hart counts (sim default 8,16,32,64; qemu 2)")
    ap.add_argument("--seeds", default="1-5", help="seeds, e.g. 1-5")
    ap.add_argument("--model", default=None, help="QEMU's machine model profile, e.g. modern")
    ap.add_argument("--quantum", default="10ms")
    ap.add_argument("--mixes", default=",".join(MIXES), help="which mixes: " + ",".join(MIXES))
    ap.add_argument("--policies", default=None, help="default: every policy of the build (BOOT policies=)")
    args = ap.parse_args()
    harts = [int(h) for h in (args.harts or ("8,16,32,64" if args.sim else "2")).split(",")]
    seeds = seeds_of(args.seeds)
    policies = (args.policies.split(",") if args.policies
                else boot(args, 1, "job=hog:procs=1").parsed.boot["policies"])
    if "adaptive" not in policies:
        sys.exit("this build has no policy=adaptive")
    fixed = [p for p in policies if p != "adaptive"]
    where = "simulator" if args.sim else f"QEMU, model {args.model or 'none'}"
    print(f"# {where}; seeds {args.seeds}; quantum {args.quantum}; slowdown = mean over foreground jobs of "
          f"mix/best alone; median (min..max) over seeds")
    print("| mix | harts | policy | mean slowdown | makespan ms | adaptive's regimes (seed 1) / verdict |")
    print("|---|---|---|---|---|---|")
    for name in args.mixes.split(","):
        mix = MIXES[name]
        for h in harts:
            med = {}
            for pol in fixed + ["adaptive"]:
                rows = [measure(args, h, policies, pol, mix, s) for s in seeds]
                sl, mk = [r[0] for r in rows], [r[1] / 1000 for r in rows]
                med[pol] = (statistics.median(sl), statistics.median(mk))
                note = ""
                if pol == "adaptive":
                    best_sl = min(med[p][0] for p in fixed)
                    best_mk = min(med[p][1] for p in fixed)
                    a_sl, a_mk = med[pol]
                    at_or_below = a_sl <= best_sl and a_mk <= best_mk
                    strictly = a_sl < best_sl or a_mk < best_mk
                    losers = [p for p in fixed if med[p][0] < a_sl or med[p][1] < a_mk]
                    verdict = ("win" if at_or_below and strictly else "tie" if at_or_below
                               else "loses to " + ",".join(losers))
                    note = " ".join(f"{k}={v}" for k, v in rows[0][2].items()) + " / " + verdict
                print(f"| {name} | {h} | {pol} | {spread(sl, lambda x: f'{x:.2f}')} | "
                      f"{spread(mk, lambda x: f'{x:.0f}')} | {note} |", flush=True)


if __name__ == "__main__":
    main()
