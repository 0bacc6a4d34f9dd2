"""The scenario language's key table, as the kernel's parser declares it (kernel/scenario.h, ``KEY`` lines).

Every key the scenario language takes is a row of one of the parser's tables, printed as one line each:

    KEY scope=<scope> name=<name> values=<values> [range=<min>..<max>] default=<default> help=<one line>

``scope`` is ``setting`` (a global setting), ``job`` (a key every job has), ``option:<policy>`` and
``jobkey:<policy>`` (a policy's options and per-job keys), ``app`` (an app itself: ``values`` its flags,
``help`` its about line) or ``app:<app>`` (an app's own keys); ``KEY end`` closes the table. Two sources print
it: a host build of the parser (``build/scenario-keys.txt``, made by ``make``: the settings and the job keys,
which every build shares) and a listing boot (``list=keys``: the whole table of that kernel, its policies and
apps included). The harness takes its settings from the first (``settings()``) instead of keeping a copy, and
tools/docs/reference.py the reference from the second.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass
from pathlib import Path

from . import build
from .qemu import REPO_ROOT, HarnessError

#: The host build's table (the Makefile's $(B)/scenario-keys.txt).
HOST_TABLE = REPO_ROOT / "build" / "scenario-keys.txt"
_FIELD = re.compile(r"(\w+)=(\S*)\s*")
_FIELDS = ("scope", "name", "values", "range", "default")


@dataclass(frozen=True)
class Key:
    """One row of the key table."""

    scope: str
    name: str
    values: str
    default: str
    help: str
    range: tuple[str, str] | None = None


def parse(text: str, where: str = "the key table") -> list[Key]:
    """The KEY lines of ``text`` (other lines are skipped). A table without its ``KEY end`` (a cut console) or
    with a line that is not a KEY row is an error naming the line: the reference is never made from half of it."""
    keys, ended = [], False
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith("KEY "):
            continue
        if line == "KEY end":
            ended = True
            break
        head, sep, help_text = line[4:].partition("help=")
        fields = dict(_FIELD.findall(head))
        if not sep or _FIELD.sub("", head).strip() or not {"scope", "name", "values", "default"} <= fields.keys() \
                or set(fields) - set(_FIELDS):
            raise HarnessError(f"{where}, line {number}: not a KEY row (KEY scope= name= values= default= help=): "
                               f"{line[:120]!r}")
        lo, dots, hi = fields.get("range", "").partition("..")
        keys.append(Key(fields["scope"], fields["name"], fields["values"], fields["default"], help_text.strip(),
                        (lo, hi) if dots else None))
    if not ended:
        raise HarnessError(f"{where} ends before its 'KEY end' line: cut short, or not a key table")
    if not keys:
        raise HarnessError(f"{where} has no KEY rows")
    return keys


def host_table(path: Path = HOST_TABLE) -> list[Key]:
    """The host build's table (settings and job keys), built with make if it is missing."""
    path = build.ensure(path, "build/scenario-keys.txt" if path == HOST_TABLE else str(path))
    return parse(path.read_text(encoding="utf-8", errors="replace"), str(path))


class _Settings(Set):
    """The names of the global settings, read from the host table the first time they are asked for (so that
    importing the harness neither reads nor builds anything)."""

    _names: frozenset | None = None

    def _load(self) -> frozenset:
        if self._names is None:
            self._names = frozenset(k.name for k in host_table() if k.scope == "setting" and k.name != "job")
        return self._names

    @classmethod
    def _from_iterable(cls, it):
        return frozenset(it)

    def __contains__(self, name) -> bool:
        return name in self._load()

    def __iter__(self):
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"settings({sorted(self._load())})"


#: Settings every policy takes (not ``job=``): any other key=value of a scenario is some policy's own option.
SETTINGS = _Settings()
