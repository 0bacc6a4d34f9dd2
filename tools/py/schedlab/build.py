"""What the harness builds by itself: a build output a command needs and does not find is made with ``make``.

``ensure(path, target)`` returns ``path`` when it exists; otherwise it runs ``make -s <target>`` in the
checkout (``qemu.REPO_ROOT``) and returns ``path`` once that built it, or raises a ``HarnessError`` that says
what failed and the one command to run. So ``schedlab reproduce`` or ``run --sim`` after a plain ``make``
(which builds everything the tools need) never fails for a missing simulator or host tool. Only the default
outputs are built: a path the user named (``SCHEDLAB_SIM``, ``--kernel``) is theirs to build.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .qemu import REPO_ROOT, HarnessError


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def ensure(path: Path, target: str) -> Path:
    """``path``, built with ``make -s <target>`` first if it is missing."""
    path = Path(path)
    if path.is_file():
        return path
    if not (REPO_ROOT / "Makefile").is_file():
        raise HarnessError(f"{_shown(path)} is missing and {REPO_ROOT} is not a schedlab checkout to build it in: "
                           f"run `make {target}` in one (or set SCHEDLAB_ROOT to it)")
    print(f"schedlab: {_shown(path)} is missing: building it with `make -s {target}`", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(["make", "-s", target], cwd=REPO_ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, check=False)
    except FileNotFoundError:
        raise HarnessError(f"{_shown(path)} is missing and make is not installed: run `make deps`, then "
                           f"`make {target}`") from None
    if done.returncode != 0 or not path.is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise HarnessError(f"{_shown(path)} is missing and `make -s {target}` did not build it "
                           f"(exit {done.returncode}):\n{tail}\nfix that, then run `make {target}`")
    return path
