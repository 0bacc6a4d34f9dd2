"""Human-readable text: aligned tables of results and of comparisons.

Times on the console are microseconds; tables show milliseconds.  A spread
prints as ``median (low..high)``; with a single value just the value.
"""

from __future__ import annotations

from .compare import PolicyOutcome, ranking
from .stats import Spread

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


def _ratio(x: float) -> str:
    return f"{x:.2f}"


def _ms_value(x: float) -> str:
    return ms(x)


def comparison_table(outcomes: list[PolicyOutcome]) -> str:
    """Per policy and job: alone and mix medians (ms) and the slowdown, then makespans."""
    headers = ["policy", "#", "app", "alone ms", "mix ms", "slowdown"]
    rows = []
    for outcome in outcomes:
        for j in outcome.jobs:
            alone = "background" if j.job.background else spread(j.alone, _ms_value)
            rows.append([outcome.policy, j.job.index + 1, j.job.app, alone,
                         spread(j.mix, _ms_value), spread(j.slowdown, _ratio)])
    lines = [format_table(headers, rows), ""]
    for outcome in outcomes:
        lines.append(f"{outcome.policy}: mix makespan {spread(outcome.makespan, _ms_value)} ms")
    return "\n".join(lines)


def ranking_line(outcomes: list[PolicyOutcome]) -> str:
    ranked = ranking(outcomes)
    if not ranked:
        return "ranking: no policy has a slowdown (every run failed, or no foreground job)"
    return ("ranking by mean slowdown (lower is better): "
            + " < ".join(f"{o.policy} {o.mean_slowdown:.2f}" for o in ranked))
