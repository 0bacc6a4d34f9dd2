"""pace=auto: choose the pace R of a paced boot from what this host can carry (tools/model/pace.h has the model).

A paced hart executes at most R instructions per wall-second; the host keeps every hart on its schedule only
while harts x R fits its cores' *capacity*: how many instructions per second one host core emulates under the
plugin's instrumentation (counting alone, or counting and the cache model of a profile: the model's memory
callbacks make each instruction several times dearer). ``capacity`` measures it - one hart, paced at a rate no
host reaches, so it never sleeps, running ``PROBE`` - and keeps the measurements per host and memory model in
``CAPACITY_FILE`` (``build/calib/pace-capacity.json`` or ``$SCHEDLAB_PACE_CAPACITY``), like the quiet
calibration card: the median of the first ``KEEP`` probes, after which it stays put.

``choose(capacity, harts, cores)`` is R = ``FRACTION`` x cores x capacity / harts, rounded down to 1, 2 or 5
times a power of ten: a tenth of the host for the harts' instructions, the rest for sleeping and waking them
(thousands of sleeps a second per hart, each dearer than the instructions between them), QEMU's own threads
and whatever else runs. ``resolve(spec, harts)`` turns a spec's ``pace=auto`` into ``pace=R`` once, before a
command boots anything, and says so on stderr: every boot of one comparison, sweep or section runs at one R.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys
from pathlib import Path

from . import hostcache
from . import model as machine
from .qemu import REPO_ROOT, HarnessError, host_cores

#: The share of the host's capacity the harts' instructions of a paced boot may use: a paced hart's sleeps cost the
#: host far more than the instructions between them (docs/pacing.md tables how often boots fall behind by R).
FRACTION = 0.1
#: Probes kept per host and memory model; the capacity is their median.
KEEP = 3
#: The probe: one hart, kernel and user work (a coarse Gauss with its barriers and syscalls, and synth).
PROBE = "calib=off timeout=120s job=gauss:n=128,procs=1 job=synth:procs=1,iters=400"
CAPACITY_FILE = Path(os.environ.get("SCHEDLAB_PACE_CAPACITY", REPO_ROOT / "build" / "calib" / "pace-capacity.json"))


def nice_floor(value: float) -> int:
    """The largest 1, 2 or 5 x 10^k not above value (at least 1)."""
    if value < 1:
        return 1
    power = 10 ** int(math.floor(math.log10(value)))
    return max(step * power for step in (1, 2, 5) if step * power <= value)


def choose(capacity: float, harts: int, cores: int) -> int:
    """R for ``harts`` harts on ``cores`` cores of ``capacity`` instructions/s each, within machine.PACE_RANGE."""
    low, high = machine.PACE_RANGE
    return min(high, max(low, nice_floor(FRACTION * cores * capacity / max(1, harts))))


def _key(memory_spec: str) -> str:
    return f"{platform.node() or 'host'}/{memory_spec}"


def _stored() -> dict:
    return hostcache.load(CAPACITY_FILE)


def _store(memory_spec: str, value: float) -> None:
    hostcache.keep_first(CAPACITY_FILE, _key(memory_spec), value, KEEP)


def probe(memory_spec: str, kernel=None) -> float:
    """One measurement: instructions per second of one unpaced-but-counted hart under ``memory_spec``."""
    from .qemu import boot                  # the executor is not needed: one short boot, before any other
    spec = ("" if memory_spec == machine.NONE else memory_spec + ",") + f"pace={machine.PACE_RANGE[1]}"
    run = boot(1, PROBE, kernel=kernel, model=spec, timeout=300)
    jobs = run.parsed.model_jobs
    rates = [jobs[r["job"]]["insns"] / r["cpu_us"] * 1e6 for r in run.results
             if r.get("job") in jobs and isinstance(r.get("cpu_us"), int) and r["cpu_us"] > 0
             and isinstance(jobs[r["job"]].get("insns"), int)]
    if not run.ok or not rates:
        raise HarnessError(f"pace=auto: the capacity probe failed ({run.verdict}); give pace=R instead "
                           f"(e.g. pace=10000000)")
    return sum(rates) / len(rates)


def capacity(memory_spec: str, kernel=None, say=None) -> float:
    """This host's instructions per second per core under ``memory_spec`` (stored probes, else new ones)."""
    kept = _stored().get(_key(memory_spec), [])
    while len(kept) < KEEP:
        if say:
            say(f"pace=auto: measuring this host's capacity under model={memory_spec} "
                f"({len(kept) + 1} of {KEEP}, once per host and model)")
        _store(memory_spec, probe(memory_spec, kernel))
        new = _stored().get(_key(memory_spec), [])
        if len(new) == len(kept):           # could not store: use what was measured
            return probe(memory_spec, kernel)
        kept = new
    return statistics.median(kept)


def resolve(spec, harts: int, kernel=None, cores: int | None = None, say=None):
    """``spec`` (text or a Model) with ``pace=auto`` replaced by this host's R for ``harts`` harts, as the same
    kind (the spec unchanged otherwise)."""
    parsed = machine.as_model(spec)
    if parsed is None or parsed.pace != machine.AUTO:
        return spec
    say = say or (lambda message: print(message, file=sys.stderr, flush=True))
    memory = parsed.memory_spec
    cap = capacity(memory, kernel, say)
    cores = cores or host_cores()
    rate = choose(cap, harts, cores)
    say(f"pace=auto: R={rate} instructions/s per hart for {harts} harts (this host: {cap / 1e6:.0f} M "
        f"instructions/s per core under model={memory}; {harts} x R = {100 * harts * rate / (cores * cap):.0f} % "
        f"of {cores} cores)")
    resolved = parsed.with_pace(rate)
    return resolved if isinstance(spec, machine.Model) else resolved.canonical


def share(spec, harts: int, cores: int | None = None) -> int | None:
    """The host cores a paced boot of ``harts`` harts needs (the executor reserves them): its harts x R over
    the share pace=auto would give it, FRACTION of a core's stored capacity, rounded up; None when the boot is
    not paced or this host's capacity under its memory model was never measured (then: a core per hart)."""
    try:
        parsed = machine.as_model(spec)
    except machine.ModelError:
        return None
    if parsed is None or not isinstance(parsed.pace, int) or not parsed.pace:
        return None
    kept = _stored().get(_key(parsed.memory_spec), [])
    if not kept:
        return None
    need = math.ceil(harts * parsed.pace / (FRACTION * statistics.median(kept)))
    return max(1, min(need, cores or host_cores()))


def needs_pace(cpus: int, deterministic: bool, sim: bool, spec) -> str | None:
    """Why a timed boot of ``cpus`` harts must be paced here, or None: unpaced, harts above the host's cores
    are time-sliced by the host and every timing is distorted."""
    cores = host_cores()
    if sim or deterministic or cpus <= cores:
        return None
    parsed = machine.as_model(spec)
    if parsed is not None and parsed.pace:
        return None
    profile = f"{parsed.profile}," if parsed is not None and parsed.has_cache else ""
    return (f"--cpus {cpus} on a host with {cores} cores: unpaced, the harts' threads are time-sliced by the "
            f"host and every timing is distorted. Run paced (--model {profile}pace=auto), deterministic "
            f"(--deterministic), simulated (--sim), or with --cpus <= {cores}")
