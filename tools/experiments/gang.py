#!/usr/bin/env python3
"""The gang-scheduling experiments of issue 3, as analogues of the papers' measurements.

    python3 tools/experiments/gang.py skew       [--cpus 2] [--repeat 3]
    python3 tools/experiments/gang.py markatos352 [--cpus 2] [--repeat 3]
    python3 tools/experiments/gang.py feitelson4  [--cpus 2] [--repeat 3]
    python3 tools/experiments/gang.py feitelson2  [--cpus 2] [--repeat 3]

skew         slot-switch skew, latency and per-hart cost from the trace of gauss x2 under gang
             (tools/schedlab_harness/trace.py switch_stats), as a fraction of the quantum.
markatos352  Markatos 3.5.2: gauss (coarse, barrier=spin) alone and with 1, 2, 3 other gang jobs of the
             same width (hog, which computes until the foreground job ends), and with a background job of
             half the width (alternates off and on). Paper: slowdowns 2.01, 3.01, 4.01.
feitelson4   Feitelson & Rudolph experiment 4: synth procs=2, grain=var=small, load 1..4 (LOAD copies of
             the job) under gang+spin, timeslice+spin, timeslice+block: time per iteration vs load.
             Paper: linear, quadratic, linear.
feitelson2   Feitelson & Rudolph experiment 2: load 3, var=grain, grain swept over two decades:
             gang+spin vs timeslice+block time per iteration, and where they cross.

Every configuration is booted --repeat times with seeds 1..R (the harts' tick phases differ per seed);
the tables give the median and the min..max spread. Timings mean something only at harts <= host cores.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedlab_harness import qemu  # noqa: E402
from expkit import boot_ok, med, spread  # noqa: E402


def first_fg(run, app):
    return next(r for r in run.results if r["app"] == app)


def cmd_skew(args):
    from schedlab_harness import trace as tr
    print(f"# cpus={args.cpus} policy=gang: gauss n=384 spin x2, quantum 10ms and 2ms")
    print(f"{'quantum':>8} {'switches':>8} {'skew med us':>11} {'skew max us':>11} {'latency med us':>14} "
          f"{'cost med us':>11} {'overhead %':>10}")
    for q in (10000, 2000):
        for seed in range(1, args.repeat + 1):
            run = boot_ok(args.cpus, [f"seed={seed}", "policy=gang", "trace=on", f"quantum={q}us",
                                      "job=gauss:n=384,barrier=spin", "job=gauss:n=384,barrier=spin"])
            s = tr.switch_stats(tr.parse_trace(run.console))
            if not s.count:
                sys.exit("no slot switches in the trace: the jobs were too short")
            print(f"{q / 1000:6.0f}ms {s.count:8d} {s.skew_median_us:11.1f} {s.skew_max_us:11.1f} "
                  f"{s.latency_median_us:14.1f} {s.cost_median_us:11.1f} {s.overhead_pct:10.3f}"
                  f"{'  (' + str(s.missing_acks) + ' acks missing: host busy?)' if s.missing_acks else ''}",
                  flush=True)


def cmd_markatos352(args):
    h = args.cpus
    job = f"job=gauss:n={args.gauss_n},sync=barrier,barrier=spin,procs={h}"
    half = max(1, h // 2)
    configs = [("alone", [], "")] + [
        (f"+{k} gang job{'s' if k > 1 else ''} (hog:procs={h})", [f"job=hog:procs={h}"] * k, "") for k in (1, 2, 3)
    ] + [
        (f"+hog:procs={half} (half width)", [f"job=hog:procs={half}"], ""),
        (f"+hog:procs={half} alternates=on", [f"job=hog:procs={half}"], "alternates=on"),
    ]
    print(f"# cpus={h} policy=gang quantum=10ms repeat={args.repeat}: {job}")
    print(f"{'configuration':36} {'elapsed ms':>10} {'slowdown':>9}  spread      paper")
    paper = {1: "2.01", 2: "3.01", 3: "4.01"}
    alone = {}
    for i, (name, others, extra) in enumerate(configs):
        times, ratios = [], []
        for seed in range(1, args.repeat + 1):
            tokens = [f"seed={seed}", "policy=gang"] + ([extra] if extra else []) + [job] + others
            t = first_fg(boot_ok(h, tokens), "gauss")["elapsed_us"]
            times.append(t)
            if i == 0:
                alone[seed] = t
            ratios.append(t / alone[seed])
        note = paper.get(i, "") if i <= 3 else ""
        print(f"{name:36} {med(times) / 1000:10.1f} {med(ratios):9.2f}  {spread(ratios):10}  {note}", flush=True)


def synth_iter_us(cpus, policy, barrier, grain, var, iters, load, seed):
    job = f"job=synth:procs=2,grain={grain},var={var},iters={iters},barrier={barrier}"
    run = boot_ok(cpus, [f"seed={seed}", f"policy={policy}"] + [job] * load)
    # every copy's mean iteration time; the load's figure is their median
    return med([r["iter_us"] for r in run.results if r["app"] == "synth"])


MODES = [("gang", "spin"), ("timeslice", "spin"), ("timeslice", "block")]


def cmd_feitelson4(args):
    g = args.grain
    print(f"# cpus={args.cpus} synth procs=2 grain={g} var={g} iters={args.iters} quantum=10ms repeat={args.repeat}")
    print("# time per iteration (us), median [min..max]; paper: gang+spin linear, timeslice+spin quadratic, "
          "timeslice+block linear")
    print(f"{'load':>4} " + " ".join(f"{p + '+' + b:>24}" for p, b in MODES))
    for load in range(1, 5):
        cells = []
        for policy, barrier in MODES:
            # uncoordinated spinning is ~l^2 slower per iteration: a tenth of the iterations still spans
            # many quanta and keeps a boot under a minute
            iters = args.iters // 10 if (policy, barrier) == ("timeslice", "spin") and load > 1 else args.iters
            xs = [synth_iter_us(args.cpus, policy, barrier, g, g, iters, load, s)
                  for s in range(1, args.repeat + 1)]
            cells.append(f"{med(xs):9.1f} [{spread(xs, '{:.1f}')}]")
        print(f"{load:4d} " + " ".join(f"{c:>24}" for c in cells), flush=True)


def cmd_feitelson2(args):
    print(f"# cpus={args.cpus} synth procs=2 load=3 var=grain quantum=10ms repeat={args.repeat}; "
          "units of 5 instructions")
    print(f"{'grain':>6} {'gang+spin us/iter':>22} {'timeslice+block us/iter':>26} {'block/gang':>10}")
    for grain in (100, 300, 1000, 3000, 10000, 30000):
        iters = max(1000, 4_000_000 // grain)      # alone: ~100 ms or more, many quanta
        res = {}
        for policy, barrier in (("gang", "spin"), ("timeslice", "block")):
            res[policy] = [synth_iter_us(args.cpus, policy, barrier, grain, grain, iters, 3, s)
                           for s in range(1, args.repeat + 1)]
        ratio = [b / a for a, b in zip(res["gang"], res["timeslice"])]
        print(f"{grain:6d} {med(res['gang']):10.1f} [{spread(res['gang'], '{:.1f}')}] "
              f"{med(res['timeslice']):12.1f} [{spread(res['timeslice'], '{:.1f}')}] {med(ratio):10.2f}",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=["skew", "markatos352", "feitelson4", "feitelson2"])
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gauss-n", type=int, default=512, help="markatos352: gauss n")
    ap.add_argument("--grain", type=int, default=200, help="feitelson4: grain = var (units)")
    ap.add_argument("--iters", type=int, default=20000,
                    help="feitelson4: iterations (alone they must span many quanta)")
    args = ap.parse_args()
    warning = qemu.oversubscription_warning(args.cpus)
    if warning:
        print(warning, file=sys.stderr)
    {"skew": cmd_skew, "markatos352": cmd_markatos352, "feitelson4": cmd_feitelson4,
     "feitelson2": cmd_feitelson2}[args.experiment](args)


if __name__ == "__main__":
    main()
