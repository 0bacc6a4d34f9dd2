"""Parameter sweeps: one key of a scenario varied over values, under one or more policies.

``--vary KEY=V1,V2,...`` names what changes between the points of a sweep:

* a setting every policy takes (``quantum``, ``seed``, ``trace``, ``timeout``) or a policy's own option
  (``alternates``, ``wakeboost``...): the scenario's token is replaced by ``KEY=V``;
* ``jobN.KEY``: key ``KEY`` of the scenario's N-th job (1-based, in scenario order: the kernel's job id),
  an app key (``grain``, ``n``, ``barrier``...) or a job key (``procs``, ``at``, ``adapt``, ``mem``).

The harness checks what it can know without the kernel - the form, the job index, that ``policy`` is varied
with ``--policies`` and whole jobs not at all - and the kernel checks the rest: its scenario parser refuses an
unknown key or a bad value with one ``ERROR`` line and exit status 2, which the sweep reports with the
``--vary`` value that caused it and stops (``refusal``).  Repeats are ordered repeat-major, so every value's
first boot comes before any second one and a refused value is found early.

Each point (policy, value) is booted ``repeat`` times, repeat r with seed base + r (``mix.repeat_seed``)
unless ``--same-seed``; each job's metric (a numeric RESULT key, ``elapsed_us`` by default) is summarised by
``stats.Spread``: median, min..max and the bootstrap interval of the median.  The outputs are a table, the
points as CSV and JSON (with every run and RESULT record), and a PNG: the median per value with the interval
as error bars, one line per policy and job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .comparison import settings_for
from .mix import GLOBAL_SETTINGS, Job, mix_tokens, override, repeat_seed, split_tokens, token_key
from .qemu import HarnessError
from .stats import CI_LEVEL, Spread

_KEY = re.compile(r"[a-z][a-z0-9_]*\Z")
_JOB_KEY = re.compile(r"job(\d+)\.(.*)\Z")
_BAD_VALUE = re.compile(r"[\s,:=]")


@dataclass(frozen=True)
class Vary:
    """What a sweep varies: ``key`` of the settings, or of job number ``job`` (1-based), over ``values``."""

    key: str
    values: tuple[str, ...]
    job: int | None = None

    @property
    def name(self) -> str:
        return self.key if self.job is None else f"job{self.job}.{self.key}"


def parse_vary(text: str) -> Vary:
    """``KEY=V1,V2,...`` -> Vary; HarnessError naming what is wrong."""
    name, eq, listed = text.partition("=")
    where = f"--vary {text!r}"
    if not eq or not name:
        raise HarnessError(f"{where}: expected KEY=V1,V2,... (e.g. quantum=2ms,5ms,10ms or job1.grain=100,1000)")
    values = tuple(listed.split(","))
    if not listed or any(not v for v in values):
        raise HarnessError(f"{where}: empty value in the list (values are separated by single commas)")
    for value in values:
        if _BAD_VALUE.search(value):
            raise HarnessError(f"{where}: value {value!r} may not contain spaces, ':' or '='")
    duplicates = sorted({v for v in values if values.count(v) > 1})
    if duplicates:
        raise HarnessError(f"{where}: value {duplicates[0]!r} is given twice")
    job_key = _JOB_KEY.match(name)
    if job_key:
        number, key = job_key.groups()
        if int(number) < 1:
            raise HarnessError(f"{where}: jobs are numbered from 1 (job1 is the scenario's first job=)")
        if not _KEY.match(key):
            raise HarnessError(f"{where}: {key!r} is not a key name (jobN.<key>, e.g. job1.grain)")
        if key == "job":
            raise HarnessError(f"{where}: vary one key of a job, jobN.<key>")
        return Vary(key, values, int(number))
    if name == "policy":
        raise HarnessError(f"{where}: the policy is not a key to vary: give the policies with --policies")
    if name == "model":
        raise HarnessError(f"{where}: the machine model is not a key to vary: numbers made under different models "
                           "are never put side by side; run one sweep per --model <profile>[,key=value...]")
    if name == "job" or name.startswith("job"):
        raise HarnessError(f"{where}: unknown key {name!r}: a job's key is jobN.<key> (e.g. job1.grain); "
                           f"settings: {', '.join(sorted(GLOBAL_SETTINGS - {'policy'}))} or a policy option")
    if not _KEY.match(name):
        raise HarnessError(f"{where}: unknown key {name!r}: not a setting "
                           f"({', '.join(sorted(GLOBAL_SETTINGS - {'policy'}))}), a policy option or jobN.<key>")
    return Vary(name, values)


def check_known(vary: Vary, options: dict | None) -> None:
    """Refuse a plain key that is neither a setting nor an option of any policy the kernel lists (BOOT
    ``options=``); without a BOOT line (None) the kernel judges."""
    if vary.job is not None or vary.key in GLOBAL_SETTINGS or options is None:
        return
    known = sorted({key for opts in options.values() for key in opts})
    if vary.key not in known:
        raise HarnessError(f"--vary {vary.name}: unknown key {vary.key!r}: not a setting "
                           f"({', '.join(sorted(GLOBAL_SETTINGS - {'policy'}))}) nor an option of any policy "
                           f"({', '.join(known) or 'none'}); a job's key is jobN.<key>")


def _set_job_key(token: str, key: str, value: str) -> str:
    """``job=app:a=1,b=2`` with ``key=value`` replacing its old value or appended."""
    head, colon, keys = token.partition(":")
    pairs = [kv for kv in keys.split(",") if kv and token_key(kv) != key] if colon else []
    return f"{head}:{','.join(pairs + [f'{key}={value}'])}"


def apply(vary: Vary, value: str, settings: list[str], jobs: list[Job]) -> tuple[list[str], list[Job]]:
    """The scenario at one point of the sweep."""
    if vary.job is None:
        return override(settings, **{vary.key: value}), list(jobs)
    if vary.job > len(jobs):
        listed = ", ".join(f"job{j.index + 1}={j.app}" for j in jobs) or "none"
        raise HarnessError(f"--vary {vary.name}: job index {vary.job} out of range: the scenario has "
                           f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} ({listed})")
    changed = list(jobs)
    old = changed[vary.job - 1]
    changed[vary.job - 1] = Job(old.index, _set_job_key(old.token, vary.key, value), old.background_apps)
    return settings, changed


@dataclass(frozen=True)
class Point:
    """One boot of a sweep: ``policy`` None keeps the scenario's (or the kernel's default) policy."""

    policy: str | None
    value: str
    repeat: int
    settings: tuple[str, ...]
    jobs: tuple[Job, ...]

    def tokens(self, options: dict | None) -> list[str]:
        settings = list(self.settings)
        if self.policy is not None:
            settings = override(settings_for(settings, self.policy, options), policy=self.policy)
        return mix_tokens(settings, list(self.jobs))

    def describe(self, vary: Vary) -> str:
        return f"{self.policy or 'default policy'} {vary.name}={self.value} repeat {self.repeat + 1}"


def plan(vary: Vary, tokens: list[str], policies: list[str | None], repeats: int,
         vary_seed: bool = True) -> list[Point]:
    """Every boot, repeat-major (every value's first boot before any second one)."""
    settings, jobs = split_tokens(tokens)
    points = []
    for repeat in range(repeats):
        seeded = repeat_seed(settings, repeat) if vary_seed and vary.key != "seed" else list(settings)
        for value in vary.values:
            at_settings, at_jobs = apply(vary, value, seeded, jobs)
            for policy in policies:
                points.append(Point(policy, value, repeat, tuple(at_settings), tuple(at_jobs)))
    return points


def refusal(vary: Vary, point: Point, run) -> str | None:
    """The message for a boot the kernel's scenario parser refused (exit status 2), else None."""
    if run.timed_out or run.exit_code != 2:
        return None
    said = "; ".join(run.errors) or "no ERROR line"
    return (f"--vary {vary.name}: the kernel refused the scenario at {vary.name}={point.value}"
            f"{' under ' + point.policy if point.policy else ''}: {said}")


@dataclass
class Summary:
    """One job's metric at one (policy, value), over the repeats."""

    policy: str
    value: str
    job: int
    app: str
    background: bool
    spread: Spread | None
    busy: int = 0               # boots of this point on a busy host (busy.py)
    boots: int = 0


def _policy_of(point: Point, run) -> str | None:
    """The policy a boot ran under, from its own lines or its scenario's policy= token (None: unknown)."""
    said = [r.get("policy") for r in run.results] + [(run.summary or {}).get("policy")]
    said += [t.partition("=")[2] for t in point.settings if token_key(t) == "policy"][-1:]
    return next((p for p in said if isinstance(p, str) and p), None)


def _policy_ran(done) -> str | None:
    """The kernel's default policy as the sweep's boots that printed one name it: the label of a point that
    asked for no policy and failed before saying (a boot lost with its worker), so its row joins the others."""
    return next((p for point, run in done if point.policy is None and (p := _policy_of(point, run))), None)


def summarise(done: list[tuple[Point, object]], vary: Vary, metric: str) -> list[Summary]:
    """Reduce (point, run) pairs to one Summary per policy, value and job; failed runs give no numbers.
    A point without an explicit policy is labelled with the policy its RESULT lines name. Ordered as asked:
    policies in --policies order (the order the points were booted), values in --vary order, then jobs."""
    values: dict[tuple, list] = {}
    apps: dict[tuple, tuple[str, bool]] = {}
    boots: dict[tuple, list[int]] = {}
    ran = _policy_ran(done)
    for point, run in done:
        label = point.policy or _policy_of(point, run) or ran or "default"
        flagged = int(bool(getattr(getattr(run, "busy", None), "busy", False)))
        for job in point.jobs:
            key = (label, point.value, job.index + 1)
            values.setdefault(key, [])
            apps[key] = (job.app, job.background)
            count = boots.setdefault(key, [0, 0])
            count[0] += flagged
            count[1] += 1
        if not run.ok:
            continue
        for result in run.results:
            key = (label, point.value, result.get("job"))
            number = result.get(metric)
            if key in values and isinstance(number, (int, float)) and not isinstance(number, bool):
                values[key].append(number)
    order = {v: i for i, v in enumerate(vary.values)}
    policies = {p: i for i, p in enumerate(dict.fromkeys(label for label, _, _ in values))}  # --policies order
    keys = sorted(values, key=lambda k: (policies[k[0]], order[k[1]], k[2]))
    return [Summary(k[0], k[1], k[2], *apps[k], Spread.of(values[k]), *boots[k]) for k in keys]


def to_rows(summaries: list[Summary], vary: Vary, metric: str) -> list[dict]:
    """The points as flat rows (the CSV, and ``sweep.points`` in the JSON)."""
    rows = []
    for s in summaries:
        row = {"policy": s.policy, "vary": vary.name, "value": s.value, "job": s.job, "app": s.app,
               "background": s.background, "metric": metric}
        row.update(s.spread.to_dict() if s.spread else
                   {"median": None, "min": None, "max": None, "n": 0, "ci_low": None, "ci_high": None})
        rows.append(row)
    return rows


def draw(summaries: list[Summary], vary: Vary, metric: str, path, title: str) -> None:
    """The sweep as a PNG: per policy and foreground job, the median metric per value (in order, evenly
    spaced) with the bootstrap interval as error bars; a point computed from a boot the busy-host check flagged
    is ringed in red (its time is noisy), as the table marks it. HarnessError without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise HarnessError("the sweep plot needs matplotlib (make deps, or pip install matplotlib)") from None
    scale, unit = (1e-3, "ms") if metric.endswith("_us") else (1.0, "")
    figure, axes = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    lines: dict[tuple, list[Summary]] = {}
    for s in summaries:
        if not s.background:
            lines.setdefault((s.policy, s.job, s.app), []).append(s)
    position = {v: i for i, v in enumerate(vary.values)}
    for (policy, job, app), points in lines.items():
        shown = [p for p in points if p.spread]
        if not shown:
            continue
        xs = [position[p.value] for p in shown]
        ys = [p.spread.median * scale for p in shown]
        below = [(p.spread.median - (p.spread.ci or (p.spread.median,) * 2)[0]) * scale for p in shown]
        above = [((p.spread.ci or (p.spread.median,) * 2)[1] - p.spread.median) * scale for p in shown]
        axes.errorbar(xs, ys, yerr=[below, above], marker="o", capsize=4, label=f"{policy}: {app}#{job}")
        _ring_busy(axes, [(x, y) for x, y, p in zip(xs, ys, shown) if p.busy])
    axes.set_xticks(range(len(vary.values)), vary.values)
    axes.set_xlabel(vary.name)
    axes.set_ylabel(f"{metric.removesuffix('_us')} ({unit})" if unit else metric)
    axes.set_title(title, fontsize=9)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _ring_busy(axes, points: list[tuple[float, float]]) -> None:
    """Red rings around the points computed from a busy boot; the legend names them once."""
    if not points:
        return
    named = any(t.get_label() == BUSY_LABEL for t in axes.collections)
    axes.scatter(*zip(*points), s=180, facecolors="none", edgecolors="red", linewidths=1.5, zorder=3,
                 label="_" + BUSY_LABEL if named else BUSY_LABEL)


#: The legend's entry for the ringed points.
BUSY_LABEL = "busy host: noisy"


def ci_label() -> str:
    return f"{CI_LEVEL:.0%} CI"
