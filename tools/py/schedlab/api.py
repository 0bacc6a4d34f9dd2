"""The Python API for notebooks: ``schedlab.run`` and ``schedlab.compare`` (see the package's docstring).

Both are the commands themselves, called with arguments instead of a command line: ``run`` boots through
the same path as ``schedlab run`` (QEMU, or the simulator with ``sim=True``; the busy-host check included)
and returns the parsed ``Run``; ``compare`` runs ``schedlab compare`` and returns its table as records, one
dict per policy and job. Errors a user must fix (no kernel, a bad ``model=``, an unknown policy) raise
``HarnessError`` with the command's message.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from argparse import Namespace
from pathlib import Path

from . import cli, commands
from .qemu import DEFAULT_TIMEOUT, HarnessError, Run
from .scenario import scenario_from_args


def _words(tokens) -> list[str]:
    return tokens.split() if isinstance(tokens, str) else [str(t) for t in tokens]


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
    if cpus < 1:
        raise HarnessError(f"cpus={cpus}: give a whole number of harts from 1")
    if sim and deterministic:
        raise HarnessError("deterministic picks how QEMU runs; sim boots no QEMU: use one of them")
    scenario = scenario_from_args(_words(tokens))
    args = Namespace(kernel=kernel, sim=sim, deterministic=deterministic, model=model, timeout=timeout,
                     qemu_extra=qemu_extra)
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
    argv = ["compare", "--cpus", str(cpus), "--repeat", str(repeat), "--timeout", str(timeout)]
    if policies:
        argv += ["--policies", policies if isinstance(policies, str) else ",".join(policies)]
    argv += (["--quantum", quantum] if quantum else []) + (["--kernel", str(kernel)] if kernel else [])
    argv += (["--model", model] if model else []) + (["--sim"] if sim else [])
    argv += (["--same-seed"] if same_seed else []) + (["--keep-going"] if keep_going else [])
    with tempfile.TemporaryDirectory(prefix="schedlab-compare-") as tmp:
        out = Path(tmp) / "compare.json"
        said = io.StringIO()
        quieted = (contextlib.redirect_stdout(said), contextlib.redirect_stderr(said)) if quiet else ()
        with contextlib.ExitStack() as stack:
            for redirect in quieted:
                stack.enter_context(redirect)
            try:
                status = cli.main(argv + ["--json", str(out), "--allow-busy"] + _words(tokens or []))
            except SystemExit as exc:       # argparse refused an argument
                status = exc.code
        if status not in (commands.EXIT_OK, commands.EXIT_FAILED) or not out.is_file() or (
                status == commands.EXIT_FAILED and not keep_going):
            raise HarnessError(f"schedlab compare failed (exit {status}): {said.getvalue().strip()[-2000:]}")
        document = json.loads(out.read_text())
    comparison = document["comparison"]
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
