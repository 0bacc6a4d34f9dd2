"""make bench: one BENCH line per figure, all measured in this one run.

    BENCH <name> <value> <unit>

1. QEMU at CPUS=2: apps/bbench.c with 2 processes (barrier_<shape>_<wait>_ns for every barrier shape x
   wait kind), then apps/tbench.c if it exists (its own BENCH lines), each in its own boot. On the console
   these are job output (`[1] BENCH ...`); the harness's parser hands over the text after the prefix.
   Then the kernel's own costs (kbench, and a gang trace), each the median of BENCH_REPEAT boots with its
   spread on a `# spread` line: syscall_ns, yield_switch_ns and futex_same_hart_ns (two processes on one
   hart), and, once through Sstc/ACLINT SSWI (irq=auto) and once through the SBI (irq=sbi, names ending
   in _sbi, booted alternately), futex_cross_ns (a hand-off between harts), wake_poll_ns / wake_halt_ns
   (from a wake to the woken process running, its hart polling / halted in wfi), tick_ns (the time a timer
   tick takes from a running process), and gang_skew_us, gang_latency_us, gang_switch_cost_us (slot
   switches of two gauss jobs, tools/py/schedlab/trace.py); then <name>_sbi_over_direct ratios.
   Then what a trace record costs (trace=on): ulog_record_ns, a record of the library's event log
   (kbench what=ulog, its clock read included), and trace_record_ns, one of the kernel's own (measured by
   the kernel at boot, its time already read: ULOG begin's kernel_record_ns); the same two as
   instructions, exactly, from a deterministic boot (ulog_record_instrs, trace_record_instrs); and the
   ulog_over_kernel ratios.
2. The host: build/host/bbench with 2 and with 4 processes (4 on 2 cores is oversubscribed), named
   host_barrier_<shape>_<wait>_ns_t<procs>; then build/host/barbench (tools/host/barbench.c):
   pthread_barrier_wait and an OpenMP barrier with 2 and 4 threads (host_pthread_barrier_ns_t<T>,
   host_omp_barrier_ns_t<T>). Without gcc -fopenmp those two lines are skipped with a warning.
Every figure is a median over batches (see the sources). Timings mean something only on an otherwise
idle machine with at least 2 free cores; the script prints the load average to judge by.
Environment: BENCH_MS (batch length in ms, default 20), BENCH_BATCHES (default 5), BENCH_REPEAT (boots
per kernel figure, default 3).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

from . import qemu
from . import trace as tr
from .build import ensure
from .qemu import REPO_ROOT as ROOT

BENCH = re.compile(r"^BENCH (\S+) (\S+) (\S+)\s*$", re.M)
MS = int(os.environ.get("BENCH_MS", "20"))
BATCHES = int(os.environ.get("BENCH_BATCHES", "5"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))


def warn(msg: str) -> None:
    print(f"bench: warning: {msg}", file=sys.stderr, flush=True)


def emit(lines, rename=lambda name: name) -> None:
    for name, value, unit in lines:
        print(f"BENCH {rename(name)} {value} {unit}", flush=True)


def on_qemu(bootargs: str) -> None:
    run = qemu.boot(2, bootargs, timeout=600)
    if run.timed_out or run.exit_code != 0:
        warn(f"QEMU boot `{bootargs}` ended with exit={run.exit_code} timed_out={run.timed_out}")
    emit(BENCH.findall("\n".join(run.parsed.job_lines())))    # the apps' lines, "[<job>] " removed


def kernel_figure(cpus: int, bootargs: str, pick) -> float | None:
    """Boot once and take a number from its console with pick(run); None if the boot failed."""
    run = qemu.boot(cpus, bootargs, timeout=600)
    if run.timed_out or run.exit_code != 0 or not run.results:
        warn(f"QEMU boot `{bootargs}` ended with exit={run.exit_code} timed_out={run.timed_out}")
        return None
    return pick(run)


def result(key):
    return lambda run: run.results[0][key]


def gang_stat(attr):
    def pick(run):
        return getattr(tr.switch_stats(tr.parse_trace(run.console)), attr)
    return pick


#: (name, unit, cpus, bootargs, pick): the kernel's costs; names in PATHS are measured on both paths
SAME = [
    ("syscall_ns", "ns", 2, "job=kbench:what=syscall,procs=2,ops=20000", result("ns_per_op")),
    ("yield_switch_ns", "ns", 1, "job=kbench:what=yield,procs=2,ops=20000", result("ns_per_op")),
    ("futex_same_hart_ns", "ns", 1, "job=kbench:what=futex,procs=2,ops=20000", result("ns_per_op")),
]
GANG = "policy=gang quantum=10ms trace=on job=gauss:n=384,barrier=spin job=gauss:n=384,barrier=spin"
PATHS = [
    ("futex_cross_ns", "ns", 2, "job=kbench:what=futex,procs=2,ops=20000", result("ns_per_op")),
    ("wake_poll_ns", "ns", 2, "job=kbench:what=futex,procs=2,ops=1000,delay_us=20", result("wake_ns")),
    ("wake_halt_ns", "ns", 2, "job=kbench:what=futex,procs=2,ops=300,delay_us=400", result("wake_ns")),
    ("tick_ns", "ns", 2, "quantum=200us job=kbench:what=tick,procs=1,ops=1000", result("tick_ns")),
    ("gang_skew_us", "us", 2, GANG, gang_stat("skew_median_us")),
    ("gang_latency_us", "us", 2, GANG, gang_stat("latency_median_us")),
    ("gang_switch_cost_us", "us", 2, GANG, gang_stat("cost_median_us")),
]


def report(name, unit, values) -> float | None:
    values = [v for v in values if v is not None]
    if not values:
        warn(f"{name}: no boot gave a value")
        return None
    m = statistics.median(values)
    print(f"BENCH {name} {m:.1f} {unit}", flush=True)
    print(f"# spread {name} {min(values):.1f}..{max(values):.1f} over {len(values)} boots", flush=True)
    return m


def kernel_costs() -> None:
    for name, unit, cpus, args, pick in SAME:
        report(name, unit, [kernel_figure(cpus, f"seed={i + 1} {args}", pick) for i in range(REPEAT)])
    medians = {}
    gang_runs: dict = {}
    for name, unit, cpus, args, pick in PATHS:
        values = {"auto": [], "sbi": []}
        for i in range(REPEAT):
            for path in ("auto", "sbi"):  # alternately, so a change in the host's load hits both alike
                key = (path, i)
                if args == GANG:  # one gang boot serves its three figures
                    if key not in gang_runs:
                        gang_runs[key] = qemu.boot(cpus, f"seed={i + 1} irq={path} {args}", timeout=600)
                    run = gang_runs[key]
                    values[path].append(pick(run) if run.exit_code == 0 and not run.timed_out else None)
                else:
                    values[path].append(kernel_figure(cpus, f"seed={i + 1} irq={path} {args}", pick))
        medians[name] = (report(name, unit, values["auto"]), report(f"{name}_sbi", unit, values["sbi"]))
    for name, (direct, sbi) in medians.items():
        if direct and sbi:
            print(f"BENCH {name}_sbi_over_direct {sbi / direct:.2f} ratio", flush=True)


ULOG = "trace=on job=kbench:what=ulog,procs=1,ops=100000"


def record_costs(run) -> tuple[float, float] | None:
    """(a library record, a kernel record) in ns from a kbench what=ulog boot: ns_per_op and ULOG begin's
    kernel_record_ns (the kernel measures its own at boot, trace_rec_at with the time already read)."""
    if run.exit_code != 0 or not run.results:
        return None
    begin = next((line for line in run.traces if line.startswith("ULOG begin")), "")
    kernel = re.search(r"kernel_record_ns=([\d.]+)", begin)
    return (float(run.results[0]["ns_per_op"]), float(kernel.group(1))) if kernel else None


def trace_costs() -> None:
    costs = [record_costs(qemu.boot(1, f"seed={i + 1} {ULOG}", timeout=600)) for i in range(REPEAT)]
    u = report("ulog_record_ns", "ns", [c[0] if c else None for c in costs])
    k = report("trace_record_ns", "ns", [c[1] if c else None for c in costs])
    if u and k:
        print(f"BENCH ulog_over_kernel_ns {u / k:.2f} ratio", flush=True)
    det = record_costs(qemu.boot(1, ULOG, timeout=600, deterministic=True))  # 1 virtual ns = 1 instruction
    if not det:
        warn("the deterministic boot failed: no instruction counts")
        return
    print(f"BENCH ulog_record_instrs {det[0]:.0f} instrs", flush=True)
    print(f"BENCH trace_record_instrs {det[1]:.1f} instrs", flush=True)
    if det[1]:
        print(f"BENCH ulog_over_kernel_instrs {det[0] / det[1]:.2f} ratio", flush=True)


def on_host(argv: list[str], rename) -> None:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        warn(f"{' '.join(argv)}: {e}")
        return
    if res.returncode != 0:
        warn(f"{' '.join(argv)} exited with {res.returncode}: {res.stderr.strip()[-300:]}")
    emit(BENCH.findall(res.stdout), rename)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="schedlab bench", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    print(f"# load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; batches of {MS} ms, "
          f"median of {BATCHES}", flush=True)
    on_qemu(f"job=bbench:procs=2,ms={MS},batches={BATCHES}")
    if (ROOT / "apps" / "tbench.c").is_file():
        on_qemu("job=tbench")
    kernel_costs()
    trace_costs()
    ensure(ROOT / "build/host/bbench", "build/host/bbench")     # make bench built it; run alone, this does
    for t in (2, 4):
        on_host([str(ROOT / "build/host/bbench"), f"procs={t}", f"ms={MS}", f"batches={BATCHES}"],
                lambda name, t=t: f"host_{name}_t{t}")
    made = subprocess.run(["make", "-s", "-C", str(ROOT), "build/host/barbench"],
                          capture_output=True, text=True)
    if made.returncode != 0:
        warn("build/host/barbench did not build (gcc -fopenmp?): no pthread/OpenMP figures\n"
             + made.stderr.strip()[-500:])
        return 0
    for t in (2, 4):
        on_host([str(ROOT / "build/host/barbench"), "--threads", str(t), "--ms", str(MS),
                 "--batches", str(BATCHES)], lambda name: name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
