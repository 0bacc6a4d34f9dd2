"""Feitelson & Rudolph's four experiments with their model beside every cell (row 8 of the reproduction issue).

Their synthetic program is our synth: a gang of n = 2 processes loops, each iteration GRAIN units of work
plus a uniform random extra in [0, VAR], then a barrier; LOAD copies compete.  The model (models.py) takes
constants measured on this machine: a context switch tau_s (the calibration card), the blocking cost
alpha tau_s (a futex hand-off on one hart: block, switch, wake, switch), a work unit u, and the quantum.
  1. VAR = 0, load 1: blocking adds a constant per iteration, eq. (12) at l = 1: (n-1)/n alpha tau_s.
  2. LOAD = 3, VAR = GRAIN: gang + busy waiting against time-slicing + blocking; busy waiting wins while the
     wait for the slowest, t_w = VAR u (n/(n+1) - 1/2), is below alpha tau_s (eq. 15).
  3. GRAIN = VAR = 1000, one blocking gang among load-1 compute-bound ones (hog), wakeboost off and on: about
     one iteration per scheduling round (eq. 13: t_p + (l-1) tau_q + (l + alpha - 1) tau_s).
  4. n = 2, GRAIN = VAR = 100, load 1..4: linear under gang + spin (eq. 6), quadratic under time-slicing +
     spin (eq. 8, l^2), linear under time-slicing + block (eq. 12).  Time-slicing + spin varies a lot with
     the harts' tick phases: 20 seeds in the full run, mean and median.
"""

from __future__ import annotations

import statistics

from . import Row, Section, elapsed_us, experiment, fmt_spread, median, verdict_within, verdict_shape
from . import models
from .common import constants, plot

Q_US = 10000


def per_iter(ctx, policy, barrier, grain, var, iters, load, seed, extra=""):
    job = f"job=synth:procs=2,grain={grain},var={var},iters={iters},barrier={barrier}"
    run = ctx.boot(f"policy={policy} quantum={Q_US}us {extra} " + " ".join([job] * load), seed)
    return median([r["iter_us"] for r in run.results if r["app"] == "synth"])


def iters_for(grain, u_us, ms=30.0):
    return max(200, min(20000, round(ms * 1000 / max(grain * u_us, 0.5))))


@experiment("feitelson", "Feitelson & Rudolph: gang scheduling and busy waiting, experiments 1-4", order=60,
            quick_seconds=20, full_seconds=200)
def feitelson(ctx) -> Section:
    c = constants(ctx)
    u, ts, ats = c["unit_us"], c["switch_us"], c["block_wake_us"]
    alpha = ats / max(ts, 1e-3)
    reps = ctx.reps(3, 1)
    rows, data = [], {"constants": c}

    # 1: VAR = 0, load 1: blocking's constant overhead
    grains = (100, 3000) if ctx.quick else (100, 1000, 10000, 30000)
    diff = []
    for g in grains:
        it = iters_for(g, u)
        sp = median([per_iter(ctx, "timeslice", "spin", g, 0, it, 1, s) for s in range(1, reps + 1)])
        bl = median([per_iter(ctx, "timeslice", "block", g, 0, it, 1, s) for s in range(1, reps + 1)])
        diff.append(bl - sp)
    model1 = models.blocking(1.0, 1, 2, alpha, ts) - 1.0      # per iteration, us (t_p = 1 us cancels)
    const = max(diff) - min(diff) <= max(2.0, 0.5 * max(abs(d) for d in diff))
    rows.append(Row(f"exp. 1: block - spin per iteration, grain {grains[0]}..{grains[-1]} (us)",
                    "a constant", f"{model1:.2f}", ", ".join(f"{d:.1f}" for d in diff), verdict_shape(const),
                    "" if const else "the overhead grew with the grain: a sleep longer than the idle poll "
                    "(kernel/sched/core.c IDLE_POLL_US) lets the hart halt, and waking a halted hart costs tens of us"))
    data["exp1"] = {"grains": grains, "block_minus_spin_us": diff}

    # 2: load 3, var = grain: gang+spin vs timeslice+block, the crossover
    grains2 = (100, 1000, 10000) if ctx.quick else (100, 300, 1000, 3000, 10000, 30000)
    ratio2 = []
    for g in grains2:
        it = iters_for(g, u, 20.0)
        gs = median([per_iter(ctx, "gang", "spin", g, g, it, 3, s) for s in range(1, reps + 1)])
        tb = median([per_iter(ctx, "timeslice", "block", g, g, it, 3, s) for s in range(1, reps + 1)])
        ratio2.append(tb / gs)
    cross_model = ats / (u * (2 / 3 - 1 / 2))               # grain where t_w = alpha tau_s
    fine_wins = ratio2[0] > 1
    rows.append(Row("exp. 2: at the finest grain, time-slicing + block / gang + spin", "2 (0.16 ms grain)",
                    f"spin wins below grain {cross_model:.0f}", f"{ratio2[0]:.2f}", verdict_shape(fine_wins),
                    "" if fine_wins else "blocking was not slower at fine grain"))
    cross = next((g for g, r in zip(grains2, ratio2) if r < 1), None)
    rows.append(Row("exp. 2: crossover grain (units), blocking wins above", "~0.8 ms of work",
                    f"{cross_model:.0f}", str(cross) if cross else f"> {grains2[-1]}",
                    "reproduced" if cross else "partially",
                    "" if cross else "no crossover within the grains run: blocking never won"))
    data["exp2"] = {"grains": grains2, "block_over_gang": ratio2}

    # 3: one blocking gang among compute-bound ones
    for boost in ("off", "on"):
        for load in (2, 3):
            per = [elapsed_us(ctx.boot(f"policy=timeslice quantum={Q_US}us wakeboost={boost} "
                                       "job=synth:procs=2,grain=1000,var=1000,iters=60,barrier=block "
                                       + " ".join(["job=hog:procs=2"] * (load - 1)), s), "synth", key="iter_us")
                   for s in range(1, reps + 1)]
            t_p = 1500 * u
            model3 = models.blocking_altruistic(t_p, load, alpha, Q_US, ts)
            v = verdict_within(median(per), model3, 0.3) if boost == "off" else verdict_shape(median(per) < model3)
            rows.append(Row(f"exp. 3: blocking gang + {load - 1} compute-bound, wakeboost={boost}: us per iteration",
                            "~ (competing gangs x quantum)" if boost == "off" else "boost helps",
                            f"{model3:.0f}", fmt_spread(per, "{:.0f}"), v,
                            "" if v == "reproduced" else "off the eq. 13 estimate by more than 30 %"
                            if boost == "off" else "the boost did not beat the round-robin estimate"))
            data[f"exp3-{boost}-{load}"] = per

    # 4: load 1..4, grain = var = 100
    modes = [("gang", "spin"), ("timeslice", "spin"), ("timeslice", "block")]
    loads = (1, 2, 3) if ctx.quick else (1, 2, 3, 4)
    curves = {m: [] for m in modes}
    for load in loads:
        for mode in modes:
            n = ctx.reps(20, 3) if mode == ("timeslice", "spin") and load > 1 else reps
            # iterations spanning many quanta (~40-120 ms alone); uncoordinated spinning costs up to a round
            # per iteration, so it gets a few hundred
            it = (20000 if ctx.quick else 60000) if mode != ("timeslice", "spin") or load == 1 else 300
            curves[mode].append([per_iter(ctx, mode[0], mode[1], 100, 100, it, load, s) for s in range(1, n + 1)])
    t1 = {m: median(curves[m][0]) for m in modes}
    for mode, name, expo in ((modes[0], "gang + spin", 1), (modes[1], "time-slicing + spin", 2),
                             (modes[2], "time-slicing + block", 1)):
        top = loads[-1]
        vals = curves[mode][-1]
        growth = median(vals) / t1[mode]
        model = models.uncoordinated_spin(1, 0, top, 2, Q_US, ts) if expo == 2 else top
        ok = (growth > 1.5 * top) if expo == 2 else (0.6 * top < growth < 1.5 * top)
        ours = fmt_spread([v / t1[mode] for v in vals]) + (f", mean {statistics.mean(vals) / t1[mode]:.2f}"
                                                           if expo == 2 else "")
        rows.append(Row(f"exp. 4: {name}, time per iteration at load {top} / at load 1",
                        "quadratic" if expo == 2 else "linear", f"{model:.1f}", ours, verdict_shape(ok),
                        "" if ok else ("not clearly above linear" if expo == 2 else
                                       "grew faster than the load" if growth >= 1.5 * top else
                                       "grew slower than the load")))
    fig = plot(ctx, "feitelson-exp4", lambda ax: (
        [ax.plot(loads, [median(v) for v in curves[m]], "o-", label=f"{m[0]} + {m[1]}") for m in modes],
        ax.set_xlabel("load (gangs)"), ax.set_ylabel("us per iteration"), ax.set_yscale("log"), ax.legend()))
    fig2 = plot(ctx, "feitelson-exp2", lambda ax: (
        ax.plot(grains2, ratio2, "o-"), ax.axhline(1, color="grey", ls=":"), ax.set_xscale("log"),
        ax.axvline(cross_model, color="#c44", ls="--", label="model crossover (eq. 15)"),
        ax.set_xlabel("grain (units)"), ax.set_ylabel("time-slicing+block / gang+spin"), ax.legend()))
    data["exp4"] = {f"{m[0]}+{m[1]}": v for m, v in curves.items()}
    return Section("feitelson", "Feitelson & Rudolph: gang scheduling and busy waiting, experiments 1-4",
                   "Feitelson & Rudolph 1992, sec. 3.3 (Makbilan, 10 processors, quantum 50 ms)",
                   f"`policy=gang|timeslice quantum=10ms job=synth:procs=2,grain=G,var=V,barrier=spin|block` x "
                   f"LOAD (exp. 3: with `job=hog:procs=2` and wakeboost=off|on); {reps} seeds (exp. 4 time-slicing "
                   f"+ spin: {ctx.reps(20, 3)}). Measured: tau_s = {ts:.2f} us (CALIB switch_ns), alpha tau_s = "
                   f"{ats:.2f} us (kbench futex on one hart), u = {u * 1000:.2f} ns (CALIB synth_unit_ns).", rows,
                   "Busy waiting needs coscheduling: time-slicing makes spinning gangs wait for each other's "
                   "quanta, and blocking pays a switch per iteration that gang scheduling avoids at fine grain.",
                   figures=[f for f in (fig, fig2) if f], data=data)
