#!/usr/bin/env python3
"""The user-level library's experiments, as analogues of the papers' measurements, with the papers'
numbers beside ours.

    python3 tools/experiments/library.py cliff [--cpus 2] [--repeat 3] [--h 7 --d 4 --work 20000]
    python3 tools/experiments/library.py fig35 [--cpus 2] [--repeat 3] [--target-ms 300]
    python3 tools/experiments/library.py grabs
    python3 tools/experiments/library.py place [--cpus 2] [--repeat 3] [--n 256]

cliff   Hood's performance cliff (Blumofe & Papadopoulos, section 2). The same work - knary(h, d, s=0) -
        statically partitioned (knary mode=static: one equal contiguous share of the nodes per process)
        and by work stealing (knary threads; adapt=no, so no process control), with P = 1 .. H+2
        processes on H harts under timeslice; and work stealing with process control (adapt=yes under
        partition, where the job alone is allotted every hart: processes beyond H suspend themselves). Speedup = par_us(P=1) / par_us(P) of the same mode and
        repeat. Model (paper): static P/ceil(P/H) - (H+1)/2 at P = H+1; work stealing stays near H.
fig35   Markatos Figs 3.5/3.6: the blocking tree and the blocking combination barrier with two
        processes per hart (procs = 2H) under timeslice. The context-switch cost c comes from kbench
        what=yield (two processes per hart: each yield of process 0 is two switches), the cost of a synth work unit u
        from synth alone on one process. For synth grain g, T = g u is the time between barriers and
        x = T / c that time in context switches; the ideal episode is 2T (two processes' work per hart),
        so overhead = iter_us / 2T - 1. Paper: tree < 10 % only when x > 20 (39 % at 4, up to 158 %);
        combination < 10 % already at x = 4, ~0 at 20, up to 30 % below 1.
grabs   Loop-scheduler grabs (synchronization operations) per loop from build/host/loopsched (P processes
        taking chunks in turn) for SOR N=512, transitive closure N=640 and adjoint N=75*75=5625 at
        P = 1..8, beside Markatos Tables 5.3-5.5 (in parentheses). AFS: the thesis gives per-processor
        averages of local and remote grabs; ours are the totals divided by P.
place   Fine-grain gauss (variant=fine), memory-conscious (place=mcs) vs load-balancing (place=lb)
        placement, sync=barrier and sync=cond, procs = H: par_us, row copies, and lb/mcs; coarse gauss as
        a reference. Paper (Table 4.1, Butterfly Plus, 8 processors): Gauss LB 101 s, MCS 71.5 s, lower
        bound 67.3 s - MCS ~30 % faster. On QEMU only the copying MCS saves shows in time (no NUMA
        latency, no caches): the copies column is the part that reproduces exactly.

Every QEMU configuration is booted --repeat times with seeds 1..R (the harts' tick phases differ per
seed); tables give the median and the min..max spread. Timings mean something only at harts <= free
host cores (the script warns otherwise); run it on an otherwise idle machine.
"""
import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedlab_harness import qemu  # noqa: E402
from expkit import boot_ok, med, spread  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def one(run, app):
    return next(r for r in run.results if r["app"] == app)


def cell(xs, fmt="{:.2f}", width=20):
    return f"{fmt.format(med(xs))} [{spread(xs, fmt)}]".rjust(width)


# ---- cliff ----

#: (column, policy, knary keys); process control needs the partition policy (the only one that publishes an
#: allotment): alone, the job is allotted every hart, so P - H of its processes suspend themselves
CLIFF_MODES = [("static", "timeslice", "mode=static,adapt=no"), ("steal", "timeslice", "mode=steal,adapt=no"),
               ("steal+pc", "partition", "mode=steal,adapt=yes")]


def cmd_cliff(args):
    h = args.cpus
    knary = f"h={args.h},d={args.d},s=0,work={args.work}"
    print(f"# cpus={h} quantum={args.quantum} repeat={args.repeat}: knary {knary}; static and steal under "
          "timeslice, steal+pc (process control) under partition")
    print("# speedup = par_us(P=1) / par_us(P), median [min..max]; model: static P/ceil(P/H), "
          "work stealing ~H")
    print(f"{'P':>3} " + " ".join(f"{name:>20}" for name, _, _ in CLIFF_MODES) + f" {'static model':>13}")
    par = {}                                        # (mode, P, seed) -> par_us
    for p in range(1, h + 3):
        cells = []
        for name, policy, keys in CLIFF_MODES:
            sp = []
            for seed in range(1, args.repeat + 1):
                tokens = [f"seed={seed}", f"policy={policy}", f"quantum={args.quantum}",
                          f"job=knary:{knary},{keys},procs={p}"]
                par[name, p, seed] = one(boot_ok(h, tokens), "knary")["par_us"]
                sp.append(par[name, 1, seed] / par[name, p, seed])
            cells.append(cell(sp))
        model = p / math.ceil(p / h)
        print(f"{p:3d} " + " ".join(cells) + f" {model:13.2f}", flush=True)


# ---- fig35 ----

def kbench_switch_us(cpus, seed, ops):
    """One process switch: with two processes per hart, each of process 0's yields is two switches (to the
    other process, whose own yield switches back), so half of kbench's ns_per_op."""
    run = boot_ok(cpus, [f"seed={seed}", "policy=timeslice", f"job=kbench:what=yield,ops={ops},procs={2 * cpus}"])
    return one(run, "kbench")["ns_per_op"] / 2000.0


def synth_iter_us(cpus, seed, procs, grain, iters, barrier="spin", shape="central"):
    run = boot_ok(cpus, [f"seed={seed}", "policy=timeslice",
                         f"job=synth:procs={procs},grain={grain},var=0,iters={iters},barrier={barrier},shape={shape}"])
    return one(run, "synth")["iter_us"]


FIG35_PAPER = {"tree": "<10% only above x=20; 39% at 4; up to 158%",
               "combination": "<10% at x=4; ~0 at 20; up to 30% below 1"}


def cmd_fig35(args):
    h = args.cpus
    procs = 2 * h
    cs, unit = [], []
    for seed in range(1, args.repeat + 1):
        cs.append(kbench_switch_us(h, seed, args.switch_ops))
        cal = args.calib_grain
        unit.append(synth_iter_us(h, seed, 1, cal, args.calib_iters) / cal)
    c, u = med(cs), med(unit)
    print(f"# cpus={h} policy=timeslice procs={procs} (2 per hart) barrier=block repeat={args.repeat}")
    print(f"# context switch c = {c:.2f} us [{spread(cs)}] (kbench what=yield, procs={procs}: ns_per_op / 2); "
          f"synth unit u = {u * 1000:.2f} ns [{spread([x * 1000 for x in unit])}]")
    print("# x = T/c (T = grain*u, the time between barriers); overhead = iter_us / 2T - 1, median [min..max] %")
    for shape, paper in FIG35_PAPER.items():
        print(f"#   paper {shape}: {paper}")
    print(f"{'x':>6} {'grain':>8} {'iters':>6} {'tree overhead %':>24} {'combination overhead %':>24}")
    for x in args.x:
        grain = max(1, round(x * c / u))
        t_us = grain * u
        iters = max(20, min(100000, round(args.target_ms * 1000 / (2 * t_us))))
        cells = []
        for shape in ("tree", "combination"):
            ov = [100.0 * (synth_iter_us(h, seed, procs, grain, iters, "block", shape) / (2 * t_us) - 1)
                  for seed in range(1, args.repeat + 1)]
            cells.append(cell(ov, "{:.1f}", 24))
        print(f"{x:6g} {grain:8d} {iters:6d} " + " ".join(cells), flush=True)


# ---- grabs ----

#: Markatos Tables 5.3-5.5: per P, (SS, GSS, FACT, TRAP, AFS remote, AFS local) per loop
PAPER_GRABS = {
    "SOR": (512, {1: (512, 1, 10, 3, 0, 1), 2: (512, 10, 18, 7, 0.5, 7.3), 4: (512, 23, 32, 13, 1.0, 16.8),
                  6: (512, 33, 50, 16, 1.1, 21.8), 8: (512, 43, 56, 27, 0.4, 27)}),
    "TC": (640, {1: (640, 1, 11, 3, 0, 1), 2: (640, 11, 20, 7, 1.5, 8.4), 4: (640, 23, 36, 13, 2.1, 16.8),
                 6: (640, 34, 52, 18, 1.1, 23.8), 8: (640, 45, 64, 22, 0.7, 28.3)}),
    "adjoint": (5625, {1: (5625, 1, 14, 3, 0, 1), 2: (5625, 14, 29, 7, 4, 11), 4: (5625, 31, 49, 14, 6.75, 20.2),
                       6: (5625, 46, 69, 21, 8.3, 29.3), 8: (5625, 61, 89, 28, 9.87, 35.6)}),
}


def loopsched(sched, n, p):
    exe = REPO / "build" / "host" / "loopsched"
    if not exe.is_file():
        sys.exit(f"{exe} is missing: run `make host`")
    out = subprocess.run([str(exe), "--sched", sched, "--n", str(n), "--p", str(p), "--quiet"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"grabs=(\d+) local=(\d+) remote=(\d+)", out)
    if not m:
        sys.exit(f"loopsched printed no grabs line:\n{out}")
    return tuple(int(v) for v in m.groups())


def cmd_grabs(args):
    print("# grabs per loop: ours (thesis Tables 5.3-5.5); build/host/loopsched, P processes taking turns")
    print("# AFS: local / remote grabs per process (total / P); the thesis's are per-processor averages too")
    print(f"{'loop':8} {'N':>5} {'P':>2} {'SS':>13} {'GSS':>9} {'FACT':>9} {'TRAP':>9} {'AFS local':>13} "
          f"{'AFS remote':>13}")
    for loop, (n, rows) in PAPER_GRABS.items():
        for p in range(1, 9):
            ours = {s: loopsched(s, n, p) for s in ("ss", "gss", "factoring", "trapezoid", "afs")}
            paper = rows.get(p)

            def pc(i, fmt="{:g}"):
                return f"({fmt.format(paper[i])})" if paper else ""
            _, afs_local, afs_remote = ours["afs"]
            print(f"{loop:8} {n:5d} {p:2d} {ours['ss'][0]:6d}{pc(0):>7} {ours['gss'][0]:4d}{pc(1):>5} "
                  f"{ours['factoring'][0]:4d}{pc(2):>5} {ours['trapezoid'][0]:4d}{pc(3):>5} "
                  f"{afs_local / p:6.1f}{pc(5):>7} {afs_remote / p:6.2f}{pc(4):>7}", flush=True)


# ---- place ----

def cmd_place(args):
    h = args.cpus
    procs = args.procs or h
    n = args.n
    print(f"# cpus={h} policy=timeslice gauss n={n} procs={procs} variant=fine barrier={args.wait} "
          f"repeat={args.repeat}")
    print("# par_us median [min..max]; copies = rows copied (in and back); lb/mcs = per-repeat ratio of par_us")
    print("# paper (Table 4.1, Butterfly Plus, 8 processors): LB 101 s, MCS 71.5 s, bound 67.3 s: lb/mcs 1.41")
    print(f"{'sync':8} {'mcs par_us':>28} {'lb par_us':>28} {'lb/mcs':>18} {'mcs copies':>11} {'lb copies':>10} "
          f"{'coarse par_us':>26}")
    for sync in ("barrier", "cond"):
        res = {"mcs": [], "lb": [], "coarse": []}
        copies = {}
        for seed in range(1, args.repeat + 1):
            for place in ("mcs", "lb"):
                r = one(boot_ok(h, [f"seed={seed}", "policy=timeslice",
                                    f"job=gauss:n={n},variant=fine,place={place},sync={sync},"
                                    f"barrier={args.wait},procs={procs}"]), "gauss")
                res[place].append(r["par_us"])
                copies[place] = r["copies"]
            r = one(boot_ok(h, [f"seed={seed}", "policy=timeslice",
                                f"job=gauss:n={n},variant=coarse,sync={sync},barrier={args.wait},procs={procs}"]),
                    "gauss")
            res["coarse"].append(r["par_us"])
        ratio = [lb / mcs for mcs, lb in zip(res["mcs"], res["lb"])]
        print(f"{sync:8} {cell(res['mcs'], '{:.0f}', 28)} {cell(res['lb'], '{:.0f}', 28)} {cell(ratio, '{:.2f}', 18)} "
              f"{copies['mcs']:11d} {copies['lb']:10d} {cell(res['coarse'], '{:.0f}', 26)}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=["cliff", "fig35", "grabs", "place"])
    ap.add_argument("--cpus", type=int, default=2, help="harts H (default 2)")
    ap.add_argument("--repeat", type=int, default=3, help="boots per configuration, seeds 1..R (default 3)")
    ap.add_argument("--quantum", default="10ms", help="cliff: the timeslice quantum (default 10ms)")
    ap.add_argument("--h", type=int, default=7, help="cliff: knary height (default 7)")
    ap.add_argument("--d", type=int, default=4, help="cliff: knary degree (default 4)")
    ap.add_argument("--work", type=int, default=20000, help="cliff: knary work units per node (default 20000)")
    ap.add_argument("--x", type=float, nargs="+", default=[0.5, 1, 2, 4, 8, 16, 32, 64],
                    help="fig35: times between barriers, in context switches")
    ap.add_argument("--target-ms", type=float, default=300, help="fig35: ideal length of one synth run (ms)")
    ap.add_argument("--switch-ops", type=int, default=20000, help="fig35: kbench yields per process")
    ap.add_argument("--calib-grain", type=int, default=100000, help="fig35: synth grain for the unit cost")
    ap.add_argument("--calib-iters", type=int, default=20, help="fig35: synth iterations for the unit cost")
    ap.add_argument("--n", type=int, default=256, help="place: gauss n (default 256)")
    ap.add_argument("--procs", type=int, default=0, help="place: processes (default H)")
    ap.add_argument("--wait", default="block", help="place: the barrier= wait kind (default block)")
    args = ap.parse_args()
    if args.experiment != "grabs":
        warning = qemu.oversubscription_warning(args.cpus)
        if warning:
            print(warning, file=sys.stderr)
    {"cliff": cmd_cliff, "fig35": cmd_fig35, "grabs": cmd_grabs, "place": cmd_place}[args.experiment](args)


if __name__ == "__main__":
    main()
