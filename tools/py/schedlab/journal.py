"""The journal of finished boots, so an interrupted ``reproduce`` or ``sweep`` continues where it stopped
(``--resume``).

A JSON-lines file beside the command's output (``<sweep prefix>.journal.jsonl``, ``<reproduce out>/
results.journal.jsonl``): one line per finished task, written (and flushed to disk) the moment it finishes:
``{"key": <task key>, "n": <occurrence>, "run": <the Run>}``. The task key (``executor.Task.key``) is a hash
of the kernel build (SHA-256 of the ELF; of the simulator binary and its calibration for a simulated run), the
scenario's tokens (with the seed), the harts, the machine model, deterministic mode and QEMU's extra
arguments: a boot with the same key is the same measurement. ``n`` counts the submissions of one key within
a command (a sweep with ``--same-seed`` boots one key once per repeat), so the n-th submission is answered by
the n-th stored run, and nothing measured is measured twice nor a repeat collapsed into another.

Without ``--resume`` the journal is started afresh (at its first new entry, so a command refused before
any boot leaves it as it was). With it the stored runs are read back (a torn last line
of an interrupted write is ignored) and a task whose (key, n) is there is answered from it without booting.
A task whose boot failed for the harness's own reasons (``executor.infrastructure_failure``) is not stored,
so a resumed run tries it again; a kernel's verdict (a failed job, a timeout) is a result and is stored.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from .console import parse_console
from .qemu import Run


def run_to_dict(run: Run) -> dict:
    """What is kept of a Run: everything but the parse, which ``run_from_dict`` redoes from the console."""
    busy = getattr(run, "busy", None)
    return {"cpus": run.cpus, "bootargs": run.bootargs, "argv": list(run.argv), "console": run.console,
            "exit_code": run.exit_code, "timed_out": run.timed_out, "seconds": run.seconds, "model": run.model,
            "placement": dict(getattr(run, "placement", None) or {}),
            "busy": None if busy is None else list(busy.reasons)}


def run_from_dict(d: dict) -> Run:
    from .busy import Verdict
    run = Run(cpus=d["cpus"], bootargs=d["bootargs"], argv=d["argv"], console=d["console"],
              exit_code=d["exit_code"], timed_out=d["timed_out"], seconds=d["seconds"],
              parsed=parse_console(d["console"], complete=not d["timed_out"]), model=d.get("model", "none"))
    run.placement = dict(d.get("placement") or {})
    run.busy = None if d.get("busy") is None else Verdict(list(d["busy"]))
    return run


class Journal:
    """Finished tasks by (key, occurrence); thread-safe (the local executor's threads store into it)."""

    def __init__(self, path: str | os.PathLike, resume: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._runs: dict[tuple[str, int], dict] = {}
        self._lock = threading.Lock()
        if resume and self.path.is_file():
            for line in self.path.read_text(errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                    self._runs[entry["key"], int(entry["n"])] = entry["run"]
                except (ValueError, KeyError, TypeError):
                    continue        # a line cut short when the command was interrupted
        self._fresh = not resume      # started afresh at the first store (a refused command keeps the old one)
        self.resumed = len(self._runs)
        self.hits = 0                  # tasks answered from it

    def summary(self) -> str:
        return f"resume: {self.hits} boot{'s' if self.hits != 1 else ''} taken from {self.path} (not booted again)"

    def lookup(self, key: str, n: int) -> Run | None:
        with self._lock:
            found = self._runs.get((key, n))
            self.hits += found is not None
        return None if found is None else run_from_dict(found)

    def store(self, key: str, n: int, run: Run) -> None:
        entry = {"key": key, "n": n, "run": run_to_dict(run)}
        line = json.dumps(entry) + "\n"
        with self._lock:
            self._runs[key, n] = entry["run"]
            with open(self.path, "w" if self._fresh else "a") as handle:
                self._fresh = False
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
