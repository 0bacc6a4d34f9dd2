"""``tools/schedlab reproduce``: every headline result of the five papers, regenerated in one command.

The model.  A *section* is one result of one paper (Markatos 3.5.1, Feitelson & Rudolph's experiments, Hood's
cliff, ...): a function ``fn(ctx) -> Section`` registered with ``@section`` in a module of this package
(each module registers its own sections when imported; the package imports every module beside this file, so
adding a result is adding a file).  A section boots what it needs through ``ctx`` (one place for booting,
repeats with seeds varied across them, medians and spreads), and returns rows of paper | model | ours |
verdict: the paper's number as printed, what the paper's own model predicts for our machine and sizes
(``models.py``, from constants we measure), our measurement as "median (min..max)" over the repeats, and a
verdict computed from the numbers (``verdict_within``), never written by hand.  ``run`` writes
``docs/results.md`` (one section each, with the scenario booted and a sentence on what differs and why) and
``docs/results.json`` (every raw number), and the figures into ``docs/figures/``.

Budget.  Each section declares its expected seconds at ``--cpus 2`` for ``--quick`` and for a full run; the
command prints the plan first.  Timings mean something only with harts <= host cores on an otherwise idle
machine (docs/design.md, "Measuring"): the header of results.md records the load average, the host and the
calibration card of the first boot, so a reader can judge.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import importlib
import json
import os
import pkgutil
import platform
import statistics
import sys
import shutil
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from .. import busy, executor, qemu
from ..comparison import response_us
from ..writers import dumps

REPO = qemu.REPO_ROOT
#: A boot the busy-host check flags is booted again (same scenario and seed) up to this many times: one
#: disturbed boot of hundreds must not keep a whole run out of docs/, nor be measured with.
BUSY_REBOOTS = 2
from . import criteria as cr
from .criteria import VERDICTS


class ReproError(Exception):
    """A boot that failed: the section reports it instead of the command crashing."""


@dataclass
class Row:
    label: str          # what is compared
    paper: str          # the paper's number as printed, "-" if none
    model: str          # the paper's model for our machine and sizes, "-" if none
    ours: str           # "median (min..max)", or an exact value
    verdict: str        # one of VERDICTS; computed from the criterion when the row has one
    why: str = ""       # one sentence; required when the verdict is not a passing one
    criterion: dict | None = None   # criteria.Criterion.to_dict(): what the verdict is computed from
    measured: dict | None = None    # name -> values (the repeats) that fed the criterion
    harts: int | None = None        # processors the measurements ran on (simulated: the simulator's)
    simulated: bool = False         # the measurements are the simulator's, not QEMU's

    def __post_init__(self):
        if self.criterion:
            c = cr.Criterion.from_dict(self.criterion)
            self.verdict = cr.judge(c, self.measured, self.harts, self.simulated)
            # a section's measured cause explains a miss; a row judged elsewhere says where, from its criterion
            self.why = self.why if self.verdict not in cr.PASSING + (cr.ELSEWHERE,) else ""
            self.why = self.why or cr.why(c, self.measured, self.harts, self.verdict)
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")
        if self.verdict not in cr.PASSING and not self.why:
            raise ValueError(f"row {self.label!r}: a verdict of {self.verdict!r} needs its reason (why=)")
        if (self.verdict in cr.PASSING and self.verdict != cr.MEASURED and not self.criterion
                and self.paper.strip() in ("", "-")):
            raise ValueError(f"row {self.label!r}: {self.verdict!r} with no paper number or claim to judge it by "
                             "(a measurement alone is 'measured')")


def judged(label: str, criterion: "cr.Criterion", measured: dict, ours: str | None = None, model: str = "-",
           why: str = "", harts: int | None = 2, simulated: bool = False, fmt: str = "{:.2f}") -> Row:
    """A row whose verdict the framework computes from a criterion declared apart from the measuring code and
    the measurements (name -> values) that feed it; ``why`` (a measured cause) replaces the criterion's own
    words when the row does not pass."""
    if ours is None:
        names = cr.needs(criterion) if criterion.kind != "measured" else list(measured)
        ours = "; ".join(fmt_spread(measured.get(n, []), fmt) for n in names if n in measured) or "-"
    paper = criterion.paper if criterion.source in ("", "-") else f"{criterion.paper} ({criterion.source})"
    return Row(label, paper, model, ours, cr.MEASURED, why, criterion.to_dict(),
               {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in measured.items()},
               harts, simulated)


@dataclass
class Section:
    name: str
    title: str
    source: str
    scenario: str
    rows: list[Row]
    notes: str
    figures: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)
    seconds: float = 0.0
    error: str = ""
    busy_boots: int = 0         # of its boots, how many the busy-host check flagged
    boots: int = 0
    reboots: int = 0            # boots run again because the check flagged them (Ctx.boot)


@dataclass
class SectionSpec:
    """A registered section: its name, title and place in results.md, its budget, and the function that makes it
    (``section``). Not to be confused with ``schedlab experiment``'s one-off measurements (experiments/)."""
    name: str
    title: str
    order: int
    quick_seconds: float
    full_seconds: float
    fn: Callable
    paced: bool = False         # boots more harts than host cores, paced: run with --paced (or --only), budgeted apart


SECTIONS: dict[str, SectionSpec] = {}
#: ``fn(sections, out_dir) -> Path | None``: pages written beside results.md from the sections (``@page``)
PAGES: list[Callable] = []


def section(name: str, title: str, order: int, quick_seconds: float, full_seconds: float, paced: bool = False):
    """Register ``fn(ctx) -> Section`` as the section ``name``; ``paced``: it boots more harts than the host has
    cores on paced QEMU (paced.py), so it runs only with --paced or --only, and its time is budgeted apart."""
    def register(fn):
        if name in SECTIONS:
            raise ValueError(f"two sections named {name}")
        SECTIONS[name] = SectionSpec(name, title, order, quick_seconds, full_seconds, fn, paced)
        return fn
    return register


def page(fn):
    """Register ``fn(sections, out_dir)``: a page of its own made from some sections (sim16.py's docs/sim-16.md),
    rewritten whenever results.md is, from the same (merged) sections."""
    PAGES.append(fn)
    return fn


def select(names: list[str]) -> list[SectionSpec]:
    """The sections --only names: each a section's name or a shell pattern ('sim16-*'), in results.md order."""
    exps = load_all()
    unknown = [n for n in names if not any(fnmatch.fnmatchcase(e.name, n) for e in exps)]
    if unknown:
        raise ReproError(f"no section named {', '.join(unknown)} (see --list)")
    return [e for e in exps if any(fnmatch.fnmatchcase(e.name, n) for n in names)]


def load_all() -> list[SectionSpec]:
    """Every registered section, in results.md order (importing this package's modules registers them)."""
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        importlib.import_module(f"{__name__}.{info.name}")
    return sorted(SECTIONS.values(), key=lambda e: (e.order, e.name))


# ---------------------------------------------------------------- numbers

def median(values) -> float:
    return statistics.median(values)


def fmt_spread(values, fmt: str = "{:.2f}", unit: str = "") -> str:
    """'median (min..max)' of values; one value alone is just that value."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    m = fmt.format(median(values)) + unit
    if len(values) == 1:
        return m
    return f"{m} ({fmt.format(min(values))}..{fmt.format(max(values))})"


def verdict_within(ours: float | None, target: float | None, rel: float) -> str:
    """reproduced if ours is within rel of target (relative), partially within 3*rel, else not reproduced."""
    if ours is None or target is None or target == 0:
        return "not reproduced"
    err = abs(ours - target) / abs(target)
    return "reproduced" if err <= rel else "partially" if err <= 3 * rel else "not reproduced"


def verdict_shape(holds: bool, partly: bool = False) -> str:
    """For a qualitative claim (an ordering, a trend) judged in a section's own code: reproduced if it holds,
    partially if partly. Legacy: a row declaring criteria.ordering/trend gets a shape verdict, counted apart."""
    return "reproduced" if holds else "partially" if partly else "not reproduced"


# ---------------------------------------------------------------- booting

def elapsed_us(run, app: str | None = None, job: int | None = None, key: str = "elapsed_us") -> float:
    """A job's RESULT field (elapsed_us by default), by app name (the first such job) or by job id. key
    "response_us": end_us - arrive_us, from the job's arrival (elapsed_us runs from its first dispatch)."""
    for r in run.results:
        if (job is not None and r["job"] == job) or (job is None and (app is None or r["app"] == app)):
            return float(response_us(r)) if key == "response_us" else float(r[key])
    raise ReproError(f"no RESULT for {'job ' + str(job) if job is not None else app} in this boot")


class Ctx:
    """What a section boots through: one place for QEMU, the simulator, repeats and seeds, progress.
    ``model``: the machine model every QEMU boot runs under (--model's, parsed once: a ``model.Model``, or a
    spec's text a section sets; None: no model). A section about the
    model itself (the locality results) names its own profile per boot (``boot(..., model="iris")``): that boot
    runs under it whatever --model says, and the section's rows say which profile each number comes from."""

    model: "model.Model | str | None" = None
    #: --paced: the paced sections (more harts than host cores, paced.py) run too when no --only names them
    paced: bool = False
    #: --deterministic: every QEMU boot with clock=virtual under -icount (qemu.DETERMINISTIC_FLAGS): times are
    #: instruction counts, the same on every host and at any --jobs - a check of the pipeline, not the papers'
    deterministic: bool = False

    def __init__(self, cpus: int = 2, repeat: int | None = None, quick: bool = False,
                 out: Path = REPO / "docs", progress=None, replace: bool = False, allow_busy: bool = False):
        self.cpus, self.repeat_override, self.quick, self.replace = cpus, repeat, quick, replace
        self.allow_busy = allow_busy
        self.busy_boots = 0                 # boots the busy-host check flagged (busy.py)
        self.busy_reasons: list[str] = []
        self.out = Path(out)
        # figures are drawn into a staging directory and copied to out/figures when the results are written, so
        # a run that is not written there (a busy host, a refusal) never replaces the figures already there
        self.figdir = Path(tempfile.mkdtemp(prefix="schedlab-figures-"))
        self.calib: dict | None = None
        self.boots = 0
        self.reboots = 0                    # boots run again because the busy-host check flagged them
        self._progress = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))

    def model_spec(self) -> str:
        """The canonical spec of the machine model the boots run under (``none``)."""
        from ..model import canonical
        return canonical(self.model, self.cpus)

    def reps(self, full: int, quick: int) -> int:
        """Repeats for this mode: --repeat overrides the full count (never below the quick one)."""
        if self.quick:
            return quick
        return max(self.repeat_override or full, quick)

    def progress(self, msg: str) -> None:
        self._progress(msg)

    def boot(self, tokens: str | list[str], seed: int = 1, cpus: int | None = None, timeout: float = 900,
             ok: bool = True, model: str | None = None) -> "qemu.Run":
        """One boot. ``model``: this boot's own machine-model spec ("none": explicitly none), else --model's."""
        words = tokens.split() if isinstance(tokens, str) else list(tokens)
        words = [w for w in words if not w.startswith("seed=")] + [f"seed={seed}"]
        for attempt in range(1 + BUSY_REBOOTS):
            run = executor.boot(cpus or self.cpus, words, timeout=timeout,
                                model=self.model if model is None else model, deterministic=self.deterministic)
            verdict = run.busy or busy.Verdict()    # judged where it ran (executor.run_task)
            if not verdict.busy or attempt == BUSY_REBOOTS:
                break
            # the check judges the host (the calibration card at boot, the others' CPU during it), never the
            # measured value, so booting the same scenario and seed again selects nothing but a quiet host
            self.reboots += 1
            self.progress(f"  busy host: {verdict}; booting it again")
        self.boots += 1
        reasons = list(verdict.reasons) if verdict.busy else []
        if busy.checked(run):   # not the host's fault, but as unfit to measure with: kept out of docs/ alike
            reasons.append("the kernel was built with KCHECKS=1 (make test's build): run `make` first")
        if reasons:
            self.busy_boots += 1
            new = [r for r in reasons if r not in self.busy_reasons]
            self.busy_reasons += new
            if verdict.busy or new:     # a checked kernel is said once, a busy host at every boot it shows
                self.progress(f"  busy host: {verdict}" if verdict.busy else f"  checked kernel: {reasons[-1]}")
        if (self.calib is None and run.calib and run.cpus == self.cpus
                and getattr(run, "model", "none") == self.model_spec()):
            # the run's card: this machine at --cpus harts under the run's own model (not a section's own
            # profile, whose plugin slows every instruction, nor a one-hart boot, whose ipi_ns is "na")
            self.calib = dict(run.calib)
        if ok and (run.timed_out or run.exit_code != 0):
            raise ReproError(f"boot failed (exit {run.exit_code}{', timed out' if run.timed_out else ''}): "
                             f"{' '.join(words)}\n{run.console[-800:]}")
        return run

    def repeats(self, tokens, n: int | None = None, cpus: int | None = None, first_seed: int = 1,
                model: str | None = None) -> list:
        """n boots (default: the section's reps) with seeds first_seed.. (seeds vary across repeats)."""
        return [self.boot(tokens, seed=first_seed + i, cpus=cpus, model=model) for i in range(n or self.reps(5, 2))]

    def sim(self, tokens, cpus: int, seed: int = 1) -> "qemu.Run":
        if self.model_spec() != "none":
            raise ReproError(f"this section compares the simulator with QEMU, and the simulator has no machine "
                             f"model yet: it cannot run under --model {self.model_spec()}")
        words = (tokens.split() if isinstance(tokens, str) else list(tokens)) + [f"seed={seed}"]
        run = executor.sim_run(cpus, words)
        if not run.ok:
            raise ReproError(f"simulated run failed: {' '.join(words)}\n{run.console[-800:]}")
        return run


# ---------------------------------------------------------------- the command

def expected_minutes(exps: list[SectionSpec], quick: bool, paced: bool = False) -> float:
    """The one time estimate (--list, --help, the plan line; README quotes it rounded, tests/test_reproduce.py
    checks): the sections' declared seconds at --cpus 2, summed - those of the paced sections (--paced) apart."""
    return sum(e.quick_seconds if quick else e.full_seconds for e in exps if e.paced == paced) / 60


def plan_line(exps: list[SectionSpec], quick: bool) -> str:
    paced = expected_minutes(exps, quick, paced=True)
    return (f"{len(exps)} sections, expected {expected_minutes(exps, quick):.1f} min at --cpus 2 "
            f"({'quick' if quick else 'full'})" + (f" and {paced:.1f} min of paced sections" if paced else ""))


def run(names: list[str] | None, ctx: Ctx, write: bool = True) -> list[Section]:
    exps = select(names) if names else [e for e in load_all() if not e.paced or ctx.paced]
    ctx.only = list(names or [])
    if write:
        check_destination(exps if names else None, ctx)
    ctx.progress("reproduce: " + plan_line(exps, ctx.quick))
    # sections run side by side (executor.cooperative) as far as the executor runs boots at once: each with
    # its own Ctx counters, merged in results.md order, so the output is the sequential run's
    width = executor.current().slots
    sections = [section for section, _ in executor.cooperative(
        [functools.partial(_run_section, exp, ctx, f"[{i}/{len(exps)}]", width > 1)
         for i, exp in enumerate(exps, 1)], width)]
    for section in sections:
        ctx.boots += section.boots
        ctx.busy_boots += section.busy_boots
        ctx.reboots += section.reboots
        ctx.busy_reasons += [r for r in section.busy_reasons if r not in ctx.busy_reasons]
        ctx.calib = ctx.calib or section.calib
    if write:
        if ctx.busy_boots and not ctx.allow_busy and busy.inside_docs(ctx.out):
            away = REPO / "build" / "reproduce-busy"
            ctx.progress(f"reproduce: {ctx.busy_boots} of {ctx.boots} boots ran on a busy host or a checked kernel "
                         f"({'; '.join(ctx.busy_reasons[:3])}): not writing {ctx.out}, which holds only quiet "
                         f"measurements; writing {away} instead (--allow-busy writes docs/ anyway)")
            ctx.out, ctx.replace = away, True
        write_results(sections, ctx, partial=bool(names))
        shutil.rmtree(ctx.figdir, ignore_errors=True)      # the staged figures are in ctx.out/figures now
    return sections


def _run_section(exp: SectionSpec, ctx: Ctx, number: str, side_by_side: bool) -> Section:
    """One section, booting through a copy of ``ctx`` whose counters are its own."""
    own = copy.copy(ctx)
    own.boots, own.busy_boots, own.busy_reasons, own.calib, own.reboots = 0, 0, [], None, 0
    ctx.progress(f"{number} {exp.name}: {exp.title}")
    if side_by_side:            # lines of sections side by side interleave: each says whose it is
        own._progress = lambda msg, say=ctx._progress: say(f"{exp.name}: {msg.strip()}")
    start = time.monotonic()
    try:
        section = exp.fn(own)
    except Exception as exc:        # noqa: BLE001 - one section's failure must not cost the others
        section = Section(exp.name, exp.title, "-", "-", [], "", error=section_error(exc))
        own.progress(f"  FAILED: {section.error.splitlines()[0]}")
    section.seconds = time.monotonic() - start
    section.boots, section.busy_boots, section.reboots = own.boots, own.busy_boots, own.reboots
    section.busy_reasons, section.calib = own.busy_reasons, own.calib      # merged by run(), then dropped
    own.progress(f"  {section.seconds:.0f} s")
    return section


def section_error(exc: BaseException) -> str:
    """What results.md says about a section that raised: a failed boot's message as it is; anything else (a bug
    in the section, a Row without its reason) with its type and where it was raised, so it can be fixed."""
    if isinstance(exc, ReproError):
        return str(exc) or "ReproError"
    where = traceback.extract_tb(exc.__traceback__)
    last = f" (at {Path(where[-1].filename).name}:{where[-1].lineno})" if where else ""
    return f"{type(exc).__name__}: {exc}{last}"


def _written(ctx: Ctx, sections: list[Section], partial: bool) -> dict:
    """What the header says about one run of the command (kept in results.json for later merges)."""
    only = ",".join(getattr(ctx, "only", None) or [s.name for s in sections])
    only = f"'{only}'" if any(c in only for c in "*?[") else only       # a pattern, quoted for the shell
    return {"command": f"tools/schedlab reproduce{' --quick' if ctx.quick else ''}"
                       f"{' --deterministic' if ctx.deterministic else ''}"
                       f"{' --only ' + only if partial else ''} --cpus {ctx.cpus}",
            "date": time.strftime("%Y-%m-%d"), "host": platform.node() or "?", "cores": os.cpu_count(),
            "load": round(os.getloadavg()[0], 2), "boots": ctx.boots, "busy_boots": ctx.busy_boots,
            "reboots": getattr(ctx, "reboots", 0),
            "minutes": round(sum(s.seconds for s in sections) / 60, 1),
            "calib": " ".join(f"{k}={v}" for k, v in (ctx.calib or {}).items()) or "none",
            "model": ctx.model_spec(), "deterministic": ctx.deterministic}


def _reboot_words(n: int) -> str:
    return (f" ({n} more booted again because the busy-host check flagged them, tools/py/schedlab/busy.py: "
            "each result is from a boot the check passed)") if n else ""


def _header(ctx: Ctx, written: dict, reruns: list[dict]) -> list[str]:
    w = written
    since = "".join(f" Re-run since: `{r['command']}` on {r['date']} ({r['boots']} boots, load average {r['load']:.2f} "
                    "at the end)." for r in reruns)
    return [
        "# Results: the papers' headline numbers, regenerated",
        "",
        f"Written by `{w['command']}` on {w['date']}, host {w['host']} ({w['cores']} cores, load average "
        f"{w['load']:.2f} at the end), QEMU at {ctx.cpus} harts; {w['boots']} boots in {w['minutes']:.1f} min"
        f"{_reboot_words(w.get('reboots', 0))}. "
        f"Calibration card of the first boot: `{w['calib']}`.{_model_sentence(w)}{_clock_sentence(w)}{since} Every "
        "number here is "
        "produced by "
        f"{'those commands' if reruns else 'that command'} (the raw numbers are in results.json); nothing is "
        "written by hand.",
        "",
        "Each table: the paper's number as printed | what the paper's own model predicts for our machine and "
        "sizes (tools/py/schedlab/reproduce/models.py, from constants measured here) | ours, median "
        "(min..max) over the repeats, seeds varied | the verdict, computed from the numbers. A row with a declared "
        "criterion (tools/py/schedlab/reproduce/criteria.py; results.json carries it and the measurements that "
        "fed it) says it in words beside its verdict: *reproduced* / *partially* / *not reproduced* compare a "
        "number with the paper's, *shape reproduced* / *shape not reproduced* an ordering or a trend, *measured* "
        "has nothing in the paper to judge it by (no verdict), *(simulated)* marks the simulator's numbers judged "
        "by the same criterion, and *not on this machine* a claim about more processors than were run (judged by "
        "paced runs where they exist). A slowdown is a time in the mix over the time alone, of the RESULT key each "
        "section's scenario names: par_us (the parallel part, as the papers time it) or response_us (end_us - "
        "arrive_us: from the job's arrival, so a wait for its first dispatch counts); sections last run before "
        "that definition name elapsed_us (from the first dispatch).",
        "",
    ]


def _clock_sentence(written: dict) -> str:
    return (" Every boot ran in deterministic mode (--deterministic: clock=virtual, one instruction a nanosecond, "
            "harts taking turns on one host thread): its times are instruction counts, the same on any host, not "
            "the papers' wall-clock measure." if written.get("deterministic") else "")


def _model_sentence(written: dict) -> str:
    spec = written.get("model", "none")
    return "" if spec == "none" else (f" Every boot ran under the machine model `{spec}` (tools/model/README.md): "
                                      "caches and memory latencies cost time, as docs/guide/machine-model.md says.")


def check_model_destination(ctx: Ctx) -> None:
    """Refuse, before any boot, to write into results made under another machine model (none counts as one):
    an --only run would merge its sections with them, a whole run would replace them."""
    path = ctx.out / "results.json"
    if not path.is_file():
        return
    try:
        there = json.loads(path.read_text()).get("model", "none")
    except (OSError, ValueError, AttributeError):
        return          # unreadable: write_results says so
    here = ctx.model_spec()
    if there != here:
        raise ReproError(f"{path} holds results made under model={there}; this run is under model={here}: "
                         "records of different machine models are never merged or mixed. Write elsewhere with "
                         "--out DIR (e.g. --out build/reproduce-model), or run under the same --model.")


def render(sections: list[Section], ctx: Ctx, partial: bool = False, written: dict | None = None,
           reruns: list[dict] | None = None) -> str:
    lines = _header(ctx, written or _written(ctx, sections, partial), reruns or [])
    lines += [verdict_counts(sections)]
    held = [s.data["headline"] for s in sections if s.name == "sim-validation" and s.data.get("headline")]
    if held:  # the held-out set only (sim_validate_heldout.py): nothing the simulator was fitted to is counted
        lines += ["The simulator's validation against QEMU, on held-out cases: " + "; ".join(
            line.strip() for line in held[0][1:] if not line.strip().startswith("tolerances")) + "."]
    sim16 = [s for s in sections if s.name.startswith("sim16-")]
    if sim16:
        lines += [f"The papers' 16-processor results in the simulator: {sum(len(s.rows) for s in sim16)} cases in "
                  f"{len(sim16)} sections (simulated, not measured; also on one page, sim-16.md)."]
    lines += [""]
    for s in sections:
        lines += [f"## {s.title}", "", f"*{s.source}*  (`--only {s.name}`, {s.seconds:.0f} s)", ""]
        if s.busy_boots:
            # the reasons are this run's; a section kept from an earlier run has only its count
            why = f"; this run's reasons: {'; '.join(ctx.busy_reasons[:3])}" if ctx.busy_reasons else ""
            lines += [f"**BUSY HOST: {s.busy_boots} of {s.boots} boots of this section ran on a busy host or a "
                      f"checked kernel** (tools/py/schedlab/busy.py{why}): its times do not measure the plain "
                      "kernel.", ""]
        if s.error:
            lines += ["This section failed to run:", "", "```", s.error.strip(), "```", ""]
            continue
        lines += [f"Scenario: {s.scenario}", "",
                  "| result | paper | model | ours | verdict |", "|---|---|---|---|---|"]
        for r in s.rows:
            verdict = r.verdict + (f": {r.why}" if r.why else "")
            if r.criterion and r.criterion["kind"] != "measured":
                verdict += f" (criterion: {cr.Criterion.from_dict(r.criterion).words()})"
            lines.append(f"| {r.label} | {r.paper} | {r.model} | {r.ours} | {verdict} |")
        lines += ["", s.notes, ""]
        lines += [f"![{f}](figures/{f})" for f in s.figures] + ([""] if s.figures else [])
    return "\n".join(lines).rstrip() + "\n"


def counts(sections: list[Section]) -> dict:
    """The header's columns over the papers' rows: every section but the simulator's validation (sim-*)."""
    return cr.tally([r for s in sections if not s.name.startswith("sim-") for r in s.rows])


def verdict_counts(sections: list[Section]) -> str:
    return cr.tally_words(counts(sections))


#: section name -> fn(data, cpus, old) -> rows: a section whose rows the framework can rebuild from its stored
#: measurements and its declared criteria, without booting (``rejudge``); old: the stored rows by label (a
#: column the data cannot give again, e.g. a model's per-seed prediction, is taken from there)
RESTATE: dict[str, Callable] = {}


def restates(name: str):
    """Register ``fn(data, cpus, old=None) -> list[Row]``: ``name``'s rows from its stored data (the section's own
    run uses the same function, so a stored run and a fresh one are judged alike)."""
    def register(fn):
        RESTATE[name] = fn
        return fn
    return register


def _row(r: dict) -> Row:
    """A stored row; an old one that called a bare measurement reproduced becomes measured."""
    if not r.get("criterion") and r["verdict"] in cr.PASSING and r["paper"].strip() in ("", "-"):
        r = {**r, "verdict": cr.MEASURED, "why": ""}
    return Row(**r)


def _load_sections(doc: dict, restate: bool = False) -> list[Section]:
    cpus = doc.get("cpus", 2)
    load_all()
    out = []
    for s in doc["sections"]:
        old = {r["label"]: r for r in s["rows"]}
        rows = (RESTATE[s["name"]](s["data"], cpus, old) if restate and s["name"] in RESTATE and not s.get("error")
                else [_row(r) for r in s["rows"]])
        out.append(Section(**{**s, "rows": rows}))
    return out


def rejudge(out: Path = REPO / "docs") -> Path:
    """Rewrite results.md and results.json from results.json alone, no boot (regenerate.py)."""
    from .regenerate import rejudge as from_stored
    return from_stored(Path(out))


def _mode(cpus, quick) -> str:
    return f"{'--quick' if quick else 'full'} at --cpus {cpus}"


def check_destination(only: list[SectionSpec] | None, ctx: Ctx) -> None:
    """Refuse, before any boot, a run whose writing would drop results already in ctx.out: results written with
    another --cpus or --quick (an --only run merges only into results of its own kind, and a whole run would
    replace them), or a results.json this command cannot read. ``ctx.replace`` (--replace) allows it."""
    path = ctx.out / "results.json"
    if ctx.replace or not path.is_file():
        return
    elsewhere = ("write elsewhere with --out DIR (e.g. --out build/reproduce), or pass --replace (with --only: "
                 "these sections replace theirs and the others are kept; a whole run discards what is there)")
    try:
        doc = json.loads(path.read_text())
        kept = [s["name"] for s in doc["sections"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReproError(f"{path} is unreadable ({exc}), so its results could be neither merged nor kept: move it "
                         f"away, {elsewhere}") from None
    if doc.get("cpus") == ctx.cpus and bool(doc.get("quick")) == ctx.quick:
        return
    differs = [f"--quick ({'it' if doc.get('quick') else 'this run'} has fewer repeats and points)"
               if bool(doc.get("quick")) != ctx.quick else "",
               f"--cpus ({doc.get('cpus')} there, {ctx.cpus} here)" if doc.get("cpus") != ctx.cpus else ""]
    what = (f"--only {','.join(e.name for e in only)} merges only into results of the same --cpus and --quick"
            if only else "a whole run would replace them")
    lost = [n for n in kept if not only or n not in {e.name for e in only}]
    raise ReproError(f"{path} holds {len(kept)} sections of a {_mode(doc.get('cpus'), doc.get('quick'))} run; this "
                     f"run is {_mode(ctx.cpus, ctx.quick)}: they differ in {' and '.join(d for d in differs if d)}. "
                     f"{what}, and writing would drop {len(lost)} sections ({', '.join(lost[:4])}"
                     f"{', ...' if len(lost) > 4 else ''}). Nothing was run: re-run with the same --cpus"
                     f"{' and --quick' if doc.get('quick') else ' and without --quick'}, {elsewhere}.")


def _merge(sections: list[Section], ctx: Ctx) -> tuple[list[Section], dict, list[dict]] | None:
    """An --only run replaces its sections in the results already in ctx.out, when those came from a run with
    the same --cpus and --quick; None when there is nothing to merge into."""
    path = ctx.out / "results.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
        old = _load_sections(doc)
    except (ValueError, KeyError, TypeError) as exc:
        ctx.progress(f"reproduce: {path} is unreadable ({exc}); --replace: writing only the sections run")
        return None
    # another --cpus or --quick is written only with --replace (check_destination): its sections replace theirs
    # and the others stay, under the file's own mode (each re-run's command in the header says its own)
    if (doc.get("cpus") != ctx.cpus or bool(doc.get("quick")) != ctx.quick) and not ctx.replace:
        return None
    order = {e.name: e.order for e in load_all()}
    new = {s.name: s for s in sections}
    if busy.inside_docs(ctx.out):       # docs/ never trades a section's results for a failed run of it
        kept = [o.name for o in old if o.name in new and new[o.name].error and not o.error]
        for name in kept:
            del new[name]
        if kept:
            ctx.progress(f"reproduce: {', '.join(kept)} failed to run: the results already in {ctx.out} are kept")
    merged = [new.pop(s.name, s) for s in old if s.name in order] + list(new.values())
    merged.sort(key=lambda s: (order.get(s.name, 1 << 30), s.name))
    written = doc.get("written") or {"command": f"tools/schedlab reproduce --cpus {ctx.cpus}", "date": "an earlier "
                                     "date", "host": "?", "cores": "?", "load": 0.0, "boots": "?", "minutes": 0.0,
                                     "calib": "none"}
    reruns = [r for r in doc.get("reruns", []) if not set(r["sections"]) <= {s.name for s in sections}]
    mode = (doc.get("cpus", ctx.cpus), bool(doc.get("quick", ctx.quick)))
    return merged, written, reruns + [{**_written(ctx, sections, True), "sections": [s.name for s in sections]}], mode


def write_results(sections: list[Section], ctx: Ctx, partial: bool = False) -> Path:
    """results.md and results.json in ctx.out. A partial (--only) run is merged into the results there, so
    regenerating one section keeps the others; the header says which sections were re-run, when."""
    merged = _merge(sections, ctx) if partial else None
    if merged:
        sections, written, reruns, mode = merged
        if mode != (ctx.cpus, ctx.quick):       # the file keeps its mode; this run's is in its re-run line
            ctx = copy.copy(ctx)
            ctx.cpus, ctx.quick = mode
    else:
        written, reruns = _written(ctx, sections, partial), []
    ctx.out.mkdir(parents=True, exist_ok=True)
    for name in {f for s in sections for f in s.figures}:
        if (ctx.figdir / name).is_file():
            (ctx.out / "figures").mkdir(exist_ok=True)
            shutil.copyfile(ctx.figdir / name, ctx.out / "figures" / name)
    md = ctx.out / "results.md"
    md.write_text(render(sections, ctx, partial, written, reruns))
    pages = [doc for write in PAGES if (doc := write(sections, ctx.out))]
    (ctx.out / "results.json").write_text(dumps(
        {"cpus": ctx.cpus, "quick": ctx.quick, "model": ctx.model_spec(), "calib": ctx.calib, "written": written,
         "reruns": reruns,
         "sections": [asdict(s) for s in sections]}, indent=1, default=str) + "\n")
    ctx.progress(f"reproduce: wrote {md}{''.join(', ' + str(d) for d in pages)} and {ctx.out / 'results.json'}"
                 + (f" ({len(sections)} sections, the ones not run kept from before)" if merged else ""))
    return md
