"""The command line's registry (tools/py/schedlab/registry.py): every command registered one way, in one table
per command group; ``schedlab experiment``'s measurements are commands of that kind, and reproduce's results are
*sections*, a word of their own. Nothing here boots."""

import argparse

import pytest

from schedlab import cli, experiments, registry
from schedlab import reproduce as rp


def _subcommands(parser: argparse.ArgumentParser) -> dict:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_the_parser_is_the_table_in_its_order():
    """--help lists exactly the registered commands, in order; a parsed command's options come from its table
    entry, a delegated one is listed only (its module parses its own arguments)."""
    parsed = _subcommands(cli.build_parser())
    assert list(parsed) == [c.name for c in cli.COMMANDS]
    for command in cli.COMMANDS:
        if command.delegated:
            assert callable(cli.COMMANDS.main_of(command.name)), command.name
        else:
            assert parsed[command.name].get_default("func") is command.run
    assert cli.DELEGATED == {c.name: (c.module, c.about) for c in cli.COMMANDS if c.delegated}


def test_a_command_is_registered_once_and_one_way():
    table = registry.Commands("schedlab")
    table.delegate("x", "bench", "one")
    with pytest.raises(ValueError, match="two commands named 'x'"):
        table.delegate("x", "bench", "again")
    with pytest.raises(ValueError, match="not both"):
        table.add(registry.Command("y", "both", module="bench", run=lambda args: 0))


def test_experiments_are_commands_of_the_same_kind(capsys):
    assert isinstance(experiments.EXPERIMENTS, registry.Commands)
    assert all(c.delegated for c in experiments.EXPERIMENTS)
    assert experiments.main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {c.name} " in listed for c in experiments.EXPERIMENTS)
    assert experiments.main(["no-such"]) == 2 and "no experiment named 'no-such'" in capsys.readouterr().err


def test_reproduce_registers_sections_not_experiments():
    """One word per thing: reproduce's results are sections (``@section``, ``SECTIONS``); "experiment" is
    ``schedlab experiment``'s."""
    assert not hasattr(rp, "experiment") and not hasattr(rp, "EXPERIMENTS")
    specs = rp.load_all()
    assert specs and all(isinstance(s, rp.SectionSpec) for s in specs)
    assert [s.name for s in specs] == [s.name for s in sorted(rp.SECTIONS.values(), key=lambda s: (s.order, s.name))]
