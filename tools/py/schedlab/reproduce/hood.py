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

from . import Row, Section, section, judged, median, restates
from . import criteria as cr
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


@section("hood", "Hood: the performance cliff, and work stealing's bound", order=70, quick_seconds=5,
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
    pa_all = {p: [r["cpu_us"] / r["elapsed_us"] for r in res["steal", p]] for p in ps}
    points = [(r["par_us"], t1, tinf, r["cpu_us"] / r["elapsed_us"], p) for p in ps for r in res["steal", p]]
    c1, cinf = models.hood_fit(points)
    data = {"speedup": {f"{m}-{p}": v for (m, p), v in speed.items()}, "pa": pa_all,
            "c1": c1, "cinf": cinf, "tinf_us": tinf, "t1_us": t1, "ts_us": ts}
    rows = hood_rows(data, h)
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
                   figures=[f for f in [fig] if f], data=data)


# Blumofe & Papadopoulos 1998. Sec. 1.1: P static shares on P_A = P - 1 processors: "speedup (P_A + 1)/2" - in
# general P/ceil(P/H) (models.static_cliff_speedup), the paper's number for our H. Sec. 5: linear speedup when P
# is well below the parallelism T1/T_inf, "even when P > P_A"; sec. 3.2: thieves yield. Table 2: T1/Ts of Hood's
# six programs 0.955..1.030.
# Sec. 5.1 (Fig. 2): "two curves ... constants c1 = 1.0 and c_inf = 1.0, and ... c1 = 1.1 and c_inf = 2.0 ... do a
# good job of lower bounding the utilization": every run within c1 T1/PA + c_inf T_inf P/PA at (1.1, 2.0).
BP = "Blumofe & Papadopoulos 1998"
HOOD = {
    "steal": lambda h: cr.within("steal", h, 0.2, f"linear: near H = {h}", f"{BP}, sec. 5",
                                 "'near' read as within 20 % of H", domain=(0.0, float(h))),
    "cliff": lambda h: cr.within("static", models.static_cliff_speedup(h + 1, h), 0.15,
                                 f"P/ceil(P/H) = {models.static_cliff_speedup(h + 1, h):.2f}", f"{BP}, sec. 1.1",
                                 "the paper's formula for our H; 15 % for the quantum's phase", domain=(0.0, float(h))),
    "threads": cr.within("t1_over_ts", (0.955 + 1.030) / 2, 0.04, "0.955..1.030 (Hood's six programs)",
                         f"{BP}, Table 2", "the range of the table's T1/Ts for Hood", domain=(0.0, 10.0)),
    "c1": cr.within("c1", 1.05, 0.1, "c1 = 1.0 and 1.1 (the two curves)", f"{BP}, sec. 5.1",
                    "the paper's two constants, 0.95..1.15", domain=(0.0, 100.0)),
    "cinf": cr.within("cinf", 1.5, 0.5, "c_inf = 1.0 and 2.0 (the two curves)", f"{BP}, sec. 5.1",
                      "the paper's two constants, 0.75..2.25", domain=(0.0, 100.0)),
    "bound": cr.bound("worst", "<=", 1.0, "the curves with c1 = 1.1, c_inf = 2.0 lower-bound the utilization",
                      f"{BP}, sec. 5.1, Fig. 2", "the paper's constants: no run slower than its bound",
                      domain=(0.0, 100.0)),
    "yields": cr.ordering(["yields on", "yields off"], "thieves yield: needed under multiprogramming",
                          f"{BP}, sec. 3.2", "an ordering: the paper gives no number", domain=(0.0, 100.0)),
}


def _bound_ratios(data: dict, c1: float, cinf: float) -> list[float]:
    """T / (c1 T1/PA + c_inf T_inf P/PA) for every stealing run (T from its speedup over Ts)."""
    out = []
    for p, pas in data["pa"].items():
        for sp, pa in zip(data["speedup"][f"steal-{p}"], pas):
            out.append(data["ts_us"] / sp / models.hood_bound(data["t1_us"], data["tinf_us"], pa, int(p), c1, cinf))
    return out


def _span_share(data: dict) -> float:
    """The largest share of a run's time the span term T_inf P/PA makes: what c_inf's fit rests on."""
    return max(data["tinf_us"] * int(p) / pa / (data["ts_us"] / sp) for p, pas in data["pa"].items()
               for sp, pa in zip(data["speedup"][f"steal-{p}"], pas))


@restates("hood")
def hood_rows(data: dict, h: int, old: dict | None = None) -> list[Row]:
    sp = data["speedup"]
    t1_ts = data["t1_us"] / data["ts_us"]
    return [
        judged(f"static partitioning at P = H+1 = {h + 1}: speedup", HOOD["cliff"](h),
               {"static": sp[f"static-{h + 1}"]},
               model=f"{models.static_cliff_speedup(h + 1, h):.2f}", harts=h,
               why="the cliff was shallower or deeper than the shares predict"),
        judged("work stealing at P = H+1: speedup", HOOD["steal"](h), {"steal": sp[f"steal-{h + 1}"]}, model=f"{h}",
               harts=h, why="stealing lost more than 20 % of H"),
        judged("T1 / Ts (the cost of threads)", HOOD["threads"], {"t1_over_ts": [t1_ts]}, model="1", harts=h,
               fmt="{:.3f}", why=_threads_why(data["t1_us"], data["ts_us"])),
        judged("the bound's constant c1 (least squares)", HOOD["c1"], {"c1": [data["c1"]]}, model="1", harts=h),
        judged("the bound's constant c_inf (least squares)", HOOD["cinf"], {"cinf": [data["cinf"]]}, model="1",
               harts=h, why=f"T_inf P/PA is at most {_span_share(data):.1%} of a run's time here (the knary tree's "
               "parallelism is in the hundreds): a least-squares c_inf on a term that small is the fit's noise"),
        judged("every run against the bound at (1.1, 2.0): largest T / bound", HOOD["bound"],
               {"worst": [max(_bound_ratios(data, 1.1, 2.0))]}, harts=h,
               why="a run took longer than the bound with the paper's constants"),
        judged(f"yields on vs off at P = H+2 = {h + 2}: speedup", HOOD["yields"],
               {"yields on": sp[f"steal-{h + 2}"], "yields off": sp[f"steal, no yields-{h + 2}"]}, harts=h,
               why="no yields did as well here"),
    ]
