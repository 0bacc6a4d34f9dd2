"""Booting the kernel once under QEMU and collecting the outcome as a ``Run``.

One boot = one scenario.  ``qemu_argv`` is the single place the command line
is built; it is the same command ``make qemu`` runs.  The binary is
``qemu-system-riscv64`` unless the environment variable ``SCHEDLAB_QEMU``
names another (split like a shell word list, so tests can substitute a fake).

QEMU runs in its own session (process group) with stdin from /dev/null and
stdout+stderr captured together.  If it outlives the timeout the whole group
is killed with SIGKILL and the run is marked ``timed_out``; whatever it had
printed is still parsed (as partial output).  The exit status is the kernel's
verdict: 0 iff every job finished ``check=ok``.

Deterministic mode (``deterministic=True``, ``make qemu DETERMINISTIC=1``):
QEMU runs every hart on one host thread with an instruction-counting clock
(``DETERMINISTIC_FLAGS``) and the bootargs get ``clock=virtual`` so the kernel
knows (kernel/vclock.h); a scenario that already says ``clock=virtual`` boots
this way too.  The same scenario then prints the same console, byte for byte,
on any host; its times are virtual (2^ICOUNT_SHIFT ns per instruction, all
harts summed), so they say nothing about this host's speed.

Machine model (``model="<profile>[,key=value...]"``, tools/model/README.md): ``model.plan`` adds the plugin
(and ``-numa`` when the model has nodes) to the QEMU arguments and ``model=<canonical spec>`` (and
``idle=poll``) to the bootargs; ``Run.model`` is the canonical spec, ``none`` without a model.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import devtree
from .affinity import pinned
from .lifetime import die_with_parent
from .console import Console, parse_console

def _repo_root() -> Path:
    """The schedlab checkout the harness works in: $SCHEDLAB_ROOT; else the one this package sits in
    (tools/py/schedlab, also when installed with ``pip install -e .``); else the current directory (a copy
    installed with ``pip install .``, run from a checkout)."""
    if os.environ.get("SCHEDLAB_ROOT"):
        return Path(os.environ["SCHEDLAB_ROOT"]).resolve()
    here = Path(__file__).resolve().parents[3]
    return here if (here / "kernel").is_dir() and (here / "Makefile").is_file() else Path.cwd()


REPO_ROOT = _repo_root()
DEFAULT_KERNEL = REPO_ROOT / "build" / "kernel.elf"
DEFAULT_QEMU = "qemu-system-riscv64"
MEMORY = "256M"
# The machine: QEMU virt with ACLINT (SSWI lets the kernel send IPIs without the SBI; the BOOT line says
# which path it took). SCHEDLAB_MACHINE=virt boots without it.
MACHINE = os.environ.get("SCHEDLAB_MACHINE", "virt,aclint=on")
#: Seconds a boot may take before the harness kills it (the kernel has its own watchdog).
DEFAULT_TIMEOUT = 600.0
#: Seconds to wait for the pipes to drain after killing a timed-out QEMU.
_DRAIN_SECONDS = 5.0
#: Deterministic mode: virtual ns per instruction is 2^ICOUNT_SHIFT (the Makefile's ICOUNT_SHIFT).
ICOUNT_SHIFT = 0
#: Deterministic mode's QEMU options (the Makefile's DET_QEMUFLAGS): one host thread for every hart, and a
#: clock that counts instructions and jumps over idle time (sleep=off) instead of following the host's.
DETERMINISTIC_FLAGS = ("-icount", f"shift={ICOUNT_SHIFT},sleep=off", "-accel", "tcg,thread=single")
#: Deterministic mode's firmware (firmware/fw.c, the Makefile's FIRMWARE): the SBI this kernel needs and no
#: more, where every instruction is host time; timed boots run QEMU's OpenSBI ("-bios default").
FIRMWARE = REPO_ROOT / "build" / "firmware" / "fw.elf"
#: The bootargs token that tells the kernel (and says in every console) that times are virtual.
VIRTUAL_CLOCK_TOKEN = "clock=virtual"
#: Pids of the QEMUs this harness is running now (boots side by side, executor.py): busy.py counts only others.
OWN_PIDS: set[int] = set()


class HarnessError(Exception):
    """A problem the user must fix before anything can boot (missing kernel, QEMU...)."""


def qemu_binary() -> list[str]:
    """The QEMU command prefix: ``$SCHEDLAB_QEMU`` (shell-split) or the real binary."""
    override = os.environ.get("SCHEDLAB_QEMU")
    return shlex.split(override) if override else [DEFAULT_QEMU]


#: The token between two scenarios of a batch (kernel/batch.h's BATCH_WORD): one deterministic boot runs them in turn.
BATCH_WORD = "then"


def batch_scenarios(bootargs: str) -> list[str]:
    """The scenarios of bootargs: one unless they hold ``then`` between scenarios (a trailing one ends the batch)."""
    scenarios, current = [], []
    for token in bootargs.split():
        if token == BATCH_WORD:
            scenarios.append(" ".join(current))
            current = []
        else:
            current.append(token)
    if current or not scenarios:
        scenarios.append(" ".join(current))
    return scenarios


def is_deterministic(bootargs: str) -> bool:
    """True when the bootargs ask for the virtual clock (the last ``clock=`` token wins, as in the kernel); a
    batch's first scenario says it for the boot."""
    clocks = [t for t in batch_scenarios(bootargs)[0].split() if t.startswith("clock=")]
    return bool(clocks) and clocks[-1] == VIRTUAL_CLOCK_TOKEN


def deterministic_bootargs(bootargs: str) -> str:
    """The bootargs with ``clock=virtual`` (appended unless they already end up virtual), in each scenario of a
    batch."""
    scenarios = batch_scenarios(bootargs)
    if len(scenarios) > 1 or bootargs.split()[-1:] == [BATCH_WORD]:
        return f" {BATCH_WORD} ".join(deterministic_bootargs(s) if s else s for s in scenarios) + \
            (f" {BATCH_WORD}" if bootargs.split()[-1:] == [BATCH_WORD] else "")
    if is_deterministic(bootargs):
        return bootargs
    kept = [t for t in bootargs.split() if not t.startswith("clock=")]
    return " ".join([*kept, VIRTUAL_CLOCK_TOKEN])


def qemu_argv(cpus: int, bootargs: str, kernel: str | os.PathLike | None = None,
              extra: str | list[str] | tuple[str, ...] = ()) -> list[str]:
    """The one QEMU command line: ``-smp cpus``, the kernel ELF, extra args, ``-append bootargs``;
    bootargs with ``clock=virtual`` add ``DETERMINISTIC_FLAGS`` and boot ``FIRMWARE`` instead of OpenSBI."""
    if isinstance(extra, str):
        extra = shlex.split(extra)
    kernel = Path(kernel) if kernel is not None else DEFAULT_KERNEL
    deterministic = is_deterministic(bootargs)
    mode = list(DETERMINISTIC_FLAGS) if deterministic else []
    bios = str(FIRMWARE) if deterministic else "default"
    return [*qemu_binary(), "-machine", MACHINE, "-nographic", "-bios", bios,
            "-no-reboot", "-m", MEMORY, "-smp", str(cpus), "-kernel", str(kernel),
            *extra, *mode, "-append", bootargs]


@dataclass
class Run:
    """The outcome of one boot: raw console, exit status, and the parsed lines.

    ``exit_code`` is None when the harness killed QEMU after ``timeout``
    (then ``timed_out`` is True).  ``results``, ``summary``, ``boot``,
    ``errors``, ``panics`` and the jobs' ``output`` come from the console
    (see ``console``).
    """

    cpus: int
    bootargs: str
    argv: list[str]
    console: str
    exit_code: int | None
    timed_out: bool = False
    seconds: float = 0.0
    parsed: Console = field(default_factory=Console)
    model: str = "none"
    busy: object = None         # busy.Verdict once the harness judged the host during this boot (busy.py)
    placement: dict = field(default_factory=dict)   # where it ran: host, cores, attempts (executor.py)

    @property
    def results(self) -> list[dict]:
        """One dict per RESULT line, in console order, numbers typed (reference/results.md has every key)."""
        return self.parsed.results

    @property
    def summary(self) -> dict | None:
        """The SUMMARY line's fields (policy, harts, jobs, failed, makespan_us), or None without one."""
        return self.parsed.summary

    @property
    def boot(self) -> dict | None:
        """The BOOT line's fields (policies, apps and options as lists and dicts), or None without one."""
        return self.parsed.boot

    @property
    def calib(self) -> dict | None:
        """The calibration card (CALIB line) of this boot, or None (calib=off, or an older kernel)."""
        return self.parsed.calib

    @property
    def model_end(self) -> dict | None:
        """The machine model's ``MODEL end`` line (with its pace keys on a paced boot), or None."""
        return self.parsed.model_end

    @property
    def errors(self) -> list[str]:
        """The kernel's ERROR lines, whole (a job's own ERROR output is in ``output``)."""
        return self.parsed.errors

    @property
    def panics(self) -> list[str]:
        """The kernel's PANIC lines, whole."""
        return self.parsed.panics

    @property
    def output(self) -> dict[int, list[str]]:
        """What each job wrote: job id -> its lines without the ``[<id>] `` prefix."""
        return self.parsed.output

    @property
    def traces(self) -> list[str]:
        """The trace dump's lines (TRACE, T, ULOG, U) of a trace=on boot, for ``trace.parse_trace``."""
        return self.parsed.traces

    @property
    def virtual_clock(self) -> bool:
        """True when the boot ran in deterministic mode: its times count instructions, not host time."""
        return is_deterministic(self.bootargs) or (self.boot or {}).get("clock") == "virtual"

    @property
    def contradiction(self) -> str | None:
        """What in the console contradicts an exit status of 0 (every job check=ok), or None.

        The kernel decides one verdict per run (kernel/launcher.c), so this is None for any boot of a sound
        kernel; a run that exits 0 after an ERROR or PANIC line, a failed RESULT, a SUMMARY that counts
        failures or other jobs than the RESULT lines, or two trace dumps (of one scenario: a batch has one per
        scenario at most) is not counted as ok."""
        if self.timed_out or self.exit_code != 0:
            return None
        parsed, summary = self.parsed, self.parsed.summary
        failed = [r.get("job") for r in parsed.results if r.get("check") != "ok"]
        dumps = sum(1 for line in parsed.traces if line.split()[:2] == ["TRACE", "begin"])
        if parsed.errors or parsed.panics:
            return f"it printed {(parsed.errors + parsed.panics)[0]!r}"
        if failed:
            return f"job {failed[0]} has check=FAIL"
        if summary and summary.get("failed", 0) != 0:
            return f"its SUMMARY says failed={summary.get('failed')}"
        if dumps > len(batch_scenarios(self.bootargs)):
            return f"it printed {dumps} trace dumps"
        return None

    @property
    def ok(self) -> bool:
        """The kernel's verdict: exited 0, was not killed, and the console does not contradict it."""
        return not self.timed_out and self.exit_code == 0 and self.contradiction is None

    @property
    def verdict(self) -> str:
        """``ok``, ``TIMEOUT``, ``FAIL (exit N)``, or ``FAIL (exit 0, but ...)`` when the console contradicts it."""
        if self.timed_out:
            return "TIMEOUT"
        if self.exit_code == 0:
            problem = self.contradiction
            return "ok" if problem is None else f"FAIL (exit 0, but {problem})"
        return f"FAIL (exit {self.exit_code})"


def host_cores() -> int:
    return os.cpu_count() or 1


def oversubscription_warning(cpus: int) -> str | None:
    """One line warning when harts outnumber host cores (timings are then distorted)."""
    cores = host_cores()
    if cpus <= cores:
        return None
    return (f"warning: {cpus} harts on a host with {cores} cores: QEMU's hart threads will be "
            f"time-sliced by the host, so timings are distorted (use --cpus <= {cores})")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def boot(cpus: int, bootargs: str | list[str], kernel: str | os.PathLike | None = None,
         timeout: float = DEFAULT_TIMEOUT, extra: str | list[str] | tuple[str, ...] = (),
         deterministic: bool = False, model: str | None = None, affinity=None) -> Run:
    """Boot once and return the ``Run``.  Raises ``HarnessError`` if nothing can boot.
    ``affinity``: host cores QEMU is pinned to before it starts (executor.py; None: unpinned).
    ``deterministic``: add ``clock=virtual`` (QEMU then gets ``DETERMINISTIC_FLAGS``).
    ``model``: a machine-model spec (``none``/None: no model)."""
    if not isinstance(bootargs, str):
        bootargs = " ".join(bootargs)
    if deterministic:
        bootargs = deterministic_bootargs(bootargs)
    kernel_path = Path(kernel) if kernel is not None else DEFAULT_KERNEL
    if not kernel_path.is_file():
        raise HarnessError(f"kernel {kernel_path} not found: build it with `make` (or pass --kernel)")
    canonical = "none"
    if model and model != "none":
        from .model import plan        # model.py imports this module
        extra = shlex.split(extra) if isinstance(extra, str) else list(extra)
        added = plan(model, cpus, kernel_path, MEMORY, deterministic=is_deterministic(bootargs), extra=extra,
                     bootargs=bootargs)
        extra = [*extra, *added.qemu_args]
        bootargs = " ".join([bootargs, *added.bootargs]).strip()
        canonical = added.canonical
    argv = qemu_argv(cpus, bootargs, kernel_path, extra)
    if is_deterministic(bootargs):      # host time is all its instructions: QEMU's tree less what no one reads
        from .build import ensure       # build.py imports this module
        ensure(FIRMWARE, str(FIRMWARE.relative_to(REPO_ROOT)))
        tree = devtree.trimmed(argv)
        if tree:
            argv = [*argv[:-2], "-dtb", str(tree), *argv[-2:]]
    started = time.monotonic()
    try:
        proc = subprocess.Popen(pinned(argv, affinity), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=die_with_parent())    # no QEMU outlives a SIGKILLed harness
    except FileNotFoundError as exc:
        raise HarnessError(f"{argv[0]} not found: install qemu-system-misc "
                           f"(or set SCHEDLAB_QEMU to the QEMU binary)") from exc
    timed_out = False
    OWN_PIDS.add(proc.pid)
    try:
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            try:
                out, _ = proc.communicate(timeout=_DRAIN_SECONDS)
            except subprocess.TimeoutExpired:
                # Something escaped the group and holds the pipe: give up on the rest.
                proc.kill()
                out = b""
    finally:
        if proc.poll() is None:     # interrupted (e.g. Ctrl-C): never leave QEMU behind
            _kill_group(proc)
            proc.wait()
        OWN_PIDS.discard(proc.pid)
    text = (out or b"").decode("utf-8", errors="replace")
    return Run(cpus=cpus, bootargs=bootargs, argv=argv, console=text,
               exit_code=None if timed_out else proc.returncode, timed_out=timed_out,
               seconds=time.monotonic() - started,
               parsed=parse_console(text, complete=not timed_out), model=canonical)
