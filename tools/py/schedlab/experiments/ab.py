"""Two kernel builds side by side: the same scenarios booted alternately with each, in one session.

    schedlab experiment ab --a OLD.elf --b build/kernel.elf [--cpus 1,2] [--repeat 5] [--key par_us]
            [SCENARIO ...]

Each scenario (a quoted token list; default: each bundled barrier app alone) is booted --repeat times with
each kernel, alternating a/b so that a drift of the host hits both alike, with seeds 1..R. Printed per
scenario and CPU count: the median of --key (a RESULT field of the first job, default par_us) for a and b,
their min..max, and b/a as the ratio of the medians. Use it to measure what a change costs (keep a copy of
the old build/kernel.elf before rebuilding). Timings mean something only at cpus <= host cores on an
otherwise idle machine, and even then a noisy host needs many repeats; --icount gives instruction-counted
virtual time instead, identical from boot to boot, which measures the instructions a change adds exactly
(at cpus > 1 it also counts the spinning of harts that QEMU then runs in turns, so it is a cost model,
not a prediction of wall time).
"""
from __future__ import annotations

import argparse
import sys

from .. import qemu
from ..reproduce import median as med


def spread(xs, fmt="{:.2f}"):
    """'min..max' of xs."""
    return f"{fmt.format(min(xs))}..{fmt.format(max(xs))}"

DEFAULT_SCENARIOS = ["job=gauss:sync=barrier", "job=gauss:sync=cond", "job=oddeven", "job=synth",
                     "job=gauss:sync=barrier,barrier=block", "job=oddeven:barrier=block"]


def measure(kernel, cpus, tokens, key, deterministic=False):
    """``deterministic`` (--icount): a deterministic boot (kernel/vclock.h) - one virtual nanosecond per
    instruction, harts interleaved on one host thread, times identical from boot to boot. It must be the whole
    mode, clock=virtual included: under -icount alone the kernel does not know its harts take turns, so a boot
    wait spins through its hart's turn and, at 2 harts or more, may time out before the other hart ever runs."""
    run = qemu.boot(cpus, tokens, kernel=kernel, timeout=600, deterministic=deterministic)
    if run.timed_out or run.exit_code != 0:
        sys.exit(f"run failed ({kernel}): {' '.join(tokens)}\n{run.console[-1500:]}")
    return run.results[0][key]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab experiment ab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the first kernel ELF (e.g. the build before a change)")
    ap.add_argument("--b", default=str(qemu.DEFAULT_KERNEL), help="the second kernel ELF (default: build/kernel.elf)")
    ap.add_argument("--cpus", default="1,2", help="comma-separated hart counts")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--key", default="par_us", help="the RESULT field compared")
    ap.add_argument("--icount", action="store_true", help="deterministic instruction-counted time (deterministic "
                    "mode, clock=virtual): measures the instructions a change costs, free of host noise; not wall time")
    ap.add_argument("scenario", nargs="*", help="scenarios, each one quoted token list")
    args = ap.parse_args(argv)
    cpus_list = [int(c) for c in args.cpus.split(",")]
    for c in cpus_list:
        warning = qemu.oversubscription_warning(c)
        if warning:
            print(warning, file=sys.stderr)
    print(f"# a={args.a} b={args.b} repeat={args.repeat} key={args.key}{' icount (virtual time)' if args.icount else ''}:"
          " median [min..max], b/a of the medians")
    print(f"{'scenario':45} {'cpus':>4} {'a':>24} {'b':>24} {'b/a':>6}")
    for scen in args.scenario or DEFAULT_SCENARIOS:
        for cpus in cpus_list:
            a, b = [], []
            for seed in range(1, args.repeat + 1):
                tokens = [f"seed={seed}"] + scen.split()
                a.append(measure(args.a, cpus, tokens, args.key, args.icount))
                b.append(measure(args.b, cpus, tokens, args.key, args.icount))
            print(f"{scen:45} {cpus:4d} {med(a):10.0f} [{spread(a, '{:.0f}')}] {med(b):10.0f} [{spread(b, '{:.0f}')}]"
                  f" {med(b) / med(a):6.3f}", flush=True)


if __name__ == "__main__":
    main()
