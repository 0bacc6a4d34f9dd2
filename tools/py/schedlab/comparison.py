"""The policy comparison: which boots to make, and what they add up to.

For each policy P and each repeat r the comparison boots

* every foreground job of the mix *alone* (same settings, same keys, policy P), and
* the whole *mix* under policy P.

A job's slowdown under P is, per repeat, (its response time in the mix) /
(its response time alone), both from repeat r; the reported slowdown is the
median of those ratios with their min..max spread.  A response time is timed
from the job's arrival (RESULT end_us - arrive_us), as the papers time a job
from its start in the mix: the quanta it waits for its first dispatch count.
(The kernel's elapsed_us runs from the first dispatch, start_us: with it a
gang that waited out another's slot had a slowdown of 1.00 while the makespan
doubled.)  The wait before the first dispatch is reported beside it.  A policy's score is the
mean over foreground jobs of their median slowdowns - lower is better, 1.0
means sharing the machine cost nothing.  Runs that failed (non-zero verdict
or timeout) contribute no numbers.

Repeats run with different seeds by default (``mix.repeat_seed``): a job's
alone and mix boots of one repeat share a seed, so each ratio compares the
same work.  Every spread carries the bootstrap confidence interval of its
median (``stats``).

Trials are ordered repeat-major (all policies in repeat 0, then repeat 1...)
so slow drift of the host spreads over every policy instead of biasing one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .mix import Job, alone_tokens, match_results, mix_tokens, override, repeat_seed, token_key
from .stats import Spread, mean, slowdowns

ALONE, MIX = "alone", "mix"


@dataclass(frozen=True)
class Trial:
    """One boot of a comparison; ``job`` is the job run alone (None for the mix)."""

    policy: str
    kind: str
    repeat: int
    tokens: tuple[str, ...]
    job: Job | None = None

    @property
    def bootargs(self) -> str:
        return " ".join(self.tokens)

    def describe(self) -> str:
        what = f"alone job {self.job.index + 1} ({self.job.app})" if self.job else "mix"
        return f"{self.policy} repeat {self.repeat + 1}: {what}"


def settings_for(settings: list[str], policy: str, options: dict | None) -> list[str]:
    """The settings a boot under ``policy`` gets: a policy's own option (BOOT ``options=``) goes only to the
    policies that have it - ``alternates=on`` is an error under timeslice. Unknown keys stay, for the
    kernel to refuse."""
    if not options:
        return list(settings)
    owners: dict = {}
    for name, opts in options.items():
        for key in opts:
            owners.setdefault(key, set()).add(name)
    return [t for t in settings if token_key(t) not in owners or policy in owners[token_key(t)]]


def plan(settings: list[str], jobs: list[Job], policies: list[str], repeats: int,
         quantum: str | None = None, options: dict | None = None, vary_seed: bool = True) -> list[Trial]:
    """Every boot of the comparison, in the order to make them. ``options``: every policy's own options,
    as BOOT lists them (``Console.boot["options"]``); ``vary_seed``: repeat r gets seed base + r."""
    trials = []
    for repeat in range(repeats):
        seeded = repeat_seed(settings, repeat) if vary_seed else list(settings)
        for policy in policies:
            base = override(settings_for(seeded, policy, options), policy=policy,
                            **({"quantum": quantum} if quantum else {}))
            for job in jobs:
                if not job.background:
                    trials.append(Trial(policy, ALONE, repeat, tuple(alone_tokens(base, job)), job))
            trials.append(Trial(policy, MIX, repeat, tuple(mix_tokens(base, jobs))))
    return trials


@dataclass
class JobOutcome:
    """One job of the mix under one policy, over the repeats."""

    job: Job
    alone: Spread | None = None         # response time alone: end_us - arrive_us
    mix: Spread | None = None           # response time in the mix: end_us - arrive_us
    slowdown: Spread | None = None      # per-repeat mix/alone of the response times
    wait: Spread | None = None          # in the mix: start_us - arrive_us, the wait for the first dispatch
    misses_alone: Spread | None = None  # under a machine model: the job's misses (its MODEL job= line) alone
    misses_mix: Spread | None = None    # ... and in the mix


@dataclass
class PolicyOutcome:
    policy: str
    jobs: list[JobOutcome] = field(default_factory=list)
    makespan: Spread | None = None      # makespan_us of the mix

    @property
    def mean_slowdown(self) -> float | None:
        return mean(j.slowdown.median for j in self.jobs if j.slowdown)


def response_us(result: dict) -> float | None:
    """A job's response time: from its arrival to its end (end_us - arrive_us); a RESULT without those keys (an
    older kernel's, a test's) has only elapsed_us, which runs from the first dispatch."""
    end, arrive = result.get("end_us"), result.get("arrive_us")
    if isinstance(end, (int, float)) and isinstance(arrive, (int, float)) and end >= arrive:
        return end - arrive
    value = result.get("elapsed_us")
    return value if isinstance(value, (int, float)) else None


def wait_us(result: dict) -> float | None:
    """The wait from a job's arrival to its first dispatch (start_us - arrive_us), None without those keys."""
    start, arrive = result.get("start_us"), result.get("arrive_us")
    ok = isinstance(start, (int, float)) and isinstance(arrive, (int, float)) and start >= arrive
    return start - arrive if ok else None


def _response_by_job(run, jobs: list[Job], of=response_us) -> dict[int, float]:
    if not run.ok:
        return {}
    return {i: v for i, r in match_results(run.results, jobs).items() if (v := of(r)) is not None}


def _misses_by_job(run, jobs: list[Job]) -> dict[int, int]:
    """Under a machine model: each matched job's misses, from the plugin's MODEL job=<id> line."""
    model_jobs = getattr(getattr(run, "parsed", None), "model_jobs", None) or {}
    if not run.ok or not model_jobs:
        return {}
    return {i: model_jobs[r["job"]]["misses"] for i, r in match_results(run.results, jobs).items()
            if r.get("job") in model_jobs and isinstance(model_jobs[r["job"]].get("misses"), int)}


def aggregate(done: list[tuple[Trial, object]], jobs: list[Job], policies: list[str],
              repeats: int) -> list[PolicyOutcome]:
    """Reduce (trial, run) pairs to one ``PolicyOutcome`` per policy."""
    outcomes = []
    for policy in policies:
        alone = {j.index: [None] * repeats for j in jobs}
        mixed = {j.index: [None] * repeats for j in jobs}
        waits = {j.index: [None] * repeats for j in jobs}
        miss_alone = {j.index: [None] * repeats for j in jobs}
        miss_mixed = {j.index: [None] * repeats for j in jobs}
        makespans = [None] * repeats
        for trial, run in done:
            if trial.policy != policy:
                continue
            if trial.kind == ALONE:
                got = _response_by_job(run, [trial.job])
                if trial.job.index in got:
                    alone[trial.job.index][trial.repeat] = got[trial.job.index]
                for index, misses in _misses_by_job(run, [trial.job]).items():
                    miss_alone[index][trial.repeat] = misses
            else:
                for index, response in _response_by_job(run, jobs).items():
                    mixed[index][trial.repeat] = response
                for index, wait in _response_by_job(run, jobs, wait_us).items():
                    waits[index][trial.repeat] = wait
                for index, misses in _misses_by_job(run, jobs).items():
                    miss_mixed[index][trial.repeat] = misses
                if run.ok and run.summary:
                    makespans[trial.repeat] = run.summary.get("makespan_us")
        outcome = PolicyOutcome(policy, makespan=Spread.of(makespans))
        for job in jobs:
            outcome.jobs.append(JobOutcome(
                job, alone=Spread.of(alone[job.index]), mix=Spread.of(mixed[job.index]),
                slowdown=None if job.background else Spread.of(slowdowns(mixed[job.index], alone[job.index])),
                wait=Spread.of(waits[job.index]),
                misses_alone=Spread.of(miss_alone[job.index]), misses_mix=Spread.of(miss_mixed[job.index])))
        outcomes.append(outcome)
    return outcomes


def ranking(outcomes: list[PolicyOutcome]) -> list[PolicyOutcome]:
    """Policies with a score, best (lowest mean slowdown) first."""
    scored = [o for o in outcomes if o.mean_slowdown is not None]
    return sorted(scored, key=lambda o: o.mean_slowdown)


def _spread_dict(value: Spread | None) -> dict | None:
    return None if value is None else value.to_dict()


def outcomes_to_dict(outcomes: list[PolicyOutcome]) -> dict:
    """The comparison as plain data for JSON export (times in us, slowdowns as ratios)."""
    return {
        "definitions": {"alone_us, mix_us": "response time: end_us - arrive_us, from the job's arrival",
                        "slowdown": "mix_us / alone_us per repeat (response times)",
                        "wait_us": "in the mix, start_us - arrive_us: the wait for the first dispatch"},
        "policies": [{
            "policy": o.policy,
            "mean_slowdown": o.mean_slowdown,
            "makespan_us": _spread_dict(o.makespan),
            "jobs": [{"job": j.job.index + 1, "app": j.job.app, "token": j.job.token,
                      "background": j.job.background, "alone_us": _spread_dict(j.alone),
                      "mix_us": _spread_dict(j.mix), "slowdown": _spread_dict(j.slowdown),
                      "wait_us": _spread_dict(j.wait),
                      "misses_alone": _spread_dict(j.misses_alone), "misses_mix": _spread_dict(j.misses_mix)}
                     for j in o.jobs],
        } for o in outcomes],
        "ranking": [o.policy for o in ranking(outcomes)],
    }
