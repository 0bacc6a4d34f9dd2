"""Hood (Blumofe & Papadopoulos): the performance cliff and the work-stealing bound (row 10 of the issue).

knary(h, d, s=0) with P = 1 .. H+2 processes on H harts under time-slicing: statically partitioned (one equal
share per process) falls off a cliff at P = H+1 - the slowest hart holds two shares, speedup P/ceil(P/H) -
while work stealing keeps near H.  The bound: T_P <= c1 T1/PA + c_inf T_inf P/PA, with T1 the work, T_inf
the critical path (knary measures it on the tree as it runs: span_units), PA the processor average (the hart
time the kernel gave the job over its elapsed time: RESULT cpu_us / elapsed_us); the paper finds c1 and c_inf
about 1.  Times in us: a work unit's time from the serial run (P = 1, static: no threads) over its units.
Thieves' yields on (Hood's design) and off.
"""

from __future__ import annotations

from . import Row, Section, experiment, fmt_spread, median, verdict_within, verdict_shape
from . import models
from .common import plot

KNARY = "h=7,d=4,s=0,work=40000"   # ~45 us of work per node, ~0.25 s serial: many quanta


def _threads_why(t1: float, ts: float) -> str:
    """Why T1/Ts is off 1, in words that fit its sign (never "took -17 % longer")."""
    pct = 100 * abs(t1 / ts - 1)
    if t1 >= ts:
        return (f"one process running the threads took {pct:.0f} % longer than the plain loop: spawns, joins and "
                "the deque per node")
    return (f"one process running the threads took {pct:.0f} % less time than the plain loop, which their extra "
            "work cannot explain: the boots ran at different host speeds (it drifts over minutes), or the two "
            "versions' work differs")


@experiment("hood", "Hood: the performance cliff, and work stealing's bound", order=70, quick_seconds=5,
            full_seconds=15)
def hood(ctx) -> Section:
    h, reps = ctx.cpus, ctx.reps(3, 1)
    ps = list(range(1, h + 3))
    res = {}
    for mode, keys in (("static", "mode=static,adapt=no"), ("steal", "adapt=no"),
                       ("steal, no yields", "adapt=no,yield=off")):
        for p in ps:
            res[mode, p] = [ctx.boot(f"policy=timeslice quantum=10ms job=knary:{KNARY},{keys},procs={p}", s)
                            .results[0] for s in range(1, reps + 1)]
    ts = median([r["par_us"] for r in res["static", 1]])
    units = res["steal", 1][0]["work_units"]
    unit_us = ts / units
    t1 = median([r["par_us"] for r in res["steal", 1]])
    tinf = res["steal", 1][0]["span_units"] * unit_us
    speed = {(m, p): [ts / r["par_us"] for r in res[m, p]] for m, p in res}
    rows = []
    cliff = median(speed["static", h + 1])
    model_cliff = models.static_cliff_speedup(h + 1, h)
    v = verdict_within(cliff, model_cliff, 0.15)
    rows.append(Row(f"static partitioning at P = H+1 = {h + 1}: speedup", f"P/ceil(P/H) = {model_cliff:.2f}",
                    f"{model_cliff:.2f}", fmt_spread(speed["static", h + 1]), v,
                    "" if v == "reproduced" else "the cliff was shallower or deeper than the shares predict"))
    steal = median(speed["steal", h + 1])
    ok = steal > cliff and steal > 0.8 * h
    rows.append(Row(f"work stealing at P = H+1: speedup", f"near H = {h}", f"{h}", fmt_spread(speed["steal", h + 1]),
                    verdict_shape(ok, steal > cliff), "" if ok else "stealing lost more than 20 % of H"))
    v = verdict_within(t1 / ts, 1.0, 0.1)
    rows.append(Row("T1 / Ts (the cost of threads)", "about 1", "1", f"{t1 / ts:.3f}", v,
                    "" if v == "reproduced" else _threads_why(t1, ts)))
    points, pa_all = [], {}
    for p in ps:
        for r in res["steal", p]:
            pa = r["cpu_us"] / r["elapsed_us"]
            pa_all.setdefault(p, []).append(pa)
            points.append((r["par_us"], t1, tinf, pa, p))
    c1, cinf = models.hood_fit(points)
    worst = max(t / models.hood_bound(a, b, pa, p) for t, a, b, pa, p in points)
    v = "reproduced" if c1 <= 1.5 and worst <= 1.5 else "partially"
    rows.append(Row("the bound's constants (least squares): c1, c_inf", "about 1, about 1", "1, 1",
                    f"{c1:.2f}, {cinf:.2f}; T / (T1/PA + T_inf P/PA) at most {worst:.2f}", v,
                    "" if v == "reproduced" else "a run took over 1.5 times the bound with c1 = c_inf = 1"))
    noy = median(speed["steal, no yields", h + 2])
    y = median(speed["steal", h + 2])
    rows.append(Row(f"yields on vs off at P = H+2 = {h + 2}: speedup", "yield needed under multiprogramming",
                    "-", f"on {fmt_spread(speed['steal', h + 2])}; off {fmt_spread(speed['steal, no yields', h + 2])}",
                    verdict_shape(y >= noy), "" if y >= noy else "no yields did better here"))
    fig = plot(ctx, "hood-cliff", lambda ax: (
        [ax.plot(ps, [median(speed[m, p]) for p in ps], "o-", label=m) for m in ("static", "steal", "steal, no yields")],
        ax.plot(ps, [models.static_cliff_speedup(p, h) for p in ps], ":", color="grey", label="P/ceil(P/H)"),
        ax.set_xlabel("processes P"), ax.set_ylabel("speedup over the serial run"), ax.legend()))
    return Section("hood", "Hood: the performance cliff, and work stealing's bound",
                   "Blumofe & Papadopoulos 1998, sec. 2 and 5", f"`policy=timeslice job=knary:{KNARY},"
                   f"mode=static|steal,yield=on|off,adapt=no,procs=P`, P = 1..{h + 2}; {reps} seeds; Ts = the "
                   f"static P=1 run ({ts / 1000:.1f} ms), T_inf = {tinf / 1000:.2f} ms (span_units x a unit).", rows,
                   "Static shares cannot follow the harts the kernel gives them; stealing moves work to whoever "
                   "runs, so the job's speedup tracks its processor average.",
                   figures=[f for f in [fig] if f],
                   data={"speedup": {f"{m}-{p}": v for (m, p), v in speed.items()}, "pa": pa_all,
                         "c1": c1, "cinf": cinf, "tinf_us": tinf, "t1_us": t1, "ts_us": ts})
