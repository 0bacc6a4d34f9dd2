"""Host cores for boots run side by side: which cores a boot may use, and pinning its process to them.

``CorePool`` hands out host cores to boots and takes them back. A core is held by an exclusive ``flock`` on
``<lockdir>/core-<n>.lock``, so the rule "no two boots on one core" holds across threads, across the local
executor and Dask workers on one host, and across two schedlab commands of one user started side by side.
A boot that needs k cores takes k free ones at once or none (no hold-and-wait, so no deadlock) and waits for
them otherwise.

Which cores (the rule of docs/guide/sweeps.md, "Running many boots"; ``schedlab experiment parallel-timing`` measures it):

* a timed boot (QEMU on the host's clock) gets ``cpus`` cores of its own, never from the first ``reserve``
  cores of the host (default 1: the host's own work, interrupts and the harness run there) - unless the
  host has too few cores for even one boot beside them, then it gets any ``cpus`` (one boot at a time);
* a deterministic-mode boot (one host thread, virtual clock) or a simulator run gets one core, any of them:
  its results do not depend on the host, so these may fill every core.

``pinned(argv, cores)`` is the command that runs ``argv`` with its CPU affinity set before it starts: the
affinity is set on the process before ``exec``, so every thread QEMU creates later (one per vCPU) inherits it.
It prefixes ``taskset -c`` (util-linux) when present, else a two-line Python trampoline that calls
``os.sched_setaffinity`` and ``os.execvp`` (never ``preexec_fn``, which is unsafe in a threaded harness).
"""
from __future__ import annotations

import errno
import fcntl
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

#: Host cores a timed boot never gets when boots run side by side (docs/guide/sweeps.md, "Running many boots").
DEFAULT_RESERVE = 1
#: Seconds between two attempts to take cores that were busy.
_POLL = 0.05


def host_cores() -> list[int]:
    """The cores this process may run on (its affinity: a container's or taskset's limit counts)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def cores_text(cores) -> str:
    """``0-3,6``: the form of /proc's Cpus_allowed_list and taskset -c."""
    cores, parts = sorted(set(cores)), []
    for core in cores:
        if parts and parts[-1][1] == core - 1:
            parts[-1][1] = core
        else:
            parts.append([core, core])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in parts)


def parse_cores(text: str) -> list[int]:
    """The inverse of ``cores_text`` (also reads /proc's Cpus_allowed_list)."""
    out = []
    for part in text.strip().split(","):
        if part:
            a, _, b = part.partition("-")
            out += range(int(a), int(b or a) + 1)
    return out


def timed_slots(jobs: int, cpus: int, cores: int, reserve: int = DEFAULT_RESERVE) -> tuple[int, str | None]:
    """How many timed boots of ``cpus`` harts run at once for ``--jobs jobs`` on ``cores`` host cores with
    ``reserve`` left free, and the note saying why it is fewer than asked (None when it is not)."""
    fit = (cores - reserve) // cpus
    slots = max(1, min(jobs, fit))
    if slots >= jobs:
        return slots, None
    why = (f"{cores} host cores, {reserve} left free, {cpus} harts per boot" if fit >= 1 else
           f"{cores} host cores cannot hold {cpus}-hart boots beside {reserve} free core(s)")
    return slots, f"--jobs {jobs}: {slots} timed boot{'s' if slots > 1 else ''} at a time ({why})"


def pinned(argv: list[str], cores) -> list[str]:
    """``argv`` run with its affinity set to ``cores`` before exec (None: unchanged)."""
    if cores is None:
        return list(argv)
    listed = cores_text(cores)
    if shutil.which("taskset"):
        return ["taskset", "-c", listed, *argv]
    code = ("import os,sys; os.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(',')}); "
            "os.execvp(sys.argv[2], sys.argv[2:])")
    return [sys.executable, "-c", code, ",".join(str(c) for c in sorted(cores)), *argv]


def _lockdir() -> Path:
    where = os.environ.get("SCHEDLAB_CORE_LOCKS") or Path(tempfile.gettempdir()) / f"schedlab-cores-{os.getuid()}"
    Path(where).mkdir(parents=True, exist_ok=True)
    return Path(where)


class Held:
    """Cores taken from a ``CorePool`` (release them with ``release``, or use as a context manager)."""

    def __init__(self, cores: list[int], fds: list[int]):
        self.cores, self._fds = cores, fds

    def release(self) -> None:
        for fd in self._fds:
            os.close(fd)            # closing the descriptor drops its flock
        self._fds = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class CorePool:
    """The host's cores as flock-held tokens (module docstring)."""

    def __init__(self, cores: list[int] | None = None, reserve: int = DEFAULT_RESERVE, lockdir: Path | None = None):
        self.cores = list(cores) if cores is not None else host_cores()
        self.reserve = max(0, reserve)
        self.lockdir = Path(lockdir) if lockdir else _lockdir()

    def candidates(self, need: int, timed: bool) -> list[int]:
        """The cores a boot needing ``need`` may take: timed ones never the reserved (module docstring)."""
        if not timed:
            return list(self.cores)
        spare = self.cores[self.reserve:]
        return spare if len(spare) >= need else list(self.cores)

    def _try(self, cores: list[int], need: int) -> Held | None:
        taken, fds = [], []
        for core in cores:
            fd = os.open(self.lockdir / f"core-{core}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                continue
            taken.append(core)
            fds.append(fd)
            if len(taken) == need:
                return Held(taken, fds)
        Held(taken, fds).release()      # all or nothing: never hold some cores while waiting for more
        return None

    def take(self, need: int, timed: bool, stop=None) -> Held:
        """``need`` free cores (blocks until they are); ``stop()`` true gives up with InterruptedError."""
        cores = self.candidates(need, timed)
        need = min(need, len(cores))        # more harts than cores: the whole host (the harness warned)
        while True:
            held = self._try(cores, need)
            if held is not None:
                return held
            if stop is not None and stop():
                raise InterruptedError("cancelled while waiting for host cores")
            time.sleep(_POLL)
