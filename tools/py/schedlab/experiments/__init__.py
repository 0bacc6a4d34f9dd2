"""``schedlab experiment NAME ...``: one-off measurements that are not headline results of the papers.

Each module is one experiment with its own ``main(argv)`` and ``--help``:

* ``ab``: two kernel builds side by side (``--icount`` counts instructions: valid on a busy host);
* ``wakecost``: where a cross-hart futex wake's time goes, from a trace;
* ``determinism``: deterministic mode across the apps and policies, and its wall-time cost;
* ``cache-corruption``: Tucker & Gupta's cache corruption with and without the machine model;
* ``model-overhead``: what the machine model costs per app;
* ``parallel-timing``: the same compare sequentially and with ``--jobs``: does side by side change the times;
* ``adaptive``: policy=adaptive against every fixed policy on named mixes (simulator or QEMU);
* ``pacing``: is a paced boot's time model time (scaling, spread under load, misses, paced against unpaced).

Timings mean something only on an idle machine with harts <= host cores (docs/design.md, "Measuring").
"""

from __future__ import annotations

import sys

from ..registry import Commands

#: The experiments, each a command of its own (registry.py): name, module, one line for ``--help``.
EXPERIMENTS = Commands(__name__)
EXPERIMENTS.delegate_all((
    ("ab", "ab", "two kernel builds side by side, booted alternately (--icount: instruction counts)"),
    ("wakecost", "wakecost", "where a cross-hart futex wake's time goes (kbench futex with a trace)"),
    ("determinism", "determinism", "deterministic mode across apps and policies: identical consoles, wall cost"),
    ("cache-corruption", "cache_corruption", "two working sets time-sliced on one hart, with and without the model"),
    ("model-overhead", "model_overhead",
     "what the machine model costs: each app with no, a zero-cost and a real model"),
    ("parallel-timing", "parallel_timing", "one compare sequential and with --jobs: the ratio of every median"),
    ("adaptive", "adaptive", "policy=adaptive against every fixed policy on named mixes (--sim or --qemu)"),
    ("pacing", "pacing", "paced harts validated: scaling, spread beside a hog, misses, paced vs unpaced ranking"),
))


def usage() -> str:
    return EXPERIMENTS.usage("schedlab experiment")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    name = argv[0].replace("_", "-")
    if name not in EXPERIMENTS:
        print(f"schedlab experiment: no experiment named {argv[0]!r}\n\n{usage()}", file=sys.stderr)
        return 2
    return EXPERIMENTS.main_of(name)(argv[1:]) or 0
