#!/usr/bin/env python3
"""The partition / process-control experiments of issue 5, as analogues of the papers' measurements.

    python3 tools/experiments/partition.py markatos353 [--cpus 2] [--repeat 3]
    python3 tools/experiments/partition.py tucker      [--cpus 2] [--repeat 3]

markatos353  Markatos 3.5.3: gauss alone on all harts, then with a background job (hog) arriving 20 ms in,
             under partition, gang and timeslice: slowdown = elapsed with the hog / alone. Coarse grain
             (barrier=adaptive: spin while the partner runs, block when it does not) and fine grain
             (variant=fine, threads: nothing to migrate). Paper: 1.97 (coarse), 1.47 (fine).
tucker       Tucker & Gupta: three thread-library jobs (knary) with as many processes as harts arriving
             one after another, under partition with adapt=yes (process control) and adapt=no: each
             job's completion time; the runnable processes over time (from the trace: created, not
             blocked, not exited); and the reaction time from each arrival's repartition to the moment
             the excess process suspended (its futex block). Paper: gauss 66 s without control, 28 s with.

Medians over --repeat boots with seeds 1..R, min..max spread. Timings mean something only at harts <=
host cores on a quiet machine.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedlab_harness import qemu, trace as tr  # noqa: E402
from expkit import boot_ok, med, spread  # noqa: E402


def cmd_markatos353(args):
    h = args.cpus
    versions = [("coarse", f"job=gauss:n={args.gauss_n},variant=coarse,sync=barrier,barrier=adaptive,procs={h}"),
                ("fine", f"job=gauss:n={args.fine_n},variant=fine,sync=barrier,procs={h}")]
    print(f"# cpus={h} repeat={args.repeat}; background: hog:procs={h},at=20ms; paper (partition): coarse 1.97, "
          "fine 1.47")
    print(f"{'version':8} {'policy':10} {'alone ms':>9} {'mix ms':>9} {'slowdown':>9}  spread")
    for name, job in versions:
        if args.only and name != args.only:
            continue
        for policy in ("partition", "gang", "timeslice"):
            alone, mix, ratio = [], [], []
            for seed in range(1, args.repeat + 1):
                base = [f"seed={seed}", f"policy={policy}", job]
                a = next(r for r in boot_ok(h, base).results if r["app"] == "gauss")["elapsed_us"]
                m = next(r for r in boot_ok(h, base + [f"job=hog:procs={h},at=20ms"]).results
                         if r["app"] == "gauss")["elapsed_us"]
                alone.append(a)
                mix.append(m)
                ratio.append(m / a)
            print(f"{name:8} {policy:10} {med(alone) / 1000:9.1f} {med(mix) / 1000:9.1f} {med(ratio):9.2f}  "
                  f"{spread(ratio)}", flush=True)


def runnable_profile(trace, job):
    """[(time_us, runnable processes of job)] at every change: created and not blocked and not exited."""
    state, points = {}, []
    for r in trace.records:
        if r.job != job or r.event not in ("new", "wake", "blk", "exit"):
            continue
        state[r.proc] = r.event in ("new", "wake")
        points.append((r.time_us, sum(state.values())))
    return points


def reaction_times(trace, jobs):
    """For each repartition that shrank an adaptive job: time from the rep to that job's next blk."""
    out = []
    for rep in (r for r in trace.records if r.event == "rep"):
        if rep.job not in jobs:
            continue
        blk = next((r for r in trace.records if r.time_us >= rep.time_us and r.job == rep.job and r.event == "blk"),
                   None)
        if blk is not None:
            out.append(blk.time_us - rep.time_us)
    return out


def cmd_tucker(args):
    h = args.cpus
    print(f"# cpus={h} repeat={args.repeat} policy=partition: 3 x knary:h={args.knary_h},work=1000,procs={h}, "
          f"arriving {args.gap_ms} ms apart; paper: gauss 66 s without control, 28 s with")
    print(f"{'adapt':6} {'job':>4} {'elapsed ms':>11}  spread        {'mean runnable':>13} {'max runnable':>12}")
    reactions = []
    for adapt in ("yes", "no"):
        per_job, runnable = {}, {}
        for seed in range(1, args.repeat + 1):
            jobs = [f"job=knary:h={args.knary_h},work=1000,procs={h},adapt={adapt}"
                    + (f",at={k * args.gap_ms}ms" if k else "") for k in range(3)]
            run = boot_ok(h, [f"seed={seed}", "policy=partition", "trace=on"] + jobs)
            trace = tr.parse_trace(run.console)
            for r in run.results:
                per_job.setdefault(r["job"], []).append(r["elapsed_us"])
            # runnable processes of all jobs together, time-weighted over the run
            levels, last, area, peak = {j: 0 for j in (1, 2, 3)}, None, 0.0, 0
            events = sorted((t, j, n) for j in (1, 2, 3) for t, n in runnable_profile(trace, j))
            for t, j, n in events:
                if last is not None:
                    area += sum(levels.values()) * (t - last)
                levels[j] = n
                peak = max(peak, sum(levels.values()))
                last = t
            span = events[-1][0] - events[0][0] if events else 1.0
            runnable.setdefault("mean", []).append(area / span if span else 0.0)
            runnable.setdefault("max", []).append(peak)
            if adapt == "yes":
                reactions += reaction_times(trace, {1, 2, 3})
        for job in sorted(per_job):
            xs = per_job[job]
            print(f"{adapt:6} {job:4d} {med(xs) / 1000:11.1f}  {spread([x / 1000 for x in xs], '{:.1f}'):12} "
                  f"{med(runnable['mean']):13.2f} {med(runnable['max']):12.0f}", flush=True)
    if reactions:
        print(f"# reaction (repartition -> excess process suspended), adapt=yes: median "
              f"{med(reactions) / 1000:.2f} ms, max {max(reactions) / 1000:.2f} ms over {len(reactions)} repartitions")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=["markatos353", "tucker"])
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gauss-n", type=int, default=384)
    ap.add_argument("--fine-n", type=int, default=320, help="markatos353: fine gauss n (it must outlast the "
                    "hog's arrival at 20 ms by far)")
    ap.add_argument("--only", choices=["coarse", "fine"], help="markatos353: one version only")
    ap.add_argument("--knary-h", type=int, default=10)
    ap.add_argument("--gap-ms", type=int, default=100)
    args = ap.parse_args()
    warning = qemu.oversubscription_warning(args.cpus)
    if warning:
        print(warning, file=sys.stderr)
    {"markatos353": cmd_markatos353, "tucker": cmd_tucker}[args.experiment](args)


if __name__ == "__main__":
    main()
