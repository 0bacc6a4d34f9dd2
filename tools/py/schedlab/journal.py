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

Lines that are not a whole entry (torn by a kill, edited by hand: a ``run`` that is not a Run's fields) are
skipped and counted (``ignored``), and an append always starts on a fresh line, so a torn line never swallows
the next record. One command at a time writes a journal: it holds an exclusive lock on ``<journal>.lock``
while it lives (``close``), and a second command on the same output is refused.
"""
from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path

from .console import parse_console
from .qemu import HarnessError, Run

#: A stored Run's fields and the types each may have (``run_to_dict``); anything else is not an entry.
_FIELDS = {"cpus": (int,), "bootargs": (str,), "argv": (list,), "console": (str,), "exit_code": (int, type(None)),
           "timed_out": (bool,), "seconds": (int, float)}
_OPTIONAL = {"model": (str,), "placement": (dict, type(None)), "busy": (list, type(None))}


def valid_run(d) -> bool:
    """``d`` has every field of a stored Run with its type (bools are not numbers here)."""
    if not isinstance(d, dict):
        return False
    for name, types in _FIELDS.items():
        value = d.get(name, KeyError)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return False
    if not all(isinstance(d[name], types) for name, types in _OPTIONAL.items() if name in d):
        return False
    return all(isinstance(w, str) for w in d["argv"] + (d.get("busy") or []))


def _entry(line: str):
    """(key, n, run dict) of one journal line, or None when it is not a whole entry."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) or not valid_run(entry.get("run")):
        return None
    n = entry.get("n")
    if isinstance(n, bool) or not isinstance(n, int):
        return None
    return entry["key"], n, entry["run"]


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
        self._lock_file = _lock(self.path)
        self._runs: dict[tuple[str, int], dict] = {}
        self._lock = threading.Lock()
        self.ignored = 0               # lines that were not a whole entry
        if resume and self.path.is_file():
            for line in self.path.read_text(errors="replace").splitlines():
                found = _entry(line)
                if found is None:
                    self.ignored += bool(line.strip())
                    continue
                key, n, run = found
                self._runs[key, n] = run
        self._fresh = not resume      # started afresh at the first store (a refused command keeps the old one)
        self._fresh_line = False       # an append starts on a fresh line (checked at the first append)
        self.resumed = len(self._runs)
        self.hits = 0                  # tasks answered from it

    def close(self) -> None:
        """Release the lock (the command is done with the journal)."""
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def summary(self) -> str:
        skipped = f"; {self.ignored} line(s) that were not a whole entry ignored" if self.ignored else ""
        return (f"resume: {self.hits} boot{'s' if self.hits != 1 else ''} taken from {self.path} (not booted "
                f"again){skipped}")

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
                if not self._fresh and not self._fresh_line:
                    handle.write(_newline_needed(self.path))     # a torn last line ends here, alone
                self._fresh = False
                self._fresh_line = True
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())


def _newline_needed(path: Path) -> str:
    """"\\n" when the file does not end with one (its last line was torn), else ""."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return ""
        handle.seek(-1, os.SEEK_END)
        return "" if handle.read(1) == b"\n" else "\n"


def _lock(path: Path):
    """An exclusive lock on ``<path>.lock`` for as long as the returned file is open; HarnessError when
    another command holds it."""
    handle = open(path.with_name(path.name + ".lock"), "a")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise HarnessError(f"{path} is in use by another command writing the same output (sweep --out, "
                           "reproduce --out): wait for it to finish, or give another --out") from None
    return handle
