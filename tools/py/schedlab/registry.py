"""One way to register a command: a ``Command`` added to a ``Commands`` table.

A command is either *parsed* - the table's parser gives it its arguments (``options(parser)`` adds them) and
calls ``run(args)`` - or *delegated* - a module of the package with its own ``main(argv)`` and ``--help``
(``module``), handed the command line's remaining words. ``schedlab``'s commands are one table (cli.py
``COMMANDS``); ``schedlab experiment``'s one-off measurements are another (experiments/ ``EXPERIMENTS``), of
delegated commands only. (``schedlab reproduce``'s *sections* are not commands: each registers with
``reproduce.section``.)
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Callable, Iterator


@dataclass(frozen=True)
class Command:
    name: str
    about: str                                           # one line for --help
    module: str | None = None                            # delegated: its module (relative to the table's package)
    run: Callable[[argparse.Namespace], int] | None = None   # parsed: called with the parsed arguments
    options: Callable[[argparse.ArgumentParser], None] | None = None     # parsed: adds its arguments
    epilog: str | Callable[[], str] | None = None        # parsed: below its --help (a callable: computed then)
    raw: bool = False                                    # parsed: the epilog keeps its line breaks

    @property
    def delegated(self) -> bool:
        return self.module is not None


class Commands:
    """A table of commands, in the order they were added (their order in --help)."""

    def __init__(self, package: str):
        self.package = package
        self._table: dict[str, Command] = {}

    def add(self, command: Command) -> Command:
        if command.name in self._table:
            raise ValueError(f"two commands named {command.name!r}")
        if command.delegated == (command.run is not None):
            raise ValueError(f"command {command.name!r}: give a module (delegated) or run (parsed), not both")
        self._table[command.name] = command
        return command

    def command(self, name: str, about: str, run: Callable[[argparse.Namespace], int],
                epilog: str | Callable[[], str] | None = None, raw: bool = False):
        """Register a parsed command whose arguments the decorated ``options(parser)`` adds."""
        def register(options):
            self.add(Command(name, about, run=run, options=options, epilog=epilog, raw=raw))
            return options
        return register

    def delegate(self, name: str, module: str, about: str) -> Command:
        """Register a delegated command: ``module`` has its own ``main(argv)`` and ``--help``."""
        return self.add(Command(name, about, module=module))

    def delegate_all(self, rows) -> None:
        """``delegate`` for each (name, module, about) row, in order."""
        for name, module, about in rows:
            self.delegate(name, module, about)

    def __contains__(self, name: str) -> bool:
        return name in self._table

    def __getitem__(self, name: str) -> Command:
        return self._table[name]

    def __iter__(self) -> Iterator[Command]:
        return iter(self._table.values())

    def main_of(self, name: str) -> Callable[[list[str]], int | None]:
        """A delegated command's ``main``."""
        return importlib.import_module(f"{self.package}.{self[name].module}").main

    def add_to(self, sub) -> None:
        """Every command as a subparser of ``sub`` (argparse's add_subparsers): a parsed one with its options and
        ``func``; a delegated one listed for --help only (its module parses its own arguments)."""
        for c in self:
            if c.delegated:
                sub.add_parser(c.name, help=c.about, add_help=False)
                continue
            parser = sub.add_parser(c.name, help=c.about, epilog=c.epilog() if callable(c.epilog) else c.epilog,
                                    formatter_class=argparse.RawDescriptionHelpFormatter if c.raw
                                    else argparse.HelpFormatter)
            c.options(parser)
            parser.set_defaults(func=c.run)

    def usage(self, prog: str) -> str:
        """A listing of the commands for ``prog NAME --help``."""
        width = max((len(c.name) for c in self), default=0)
        return (f"usage: {prog} NAME [ARGS...]   ({prog} NAME --help for its options)\n\n"
                + "\n".join(f"  {c.name:<{width}}  {c.about}" for c in self))
