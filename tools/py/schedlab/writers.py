"""Exporting runs to JSON and CSV.

The unit of export is the *record*: one finished job (one RESULT line) of one
run, with that run's identity in front - ``run`` (0-based index in the
command), ``cpus``, ``bootargs``, and whatever the command adds (``repeat``,
``kind``, ``policy_asked``...), and the boot's calibration card as ``calib_<key>``
fields (``calib_syscall_ns``...; absent when the boot printed no CALIB line), ``model`` (the machine model's
canonical spec, ``none`` without one), under a model the plugin's counts for that job as ``model_<key>``
fields (``model_misses``, ``model_stall_us``...: its ``MODEL job=<id>`` line, tools/model/README.md), and
``busy``: why the host was busy during the boot (busy.py; empty when quiet), and ``host``/``cores``: where it
ran (``PLACEMENT``, executor.py).
CSV has one row per record, columns in order
of first appearance, empty cells for missing keys.  JSON additionally keeps
one entry per run (verdict, summary, ERROR/PANIC lines, each job's output lines
under its id as a string), so a run that printed
no RESULT is not lost, plus an optional command-specific ``comparison``.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

#: Where a run ran (executor.py), in every record after its identity: the host and its cores (tables ignore them).
PLACEMENT = ("host", "cores")
#: A run as the writers see it: (metadata identifying the run, the Run).
Entry = tuple[dict, object]


def run_meta(index: int, run, **extra) -> dict:
    """The run's identity; ``clock`` is ``virtual`` for a deterministic boot (its times count instructions);
    ``model`` the machine model it ran under (``none``)."""
    clock = "virtual" if getattr(run, "virtual_clock", False) else "real"
    busy = getattr(run, "busy", None)
    return {"run": index, "cpus": run.cpus, "bootargs": run.bootargs, **extra, "clock": clock,
            "model": getattr(run, "model", "none"),
            "busy": "; ".join(busy.reasons) if busy is not None and busy.busy else "",
            **{k: v for k, v in (getattr(run, "placement", None) or {}).items() if k in PLACEMENT}}


def _model_jobs(run) -> dict:
    return getattr(getattr(run, "parsed", None), "model_jobs", None) or {}


def records(entries: list[Entry]) -> list[dict]:
    """One dict per RESULT of every run, run metadata first."""
    out = []
    for meta, run in entries:
        for result in run.results:
            record = dict(meta)
            record.update({f"calib_{k}": v for k, v in (getattr(run, "calib", None) or {}).items()})
            for key, value in result.items():
                record.setdefault(key, value)
            counts = _model_jobs(run).get(result.get("job"), {})
            record.update({f"model_{k}": v for k, v in counts.items() if k != "job"})
            out.append(record)
    return out


def run_summaries(entries: list[Entry]) -> list[dict]:
    return [{**meta, "verdict": run.verdict, "exit_code": run.exit_code,
             "timed_out": run.timed_out, "seconds": round(run.seconds, 3),
             "boot": run.boot, "calib": getattr(run, "calib", None), "summary": run.summary,
             "errors": run.errors, "panics": run.panics,
             "model_end": getattr(getattr(run, "parsed", None), "model_end", None),
             "model_jobs": {str(job): c for job, c in sorted(_model_jobs(run).items())},
             "output": {str(job): lines for job, lines in sorted(run.output.items())}}
            for meta, run in entries]


def finite(value):
    """``value`` with every float that is not finite (NaN, infinities) replaced by None, in dicts, lists and
    tuples at any depth: JSON has no such numbers, and Python's NaN/Infinity tokens break strict parsers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(document, **kwargs) -> str:
    """Standard JSON, always: non-finite numbers become null (``finite``), and a NaN that slipped past it
    (in an object ``default=`` made) raises instead of writing a NaN token."""
    return json.dumps(finite(document), allow_nan=False, **kwargs)


def write_json(path: str | Path, command: str, entries: list[Entry],
               comparison: dict | None = None) -> None:
    document = {"command": command, "runs": run_summaries(entries), "records": records(entries)}
    if comparison is not None:
        document["comparison"] = comparison
    Path(path).write_text(dumps(document, indent=2) + "\n")


def write_csv(path: str | Path, entries: list[Entry]) -> None:
    rows = records(entries)
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
