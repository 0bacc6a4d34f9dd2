"""Tucker & Gupta's point 4 under the machine model: how much of process control's gain is cache corruption
avoided (issue 26, item 2).

Tucker & Gupta (1989, sec. 2) give four reasons uncontrolled time-sharing degrades parallel applications; the
fourth is "processor cache corruption: when a processor is interleaved between multiple applications, much
of the data from previously scheduled applications will be purged from the cache on each time slice. By the
time the old application is scheduled again, it will have to refetch its entire working set", and with the
50-100-cycle miss penalties of the machines then being designed "the performance degradation may be a factor
of 10 or more".  QEMU alone has no caches, so the existing tucker-gupta section's gain is all spinning and
switching (their points 1-3).  Here the same staggered mix (that section's scenario builder) runs under
`global` and under `partition` with process control, without a model and under `modern`, and the MODEL lines
say what the caches cost each job: misses per switch, and the stall time process control avoided beside the
elapsed time it saved.

Why `modern`: point 4 is a prediction for the scalable machines "currently being designed", with misses of
50-100 cycles or more; the `modern` profile (a 2-socket Zen 4) is that future - 276-661-cycle coherence and
memory misses, a private 1 MB L2 per hart and a node each for our 2 harts - while `iris` (29 cycles, a bus)
is the generation Tucker & Gupta measured on, whose misses they did not expect to matter yet.

The model column is their reasoning: every switch refetches the job's whole working set (its share of the
matrix: gauss's n x n doubles over its processes), each line a memory miss at the profile's cost.

Co-runners that evict: the tucker-gupta mix's synth computes in registers and oddeven's 3000
keys are 12 KB, so beside gauss's 256 KB share nothing they touch could push it out of a 1 MB L2 - the first
version of this section measured no corruption because none could happen. So the mix here also has a hog with a
working set (apps/hog.c's ws=, one per process on its own node) of ws_kb(): twice the profile's private L2 per
hart (modern: 2 x 1024 KiB), so one sweep after each of its blocks flushes everything gauss left in that hart's
L1 and L2. It does not reach past the last level: modern's 32 MB LLC holds both (a larger sweep would take the hog
tens of ms per block under the plugin), so what the corruption costs gauss here is an L2 refill from the LLC
(llc_cycles), not from memory - the counts (llc_hits) say how many.
"""

from __future__ import annotations

from . import Row, Section, section, fmt_spread, judged, median, restates
from . import criteria as cr
from ..comparison import response_us
from .common import plot
from .markatos_partition import TUCKER_APPS, tucker_scenario

PROFILE = "modern"
CONFIGS = (("global", "global", "yes"), ("partition+pc", "partition", "yes"))
MODELS = ("none", PROFILE)


def ws_kb(prof: dict) -> int:
    """The evicting co-runner's working set per process: twice the profile's private L2 (the last private level
    a time slice must flush), within apps/hog.c's ws= bound."""
    return min(2 * int(prof.get("l2_kb") or prof.get("l1_kb") or 64), 8192)


def scenario(h: int, policy: str, adapt: str, prof: dict) -> str:
    """The tucker-gupta mix and the evicting hog (ws_kb), every job with adapt=."""
    return f"{tucker_scenario(h, policy, adapt)} job=hog:procs={h},ws={ws_kb(prof)},adapt={adapt}"


def mix_records(run) -> dict[str, dict]:
    """Per app of the mix: elapsed_us, switches, migrations from its RESULT, and accesses, misses, coherence,
    llc_hits, stall_us from its MODEL job= line (zeros without a model)."""
    out = {}
    for r in run.results:
        m = run.parsed.model_jobs.get(r["job"], {})
        # elapsed_us here is the response time, from arrival (end_us - arrive_us): the jobs arrive 10 ms apart
        out[r["app"]] = {"elapsed_us": float(response_us(r)), "switches": int(r.get("switches", 0)),
                         "migrations": int(r.get("migrations", 0)), "accesses": int(m.get("accesses", 0)),
                         "misses": int(m.get("misses", 0)), "coherence": int(m.get("coherence", 0)),
                         "llc_hits": int(m.get("llc_hits", 0)), "stall_us": float(m.get("stall_us", 0))}
    return out


def working_set_lines(n: int, procs: int, line_b: int) -> int:
    """A gauss process's share of the n x n doubles in lines: what Tucker & Gupta say a switch refetches."""
    return -(-(n * n * 8 // procs) // line_b)


def refetch_us(switches: int, lines: int, miss_cycles: int, cycle_ps: float) -> float:
    """Their point 4 as a number: every switch refetches the working set, each line a miss of miss_cycles."""
    return switches * lines * miss_cycles * cycle_ps / 1e6


def stall_share(glob: dict, part: dict) -> float | None:
    """Of the elapsed time process control saved (global - partition), the share that was stall time (the
    caches' cost) saved; None when it saved no time."""
    saved = glob["elapsed_us"] - part["elapsed_us"]
    return (glob["stall_us"] - part["stall_us"]) / saved if saved > 0 else None


def misses_per_switch(glob: dict, part: dict) -> float:
    """The misses a job took under global beyond those under partitions, per switch it took under global."""
    return (glob["misses"] - part["misses"]) / max(glob["switches"], 1)


def coherence_share(glob: dict, part: dict) -> float:
    """Of the misses a job took under global beyond partition's, the share that were coherence misses (the line
    was in another hart's cache: the process had moved), as against capacity misses (evicted by the others)."""
    extra = glob["misses"] - part["misses"]
    return (glob["coherence"] - part["coherence"]) / extra if extra > 0 else 0.0


def _gauss_n() -> int:
    return int(TUCKER_APPS[0].split("n=")[1].split(",")[0])


@section("tucker-gupta-cache", "Tucker & Gupta's point 4: cache corruption under the machine model", order=33,
            quick_seconds=8, full_seconds=45)
def cache_corruption(ctx) -> Section:
    from ..model import parse_spec
    h, reps = ctx.cpus, ctx.reps(3, 1)
    prof = dict(parse_spec(PROFILE).values)
    recs: dict[tuple[str, str], list[dict]] = {}
    cycle_ps = []
    for model in MODELS:
        for label, policy, adapt in CONFIGS:
            recs[(model, label)] = []
            for seed in range(1, reps + 1):
                run = ctx.boot(scenario(h, policy, adapt, prof), seed, model=model)
                recs[(model, label)].append(mix_records(run))
                if model != "none" and run.parsed.model_end:
                    cycle_ps.append(float(run.parsed.model_end["cycle_ps"]))
    apps = list(recs[("none", "global")][0])

    data = {f"{m}/{label}": v for (m, label), v in recs.items()}
    data["cycle_ps"], data["ws_kb"] = cycle_ps, ws_kb(prof)
    rows = cache_rows(data, h)
    fig = _figure(ctx, recs, apps)
    return Section(
        "tucker-gupta-cache", "Tucker & Gupta's point 4: cache corruption under the machine model",
        "Tucker & Gupta 1989, sec. 2 point 4 (cache corruption) and sec. 5",
        "the tucker-gupta section's mix and a hog whose working set evicts, "
        f"`{scenario(h, 'global|partition', 'yes', prof)}`"
        f" (ws = 2 x the profile's {prof['l2_kb']} KiB private L2), without a model and under `{PROFILE}`; {reps} "
        "seeds; each job's response time (end_us - arrive_us) and switches, and its MODEL line (misses, stall).",
        rows, f"The evicting co-runner's size: the hog's ws = {ws_kb(prof)} KiB per process, twice `{PROFILE}`'s "
        f"{prof['l2_kb']} KiB private L2, so one sweep flushes every line gauss left in a hart's L1 and L2; the "
        f"{prof['llc_kb']} KiB LLC holds both, so what corruption costs here is an L2 refill from the LLC "
        f"({prof['llc_cycles']} cycles), not from memory ({prof['mem_cycles']}). "
        "Without a model the gain of process control is the spinning and switching it avoids; under the "
        "model it also keeps each job's lines in one hart's caches. The stall a job is charged includes the kernel's "
        "work on its behalf (tools/model/README.md). Per job (medians), misses and stall under global / partition: "
        + "; ".join(f"{a} {median([r[a]['misses'] for r in recs[(PROFILE, 'global')]]) / 1e3:.0f}k, "
                    f"{median([r[a]['stall_us'] for r in recs[(PROFILE, 'global')]]) / 1e3:.1f} ms / "
                    f"{median([r[a]['misses'] for r in recs[(PROFILE, 'partition+pc')]]) / 1e3:.0f}k, "
                    f"{median([r[a]['stall_us'] for r in recs[(PROFILE, 'partition+pc')]]) / 1e3:.1f} ms"
                    for a in apps) + ".",
        figures=[f for f in [fig] if f], data=data)


# Tucker & Gupta 1989, sec. 2, point 4: "much of the data from previously scheduled applications will be purged
# from the cache on each time slice. By the time the old application is scheduled again, it will have to refetch
# its entire working set ... the performance degradation may be a factor of 10 or more".
POINT4 = "Tucker & Gupta 1989, sec. 2 point 4"
CACHE = {
    "stall": cr.bound("stall_share", ">=", 0.5, "a major source, a factor of 10 or more (point 4)", POINT4,
                      "the paper predicts cache corruption dominates the loss: read as at least half of the time "
                      "process control saves being stall time saved", domain=(-10.0, 10.0)),
    "warm": cr.ordering(["stall_global", "stall_partition"], "control keeps caches warm: less stall", POINT4,
                        "an ordering: the paper gives no stall times", domain=(0.0, 1e6)),
}


def refetch_criterion(lines: int) -> cr.Criterion:
    """'Refetch its entire working set' each time slice, the set computed from the configuration (n, procs, line)."""
    return cr.within("per_switch", lines, 0.5, "the entire working set each time slice (point 4)", POINT4,
                     "at least half the set and at most 1.5 times it (a switch also evicts other lines); "
                     "partially from a tenth", partly=0.9, domain=(-10.0 * lines, 10.0 * lines))


def _seeds(data: dict, model: str, fn) -> list:
    return [fn(g, p) for g, p in zip(data[f"{model}/global"], data[f"{model}/partition+pc"])]


@restates("tucker-gupta-cache")
def cache_rows(data: dict, h: int, old: dict | None = None) -> list[Row]:
    from ..model import parse_spec
    from .markatos_partition import TUCKER, _tucker_why
    prof, old = dict(parse_spec(PROFILE).values), old or {}
    ratio = {m: _seeds(data, m, lambda g, p: g["gauss"]["elapsed_us"] / p["gauss"]["elapsed_us"]) for m in MODELS}
    rows = [judged(f"gauss: elapsed under global / partition with process control, {PROFILE} (no model)",
                   TUCKER["gauss"], {"gauss": ratio[PROFILE]}, harts=h, why=_tucker_why(ratio[PROFILE]),
                   ours=f"{fmt_spread(ratio[PROFILE])}; without a model {fmt_spread(ratio['none'])}")]
    lines = working_set_lines(_gauss_n(), h, prof["line_b"])
    per_switch = _seeds(data, PROFILE, lambda g, p: misses_per_switch(g["gauss"], p["gauss"]))
    coh = _seeds(data, PROFILE, lambda g, p: coherence_share(g["gauss"], p["gauss"]))
    g_mis, p_mis, g_coh, p_coh = (median([r["gauss"][k] for r in data[f"{PROFILE}/{c}"]])
                                  for k in ("misses", "coherence") for c in ("global", "partition+pc"))
    rows.append(judged(
        f"gauss under global, {PROFILE}: misses per switch beyond partition's", refetch_criterion(lines),
        {"per_switch": per_switch}, model=f"{lines} lines ({_gauss_n()}^2 doubles / {h} processes / "
        f"{prof['line_b']} B)", harts=h, fmt="{:.0f}",
        why=_refetch_why(data, lines, per_switch, coh)))
    share = [x for x in _seeds(data, PROFILE, lambda g, p: stall_share(g["gauss"], p["gauss"])) if x is not None]
    rows.append(judged(f"gauss, {PROFILE}: stall time saved / elapsed time saved by process control",
                       CACHE["stall"], {"stall_share": share}, model=_stall_model(data, h, lines, prof, old),
                       harts=h, ours=fmt_spread([100 * x for x in share], "{:.1f}", " %") if share else "-",
                       why=_stall_why(data, prof)))
    stall = {label: [sum(r[a]["stall_us"] for a in r if a != "hog") / 1e3 for r in data[f"{PROFILE}/{label}"]]
             for label, _p, _a in CONFIGS}
    rows.append(judged(f"the three jobs' stall, global vs partition with process control, {PROFILE} (ms)",
                       CACHE["warm"], {"stall_global": stall["global"], "stall_partition": stall["partition+pc"]},
                       harts=h, fmt="{:.1f}", why="the jobs stalled no less under partitions"))
    return rows


def _med(data: dict, config: str, key: str, app: str = "gauss") -> float:
    return median([r[app].get(key, 0) for r in data[f"{PROFILE}/{config}"]])


def _refetch_why(data: dict, lines: int, per_switch: list, coh: list) -> str:
    """A measured cause for the misses per switch: the counts under both configurations, and where the extra
    misses came from (LLC refills: lines a co-runner pushed out of the L2; coherence: lines the other hart held)."""
    g_mis, p_mis = _med(data, "global", "misses"), _med(data, "partition+pc", "misses")
    g_llc, p_llc = _med(data, "global", "llc_hits"), _med(data, "partition+pc", "llc_hits")
    extra, sw = g_mis - p_mis, _med(data, "global", "switches")
    ws = data.get("ws_kb")
    sweep = f"beside a hog sweeping {ws} KiB per block" if ws else "beside co-runners that touch little memory"
    if median(per_switch) < 0.02 * lines:
        return (f"gauss took about as many misses under global as under partitions ({g_mis / 1e3:.0f}k vs "
                f"{p_mis / 1e3:.0f}k, LLC refills {g_llc / 1e3:.0f}k vs {p_llc / 1e3:.0f}k) {sweep}: "
                f"{median(per_switch):.0f} "
                f"lines per switch of its {lines}")
    return (f"a switch refetched {median(per_switch) / lines:.0%} of gauss's {lines} lines {sweep}: {g_mis / 1e3:.0f}k "
            f"misses under global against {p_mis / 1e3:.0f}k under partitions over {sw:.0f} switches; of the "
            f"{extra / 1e3:.0f}k extra, {(g_llc - p_llc) / max(extra, 1):.0%} LLC refills (evicted from the L2) and "
            f"{median(coh):.0%} coherence (lines the other hart held)")


def _stall_why(data: dict, prof: dict) -> str:
    """A measured cause for the stall share: the time saved against the stall saved, and the refills' level."""
    saved = median(_seeds(data, PROFILE, lambda g, p: g["gauss"]["elapsed_us"] - p["gauss"]["elapsed_us"]))
    stall = median(_seeds(data, PROFILE, lambda g, p: g["gauss"]["stall_us"] - p["gauss"]["stall_us"]))
    llc = _med(data, "global", "llc_hits") - _med(data, "partition+pc", "llc_hits")
    return (f"process control saved gauss {saved / 1e3:.1f} ms, of which {stall / 1e3:.2f} ms stall: its "
            f"{llc / 1e3:.0f}k extra refills under global came from the LLC at {prof['llc_cycles']} cycles, not "
            f"from memory at {prof['mem_cycles']} (the LLC holds the hog's sweep too), while its spinning "
            "processes lost whole quanta to each other (points 1-2)")


def _stall_model(data: dict, h: int, lines: int, prof: dict, old: dict) -> str:
    """Their point 4 as a share of the time saved: every switch refetches the set, in parallel on h harts."""
    label = f"gauss, {PROFILE}: stall time saved / elapsed time saved by process control"
    if not data.get("cycle_ps"):
        return old.get(label, {}).get("model", "-")      # a stored run without the plugin's cycle
    g_sw = _seeds(data, PROFILE, lambda g, p: max(g["gauss"]["switches"], 1))
    model_us = refetch_us(int(median(g_sw)), lines, prof["mem_cycles"], median(data["cycle_ps"]))
    saved = median(_seeds(data, PROFILE, lambda g, p: g["gauss"]["elapsed_us"] - p["gauss"]["elapsed_us"]))
    return f"{model_us / h / saved:.0%} (every switch refetches it, in parallel on {h} harts)" if saved > 0 else "-"


def _figure(ctx, recs, apps) -> str | None:
    def draw(ax):
        width = 0.2
        for k, (model, label) in enumerate(recs):
            ys = [median([r[a]["elapsed_us"] for r in recs[(model, label)]]) / 1e3 for a in apps]
            stall = [median([r[a]["stall_us"] for r in recs[(model, label)]]) / 1e3 for a in apps]
            xs = [x + (k - 1.5) * width for x in range(len(apps))]
            ax.bar(xs, ys, width=width, label=f"{label}, {model}")
            ax.bar(xs, stall, width=width, color="black", alpha=0.5)
        ax.set_xticks(range(len(apps)), apps)
        ax.set_ylabel("elapsed ms (dark: stall)")
        ax.legend(fontsize=8)
    return plot(ctx, "tucker-gupta-cache", draw)
