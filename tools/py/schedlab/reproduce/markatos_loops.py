"""Markatos chapter 5 under the machine model: every loop scheduler on Gauss, SOR, transitive closure and
adjoint convolution under ``iris`` and ``ksr1`` (Figs. 5.3-5.7, 5.15-5.17 and the KSR-1 table of 5.4.9), and
Gauss under ``symmetry`` (Fig. 5.14: AFS ~ GSS where misses are cheap) - row 2's chapter-5 item of issue 26.

The thesis's argument (5.4.7): on a machine whose misses are dear, the dominant overhead of a parallel loop
inside a sequential one is communication - every iteration that runs on another processor than last time
reloads its data - so the schedulers that keep an iteration on its processor (STATIC, AFS, MOD-FACTORING,
BEST-STATIC) beat those that balance load and save synchronization but ignore affinity (SS, GSS, FACTORING,
TRAPEZOID); where misses are cheap (the Symmetry) affinity is worth little; and where the load is uneven
(transitive closure's skewed graph, adjoint's triangle) a static split loses to load imbalance.

The model column is that reasoning with our measurements: a scheduler's time is AFS's, plus the extra misses
it takes times what a miss costs (the profile's cycles at each level times the boot's measured cycle, divided
by the P harts that miss in parallel), times its load imbalance where the loop's work is uneven (the share of
the work in the first ceil(N/P) iterations, which STATIC and GSS give one process, from the loop's own
per-iteration work).  Synchronization (SS's one grab per iteration) is not in it.

Sizes: one boot well under two seconds under the model; each hart's share against the iris profile's 64 KB L1
and 1 MB L2 as the thesis's against the Iris's (the apps' header comments say which, and why).  The same sizes
run under ksr1, where a hart's share about fills the 256 KB L1: the misses the schedulers differ in are then
the coherence misses of iterations that move (ALLCACHE's data moving to the processor that uses it), at the
KSR-1's 148 cycles.
"""

from __future__ import annotations

from . import ReproError, Row, Section, section, fmt_spread, judged, median, restates
from . import criteria as cr
from .common import plot

SCHEDS = ("static", "ss", "gss", "factoring", "trapezoid", "afs", "mod-factoring", "best-static")
AFFINITY = ("static", "afs", "mod-factoring", "best-static")      # 5.4.8: the affinity-preserving schedulers
NON_AFFINITY = ("gss", "factoring", "trapezoid")                 # balance load, save synchronization; SS apart
# app: (job tokens, the schedulers it takes).  gauss coarse has no BEST-STATIC (its rows' work is even, 5.4.1).
APPS = {
    "gauss": ("gauss:n=256,variant=coarse,sync=barrier", SCHEDS[:-1]),
    "sor": ("sor:n=256,iters=10", SCHEDS),
    "tclosure": ("tclosure:n=256,graph=skewed,clique=40", SCHEDS),
    "adjoint": ("adjoint:n=50", SCHEDS),
}
PROFILES = ("iris", "ksr1")
SYMMETRY = ("afs", "gss", "trapezoid")                           # Fig. 5.14's three
KSR_TABLE = {"afs": 20.6, "static": 20.9, "mod-factoring": 22.7, "factoring": 47.3, "trapezoid": 50.7, "gss": 73.7}
LEVELS = (("l2_hits", "l2_cycles"), ("llc_hits", "llc_cycles"), ("coherence", "coh_cycles"),
          ("local", "mem_cycles"), ("remote", "remote_cycles"))


# ---------------------------------------------------------------- the thesis's model, pure

def miss_cost_us(counts: dict, profile: dict, cycle_ps: float) -> float:
    """What a job's misses cost in us: each level's count (a MODEL job= line's l2_hits, llc_hits, coherence,
    local, remote) times that level's extra cycles in the profile, times the measured cycle."""
    cycles = sum(int(counts.get(n, 0)) * int(profile[k]) for n, k in LEVELS)
    return cycles * cycle_ps / 1e6


def loop_weights(app: str, n: int, clique_pct: int = 40) -> list[list[float]]:
    """The work of each iteration of each parallel loop, in inner steps (the thesis's O(.) per iteration):
    adjoint: one loop of M = n*n iterations, iteration i doing M - i; transitive closure, skewed graph: n loops
    (steps K), row J doing n steps when A(J,K) (J and K distinct clique nodes) and one test otherwise."""
    if app == "adjoint":
        m = n * n
        return [[float(m - i) for i in range(m)]]
    if app == "tclosure":
        c = n * clique_pct // 100
        return [[float(n) if j < c and k < c and j != k else 1.0 for j in range(n)] for k in range(n)]
    raise ValueError(f"no per-iteration work for {app}: its iterations are alike")


def first_chunk_imbalance(loops: list[list[float]], p: int) -> float:
    """Time of the loops when one process gets the first ceil(N/P) iterations of each (STATIC's first share,
    GSS's first chunk) and the rest is balanced over the others, over the balanced time (the thesis's GSS
    argument, 5.4.6: 'those iterations contain 2/P of the total work'); 1.0 for even work."""
    slow = fair = 0.0
    for w in loops:
        total, first = sum(w), sum(w[: -(-len(w) // p)])
        slow += max(first, (total - first) / max(p - 1, 1)) if p > 1 else total
        fair += total / p
    return slow / fair if fair else 1.0


def predicted_us(base_us: float, base_cost_us: float, cost_us: float, harts: int, imbalance: float = 1.0) -> float:
    """A scheduler's time by the thesis's reasoning: the reference's time less its own miss cost (spread over the
    harts), times the scheduler's load imbalance, plus the scheduler's own miss cost spread over the harts."""
    return (base_us - base_cost_us / harts) * imbalance + cost_us / harts


def group_ratio(times: dict, num, den) -> float | None:
    """mean time of the schedulers num over mean time of den (those measured); None if either is empty."""
    a, b = [times[s] for s in num if s in times], [times[s] for s in den if s in times]
    return (sum(a) / len(a)) / (sum(b) / len(b)) if a and b else None


# ---------------------------------------------------------------- booting

def measure(ctx, profile: str, app: str, sched: str, reps: int) -> list[dict]:
    """reps boots of app under sched and profile: par_us, the job's misses and their cost, grabs."""
    from ..model import parse_spec
    values = dict(parse_spec(profile).values)
    out = []
    for seed in range(1, reps + 1):
        run = ctx.boot(f"job={APPS[app][0]},sched={sched}", seed, model=profile)
        r = run.results[0]
        counts = run.parsed.model_jobs.get(r["job"])
        end = run.parsed.model_end
        if not counts or not end:
            raise ReproError(f"no MODEL lines in a boot under {profile}: {app} sched={sched}")
        out.append({"par_us": float(r["par_us"]), "misses": int(counts["misses"]),
                    "coherence": int(counts["coherence"]), "stall_us": float(counts["stall_us"]),
                    "cost_us": miss_cost_us(counts, values, float(end["cycle_ps"])),
                    "grabs": int(r.get("grabs", 0)), "remote": int(r.get("remote", 0))})
    return out


def plan(quick: bool) -> list[tuple[str, str, str]]:
    """(profile, app, scheduler) of every boot: full, every scheduler each app takes under iris and ksr1 and
    Fig. 5.14's three under symmetry; quick, Gauss alone with GSS and AFS under each profile."""
    if quick:
        return [(p, "gauss", s) for p in PROFILES for s in ("gss", "afs")] + \
               [("symmetry", "gauss", s) for s in ("afs", "gss")]
    return [(p, a, s) for p in PROFILES for a, (_t, scheds) in APPS.items() for s in scheds] + \
           [("symmetry", "gauss", s) for s in SYMMETRY]


# ---------------------------------------------------------------- rows

class Table:
    """The measurements of one run: per (profile, app, scheduler) the seeds' records; medians and the model."""

    def __init__(self, res: dict, harts: int):
        self.res, self.h = res, harts

    def med(self, prof, app, key="par_us") -> dict:
        return {s: median([x[key] for x in v]) for (p, a, s), v in self.res.items() if p == prof and a == app}

    def seeds(self, prof, app, num, den) -> list[float]:
        """The group ratio per seed (the same seed's boots of every scheduler)."""
        recs = {s: v for (p, a, s), v in self.res.items() if p == prof and a == app}
        n = min((len(v) for v in recs.values()), default=0)
        out = [group_ratio({s: v[i]["par_us"] for s, v in recs.items()}, num, den) for i in range(n)]
        return [x for x in out if x is not None]

    def predicted(self, prof, app) -> dict:
        """Every scheduler's time by the model, from AFS's time and each scheduler's measured misses."""
        t, cost = self.med(prof, app), self.med(prof, app, "cost_us")
        if "afs" not in t:
            return {}
        imb = {}
        if app in ("adjoint", "tclosure"):
            n = int(APPS[app][0].split("n=")[1].split(",")[0])
            f = first_chunk_imbalance(loop_weights(app, n), self.h)
            imb = {"static": f, "gss": f}
        return {s: predicted_us(t["afs"], cost["afs"], cost[s], self.h, imb.get(s, 1.0)) for s in t}

    def group_seeds(self, prof, app, group) -> list[float]:
        """Per seed, the mean par_us of the schedulers of group that were measured."""
        recs = {s: v for (p, a, s), v in self.res.items() if p == prof and a == app and s in group}
        n = min((len(v) for v in recs.values()), default=0)
        return [sum(v[i]["par_us"] for v in recs.values()) / len(recs) for i in range(n)]

    def ratio_row(self, prof, app, num, den, crit: cr.Criterion, why, suffix: str = "") -> Row | None:
        """Mean time of the schedulers num over den's (those measured), per seed, judged by crit: an ordering
        of the two groups' times (num slower), or a range of the ratio."""
        ours = self.seeds(prof, app, num, den)
        if not ours:
            return None
        model = group_ratio(self.predicted(prof, app), num, den)
        have = self.med(prof, app)
        label = " / ".join(", ".join(s.upper() for s in group if s in have) for group in (num, den))
        m = ({"slower": self.group_seeds(prof, app, num), "faster": self.group_seeds(prof, app, den)}
             if crit.kind == "ordering" else {crit.of: ours})
        return judged(f"{app}, {prof}: {label}{suffix}", crit, m, ours=fmt_spread(ours), harts=self.h,
                      model=f"{model:.2f}" if model else "-", why=why(median(ours), model))

    def miss_row(self, prof, app) -> Row | None:
        mis = self.med(prof, app, "misses")
        aff, non = [mis[s] for s in AFFINITY if s in mis], [mis[s] for s in NON_AFFINITY if s in mis]
        if not aff or not non:
            return None
        ours = (f"{min(non) / max(aff):.1f}x (affinity {max(aff) / 1e3:.0f}k at most, others {min(non) / 1e3:.0f}k "
                "at least)")
        return judged(f"{app}, {prof}: misses, fewest of GSS/FACTORING/TRAPEZOID over most of the affinity "
                      "schedulers", FEWER, {"others, fewest": [min(non)], "affinity, most": [max(aff)]}, ours=ours,
                      harts=self.h, why="an affinity scheduler missed as often as one that ignores affinity: "
                      + ", ".join(f"{s} {mis[s] / 1e3:.0f}k" for s in AFFINITY + NON_AFFINITY if s in mis))


# The chapter's claims as criteria. Its figures give no ratio at 2 processors, so "AFS is best / X is worst"
# is an ordering of the two groups' times; a range the text prints is a range.
def slower(paper: str, source: str) -> cr.Criterion:
    return cr.ordering(["slower", "faster"], paper, source, "an ordering of the groups' mean times (the figure "
                       "gives no ratio at 2 processors)", domain=(0.0, 1e9))


FEWER = cr.ordering(["others, fewest", "affinity, most"], "affinity avoids the misses", "Markatos 5.4.7",
                    "every affinity scheduler below every other: the fewest of the others over the most of them",
                    domain=(0.0, 1e12))
TC_RANGE = cr.within("ratio", 1.075, 0.07, "1.00 - 1.15", "Markatos 5.4, Fig. 5.6", "the figure's range: "
                     "FACTORING and TRAPEZOID at most 15 % behind AFS and MOD-FACTORING", domain=(0.0, 10.0))
GAUSS8 = cr.within("ratio", 3.0, 0.25, "~3 at 8 processors (N = 384)", "Markatos 5.4.1, Fig. 5.4", "'about 3', "
                   "read off the figure: 25 %", side=1.0, domain=(0.0, 10.0), needs_harts=8)
SYM_GSS = cr.within("ratio", 1.0, 0.1, "AFS and GSS are comparable in performance on the Symmetry",
                    "Markatos 5.4, Fig. 5.14", "'comparable': within 10 %", domain=(0.0, 10.0))
SYM_TRAP = cr.within("ratio", 1.125, 0.025, "TRAPEZOID performs 10-15% worse than both AFS and GSS",
                     "Markatos 5.4, Fig. 5.14", "the text's range; TRAPEZOID's end imbalance is 'several iterations', "
                     "a share of N/P that grows with P, so judged where 8 run", side=1.0, domain=(0.0, 10.0),
                     needs_harts=8)


def _bigger(m, model):
    return (f"the affinity schedulers were not faster here (model {model:.2f} from the misses)" if model else
            "the affinity schedulers were not faster here")


def rows_of(t: Table) -> list[Row]:
    rows = []
    add = rows.append
    for prof, app, paper, fig in (("iris", "sor", "STATIC, AFS ~ BEST-STATIC, better than the others", "5.3"),
                                  ("iris", "gauss", "non-affinity schedulers cannot use more than 2 processors",
                                   "5.4"),
                                  ("ksr1", "sor", "AFS, STATIC and MOD-FACTORING best, not much better", "5.17"),
                                  ("ksr1", "tclosure", "AFS best, TRAPEZOID closest", "5.16")):
        den = ("afs",) if app == "tclosure" else AFFINITY
        add(t.ratio_row(prof, app, NON_AFFINITY, den, slower(paper, f"Markatos 5.4, Fig. {fig}"), _bigger))
    add(t.ratio_row("iris", "gauss", NON_AFFINITY, AFFINITY, GAUSS8, lambda m, model: "measured at 2 harts",
                    " (the thesis: at 8 processors)"))
    add(t.ratio_row("iris", "tclosure", ("gss",), ("afs",), slower("GSS worst", "Markatos 5.4, Fig. 5.6"),
                    lambda m, model: "GSS was not slower than AFS here"))
    add(t.ratio_row("iris", "tclosure", ("factoring", "trapezoid"), ("afs", "mod-factoring"), TC_RANGE,
                    lambda m, model: f"FACTORING and TRAPEZOID took {m:.2f} of AFS's and MOD-FACTORING's time; the "
                    "thesis has the affinity schedulers ahead, by at most 15 %"))
    add(t.ratio_row("iris", "tclosure", ("static",), ("best-static",),
                    slower("STATIC poor, the clique in its first share", "Markatos 5.4, Fig. 5.6"),
                    lambda m, model: "STATIC was not slower than BEST-STATIC here"))
    add(t.ratio_row("iris", "adjoint", ("static", "gss"), ("factoring", "trapezoid", "afs", "mod-factoring"),
                    slower("the first chunks hold too much of the triangle", "Markatos 5.4, Fig. 5.7"),
                    lambda m, model: "the load imbalance did not show here"))
    rows += _ksr_table(t)
    add(t.ratio_row("symmetry", "gauss", ("gss",), ("afs",), SYM_GSS,
                    lambda m, model: "GSS and AFS differed by more than 10 % on the Symmetry"))
    add(t.ratio_row("symmetry", "gauss", ("trapezoid",), ("afs", "gss"), SYM_TRAP,
                    lambda m, model: "TRAPEZOID's end imbalance is a few rows of 256 on 2 harts"))
    for prof in PROFILES:
        for app in ("gauss", "sor", "tclosure"):
            add(t.miss_row(prof, app))
    return [r for r in rows if r is not None]


# Sec. 5.4.9's table: Gauss 4096 x 4096 on 16 KSR-1 processors, minutes: AFS 20.6, STATIC 20.9, MOD-FACTORING 22.7,
# FACTORING 47.3, TRAPEZOID 50.7, GSS 73.7. Its numbers are each scheduler's time over AFS's at 16 processors, where a
# scheduler that ignores affinity moves 15/16 of the rows; on 2 harts it moves half, so they are judged at 16
# (needs_harts) - paced runs or the simulator - and so is the table's order.
KSR = "Markatos 5.4.9, the KSR-1 table (4096 x 4096, 16 processors)"


def ksr_criterion(sched: str) -> cr.Criterion:
    r = KSR_TABLE[sched] / KSR_TABLE["afs"]
    return cr.within(sched, r, 0.25, f"{KSR_TABLE[sched]} / {KSR_TABLE['afs']} = {r:.2f}", KSR,
                     "times in minutes of one run each; 25 % for a 16-processor run of another size; slower than "
                     "AFS where the table says so by 5 % or more", side=1.0 if r >= 1.05 else None,
                     domain=(0.0, 20.0), needs_harts=16)


KSR_ORDER = cr.ordering(sorted((s for s in KSR_TABLE if s != "afs"), key=lambda s: -KSR_TABLE[s]) + ["afs"],
                        "GSS > TRAPEZOID > FACTORING > MOD-FACTORING > STATIC > AFS (minutes)", KSR,
                        "the table's order, slowest first", domain=(0.0, 1e9), needs_harts=16)


def _ksr_table(t: Table) -> list[Row]:
    times = t.med("ksr1", "gauss")
    have = [s for s in KSR_TABLE if s in times]
    if "afs" not in times or len(have) < 2:
        return []
    pred = t.predicted("ksr1", "gauss")
    seeds = {s: t.seeds("ksr1", "gauss", (s,), ("afs",)) for s in have if s != "afs"}
    rows = [judged(f"gauss, ksr1: {s.upper()} / AFS", ksr_criterion(s), {s: v}, harts=t.h,
                   model=f"{pred[s] / pred['afs']:.2f}" if s in pred else "-") for s, v in seeds.items()]
    order = [s for s in KSR_ORDER.names if s in times]
    if order == list(KSR_ORDER.names):
        rows.append(judged("gauss, ksr1: the order of the schedulers' times", KSR_ORDER,
                           {s: [times[s]] for s in order}, harts=t.h, fmt="{:.0f}",
                           ours=", ".join(sorted(have, key=lambda s: -times[s])) + " (slowest first)"))
    return rows


@restates("markatos-ch5")
def loops_rows(data: dict, cpus: int, old: dict | None = None) -> list[Row]:
    """The section's rows from its stored records ('profile/app/scheduler' -> the seeds' records)."""
    return rows_of(Table({tuple(k.split("/")): v for k, v in data.items()}, cpus))


def misses_table(t: Table) -> str:
    """Markdown: per profile and app, each scheduler's par_us (ms) and misses (thousands), medians."""
    lines = ["| profile, app | " + " | ".join(SCHEDS) + " |", "|---|" + "---|" * len(SCHEDS)]
    for prof in PROFILES + ("symmetry",):
        for app in APPS:
            par, mis = t.med(prof, app), t.med(prof, app, "misses")
            if par:
                lines.append(f"| {prof}, {app} | " + " | ".join(
                    f"{par[s] / 1e3:.0f} ms, {mis[s] / 1e3:.0f}k" if s in par else "-" for s in SCHEDS) + " |")
    return "\n".join(lines)


@section("markatos-ch5", "Markatos ch. 5: the loop schedulers under the machine model (iris, ksr1, symmetry)",
            order=52, quick_seconds=9, full_seconds=120)
def loops(ctx) -> Section:
    reps = ctx.reps(2, 1)
    res = {}
    for prof, app, sched in plan(ctx.quick):
        res[(prof, app, sched)] = measure(ctx, prof, app, sched, reps)
    t = Table(res, ctx.cpus)
    rows = rows_of(t)
    figs = [_figure(ctx, t, prof, key) for prof in PROFILES for key in ("par_us", "misses")]
    return Section(
        "markatos-ch5", "Markatos ch. 5: the loop schedulers under the machine model (iris, ksr1, symmetry)",
        "Markatos 1993, sec. 5.4 (Figs. 5.3-5.7 on the Iris, 5.14 on the Symmetry, 5.15-5.17 and 5.4.9's table on "
        "the KSR-1)",
        f"`job=<app>,sched=S` under `iris` and `ksr1` for {', '.join(f'`{v[0]}`' for v in APPS.values())}, every "
        f"scheduler each takes, and `{APPS['gauss'][0]}` under `symmetry` with {', '.join(SYMMETRY)}"
        f"{' (quick: gauss alone, fewer schedulers)' if ctx.quick else ''}; {ctx.cpus} harts; {reps} seeds; "
        "par_us, and the job's MODEL line (misses, their levels).", rows,
        "Ratios are of par_us, per seed (every scheduler booted with the same seeds). The model column is the "
        "thesis's reasoning with our counts: AFS's time, plus each scheduler's extra misses times their cost "
        "(profile cycles x the measured cycle) over the harts, times its first-chunk imbalance where the work "
        "is uneven (STATIC and GSS give one process the first ceil(N/P) iterations); synchronization is not in "
        "it. The thesis's figures go to 8 (Iris) and 32 (KSR-1) processors; on 2 harts only half the iterations "
        "can move, so affinity saves less than there. Sizes: gauss's and sor's 256 x 256 doubles (512 KB) and "
        "tclosure's 256 x 256 words (256 KB) give each hart a share past iris's 64 KB L1 and inside its 1 MB L2, "
        "the thesis's regime on the Iris; under ksr1 a share about fills the 256 KB L1, so what the schedulers "
        "differ in is coherence misses of rows that move, at 148 cycles; adjoint's three arrays (60 KB) are read "
        "by every iteration, so it has no affinity to keep (the thesis's point) and its misses are alike. An "
        "iteration that moves is timing-dependent: on a busy host a descheduled hart's rows are stolen by AFS "
        "and grabbed by GSS alike, so the misses too vary from run to run. Time and misses per scheduler "
        "(medians):\n\n"
        + misses_table(t), figures=[f for f in figs if f],
        data={f"{p}/{a}/{s}": v for (p, a, s), v in res.items()})


def _figure(ctx, t: Table, prof: str, key: str = "par_us") -> str | None:
    """Per app, each scheduler's par_us over AFS's (key par_us) or its misses (key misses, log scale)."""
    apps = [a for a in APPS if "afs" in t.med(prof, a)]
    if not apps:
        return None

    def draw(ax):
        width = 0.8 / len(SCHEDS)
        for k, s in enumerate(SCHEDS):
            vals = [t.med(prof, a, key) for a in apps]
            ys = [v.get(s, 0) / (v["afs"] if key == "par_us" else 1) for v in vals]
            ax.bar([x + (k - len(SCHEDS) / 2 + 0.5) * width for x in range(len(apps))], ys, width=width, label=s)
        ax.set_xticks(range(len(apps)), apps)
        if key == "par_us":
            ax.axhline(1, color="grey", ls=":")
            ax.set_ylabel(f"par_us / AFS's, {prof}, {ctx.cpus} harts")
        else:
            ax.set_yscale("log")
            ax.set_ylabel(f"misses (MODEL job= line), {prof}, {ctx.cpus} harts")
        ax.legend(fontsize=7, ncol=4)
    return plot(ctx, f"markatos-ch5-{prof}" + ("" if key == "par_us" else "-misses"), draw)
