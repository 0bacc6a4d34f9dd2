"""The simulator against QEMU under the machine model (issue 28, item 3): ``schedlab validate --model P``.

For each profile and --cpus, the locality sections' cases that the simulator models run on QEMU with
``--model P`` and in the simulator with the same profile and QEMU's cycle (the boot's BOOT cycle_ps):

  ch2      markatos-ch2's coarse Gauss alone, ``job=gauss:n=N,variant=coarse,procs=CPUS`` (its speedup
           curve's points): time and misses
  fig3.2   markatos-fig3.2-caches' coarse Gauss with a hog, under every policy of the build (Fig. 3.2's
           scenario, markatos_partition.fig32_tokens): time alone and in the mix, misses of each job in
           both, slowdown
  ch5      markatos-ch5's loop apps alone: SOR (n=256, iters=10) under static, ss and afs; transitive
           closure (graph=skewed, clique=40, n=256) and adjoint convolution (n=50) under static, ss, gss and
           afs (LOOP_APPS): time and misses
  ch4      markatos-ch4's Gauss (butterfly n=256, iris n=384), grassfire (iris n=384) and msort (iris
           n=131072), each
           ``variant=fine,place=mcs|lb`` and ``variant=coarse`` as markatos_ch4.tokens boots them: time and
           misses (the fit scales the thread costs with the app's unit: sim_validate.THREAD_UNITS)

Each seed first boots the case's job alone under the model on QEMU and fits the simulator's unit of that app
(sim_validate.fit_calib) to it: the compute speed is the host's *under the plugin*, whose lookups slow every
access by a tax the model never charges (docs/guide/machine-model.md, Caveats: ~3x on coarse Gauss under `modern`);
fitting to a run without the model, as this first did, left that tax out and put every time alone 65-80 %
low. At one hart the unit is fitted to the run's time less the stalls the plugin charged it (its MODEL job
line's stall_us), so time alone tests the model's stalls. At CPUS >= 2 the job's stalls are a sum over its
processes whose critical path is not their mean (butterfly's far process pays 12x; in real time a spinning
wait's reads are accesses too), so there the simulator's run alone under the model is fitted to QEMU's time
(_fit): time alone is equal by the fit, and the mix's time and the slowdown test the model. In deterministic
mode the plugin charges nothing (charge=off), so the whole time is compute there, and the simulator runs
charge=off too (its model counts the misses and adds no stall: sim_run's deterministic=).
Errors are relative to QEMU's median over the seeds; the target is 15 %. Every case is reported, those that
miss too, and the locality apps the simulator does not model are listed (sim_validate.UNMODELLED).
"""
from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from . import sim_validate as sv
from .executor import boot, sim_run as sim_boot      # through --jobs/--executor (executor.py)

GAUSS = "variant=coarse,sync=barrier"
#: ch4 (markatos-table4.1-butterfly, markatos-figs4.1-4.3): the apps' n per profile, as markatos_ch4 boots them
CH4_N = {"butterfly": {"gauss": 256}, "iris": {"gauss": 384, "grassfire": 384, "msort": 131072}}


def fig32_tokens(policy: str, h: int, n: int, background: bool = False) -> str:
    """Fig. 3.2's scenario as reproduce/markatos_partition.py builds it (1 ms quantum, the hog as wide)."""
    from .reproduce.markatos_partition import fig32_tokens as tokens
    return tokens(policy, GAUSS, h, n, background)


def _model_job(run, app: str) -> dict | None:
    """The MODEL job= line of the run's `app` job, if the model printed one."""
    r = next((r for r in run.results if r["app"] == app), None)
    return run.parsed.model_jobs.get(r["job"]) if r else None


def _misses(run, app: str) -> int | None:
    job = _model_job(run, app)
    return job.get("misses") if job else None


def _app(token: str) -> str:
    return token.split("=", 1)[1].split(":", 1)[0]


def _par(run, app: str = "gauss") -> float:
    return sv.timed(run, app)


def _compute_us(run, cpus: int, app: str = "gauss", timed_share: float = 1.0) -> float:
    """The job's time alone less what the plugin charged it for misses inside the timed part: its stall_us
    (the whole job's) times timed_share over its processes, which run side by side (a job alone: cpus
    processes on cpus harts). Nothing is charged with charge=off."""
    par = _par(run, app)
    job = _model_job(run, app)
    if not job or not _charged(run):
        return par
    return max(par - float(job.get("stall_us", 0)) * timed_share / max(cpus, 1), par * 0.05)


def _charged(run) -> bool:
    return (run.parsed.model_end or {}).get("charge") == "on"


def _timed_share(profile: str, tokens: str, app: str, cps: int | None) -> float:
    """The part of a job's stalls that falls inside its timed part (par_us), as the simulator places them
    at one hart: its par with the model charging less its par with charge=off, over its whole stall_us.
    The rest is set-up and the check (SOR's: 60 % of its stall under butterfly and iris alike)."""
    on = sim_boot(1, tokens, model=profile, cycle_ps=cps)
    off = sim_boot(1, tokens, model=profile, cycle_ps=cps, deterministic=True)
    stall = float((_model_job(on, app) or {}).get("stall_us", 0))
    return min(max((_par(on, app) - _par(off, app)) / stall, 0.0), 1.0) if stall else 1.0


def _fit(profile: str, cpus: int, head: list[str], tokens: str, q_run, app: str, deterministic: bool,
         tmp: Path) -> str:
    """A calibration with the app's unit fitted to QEMU's run alone (q_run, the job of `tokens`).

    In deterministic mode (nothing charged) to its time. At one hart to its compute: its time less the part
    of its stall_us (the whole job's) that falls inside the timed part (_timed_share; subtracting all of it
    put SOR 21-42 % low), so time alone tests the model's stalls. At CPUS >= 2 the job's stall_us is a sum
    over its processes, and what its time lost to them is the critical path's, not their mean: under
    butterfly's NUMA map the process far from the matrix pays 12x and sets every step, and in real time a
    waiting process's spin reads are accesses too (no caches: 35 M accesses alone on 2 harts against 17.8 M
    folded onto one, 17.9 M with barrier=block). Subtracting the mean overstated Gauss's compute by 27 %
    there, and Fig. 3.2's slowdown under partition (the folded job's accesses all local) by 50 %. So at CPUS
    >= 2 the unit is fitted with the model on: the simulator's run alone, its stalls placed on its processes
    by its own model, takes QEMU's time (time alone is equal by the fit), and the mix's time and slowdown
    test what the schedule does to the misses."""
    job = next(t for t in tokens.split() if t.startswith("job="))
    rest = [t for t in tokens.split() if t != job]
    if deterministic or not _charged(q_run):
        target = _compute_us(q_run, cpus, app)
    elif cpus == 1:
        share = _timed_share(profile, " ".join(head + [tokens]), app, _cycle_ps(q_run))
        target = _compute_us(q_run, 1, app, share)
    else:
        calib, _ = sv.fit_calib(cpus, head + rest, [job], {job: _par(q_run, app)}, None, tmp, model=profile,
                                cycle_ps=_cycle_ps(q_run))
        return calib
    calib, _ = sv.fit_calib(cpus, head + rest, [job], {job: target}, None, tmp)
    return calib


def _with_hog_speed(calib: str, cpus: int, seed: int, profile: str, deterministic: bool, where: Path) -> str:
    """`calib` with the hog's step at QEMU's own under the model, from the hog's own calibration run (beside a
    sleeper that computes nothing: sim_validate_heldout.hog_cal_tokens), never from the mix it is compared in
   . The fit scales only the foreground app; the hog kept the default calibration's step
    (5.8 ns against deterministic QEMU's 14.1 under a model), ran twice the blocks and touched twice their
    words."""
    from .sim_validate_heldout import hog_cal_tokens, hog_step_ns
    run = boot(cpus, hog_cal_tokens(cpus, seed), timeout=900, deterministic=deterministic, model=profile)
    step = hog_step_ns(run) if run.ok else None
    if not step:
        return calib
    data = json.loads(Path(calib).read_text())
    data["hog_unit_ns"] = step
    path = where / f"hog-{len(list(where.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return str(path)


def _cycle_ps(run) -> int | None:
    value = (run.boot or {}).get("cycle_ps")
    return int(value) if isinstance(value, (int, float)) and value > 0 else None


def _pair(qemu: list[float], sim: list[float]) -> dict:
    q, s = statistics.median(qemu), statistics.median(sim)
    return {"qemu": q, "qemu_min": min(qemu), "qemu_max": max(qemu), "sim": s, "error": s / q - 1.0 if q else None}


#: ch5's loop apps: their job token at --cpus for a scheduler (n: the case's n, 256, or 48 with --tiny).
LOOP_APPS = {
    "sor": lambda n, sched, cpus: f"job=sor:n={n},iters=10,sched={sched},procs={cpus}",
    "tclosure": lambda n, sched, cpus: f"job=tclosure:n={n},graph=skewed,clique=40,sched={sched},procs={cpus}",
    "adjoint": lambda n, sched, cpus: f"job=adjoint:n={50 if n >= 50 else 20},sched={sched},procs={cpus}",
}


def run_case(profile: str, cpus: int, policy: str | None, n: int, seeds, deterministic: bool = False) -> dict:
    """One case (policy None: ch2's Gauss alone; "<app>:<sched>": ch5's loop app alone, LOOP_APPS;
    "ch4:<app>:<variant>": chapter 4's thread app alone), seeds 1..: QEMU and simulator side by side."""
    if policy and policy.startswith("ch4:"):  # "ch4:<app>:<variant>", as markatos_ch4.tokens boots it
        _, app, variant = policy.split(":")
        from .reproduce.markatos_ch4 import tokens
        return _run_alone(profile, cpus, f"{tokens(app, variant, n)},procs={cpus}", "ch4", policy, n, seeds,
                          deterministic)
    if policy and policy.split(":", 1)[0] in LOOP_APPS:
        app, sched = policy.split(":", 1)
        return _run_alone(profile, cpus, LOOP_APPS[app](n, sched, cpus), "ch5", policy, n, seeds, deterministic)
    got = {k: [] for k in ("alone_q", "alone_s", "mix_q", "mix_s", "miss_alone_q", "miss_alone_s", "miss_mix_q",
                           "miss_mix_s", "miss_hog_q", "miss_hog_s")}
    alone_tok = f"job=gauss:n={n},{GAUSS},procs={cpus}" if policy is None else fig32_tokens("timeslice", cpus, n)
    if policy is None:
        return _run_alone(profile, cpus, alone_tok, "ch2", None, n, seeds, deterministic)
    with tempfile.TemporaryDirectory(prefix="schedlab-validate-model-") as tmp:
        for seed in seeds:
            head = [f"seed={seed}"]
            q_alone = boot(cpus, " ".join(head + [alone_tok]), timeout=900, deterministic=deterministic,
                           model=profile)
            # fit the Gauss job itself; the scenario's other tokens (fig. 3.2's policy and quantum) go with it
            calib = _fit(profile, cpus, head, alone_tok, q_alone, "gauss", deterministic, Path(tmp))
            cps = _cycle_ps(q_alone)
            s_alone = sim_boot(cpus, " ".join(head + [alone_tok]), calib=calib, model=profile, cycle_ps=cps,
                               deterministic=deterministic)
            got["alone_q"].append(_par(q_alone))
            got["alone_s"].append(_par(s_alone))
            got["miss_alone_q"].append(_misses(q_alone, "gauss"))
            got["miss_alone_s"].append(_misses(s_alone, "gauss"))
            if policy is None:
                continue
            mix = " ".join(head + [fig32_tokens(policy, cpus, n, background=True)])
            q_mix = boot(cpus, mix, timeout=900, deterministic=deterministic, model=profile)
            hog_calib = _with_hog_speed(calib, cpus, seed, profile, deterministic, Path(tmp))
            s_mix = sim_boot(cpus, mix, calib=hog_calib, model=profile, cycle_ps=cps, deterministic=deterministic)
            got["mix_q"].append(_par(q_mix))
            got["mix_s"].append(_par(s_mix))
            for kind, run in (("q", q_mix), ("s", s_mix)):
                got[f"miss_mix_{kind}"].append(_misses(run, "gauss"))
                got[f"miss_hog_{kind}"].append(_misses(run, "hog"))
    row = {"profile": profile, "cpus": cpus, "case": "ch2" if policy is None else "fig3.2", "policy": policy,
           "n": n, "seeds": list(seeds), "raw": got, "time_alone": _pair(got["alone_q"], got["alone_s"]),
           "misses_alone": _pair([x or 0 for x in got["miss_alone_q"]], [x or 0 for x in got["miss_alone_s"]])}
    if policy is not None:
        row["time_mix"] = _pair(got["mix_q"], got["mix_s"])
        row["misses_mix"] = _pair([x or 0 for x in got["miss_mix_q"]], [x or 0 for x in got["miss_mix_s"]])
        row["misses_hog"] = _pair([x or 0 for x in got["miss_hog_q"]], [x or 0 for x in got["miss_hog_s"]])
        row["slowdown"] = _pair([m / a for m, a in zip(got["mix_q"], got["alone_q"])],
                                [m / a for m, a in zip(got["mix_s"], got["alone_s"])])
    return row


def _run_alone(profile: str, cpus: int, token: str, case: str, policy, n: int, seeds, deterministic: bool) -> dict:
    """A job alone under the model: its unit fitted to QEMU's compute (_compute_us), then time and misses."""
    app, got = _app(token), {"alone_q": [], "alone_s": [], "miss_alone_q": [], "miss_alone_s": []}
    with tempfile.TemporaryDirectory(prefix="schedlab-validate-model-") as tmp:
        for seed in seeds:
            head = [f"seed={seed}"]
            q = boot(cpus, " ".join(head + [token]), timeout=900, deterministic=deterministic, model=profile)
            calib = _fit(profile, cpus, head, token, q, app, deterministic, Path(tmp))
            s = sim_boot(cpus, " ".join(head + [token]), calib=calib, model=profile, cycle_ps=_cycle_ps(q),
                         deterministic=deterministic)
            got["alone_q"].append(_par(q, app))
            got["alone_s"].append(_par(s, app))
            got["miss_alone_q"].append(_misses(q, app) or 0)
            got["miss_alone_s"].append(_misses(s, app) or 0)
    return {"profile": profile, "cpus": cpus, "case": case, "policy": policy, "n": n, "seeds": list(seeds),
            "raw": got, "time_alone": _pair(got["alone_q"], got["alone_s"]),
            "misses_alone": _pair(got["miss_alone_q"], got["miss_alone_s"])}


def cases(profiles, cpus_list, tiny: bool = False) -> list[tuple[str, int, str | None, int]]:
    """(profile, cpus, policy or None or "<app>:<sched>", n): ch2's alone run, Fig. 3.2's mix under every policy,
    ch5's SOR alone under static, ss and afs, tclosure and adjoint under static, ss, gss and afs."""
    n = 48 if tiny else 256
    policies = ["gang"] if tiny else sv.build_policies()
    ch5 = ["sor:afs", "tclosure:afs"] if tiny else ["sor:static", "sor:ss", "sor:afs"] + [
        f"{app}:{s}" for app in ("tclosure", "adjoint") for s in ("static", "ss", "gss", "afs")]
    ch4 = [(p, c, f"ch4:{app}:{v}", (2048 if app == "msort" else 48) if tiny else n)
           for p in profiles for app, n in CH4_N.get(p, {}).items() for c in cpus_list for v in ("mcs", "lb", "coarse")]
    return [(p, c, pol, n) for p in profiles for c in cpus_list for pol in [None, *policies, *ch5]] + ch4


def _fmt(pair: dict | None, scale: float = 1.0, digits: int = 2) -> str:
    if not pair:
        return "-"
    err = f"{100 * pair['error']:+.0f}%" if pair["error"] is not None else "?"
    miss = "" if pair["error"] is None or abs(pair["error"]) <= 0.15 else " MISS"
    return f"{pair['qemu'] * scale:.{digits}f}/{pair['sim'] * scale:.{digits}f} ({err}{miss})"


def report(rows: list[dict]) -> str:
    lines = [f"{'profile':<10} {'cpus':>4} {'case':<7} {'policy':<20} {'time alone ms q/s':>26} "
             f"{'misses alone q/s':>26} {'slowdown q/s':>22} {'gauss misses mix q/s':>28} {'hog misses q/s':>26}"]
    for r in rows:
        lines.append(f"{r['profile']:<10} {r['cpus']:>4} {r['case']:<7} {r['policy'] or '-':<20.20} "
                     f"{_fmt(r['time_alone'], 1e-3):>26} {_fmt(r['misses_alone'], 1, 0):>26} "
                     f"{_fmt(r.get('slowdown')):>22} {_fmt(r.get('misses_mix'), 1, 0):>28} "
                     f"{_fmt(r.get('misses_hog'), 1, 0):>26}")
    checked = [p for r in rows for p in (r["time_alone"], r["misses_alone"], r.get("slowdown"), r.get("misses_mix"))
               if p and p["error"] is not None]
    within = sum(abs(p["error"]) <= 0.15 for p in checked)
    lines.append(f"fitted, not counted: {within} of {len(checked)} comparisons within 15 % (time alone, misses alone, "
                 "slowdown, misses in the mix; each app's unit fitted to the same seed's QEMU run alone; the held-out "
                 "miss counts are sim_validate_heldout's)." +
                 (f" Not modelled in the simulator, so not validated: {', '.join(sv.UNMODELLED)}."
                  if sv.UNMODELLED else ""))
    return "\n".join(lines)
