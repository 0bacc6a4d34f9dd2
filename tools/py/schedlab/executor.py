"""Where boots run: one task contract under every command that boots (run's repeats, compare, sweep,
reproduce, validate, calibrate), executed one after another, side by side on this host, or on a Dask cluster.

A *task* (``Task``) is everything a boot depends on: the kernel image (its path and SHA-256, so a remote
worker boots the same bytes; the bytes travel with the task to a Dask worker), the harts, the scenario's
tokens (with the seed), the machine model (a ``model.Model``: the spec is parsed where the task is made, never
again below), deterministic mode, QEMU's extra arguments, the timeout; or a
simulator run (harts, tokens, calibration). Its *result* is the ``qemu.Run`` a boot has always returned, plus
``Run.placement``: ``host`` and ``cores`` (where it ran, on which host cores; ``writers.run_meta`` puts both in
every record, the tables ignore them), ``attempts``, and ``failure`` when it could not be run.

Executors (``from_args``: ``--jobs N``, ``--executor dask://HOST:PORT``, ``--reserve-cores K``):

* ``Sequential`` (``--jobs 1``, the default): each boot in the calling thread when its result is asked for,
  unpinned - exactly the harness before executors, one boot at a time on the whole host.
* ``Local`` (``--jobs N``): N threads, each boot pinned to host cores taken from ``affinity.CorePool``: a timed
  boot gets ``cpus`` cores of its own outside the ``--reserve-cores`` (default 1) left to the host, so never
  more timed boots than (cores - reserve) // cpus at once (the clamp is printed); deterministic-mode boots and
  simulator runs take one core each and may fill every core.
* ``Dask`` (``--executor dask://HOST:PORT``): the same tasks on a ``distributed`` cluster (imported only
  then). Each worker declares the cores it dedicates (``dask worker HOST:PORT --resources cores=N``); a task
  asks for ``cores=cpus`` (timed) or ``cores=1``, and on the worker runs as under ``Local``, pinned by the
  worker host's CorePool. A simulator task uses the worker's own simulator, which must be the same build (its
  hash is checked).

Why plain affinity and not BenchExec's RunExecutor: a boot already runs in its own session and is killed as a
group on timeout (qemu.py); what --jobs needs on top is only "these cores, nobody else's", which one
``sched_setaffinity`` before exec gives, with no cgroups, no root or cgroup delegation, and no dependency
that Dask workers would also need. RunExecutor's extras (memory limits, cgroup CPU accounting, a container)
measure a *process*; our measurement is the kernel's own clock inside the guest, and its calibration card
and ``busy.py`` already judge the host. A bigger host that shows interference pinning cannot fix (shared
L3, memory bandwidth: ``schedlab experiment parallel-timing``) needs a placement rule, not a sandbox.

The contract every executor keeps (tests/test_executor.py): results come back in submission order; a task
that fails for the harness's reasons (an exception, a lost worker, QEMU killed by a signal or exiting before
the kernel printed anything: ``infrastructure_failure``; never a kernel's verdict) is retried once and then
returned as a failed Run that says why (``failed_run``), never dropped; with a ``journal.Journal`` finished
tasks are stored as they finish and a resumed command boots only what is not there.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import sys
import threading
import traceback
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from . import affinity, busy, qemu
from . import model as machine
from .console import parse_console
from .qemu import DEFAULT_TIMEOUT, HarnessError, Run

#: What a failed-to-run task's Run says on its console.
INFRA = "schedlab: infrastructure failure"


@dataclass(frozen=True)
class Task:
    kind: str                       # "qemu" or "sim"
    cpus: int
    tokens: str                     # the scenario's bootargs as submitted (seed included)
    image: str                      # kernel ELF path (qemu); simulator binary (sim)
    image_hash: str                 # SHA-256 of the kernel ELF; of the simulator + its calibration (sim)
    model: machine.Model | None = None
    deterministic: bool = False
    timeout: float = DEFAULT_TIMEOUT
    extra: tuple[str, ...] = ()
    calib: str | None = None        # the simulator's calibration file (sim)
    cycle_ps: int | None = None     # the simulator's ps per instruction under a model (sim; None: its default)

    @property
    def seed(self) -> str:
        seeds = [t.split("=", 1)[1] for t in self.tokens.split() if t.startswith("seed=")]
        return seeds[-1] if seeds else ""

    @property
    def timed(self) -> bool:
        """A QEMU boot on the host's clock: it needs ``cpus`` cores nobody else uses."""
        return self.kind == "qemu" and not self.deterministic and not qemu.is_deterministic(self.tokens)

    @property
    def cores_needed(self) -> int:
        """A timed boot's harts each need a core; a paced one only its share of the host (pace.share)."""
        if not self.timed:
            return 1
        from . import pace
        return pace.share(self.model, self.cpus) or self.cpus

    def key(self) -> str:
        """The journal's key: same key, same measurement (journal.py)."""
        ident = [self.kind, self.image_hash, self.tokens, self.cpus, machine.canonical(self.model, self.cpus),
                 self.deterministic,
                 self.seed, list(self.extra)]
        return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:32]

    def describe(self) -> str:
        return f"{self.kind} cpus={self.cpus} {self.tokens}"


_hashes: dict = {}
_assessing = threading.Lock()


def file_hash(*paths) -> str:
    """SHA-256 of a file's bytes; of several, of their hashes (cached by path, size and mtime)."""
    found = []
    for path in paths:
        st = os.stat(path)
        ident = (str(path), st.st_size, st.st_mtime_ns)
        if ident not in _hashes:
            _hashes[ident] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        found.append(_hashes[ident])
    return found[0] if len(found) == 1 else hashlib.sha256("".join(found).encode()).hexdigest()


def qemu_task(cpus: int, bootargs, kernel=None, timeout: float = DEFAULT_TIMEOUT, extra=(),
              deterministic: bool = False, model: str | machine.Model | None = None) -> Task:
    """The task of ``qemu.boot(cpus, bootargs, ...)`` (same arguments; ``model`` text is parsed here)."""
    import shlex
    tokens = bootargs if isinstance(bootargs, str) else " ".join(bootargs)
    path = Path(kernel) if kernel else qemu.DEFAULT_KERNEL
    extra = tuple(shlex.split(extra) if isinstance(extra, str) else extra or ())
    # a missing kernel: qemu.boot says so (HarnessError) when the task runs
    return Task("qemu", cpus, tokens, str(path.resolve() if path.is_file() else path),
                file_hash(path) if path.is_file() else "missing", machine.as_model(model),
                bool(deterministic), float(timeout), extra)


def sim_task(cpus: int, bootargs, timeout: float = 600.0, calib: str | None = None, model=None,
             cycle_ps: int | None = None, deterministic: bool = False) -> Task:
    """The task of ``sim.sim_boot(cpus, bootargs, ...)``; builds the simulator here if it is missing.
    ``deterministic``: the run stands beside a deterministic QEMU boot, whose model counts misses but charges
    no stall (charge=off): the simulator's model does the same (its time is deterministic anyway)."""
    from .sim import ensure_sim
    tokens = bootargs if isinstance(bootargs, str) else " ".join(bootargs)
    binary = ensure_sim()
    calib_path = calib or str(qemu.REPO_ROOT / "tools" / "sim" / "calib" / "default.json")
    return Task("sim", cpus, tokens, str(binary), file_hash(binary, calib_path), machine.as_model(model), deterministic,
                float(timeout), (), calib, cycle_ps)


# ---------------------------------------------------------------- running one task on this host

def _where(cores) -> dict:
    return {"host": platform.node() or "?", "cores": affinity.cores_text(cores)}


def run_task(task: Task, pool: affinity.CorePool | None = None, stop=None) -> Run:
    """Run ``task`` here: unpinned without a pool, else on cores taken from it. Judges the host (busy.py) on
    this host, where the boot ran."""
    held = pool.take(task.cores_needed, task.timed, stop) if pool is not None else None
    cores = held.cores if held is not None else None
    try:
        if task.kind == "sim":
            from .sim import sim_boot
            run = sim_boot(task.cpus, task.tokens, timeout=task.timeout, calib=task.calib, model=task.model,
                           cycle_ps=task.cycle_ps, affinity=cores, charge=not task.deterministic)
        else:
            # only what differs from qemu.boot's defaults is passed (a test's stand-in for it takes no more)
            given = {"kernel": task.image, "extra": task.extra, "deterministic": task.deterministic,
                     "affinity": cores}
            given = {k: v for k, v in given.items() if v and not (k == "kernel" and Path(v) == qemu.DEFAULT_KERNEL)}
            before = busy.cpu_sample() if pool is None else None     # alone on the host: others measurable
            run = qemu.boot(task.cpus, task.tokens, timeout=task.timeout, model=task.model, **given)
            run.others_cores = busy.others_cores(before, busy.cpu_sample() if before else None)
            with _assessing:            # it may learn a quiet card: one read-modify-write of the file at a time
                busy.assess(run)
    finally:
        if held is not None:
            held.release()
    run.placement = _where(cores if cores is not None else affinity.host_cores())
    return run


def infrastructure_failure(run: Run) -> str | None:
    """Why this Run says nothing about the kernel (the harness failed to run it), else None. A timeout, an
    ERROR, a PANIC, a failed job, a refused scenario are the kernel's verdicts, not this."""
    if run.timed_out:
        return None
    if run.exit_code is not None and run.exit_code < 0:
        return f"the boot's process was killed by signal {-run.exit_code} (not by the harness)"
    if run.exit_code not in (0, None) and run.boot is None and not (run.errors or run.panics or run.results):
        last = run.console.strip().splitlines()[-1:] or ["no output"]
        return f"exit {run.exit_code} before the kernel printed BOOT ({last[0][:200]})"
    return None


def qemu_refusal(run: Run) -> str | None:
    """QEMU's own complaint about its command line (``qemu-system-riscv64: -bogusflag: invalid option``, an
    -smp it cannot read), else None: QEMU exited 1 before any firmware line, its first line naming an option.
    That is the user's input (--qemu-extra, cpus), reported once and never retried."""
    if run.timed_out or run.exit_code != 1 or run.boot is not None:
        return None
    lines = run.console.strip().splitlines()
    if not lines or not lines[0].startswith("qemu-system-"):
        return None
    _, _, said = lines[0].partition(": ")      # "-bogusflag: invalid option", "Parameter 'smp.cpus' expects..."
    return lines[0][:300] if said.startswith(("-", "Parameter '")) else None


def failed_run(task: Task, problem: str) -> Run:
    """The Run of a task that could not be run (reported as failed, with the reason on its console)."""
    console = f"{INFRA}: {problem}\n"
    return Run(cpus=task.cpus, bootargs=task.tokens, argv=[], console=console, exit_code=-1, timed_out=False,
               parsed=parse_console(console), model=machine.canonical(task.model, task.cpus))


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- cooperative sections (reproduce)

_local = threading.local()


@contextmanager
def _waiting():
    """Around a wait for a boot: a cooperative thread lets the others run Python meanwhile."""
    baton = getattr(_local, "baton", None)
    if baton is None:
        yield
        return
    baton.release()
    try:
        yield
    finally:
        baton.acquire()


def cooperative(calls, width: int) -> list[tuple[object, BaseException | None]]:
    """Run the callables, ``width`` at a time, as cooperative threads: only one runs Python at a time (so
    their plotting, printing and shared counters need no locks), the others wait for their boots. Returns
    (result, exception) per call, in order. ``width`` 1: one after another in this thread."""
    calls = list(calls)
    out: list = [(None, None)] * len(calls)

    def one(i, fn):
        try:
            out[i] = (fn(), None)
        except Exception as exc:            # noqa: BLE001 - handed back to the caller, in order
            out[i] = (None, exc)

    if width <= 1 or len(calls) <= 1:
        for i, fn in enumerate(calls):
            one(i, fn)
        return out
    baton, room, threads = threading.Lock(), threading.Semaphore(width), []

    def body(i, fn):
        baton.acquire()
        _local.baton = baton
        try:
            one(i, fn)
        finally:
            _local.baton = None
            baton.release()
            room.release()

    for i, fn in enumerate(calls):
        room.acquire()                      # started in order, at most ``width`` alive
        thread = threading.Thread(target=body, args=(i, fn), name=f"schedlab-section-{i}", daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return out


# ---------------------------------------------------------------- executors

class Executor:
    """Runs tasks; ``map`` yields their Runs in submission order (module docstring). Subclasses give
    ``_start(task) -> handle`` and ``_wait(handle) -> Run``; ``window``: tasks started ahead of the one
    awaited; ``slots``: boots at once (what a caller may usefully keep busy)."""

    name = "sequential"
    window = 1
    slots = 1
    local = True                # HarnessError (a missing kernel, QEMU...) is the user's to fix, not retried

    def __init__(self, journal=None):
        self.journal = journal
        self._seen: dict = defaultdict(int)
        self._lock = threading.Lock()

    def _start(self, task: Task):
        raise NotImplementedError

    def _wait(self, handle) -> Run:
        raise NotImplementedError

    def _cancel(self, handle) -> None:
        pass

    def _restart(self, task: Task, failed_handle):
        """The retry of a task whose first attempt (``failed_handle``) failed for the harness's reasons."""
        return self._start(task)

    def close(self) -> None:
        pass

    def _occurrence(self, task: Task) -> tuple[str, int]:
        key = task.key()
        with self._lock:
            self._seen[key] += 1
            return key, self._seen[key]

    def _begin(self, task: Task):
        key, n = self._occurrence(task)
        stored = self.journal.lookup(key, n) if self.journal is not None else None
        return (key, n, ("journal", stored) if stored is not None else ("started", self._start(task)))

    def _finish(self, task: Task, begun) -> Run:
        key, n, (how, handle) = begun
        if how == "journal":
            return handle
        problem, run = None, None
        for attempt in (1, 2):
            try:
                with _waiting():
                    run = self._wait(handle)
                problem = infrastructure_failure(run)
            except HarnessError as exc:
                if self.local:
                    raise
                run, problem = None, f"{type(exc).__name__}: {exc}"
            except Exception as exc:        # noqa: BLE001 - a lost worker, an OSError...: retried, reported
                where = traceback.extract_tb(exc.__traceback__)[-1:]
                at = f" (at {Path(where[0].filename).name}:{where[0].lineno})" if where else ""
                run, problem = None, f"{type(exc).__name__}: {exc}{at}"
            refused = qemu_refusal(run) if run is not None and task.kind == "qemu" else None
            if refused:
                raise HarnessError(f"QEMU refused its command line: {refused}")
            if problem is None:
                run.placement = {**getattr(run, "placement", {}), "attempts": attempt}
                if self.journal is not None:
                    self.journal.store(key, n, run)
                return run
            if attempt == 1:
                note(f"executor: {task.describe()}: {problem}; retrying once")
                try:
                    handle = self._restart(task, handle)
                except HarnessError:
                    raise
                except Exception as exc:    # noqa: BLE001 - the cluster is gone: reported like the failure
                    problem = f"{problem}; the retry could not start: {type(exc).__name__}: {exc}"
                    break
        note(f"executor: {task.describe()}: failed twice, reported as failed: {problem}")
        out = run if run is not None else failed_run(task, problem)
        out.placement = {**getattr(out, "placement", {}), "attempts": 2, "failure": problem}
        return out

    def map(self, tasks):
        """The Runs of ``tasks`` in their order, as they are asked for; at most ``window`` started ahead.
        Closing the generator early (a command that stops at a failure) cancels what has not started."""
        tasks, pending = iter(tasks), deque()

        def fill():
            while len(pending) < self.window:
                task = next(tasks, None)
                if task is None:
                    return
                pending.append((task, self._begin(task)))
        try:
            fill()
            while pending:
                task, begun = pending.popleft()
                run = self._finish(task, begun)
                fill()
                yield run
        finally:
            for _, (_, _, (how, handle)) in pending:
                if how == "started":
                    self._cancel(handle)

    def run(self, task: Task) -> Run:
        """One task's Run (through the journal and the retry like any other)."""
        return next(iter(self.map([task])))


class Sequential(Executor):
    """One boot at a time in the calling thread, started only when its result is asked for, unpinned."""

    def __init__(self, journal=None, runner=run_task):
        super().__init__(journal)
        self._runner = runner

    def _start(self, task):
        return task

    def _wait(self, handle):
        return self._runner(handle)


class Local(Executor):
    """``jobs`` threads on this host, every boot pinned to cores of its own (affinity.CorePool)."""

    name = "local"

    def __init__(self, jobs: int, journal=None, reserve: int = affinity.DEFAULT_RESERVE, cores=None,
                 runner=run_task):
        super().__init__(journal)
        self.pool = affinity.CorePool(cores, reserve)
        self.slots = max(1, min(jobs, len(self.pool.cores)))
        self.window = 2 * self.slots
        self._runner = runner
        self._closing = threading.Event()
        self._futures: list = []
        self._threads = ThreadPoolExecutor(self.slots, thread_name_prefix="schedlab-boot")

    def clamp_note(self, cpus: int, jobs: int) -> str | None:
        """The note for timed boots of ``cpus`` harts when fewer than ``jobs`` fit beside the reserve."""
        return affinity.timed_slots(jobs, cpus, len(self.pool.cores), self.pool.reserve)[1]

    def _start(self, task):
        future = self._threads.submit(self._runner, task, self.pool, self._closing.is_set)
        self._futures = [f for f in self._futures if not f.done()] + [future]
        return future

    def _wait(self, handle):
        return handle.result()

    def _cancel(self, handle):
        handle.cancel()

    def close(self):
        """Cancel what has not started; kill the boots still running (a command that stopped early, or
        Ctrl-C: their results would be dropped, and QEMU runs in a session of its own that SIGINT misses)."""
        self._closing.set()
        if self._outstanding():
            for pid in list(qemu.OWN_PIDS):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self._threads.shutdown(wait=True, cancel_futures=True)

    def _outstanding(self) -> bool:
        return any(not f.done() for f in self._futures)


def from_args(args, journal=None, cpus: int | None = None) -> Executor:
    """The executor the command line asks for (``add_options``); prints the clamp of --jobs when it bites."""
    address = getattr(args, "executor", None)
    reserve = getattr(args, "reserve_cores", None)
    reserve = affinity.DEFAULT_RESERVE if reserve is None else reserve
    if address is not None:
        from .inputs import executor_address
        executor_address(address)           # a malformed address: one line, before distributed is imported
        from .executor_dask import Dask
        return Dask(address, journal=journal, reserve=reserve)
    jobs = getattr(args, "jobs", None) or 1
    if jobs <= 1:
        return Sequential(journal)
    local = Local(jobs, journal, reserve)
    timed = not (getattr(args, "sim", False) or getattr(args, "deterministic", False))
    cpus = cpus or min(len(local.pool.cores), 4)        # commands.default_cpus
    clamp = local.clamp_note(cpus, jobs) if timed else None
    if clamp:
        note(f"note: {clamp}; deterministic-mode and simulated runs may use every core")
    return local


def add_options(parser) -> None:
    """``--jobs``, ``--executor``, ``--reserve-cores`` on a command that boots."""
    from .inputs import argparse_int
    parser.add_argument("--jobs", type=argparse_int(1), default=1, metavar="N",
                        help="boots at a time on this host, each pinned to cores of its own (timed boots: "
                             "at most (cores - reserve) // cpus; deterministic and simulated: every core)")
    parser.add_argument("--executor", metavar="dask://HOST:PORT",
                        help="run the boots on a Dask cluster whose workers declare --resources cores=N")
    parser.add_argument("--reserve-cores", type=argparse_int(0), default=None, metavar="K",
                        help=f"host cores a timed boot never gets when boots run side by side (default "
                             f"{affinity.DEFAULT_RESERVE})")


# ---------------------------------------------------------------- the executor the commands boot through

_current: list[Executor] = [Sequential()]


def current() -> Executor:
    return _current[-1]


@contextmanager
def use(executor: Executor):
    """Boots through ``executor`` inside the block (``boot``, ``sim_run``, ``current``); closes it after."""
    _current.append(executor)
    try:
        yield executor
    finally:
        _current.pop()
        executor.close()
        if executor.journal is not None:
            executor.journal.close()        # its lock: the output is free for the next command


def boot(cpus: int, bootargs, kernel=None, timeout: float = DEFAULT_TIMEOUT, extra=(), deterministic=False,
         model=None) -> Run:
    """``qemu.boot`` through the current executor (same arguments, same Run, plus ``placement``)."""
    return current().run(qemu_task(cpus, bootargs, kernel, timeout, extra, deterministic, model))


def sim_run(cpus: int, bootargs, timeout: float = 600.0, calib: str | None = None, model: str | None = None,
            cycle_ps: int | None = None, deterministic: bool = False) -> Run:
    """``sim.sim_boot`` through the current executor (``deterministic``: sim_task's)."""
    return current().run(sim_task(cpus, bootargs, timeout, calib, model, cycle_ps, deterministic))


def with_image(task: Task, image: bytes | None) -> Task:
    """On a worker: the task pointing at a local copy of its kernel (written once per hash), or at this
    worker's simulator when it is the same build."""
    if task.kind == "sim":
        from .sim import sim_binary
        calib = task.calib or str(qemu.REPO_ROOT / "tools" / "sim" / "calib" / "default.json")
        if not sim_binary().is_file() or file_hash(sim_binary(), calib) != task.image_hash:
            raise HarnessError(f"this worker's simulator {sim_binary()} is not the build the task was made "
                               "with: build the same checkout on every worker (make sim)")
        return replace(task, image=str(sim_binary()))
    if image is None:
        return task
    cache = Path(os.environ.get("SCHEDLAB_IMAGE_CACHE") or Path.home() / ".cache" / "schedlab" / "images")
    path = cache / f"{task.image_hash}.elf"
    if not path.is_file():
        if hashlib.sha256(image).hexdigest() != task.image_hash:
            raise HarnessError("the kernel image arrived damaged (its SHA-256 differs)")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(image)
        tmp.replace(path)
    return replace(task, image=str(path))
