"""Measure the simulator's costs on QEMU and write tools/sim/calib/<name>.json (make sim-calibrate).

Every number is a median over --repeat boots, at CPUS=2 unless noted, each recorded in "sources" with the
exact bootargs it came from:
  kbench what=syscall|yield (ns_per_op), what=futex's wake_ns at CPUS=2 with the receiver's hart polling and
  halted (wake_poll_ns, wake_halt_ns) and its wake_call_ns (the waker's futex_wake that kicks a polling hart:
  futex_wake_kick_ns), what=futex at CPUS=1 (same hart) and CPUS=2 (cross hart: with
  delay_us=CROSS_DELAY_US before each hand-off, so the receiver has really blocked - without it the kernel's
  hand-off is faster than a block, the receiver seeing the token before it sleeps - and the delay taken off)
  bbench: every barrier shape x wait kind at 2 processes on 2 harts (its BENCH lines)
  per-work-unit costs from single-process boots (par_us, the parallel part, over the units its keys imply):
    synth grain x iters units, oddeven n x ceil(n/2) compare-exchanges, gauss coarse sum (n-k)(n-k-1) row ops
The slot-switch cost comes from a gang trace (schedlab trace --stats: cost per hart median); process 0's
serial parts (proc_start, workers_start, proc_end: tools/sim/sim_program.c) from traces of jobs alone.

Timings: run this on a quiet machine with at least 2 free cores, never on a loaded one.
"""
from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import sys
from pathlib import Path


from . import trace as tr
from . import executor
from .executor import boot              # through --jobs/--executor (executor.py)
from .qemu import REPO_ROOT

HERE = REPO_ROOT / "tools" / "sim"


def _ok(run):
    if not run.ok:
        raise SystemExit(f"calibration boot failed: {run.bootargs}\n{run.console[-1500:]}")
    return run


def median_of(repeat: int, cpus: int, bootargs: str, pick) -> float:
    tasks = [executor.qemu_task(cpus, bootargs, timeout=600)] * repeat      # side by side with --jobs
    return statistics.median(pick(_ok(run)) for run in executor.current().map(tasks))


def kbench(repeat: int, cpus: int, what: str, ops: int) -> tuple[float, str]:
    args = f"job=kbench:procs={2 if what == 'futex' else 1},what={what},ops={ops}"
    return median_of(repeat, cpus, args, lambda r: float(r.results[0]["ns_per_op"])), f"{args} CPUS={cpus}"


CROSS_DELAY_US = 20  # below the kernel's IDLE_POLL_US: the receiver's hart polls, as between barriers


def futex_cross(repeat: int, ops: int) -> tuple[float, str]:
    args = f"job=kbench:procs=2,what=futex,ops={ops},delay_us={CROSS_DELAY_US}"
    ns = median_of(repeat, 2, args, lambda r: float(r.results[0]["ns_per_op"]) - 1000.0 * CROSS_DELAY_US)
    return ns, f"{args} CPUS=2: ns_per_op - {CROSS_DELAY_US} us"


def per_unit(repeat: int, args: str, units: float) -> tuple[float, str]:
    """The app's parallel part (par_us: what the simulator's programs model) over its units. Its start-up
    (loading, QEMU translating the code the first time, the serial set-up and check) is start_ns."""
    ns = median_of(repeat, 2, args, lambda r: float(r.results[0]["par_us"]) * 1000.0 / units)
    return ns, f"{args} CPUS=2: par_us*1000/{units:.0f} units"


def barriers(repeat: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for _ in range(repeat):
        run = _ok(boot(2, "job=bbench:procs=2", timeout=600))
        for line in run.console.splitlines():
            m = re.search(r"BENCH barrier_(\w+?)_(\w+)_ns ([\d.]+)", line)
            if m:
                found.setdefault(f"{m[1]}_{m[2]}", []).append(float(m[3]))
    return found


def slot_switch(repeat: int) -> tuple[float, str]:
    args = "policy=gang trace=on quantum=10ms job=hog:procs=2 job=synth:procs=2,iters=4000"

    def cost(run):
        stats = tr.switch_stats(tr.parse_trace(run.console))
        return (stats.cost_median_us or 0.0) * 1000.0

    return median_of(repeat, 2, args, cost), f"{args} CPUS=2: schedlab trace --stats cost per hart median"


def life(repeat: int) -> dict[str, tuple[float, str]]:
    """Process 0's serial parts, from traces of 2-process jobs alone: its run time before it creates process 1
    (proc_start), from then until it wakes process 1 waiting for its worker (workers_start), and after the
    others have exited until it exits (proc_end). Medians over the apps and seeds."""
    apps = ("synth:procs=2,iters=300,grain=2000", "oddeven:procs=2,n=1024", "gauss:procs=2,n=96")
    got: dict[str, list[float]] = {"proc_start_ns": [], "workers_start_ns": [], "proc_end_ns": []}
    for app in apps:
        for seed in range(1, repeat + 1):
            t = tr.parse_trace(_ok(boot(2, f"trace=on seed={seed} job={app}", timeout=600)).console)
            rec = [r for r in t.records if r.job == 1]
            new1 = min(r.time_us for r in rec if r.event == "new" and r.proc == 1)
            wakes = [r.time_us for r in rec if r.event == "wake" and r.proc == 1 and r.time_us > new1]
            others_out = max(r.time_us for r in rec if r.event == "exit" and r.proc != 0)
            runs = [i for i in tr.intervals(t) if i.job == 1 and i.proc == 0]

            def ran(lo: float, hi: float) -> float:
                return 1000.0 * sum(max(0.0, min(i.end_us, hi) - max(i.start_us, lo)) for i in runs)

            got["proc_start_ns"].append(ran(0.0, new1))
            if wakes:  # process 1 slept waiting for its worker (it had not, if process 0 was quicker)
                got["workers_start_ns"].append(ran(new1, min(wakes)))
            got["proc_end_ns"].append(ran(others_out, float("inf")))
    where = f"trace=on job={{{','.join(apps)}}} seeds 1..{repeat} CPUS=2: process 0's run intervals, median"
    return {k: (statistics.median(v), where) for k, v in got.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab calibrate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", default=socket.gethostname().split(".")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-o", "--output", help="default tools/sim/calib/<name>.json")
    executor.add_options(ap)
    args = ap.parse_args(argv)
    with executor.use(executor.from_args(args, cpus=2)):
        return _calibrate(args)


def _calibrate(args) -> int:
    r = args.repeat
    c: dict[str, float] = {}
    src: dict[str, str] = {}

    def put(key, value_source):
        c[key], src[key] = value_source

    put("syscall_ns", kbench(r, 2, "syscall", 20000))
    put("yield_ns", kbench(r, 2, "yield", 20000))
    put("futex_same_hart_ns", kbench(r, 1, "futex", 5000))
    put("futex_cross_hart_ns", futex_cross(r, 1000))
    for key, delay_us, ops in (("wake_poll_ns", CROSS_DELAY_US, 1000), ("wake_halt_ns", 400, 300)):
        bench = f"job=kbench:procs=2,what=futex,ops={ops},delay_us={delay_us}"  # as schedlab bench
        c[key] = median_of(r, 2, bench, lambda run: float(run.results[0]["wake_ns"]))
        src[key] = f"{bench} CPUS=2: wake_ns (the receiver's hart {'polling' if delay_us < 100 else 'halted'})"
        if key == "wake_poll_ns":
            c["futex_wake_kick_ns"] = median_of(r, 2, bench, lambda run: float(run.results[0]["wake_call_ns"]))
            src["futex_wake_kick_ns"] = f"{bench} CPUS=2: wake_call_ns (the waker's futex_wake, kicking the other hart)"
    bars = barriers(r)
    for shape in ("central", "tree", "combination"):
        for wait in ("spin", "block"):
            key = f"barrier_{shape}_{wait}_ns"
            c[key] = statistics.median(bars[f"{shape}_{wait}"])
            src[key] = "bbench procs=2 CPUS=2 (BENCH line), median of boots"
    for wait in ("twophase", "adaptive"):
        c[f"barrier_{wait}_ns"] = statistics.median(bars[f"central_{wait}"])
        src[f"barrier_{wait}_ns"] = "bbench procs=2 CPUS=2, central shape"
    put("synth_unit_ns", per_unit(r, "job=synth:procs=1,iters=200,grain=20000", 200 * 20000))
    n = 2048
    put("oddeven_cx_ns", per_unit(r, f"job=oddeven:procs=1,n={n}", sum((n - (p & 1)) // 2 for p in range(n))))
    g = 160
    put("gauss_rowop_ns", per_unit(r, f"job=gauss:procs=1,n={g}", sum((g - k) * (g - k - 1) for k in range(g))))
    c["hog_unit_ns"] = c["sleeper_unit_ns"] = c["synth_unit_ns"]
    src["hog_unit_ns"] = src["sleeper_unit_ns"] = "the synth unit (the same LCG step, lib/base/lcg.h)"
    put("gang_slot_switch_ns", slot_switch(r))
    for key, value_source in life(r).items():
        put(key, value_source)
    prev = json.loads((HERE / "calib" / "default.json").read_text())
    for key in ("empty_call_ns", "uthread_yield_ns"):  # informational: the model does not use them yet
        c[key] = prev[key]
        src[key] = f"carried over from default.json ({prev['sources'].get(key, 'see there')})"
    for key in ("thread_create_ns", "thread_run_ns", "copy_call_ns", "copy_double_ns", "grassfire_pixel_ns",
                "msort_key_ns"):  # the thread apps' (sim_threads.c), measured on deterministic QEMU: no host speed
        if key in prev:
            c[key] = prev[key]
            src[key] = prev["sources"].get(key, "carried over from default.json")
    out = Path(args.output or HERE / "calib" / f"{args.name}.json")
    out.write_text(json.dumps({"name": args.name, "host": socket.gethostname(), **c, "sources": src}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
