"""What a policy promises, read from a comment block of its own source file, so that no policy has to change
for the checker and one that says nothing is checked for what every policy owes (contract, progress).

A policy declares its promises in any comment of its file, as a line ``schedlab check:`` followed by one
``key value`` line each, up to a blank comment line or the comment's end::

    /*
     * schedlab check:
     *   work-conserving  yes
     *   share            tickets
     *   invariants       bound
     *   progress         8
     */

Keys (anything else is an error that names the line):

* ``work-conserving yes|no`` - no hart idles while a ready process waits past a quantum (the policy may run
  any ready process on any hart). Default no: the check says "not declared".
* ``share equal|per-hart|tickets|allotment|none`` - each job's share of hart time while all compete: equal
  among the jobs; equal among the processes that run on each hart (a policy that binds processes to harts:
  a job's share is the sum over its processes of 1 / the processes on that one's hart); in proportion to
  the per-job key ``tickets=`` (``share-key`` names another key), or in proportion to
  the harts the policy allots it (``rep`` records); or ``draws``: each dispatch is a draw among the jobs
  with a ready process then, won in proportion to their tickets - a lottery's promise, which says nothing
  of hart time when a job cannot use a hart it would win (its processes already run: battery.judge_draws).
  Default none.
* ``share-key NAME`` - the per-job key that carries a job's share under ``share tickets`` or ``draws``
  (default tickets).
* ``invariants NAME[,NAME]`` - schedule invariants judged from every trace: names of ``INVARIANTS``.
* ``progress K|none`` - a ready process waits at most K quanta per job of the mix (default 2); ``none``: the
  policy never preempts (a process keeps its hart until it blocks, yields or exits), so it promises no
  bound - the check says "not declared" and the battery leaves out the share mix, whose compute-bound jobs
  would then keep their harts for ever (battery.cases).

Where the file is: the path given, or for a policy of the tree the file under kernel/sched/ whose
``struct sched_class`` carries ``.name = "<policy>"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..qemu import REPO_ROOT, HarnessError

#: Invariant names a policy may declare, and what each says (judged in battery.py from the trace).
INVARIANTS = {
    "coscheduled": "gang: while one process of a job runs, no other of its row waits ready (outside slot "
                   "switches, after a grace of 500 us)",
    "disjoint-partitions": "between two repartitions, while no more jobs hold harts than there are harts, each "
                           "hart runs processes of one job only",
    "bound": "a process runs on one hart all its life (never migrates)",
    "job-fifo": "within a job, processes run in the order they became ready (a process ready strictly "
                "earlier than another of its job is dispatched first)",
}
SHARES = ("equal", "per-hart", "tickets", "allotment", "draws", "none")
DEFAULT_PROGRESS = 2
BLOCK = re.compile(r"^\W*schedlab check:\s*$")
LINE = re.compile(r"^\s*\*?\s*([a-z][a-z-]*)\s+(\S.*?)\s*(\*/)?\s*$")


@dataclass
class Declaration:
    policy: str
    source: Path | None
    work_conserving: bool | None = None     # None: not declared
    share: str = "none"
    share_key: str = "tickets"
    invariants: list[str] = field(default_factory=list)
    progress: int = DEFAULT_PROGRESS        # 0: none (a policy that never preempts)
    declared: bool = False                  # the file has a block at all

    def as_dict(self) -> dict:
        shown = None if self.source is None else str(self.source.relative_to(REPO_ROOT)
                                                      if self.source.is_relative_to(REPO_ROOT) else self.source)
        return {"policy": self.policy, "source": shown,
                "declared": self.declared, "work_conserving": self.work_conserving, "share": self.share,
                "share_key": self.share_key, "invariants": self.invariants, "progress": self.progress}


def policy_name(source: Path) -> str:
    """The name a policy file registers (its struct sched_class's ``.name``)."""
    text = source.read_text(errors="replace")
    found = re.search(r"struct\s+sched_class\s+\w+\s*=\s*\{[^}]*?\.name\s*=\s*\"([a-z0-9_]+)\"", text, re.S)
    if not found:
        raise HarnessError(f"{source}: no `const struct sched_class x = {{ .name = \"...\", ... }}` in it: "
                           "is it a policy file (kernel/sched/sched.h)?")
    return found.group(1)


def tree_source(policy: str) -> Path | None:
    """The file of the tree that defines policy ``policy``, or None."""
    for path in sorted((REPO_ROOT / "kernel" / "sched").rglob("*.c")):
        text = path.read_text(errors="replace")
        if "struct sched_class" in text and re.search(rf"\.name\s*=\s*\"{re.escape(policy)}\"", text):
            return path
    return None


def parse(text: str, policy: str, source: Path | None) -> Declaration:
    decl = Declaration(policy, source)
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if BLOCK.match(line)]
    if not starts:
        return decl
    decl.declared = True
    where = source or policy
    for number in range(starts[0] + 1, len(lines)):
        raw = lines[number]
        if re.match(r"^\s*\*?\s*(\*/)?\s*$", raw):
            break
        found = LINE.match(raw)
        if not found:
            raise HarnessError(f"{where}:{number + 1}: expected `key value` in the schedlab check block: {raw!r}")
        _apply(decl, found.group(1), found.group(2).split(" - ")[0].strip(), f"{where}:{number + 1}")
        if found.group(3):
            break
    return decl


def _apply(decl: Declaration, key: str, value: str, where: str) -> None:
    if key == "work-conserving":
        if value not in ("yes", "no"):
            raise HarnessError(f"{where}: work-conserving {value}: expected yes or no")
        decl.work_conserving = value == "yes"
    elif key == "share":
        if value not in SHARES:
            raise HarnessError(f"{where}: share {value}: expected one of {', '.join(SHARES)}")
        decl.share = value
    elif key == "share-key":
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", value):
            raise HarnessError(f"{where}: share-key {value}: expected a per-job key's name")
        decl.share_key = value
    elif key == "invariants":
        names = [n.strip() for n in value.split(",") if n.strip()]
        unknown = [n for n in names if n not in INVARIANTS]
        if unknown:
            raise HarnessError(f"{where}: invariant {unknown[0]!r} is not one the checker knows "
                               f"({', '.join(INVARIANTS)})")
        decl.invariants = names
    elif key == "progress" and value == "none":
        decl.progress = 0
    elif key == "progress":
        if not value.isdigit() or not 1 <= int(value) <= 1000:
            raise HarnessError(f"{where}: progress {value}: expected quanta per job, 1..1000, or none")
        decl.progress = int(value)
    else:
        raise HarnessError(f"{where}: unknown key {key!r} in the schedlab check block (work-conserving, share, "
                           "share-key, invariants, progress)")


def declaration(policy: str, source: Path | None = None) -> Declaration:
    """Policy ``policy``'s declaration, from ``source`` or the tree's file for it (none found: nothing declared)."""
    source = source or tree_source(policy)
    if source is None:
        return Declaration(policy, None)
    return parse(source.read_text(errors="replace"), policy, source)
