"""Deterministic mode across the bundled apps and the policies: identical consoles, and its wall-time cost.

    schedlab experiment determinism [--cpus 2] [--repeat 1] [--policies timeslice,gang,...] [--apps a,b]

For every app (a small scenario of each, APP_SCENARIOS) under every policy: one normal boot and two
deterministic boots (clock=virtual: QEMU -icount on one host thread, kernel/vclock.h). Prints whether the
two deterministic consoles are the same bytes, and the wall time of each mode with their ratio (the
acceptance bound is about 10x). The identity check holds on any host; the wall times and ratios mean
something only on an otherwise idle machine with cpus <= host cores: run it in a quiet phase.
"""
from __future__ import annotations

import argparse
import statistics
import sys

from .. import qemu
from ..table import format_table

#: One small scenario per bundled app (hog needs a foreground job; fault fails on purpose).
APP_SCENARIOS = {
    "bbench": "job=bbench:ms=2,batches=1,shape=central",
    "chaos": "job=chaos:mode=random,calls=300",
    "fault": "job=fault:kind=load job=gauss:n=48",
    "gauss": "job=gauss:n=128",
    "hog": "job=oddeven:n=512 job=hog",
    "kbench": "job=kbench:what=futex,ops=500",
    "knary": "job=knary:h=6",
    "oddeven": "job=oddeven:n=1024",
    "scribble": "job=scribble:mode=partial,lines=4",
    "sleeper": "job=sleeper:iters=5,sleep_us=500",
    "synth": "job=synth:iters=300",
    "tbench": "job=tbench:batches=1,ops=100",
}
POLICIES = ("timeslice", "gang", "partition", "global")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab experiment determinism", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="boots of each mode per cell (median wall time)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--apps", default=",".join(APP_SCENARIOS))
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    rows, bad = [], 0
    for app in args.apps.split(","):
        for policy in args.policies.split(","):
            tokens = f"policy={policy} {APP_SCENARIOS[app]} timeout=120s"
            normal = [qemu.boot(args.cpus, tokens, timeout=args.timeout) for _ in range(args.repeat)]
            det = [qemu.boot(args.cpus, tokens, timeout=args.timeout, deterministic=True)
                   for _ in range(max(2, args.repeat))]
            same = all(d.console == det[0].console for d in det) and not det[0].timed_out
            bad += not same
            wall_n = statistics.median(r.seconds for r in normal)
            wall_d = statistics.median(r.seconds for r in det)
            rows.append([app, policy, "same" if same else "DIFFER", normal[0].verdict, det[0].verdict,
                         f"{wall_n:.2f}", f"{wall_d:.2f}", f"{wall_d / wall_n:.1f}x"])
            print("  ".join(str(c) for c in rows[-1]), file=sys.stderr, flush=True)
    print(format_table(["app", "policy", "consoles", "normal", "determ.", "wall s", "determ. wall s", "ratio"],
                       rows))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
