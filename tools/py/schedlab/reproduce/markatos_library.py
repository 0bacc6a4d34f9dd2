"""Markatos's library results: deprivation (Figs. 3.3, 3.4, 3.7), the blocking tree against the combination
barrier (Figs. 3.5, 3.6), memory-conscious placement (Table 4.1) and the loop schedulers' grabs (Tables
5.3-5.5) - rows 4 to 7 of the reproduction issue.

Deprivation: M synth processes on P < M harts under time-slicing (no migration), a barrier every T.  The
thesis's rules: a spinning tree barrier takes ceil(log4 M) ceil(T/Q) quanta, a centralized one one quantum
(T < Q/2), so central wins; blocking beats spinning; and (Fig. 3.7) with blocking barriers P harts are worth
P_M, the smallest z <= P with ceil(M/z) = ceil(M/P).  Our tree is 4-ary on arrival as the thesis's, so it has
two levels from 5 participants: M = 5 on 2 harts.
Figs. 3.5/3.6: two processes per hart, blocking barriers, time between barriers T = x block/wake costs; the
overhead is measured against the same work with one process per hart (each doing both shares).  The thesis's
blocking "yields only if another process shares the processor, and spins otherwise": our adaptive wait
(spin while every participant still to arrive is running, else sleep) is that rule.
"""

from __future__ import annotations

import re
import subprocess

from . import criteria as cr
from . import (REPO, ReproError, Row, Section, elapsed_us, experiment, fmt_spread, judged, median, restates,
               verdict_within, verdict_shape)
from . import models
from ..build import ensure
from .common import constants, plot


def iter_us(ctx, tokens, seed, cpus=None):
    return elapsed_us(ctx.boot(tokens, seed, cpus), "synth", key="iter_us")


@experiment("markatos-deprivation", "Markatos Figs. 3.3, 3.4, 3.7: barriers under processor deprivation",
            order=40, quick_seconds=6, full_seconds=15)
def deprivation(ctx) -> Section:
    reps, q_us = ctx.reps(3, 1), 2000
    c = constants(ctx)
    grain = max(1, round(200 / c["unit_us"]))            # T ~ 200 us < Q/2
    t_us = grain * c["unit_us"]
    base = f"policy=timeslice quantum={q_us}us job=synth:procs=5,grain={grain},iters=200"
    per = {}
    for shape in ("central", "tree"):
        for wait in ("spin", "block"):
            per[(shape, wait)] = [iter_us(ctx, f"{base},shape={shape},barrier={wait}", s) for s in range(1, reps + 1)]
    central, tree = median(per[("central", "spin")]), median(per[("tree", "spin")])
    quanta_tree = models.tree_barrier_quanta(5, t_us, q_us)
    rows = [Row("spinning, 5 processes on 2 harts: tree / central time per barrier", "central beats tree "
                "(Fig. 3.3)", f"{quanta_tree} quanta vs 1: {quanta_tree:.1f}",
                fmt_spread([a / b for a, b in zip(per[("tree", "spin")], per[("central", "spin")])]),
                verdict_shape(tree > central), "" if tree > central else "the tree was not slower here"),
            Row("tree barrier: spinning / blocking time per barrier", "blocking much better (Fig. 3.4)", "-",
                fmt_spread([a / b for a, b in zip(per[("tree", "spin")], per[("tree", "block")])]),
                verdict_shape(median(per[("tree", "spin")]) > 2 * median(per[("tree", "block")]),
                              median(per[("tree", "spin")]) > median(per[("tree", "block")])),
                "" if median(per[("tree", "spin")]) > 2 * median(per[("tree", "block")]) else
                "blocking gained less than the thesis's order of magnitude")]
    # Fig. 3.7: blocking barriers, M processes on P harts: time ~ ceil(M/P)
    for m in (3, 4):
        job = f"policy=timeslice quantum={q_us}us job=synth:procs={m},grain={grain},iters=200,barrier=block"
        on1 = [iter_us(ctx, job, s, cpus=1) for s in range(1, reps + 1)]
        on2 = [iter_us(ctx, job, s, cpus=ctx.cpus) for s in range(1, reps + 1)]
        model = m / -(-m // ctx.cpus)
        ratio = [a / b for a, b in zip(on1, on2)]
        v = verdict_within(median(ratio), model, 0.2)
        rows.append(Row(f"{m} processes, blocking: time on 1 hart / on {ctx.cpus} (P_M = "
                        f"{models.p_m(m, ctx.cpus)})", "ceil(M/1) / ceil(M/P) (Fig. 3.7)", f"{model:.2f}",
                        fmt_spread(ratio), v, "" if v == "reproduced" else "the harts did not divide the work by "
                        "ceil(M/P)"))
    rows.append(Row("16 processes on 15 harts take as long as on 8 (P_M = 8)", "Fig. 3.7", f"P_M(16, 15) = "
                    f"{models.p_m(16, 15)}", "-", "not on this machine", "needs 15 harts; the simulator runs it"))
    return Section("markatos-deprivation", "Markatos Figs. 3.3, 3.4, 3.7: barriers under processor deprivation",
                   "Markatos 1993, sec. 3.6.2", f"`{base},shape=central|tree,barrier=spin|block` on {ctx.cpus} "
                   f"harts (T = {t_us:.0f} us between barriers, Q = {q_us} us); M = 3, 4 blocking on 1 and "
                   f"{ctx.cpus} harts; {reps} seeds; synth's iter_us.", rows,
                   "Deprived of harts, a spinning barrier waits for descheduled participants a quantum at a time, "
                   "more so the more levels it has; a blocking one gives the hart to them.",
                   data={f"{k[0]}-{k[1]}": v for k, v in per.items()})


@experiment("markatos-combination", "Markatos Figs. 3.5, 3.6: blocking tree vs combination barrier", order=41,
            quick_seconds=4, full_seconds=12)
def combination(ctx) -> Section:
    h, reps = ctx.cpus, ctx.reps(3, 1)
    c = constants(ctx)
    cost = c["block_wake_us"]
    xs = (4, 20) if ctx.quick else (1, 4, 20, 60)
    curves = {"tree": [], "combination": []}
    for x in xs:
        grain = max(1, round(x * cost / c["unit_us"]))
        iters = max(50, min(5000, round(40000 / (2 * grain * c["unit_us"]))))
        for shape in curves:
            ov = []
            for seed in range(1, reps + 1):
                two = iter_us(ctx, f"job=synth:procs={2 * h},grain={grain},iters={iters},shape={shape},"
                                   "barrier=adaptive", seed)
                one = iter_us(ctx, f"job=synth:procs={h},grain={2 * grain},iters={iters},shape={shape},"
                                   "barrier=adaptive", seed)
                ov.append(100 * (two / one - 1))
            curves[shape].append(ov)
    data = {k: v for k, v in curves.items()} | {"x": list(xs)}
    rows = combination_rows(data, h)
    fig = plot(ctx, "markatos-fig3.5-3.6", lambda ax: (
        [ax.plot(xs, [median(o) for o in ovs], "o-", label=shape) for shape, ovs in curves.items()],
        ax.set_xscale("log"), ax.set_xlabel("x = time between barriers / block+wake cost"),
        ax.set_ylabel("overhead %"), ax.legend()))
    return Section("markatos-combination", "Markatos Figs. 3.5, 3.6: blocking tree vs combination barrier",
                   "Markatos 1993, sec. 3.6.2, Figs. 3.5 and 3.6",
                   f"`job=synth:procs={2 * h},grain=G,shape=tree|combination,barrier=adaptive` against "
                   f"`procs={h},grain=2G` (the same work, one process per hart); G from x: x block/wake costs "
                   f"({cost:.2f} us, kbench futex on one hart); {reps} seeds.", rows,
                   "The combination barrier meets the processes of one hart locally and sends one of them into "
                   "the tree, so a wake-up crosses harts once per hart rather than once per process.",
                   figures=[f for f in [fig] if f], data=data)


# Figs. 3.5 and 3.6 (sec. 3.6.2): 16 processes on 8 processors against 16 on 16, overhead in % of the time, x = the
# time between barriers in context switches. The text's numbers: "the overhead of tree barriers is 10% when the
# time between barriers is 20 times the cost of a context switch, and 39% when ... only 4 times"; combination:
# "as little as 4 times ... still less than 10%"; "20 times ... practically zero". A tree of 16 processes has two
# 4-ary levels; on 2 harts (4 processes) it has one, so the numbers are judged where 8 harts run 16 processes.
FIG = "Markatos 3.6.2, Figs. 3.5-3.6 (16 processes on 8 processors)"
OVERHEAD = (-100.0, 1000.0)         # % more time on half the processors: from faster (-) to 10x slower
COMBINATION = {
    ("tree", 4): cr.within("tree@4", 39, 0.25, "39 %", FIG, "one point of a measured curve; 25 % covers x's "
                           "unit (a context switch, measured here with ~20 % spread)", partly=0.5, domain=OVERHEAD,
                           needs_harts=8),
    ("tree", 20): cr.within("tree@20", 10, 0.5, "10 %", FIG, "a small percentage: 5 points either way",
                            domain=OVERHEAD, needs_harts=8),
    ("combination", 4): cr.bound("combination@4", "<", 10, "less than 10 %", FIG, "the thesis states it as a bound",
                                 domain=OVERHEAD, needs_harts=8),
    ("combination", 20): cr.bound("combination@20", "<=", 2, "practically zero", FIG, "'practically zero' read as "
                                  "at most 2 % of the time (the text gives no number)", domain=OVERHEAD,
                                  needs_harts=8),
    "order": cr.ordering(["tree@4", "combination@4"], "combination barriers' overhead much smaller than tree "
                         "barriers'", FIG, "the mechanism (one cross-hart wake per hart, not per process) exists "
                         "with 2 processes per hart, so it is judged at 2 harts", domain=OVERHEAD),
}


def overhead_series(data: dict) -> dict:
    """'shape@x' -> the overheads (%) over the seeds, from the section's data (curves per x)."""
    return {f"{shape}@{x}": ov for shape in ("tree", "combination") for x, ov in zip(data["x"], data[shape])}


@restates("markatos-combination")
def combination_rows(data: dict, cpus: int, old: dict | None = None) -> list[Row]:
    m = overhead_series(data)
    rows = [judged(f"{shape}, x = {x}: overhead (%)", c, {c.of: m[c.of]}, harts=cpus, fmt="{:.0f}")
            for (shape, x), c in ((k, v) for k, v in COMBINATION.items() if k != "order") if c.of in m]
    order = COMBINATION["order"]
    if all(n in m for n in order.names):
        rows.append(judged("combination below tree at x = 4", order, {n: m[n] for n in order.names}, harts=cpus,
                           fmt="{:.0f}"))
    return rows


@experiment("markatos-table4.1", "Markatos Table 4.1: memory-conscious placement vs load balancing", order=50,
            quick_seconds=2, full_seconds=4)
def placement(ctx) -> Section:
    reps = ctx.reps(5, 2)
    res = {}
    for place in ("mcs", "lb"):
        res[place] = [ctx.boot(f"job=gauss:n=256,variant=fine,sync=barrier,place={place}", s).results[0]
                      for s in range(1, reps + 1)]
    t = [b["par_us"] / a["par_us"] for a, b in zip(res["mcs"], res["lb"])]
    cp = [b["copies"] / max(a["copies"], 1) for a, b in zip(res["mcs"], res["lb"])]
    data = {"time_lb_over_mcs": t, "copies_lb_over_mcs": cp}
    rows = placement_rows(data, ctx.cpus)
    return Section("markatos-table4.1", "Markatos Table 4.1: memory-conscious placement vs load balancing",
                   "Markatos 1993, sec. 4, Table 4.1 (Butterfly Plus, 8 processors)",
                   f"`job=gauss:n=256,variant=fine,sync=barrier,place=mcs|lb`; {reps} seeds; par_us and copies.",
                   rows, "The thesis's gain is remote memory; ours can only be the copying of rows into a "
                   "process's buffer that placing a thread where its data is avoids.",
                   data=data)


# Table 4.1 (sec. 4.2.2, Butterfly Plus, 8 processors), seconds: Gauss LB 101, MCS 71.5. The gain is the data a
# thread finds where it runs, which a second processor already shows; the thesis prints no count of copies.
TABLE41 = {
    "time": cr.within("time_lb_over_mcs", 101 / 71.5, 0.15, "101 / 71.5 = 1.41", "Markatos Table 4.1",
                      "the table's two times, each to 3 digits, and our seeds' spread of about 10 %; partially "
                      "within 45 % (8 nodes there, 2 here); never at or below 1", partly=0.45, side=1.0,
                      domain=(0.0, 10.0)),
    "copies": cr.measured("no count of copies in the thesis", "Markatos Table 4.1",
                          "the thesis gives times only; the copies are what our time gain is made of"),
}


@restates("markatos-table4.1")
def placement_rows(data: dict, cpus: int, old: dict | None = None) -> list[Row]:
    t, cp = data["time_lb_over_mcs"], data["copies_lb_over_mcs"]
    crosses = min(t) <= 1.0 <= max(t)
    return [judged("time, load balancing / memory-conscious", TABLE41["time"], {"time_lb_over_mcs": t}, harts=cpus,
                   why=("the spread crosses 1; " if crosses else "") + "QEMU has no remote-memory latency: only "
                   "the copies MCS avoids show in time"),
            judged("row copies, load balancing / memory-conscious", TABLE41["copies"], {"copies_lb_over_mcs": cp},
                   harts=cpus)]


PAPER_GRABS = {  # Tables 5.3-5.5: per P, (SS, GSS, FACT, TRAP)
    "SOR": (512, {1: (512, 1, 10, 3), 2: (512, 10, 18, 7), 4: (512, 23, 32, 13), 6: (512, 33, 50, 16), 8: (512, 43, 56, 27)}),
    "TC": (640, {1: (640, 1, 11, 3), 2: (640, 11, 20, 7), 4: (640, 23, 36, 13), 6: (640, 34, 52, 18), 8: (640, 45, 64, 22)}),
    "adjoint": (5625, {1: (5625, 1, 14, 3), 2: (5625, 14, 29, 7), 4: (5625, 31, 49, 14), 6: (5625, 46, 69, 21),
                       8: (5625, 61, 89, 28)}),
}


def grabs(sched: str, n: int, p: int) -> int:
    exe = ensure(REPO / "build" / "host" / "loopsched", "build/host/loopsched")
    out = subprocess.run([str(exe), "--sched", sched, "--n", str(n), "--p", str(p), "--quiet"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"grabs=(\d+)", out)
    if not m:
        raise ReproError(f"loopsched printed no grabs line:\n{out}")
    return int(m.group(1))


@experiment("markatos-tables5", "Markatos Tables 5.3-5.5: synchronization operations of the loop schedulers",
            order=51, quick_seconds=2, full_seconds=2)
def loop_grabs(ctx) -> Section:
    rows, data = [], {}
    for k, sched in enumerate(("ss", "gss", "factoring", "trapezoid")):
        match, total, misses = 0, 0, []
        for loop, (n, per_p) in PAPER_GRABS.items():
            for p, paper in per_p.items():
                ours = grabs(sched, n, p)
                data[f"{sched}-{loop}-{p}"] = ours
                total += 1
                if ours == paper[k]:
                    match += 1
                else:
                    misses.append(f"{loop} P={p}: {ours} vs {paper[k]}")
        why = ""
        if misses:
            why = "; ".join(misses) + (": neither rounding down (ours) nor up gives the thesis's count here"
                                       if sched == "factoring" else ": Tzen & Ni's formula (f = floor(N/2P), "
                                       "l = 1, delta = floor((f-l)/(n-1))) gives this; the thesis reports one more"
                                       if sched == "trapezoid" else "")
        rows.append(Row(f"{sched}: entries equal to the thesis's", f"{total} entries", "-", f"{match} of {total}",
                        "reproduced" if match == total else "partially", why))
    return Section("markatos-tables5", "Markatos Tables 5.3-5.5: synchronization operations of the loop schedulers",
                   "Markatos 1993, sec. 5, Tables 5.3-5.5 (SOR N=512, transitive closure N=640, adjoint N=5625)",
                   "`build/host/loopsched --sched S --n N --p P` (lib/loopsched.c, the library's own code, P "
                   "processes taking turns): grab counts do not depend on timing.", rows,
                   "GSS and factoring round chunks down (at least one iteration), which is what the thesis's "
                   "counts show. AFS's remote grabs depend on timing on a real machine (the thesis gives averages); "
                   "taking turns, ours are all local.", data=data)
