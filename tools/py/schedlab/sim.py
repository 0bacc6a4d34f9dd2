"""Running a scenario in the simulator (``make sim``, tools/sim) instead of QEMU: ``--sim`` (built on demand).

The simulator runs the kernel's own policy code on simulated harts and prints the kernel's console
contract, with ``sim=<calibration>`` on BOOT, RESULT and SUMMARY: its lines parse like a boot's, and
nothing simulated passes for a measurement. Any number of harts (1..64) is meaningful here, unlike QEMU
on a host with fewer cores.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .affinity import pinned
from . import model as machine
from .build import ensure
from .console import parse_console
from .qemu import REPO_ROOT, HarnessError, Run

DEFAULT_SIM = REPO_ROOT / "build" / "sim" / "schedlab-sim"


def sim_binary() -> Path:
    return Path(os.environ.get("SCHEDLAB_SIM", DEFAULT_SIM))


def ensure_sim() -> Path:
    """The simulator to run: $SCHEDLAB_SIM as given, else build/sim/schedlab-sim, built with make if missing."""
    if "SCHEDLAB_SIM" not in os.environ:
        return ensure(DEFAULT_SIM, "sim")
    if not sim_binary().is_file():
        raise HarnessError(f"simulator {sim_binary()} (SCHEDLAB_SIM) not found: build it, e.g. "
                           f"`make sim SIM_OUT={sim_binary().parent}`")
    return sim_binary()


def sim_argv(cpus: int, bootargs: str, calib: str | None = None, model: str | None = None,
             cycle_ps: int | None = None, charge: bool = True) -> list[str]:
    """The simulator's command line; ``model`` a --model spec (passed canonical: every key, nodes clamped,
    validated here as for a boot), ``cycle_ps`` the time of a cycle (QEMU's BOOT cycle_ps= to compare with),
    ``charge`` False: the model counts misses but adds no stall, as the plugin in deterministic mode."""
    argv = [str(sim_binary()), "--cpus", str(cpus), "--apps", str(REPO_ROOT / "build" / "apps")]
    argv += ["--calib", calib or str(REPO_ROOT / "tools" / "sim" / "calib" / "default.json")]
    spec = machine.memory_spec(model, cpus)
    if spec != machine.NONE:
        argv += ["--model", spec if charge else spec + ",charge=off", "--profiles", str(machine.PROFILE_DIR)]
        if cycle_ps:
            argv += ["--cycle-ps", str(int(cycle_ps))]
    return argv + [bootargs]


def sim_boot(cpus: int, bootargs: str | list[str], timeout: float = 600.0, calib: str | None = None,
             model: str | None = None, cycle_ps: int | None = None, affinity=None, charge: bool = True) -> Run:
    """One simulated run as a ``Run`` (exit status and console as a boot's); under ``model`` its console
    ends with the plugin's MODEL lines, which parse as a QEMU boot's do; ``affinity``: host cores to pin it
    to (executor.py); ``charge``: sim_argv's."""
    if not isinstance(bootargs, str):
        bootargs = " ".join(bootargs)
    ensure_sim()
    argv = sim_argv(cpus, bootargs, calib, model, cycle_ps, charge)
    started = time.monotonic()
    try:
        proc = subprocess.run(pinned(argv, affinity), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        return Run(cpus=cpus, bootargs=bootargs, argv=argv, console="", exit_code=None, timed_out=True,
                   seconds=time.monotonic() - started, parsed=parse_console("", complete=False),
                   model=machine.canonical(model, cpus))
    if proc.returncode == 2 and not proc.stdout:
        raise HarnessError(proc.stderr.decode(errors="replace").strip() or "the simulator refused its arguments")
    text = proc.stdout.decode("utf-8", errors="replace")
    return Run(cpus=cpus, bootargs=bootargs, argv=argv, console=text, exit_code=proc.returncode,
               seconds=time.monotonic() - started, parsed=parse_console(text), model=machine.canonical(model, cpus))
