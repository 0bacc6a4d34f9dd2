"""The harness's core, under both of its faces: the Python API (api.py) and the command line (cli.py,
commands.py) call these functions with typed arguments and get typed results; nothing here reads argv, prints a
table or writes a file (as pyperf's ``Runner`` is the core and its CLI a client of it).

* ``Settings``: how every boot of a command runs - the kernel (or the simulator), deterministic mode, the
  machine model (a ``model.Model``, parsed once where the settings are made), the timeout, QEMU's extra
  arguments. ``prepare`` checks them against the harts and the scenario before anything boots and resolves
  ``pace=auto`` to one R for the whole command.
* ``boot`` / ``boots``: one boot, or many in order, through the executor (executor.py: ``--jobs``, Dask, the
  journal), as ``qemu.Run``s with the busy-host verdict of each.
* ``compare``: each foreground job alone and the mix under each policy (comparison.py plans and reduces), as a
  ``Comparison``: its trials and runs, the outcomes per policy, and ``records()`` - one dict per policy and
  job, with the busy-host verdict and calibration card of the boots each is computed from.
* ``sweep``: one key of a scenario over values under one or more policies (sweep.py plans and reduces), as a
  ``Sweep``: its points and runs, the summaries per policy, value and job, and ``rows()``.
* ``failure_report`` / ``unreadable``: what a failed boot says, in the words both faces show.

Errors: what a user must fix (a bad spec, a scenario with model=, an unknown policy, a mix without a
foreground job, virtual times for a comparison) raises ``HarnessError`` before any boot where it can be known
then; a boot that fails is a result (``Run.ok`` False, ``Comparison.failures``), never an exception.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, TypedDict

from . import busy, executor, kernel_elf, model_limits, pace
from . import comparison as cmp
from . import model as machine
from . import sweep as sw
from .mix import GLOBAL_SETTINGS, Job, background_apps, override, split_tokens, token_key
from .qemu import DEFAULT_TIMEOUT, MEMORY, REPO_ROOT, HarnessError, Run, is_deterministic

#: The mix ``compare`` uses when given none (same as tools/scenarios/default-mix.scn).
DEFAULT_MIX = ("job=gauss", "job=oddeven")

#: Lines of raw console shown for a failed run that printed no ERROR/PANIC.
CONSOLE_TAIL = 15

#: Why compare refuses virtual times unless allowed.
VIRTUAL_REFUSAL = (
    "compare refuses to compute slowdowns from virtual times: with clock=virtual every hart "
    "takes turns on one host thread and the clock counts the instructions of all harts, so a job alone "
    "and the same job in a mix are not timed as on a parallel machine. Drop --deterministic (and "
    "clock=virtual) to measure, or pass --allow-virtual for instruction-count ratios.")


@dataclass(frozen=True)
class Settings:
    """How every boot of one command runs. ``model``: the parsed spec (``model.as_model`` of the text given)."""

    kernel: str | Path | None = None
    sim: bool = False
    deterministic: bool = False
    model: machine.Model | None = None
    timeout: float = DEFAULT_TIMEOUT
    qemu_extra: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "model", machine.as_model(self.model))

    def task(self, cpus: int, tokens) -> executor.Task:
        """One boot of these settings as an executor task."""
        bootargs = tokens if isinstance(tokens, str) else " ".join(tokens)
        if self.sim:
            return executor.sim_task(cpus, bootargs, timeout=self.timeout, model=self.model)
        return executor.qemu_task(cpus, bootargs, kernel=self.kernel, timeout=self.timeout, extra=self.qemu_extra,
                                  deterministic=self.deterministic, model=self.model)

    def virtual(self, tokens) -> bool:
        """The boots run in deterministic mode: ``deterministic``, or clock=virtual among the tokens."""
        return self.deterministic or is_deterministic(" ".join(tokens))

    def canonical_model(self, cpus: int) -> str:
        """The machine model's canonical spec at ``cpus`` harts, or ``none``."""
        return machine.canonical(self.model, cpus)


def prepare(settings: Settings, cpus: int, tokens, say: Callable[[str], None] | None = None) -> Settings:
    """Before any boot: the model fits ``cpus`` harts and this host (ModelError says what is wrong), the
    scenario chooses no model= itself (only the settings' model loads the plugin that makes it true), an unpaced
    timed boot has no more harts than host cores (pace.needs_pace says how to run it), and pace=auto becomes
    one R for every boot of the command (pace.resolve; ``say`` hears how it was chosen)."""
    model_limits.check(settings.model, cpus, machine.mem_mb(MEMORY))
    if any(token_key(t) == "model" for t in tokens):
        raise HarnessError("the scenario has a model= token: choose the machine model with --model "
                           "<profile>[,key=value...] (model= in Python), which also loads the plugin")
    why = pace.needs_pace(cpus, settings.virtual(tokens), settings.sim, settings.model)
    if why:
        raise HarnessError(why)
    if settings.model is None or settings.sim:
        return settings
    return replace(settings, model=pace.resolve(settings.model, cpus, kernel=settings.kernel, say=say))


def boot(settings: Settings, cpus: int, tokens) -> Run:
    """One boot, where the current executor runs it (a failed boot is returned, not raised)."""
    return executor.current().run(settings.task(cpus, tokens))


def boots(settings: Settings, cpus: int, token_lists):
    """The Runs of these boots in order, as many at a time as the executor runs. A loop that breaks drops the
    generator, which cancels the boots not started yet (executor.Executor.map)."""
    return executor.current().map(settings.task(cpus, tokens) for tokens in token_lists)


# ---- policies ----

def unknown_policies(asked: list[str], known: list[str] | None, option: str = "--policies") -> str | None:
    """The refusal for names in ``asked`` the kernel does not have (None when all are known, or unknown)."""
    bad = [p for p in asked if known is not None and p not in known]
    if not bad:
        return None
    return (f"{option}: unknown polic{'ies' if len(bad) > 1 else 'y'} {', '.join(repr(p) for p in bad)}: this "
            f"kernel has {', '.join(known)}")


def check_policies_first(settings: Settings, asked: list[str]) -> None:
    """Refuse misspelt policies before any boot: the names are read from the kernel ELF (kernel_elf.py; the
    simulator's from its binary). When they cannot be read, the first boot's BOOT line is checked instead."""
    if not asked:
        return
    if settings.sim:
        from .sim import ensure_sim
        path = ensure_sim()
    else:
        path = Path(settings.kernel) if settings.kernel else REPO_ROOT / "build" / "kernel.elf"
    refusal = unknown_policies(asked, kernel_elf.policies(path))
    if refusal:
        raise HarnessError(refusal + "; nothing was booted")


def discover_policies(settings: Settings, cpus: int, given: list[str], jobs: list[Job], quantum: str | None,
                      say: Callable[[str], None]) -> tuple[list[str] | None, Run]:
    """Boot the mix under the kernel's default policy and read the policies from BOOT (None if it failed)."""
    # only the settings every policy takes: a policy's own options (alternates=...) would be refused here
    given = [t for t in given if token_key(t) in GLOBAL_SETTINGS]
    tokens = override(given, policy=None, **({"quantum": quantum} if quantum else {}))
    tokens += [job.token for job in jobs]
    say("[discover] mix under the kernel's default policy ...")
    run = boot(settings, cpus, tokens)
    if not run.ok:
        return None, run
    listed = (run.boot or {}).get("policies")
    if not listed:
        ran = (run.summary or {}).get("policy")
        listed = [ran] if ran else None
        say(f"note: the kernel's BOOT line lists no policies; comparing only '{ran}'")
    elif len(listed) == 1:
        say(f"note: the kernel was built with one policy only; comparing just '{listed[0]}'")
    return listed, run


# ---- compare ----

@dataclass
class Batch:
    """What a command's boots leave: the harts and repeats, the machine model's canonical spec (or none), each
    planned boot with its run in order (``done``: comparison.Trial or sweep.Point, Run), the failed runs."""

    cpus: int
    repeat: int
    model: str
    done: list[tuple] = field(default_factory=list, kw_only=True)
    failures: list[Run] = field(default_factory=list, kw_only=True)


@dataclass
class Comparison(Batch):
    """A comparison's boots and what they add up to (comparison.py's model)."""

    policies: list[str]
    jobs: list[Job]
    virtual: bool
    outcomes: list[cmp.PolicyOutcome] = field(default_factory=list, kw_only=True)

    @property
    def ok(self) -> bool:
        return bool(self.outcomes) and not self.failures

    def busy_counts(self) -> dict:
        """(policy, job index) -> [busy boots, boots] its row is computed from (alone and mix)."""
        counts: dict = defaultdict(lambda: [0, 0])
        for trial, run in self.done:
            for job in ([trial.job] if trial.job else self.jobs):
                cell = counts[trial.policy, job.index]
                cell[0] += busy.count([run])
                cell[1] += 1
        return counts

    def busy_marks(self) -> dict:
        """(policy, job index) -> 'BUSY k/n' for the rows computed from a busy boot."""
        return {key: busy.mark(*cell) for key, cell in self.busy_counts().items() if cell[0]}

    def to_dict(self) -> dict:
        return cmp.outcomes_to_dict(self.outcomes)

    def records(self) -> list[Record]:
        """One record per policy and job of the mix, best policy first (see api.compare)."""
        order = {o.policy: i for i, o in enumerate(cmp.ranking(self.outcomes))}
        counts = self.busy_counts()
        cards = [run.calib for _, run in self.done if run.calib]
        rows = []
        for outcome in sorted(self.outcomes, key=lambda o: order.get(o.policy, len(order))):
            for j in outcome.jobs:
                busy_boots, boots_ = counts[outcome.policy, j.job.index]
                rows.append(Record(**{"policy": outcome.policy, "job": j.job.index + 1, "app": j.job.app,
                             "token": j.job.token, "background": j.job.background, **_flat("alone_us", j.alone),
                             **_flat("mix_us", j.mix), **_flat("slowdown", j.slowdown),
                             "makespan_us": outcome.makespan.median if outcome.makespan else None,
                             "mean_slowdown": outcome.mean_slowdown, "cpus": self.cpus, "repeat": self.repeat,
                             "boots": boots_, "busy_boots": busy_boots, "busy": busy_boots > 0,
                             "model": self.model, "calib": cards[0] if cards else None}))
        return rows


def _spread_keys(prefix: str) -> dict:
    """The keys _flat gives a Spread: prefix (its median) and its min, max and 95 % interval."""
    return {prefix: float | None, **{f"{prefix}_{k}": float | None for k in ("min", "max", "ci_low", "ci_high")}}


#: One row of a comparison (Comparison.records, schedlab.compare): a policy and a job of the mix, the job's
#: medians alone and in the mix with their spreads, the policy's makespan and mean slowdown, and how far to trust
#: them (boots, busy boots, the machine model, the first boot's calibration card). api.compare documents each key.
Record = TypedDict("Record", {
    "policy": str, "job": int, "app": str, "token": str, "background": bool,
    **_spread_keys("alone_us"), **_spread_keys("mix_us"), **_spread_keys("slowdown"),
    "makespan_us": float | None, "mean_slowdown": float | None, "cpus": int, "repeat": int,
    "boots": int, "busy_boots": int, "busy": bool, "model": str, "calib": dict | None})


def _flat(prefix: str, spread) -> dict:
    """A Spread as prefix=median, prefix_min, prefix_max, prefix_ci_low, prefix_ci_high (None when absent)."""
    data = spread.to_dict() if spread is not None else {}
    return {prefix: data.get("median"), **{f"{prefix}_{k}": data.get(k) for k in ("min", "max", "ci_low",
                                                                                   "ci_high")}}


def _no_say(message: str) -> None:
    """The default listener: the core prints nothing."""


def compare(settings: Settings, tokens, cpus: int, repeat: int, policies: list[str] | None = None,
            quantum: str | None = None, same_seed: bool = False, keep_going: bool = False,
            allow_virtual: bool = False, say: Callable[[str], None] = _no_say,
            on_boot: Callable[[int, int, cmp.Trial, Run], None] | None = None) -> Comparison:
    """Each foreground job of the mix ``tokens`` alone and the mix under each policy (None: the kernel's,
    from a discovery boot), ``repeat`` times. ``say`` hears notes, ``on_boot(number, total, trial, run)`` each
    boot as it finishes. The first failed boot stops it unless ``keep_going``."""
    virtual = settings.virtual(tokens)
    if virtual and not allow_virtual:
        raise HarnessError(VIRTUAL_REFUSAL)
    given, jobs = split_tokens(list(tokens))
    if not any(not j.background for j in jobs):
        raise HarnessError("compare needs at least one foreground job (job=<app> not in the background set) "
                           "in the mix")
    result = Comparison(cpus, repeat, settings.canonical_model(cpus), list(policies or []), jobs, virtual)
    discovery = None
    if policies:
        check_policies_first(settings, result.policies)
    else:
        listed, discovery = discover_policies(settings, cpus, given, jobs, quantum, say)
        if listed is None:
            result.failures.append(discovery)
            return result
        result.policies = listed
        given, result.jobs = split_tokens(list(tokens), background_apps(discovery.boot))
        if not any(not j.background for j in result.jobs):
            raise HarnessError("every job of the mix is a background app (BOOT background=)")
    trials = cmp.plan(given, result.jobs, result.policies, repeat, quantum,
                      (discovery.boot or {}).get("options") if discovery is not None else None,
                      vary_seed=not same_seed)
    if discovery is not None:
        _reuse_discovery(result, trials, discovery)
    _run_trials(settings, result, trials, keep_going, discovery is not None, on_boot)
    machine.check_same([(trial.describe(), run.model) for trial, run in result.done], "compare")
    result.outcomes = cmp.aggregate(result.done, result.jobs, result.policies, repeat)
    return result


def _reuse_discovery(result: Comparison, trials: list[cmp.Trial], discovery: Run) -> None:
    """The discovery boot is the default policy's first mix trial already: it is not booted twice."""
    ran = (discovery.summary or {}).get("policy")
    reusable = [t for t in trials if (t.kind, t.policy, t.repeat) == (cmp.MIX, ran, 0)]
    if reusable:
        trials.remove(reusable[0])
        result.done.append((cmp.Trial(ran, cmp.MIX, 0, tuple(discovery.bootargs.split())), discovery))


def _run_trials(settings: Settings, result: Comparison, trials: list[cmp.Trial], keep_going: bool,
                checked: bool, on_boot) -> None:
    """Boot the trials in order into ``result``; the first BOOT line checks the policies when the ELF could not."""
    runs = boots(settings, result.cpus, (t.tokens for t in trials))
    for number, (trial, run) in enumerate(zip(trials, runs), 1):
        result.done.append((trial, run))
        if not checked and (run.boot or {}).get("policies"):
            checked = True
            refusal = unknown_policies(result.policies, run.boot["policies"])
            if refusal:
                raise HarnessError(refusal + f"; stopped after {number} boot{'s' if number > 1 else ''}")
        if on_boot is not None:
            on_boot(number, len(trials), trial, run)
        if not run.ok or unreadable(run):
            result.failures.append(run)
            if not keep_going:
                break


# ---- sweep ----

@dataclass
class Sweep(Batch):
    """A sweep's boots and what they add up to (sweep.py's model)."""

    vary: sw.Vary
    metric: str
    policies: list[str | None]                            # as asked; None: the scenario's or the kernel's
    tokens: list[str]
    seed_varied: bool
    summaries: list[sw.Summary] = field(default_factory=list, kw_only=True)

    def rows(self) -> list[dict]:
        """One row per policy, value and job (the CSV's)."""
        return sw.to_rows(self.summaries, self.vary, self.metric)

    def about(self) -> dict:
        """What was swept, for the JSON."""
        return {"vary": self.vary.name, "values": list(self.vary.values), "metric": self.metric, "cpus": self.cpus,
                "repeats": self.repeat, "policies": self.policies, "seed_varied": self.seed_varied,
                "tokens": self.tokens, "model": self.model}


def sweep(settings: Settings, vary: sw.Vary, tokens, cpus: int, repeat: int, policies: list[str] | None = None,
          metric: str = "elapsed_us", same_seed: bool = False, keep_going: bool = False,
          on_boot: Callable[[int, int, sw.Point, Run], None] | None = None) -> Sweep:
    """``vary`` over its values in the scenario ``tokens`` under each policy (None: as the scenario says),
    ``repeat`` times; ``on_boot(number, total, point, run)`` hears each boot as it finishes. The first failed
    boot stops it unless ``keep_going``; a key the kernel does not take, or a value it refused, raises."""
    if not any(token_key(t) == "job" for t in tokens):
        raise HarnessError("sweep needs a scenario with at least one job=<app>")
    asked = list(policies or []) or [None]
    check_policies_first(settings, [p for p in asked if p])
    points = sw.plan(vary, list(tokens), asked, repeat, vary_seed=not same_seed)
    result = Sweep(cpus, repeat, settings.canonical_model(cpus), vary, metric, asked, list(tokens),
                   not same_seed and vary.key != "seed")
    _run_points(settings, result, points, keep_going, on_boot)
    machine.check_same([(point.describe(vary), run.model) for point, run in result.done], "sweep over")
    result.summaries = sw.summarise(result.done, vary, metric)
    return result


def _run_points(settings: Settings, result: Sweep, points: list[sw.Point], keep_going: bool, on_boot) -> None:
    """Boot the points in order into ``result``. The first boot goes alone: its BOOT line's options shape the
    others' tokens (Point.tokens reads ``options`` when the second batch is drawn, after it is set below)."""
    options = None
    asked = [p for p in result.policies if p]
    runs = (run for batch in (points[:1], points[1:])
            for run in boots(settings, result.cpus, (p.tokens(options) for p in batch)))
    for number, (point, run) in enumerate(zip(points, runs), 1):
        result.done.append((point, run))
        if on_boot is not None:
            on_boot(number, len(points), point, run)
        if run.ok and options is None:
            options = (run.boot or {}).get("options") or {}
            sw.check_known(result.vary, options)
            refusal = unknown_policies(asked, (run.boot or {}).get("policies"))
            if refusal:
                raise HarnessError(refusal)
        refused = sw.refusal(result.vary, point, run)
        if refused:
            raise HarnessError(refused)
        if not run.ok:
            result.failures.append(run)
            if not keep_going:
                break


def unreadable(run: Run) -> str | None:
    """The contract lines of a finished boot the harness could not read (a RESULT without its keys, a time
    that is not a number the kernel prints...): they give no numbers, and the run counts as failed."""
    if run.timed_out or not run.parsed.malformed:
        return None
    return ("contract lines not in the kernel's format (ignored, the run counts as failed):\n"
            + "\n".join("  " + line for line in run.parsed.malformed))


def failure_report(run: Run) -> str:
    """What to show for a failed run: its ERROR/PANIC lines and failed jobs with their own ERROR lines,
    else the console's tail."""
    lines = [f"{run.verdict}: cpus={run.cpus} bootargs: {run.bootargs}"]
    if run.timed_out:
        lines.append(f"TIMEOUT: killed after {run.seconds:.0f} s (raise --timeout, or the kernel hung)")
    lines += run.errors + run.panics
    failed_jobs = [r for r in run.results if r.get("check") != "ok"]
    for r in failed_jobs:
        lines.append(f"job {r.get('job')} ({r.get('app')}) check={r.get('check')}"
                     + (f" reason={r['reason']}" if "reason" in r else ""))
        lines += ["  " + e for e in run.parsed.job_errors(r.get("job"))]
    reported = {r.get("job") for r in failed_jobs}
    lines += [e for job in sorted(run.output) if job not in reported for e in run.parsed.job_errors(job)]
    if not (run.errors or run.panics or failed_jobs):
        tail = run.console.splitlines()[-CONSOLE_TAIL:]
        lines.append(f"no ERROR/PANIC line; last {len(tail)} console lines:" if tail else "no console output")
        lines += ["| " + line for line in tail]
    return "\n".join(lines)
