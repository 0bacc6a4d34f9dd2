"""The papers' results at more than 2 processors on QEMU itself, with paced harts (tools/model/pace.h).

Unpaced, QEMU's timings mean something only while harts <= host cores, so the claims the papers make about 16
processors were judged in the simulator only (sim16.py) or not at all. A paced boot is a machine of R
instructions per second per hart at any hart count (wall time is model time while the host keeps up, and
every boot says whether it did), so these sections boot 16 harts on this host and judge the rows by the same
criteria the 2-hart sections declare with ``needs_harts=16`` - the thesis's numbers, not a criterion of ours.

They run with ``reproduce --paced`` (or ``--only``): their boots take minutes of wall time each, budgeted apart
from the 2-hart sections'. R is ``pace=auto`` for the section's harts, resolved once per section (the same R for every boot of it). The sizes are the
thesis's where the boot stays short (512-element odd-even sort, 512 x 512 Gauss); the quantum is set to the
thesis's synchronization rate - its phases or barriers per quantum - measured alone first, as sim16.py does.
"""

from __future__ import annotations

from . import Section, section, judged, median
from . import models
from .common import slowdowns
from .markatos_ch2 import chapter2_criteria
from .markatos_timeslice import GAUSS, ODD, ODDEVEN, gauss_criterion
from .. import pace

HARTS = 16
PHASES_PER_QUANTUM = 100.0 / (286.0 / 512)     # the thesis's sort: 512 phases in 286 ms, quantum 100 ms
BARRIERS_PER_QUANTUM = 3.0                      # 3.5.1: the coarse-barrier Gauss did about three a quantum


def _spec(ctx, profile: str | None = None, harts: int = HARTS) -> str:
    """The paced model spec for a section's boots: --model's own pace if it has one, else pace=auto for `harts`;
    under `profile` when given (a section about the memory model), else --model's profile if any."""
    from ..model import as_model
    base = as_model(profile or ctx.model)
    given = as_model(ctx.model)
    rate = given.pace if given is not None and given.pace else "auto"
    spec = f"pace={rate}" if base is None else base.with_pace(rate).canonical
    return pace.resolve(spec, harts, say=ctx.progress)


def _quantum_us(ctx, spec: str, job: str, episodes: int, per_quantum: float) -> tuple[int, float]:
    """(quantum in us, one episode in us): `job` alone at a 10 ms quantum sets the episode time."""
    run = ctx.boot(f"policy=timeslice quantum=10ms {job}", 1, cpus=HARTS, model=spec)
    episode = float(next(r for r in run.results)["par_us"]) / episodes
    return max(100, round(per_quantum * episode / 100) * 100), episode


# The budgets below are each section's instructions (and the model's stall cycles) per hart over the R that
# pace=auto picks on a 2-core host, plus the unpaced boot of each of its boots: a paced boot's wall time is its
# model time, so they follow from deterministic boots of the same scenarios (docs/pacing.md, "What the paced
# sections cost").
@section("markatos-3.5.1-paced16", "Markatos 3.5.1 at 16 processors, on paced QEMU", order=11,
            quick_seconds=370, full_seconds=720, paced=True)
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
    seeds = ctx.reps(2, 1)             # paced repeats barely spread (docs/pacing.md, (b)): two seeds in full
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


# ---------------------------------------------------------------- Markatos Figs. 2.2-2.3 beyond 2 processors

FIG23_CURVES = {("fine", "iris"): (1, 2, 4, 8), ("fine", "ksr1"): (1, 2, 4, 8), ("coarse", "ksr1"): (1, 2, 4, 8, 12, 16)}
CH2_KEYS = {"coarse": "variant=coarse", "fine": "variant=fine,place=lb"}


@section("markatos-ch2-paced", "Markatos Figs. 2.2-2.3: where the curves peak, on paced QEMU", order=6,
            quick_seconds=790, full_seconds=790, paced=True)
def chapter2_paced(ctx) -> Section:
    """The curves chapter 2's text describes by where they peak - the fine grain's on the SGI and the KSR-1 at 4
    processors, the coarse grain's on the KSR-1 at 12 (Fig. 2.4) - measured at their processor counts on QEMU with
    paced harts under the profile, judged by markatos-ch2's own criteria (which need those counts)."""
    if ctx.deterministic:
        return Section("markatos-ch2-paced", "Markatos Figs. 2.2-2.3: where the curves peak, on paced QEMU",
                       "Markatos 1993, sec. 2.4.1", "not run: paced harts need the real clock", [],
                       "reproduce --deterministic runs no paced section; run it without --deterministic.")
    # n=192: the matrix (296 KB) exceeds the first-level cache of both profiles (iris 64 KB, ksr1 256 KB) and fits
    # their second, markatos-ch2's regime at n=256 for a third of its instructions; a speedup curve of Gauss
    # alone moves little with the seed, so one seed unless --repeat asks for more. Quick and full are the same.
    n, reps = 192, ctx.reps(1, 1)
    crit, rows, data, specs = chapter2_criteria(2), [], {}, {}
    for (variant, profile), xs in FIG23_CURVES.items():
        spec = specs.setdefault((profile, max(xs)), _spec(ctx, profile, max(xs)))
        key, points = f"{variant}-{profile}", {}
        for x in xs:
            points[x] = [_gauss_par_us(ctx.boot(f"job=gauss:n={n},{CH2_KEYS[variant]},procs={x}", seed, cpus=x,
                                                 model=spec)) for seed in range(1, reps + 1)]
        speedup = {f"{key}@{x}": [a / b for a, b in zip(points[1], points[x])] for x in xs}
        data[key] = {"model": spec, "par_us": {str(x): v for x, v in points.items()}, "speedup": speedup}
        c = crit[(variant, profile)]
        shown = "; ".join(f"{x}: {median(speedup[f'{key}@{x}']):.2f}" for x in xs)
        best = max(xs, key=lambda x: median(speedup[f"{key}@{x}"]))
        rows.append(judged(f"{variant}, {profile}: speedup at {', '.join(map(str, xs))} paced harts", c, speedup,
                           ours=shown, harts=max(xs), why=f"ours peaks at {best}"))
    return Section(
        "markatos-ch2-paced", "Markatos Figs. 2.2-2.3: where the curves peak, on paced QEMU",
        "Markatos 1993, sec. 2.4.1, Figs. 2.2-2.4",
        f"`job=gauss:n={n},variant=...,procs=P` on P paced harts under `--model <profile>,pace=R` (R = pace=auto "
        f"for the curve's largest P, one R per curve), P as in each row; {reps} seed(s); speedup of par_us over "
        "P = 1, paired by seed.",
        rows,
        "markatos-ch2 measures every curve at 1 and 2 harts; the peaks the text names need 4 to 16 processors, "
        "which paced harts give QEMU on this host: wall time is the profile's machine's at R instructions per "
        "second per hart.", data=data)


def _gauss_par_us(run) -> float:
    if not run.ok:
        from . import ReproError
        raise ReproError(f"a paced boot failed: {run.verdict}: {run.bootargs}")
    return float(next(r for r in run.results if r["app"] == "gauss")["par_us"])
