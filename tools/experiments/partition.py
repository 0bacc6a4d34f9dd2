#!/usr/bin/env python3
"""Partitions and process control (Markatos 3.5.3; Tucker & Gupta 1989) against the other policies.

    python3 tools/experiments/partition.py markatos353 [--cpus 2] [--repeat 5] [--wait spin]
    python3 tools/experiments/partition.py pair        [--cpus 2] [--repeat 5]
    python3 tools/experiments/partition.py tucker      [--cpus 2] [--repeat 3]
    python3 tools/experiments/partition.py react       [--cpus 2] [--repeat 5]

markatos353  Markatos 3.5.3: each of the four gauss versions (coarse/fine x barrier/cond) alone on all harts,
             then with a compute-bound background job (hog, H processes) arriving at the same time (no head
             start), under every policy: slowdown = par_us with the hog / par_us alone (the thesis times
             the parallel part). Paper (partition, 16 processors split 8 + 8): 1.97, 1.96, 1.47, 1.8.
pair         Two spinning barrier jobs (oddeven and synth, H processes each) sharing the H harts: slowdown of
             each under every policy (issue 9's motivating case: slowdowns in the hundreds under partition
             before the barrier apps' workers followed their allotment).
tucker       Tucker & Gupta: three busy-waiting applications (gauss, synth, oddeven with spinning barriers),
             H processes each, arriving --gap-ms apart, under global (uncontrolled time-sharing, their
             UMAX baseline), partition with process control (adapt=yes), partition without (adapt=no),
             gang and timeslice: each job's elapsed time; the runnable processes of the three over time
             (from the trace: created, not blocked, not exited; a suspended process is blocked), mean and
             peak; the mean reaction time (repartition -> the excess process suspended, the RESULT's
             react_us). Paper: gauss 66 s without control, 28 s with.
react        Process control's reaction time per adaptive app: the app alone on all H harts under partition,
             a hog (H processes) arriving at --react-at-ms halves its allotment; the RESULT's react_us (the
             allotment's stamp -> the excess process suspended) and react_max_us, beside the app's barrier
             episode (par_us per barrier: gauss n columns, oddeven n phases, synth one per iteration).
             Target (issue 9): within one barrier episode. (Fine gauss has no workers: its short threads
             are spread anew at every safe point, and it reports suspends= only.)

Medians over --repeat boots with seeds 1..R, min..max spread. Timings mean something only at harts <= host
cores on a quiet machine.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedlab_harness import qemu, trace as tr  # noqa: E402
from expkit import boot_ok, med, spread  # noqa: E402


#: (version, job keys) of Markatos 3.5.3's four gauss versions; sizes from --gauss-n / --fine-n
def gauss_versions(args, h):
    c, f = args.gauss_n, args.fine_n
    return [("coarse barrier", f"job=gauss:n={c},variant=coarse,sync=barrier,barrier={args.wait},procs={h}", 1.97),
            ("coarse cond", f"job=gauss:n={c},variant=coarse,sync=cond,barrier={args.wait},procs={h}", 1.96),
            ("fine barrier", f"job=gauss:n={f},variant=fine,sync=barrier,barrier={args.wait},procs={h}", 1.47),
            ("fine cond", f"job=gauss:n={f},variant=fine,sync=cond,barrier={args.wait},procs={h}", 1.8)]


POLICIES = ("partition", "gang", "timeslice", "global")


def par_us(run, app="gauss"):
    return next(r for r in run.results if r["app"] == app)["par_us"]


def cmd_markatos353(args):
    h = args.cpus
    print(f"# cpus={h} repeat={args.repeat} wait={args.wait}; background hog:procs={h} arriving at 0 (no head "
          "start); slowdown = par_us with the hog / par_us alone, per seed, median [min..max]")
    print(f"{'version':15} {'paper':>5} " + " ".join(f"{p:>20}" for p in POLICIES))
    for name, job, paper in gauss_versions(args, h):
        if args.only and args.only not in name:
            continue
        cells = []
        for policy in POLICIES:
            ratio = []
            for seed in range(1, args.repeat + 1):
                base = [f"seed={seed}", f"policy={policy}", job]
                alone = par_us(boot_ok(h, base))
                mix = par_us(boot_ok(h, base + [f"job=hog:procs={h}"]))
                ratio.append(mix / alone)
            cells.append(f"{med(ratio):6.2f} [{spread(ratio)}]")
        print(f"{name:15} {paper:5.2f} " + " ".join(f"{c:>20}" for c in cells), flush=True)


def cmd_pair(args):
    """Two spinning barrier jobs (oddeven and synth, H processes each) sharing H harts."""
    h = args.cpus
    jobs = [f"job=oddeven:n={args.oddeven_n},procs={h},barrier=spin", f"job=synth:iters={args.synth_iters},procs={h},barrier=spin"]
    print(f"# cpus={h} repeat={args.repeat}: {' '.join(jobs)}; slowdown of par_us (mix / alone), median [min..max]")
    print(f"{'policy':10} {'oddeven':>20} {'synth':>20}")
    for policy in POLICIES:
        ratios = {"oddeven": [], "synth": []}
        for seed in range(1, args.repeat + 1):
            base = [f"seed={seed}", f"policy={policy}"]
            mix = boot_ok(h, base + jobs)
            for job in jobs:
                app = job.split("=")[1].split(":")[0]
                ratios[app].append(par_us(mix, app) / par_us(boot_ok(h, base + [job]), app))
        print(f"{policy:10} " + " ".join(f"{med(v):8.2f} [{spread(v)}]".rjust(20) for v in ratios.values()),
              flush=True)


def runnable_profile(trace, job):
    """[(time_us, runnable processes of job)] at every change: created and not blocked and not exited."""
    state, points = {}, []
    for r in trace.records:
        if r.job != job or r.event not in ("new", "wake", "blk", "exit"):
            continue
        state[r.proc] = r.event in ("new", "wake")
        points.append((r.time_us, sum(state.values())))
    return points


def mean_and_peak_runnable(trace, jobs):
    """Runnable processes of all `jobs` together: time-weighted mean over the run, and the peak."""
    levels, last, area, peak = {j: 0 for j in jobs}, None, 0.0, 0
    events = sorted((t, j, n) for j in jobs for t, n in runnable_profile(trace, j))
    for t, j, n in events:
        if last is not None:
            area += sum(levels.values()) * (t - last)
        levels[j] = n
        peak = max(peak, sum(levels.values()))
        last = t
    span = events[-1][0] - events[0][0] if events else 0.0
    return (area / span if span else 0.0), peak


#: Tucker & Gupta's mix, busy-waiting as theirs did (spinning barriers): three applications with as many
#: processes as harts, started one after another
TUCKER_APPS = ("gauss:n={gn},barrier=spin", "synth:iters={si},grain=500,barrier=spin", "oddeven:n={on},barrier=spin")
#: (label, policy, adapt): uncontrolled global time-sharing (their UMAX baseline), partitions with process
#: control, partitions without it, and the other two policies for comparison
TUCKER_RUNS = (("global", "global", "yes"), ("partition+pc", "partition", "yes"),
               ("partition", "partition", "no"), ("gang", "gang", "yes"), ("timeslice", "timeslice", "yes"))


def cmd_tucker(args):
    h = args.cpus
    apps = [a.format(gn=args.gauss_n, si=args.synth_iters, on=args.oddeven_n) for a in TUCKER_APPS]
    jobs = [f"job={a},procs={h}" + (f",at={k * args.gap_ms}ms" if k else "") for k, a in enumerate(apps)]
    print(f"# cpus={h} repeat={args.repeat}: {' '.join(jobs)} (+adapt=)")
    print("# paper (16 processors, 16 processes each, 10 s apart): gauss 66 s without control, 28 s with (2.4x)")
    print(f"{'run':13} " + " ".join(f"{a.split(':')[0] + ' ms':>20}" for a in apps)
          + f" {'mean runnable':>13} {'peak':>5} {'react ms':>9}")
    medians = {}
    for label, policy, adapt in TUCKER_RUNS:
        per_job, mean_r, peak_r, react = {}, [], [], []
        for seed in range(1, args.repeat + 1):
            run = boot_ok(h, [f"seed={seed}", f"policy={policy}", "trace=on"] + [f"{j},adapt={adapt}" for j in jobs])
            trace = tr.parse_trace(run.console)
            for r in run.results:
                per_job.setdefault(r["job"], []).append(r["elapsed_us"] / 1000)
                if r.get("suspends"):
                    react.append(r["react_us"] / 1000)
            m, p = mean_and_peak_runnable(trace, (1, 2, 3))
            mean_r.append(m)
            peak_r.append(p)
        medians[label] = {j: med(v) for j, v in per_job.items()}
        cells = [f"{med(per_job[j]):8.1f} [{spread(per_job[j], '{:.0f}')}]" for j in sorted(per_job)]
        print(f"{label:13} " + " ".join(f"{c:>20}" for c in cells) + f" {med(mean_r):13.2f} {med(peak_r):5.0f} "
              f"{(med(react) if react else 0):9.2f}", flush=True)
    if "global" in medians and "partition+pc" in medians:
        ratios = [medians["global"][j] / medians["partition+pc"][j] for j in sorted(medians["global"])]
        print("# global / partition+pc, per job: " + " ".join(f"{x:.2f}" for x in ratios) + " (paper, gauss: 2.36)")


#: (label, job keys, barrier episodes from the RESULT) of the adaptive barrier apps
REACT_APPS = (("gauss coarse", "gauss:n={gn},variant=coarse", lambda r: r["n"]),
              ("gauss cond", "gauss:n={gn},variant=coarse,sync=cond", lambda r: r["n"]),
              ("oddeven", "oddeven:n={on}", lambda r: r["n"]),
              ("synth", "synth:iters={si}", lambda r: r["iters"]))


def cmd_react(args):
    h = args.cpus
    print(f"# cpus={h} repeat={args.repeat}: each app alone (procs={h}, spinning barriers) under partition, "
          f"hog:procs={h} arriving at {args.react_at_ms} ms; median [min..max] over seeds")
    print(f"{'app':13} {'react us':>18} {'react max us':>18} {'episode us':>18} {'react / episode':>16}")
    for label, keys, episodes in REACT_APPS:
        keys = keys.format(gn=args.gauss_n * 2, fn=args.fine_n, on=args.oddeven_n * 4, si=args.synth_iters * 8)
        react, rmax, episode = [], [], []
        for seed in range(1, args.repeat + 1):
            run = boot_ok(h, [f"seed={seed}", "policy=partition", f"job={keys},procs={h}",
                              f"job=hog:procs={h},at={args.react_at_ms}ms"])
            r = next(x for x in run.results if x["app"] != "hog")
            if not r.get("suspends"):
                sys.exit(f"{label}: no suspension (did it end before the hog arrived?)\n{run.console[-800:]}")
            if "react_us" not in r:
                sys.exit(f"{label}: no react_us in {r}")
            react.append(r["react_us"])
            rmax.append(r["react_max_us"])
            episode.append(r["par_us"] / episodes(r))
        ratio = [a / b for a, b in zip(react, episode)]
        print(f"{label:13} {med(react):7.0f} [{spread(react, '{:.0f}'):>9}] {med(rmax):7.0f} [{spread(rmax, '{:.0f}'):>9}] "
              f"{med(episode):7.1f} [{spread(episode, '{:.0f}'):>9}] {med(ratio):7.2f} [{spread(ratio)}]", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=["markatos353", "pair", "tucker", "react"])
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gauss-n", type=int, default=384)
    ap.add_argument("--fine-n", type=int, default=320, help="markatos353: fine gauss n (it must outlast the "
                    "hog's arrival at 20 ms by far)")
    ap.add_argument("--only", help="markatos353: the versions whose name contains this (coarse, fine, cond...)")
    ap.add_argument("--wait", default="spin", help="markatos353: the wait kind of every version (barrier=)")
    ap.add_argument("--oddeven-n", type=int, default=6000)
    ap.add_argument("--synth-iters", type=int, default=5000)
    ap.add_argument("--gap-ms", type=int, default=100)
    ap.add_argument("--react-at-ms", type=int, default=50, help="react: when the hog arrives")
    args = ap.parse_args()
    warning = qemu.oversubscription_warning(args.cpus)
    if warning:
        print(warning, file=sys.stderr)
    {"markatos353": cmd_markatos353, "pair": cmd_pair, "tucker": cmd_tucker,
     "react": cmd_react}[args.experiment](args)


if __name__ == "__main__":
    main()
