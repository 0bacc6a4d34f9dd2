"""Batches: several deterministic scenarios in one boot (kernel/batch.c), ``S1 then S2 then ... Sn then``.

Why. A short deterministic boot spends much of its host time outside its scenario: QEMU's start and exit, the
kernel's boot, translating the kernel's code (docs/notes/explorer.md). A campaign of thousands of boots
(``schedlab explore --batch N``) boots N scenarios of one hart count in one QEMU instead; the kernel runs them in
turn, prints ``END scenario=<k> status=<s>`` after each (s: the exit status a boot of its own would have had),
and restarts itself in between.

What a batch gives. Determinism as a whole, and for each prefix: a scenario boots alike whatever follows it, so
``line(scenarios[:k])`` replays scenario k of any longer batch byte for byte. Not the run of a
boot of its own: QEMU's clock goes on across the restarts, so a scenario's interleaving in a batch is its own.

``split`` cuts a batch's console into one ``Run`` per scenario, each judged as a boot of its own would be. A
scenario the batch did not reach - an earlier one ended QEMU (a PANIC, the watchdog, a bad scenario: the
kernel does not restart after those), or the host's time limit killed it - has none, and the caller boots it
again; the scenario that was running when QEMU ended gets QEMU's exit status (the kernel's own for those
endings) or its time-out.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .console import parse_console
from .qemu import BATCH_WORD, Run, batch_scenarios, deterministic_bootargs

END = re.compile(r"^END scenario=(\d+) status=(\d+)\r?\n", re.M)


def line(scenarios: list[str]) -> str:
    """A batch's bootargs: ``then`` after every scenario, the last too - so that a scenario's boot reads the same
    bytes up to its own ``then`` whether or not another follows (kernel/batch.c)."""
    return " ".join(f"{s} {BATCH_WORD}" for s in scenarios)


def is_batch(bootargs: str) -> bool:
    return BATCH_WORD in bootargs.split()


def on_last(bootargs: str, change) -> str:
    """bootargs with change(tokens) applied to its scenario - a batch's last one, the one its replay line is
    about (the scenarios before it replay it)."""
    if not is_batch(bootargs):
        return change(bootargs)
    scenarios = batch_scenarios(bootargs)
    return line([*scenarios[:-1], change(scenarios[-1])])


def split(run: Run, scenarios: list[str]) -> list[Run]:
    """One Run per scenario of the batch ``run`` that its console reached, in order (see the module's doc)."""
    runs, at, status = [], 0, None
    for k, found in enumerate(END.finditer(run.console)):
        if k >= len(scenarios) or int(found.group(1)) != k + 1:
            break
        status = int(found.group(2))
        runs.append(_scenario_run(run, scenarios[k], run.console[at:found.start()], status, False))
        at = found.end()
    rest = run.console[at:]
    went_on = status is None or status <= 1     # the kernel restarts only after a verdict of the jobs
    if len(runs) < len(scenarios) and went_on and (rest.strip() or run.timed_out or not runs):
        runs.append(_scenario_run(run, scenarios[len(runs)], rest, run.exit_code, run.timed_out))
    return runs


def _scenario_run(run: Run, scenario: str, text: str, status: int | None, timed_out: bool) -> Run:
    return replace(run, bootargs=deterministic_bootargs(scenario), console=text, exit_code=status,
                   timed_out=timed_out, parsed=parse_console(text, complete=not timed_out))


def last(run: Run) -> Run:
    """The Run of a batch line's last scenario (a replay line's), or ``run`` itself when it is no batch. A batch
    that ended before its last scenario gives a Run with that in an ERROR line (exit status 2)."""
    if not is_batch(run.bootargs):
        return run
    scenarios = batch_scenarios(run.bootargs)
    runs = split(run, scenarios)
    if len(runs) == len(scenarios):
        return runs[-1]
    why = (f"ERROR the batch ended in scenario {len(runs)} of {len(scenarios)}: "
           f"{runs[-1].verdict if runs else run.verdict}\n")
    return _scenario_run(run, scenarios[-1], why, 2, False)
