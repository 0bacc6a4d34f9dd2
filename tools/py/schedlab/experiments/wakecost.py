"""Where a cross-hart futex wake's time goes (issue 12, item 3).

    schedlab experiment wakecost [--kernel build/kernel.elf] [--repeat 3] [--delay-us 20]

Boots kbench what=futex with two processes on two harts, the token's holder spinning --delay-us before
each hand-off so that its receiver has surely blocked and its hart idles (polling below IDLE_POLL_US,
halted in wfi above), with trace=on. Per hand-off, from the trace and kbench's own stamps:

  wake -> run      the waker's `wake` record (inside futex_wake, under sched_lock) to the receiver's
                   `run` record on the other hart: queueing, the idle hart noticing (a store it polls, or
                   an IPI and QEMU waking the halted vCPU), pick_next and the start of the dispatch
  block -> idle    the receiver's `blk` record to its hart's `idle` record: leaving the process, and (before
                   idle_satp) a satp switch and TLB flush under sched_lock
  wake_ns          kbench: from just before the waker's futex_wake to the receiver back in user mode
  ns_per_op        kbench: a whole hand-off, delay included

Medians over all hand-offs and --repeat boots, once with irq=auto and once with irq=sbi. Timings mean
something only on an otherwise idle machine (harts <= host cores).
"""
from __future__ import annotations

import argparse
import statistics
import sys

from .. import qemu
from .. import trace as tr


def intervals(trace):
    """(wake -> run, block -> idle) gaps in us over the trace, matched per process."""
    wake_run, blk_idle = [], []
    pending = {}
    records = sorted(trace.records, key=lambda r: r.time_us)
    for i, r in enumerate(records):
        key = (r.job, r.proc)
        if r.event == "wake":
            pending[key] = r.time_us
        elif r.event == "run" and key in pending:
            wake_run.append(r.time_us - pending.pop(key))
        elif r.event == "blk":
            nxt = next((q for q in records[i + 1:] if q.hart == r.hart), None)
            if nxt is not None and nxt.event == "idle":
                blk_idle.append(nxt.time_us - r.time_us)
    return wake_run, blk_idle


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab experiment wakecost", description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--delay-us", type=int, default=20)
    ap.add_argument("--ops", type=int, default=1000)
    args = ap.parse_args(argv)
    print(f"# kbench futex, 2 procs on 2 harts, delay_us={args.delay_us}, ops={args.ops}, repeat={args.repeat}")
    print(f"{'path':6} {'wake->run us':>12} {'blk->idle us':>12} {'wake_ns':>9} {'ns_per_op':>10}")
    for path in ("auto", "sbi"):
        wr, bi, wake, per = [], [], [], []
        for seed in range(1, args.repeat + 1):
            run = qemu.boot(2, f"seed={seed} irq={path} trace=on job=kbench:what=futex,procs=2,"
                               f"ops={args.ops},delay_us={args.delay_us}", kernel=args.kernel, timeout=600)
            if run.exit_code != 0 or not run.results:
                sys.exit(f"boot failed:\n{run.console[-1500:]}")
            a, b = intervals(tr.parse_trace(run.console))
            wr += a
            bi += b
            wake.append(run.results[0].get("wake_ns", 0))
            per.append(run.results[0]["ns_per_op"])
        print(f"{path:6} {statistics.median(wr):12.2f} {statistics.median(bi):12.2f} "
              f"{statistics.median(wake):9.0f} {statistics.median(per):10.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
