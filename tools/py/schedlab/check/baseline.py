"""The separating mixes, shown beside the built-in policies as a baseline and never judged: the mixes on
which the papers' policies part ways, each job's slowdown (elapsed in the mix / elapsed alone, same policy,
harts and settings, as DESIGN.md's "Measuring" defines it) under every policy of the build.

* ``collapse``: two spinning jobs as wide as the machine (Tucker & Gupta's and Markatos's collapse of
  uncoordinated time-sharing);
* ``oversubscription``: a spinning job twice as wide as the machine beside a blocking one;
* ``block-spin``: a blocking job beside a spinning one.

They run in the simulator at 8 harts (16 too in the full battery) when it has the policy, else on QEMU in
deterministic mode at 2 harts (virtual times: a ratio of instruction counts, comparable across policies of
one run only). ``--quick`` runs ``collapse`` alone, and nothing when there is no simulator.
"""

from __future__ import annotations

import statistics

from .. import executor

MIXES = {
    "collapse": lambda h: [f"job=gauss:n={max(96, 4 * h)},procs={h},barrier=spin",
                           f"job=oddeven:n={max(1000, 64 * h)},procs={h},barrier=spin"],
    "oversubscription": lambda h: [f"job=synth:procs={2 * h},iters=100,grain=2000,barrier=spin",
                                   f"job=gauss:n={max(96, 4 * h)},procs={h},barrier=block"],
    "block-spin": lambda h: [f"job=gauss:n={max(96, 4 * h)},procs={h},barrier=block",
                             f"job=oddeven:n={max(1000, 64 * h)},procs={h},barrier=spin"],
}
SETTINGS = "quantum=1ms seed=1 timeout=60s"


def plan(quick: bool, have_sim: bool) -> list[tuple[str, int]]:
    """[(engine, harts)] the baseline runs on."""
    if have_sim:
        return [("sim", 8)] if quick else [("sim", 8), ("sim", 16)]
    return [] if quick else [("qemu", 2)]


def _task(engine: str, harts: int, tokens: str, kernel):
    if engine == "sim":
        return executor.sim_task(harts, tokens, timeout=300.0, deterministic=True)
    return executor.qemu_task(harts, tokens, kernel, 300.0, (), True, None)


def measure(policies: list[str], kernel, quick: bool, have_sim: bool, log=None) -> dict:
    """{"where": ..., "rows": [{mix, engine, harts, policy, slowdowns: [per job], mean}]}; a run that failed
    gives no slowdown (None) and says so."""
    mixes = ["collapse"] if quick else list(MIXES)
    jobs = []                       # (engine, harts, mix, policy, which: -1 the mix / i job i alone, tokens)
    for engine, harts in plan(quick, have_sim):
        for mix in mixes:
            parts = MIXES[mix](harts)
            for policy in policies:
                head = f"policy={policy} {SETTINGS}"
                jobs.append((engine, harts, mix, policy, -1, f"{head} {' '.join(parts)}"))
                jobs += [(engine, harts, mix, policy, i, f"{head} {p}") for i, p in enumerate(parts)]
    if not jobs:
        return {"rows": [], "note": "no simulator with this policy: the baseline runs in the full battery on QEMU"}
    runs = {}
    ex = executor.current()
    for n, (job, run) in enumerate(zip(jobs, ex.map([_task(j[0], j[1], j[5], kernel) for j in jobs])), 1):
        runs[job[:5]] = run
        if log and n % 10 == 0:
            log(f"check: baseline {n}/{len(jobs)}")
    rows = []
    for engine, harts in plan(quick, have_sim):
        for mix in mixes:
            for policy in policies:
                mixed = runs[(engine, harts, mix, policy, -1)]
                slow = []
                for i in range(len(MIXES[mix](harts))):
                    alone = runs[(engine, harts, mix, policy, i)]
                    ends = {r["job"]: r for r in mixed.results}
                    if mixed.ok and alone.ok and alone.results and i + 1 in ends:
                        slow.append(round(ends[i + 1]["elapsed_us"] / max(1, alone.results[0]["elapsed_us"]), 3))
                    else:
                        slow.append(None)
                got = [s for s in slow if s is not None]
                rows.append({"mix": mix, "engine": engine, "harts": harts, "policy": policy, "slowdowns": slow,
                             "mean": round(statistics.fmean(got), 3) if got else None})
    return {"rows": rows, "note": ""}
