"""Splitting a scenario into settings and jobs, and deriving the runs of a comparison.

A *mix* is a scenario with several jobs.  Its tokens are either settings
(``policy=``, ``quantum=``, ``seed=``...) or jobs (``job=<app>[:k=v,...]``).
Jobs are *foreground* (they do a finite piece of work whose time is the
measurement) or *background*: an app that declares ``SL_APP_BACKGROUND`` runs
until every other job has ended, so running it alone would never end and its
elapsed time is the mix's, not its own.  Background jobs are therefore never
run alone and have no slowdown; they stay in the mix.  The kernel lists the
background apps on its BOOT line (``background=hog``); ``split_tokens`` takes
that list, and before any boot the harness uses ``DEFAULT_BACKGROUND_APPS``
(the bundled apps' answer) instead.

The runs of a comparison keep every setting and every job's keys unchanged,
except that ``policy=`` (and ``quantum=`` when asked) is replaced, and that
repeats differ in their seed (``repeat_seed``): repeat r runs with seed
base + r, base being the scenario's ``seed=`` or the kernel's default 1, so the
repeats sample the apps' data and the harts' tick phases instead of
measuring one schedule r times (``--same-seed`` turns that off).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .keytable import SETTINGS

#: The background apps of the bundled build, for decisions made before any boot has printed its BOOT
#: line's ``background=`` (the kernel's word wins once one has).
DEFAULT_BACKGROUND_APPS = frozenset({"hog"})


def background_apps(boot: dict | None) -> frozenset:
    """The apps a boot's BOOT line lists as background; the default if it lists none (an older kernel)."""
    listed = (boot or {}).get("background")
    return frozenset(listed) if isinstance(listed, list) else DEFAULT_BACKGROUND_APPS


@dataclass(frozen=True)
class Job:
    """One ``job=`` token of a scenario and its position among the jobs (0-based)."""

    index: int
    token: str
    background_apps: frozenset = field(default=DEFAULT_BACKGROUND_APPS, compare=False, repr=False)

    @property
    def app(self) -> str:
        return self.token.partition("=")[2].partition(":")[0]

    @property
    def background(self) -> bool:
        return self.app in self.background_apps


def token_key(token: str) -> str:
    return token.partition("=")[0]


def split_tokens(tokens: list[str], background: frozenset = DEFAULT_BACKGROUND_APPS
                 ) -> tuple[list[str], list[Job]]:
    """(settings, jobs) of a token list, each in original order; ``background``: the background apps."""
    settings, jobs = [], []
    for token in tokens:
        if token_key(token) == "job":
            jobs.append(Job(len(jobs), token, frozenset(background)))
        else:
            settings.append(token)
    return settings, jobs


def override(settings: list[str], **values: str | None) -> list[str]:
    """Settings with each given key's tokens removed and ``key=value`` appended (None: just removed)."""
    kept = [t for t in settings if token_key(t) not in values]
    return kept + [f"{k}={v}" for k, v in values.items() if v is not None]


#: Settings every policy takes, from the kernel parser's own table (keytable.py; read when first used); any other
#: key=value is some policy's own option.
GLOBAL_SETTINGS = SETTINGS
#: The kernel's seed when a scenario has no seed= (kernel/scenario.c, README).
KERNEL_DEFAULT_SEED = 1


def repeat_seed(settings: list[str], repeat: int) -> list[str]:
    """The settings of repeat ``repeat`` (0-based): seed = the scenario's seed (default 1) + repeat.
    Repeat 0 keeps the settings as given; a changed seed= replaces the old one in place."""
    if repeat == 0:
        return list(settings)
    last = max((i for i, t in enumerate(settings) if token_key(t) == "seed"), default=None)
    try:
        base = int(settings[last].partition("=")[2]) if last is not None else KERNEL_DEFAULT_SEED
    except ValueError:
        return list(settings)           # not a number: left for the kernel to refuse
    token = f"seed={base + repeat}"
    if last is None:
        return list(settings) + [token]
    return [token if i == last else t for i, t in enumerate(settings) if token_key(t) != "seed" or i == last]


def mix_tokens(settings: list[str], jobs: list[Job]) -> list[str]:
    return settings + [job.token for job in jobs]


def alone_tokens(settings: list[str], job: Job) -> list[str]:
    return settings + [job.token]


def match_results(results: list[dict], jobs: list[Job]) -> dict[int, dict]:
    """Map job index -> RESULT of a run of ``jobs``.

    The kernel numbers jobs in scenario order, so with one RESULT per job the
    k-th smallest job id is the k-th job token.  When that does not line up
    (a job never finished), results are matched to jobs of the same app in order.
    """
    ordered = sorted(results, key=lambda r: (isinstance(r["job"], str), r["job"]))
    if len(ordered) == len(jobs) and all(r["app"] == j.app for r, j in zip(ordered, jobs)):
        return {j.index: r for r, j in zip(ordered, jobs)}
    matched, pending = {}, list(ordered)
    for job in jobs:
        for result in pending:
            if result["app"] == job.app:
                matched[job.index] = result
                pending.remove(result)
                break
    return matched
