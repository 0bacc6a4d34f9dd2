"""Record the consoles tests/test_harness.py replays: boot the real kernel once per scenario below.

tests/test_harness.py tests the harness against a fake QEMU that prints a saved console.  Those
consoles are recorded from real boots (this script), so when the kernel's console format moves
(the BOOT keys, job ids, the trace dump, the ``[<job>] `` prefix of a job's output) the recordings
are regenerated and the harness tests see the new format, or fail where the harness no longer
understands it.

    make && schedlab record-consoles          # rewrites tests/data/consoles/*

Each recording is ``<name>.console`` (QEMU's stdout, byte for byte) and an entry in ``index.json``:
the cpus, the bootargs and QEMU's exit status.  Boots run one at a time; the whole set takes a
few seconds.  Recordings are small (a few KB): keep the scenarios tiny.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from .qemu import REPO_ROOT as ROOT, qemu_argv

OUT = ROOT / "tests" / "data" / "consoles"

#: name -> (cpus, bootargs, what the tests use it for)
SCENARIOS = {
    "gang-trace": (2, "policy=gang trace=on timeout=60s job=gauss:n=32,procs=2 job=hog:procs=2",
                   "a clean two-job run with a trace dump and a background job"),
    "job-error": (1, "timeout=60s job=gauss:n=16,variant=fine,sched=ss",
                  "a job that dies with its own ERROR line ([<job>] prefix) and check=FAIL"),
    "bad-token": (1, "x=1", "a scenario the kernel refuses"),
    "unknown-app": (1, "job=gaus", "a job of an app the kernel does not have"),
}


def record(name: str, cpus: int, bootargs: str) -> dict:
    done = subprocess.run(qemu_argv(cpus, bootargs), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          timeout=120, check=False)
    (OUT / f"{name}.console").write_bytes(done.stdout)
    return {"cpus": cpus, "bootargs": bootargs, "exit": done.returncode}


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="schedlab record-consoles", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    index = {}
    for name, (cpus, bootargs, why) in SCENARIOS.items():
        index[name] = {**record(name, cpus, bootargs), "why": why}
        print(f"{name}: exit {index[name]['exit']}, "
              f"{(OUT / f'{name}.console').stat().st_size} bytes", file=sys.stderr)
    (OUT / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
