"""The papers' 16-processor results on QEMU itself, with paced harts (tools/model/pace.h).

Unpaced, QEMU's timings mean something only while harts <= host cores, so the claims the papers make about 16
processors were judged in the simulator only (sim16.py) or not at all. A paced boot is a machine of R
instructions per second per hart at any hart count (wall time is model time while the host keeps up, and
every boot says whether it did), so these sections boot 16 harts on this host and judge the rows by the same
criteria the 2-hart sections declare with ``needs_harts=16`` - the thesis's numbers, not a criterion of ours.

R is ``pace=auto`` for 16 harts, resolved once per section (the same R for every boot of it). The sizes are the
thesis's where the boot stays short (512-element odd-even sort, 512 x 512 Gauss); the quantum is set to the
thesis's synchronization rate - its phases or barriers per quantum - measured alone first, as sim16.py does.
"""

from __future__ import annotations

from . import Section, experiment, judged, median
from . import models
from .common import slowdowns
from .markatos_timeslice import GAUSS, ODD, ODDEVEN, gauss_criterion
from .. import pace

HARTS = 16
PHASES_PER_QUANTUM = 100.0 / (286.0 / 512)     # the thesis's sort: 512 phases in 286 ms, quantum 100 ms
BARRIERS_PER_QUANTUM = 3.0                      # 3.5.1: the coarse-barrier Gauss did about three a quantum


def _spec(ctx) -> str:
    """The paced model spec for the section's boots: --model's own pace if it has one, else pace=auto for 16."""
    from ..model import parse_spec
    base = parse_spec(ctx.model) if ctx.model else None
    spec = base.canonical if base is not None and base.pace else "pace=auto" if base is None else \
        base.with_pace("auto").canonical
    return pace.resolve(spec, HARTS, say=ctx.progress)


def _quantum_us(ctx, spec: str, job: str, episodes: int, per_quantum: float) -> tuple[int, float]:
    """(quantum in us, one episode in us): `job` alone at a 10 ms quantum sets the episode time."""
    run = ctx.boot(f"policy=timeslice quantum=10ms {job}", 1, cpus=HARTS, model=spec)
    episode = float(next(r for r in run.results)["par_us"]) / episodes
    return max(100, round(per_quantum * episode / 100) * 100), episode


@experiment("markatos-3.5.1-paced16", "Markatos 3.5.1 at 16 processors, on paced QEMU", order=11,
            quick_seconds=150, full_seconds=420)
def timeslicing16(ctx) -> Section:
    if ctx.deterministic:                       # its clock counts instructions: nothing paced to measure
        return Section("markatos-3.5.1-paced16", "Markatos 3.5.1 at 16 processors, on paced QEMU",
                       "Markatos 1993, sec. 3.5.1", "not run: paced harts need the real clock", [],
                       "reproduce --deterministic runs no paced section (pacing and clock=virtual exclude each "
                       "other); run it without --deterministic.")
    spec = _spec(ctx)
    given, ctx.model = ctx.model, spec          # every boot of the section paced at one R
    try:
        return _timeslicing16(ctx, spec)
    finally:
        ctx.model = given


def _timeslicing16(ctx, spec: str) -> Section:
    seeds = ctx.reps(3, 1)
    rows, data = [], {"model": spec, "harts": HARTS}
    n_sort = 512
    for label, keys, paper, what in ODDEVEN:
        job = f"job=oddeven:n={n_sort},procs={HARTS},{keys}"
        q, phase = _quantum_us(ctx, spec, job, n_sort, PHASES_PER_QUANTUM)
        base = f"policy=timeslice quantum={q}us {job}"
        alone, mix, ratio = slowdowns(ctx, base, f"{base} job=hog:procs={HARTS}", "oddeven", n=seeds, cpus=HARTS)
        data[keys] = {"quantum_us": q, "phase_us": phase, "alone_par_us": alone, "mix_par_us": mix,
                      "slowdown": ratio}
        name = keys.split("=")[1]
        model = (models.uncoordinated_spin_slowdown(phase, 2, HARTS, q, 0.0) if name == "spin"
                 else models.blocking_altruistic(phase, 2, 1.0, q, 0.0) / phase)
        rows.append(judged(f"{label}, 16 harts paced: slowdown ({q / phase:.0f} phases per quantum)",
                           ODD[keys], {name: ratio}, harts=HARTS, fmt="{:.0f}",
                           model=f"eq. {8 if name == 'spin' else 13}: {model:.0f}"))
    rows.append(judged("odd-even sort, 16 harts paced: the barrier giving the hart away slowed more than spinning",
                       ODD["order"], {"block": data["barrier=block"]["slowdown"],
                                      "spin": data["barrier=spin"]["slowdown"]}, harts=HARTS, fmt="{:.0f}",
                       why="giving the hart away did not cost more than spinning at 16 harts"))
    n_gauss = 512
    # one quantum for the four versions, as the thesis's 100 ms: ~3 of the coarse-barrier version's barriers
    q, per = _quantum_us(ctx, spec, f"job=gauss:n={n_gauss},procs={HARTS},{GAUSS[0][1]}", n_gauss,
                         BARRIERS_PER_QUANTUM)
    data["gauss_quantum_us"], data["gauss_barrier_us"] = q, per
    for label, keys, paper in GAUSS:
        job = f"job=gauss:n={n_gauss},procs={HARTS},{keys}"
        base = f"policy=timeslice quantum={q}us {job}"
        alone, mix, ratio = slowdowns(ctx, base, f"{base} job=hog:procs={HARTS}", "gauss", n=seeds, cpus=HARTS)
        data[label] = {"alone_par_us": alone, "mix_par_us": mix, "slowdown": ratio}
        barrier = keys.endswith("sync=barrier")
        model = models.uncoordinated_spin_slowdown(per, 2, HARTS, q, 0.0) if barrier else 2.0
        rows.append(judged(f"gauss {label}, 16 harts paced: slowdown", gauss_criterion(label, paper),
                           {label: ratio}, harts=HARTS, model=f"{model:.2f}",
                           why=f"ours {median(ratio):.2f} against the thesis's {paper:.2f} at {q} us quanta"))
    return Section(
        "markatos-3.5.1-paced16", "Markatos 3.5.1 at 16 processors, on paced QEMU", "Markatos 1993, sec. 3.5.1",
        f"16 harts paced (`--model {spec}`): `policy=timeslice job=oddeven:n={n_sort},procs=16,barrier=spin|block` "
        f"and `job=gauss:n={n_gauss},procs=16,variant=...,sync=...`, each alone and with `job=hog:procs=16`, at a "
        f"quantum that gives the thesis's ~{PHASES_PER_QUANTUM:.0f} sort phases per quantum, and for the four Gauss "
        f"versions one quantum of ~{BARRIERS_PER_QUANTUM:.0f} coarse-barrier episodes (the thesis's one 100 ms "
        f"quantum for all four), each measured alone first; {seeds} seed(s) each; slowdown of par_us.",
        rows,
        "The same criteria as the 2-hart section's rows marked for 16 processors, now measured where 16 run: on "
        "QEMU with paced harts, where the wall clock is a 16-processor machine's. A boot whose harts fell behind "
        "their schedule is flagged like a busy host (and keeps the results out of docs/ without --allow-busy).",
        data=data)
