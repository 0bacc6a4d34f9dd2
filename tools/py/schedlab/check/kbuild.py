"""The kernel and simulator a check boots: the tree's policies plus the checked file, built elsewhere so the
tree is never edited and build/kernel.elf is never touched.

``make B=build/check/<name> KCHECKS=1 EXTRA_POLICIES=<file>`` builds a checked kernel (the policy contract
and lock order asserted, kernel/sched/hooks.h) and ``make SIM_OUT=build/check/<name>/sim EXTRA_POLICIES=<file>``
its simulator, both started from the main build's objects so only what differs is compiled. A policy of the
tree (a name, not a file) is checked in build/check/tree, a checked kernel with no extra file. A simulator
that fails to build is not an error: the simulator's topologies then say "not run" and why.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..qemu import REPO_ROOT, HarnessError
from . import declare

#: What a build elsewhere starts from (the main build's objects; the apps' blob names its own directory).
SEED = {"kernel": ("kernel", "u", "apps"), "sim": ("obj",)}


@dataclass
class Target:
    policy: str
    source: Path | None             # the checked file, None for a policy of the tree
    kernel: Path
    sim: Path | None                # None: the simulator could not be built with it
    sim_problem: str = ""

    def check_arg(self) -> str:
        """How the command line named it (for replay lines)."""
        return _shown(self.source) if self.source else self.policy


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def _seed(out: Path, base: Path, parts) -> None:
    for part in parts:
        if (base / part).is_dir() and not (out / part).exists():
            shutil.copytree(base / part, out / part, symlinks=True, ignore=shutil.ignore_patterns("apps_blob.*"))


def _make(args: list[str], what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["make", "-s", "--no-print-directory", *args], cwd=REPO_ROOT, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=1800)
    except FileNotFoundError:
        raise HarnessError(f"make is not installed: run `make deps` before checking {what}") from None


def resolve(arg: str) -> tuple[str, Path | None]:
    """(policy name, its file or None for a policy of the tree) from the command line's POLICY_FILE_OR_NAME."""
    path = Path(arg)
    if arg.endswith(".c") or path.is_file():
        if not path.is_file():
            raise HarnessError(f"{arg}: no such policy file")
        path = path.resolve()
        name = declare.policy_name(path)
        twin = declare.tree_source(name)
        if twin is not None and twin.resolve() != path:
            raise HarnessError(f"{arg} registers policy '{name}', which {_shown(twin)} already defines: rename "
                               "it (its .name and its struct) to check it beside the tree's")
        return name, (None if twin is not None else path)
    if declare.tree_source(arg) is None:
        raise HarnessError(f"no policy '{arg}' in kernel/sched/: give a policy file (path ending .c) or the name "
                           "of one of the tree's policies")
    return arg, None


def _seed_base() -> Path:
    """Where a new build starts from: a checked build's objects if there is one (the main build when make
    test made it, KCHECKS=1; else build/check/tree), so only the policy file compiles."""
    main = REPO_ROOT / "build"
    stamp = main / "kernel" / "kchecks.stamp"
    tree = main / "check" / "tree"
    if not (stamp.is_file() and stamp.read_text().strip() == "1") and (tree / "kernel.elf").is_file():
        return tree
    return main


def out_dir(policy: str, source: Path | None) -> Path:
    """build/check/tree for the tree's policies; for a file, build/check/<stem>-<hash of its path> (two files
    of one name - a skeleton and its solution - never share a build)."""
    if source is None:
        return REPO_ROOT / "build" / "check" / "tree"
    return REPO_ROOT / "build" / "check" / f"{source.stem}-{hashlib.sha1(str(source).encode()).hexdigest()[:8]}"


def build(arg: str, quiet: bool = False, sim: bool = True) -> Target:
    """Build (or find up to date) the kernel and, with ``sim``, the simulator that carry policy ``arg``."""
    policy, source = resolve(arg)
    return build_many([(policy, source)], out_dir(policy, source), quiet, sim)[policy]


def build_many(policies: list[tuple[str, Path | None]], out: Path, quiet: bool = False,
               sim: bool = True) -> dict[str, Target]:
    """One kernel (and simulator) with several policy files, each of its own name: policy -> its Target.
    Graders and tests that check several files at once build once."""
    files = [_shown(s) for _, s in policies if s is not None]
    extra = [f"EXTRA_POLICIES={' '.join(files)}"]
    what = ", ".join(p for p, _ in policies)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # two checks of one file take turns
        if not quiet:
            print(f"check: building {what} into {_shown(out)} (KCHECKS=1)", file=sys.stderr, flush=True)
        _seed(out, _seed_base(), SEED["kernel"])
        done = _make([f"B={_shown(out)}", "KCHECKS=1", *extra, f"{_shown(out)}/kernel.elf"], what)
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-20:])
            raise HarnessError(f"the kernel with {what} did not build:\n{tail}")
        tree_only = not files
        binary, problem = _build_sim(out, extra, what, tree_only) if sim else (None, "not asked for")
    return {p: Target(p, s, out / "kernel.elf", binary, problem) for p, s in policies}


def _build_sim(out: Path, extra: list[str], policy: str, tree_only: bool) -> tuple[Path | None, str]:
    binary = out / "sim" / "schedlab-sim"
    _seed(out / "sim", REPO_ROOT / "build" / "sim", SEED["sim"])
    made = _make([f"SIM_OUT={_shown(out)}/sim", *extra, f"{_shown(out)}/sim/schedlab-sim"], policy)
    if made.returncode == 0 and binary.is_file():
        return binary, ""
    main_sim = REPO_ROOT / "build" / "sim" / "schedlab-sim"
    if tree_only and main_sim.is_file():     # the tree's policies: the main build's simulator has them
        return main_sim, ""
    last = ((made.stderr or made.stdout).strip().splitlines() or ["?"])[-1][:200]
    return None, f"the simulator did not build with it: {last}"
