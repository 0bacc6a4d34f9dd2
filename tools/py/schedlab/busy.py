"""Was the host busy during a boot?  Every command that reports timings asks, and marks what it was.

QEMU runs each hart on a host thread, so a boot's times are this host's only while its harts' threads have
cores to themselves.  A boot is flagged *busy* when any of these says otherwise:

* its calibration card (``CALIB``, kernel/calib.c) is beyond sane absolute bounds (``ABSOLUTE_NS``: an IPI
  that takes 20 us where a quiet 2-core host takes ~1-3 us is a partner hart waiting for a core), or beyond
  ``FACTOR`` times this host's *quiet card* for the same hart count;
* other QEMU processes were running (``qemu-system-*`` that are not the harness's own boots - with ``--jobs``
  its boots side by side on cores of their own, ``qemu.OWN_PIDS`` - another user's or another session's machine
  competes for the cores);
* the 1-minute load average exceeded the host's cores plus ``LOAD_MARGIN`` (the harness's own boot keeps
  up to one thread per hart busy; more than that is someone else's work);
* during the boot itself, other processes kept more cores busy than the host had beside the boot's harts
  (plus ``OTHERS_MARGIN``): the host's CPU time (/proc/stat) less the harness's children's, over the boot's
  wall time (``cpu_sample``, ``others_cores``). The load average lags by a minute; this sees a hog that
  started just before the boot. Measured for a boot that ran alone (unpinned, executor.run_task).

The quiet card is stored per host, hart count and machine model in ``QUIET_CARDS`` (``build/calib/quiet-cards.json``, or
``$SCHEDLAB_QUIET_CARDS``): the element-wise median of the first ``KEEP`` cards of boots that passed every
check, so it is learnt from this host's first quiet runs and then stays put.  Deterministic (virtual-clock)
and simulated boots are never flagged: their times do not depend on the host.

A *paced* boot (``--model ...,pace=R``, tools/model/pace.h) is judged by its own fidelity instead: its wall time
is model time as long as every hart kept its schedule, whatever else ran, and its calibration card holds the
model's costs, not this host's. It is flagged when its harts lost more than ``PACE_LAG_FRACTION`` of their
paced time (``MODEL end``'s ``pace_lag_us`` over harts x ``pace_span_us``): the host could not carry harts x R.

``host_load`` is the one place the host is looked at; tests replace it (and the card) with fakes instead of
loading the machine.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import hostcache
from .qemu import OWN_PIDS, REPO_ROOT

#: A card field above this many ns means the boot's harts waited for host cores (quiet: the card in docs/guide/output.md).
ABSOLUTE_NS = {"syscall_ns": 5_000.0, "switch_ns": 5_000.0, "ipi_ns": 20_000.0, "tick_ns": 20_000.0,
               "synth_unit_ns": 100.0}
#: A card field above FACTOR x the quiet card's is flagged (this host's speed drifts ~2x between two levels).
FACTOR = 4.0
#: Busy when the 1-minute load average exceeds cores + LOAD_MARGIN.
LOAD_MARGIN = 1.0
#: Busy when others kept more than (cores - harts) + OTHERS_MARGIN cores busy on average during the boot.
OTHERS_MARGIN = 0.5
#: A boot shorter than this is too short to judge the others' share from /proc/stat's ticks.
MIN_SAMPLE_SECONDS = 0.5
#: A paced boot whose harts fell behind by more than this fraction of their paced time is flagged.
PACE_LAG_FRACTION = 0.01
#: Quiet cards kept per host and hart count; the reference is their element-wise median.
KEEP = 5
QUIET_CARDS = Path(os.environ.get("SCHEDLAB_QUIET_CARDS", REPO_ROOT / "build" / "calib" / "quiet-cards.json"))


@dataclass(frozen=True)
class HostLoad:
    """What the host looked like: the 1-minute load average, its cores, other QEMU processes (pid, command)."""

    load1: float
    cores: int
    qemus: tuple[tuple[int, str], ...] = ()
    others: float | None = None     # cores other processes kept busy during the boot (None: not measured)


@dataclass(frozen=True)
class CpuSample:
    """The host's busy CPU seconds (all cores), this process's reaped children's, and the monotonic clock."""

    host_busy: float
    children: float
    wall: float


def cpu_sample() -> CpuSample | None:
    """Now, from /proc/stat's first line (None where there is none)."""
    try:
        with open("/proc/stat") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 8:
        return None
    ticks = [int(f) for f in fields[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]             # all but idle and iowait
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return CpuSample(busy / os.sysconf("SC_CLK_TCK"), usage.ru_utime + usage.ru_stime, time.monotonic())


def others_cores(before: CpuSample | None, after: CpuSample | None) -> float | None:
    """Cores' worth of CPU that processes other than this one's children used between the samples."""
    if before is None or after is None or after.wall - before.wall < MIN_SAMPLE_SECONDS:
        return None
    others = (after.host_busy - before.host_busy) - (after.children - before.children)
    return max(0.0, others) / (after.wall - before.wall)


def _other_qemus() -> tuple[tuple[int, str], ...]:
    """QEMU processes on this host (Linux /proc; none found elsewhere). The harness calls this after its own
    boot has exited, so every one found is someone else's."""
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return ()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if comm.startswith("qemu-system") and int(entry.name) not in OWN_PIDS:
            found.append((int(entry.name), comm))
    return tuple(sorted(found))


def host_load() -> HostLoad:
    """The host now (tests monkeypatch this: never load the machine to test the flag)."""
    try:
        load1 = os.getloadavg()[0]
    except OSError:
        load1 = 0.0
    return HostLoad(load1, os.cpu_count() or 1, _other_qemus())


@dataclass
class Verdict:
    """Why a boot counts as busy (no reasons: quiet)."""

    reasons: list[str] = field(default_factory=list)

    @property
    def busy(self) -> bool:
        return bool(self.reasons)

    def __str__(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "quiet"


def _key(cpus: int, model: str = "none") -> str:
    """Cards are kept per host, hart count and machine model: the model's plugin slows every emulated
    instruction, so its cards are another host's."""
    base = f"{platform.node() or 'host'}/{cpus}"
    return base if model in (None, "", "none") else f"{base}/{model}"


def _load_cards() -> dict:
    return hostcache.load(QUIET_CARDS)


def quiet_card(cpus: int, model: str = "none") -> dict | None:
    """This host's quiet card at ``cpus`` harts under ``model`` (element-wise median of the stored quiet
    cards), or None."""
    cards = _load_cards().get(_key(cpus, model), [])
    if not cards:
        return None
    keys = [k for k in ABSOLUTE_NS if all(isinstance(c.get(k), (int, float)) for c in cards)]
    return {k: statistics.median(c[k] for c in cards) for k in keys}


def _remember(cpus: int, card: dict, model: str = "none") -> None:
    """Keep a quiet boot's card until KEEP are stored (then the reference stays put)."""
    numbers = {k: v for k, v in card.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    hostcache.keep_first(QUIET_CARDS, _key(cpus, model), numbers, KEEP)


def _ns(value: float) -> str:
    return f"{value / 1e6:.3g} ms" if value >= 1e6 else f"{value / 1e3:.3g} us" if value >= 1e3 else f"{value:.3g} ns"


def judge(card: dict | None, cpus: int, load: HostLoad, quiet: dict | None) -> Verdict:
    """The reasons a boot with this card, at this load, counts as busy (pure: no host access)."""
    reasons = []
    for key, bound in ABSOLUTE_NS.items():
        value = (card or {}).get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        name = key.removesuffix("_ns")
        if value > bound:
            reasons.append(f"calibration {name} {_ns(value)} (a quiet host: under {_ns(bound)})")
        elif quiet and isinstance(quiet.get(key), (int, float)) and value > FACTOR * quiet[key]:
            reasons.append(f"calibration {name} {_ns(value)}, {value / quiet[key]:.1f}x this host's quiet card "
                           f"({_ns(quiet[key])})")
    if load.qemus:
        shown = ", ".join(f"{comm} (pid {pid})" for pid, comm in load.qemus[:3])
        reasons.append(f"{len(load.qemus)} other QEMU process{'es' if len(load.qemus) > 1 else ''} running: "
                       f"{shown}{', ...' if len(load.qemus) > 3 else ''}")
    if load.load1 > load.cores + LOAD_MARGIN:
        reasons.append(f"load average {load.load1:.2f} on {load.cores} cores")
    if load.others is not None and load.others > max(0, load.cores - cpus) + OTHERS_MARGIN:
        reasons.append(f"other processes kept {load.others:.1f} of {load.cores} cores busy during the boot")
    return Verdict(reasons)


def judge_paced(model_end: dict | None, cpus: int) -> Verdict:
    """The reasons a paced boot's times are not its model's (pure): its harts fell behind their schedule for
    more than PACE_LAG_FRACTION of the paced span, or the plugin's report is missing."""
    end = model_end or {}
    lag, span, rate = end.get("pace_lag_us"), end.get("pace_span_us"), end.get("pace")
    if not all(isinstance(v, int) for v in (lag, span, rate)) or span <= 0:
        return Verdict(["a paced boot without the plugin's pace report (MODEL end ... pace_lag_us=): its "
                        "fidelity is unknown"])
    fraction = lag / (cpus * span)
    if fraction <= PACE_LAG_FRACTION:
        return Verdict()
    return Verdict([f"paced harts fell behind: {lag / 1000:.1f} ms lost of {cpus} x {span / 1000:.1f} ms "
                    f"({100 * fraction:.1f} %, {end.get('pace_events', '?')} events past "
                    f"{end.get('pace_bound_us', '?')} us): this host cannot carry {cpus} harts x pace={rate}; "
                    "lower pace= or use pace=auto"])


def paced(run) -> bool:
    """The boot ran paced (its model spec has pace=R)."""
    return any(part.startswith("pace=") for part in str(getattr(run, "model", "none")).split(","))


def assess(run) -> Verdict:
    """Judge one finished boot (QEMU, real clock) and learn its card when it was quiet; sets ``run.busy``."""
    if getattr(run, "virtual_clock", False) or "sim" in (run.boot or {}):
        run.busy = Verdict()
        return run.busy
    if paced(run):
        run.busy = judge_paced(getattr(run, "model_end", None), run.cpus)
        return run.busy
    model = getattr(run, "model", "none")
    load = host_load()
    if load.others is None and getattr(run, "others_cores", None) is not None:
        load = replace(load, others=run.others_cores)
    verdict = judge(run.calib, run.cpus, load, quiet_card(run.cpus, model))
    if not verdict.busy and run.calib and run.ok:
        _remember(run.cpus, run.calib, model)
    run.busy = verdict
    return verdict


def count(runs) -> int:
    """How many of these runs were flagged busy."""
    return sum(1 for run in runs if getattr(getattr(run, "busy", None), "busy", False))


def checked(run) -> bool:
    """The boot ran a kernel built with KCHECKS=1 (BOOT checks=on; `make test` builds one): its lock ranks and
    hook checks add instructions to every process switch (docs/guide/getting-started.md, "Checked builds"), so its times and its
    virtual clock's instruction counts are not those of the plain build. The simulator always checks, at no
    simulated cost (clock=sim)."""
    boot = getattr(run, "boot", None) or {}
    return boot.get("checks") == "on" and boot.get("clock") != "sim"


def mark(busy_runs: int, total: int) -> str:
    """A row's mark: '' when none of its boots was busy, else 'BUSY k/n'."""
    return f"BUSY {busy_runs}/{total}" if busy_runs else ""


def warning(runs) -> str | None:
    """One paragraph for the end of a command's output when any boot was flagged, else None."""
    runs = list(runs)
    flagged = [run for run in runs if getattr(getattr(run, "busy", None), "busy", False)]
    checked_runs = sum(1 for run in runs if checked(run))
    note = (f"CHECKED KERNEL: {checked_runs} of {len(runs)} boots ran a kernel built with KCHECKS=1 (make test "
            "builds one), whose lock-order and policy-contract checks add ~12 % to a process switch: run `make` "
            "to rebuild without them before measuring.") if checked_runs else None
    if not flagged:
        return note
    reasons = sorted({r for run in flagged for r in run.busy.reasons})
    return (f"BUSY HOST: {len(flagged)} of {len(runs)} boots ran on a busy host, so their times measure the "
            f"host, not the kernel (rows marked BUSY): " + "; ".join(reasons[:4])
            + ("; ..." if len(reasons) > 4 else "")
            + (". Run again with a lower pace= (or pace=auto), or on a quieter host." if all(paced(r) for r in flagged)
               else ". Measure again on an idle machine with --cpus <= cores, or paced (--model pace=auto).")
            + (f"\n{note}" if note else ""))


def inside_docs(path) -> bool:
    """The path is under the repository's docs/ (which only quiet runs may write, unless --allow-busy)."""
    try:
        Path(path).resolve().relative_to((REPO_ROOT / "docs").resolve())
        return True
    except ValueError:
        return False
