"""Human-readable text: aligned tables of results, comparisons and traces.

Times on the console are microseconds; tables show milliseconds (slot-switch
costs, a few microseconds each, stay in microseconds).  A spread prints as
``median (low..high)``; with a single value just the value.
"""

from __future__ import annotations

import textwrap
from collections import Counter, defaultdict

from .comparison import PolicyOutcome, ranking
from .stats import Spread
from .gangcheck import GangCheck
from .trace import SwitchStats, Trace, app_name, intervals

#: RESULT keys shown in their own columns (or implied); every other key goes to "extra".
STANDARD_KEYS = ("job", "app", "policy", "harts", "procs", "arrive_us", "start_us",
                 "end_us", "elapsed_us", "cpu_us", "check")


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    lines = []
    for row in [headers, *rows]:
        cells = [str(c).ljust(w) for c, w in zip(row, widths)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def ms(us) -> str:
    """Microseconds as milliseconds with 3 decimals, or '-' if missing/not a number."""
    if not isinstance(us, (int, float)) or isinstance(us, bool):
        return "-"
    return f"{us / 1000:.3f}"


def spread(value: Spread | None, fmt) -> str:
    if value is None:
        return "-"
    if value.count == 1 or value.low == value.high:
        return fmt(value.median)
    return f"{fmt(value.median)} ({fmt(value.low)}..{fmt(value.high)})"


def interval(value: Spread | None, fmt) -> str:
    """The bootstrap interval of a spread's median as ``low..high``; '-' without one (a single value)."""
    if value is None or value.ci is None:
        return "-"
    return f"{fmt(value.ci[0])}..{fmt(value.ci[1])}"


def _extra(result: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in result.items() if k not in STANDARD_KEYS)


def results_table(results: list[dict]) -> str:
    """One row per RESULT: job, app, policy, procs, elapsed ms, cpu ms, check, extra keys."""
    headers = ["job", "app", "policy", "procs", "elapsed ms", "cpu ms", "check", "extra"]
    rows = [[r.get("job", "-"), r.get("app", "-"), r.get("policy", "-"), r.get("procs", "-"),
             ms(r.get("elapsed_us")), ms(r.get("cpu_us")), r.get("check", "-"), _extra(r)]
            for r in results]
    return format_table(headers, rows)


def summary_line(summary: dict | None) -> str:
    if not summary:
        return "no SUMMARY line (run did not finish)"
    return (f"summary: policy={summary.get('policy')} harts={summary.get('harts')} "
            f"jobs={summary.get('jobs')} failed={summary.get('failed')} "
            f"makespan={ms(summary.get('makespan_us'))} ms")


def model_report(run) -> str:
    """The machine model's report of one boot (tools/model/README.md): the MODEL end line's totals and one row
    per job of its MODEL job= lines (job 0: the kernel and idle harts)."""
    end, jobs = run.parsed.model_end, run.parsed.model_jobs
    head = f"model: {run.model}"
    if not end:
        return head + "\nmodel: no MODEL end line (the plugin printed no report: run did not finish?)"
    head += (f"\nmodel: profile={end.get('profile')} cycle_ps={end.get('cycle_ps')} charge={end.get('charge')} "
             f"accesses={end.get('accesses')} stall={ms(end.get('stall_us'))} ms")
    if "pace" in end:
        head += "\n" + pace_line(end, run.cpus)
    keys = ("accesses", "misses", "l2_hits", "llc_hits", "coherence", "local", "remote")
    paced = ("insns", "pace_events", "pace_lag_us") if "pace" in end else ()
    rows = [[job, *(c.get(k, "-") for k in keys), ms(c.get("stall_us")), *(c.get(k, "-") for k in paced)]
            for job, c in sorted(jobs.items())]
    return head + ("\n" + format_table(["job", *keys, "stall ms", *paced], rows) if rows else "")


def pace_line(end: dict, cpus: int) -> str:
    """A paced boot's pacing (MODEL end's pace keys): R, the span, and how often and how far harts fell behind."""
    span, lag = end.get("pace_span_us") or 0, end.get("pace_lag_us") or 0
    lost = f"{100 * lag / (cpus * span):.2f} %" if isinstance(span, int) and span > 0 and cpus else "-"
    return (f"pace: {end.get('pace')} instructions/s per hart over {ms(span)} ms; fell behind "
            f"{end.get('pace_events')} times past {end.get('pace_bound_us')} us, {ms(lag)} ms lost ({lost} of "
            f"harts x span; per hart {end.get('pace_hart_events')}); slept {ms(end.get('pace_slept_us'))} ms")


def _ratio(x: float) -> str:
    return f"{x:.2f}"


def _ms_value(x: float) -> str:
    return ms(x)


def _count(x: float) -> str:
    return f"{x:,.0f}"



#: above every comparison table: what its times and slowdowns are (comparison.py)
SLOWDOWN_HEADER = ("slowdown = response time in the mix / response time alone; a response time runs from the job's "
                   "arrival to its end (end_us - arrive_us), so waiting for the first dispatch counts (mix wait ms)")


def comparison_table(outcomes: list[PolicyOutcome], marks: dict | None = None) -> str:
    """Per policy and job: alone and mix medians (ms) and the slowdown with its interval (under a machine model
    also the job's misses alone and in the mix), then makespans.
    ``marks``: (policy, job index) -> a note for the row ('BUSY k/n': boots on a busy host), in a last
    column that is there only when some row has one."""
    marks = marks or {}
    misses = any(j.misses_mix or j.misses_alone for o in outcomes for j in o.jobs)   # under a machine model
    headers = (["policy", "#", "app", "alone resp ms", "mix resp ms", "mix wait ms", "slowdown", "slowdown 95% CI"]
               + (["misses alone", "misses mix"] if misses else []) + (["host"] if marks else []))
    rows = []
    for outcome in outcomes:
        for j in outcome.jobs:
            alone = "background" if j.job.background else spread(j.alone, _ms_value)
            rows.append([outcome.policy, j.job.index + 1, j.job.app, alone, spread(j.mix, _ms_value),
                         spread(j.wait, _ms_value), spread(j.slowdown, _ratio), interval(j.slowdown, _ratio)]
                        + ([spread(j.misses_alone, _count), spread(j.misses_mix, _count)] if misses else [])
                        + ([marks.get((outcome.policy, j.job.index), "")] if marks else []))
    lines = [SLOWDOWN_HEADER, format_table(headers, rows), ""]
    for outcome in outcomes:
        lines.append(f"{outcome.policy}: mix makespan {spread(outcome.makespan, _ms_value)} ms"
                     + (f", 95% CI {interval(outcome.makespan, _ms_value)}" if outcome.makespan
                        and outcome.makespan.ci else ""))
    return "\n".join(lines)


def sweep_table(summaries, vary_name: str, metric: str) -> str:
    """Per policy, value and job: runs, median, bootstrap interval and min..max of the metric (ms for _us)."""
    fmt = _ms_value if metric.endswith("_us") else (lambda x: f"{x:.4g}")
    unit = " ms" if metric.endswith("_us") else ""
    flagged = any(s.busy for s in summaries)
    headers = ["policy", vary_name, "#", "app", "runs", f"{metric.removesuffix('_us')}{unit}", "95% CI", "min..max"]
    rows = []
    for s in summaries:
        value = s.spread
        rows.append([s.policy, s.value, s.job, s.app + (" (bg)" if s.background else ""),
                     value.count if value else 0, fmt(value.median) if value else "-", interval(value, fmt),
                     f"{fmt(value.low)}..{fmt(value.high)}" if value else "-"]
                    + ([f"BUSY {s.busy}/{s.boots}" if s.busy else ""] if flagged else []))
    return format_table(headers + (["host"] if flagged else []), rows)


#: The calibration card's fields as compare's header shows them (kernel/calib.c).
CALIB_SHOWN = (("syscall_ns", "syscall"), ("switch_ns", "switch"), ("ipi_ns", "ipi"), ("tick_ns", "tick"),
               ("synth_unit_ns", "synth unit"))


def _ns(value: float) -> str:
    for limit, unit, scale in ((1e6, "ms", 1e-6), (1e3, "us", 1e-3)):
        if value >= limit:
            return f"{value * scale:.3g} {unit}"
    return f"{value:.3g} ns"


def calib_line(cards: list[dict | None]) -> str:
    """This host's calibration card over the boots that printed one: each cost's median (min..max)."""
    cards = [c for c in cards if c]
    if not cards:
        return "calibration: none (boots with calib=off, or a kernel without the card)"
    parts = []
    for key, label in CALIB_SHOWN:
        value = Spread.of([c.get(key) for c in cards if isinstance(c.get(key), (int, float))])
        parts.append(f"{label} {spread(value, _ns)}" if value else f"{label} n/a")
    return f"calibration ({len(cards)} boots, median (min..max)): " + ", ".join(parts)


def ranking_line(outcomes: list[PolicyOutcome]) -> str:
    ranked = ranking(outcomes)
    if not ranked:
        return "ranking: no policy has a slowdown (every run failed, or no foreground job)"
    return ("ranking by mean slowdown (lower is better): "
            + " < ".join(f"{o.policy} {o.mean_slowdown:.2f}" for o in ranked))


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} us"


def trace_paragraph(trace: Trace, apps: dict[int, str], stats: SwitchStats) -> str:
    """One paragraph: records, harts, time span, jobs and their processes, switches."""
    runs = intervals(trace)
    procs: dict[int, set[int]] = defaultdict(set)
    for interval in runs:
        procs[interval.job].add(interval.proc)
    jobs = ", ".join(f"{app_name(apps, job)}#{job} ({len(procs[job])} procs)" for job in sorted(procs)) or "none"
    lost = {h: n for h, n in sorted(trace.dropped.items()) if n}
    text = (f"trace: {len(trace.records)} records on {trace.harts} harts, policy={trace.policy} "
            f"quantum={ms(trace.quantum_us)} ms, {ms(trace.start_us)}..{ms(trace.end_us)} ms; "
            f"{len(runs)} run intervals; jobs: {jobs}; "
            f"{stats.count} slot switches ({stats.quantum} quantum, {stats.early} early).")
    if lost:
        text += " Rings overwrote their oldest records (" + ", ".join(
            f"hart {h}: {n}" for h, n in lost.items()) + "): those harts start mid-run."
    if not trace.complete:
        text += " The dump was cut off (no 'TRACE end')."
    lib = trace.lib
    if lib.records:
        kinds = Counter(r.event for r in lib.records)
        text += (f" Library events: {len(lib.records)} from {len({(r.job, r.proc) for r in lib.records})} processes ("
                 + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) + ").")
    lost_lib = sum(lib.dropped.values())
    if lost_lib:
        text += f" The library's logs overwrote {lost_lib} of their oldest records."
    if lib.bogus:
        text += f" {lib.bogus} library records were unreadable (unknown event or dated after the dump) and skipped."
    if lib.off:
        text += " Jobs without library logs (the kernel's budget ran out): " + ", ".join(map(str, lib.off)) + "."
    return textwrap.fill(text, width=100)


def switch_line(stats: SwitchStats) -> str:
    """The slot-switch summary on one line."""
    if not stats.count:
        return "slot switches: none"
    line = (f"slot switches: {stats.count} ({stats.quantum} quantum, {stats.early} early); "
            f"skew median {_us(stats.skew_median_us)}, max {_us(stats.skew_max_us)}; "
            f"latency median {_us(stats.latency_median_us)}, max {_us(stats.latency_max_us)}; "
            f"cost per hart median {_us(stats.cost_median_us)}")
    if stats.overhead_pct is not None:
        line += f"; overhead {stats.overhead_pct:.3f}% of the quantum"
    if stats.missing_acks:
        line += f"; {stats.missing_acks} hart acks missing"
    return line


def gang_table(checks: dict[int, GangCheck], apps: dict[int, str]) -> str:
    """Per job: run time, time a gang member ran while another waited ready, and the worst span."""
    headers = ["job", "app", "run ms", "violation ms", "fraction", "worst span"]
    rows = []
    for job, check in sorted(checks.items()):
        worst = "-"
        if check.worst:
            start, end, p, q = check.worst[0]
            worst = f"{ms(start)}..{ms(end)} ms: proc {p} ran, proc {q} waited"
        rows.append([job, app_name(apps, job), ms(check.run_us), ms(check.violation_us),
                     f"{check.fraction:.3f}", worst])
    return format_table(headers, rows)
