"""The Python API for notebooks: ``schedlab.run`` and ``schedlab.compare`` (see the package's docstring).

Both call the harness's core (core.py) with checked arguments, as the commands do with theirs: ``run`` boots
once through the executor (QEMU, or the simulator with ``sim=True``; the busy-host check included) and returns
the parsed ``Run``; ``compare`` makes ``core.compare``'s boots and returns its records (``Record``: a dict
with declared keys), one per policy and job, each with the busy-host verdict and calibration card of the boots it is computed from. No argv, no
command, no file in between.

Errors, one contract for both: what a user must fix raises ``HarnessError`` with one line saying what -
an argument of the wrong type or range, no kernel, a bad ``model=``, an unknown policy, a mix without a
foreground job, and a scenario the kernel refuses (its tokens: BOOT never printed, exit status 2) - before
anything else boots where it can be known then. A boot that ran and failed is a result: ``run`` returns it
(``Run.ok`` False, its ``exit_code``), ``compare`` raises for it only without ``keep_going``.

Which tree: both boot the build of the checkout this package belongs to (``qemu.REPO_ROOT``). Called from
inside another checkout (an editable install made elsewhere), they warn once, naming both trees.

Threads: both may be called from several threads at once (the core keeps no state between calls); boots
run where the current executor runs them (``with executor.use(executor.Local(4)):``).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from . import core, inputs, model_limits
from .qemu import DEFAULT_TIMEOUT, REPO_ROOT, HarnessError, Run
from .scenario import scenario_from_args


def _checkout_of(path: Path) -> Path | None:
    """The schedlab checkout ``path`` is in (the nearest folder with tools/py/schedlab and a Makefile), or None."""
    for folder in (path, *path.parents):
        if (folder / "tools" / "py" / "schedlab" / "__init__.py").is_file() and (folder / "Makefile").is_file():
            return folder
    return None


def _say_which_tree() -> None:
    """Warn when the caller works in another checkout than the one this package runs (its editable install)."""
    here = _checkout_of(Path.cwd().resolve())
    if here is not None and here != REPO_ROOT.resolve():
        warnings.warn(f"schedlab runs the tree {REPO_ROOT} (where it was installed from), not the checkout "
                      f"{here} you are in: `pip install -e {here}` to use that one, or set SCHEDLAB_ROOT",
                      stacklevel=3)


def _words(tokens, name: str = "tokens") -> list[str]:
    """Scenario tokens from a string or a list/tuple of strings."""
    if isinstance(tokens, str):
        return tokens.split()
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise HarnessError(f"{name}={tokens!r}: expected a string of tokens or a list of strings")
    return [w for t in tokens for w in t.split()]


def _int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, str):          # the API takes numbers as numbers ("2" is a slip, not 2)
        raise HarnessError(f"{name}={value!r}: expected a whole number (int), got str")
    return inputs.whole_number(name, value, low, high, "harts" if name == "cpus" else "")


def _flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise HarnessError(f"{name}={value!r}: expected True or False")
    return value


def _timeout(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise HarnessError(f"timeout={value!r}: expected a positive number of seconds")
    return float(value)


def _path(name: str, value):
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise HarnessError(f"{name}={value!r}: expected a path (str or Path) or None")
    return value


def _policies(value) -> str | None:
    """None, or the policies as "p1,p2": a non-empty list of names or a non-empty "p1,p2"."""
    if value is None:
        return None
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise HarnessError(f"policies={value!r}: expected a list of policy names, \"p1,p2\" or None (every policy)")
    if not names or any(not n or "," in n or n != n.strip() or not n.isascii() for n in names):
        raise HarnessError(f"policies={value!r}: expected policy names (no empty or blank one); None compares "
                           "every policy")
    return ",".join(names)


def run(tokens, cpus: int = 2, *, kernel: str | Path | None = None, sim: bool = False,
        deterministic: bool = False, model: str | None = None, timeout: float = DEFAULT_TIMEOUT,
        qemu_extra: str | list[str] = ()) -> Run:
    """Boot one scenario and return the parsed run.

    ``tokens``: bootargs as a string or a list (``"policy=gang job=gauss:n=64"``), or a scenario file's name
    followed by tokens (``"default-mix seed=3"``), as ``schedlab run`` takes them. ``cpus``: harts;
    ``kernel``: another build's ELF (default build/kernel.elf); ``sim``: the simulator instead of QEMU
    (built with make when missing); ``deterministic``: clock=virtual under QEMU -icount; ``model``: a machine
    model spec (``"iris"``, ``"modern,l2_kb=512"``). The ``Run`` has ``.results`` (one dict per RESULT line,
    numbers typed), ``.summary``, ``.boot``, ``.calib``, ``.errors``, ``.output`` (each job's own lines),
    ``.ok``, ``.exit_code`` and ``.console`` (the raw text); a failed boot is returned, not raised.
    """
    _say_which_tree()
    cpus = _int("cpus", cpus, 1, inputs.MAX_CPUS)
    if _flag("sim", sim) and _flag("deterministic", deterministic):
        raise HarnessError("deterministic picks how QEMU runs; sim boots no QEMU: use one of them")
    scenario = scenario_from_args(_words(tokens))
    settings = _settings(kernel, sim, model, timeout, deterministic=deterministic, qemu_extra=qemu_extra)
    result = core.boot(core.prepare(settings, cpus, scenario.tokens), cpus, scenario.tokens)
    refused = _refused(result)
    if refused:
        raise HarnessError(refused)
    return result


def _settings(kernel, sim: bool, model, timeout, deterministic: bool = False, qemu_extra=()) -> core.Settings:
    """The boots' settings from checked arguments (the model spec parsed here, once)."""
    model_limits.check_spec_text(model)
    return core.Settings(kernel=_path("kernel", kernel), sim=sim, deterministic=deterministic, model=model,
                         timeout=_timeout(timeout), qemu_extra=tuple(inputs.qemu_extra(qemu_extra)))


def _refused(run: Run) -> str | None:
    """The kernel's refusal of the scenario itself (exit status 2 before BOOT: a token it does not take), else
    None: a user's mistake, raised like the harness's own refusals."""
    if run.exit_code != 2 or run.boot is not None or run.timed_out:
        return None
    return "the kernel refused the scenario: " + " ".join(core.failure_report(run).split("\n")[1:3]).strip()


def compare(tokens=None, cpus: int = 2, *, policies: list[str] | str | None = None, repeat: int = 3,
            quantum: str | None = None, same_seed: bool = False, kernel: str | Path | None = None,
            sim: bool = False, model: str | None = None, timeout: float = DEFAULT_TIMEOUT,
            keep_going: bool = False, quiet: bool = True) -> list[core.Record]:
    """Run each foreground job alone and the mix under each policy (``schedlab compare``); return one record
    per policy and job of the mix, best policy first as the command ranks them.

    ``tokens``: the mix (default: the command's, gauss + oddeven), as for ``run``; ``policies``: a list or
    "p1,p2" (default: every policy the kernel has); ``repeat``: boots per configuration, repeat r with seed
    base + r unless ``same_seed``. Each record has ``policy``, ``job`` (its place in the mix, from 1),
    ``app``, ``token``, ``background``, the medians ``alone_us``, ``mix_us`` and ``slowdown`` (mix / alone,
    per repeat) each with ``_min``, ``_max``, ``_ci_low`` and ``_ci_high`` (the median's 95 % bootstrap
    interval, None with one repeat), ``makespan_us`` of the mix and the policy's ``mean_slowdown``; and how far
    to trust it: ``boots`` (the boots it is computed from, alone and mix), ``busy_boots`` and ``busy`` (of
    those, flagged by the busy-host check: their times are noisy), ``model`` (the canonical machine model) and
    ``calib`` (the first boot's calibration card). Without ``quiet`` each boot's progress and the notes go to
    stderr. A failed boot raises ``HarnessError`` unless ``keep_going``.
    """
    _say_which_tree()
    scenario, cpus, repeat, listed, settings = _compare_args(tokens, cpus, policies, repeat, quantum, same_seed,
                                                             kernel, sim, model, timeout, keep_going, quiet)
    say = _quiet if quiet else _note
    settings = core.prepare(settings, cpus, scenario.tokens, say=say)
    result = core.compare(settings, scenario.tokens, cpus, repeat, listed, quantum,
                          same_seed, keep_going, say=say, on_boot=None if quiet else _progress)
    if result.failures and not (keep_going and result.outcomes):
        raise HarnessError(f"compare: {len(result.failures)} boot(s) failed; the first:\n"
                           + (core.unreadable(result.failures[0]) or core.failure_report(result.failures[0])))
    return result.records()


def _compare_args(tokens, cpus, policies, repeat, quantum, same_seed, kernel, sim, model, timeout, keep_going,
                  quiet) -> tuple:
    """compare's arguments checked (HarnessError naming the first wrong one): (scenario, cpus, repeat, the
    policies or None, settings)."""
    if tokens is not None and not _words(tokens):
        raise HarnessError(f"tokens={tokens!r}: an empty mix; give jobs (\"job=gauss job=oddeven\") or None for "
                           "the default mix")
    cpus, repeat = _int("cpus", cpus, 1, inputs.MAX_CPUS), _int("repeat", repeat, 1, inputs.MAX_REPEAT)
    for name, value in (("same_seed", same_seed), ("sim", sim), ("keep_going", keep_going), ("quiet", quiet)):
        _flag(name, value)
    if quantum is not None and (not isinstance(quantum, str) or not quantum or not quantum.isascii()
                                or any(c.isspace() for c in quantum)):
        raise HarnessError(f"quantum={quantum!r}: expected a string such as \"5ms\" or None")
    listed = _policies(policies)
    scenario = scenario_from_args(_words(tokens or []), default_tokens=list(core.DEFAULT_MIX))
    return (scenario, cpus, repeat, listed.split(",") if listed else None,
            _settings(kernel, sim, model, timeout))


def _quiet(message: str) -> None:
    """quiet: notes are not printed."""


def _note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _progress(number: int, total: int, trial, run: Run) -> None:
    _note(f"[{number}/{total}] {trial.describe()}: {run.verdict} ({run.seconds:.1f} s)")
