"""Markatos chapter 4 under the machine model: Table 4.1 on a two-node ``butterfly`` (with and without the model)
and Figs. 4.1-4.3 on ``iris`` - the locality results of issue 26.

Table 4.1 (Butterfly Plus, 8 processors, seconds): fine grain under load balancing (LB), under memory-conscious
scheduling (MCS), and "load balancing exclusive of inter-processor communication", a bound no program can
reach; our coarse grain (as many threads as processes, each with its own part of the data) stands for it, as
the apps' headers say.  Sizes and machine differ, so the rows compare ratios: LB / MCS and MCS / bound.
The thesis's reasoning for them: MCS saves the communication LB does, so LB's time is MCS's plus the remote
accesses MCS avoids times a remote access's cost, spread over the P processors; the model column evaluates
that with the remote counts the machine model measured in the same boots (``MODEL job=`` lines) and the
profile's ``remote_cycles`` at the plugin's ``cycle_ps``.  The same boots without the model show what the
existing ``markatos-table4.1`` section (row copies, no model) can show: only the work of the copies.

Figs. 4.1-4.3 (Iris, time against 1-8 processors for coarse, fine LB, fine MCS): at two harts, P = 1 and 2.
The model column there: every miss avoided times its level's cost (``l2_cycles``, ``coh_cycles``,
``mem_cycles``), again from the measured counts; and the share of LB's misses MCS avoids, from the thesis's
"eliminates a third of the memory traffic in Grassfire, half ... in merge sort, and nearly all ... in
Gaussian elimination" with 1/P of LB's threads landing at their data's home anyway.

The counts are a whole job's (its set-up and check, and the thread library polling for work while idle,
count too): the model column is the thesis's argument fed with them, not a fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ReproError, Row, Section, section, fmt_spread, judged, median, restates
from . import criteria as cr
from .common import plot
from ..model import load_profile

APPS = ("gauss", "msort", "grassfire")
VARIANTS = ("coarse", "lb", "mcs")
TITLE = {"gauss": "Gaussian elimination", "msort": "merge sort", "grassfire": "Grassfire"}

# Table 4.1, seconds: load balancing, memory-conscious scheduling, lower bound
TABLE41 = {"gauss": (101, 71.5, 67.3), "msort": (0.95, 0.75, 0.6), "grassfire": (93, 67, 59)}
# 4.2.3: the share of a thread's memory traffic MCS eliminates ("nearly all" in Gauss)
TRAFFIC = {"gauss": (1.0, "nearly all"), "msort": (0.5, "half"), "grassfire": (1 / 3, "a third")}
FIGURE = {"gauss": "4.1", "grassfire": "4.2", "msort": "4.3"}
LEGEND = {"coarse": "coarse grain", "lb": "fine, load balancing", "mcs": "fine, memory-conscious"}
LB_STYLE = {"gauss": "copies its rows in and back (the Butterfly style)", "grassfire": "copies its rows in and back "
            "(the Butterfly style)", "msort": "reads and writes its keys where they live"}
# sizes (quick, full). butterfly: gauss 8 n^2 bytes against no cache at all - what counts is whose node a row
# is on, so smaller sizes keep the regime. iris: the working set more than one hart's 1 MB second level and
# less than two harts' (gauss 384: 1.18 MB; msort 131072 keys: 1 MB; grassfire 384: 1.15 MB), as the thesis's
# matrices "fit in four caches but not three" (Gauss 640) and "in two" (Grassfire 512); quick sizes fit in one.
#: gauss's rows under butterfly: on their owners' nodes, as the thesis had them (apps/gauss/main.c's home=)
BUTTERFLY_HOME = "own"
BUTTERFLY_N = {"gauss": (96, 256), "msort": (16384, 131072), "grassfire": (96, 256)}
IRIS_N = {"gauss": (128, 384), "msort": (32768, 131072), "grassfire": (192, 384)}
# the machine model's counters and the profile key giving each one's extra cycles
COST_KEY = {"l2_hits": "l2_cycles", "llc_hits": "llc_cycles", "coherence": "coh_cycles", "local": "mem_cycles",
            "remote": "remote_cycles"}
MISSES = ("llc_hits", "coherence", "local", "remote")


# ---------------------------------------------------------------- the thesis's reasoning (pure, host-tested)

def cost_cycles(counts: dict, prof: dict, levels=tuple(COST_KEY)) -> float:
    """The extra cycles the given levels' accesses cost: sum of count x the profile's cycles for that level."""
    return float(sum(counts.get(level, 0) * prof[COST_KEY[level]] for level in levels))


def predicted_ratio(base_us: float, extra_cycles: float, cycle_ps: float, procs: int) -> float:
    """time(other) / time(base) when the other does extra_cycles more of stalls, spread evenly over procs."""
    if base_us <= 0 or procs < 1:
        raise ValueError("a base time > 0 and at least one processor")
    return 1 + extra_cycles * cycle_ps / 1e6 / procs / base_us


def avoided_share(f: float, procs: int) -> float:
    """The share of LB's misses MCS avoids when MCS eliminates a share f of a thread's traffic and LB puts
    1/procs of the threads where their data is anyway: LB misses 1 - f/P of the traffic, MCS 1 - f."""
    lb = 1 - f / procs
    return 0.0 if lb <= 0 else (lb - (1 - f)) / lb


def verdict_gain(ours: float, model: float, rel: float = 0.3, floor: float = 0.05) -> str:
    """A ratio against the model's, compared on the gain over 1 (a ratio of 1.10 against 1.25 is a gain of 10 %
    against 25 %): reproduced within rel of the model's gain (at least floor absolute), partially within 3x."""
    tol = max(rel * abs(model - 1), floor)
    err = abs(ours - model)
    return "reproduced" if err <= tol else "partially" if err <= 3 * tol else "not reproduced"


def share_of(lb: float, mcs: float) -> float:
    """The share of LB's count MCS does not have."""
    return (lb - mcs) / lb if lb else 0.0


# ---------------------------------------------------------------- boots

@dataclass
class Meas:
    par_us: float
    counts: dict        # the job's MODEL job= line ({} without a model)
    cycle_ps: float     # the plugin's cycle (0 without a model)


def tokens(app: str, variant: str, n: int, home: str = "one") -> str:
    # gauss waits by blocking: a spinning barrier's loads would be counted (and, with no caches, charged) as
    # memory accesses, and the model column is about the data. home="own": gauss's rows on their owners' nodes
    # (apps/gauss/main.c), as the thesis's programs had them (3.3.4) - the butterfly table's, and its simulated
    # twin's (sim_locality.ch4_placement); sim_validate_model keeps the default
    extra = ",sync=barrier,barrier=block" + (f",home={home}" if home != "one" else "") if app == "gauss" else ""
    grain = "variant=coarse" if variant == "coarse" else f"variant=fine,place={variant}"
    return f"job={app}:n={n},{grain}{extra}"


def measure(ctx, app: str, variant: str, n: int, model: str, seed: int, cpus: int | None = None,
            home: str = "one") -> Meas:
    run = ctx.boot(tokens(app, variant, n, home), seed=seed, cpus=cpus, model=model)
    res = [r for r in run.results if r.get("app") == app]
    if not res or res[0].get("check") != "ok":
        raise ReproError(f"{app} ({variant}) did not check ok under model={model}:\n{run.console[-600:]}")
    job = res[0]["job"]
    counts = run.parsed.model_jobs.get(job, {}) if model != "none" else {}
    if model != "none" and not counts:
        raise ReproError(f"no MODEL job={job} line in a boot under model={model}: is build/model/model.so built?")
    return Meas(float(res[0]["par_us"]), counts, float((run.parsed.model_end or {}).get("cycle_ps", 0)))


def sweep(ctx, app: str, n: int, model: str, reps: int, cpus: int | None = None, home: str = "one"
          ) -> dict[str, list[Meas]]:
    """Every variant of app, seeds 1..reps (a seed's boots of the three variants are compared as a pair)."""
    return {v: [measure(ctx, app, v, n, model, s, cpus, home) for s in range(1, reps + 1)] for v in VARIANTS}


def ratios(num: list[Meas], den: list[Meas]) -> list[float]:
    return [a.par_us / b.par_us for a, b in zip(num, den)]


def model_ratios(num: list[Meas], den: list[Meas], prof: dict, levels, procs: int) -> list[float]:
    """Per seed: the thesis's prediction of num/den from the stalls num has beyond den."""
    return [predicted_ratio(b.par_us, cost_cycles(a.counts, prof, levels) - cost_cycles(b.counts, prof, levels),
                            a.cycle_ps or b.cycle_ps, procs) for a, b in zip(num, den)]


def gain_why(ours: float, model: float, what: str, extra_acc: float, bound_extra: float = 0.0,
             unit: str = "") -> str:
    """Why a ratio is off the model's, from the numbers. bound_extra: the counted accesses (unit) the coarse
    grain made beyond the fine grain under MCS; above 0 the side meant to be the bound was not one."""
    if bound_extra > 0:
        return (f"the coarse grain made {bound_extra / 1e6:.2f} M more {unit} than the fine grain under MCS (not "
                f"all of its data is where its threads run), so it bounds nothing here; ours is {ours:.2f}")
    if ours > model:
        return (f"{what} account for {model - 1:+.0%} of the time, ours is {ours - 1:+.0%}: the slower side also "
                f"made {extra_acc / 1e6:+.1f} M accesses more in all (copies, thread management, polling for work), "
                "whose instructions and the model's own work per access (README, Machine model, Caveats) the "
                "thesis's argument leaves out")
    return (f"{what} account for {model - 1:+.0%} of the time, ours is {ours - 1:+.0%}: stalls overlapped with "
            "waiting (load imbalance, idle harts polling) rather than adding to the critical path")


def accesses(ms: list[Meas]) -> float:
    return median([m.counts.get("accesses", 0) for m in ms])


# ---------------------------------------------------------------- Table 4.1 under butterfly

@section("markatos-table4.1-butterfly", "Markatos Table 4.1 under the machine model: LB vs MCS vs the bound "
            "on a two-node Butterfly", order=50, quick_seconds=8, full_seconds=45)
def table41(ctx) -> Section:
    reps, procs, quick = ctx.reps(3, 1), ctx.cpus, 0 if ctx.quick else 1
    spec = "butterfly"
    prof = load_profile(spec)
    nodes = min(prof["nodes"], procs)
    data = {}
    for app in APPS:
        n = BUTTERFLY_N[app][quick]
        under = {m: sweep(ctx, app, n, m, reps, home=BUTTERFLY_HOME) for m in (spec, "none")}
        data[app] = {m: {v: [x.par_us for x in xs] for v, xs in per.items()} for m, per in under.items()}
        data[app]["remote"] = {v: [x.counts.get("remote", 0) for x in xs] for v, xs in under[spec].items()}
        b = under[spec]
        data[app]["model"] = {f"{num}/{den}": model_ratios(b[num], b[den], prof, ("remote",), procs)
                              for num, den in RATIOS}
        data[app]["accesses"] = {v: [x.counts.get("accesses", 0) for x in xs] for v, xs in b.items()}
        data[app]["n"] = n
    data["remote_cycles"], data["nodes"] = prof["remote_cycles"], nodes
    rows = table41_rows(data, procs)
    return Section("markatos-table4.1-butterfly", "Markatos Table 4.1 under the machine model: LB vs MCS vs the "
                   "bound on a two-node Butterfly", "Markatos 1993, sec. 4.2.2, Table 4.1 (Butterfly Plus, 8 "
                   "processors)",
                   f"`{tokens('gauss', 'lb', BUTTERFLY_N['gauss'][quick], BUTTERFLY_HOME)}` (and `place=mcs`), "
                   "`job=msort:variant=fine,place=mcs|lb`, `job=grassfire:variant=fine,place=mcs|lb` and each app's "
                   "`variant=coarse`, n as in the rows; "
                   f"every boot under `--model {spec}` ({nodes} NUMA nodes at {procs} harts, remote "
                   f"{prof['remote_cycles']} cycles against local {prof['mem_cycles']}) and again without a model; "
                   f"{reps} seeds, the apps' par_us.", rows,
                   "Ratios, not seconds: the thesis's sizes and 8 nodes are not ours (with 2 nodes a load-balanced "
                   "thread finds its data local half the time, with 8 only an eighth). The model column is the "
                   "thesis's argument - LB = MCS + the remote accesses MCS avoids x a remote access's cost / P - "
                   "with the remote counts the model measured in the same boots; the coarse grain stands for the "
                   "thesis's unrealizable bound (LB without communication). gauss runs with `home=own`: every "
                   "variant's rows on their owners' nodes (row i on process i mod P's), as the thesis's programs "
                   "distributed the matrix among the memories (3.3.4), so coarse grain's remote accesses are the "
                   "pivot rows only and LB's those its threads make away from home; the counts are in "
                   "data.remote. The no-model rows are the same boots' ratios without the "
                   "model, the regime of the `markatos-table4.1` section. With no caches every access is a miss, so "
                   "the model's own uncharged work per access (README, Machine model, Caveats: tens of ns, the "
                   "order of a remote access's charged cost here) makes time under `butterfly` follow the number "
                   "of accesses as well as where they go.", data=data)


# Table 4.1's ratios, each judged against the thesis's own numbers (never against our model's prediction, which is
# shown beside them), and on the same side of 1 as the thesis's: 15 % covers the table's rounding and our seeds'
# spread; "partially" within 45 % because the thesis's 8 nodes put 7/8 of a load-balanced thread's data remote and
# our 2 nodes half of it (sec. 4.2.2).
RATIOS = (("lb", "mcs"), ("mcs", "coarse"))
WHAT = {"lb/mcs": "LB / MCS", "mcs/coarse": "MCS / coarse grain (the bound)"}


def table41_criterion(app: str, ratio: str) -> cr.Criterion:
    lb_s, mcs_s, bound_s = TABLE41[app]
    num, den = (lb_s, mcs_s) if ratio == "lb/mcs" else (mcs_s, bound_s)
    return cr.within(ratio, num / den, 0.15, f"{num} / {den} = {num / den:.2f}", "Markatos Table 4.1",
                     "the table's rounding and our seeds' spread; partially within 45 %: 8 nodes there, 2 here; "
                     "never on the other side of 1 (which of the two is faster is the claim)", partly=0.45, side=1.0,
                     domain=(0.0, 10.0))


T41 = {(app, r): table41_criterion(app, r) for app in APPS for r in WHAT}


def _ratio_why(app: str, per: dict, data: dict, r: str, ours: float, model: float) -> str:
    """A measured cause for a miss under the model: the remote and total accesses the two sides made."""
    num, den = r.split("/")
    d_remote = median(per["remote"][num]) - median(per["remote"][den])
    acc = per.get("accesses", {})
    extra = (median(acc[num]) - median(acc[den])) if acc else 0.0
    if num == "lb" and ours <= 1:
        r_lb, r_mcs = median(per["remote"]["lb"]), median(per["remote"]["mcs"])
        return (f"MCS was not faster than LB here ({ours:.2f}) although LB made {r_lb / 1e6:.2f} M remote accesses "
                f"to MCS's {r_mcs / 1e6:.2f} M ({r_lb / max(r_mcs, 1):.1f}x): those {d_remote / 1e6:+.2f} M x "
                f"{data.get('remote_cycles', '?')} cycles are {model - 1:+.0%} of MCS's time by the thesis's "
                f"argument (LB {extra / 1e6:+.2f} M accesses against MCS in all)")
    return gain_why(ours, model, f"the {d_remote / 1e6:+.2f} M remote accesses x {data.get('remote_cycles', '?')} "
                    "cycles", extra, -d_remote if den == "coarse" else 0.0, "remote accesses")


@restates("markatos-table4.1-butterfly")
def table41_rows(data: dict, cpus: int, old: dict | None = None) -> list[Row]:
    rows, old = [], old or {}
    for app in APPS:
        per = data[app]
        n = per.get("n", BUTTERFLY_N[app][1])
        for r, what in WHAT.items():
            num, den = r.split("/")
            c = T41[app, r]
            label = f"{app} n={n}: time {what}, `butterfly` ({data.get('nodes', 2)} nodes)"
            ours = ratios_of(per["butterfly"][num], per["butterfly"][den])
            model = (f"{median(per['model'][r]):.2f}" if "model" in per else old.get(label, {}).get("model", "-"))
            mod = float(model) if model not in ("-", "") else 1.0
            why = (_ratio_why(app, per, data, r, median(ours), mod) if "accesses" in per
                   else old.get(label, {}).get("why", ""))      # a stored run without the access counts
            rows.append(judged(label, c, {r: ours}, model=model, harts=cpus, why=why))
            plain = ratios_of(per["none"][num], per["none"][den])
            rows.append(judged(f"{app} n={n}: time {what}, no model", c, {r: plain}, model="1.00 (no remote cost)",
                               harts=cpus, why="without the model a remote access costs what a local one does, so "
                               "the remote accesses the thesis's gap is made of cost nothing: only each side's "
                               "extra instructions (copies, thread management) and the host's noise show in time"))
    return rows


def ratios_of(num: list[float], den: list[float]) -> list[float]:
    return [a / b for a, b in zip(num, den)]


# ---------------------------------------------------------------- Figs. 4.1-4.3 under iris

# Sec. 4.2.3 (Iris, 1-8 processors): "the performance of the fine-grain decomposition under memory-conscious
# scheduling is comparable to that of the coarse-grain decomposition. The only difference between the two is the
# cost of creating 200,000 threads, or about one second"; Gauss's LB "is 3 times slower than the coarse-grain
# decomposition on 7 processors" and "unable to exploit more than three processors"; Grassfire: "the improvement
# over the load balancing policy is not quite as dramatic ... but is still substantial. Similar results for
# merge sort"; MCS "eliminates a third of the memory traffic in Grassfire, half ... in merge sort, and nearly all
# ... in Gaussian elimination".
FIGS = "Markatos 4.2.3, Figs. 4.1-4.3"
COMPARABLE = cr.within("mcs/coarse", 1.0, 0.15, "comparable to the coarse grain (Gauss: ~1 s of thread creation)",
                       FIGS, "'comparable': within 15 % (the thesis's one difference, thread creation, ~1 s in ~12)",
                       domain=(0.0, 100.0))
LB3 = cr.within("lb/mcs", 3.0 / 1.085, 0.25, "LB 3x the coarse grain on 7 processors, MCS ~ coarse: ~2.8", FIGS,
                "read off the text's 3x and MCS's ~1 s over coarse; LB stops scaling at 3, so judged at 8",
                side=1.0, domain=(0.0, 100.0), needs_harts=8)
SUBSTANTIAL = cr.ordering(["lb", "mcs"], "not quite as dramatic, but still substantial", FIGS,
                          "an ordering: LB slower ('substantial' has no number)", domain=(0.0, 1e9))
SCALES = cr.bound("slowest_speedup", ">", 1.0, "all scale past 2 processors (Gauss's LB to 3)", FIGS,
                  "each variant faster on 2 than on 1: the slowest of the three", domain=(0.0, 64.0))


def traffic_criterion(app: str, procs: int) -> cr.Criterion:
    f, words = TRAFFIC[app]
    target = avoided_share(f, procs)
    return cr.within("share", target, 0.3, f"{words} of the traffic ({target:.2f} of LB's misses at {procs}, 1/{procs}"
                     " of LB's threads at home)", "Markatos 4.2.3", "the text's fraction, restated for our P; 30 %",
                     domain=(-1.0, 1.0))


@restates("markatos-figs4.1-4.3")
def figs_rows(data: dict, procs: int, old: dict | None = None) -> list[Row]:
    rows, old = [], old or {}
    for app in ("gauss", "grassfire", "msort"):
        d = data[app]
        n, top = d.get("n", IRIS_N[app][1]), d[str(procs)]
        for num, den, what, crit in (("mcs", "coarse", "fine MCS / coarse", COMPARABLE),
                                     ("lb", "mcs", "fine LB / fine MCS", LB3 if app == "gauss" else SUBSTANTIAL)):
            label = f"{app} n={n}: time {what}, P={procs}"
            ours = [a / b for a, b in zip(top[num], top[den])]
            model = (f"{median(d['model'][f'{num}/{den}']):.2f}" if "model" in d
                     else old.get(label, {}).get("model", "-"))
            meas = {num: top[num], den: top[den]} if crit.kind == "ordering" else {crit.of: ours}
            d_miss = median(d["misses"][num]) - median(d["misses"][den])
            why = (gain_why(median(ours), float(model), f"the {d_miss / 1e6:+.2f} M misses (and second-level hits) "
                            "at their costs", median(d["accesses"][num]) - median(d["accesses"][den]),
                            -d_miss if den == "coarse" else 0.0, "misses")
                   if "accesses" in d and model != "-" else old.get(label, {}).get("why", ""))
            rows.append(judged(label, crit, meas, ours=fmt_spread(ours), model=model, harts=procs, why=why))
        share = [share_of(a, b) for a, b in zip(d["misses"]["lb"], d["misses"]["mcs"])]
        rows.append(judged(f"{app}: misses MCS avoids, share of LB's, P={procs}", traffic_criterion(app, procs),
                           {"share": share}, harts=procs, why=f"the fine LB of our {app} {LB_STYLE[app]}, and a "
                           "thread's misses include its set-up and the library's, so the share is not the data "
                           "layout's alone"))
        if "1" in d and str(procs) != "1":
            sp = {v: median([a / b for a, b in zip(d["1"][v], top[v])]) for v in VARIANTS}
            rows.append(judged(f"{app}: speedup P=1 -> {procs}, coarse / LB / MCS", SCALES,
                               {"slowest_speedup": [min(sp.values())]}, harts=procs,
                               ours=" / ".join(f"{sp[v]:.2f}" for v in VARIANTS),
                               why="a variant was no faster on two harts: " + ", ".join(v for v in VARIANTS
                                                                                         if sp[v] <= 1)))
    rows.append(Row("Fig. 4.4's gains growing with P (the jump at 4 caches)", "Fig. 4.4", "-", "-",
                    "not on this machine", f"needs up to 8 harts; this host has {procs}"))
    return rows


@section("markatos-figs4.1-4.3", "Markatos Figs. 4.1-4.3 under the machine model: coarse vs fine LB vs fine "
            "MCS on the Iris", order=51, quick_seconds=10, full_seconds=90)
def figs(ctx) -> Section:
    reps, procs, spec, quick = ctx.reps(3, 1), ctx.cpus, "iris", 0 if ctx.quick else 1
    prof = load_profile(spec)
    counts = ("l2_hits",) + MISSES
    ps = [procs] if ctx.quick else sorted({1, procs})     # --quick: fewer points, no speedup rows
    data, figures = {}, []
    for app in ("gauss", "grassfire", "msort"):
        n = IRIS_N[app][quick]
        at = {p: sweep(ctx, app, n, spec, reps, cpus=p) for p in ps}
        data[app] = {str(p): {v: [x.par_us for x in xs] for v, xs in per.items()} for p, per in at.items()}
        data[app]["misses"] = {v: [sum(x.counts.get(k, 0) for k in MISSES) for x in xs]
                               for v, xs in at[procs].items()}
        top = at[procs]
        data[app]["model"] = {f"{num}/{den}": model_ratios(top[num], top[den], prof, counts, procs)
                              for num, den in (("mcs", "coarse"), ("lb", "mcs"))}
        data[app]["accesses"] = {v: [x.counts.get("accesses", 0) for x in xs] for v, xs in top.items()}
        data[app]["n"] = n
        fig = plot(ctx, f"markatos-fig{FIGURE[app]}", lambda ax, app=app, at=at: (
            [ax.plot(ps, [median([x.par_us / 1e6 for x in at[p][v_]]) for p in ps], "o-",
                     label=LEGEND[v_])
             for v_ in VARIANTS],
            ax.set_xlabel("processors (the thesis: 1-8)"), ax.set_ylabel("time (s)"), ax.set_xticks(ps),
            ax.set_title(f"Fig. {FIGURE[app]}: {TITLE[app]}, model {spec}"), ax.legend()))
        figures += [fig] if fig else []
    rows = figs_rows(data, procs)
    return Section("markatos-figs4.1-4.3", "Markatos Figs. 4.1-4.3 under the machine model: coarse vs fine LB vs "
                   "fine MCS on the Iris", "Markatos 1993, sec. 4.2.3, Figs. 4.1-4.3 (SGI Iris, 1-8 processors)",
                   f"`{tokens('gauss', 'mcs', IRIS_N['gauss'][quick])}` (and `variant=coarse`, `place=lb`), "
                   "`job=grassfire:variant=coarse|fine,place=mcs|lb`, `job=msort:...` likewise, under `--model "
                   f"{spec}` at {' and '.join(map(str, ps))} harts; {reps} seeds, the apps' par_us.", rows,
                   "The figures plot time against processors; here only P <= 2 (--quick: P = 2 alone, so no "
                   "speedup rows). The model column is the thesis's "
                   "argument (the fine grain's extra time is its threads loading their data into the cache) fed "
                   "with the misses the model counted in the same boots, at the profile's costs; the share row "
                   "takes the thesis's 'a third / half / nearly all' of the traffic with LB placing 1/P of its "
                   "threads at their data anyway.", figures=figures, data=data)
