"""The Python API for notebooks: ``schedlab.run`` and ``schedlab.compare`` (see the package's docstring).

Both are the commands themselves, called with arguments instead of a command line: ``run`` boots through
the same path as ``schedlab run`` (QEMU, or the simulator with ``sim=True``; the busy-host check included)
and returns the parsed ``Run``; ``compare`` runs ``schedlab compare`` and returns its table as records, one
dict per policy and job. Errors a user must fix (no kernel, a bad ``model=``, an unknown policy) raise
``HarnessError`` with the command's message; so does an argument of the wrong type or range, before anything
boots (one line naming the argument and what it takes).

Threads: ``run`` may be called from several threads at once. ``compare`` calls are serialized (one runs at a
time; the others wait for it), and ``quiet`` silences only the calling thread's output: other threads' prints
reach the real stdout/stderr, which are back in place when it returns.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import threading
from argparse import Namespace
from pathlib import Path

from . import cli, commands, inputs, model_limits
from .qemu import DEFAULT_TIMEOUT, HarnessError, Run
from .scenario import scenario_from_args

#: One compare at a time: the command's executor stack and output are the process's.
_COMPARING = threading.Lock()


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
    cpus = _int("cpus", cpus, 1, inputs.MAX_CPUS)
    if _flag("sim", sim) and _flag("deterministic", deterministic):
        raise HarnessError("deterministic picks how QEMU runs; sim boots no QEMU: use one of them")
    scenario = scenario_from_args(_words(tokens))
    args = Namespace(kernel=_path("kernel", kernel), sim=sim, deterministic=deterministic, model=model,
                     timeout=_timeout(timeout), qemu_extra=inputs.qemu_extra(qemu_extra) or None)
    commands._check_model(args, cpus, scenario.tokens)
    return commands._boot(args, cpus, scenario.tokens)


def _flat(prefix: str, spread: dict | None) -> dict:
    """A spread ({median, min, max, n, ci_low, ci_high}) as prefix=median, prefix_min, prefix_max, ..."""
    spread = spread or {}
    return {prefix: spread.get("median"), **{f"{prefix}_{k}": spread.get(k) for k in ("min", "max", "ci_low",
                                                                                        "ci_high")}}


def compare(tokens=None, cpus: int = 2, *, policies: list[str] | str | None = None, repeat: int = 3,
            quantum: str | None = None, same_seed: bool = False, kernel: str | Path | None = None,
            sim: bool = False, model: str | None = None, timeout: float = DEFAULT_TIMEOUT,
            keep_going: bool = False, quiet: bool = True) -> list[dict]:
    """Run each foreground job alone and the mix under each policy (``schedlab compare``); return one record
    per policy and job of the mix, best policy first as the command ranks them.

    ``tokens``: the mix (default: the command's, gauss + oddeven), as for ``run``; ``policies``: a list or
    "p1,p2" (default: every policy the kernel has); ``repeat``: boots per configuration, repeat r with seed
    base + r unless ``same_seed``. Each record has ``policy``, ``job`` (its place in the mix, from 1),
    ``app``, ``token``, ``background``, the medians ``alone_us``, ``mix_us`` and ``slowdown`` (mix / alone,
    per repeat) each with ``_min``, ``_max``, ``_ci_low`` and ``_ci_high`` (the median's 95 % bootstrap
    interval, None with one repeat), ``makespan_us`` of the mix and the policy's ``mean_slowdown``. With
    ``quiet`` the command's table and progress are not printed. A failed boot raises ``HarnessError``
    unless ``keep_going``.
    """
    argv = _compare_argv(tokens, cpus, policies, repeat, quantum, same_seed, kernel, sim, model, timeout,
                         keep_going, quiet)
    with _COMPARING, tempfile.TemporaryDirectory(prefix="schedlab-compare-") as tmp:
        out = Path(tmp) / "compare.json"
        said = io.StringIO()
        with _only_this_thread(said) if quiet else contextlib.nullcontext():
            try:
                status = cli.main(argv[:-1] + ["--json", str(out), "--allow-busy"] + argv[-1])
            except SystemExit as exc:       # argparse refused an argument
                status = exc.code
        if status not in (commands.EXIT_OK, commands.EXIT_FAILED) or not out.is_file() or (
                status == commands.EXIT_FAILED and not keep_going):
            raise HarnessError(f"schedlab compare failed (exit {status}): {said.getvalue().strip()[-2000:]}")
        document = json.loads(out.read_text())
    return _rows(document["comparison"], cpus, repeat)


def _compare_argv(tokens, cpus, policies, repeat, quantum, same_seed, kernel, sim, model, timeout, keep_going,
                  quiet) -> list:
    """compare's command line from checked arguments; its last item is the list of scenario tokens."""
    if tokens is not None and not _words(tokens):
        raise HarnessError(f"tokens={tokens!r}: an empty mix; give jobs (\"job=gauss job=oddeven\") or None for "
                           "the default mix")
    cpus, repeat = _int("cpus", cpus, 1, inputs.MAX_CPUS), _int("repeat", repeat, 1, inputs.MAX_REPEAT)
    for name, value in (("same_seed", same_seed), ("sim", sim), ("keep_going", keep_going), ("quiet", quiet)):
        _flag(name, value)
    if quantum is not None and (not isinstance(quantum, str) or not quantum or not quantum.isascii()
                                or any(c.isspace() for c in quantum)):
        raise HarnessError(f"quantum={quantum!r}: expected a string such as \"5ms\" or None")
    model_limits.check_spec_text(model)
    argv = ["compare", "--cpus", str(cpus), "--repeat", str(repeat), "--timeout", repr(_timeout(timeout))]
    listed = _policies(policies)
    argv += ["--policies", listed] if listed else []
    argv += (["--quantum", quantum] if quantum else []) + (["--kernel", str(_path("kernel", kernel))] if kernel
                                                             else [])
    argv += (["--model", model] if model else []) + (["--sim"] if sim else [])
    argv += (["--same-seed"] if same_seed else []) + (["--keep-going"] if keep_going else [])
    return argv + [_words(tokens or [])]


class _Router:
    """A stream that sends the writes of the threads in ``quiet`` to their buffer, the rest to ``real``."""

    def __init__(self, real, quiet: dict):
        self.real, self.quiet = real, quiet

    def write(self, text):
        sink = self.quiet.get(threading.get_ident(), self.real)
        return sink.write(text)

    def flush(self):
        self.real.flush()

    def __getattr__(self, name):        # encoding, isatty, fileno...: the real stream's
        return getattr(self.real, name)


@contextlib.contextmanager
def _only_this_thread(buffer: io.StringIO):
    """Inside: this thread's stdout and stderr go to ``buffer``; other threads' to the real streams, which
    are put back when it ends (callers hold _COMPARING, so these blocks never overlap)."""
    real = sys.stdout, sys.stderr
    quiet = {threading.get_ident(): buffer}
    sys.stdout, sys.stderr = _Router(real[0], quiet), _Router(real[1], quiet)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = real


def _rows(comparison: dict, cpus: int, repeat: int) -> list[dict]:
    """The command's comparison as records, best policy first."""
    order = {p: i for i, p in enumerate(comparison["ranking"])}
    rows = []
    for outcome in sorted(comparison["policies"], key=lambda o: order.get(o["policy"], len(order))):
        for job in outcome["jobs"]:
            rows.append({"policy": outcome["policy"], "job": job["job"], "app": job["app"], "token": job["token"],
                         "background": job["background"], **_flat("alone_us", job["alone_us"]),
                         **_flat("mix_us", job["mix_us"]), **_flat("slowdown", job["slowdown"]),
                         "makespan_us": (outcome["makespan_us"] or {}).get("median"),
                         "mean_slowdown": outcome["mean_slowdown"], "cpus": cpus, "repeat": repeat})
    return rows
