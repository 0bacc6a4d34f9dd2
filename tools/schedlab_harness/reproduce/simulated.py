"""The 16-processor results in the simulator (issue 15): tools/sim/reproduce.py writes docs/sim-16.md and
its plots; this section runs it and points there, so `reproduce` regenerates every number in docs/."""

from __future__ import annotations

import importlib.util

from . import REPO, ReproError, Row, Section, experiment


def _sim_reproduce():
    path = REPO / "tools" / "sim" / "reproduce.py"
    spec = importlib.util.spec_from_file_location("sim_reproduce", path)
    if spec is None or spec.loader is None:
        raise ReproError(f"{path} is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@experiment("simulated-16", "The 16-processor results, simulated", order=90, quick_seconds=15, full_seconds=30)
def simulated(ctx) -> Section:
    if not (REPO / "build" / "sim" / "schedlab-sim").is_file():
        raise ReproError("build/sim/schedlab-sim is missing: run `make sim`")
    doc = _sim_reproduce().reproduce(ctx.out)
    return Section("simulated-16", "The 16-processor results, simulated", "every paper's 16-processor claims",
                   "`tools/sim/reproduce.py` (the kernel's policy code on simulated harts)",
                   [Row("see docs/sim-16.md", "-", "-", "simulated", "not on this machine",
                        "16 processors need the simulator; its validation against QEMU is in docs/sim-validation.md")],
                   f"Written to {doc.relative_to(ctx.out) if doc.is_relative_to(ctx.out) else doc}: the paper, the "
                   "model and the simulator side by side for Markatos 3.5.1-3.5.3 at 16, the deprivation "
                   "experiments, the tree and combination barriers, and Feitelson's experiment 4.")
