"""The papers' 16-processor results in the simulator (issue 15, item 5): sections of ``schedlab reproduce``.

    tools/schedlab reproduce --only 'sim16-*'        # (make sim-reproduce) these sections alone

Each experiment below is a section (``sim16-<name>``, after the QEMU sections and the simulator's validation)
whose rows are paper | model | simulated, with its plot; every run that includes them also rewrites
docs/sim-16.md, the same tables on one page (``write_page``). Each result stands beside the paper's number
(/work/shared/papers/NOTES-*.md) and a model's prediction (the paper's own reasoning, stated with each
table). Every number here is simulated with the named calibration: re-run after `make sim-calibrate` on a
quiet machine. The simulator is deterministic, so these sections measure nothing about this host.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from . import ReproError, Row, Section, section, judged, page, restates
from . import criteria as cr
from . import models
from ..qemu import REPO_ROOT as REPO
from .. import executor


class Sim:
    def __init__(self, calib: str | None):
        self.calib = calib
        self.name = None

    def elapsed(self, cpus: int, bootargs: str, job: int = 1) -> float:
        """Job `job`'s parallel part (par_us, as the papers time it; elapsed_us if it has none); job 0: the
        makespan."""
        run = executor.sim_run(cpus, bootargs, calib=self.calib)
        if not run.ok:
            raise ReproError(f"simulated run failed: {bootargs}\n{run.console[-1500:]}")
        self.name = run.summary["sim"]
        if job == 0:
            return float(run.summary["makespan_us"])
        result = next(r for r in run.results if r["job"] == job)
        return float(result.get("par_us") or result["elapsed_us"])

    def calibration(self) -> dict:
        path = Path(self.calib) if self.calib else REPO / "tools" / "sim" / "calib" / "default.json"
        return json.loads(path.read_text())

    def switch_units(self) -> float:
        """One context switch (a yield) in synth work units, from the calibration in use."""
        c = self.calibration()
        return c["yield_ns"] / c["synth_unit_ns"]


def markatos_351(sim: Sim) -> dict:
    """Odd-even sort of 512 elements, 16 processes, time-slicing, with and without a 16-process background job,
    at the thesis's synchronization rate: its sort took 286 ms alone (512 phases, ~0.56 ms a phase) under a
    100 ms quantum, ~179 phases per quantum; the quantum here is set to the same number of phases."""
    n, phases_per_quantum = 512, 100.0 / (286.0 / 512)
    c = sim.calibration()
    tau_s = (c["yield_ns"] - c["syscall_ns"]) / 1000.0
    rows = []
    for wait in ("spin", "block"):
        job = f"job=oddeven:procs=16,n={n},barrier={wait}"
        phase = sim.elapsed(16, f"policy=timeslice quantum=10ms {job}") / n
        q_us = max(1, round(phases_per_quantum * phase))
        alone = sim.elapsed(16, f"policy=timeslice quantum={q_us}us {job}")
        mixed = sim.elapsed(16, f"policy=timeslice quantum={q_us}us {job} job=hog:procs=16")
        t_iter = alone / n
        model = (models.uncoordinated_spin_slowdown(t_iter, 2, 16, q_us, tau_s) if wait == "spin"
                 else models.blocking_altruistic(t_iter, 2, 1.0, q_us, tau_s) / t_iter)
        rows.append({"case": f"n={n}, barrier={wait}, quantum {q_us} us = {q_us / t_iter:.0f} phases",
                     "paper": 366.0 if wait == "spin" else 540.0, "sim": mixed / alone, "model": model})
    spin = rows[0]
    return {"title": "Markatos 3.5.1: odd-even sort under time-slicing with a background job (16 harts)",
            "model": "spin: Feitelson & Rudolph's eq. 8 at l = 2, n = 16 (l^n, capped at a round per phase); "
                     "block (the thesis's yielding barrier, 540): eq. 13, a round per phase",
            "rows": rows,
            "note": f"Spinning comes out at {spin['sim'] / spin['model']:.2f} of eq. 8's cap: the cap is one phase "
                    "per round of the two jobs, but the simulated harts' quanta are periodic, so the sort's 16 "
                    "processes overlap for part of every round and finish several phases in it. The "
                    "thesis's 366 sits on the cap. Blocking follows eq. 13 "
                    "(a phase per round). The thesis's 540 is a barrier that yields instead of sleeping: about "
                    "one and a half rounds a phase (540 / 366), since a yielder is rescheduled before its "
                    "partners arrive."}


def markatos_352(sim: Sim) -> dict:
    """Coscheduling (gang): coarse Gauss with 16 processes, multiprogramming level 1-4 of copies."""
    job = "job=gauss:procs=16,n=512,barrier=spin"
    base = sim.elapsed(16, f"policy=gang quantum=10ms {job}", job=0)
    rows = []
    for mpl, paper in zip((1, 2, 3, 4), (1.00, 2.01, 3.01, 4.01)):
        t = sim.elapsed(16, "policy=gang quantum=10ms " + " ".join([job] * mpl), job=0)
        rows.append({"case": f"multiprogramming level {mpl}", "paper": paper, "sim": t / base, "model": float(mpl)})
    return {"title": "Markatos 3.5.2: coscheduling, coarse Gauss, 16 harts (paper: 4 processors)",
            "model": "each of MPL gangs gets 1/MPL of the machine: makespan / time alone = MPL", "rows": rows}


def markatos_353(sim: Sim) -> dict:
    """Partitions: Gauss alone on 16, then a background job arrives and takes half; the job's 16 workers go on
    on the 8 harts left (adapt=yes: the thesis's "8 threads migrate"). n = 1024 keeps the work between
    barriers far above a barrier's cost, as the thesis's 512x512 on the Butterfly (18.7 s alone)."""
    job = "job=gauss:procs=16,n=1024,barrier=block,adapt=yes"
    alone = sim.elapsed(16, f"policy=partition {job}")
    mixed = sim.elapsed(16, f"policy=partition {job} job=hog:procs=16,at=1ms")
    on8 = sim.elapsed(8, "policy=partition job=gauss:procs=8,n=1024,barrier=block")
    return {"title": "Markatos 3.5.3: hardware partitions, coarse Gauss, background arrives (16 harts, 8 + 8)",
            "model": "half the harts for (almost) all of the run: slowdown = S(16) / S(8), the job's own speedup "
                     "from 8 harts to 16 (simulated: the same Gauss with 8 processes on 8 harts); 2 if linear",
            "rows": [{"case": "coarse, barrier (block)", "paper": 1.97, "sim": mixed / alone, "model": on8 / alone}],
            "note": f"A partition costs the job what halving its harts costs it: its own speedup from 8 harts to "
                    f"16, {on8 / alone:.2f} here (the thesis's 512x512 Gauss on the Butterfly: 1.97), "
                    + ("below 2 - the sublinear speedup that is the thesis's reason partitions win."
                       if on8 / alone < 1.9 else
                       "about 2 as in the thesis: with near-linear speedup the job loses to the partition what "
                       "an even time share would take, and no more (no spinning on descheduled partners).")}


def deprivation(sim: Sim) -> dict:
    """16 processes on 15 and on 8 harts (timeslice, Q = 20 ms): spinning vs blocking, central vs tree."""
    rows = []
    grain = 20000  # the work between barriers (units)
    for harts in (15, 8):
        for wait in ("spin", "block"):
            for shape in ("central", "tree"):
                job = f"job=synth:procs=16,iters=40,grain={grain},barrier={wait},shape={shape}"
                ideal = sim.elapsed(16, f"policy=timeslice quantum=20ms {job}")
                t = sim.elapsed(harts, f"policy=timeslice quantum=20ms {job}")
                rounds = math.ceil(16 / harts)
                rows.append({"case": f"16 on {harts}, {wait}, {shape}", "paper": None, "sim": t / ideal,
                             "model": float(rounds) if wait == "block" else None})
    return {"title": "Markatos 3.6.2: deprivation, 16 processes on 15 and 8 harts (slowdown vs 16 on 16)",
            "model": "blocking: the P_M rule, time grows with ceil(16/P) (Fig. 3.7); spinning: the paper shows "
                     "it much worse (a barrier takes whole quanta), no closed form", "rows": rows}


def pm_rule(sim: Sim) -> dict:
    """Fig. 3.7: 16 processes with blocking barriers on P = 4..16 harts."""
    job = "job=synth:procs=16,iters=40,grain=20000,barrier=block"
    base = sim.elapsed(16, f"policy=timeslice quantum=20ms {job}")
    rows = []
    for p in (4, 5, 6, 8, 10, 12, 15, 16):
        t = sim.elapsed(p, f"policy=timeslice quantum=20ms {job}")
        rows.append({"case": f"P={p} (P_M={math.ceil(16 / math.ceil(16 / p))})", "paper": None, "sim": t / base,
                     "model": float(math.ceil(16 / p))})
    return {"title": "Markatos Fig. 3.7: the P_M rule, 16 processes, blocking barriers (time vs 16 harts)",
            "model": "completion time proportional to ceil(16/P)", "rows": rows}


def tree_vs_combination(sim: Sim) -> dict:
    """Figs. 3.5/3.6: blocking tree vs combination, 16 processes on 8 harts vs on 16, by the work between
    barriers in context switches."""
    rows = []
    switch_units = sim.switch_units()
    paper = {("tree", 4): 39.0, ("tree", 20): 10.0, ("combination", 4): 10.0, ("combination", 20): 0.0}
    for shape in ("tree", "combination"):
        for x in (1, 4, 20):
            grain = int(x * switch_units)
            job = f"job=synth:procs=16,iters=200,grain={grain},barrier=block,shape={shape}"
            on16 = sim.elapsed(16, f"policy=timeslice {job}")
            on8 = sim.elapsed(8, f"policy=timeslice {job}")
            overhead = (on8 / (2 * on16) - 1.0) * 100.0  # over the ideal 2x of half the harts
            rows.append({"case": f"{shape}, T = {x} switches", "paper": paper.get((shape, x)), "sim": overhead,
                         "model": None})
    c = sim.calibration()
    return {"title": "Markatos Figs. 3.5/3.6: blocking tree vs combination barrier overhead, % (16 on 8 vs 2 x 16 on 16)",
            "model": "none closed-form; the simulator models a barrier's shape by its release cost only, not by "
                     "combining the processes that share a hart, so it cannot show the combination barrier's gain",
            "rows": rows,
            "note": "Overheads near zero, some below it: with one process per hart every episode already pays a "
                    "cross-hart wake-up on its critical path (calibrated: the sleeper's wake "
                    f"{c['wake_poll_ns'] / 1000:.1f} us, the waker's futex_wake "
                    f"{c['futex_wake_kick_ns'] / 1000:.1f} us), and 'twice the 16-on-16 time' counts it "
                    "twice, while on 8 harts the second process of a hart takes over by a same-hart switch "
                    f"({c['yield_ns'] / 1000:.1f} us). On the Butterfly a block and wake cost "
                    "several switches (the thesis's x axis), hence its 39 % and 10 %. Not reproduced: the "
                    "shapes' difference needs the combining the simulator does not model."}


def feitelson_exp4(sim: Sim) -> dict:
    """Experiment 4: two jobs of gang size n on n harts, fine grain, uncoordinated (timeslice) vs gang."""
    rows = []
    for n in (2, 4, 8):
        job = f"job=synth:procs={n},iters=20000,grain=100,barrier=spin"
        ts = sim.elapsed(n, f"policy=timeslice quantum=10ms {job} {job}")
        gang = sim.elapsed(n, f"policy=gang quantum=10ms {job} {job}")
        rows.append({"case": f"gang size {n}, load 2", "paper": None, "sim": ts / gang, "model": 2.0 ** (n - 1)})
    c = sim.calibration()
    cap = (10000 + c["yield_ns"] / 1000) / (100 * c["synth_unit_ns"] / 1000)  # a round per iteration, over gang
    return {"title": "Feitelson & Rudolph experiment 4: uncoordinated / gang time, load l = 2",
            "model": "about l^(n-1) times slower than gang (the paper's analysis)", "rows": rows,
            "note": "Eq. 8 treats each process as running with chance 1/l at any moment, independently of the "
                    "others. Time-slicing with equal quanta is periodic instead: a gang's processes either "
                    "overlap for part of every round (many iterations per round: below l^(n-1), as at n = 2 "
                    "and 4) or, once the harts' quanta are spread over more than half a round, hardly at all, "
                    "and then iterations complete only in the rare windows where they do (far above l^(n-1), as at "
                    "n = 8; eq. 8's cap, a round per iteration, would be "
                    f"{cap:.0f} times gang here). Feitelson & Rudolph measured only n = 2 (quadratic in the load)."}


def tucker_gupta(sim: Sim) -> dict:
    """Tucker & Gupta: three busy-waiting applications of 16 processes started one after another on 16 harts,
    uncontrolled time-sharing (global) against partitions with process control (adapt=yes)."""
    apps = ["gauss:n=256,barrier=spin", "synth:iters=4000,grain=2000,barrier=spin",
            "synth:iters=2000,grain=5000,barrier=spin"]
    jobs = " ".join(f"job={a},procs=16" + (f",at={k * 20}ms" if k else "") for k, a in enumerate(apps))
    rows = []
    for k, app in enumerate(apps, 1):
        uncontrolled = sim.elapsed(16, f"policy=global quantum=10ms {jobs}", job=k)
        controlled = sim.elapsed(16, f"policy=partition quantum=10ms {jobs}", job=k)
        rows.append({"case": f"job {k} ({app.split(',')[0]}): global / partition+pc",
                     "paper": 66 / 28 if k == 1 else None, "sim": uncontrolled / controlled, "model": None})
    return {"title": "Tucker & Gupta: process control vs uncontrolled time-sharing, 16 harts",
            "model": "none closed-form: busy-waiting processes time-shared without control spin away each "
                     "other's quanta; with control each job runs as many processes as it has harts", "rows": rows,
            "note": "Two orders of magnitude above the paper's 2.36 because the jobs here synchronize by spinning "
                    "barriers, hundreds per second, so an uncontrolled job waits a quantum for every preempted "
                    "member. Tucker & Gupta's applications took tasks from a queue and lost to preempted lock "
                    "holders, consumers run while their producers were suspended, switches and caches: a milder "
                    "dependence on running together, which the simulator's barrier apps do not have."}


EXPERIMENTS = (markatos_351, markatos_352, markatos_353, deprivation, pm_rule, tree_vs_combination, feitelson_exp4,
               tucker_gupta)


def _fmt(v):
    return "-" if v is None else f"{v:.2f}"


def _plot(exp: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = exp["rows"]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(rows)), 3.4))
    xs = range(len(rows))
    for k, (key, off) in enumerate((("paper", -0.27), ("sim", 0.0), ("model", 0.27))):
        ax.bar([x + off for x in xs], [r[key] or 0.0 for r in rows], width=0.26, label=key)
    ax.set_xticks(list(xs), [r["case"] for r in rows], rotation=30, ha="right", fontsize=7)
    ax.set_title(exp["title"], fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


PREFIX = "sim16-"
#: each experiment's section: (short title for --list and the plan, expected seconds)
TITLES = {markatos_351: "Markatos 3.5.1 at 16 harts, simulated", markatos_352: "Markatos 3.5.2 at 16 harts, simulated",
          markatos_353: "Markatos 3.5.3 at 16 harts, simulated", deprivation: "Markatos 3.6.2 deprivation, simulated",
          pm_rule: "Markatos Fig. 3.7, the P_M rule, simulated",
          tree_vs_combination: "Markatos Figs. 3.5/3.6 tree vs combination, simulated",
          feitelson_exp4: "Feitelson & Rudolph experiment 4 at 2..8 harts, simulated",
          tucker_gupta: "Tucker & Gupta at 16 harts, simulated"}
WHY = "simulated, not measured: 16 processors need the simulator (its validation against QEMU: sim-validation)"


def section_name(fn) -> str:
    return PREFIX + fn.__name__.replace("_", "-")


def run_section(fn, ctx) -> Section:
    """One experiment as a section: its rows, its plot (in ctx.figdir, copied to figures/) and in ``data`` the
    experiment's own numbers and the calibration's name, from which ``write_page`` writes docs/sim-16.md."""
    sim = Sim(None)
    exp = fn(sim)
    name = section_name(fn)
    figures = []
    try:
        ctx.figdir.mkdir(parents=True, exist_ok=True)
        _plot(exp, ctx.figdir / f"{name}.png")
        figures = [f"{name}.png"]
    except ImportError:
        pass            # no matplotlib: the tables without their plots
    rows = sim_rows(name, exp)
    notes = f"Model: {exp['model']}." + (f" {exp['note']}" if exp.get("note") else "")
    return Section(name, exp["title"], "simulated: " + TITLES[fn].removesuffix(", simulated"),
                   f"`build/sim/schedlab-sim` with the calibration `{sim.name}` (tools/sim/calib/default.json), the "
                   "kernel's policy code on simulated harts", rows, notes, figures, data={"calib": sim.name, **exp})


#: why a simulated row judged by its QEMU section's criterion misses it, from what the simulator models
SIM_WHY = {PREFIX + "markatos-351": "the simulated harts' quanta are periodic, so the sort's processes overlap for "
           "part of every round (spinning at 0.33 of eq. 8's cap); a sleeping barrier is not the thesis's yielding "
           "one (the section's note)",
           PREFIX + "tree-vs-combination": "the simulator models a barrier's shape by its release cost only, not "
           "the combining of the processes that share a hart",
           PREFIX + "tucker-gupta": "the simulated jobs synchronize by spinning barriers hundreds of times a second: "
           "an uncontrolled job waits a quantum for every preempted member"}


def sim_criteria(name: str) -> dict:
    """case -> the criterion its QEMU section declares for the same claim: a simulated row is judged by it, and
    says so. Cases with none (the simulator's own variations, claims no section has declared yet) stay unjudged."""
    from .markatos_library import COMBINATION
    from .markatos_partition import TUCKER
    if name == PREFIX + "tree-vs-combination":
        return {f"{shape}, T = {x} switches": c for (shape, x), c in
                ((k, v) for k, v in COMBINATION.items() if k != "order")}
    if name == PREFIX + "markatos-351":
        from .markatos_timeslice import ODD
        return {"n=512, barrier=spin": ODD["barrier=spin"], "n=512, barrier=block": ODD["barrier=block"]}
    if name == PREFIX + "markatos-352":
        from .markatos_gang import LEVELS
        return {"multiprogramming level 1": cr.measured("1.00 by definition (the time alone)", "Markatos 3.5.2"),
                **{f"multiprogramming level {k + 1}": c for k, c in LEVELS.items()}}
    if name == PREFIX + "markatos-353":
        from .markatos_partition import partition_criterion
        return {"coarse, barrier (block)": partition_criterion("coarse, barrier", 1.97)}
    if name == PREFIX + "tucker-gupta":
        return {"job 1 (gauss:n=256): global / partition+pc": TUCKER["gauss"]}
    return {}


def sim_rows(name: str, exp: dict, harts: int = 16) -> list[Row]:
    """The rows of one simulated experiment: judged (simulated) where a criterion is declared, else shown."""
    crit, rows = sim_criteria(name), []
    for r in exp["rows"]:
        c = next((v for k, v in crit.items() if r["case"] == k or r["case"].startswith(k + ",")), None)
        if c is None and r["paper"] is None:     # nothing in the paper to judge it by
            rows.append(Row(r["case"], "-", _fmt(r["model"]), f"{_fmt(r['sim'])} simulated", "measured"))
        elif c is None:
            rows.append(Row(r["case"], _fmt(r["paper"]), _fmt(r["model"]), f"{_fmt(r['sim'])} simulated",
                            "not on this machine", WHY + "; no criterion declared for this simulated row yet"))
        else:
            rows.append(judged(r["case"], c, {c.of or "sim": [r["sim"]]}, ours=f"{_fmt(r['sim'])} simulated",
                               model=_fmt(r["model"]), harts=harts, simulated=True,
                               why=SIM_WHY.get(name, "see the section's note")))
    return rows


for _k, _fn in enumerate(EXPERIMENTS):
    section(section_name(_fn), TITLES[_fn], order=91 + _k, quick_seconds=1, full_seconds=1)(
        functools.partial(run_section, _fn))
    restates(section_name(_fn))(lambda data, cpus, old=None, _name=section_name(_fn): sim_rows(_name, data))


@page
def write_page(sections: list[Section], out: Path) -> Path | None:
    """docs/sim-16.md: the sim16 sections' tables, notes and plots on one page (None: no such section ran)."""
    done = [s for s in sections if s.name.startswith(PREFIX) and not s.error and s.data.get("rows")]
    if not done:
        return None
    calib = done[0].data["calib"]
    lines = ["# The papers' 16-processor results, simulated", "",
             f"Written by `tools/schedlab reproduce` (its sections {PREFIX}*, also in results.md) with the "
             f"calibration `{calib}` (every number below is "
             "SIMULATED: the kernel's policy code on the simulator's harts, tools/sim; the costs measured on QEMU "
             "by `make sim-calibrate`, tools/sim/calib/default.json). Check the simulator's validation against QEMU "
             "first (the sim-validation section of docs/results.md): gang, partitions and blocking waits follow "
             "QEMU closely; uncoordinated time-slicing with spinning is a lottery on the harts' tick phases in "
             "both, so its numbers here are one draw. Times are the jobs' parallel parts (par_us), as the papers "
             "time them.", "",
             "Not modelled (so not reproduced): the combining of processes that share a hart in the combination "
             "barrier, caches and memory. Process control is modelled at barrier releases (tools/sim/sim_barrier.c).",
             ""]
    for s in done:
        exp = s.data
        lines += [f"## {exp['title']}", "", f"Model: {exp['model']}.", "",
                  "| case | paper | simulated | model |", "|---|---|---|---|"]
        lines += [f"| {r['case']} | {_fmt(r['paper'])} | {_fmt(r['sim'])} | {_fmt(r['model'])} |" for r in exp["rows"]]
        if exp.get("note"):
            lines += ["", exp["note"]]
        lines += [""] + [f"![{f.removesuffix('.png')}](figures/{f})" for f in s.figures] + ([""] if s.figures else [])
    doc = out / "sim-16.md"
    doc.write_text("\n".join(lines) + "\n")
    return doc
