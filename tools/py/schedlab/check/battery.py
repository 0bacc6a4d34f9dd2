"""The battery: which boots a check makes (mixes x topologies) and what each named check asks of them.

Topologies. QEMU in deterministic mode (``clock=virtual``: the same console on any host, so a verdict never
depends on the host) at 1-4 harts, perturbed too (``perturb=<seed>,depth=3``, the explorer's schedules:
kernel/perturb.h), with two NUMA nodes (``-numa``), and under the machine model (``modern``: two nodes; in
deterministic mode it counts, never charges); the simulator at 8-64 harts, with and without the model, where
the simulator could be built with the policy. ``--quick`` keeps one of each kind.

Mixes (each sized by the topology's harts H; the policy and ``seed=1`` first):

* ``contract`` (QEMU): chaos - random syscalls and faults in every process - beside three healthy jobs.
* ``churn``: jobs of every width that arrive staggered, block, spin and sleep, traced (``trace=on``).
* ``share``: 2H/W compute-bound jobs (``hog``) of width W = max(1, H/8), kept alive by a sleeper, traced;
  under ``share tickets`` half of them carry 1 ticket and half 3.

Checks (a check is judged on every boot that feeds it, per topology):

* ``contract``: the boot ends (no TIMEOUT) with no PANIC (a checked kernel: the hook rules and lock ranks
  asserted), every job prints its RESULT and every healthy job says check=ok (no deadlock, no lost verdict),
  and no process runs on two harts at once (trace).
* ``progress``: no ready process waits longer than K x jobs quanta (K: the policy's ``progress``, default 2;
  ``none`` for a policy that never preempts, which is then not booted on the share mix) plus 500 us of
  dispatch latency; waits of a job holding no hart (space sharing) are not counted - that job ending at all
  is the contract.
* ``work-conservation`` (declared): no hart is idle while a process waits ready longer than a quantum +
  500 us; measured as the idle time overlapping such waits, which must be 0.
* ``fairness`` (declared share): in the share mix's window (every job started, none ended; at least
  ``MIN_WINDOW_QUANTA`` quanta), each job's - under ``tickets``, each ticket class's - share of hart time is
  within ``SHARE_TOLERANCE`` (relative) of the declared one: equal, by tickets, or by the mean allotment.
  Under ``draws`` (a lottery) each ticket class's wins of the window's draws are within ``BINOMIAL_Z``
  standard deviations of the wins its tickets promise (``judge_draws``).
* ``invariants`` (declared): each named invariant of declare.INVARIANTS holds in every trace.

A perturbed boot stops harts for up to 2.5 ms of virtual time on purpose (kernel/perturb.h), as a host
preempting a vCPU would: there the checks about time (progress, work conservation, fairness, the
``coscheduled`` invariant) would measure the perturbation, so perturbed topologies judge the contract and the
invariants about order (``bound``, ``disjoint-partitions``, ``job-fifo``) - what perturbation is for: the rare
interleavings that lose a wake-up, a verdict or a process.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

from .. import gangcheck, trace as tr
from . import measure
from .declare import Declaration

GRACE_US = 500.0
SHARE_TOLERANCE = 0.25
#: Standard deviations a drawing policy's wins may be off by (share draws).
BINOMIAL_Z = 3.0
MIN_WINDOW_QUANTA = 50
HOSTILE = {"chaos", "fault", "scribble"}
TICKETS = ("tickets", "draws")          # the shares a per-job key carries
CHECKS = ("contract", "progress", "work-conservation", "fairness", "invariants")
#: mix -> the checks judged on its boots (contract on every boot)
#: Why a perturbed boot judges no time: kernel/perturb.h stops harts for up to 2.5 ms of virtual time on purpose.
PERTURBED = ("perturbed boots stop harts for up to 2.5 ms on purpose (kernel/perturb.h): waits, idle time, shares "
             "and coscheduling would measure the perturbation; they judge the contract and order invariants")
#: Invariants about time (judged with a grace), not order: not judged on perturbed boots.
TIMED_INVARIANTS = {"coscheduled"}
FEEDS = {"contract": ("contract",), "churn": CHECKS, "share": CHECKS}
NUMA2 = ("-object memory-backend-ram,id=m0,size=128M -object memory-backend-ram,id=m1,size=128M "
         "-numa node,memdev=m0,cpus=0-{a},nodeid=0 -numa node,memdev=m1,cpus={b}-{c},nodeid=1")


@dataclass(frozen=True)
class Topology:
    name: str
    engine: str                     # qemu | sim
    harts: int
    perturb: bool = False
    nodes: int = 1
    model: str | None = None

    @property
    def extra(self) -> str:
        if self.engine != "qemu" or self.nodes < 2 or self.model:      # a model brings its own NUMA map
            return ""
        half = self.harts // 2
        return NUMA2.format(a=half - 1, b=half, c=self.harts - 1)


def _t(engine, harts, perturb=False, nodes=1, model=None) -> Topology:
    name = f"{engine}-{harts}" + ("-perturb" if perturb else "") + ("-2nodes" if nodes > 1 and not model else "") \
        + (f"-{model}" if model else "")
    return Topology(name, engine, harts, perturb, 2 if model else nodes, model)


FULL = [_t("qemu", 1), _t("qemu", 2), _t("qemu", 3), _t("qemu", 4), _t("qemu", 2, True), _t("qemu", 4, True),
        _t("qemu", 4, nodes=2), _t("qemu", 2, model="modern"),
        _t("sim", 8), _t("sim", 16), _t("sim", 32), _t("sim", 64), _t("sim", 16, model="modern")]
QUICK = [_t("qemu", 2), _t("qemu", 2, True), _t("sim", 8)]


@dataclass
class Case:
    """One boot of the battery."""
    mix: str
    topo: Topology
    tokens: str
    jobs: dict = field(default_factory=dict)    # job id -> {"app": name, "tickets": n}

    @property
    def id(self) -> str:
        return f"{self.mix}@{self.topo.name}"


def contract_mix(h: int) -> list[str]:
    return ["quantum=2ms timeout=60s", "job=chaos:mode=random,calls=500,procs=2", "job=chaos:mode=faults,procs=4",
            f"job=gauss:n=64,barrier=block,procs={h}", f"job=oddeven:n=200,barrier=block,procs={h}",
            f"job=synth:grain=100,iters=100,barrier=block,procs={h}"]


def churn_mix(h: int) -> list[str]:
    return ["quantum=500us trace=on timeout=60s", f"job=synth:procs={h},iters={max(20, min(150, 1200 // h))},grain=1000,barrier=block",
            f"job=gauss:n={max(48, 2 * h)},procs={h},barrier=spin,at=1ms", "job=sleeper:iters=5,sleep_us=300,work=500",
            f"job=oddeven:n={max(256, 8 * h)},procs={max(1, h // 2)},barrier=block,at=3ms",
            "job=synth:procs=1,iters=80,at=2ms"]


def share_mix(h: int, decl: Declaration) -> list[str]:
    width = max(1, h // 8)
    count = 2 * h // width
    tokens = ["quantum=200us trace=on timeout=60s", "job=sleeper:iters=30,sleep_us=500,work=200"]
    for i in range(count):
        keys = f"procs={width}" + (f",{decl.share_key}={1 if i < count // 2 else 3}" if decl.share in TICKETS else "")
        tokens.append(f"job=hog:{keys}")
    return tokens


def cases(policy: str, decl: Declaration, topologies: list[Topology]) -> list[Case]:
    out = []
    for topo in topologies:
        mixes = {"churn": churn_mix(topo.harts)}
        if decl.progress:                           # progress none: hogs would keep their harts for ever
            mixes["share"] = share_mix(topo.harts, decl)
        if topo.engine == "qemu" and not topo.model:
            mixes = {"contract": contract_mix(topo.harts), **mixes}
        for mix, tokens in mixes.items():
            words = [f"policy={policy}", "seed=1", *tokens]
            if topo.perturb:
                words.append(f"perturb={zlib.crc32(f'{mix}@{topo.name}'.encode()) % 100000 + 1},depth=3")
            out.append(Case(mix, topo, " ".join(words)))
    return out


# ---------------------------------------------------------------- judging one boot

@dataclass
class Verdict:
    check: str
    status: str                     # pass | fail | not-declared | not-run
    detail: str = ""
    value: float | None = None      # the measured number the check compared (rubrics read it)


def healthy_jobs(run) -> list[dict]:
    return [r for r in run.results if r.get("app") not in HOSTILE]


def judge_contract(run, trace) -> Verdict:
    if run.timed_out:
        return Verdict("contract", "fail", "TIMEOUT: the boot did not end")
    if run.panics:
        return Verdict("contract", "fail", run.panics[0])
    if run.summary is None:
        return Verdict("contract", "fail", f"no SUMMARY ({run.verdict}" + (f": {run.errors[0]}" if run.errors else "")
                       + ")")
    if len(run.results) != run.summary.get("jobs"):
        return Verdict("contract", "fail", f"{len(run.results)} RESULT lines for {run.summary.get('jobs')} jobs")
    bad = [r for r in healthy_jobs(run) if r.get("check") != "ok"]
    if bad:
        why = " ".join(f"{k}={v}" for k, v in bad[0].items() if k in ("job", "app", "check", "reason", "error"))
        return Verdict("contract", "fail", f"job {bad[0].get('job')} ({bad[0].get('app')}) ended badly: {why}")
    if trace is not None:
        twice = measure.double_runs(trace)
        if twice:
            job, proc, at = twice[0]
            return Verdict("contract", "fail", f"process {job}.{proc} ran on two harts at once at {at:.0f} us")
    return Verdict("contract", "pass", "")


def judge_progress(trace, decl: Declaration) -> Verdict:
    if not decl.progress:
        return Verdict("progress", "not-declared")
    jobs = len({r.job for r in trace.records if r.job > 0})
    bound = decl.progress * jobs * trace.quantum_us + GRACE_US
    reps = measure.allotments(trace)
    counted = [w for w in measure.waits(trace) if not measure.unallotted(reps, w)]
    never = [w for w in counted if not w.ran]
    if never:
        w = never[0]
        return Verdict("progress", "fail", f"process {w.job}.{w.proc} waited ready from {w.start_us:.0f} us and "
                       "never ran: starved", float("inf"))
    worst = max(counted, key=lambda w: w.us, default=None)
    quanta = worst.us / trace.quantum_us if worst else 0.0
    if worst and worst.us > bound:
        return Verdict("progress", "fail", f"process {worst.job}.{worst.proc} waited ready {worst.us:.0f} us "
                       f"({quanta:.1f} quanta) from {worst.start_us:.0f} us; the bound is {decl.progress} x {jobs} "
                       f"jobs quanta + {GRACE_US:.0f} us = {bound:.0f} us", quanta)
    return Verdict("progress", "pass", f"longest ready wait {quanta:.1f} quanta (bound {decl.progress * jobs})", quanta)


def judge_work_conservation(trace, decl: Declaration) -> Verdict:
    if not decl.work_conserving:
        return Verdict("work-conservation", "not-declared")
    idle = measure.idle_spans(trace)
    grace = trace.quantum_us + GRACE_US
    lost, worst = 0.0, None
    for w in measure.waits(trace):
        if w.us <= grace:
            continue
        over = measure.overlap_us((w.start_us + grace, w.end_us), idle)
        lost += over
        if over > 1.0 and (worst is None or over > worst[1]):
            worst = (w, over)
    if worst:
        w, over = worst
        return Verdict("work-conservation", "fail", f"harts idled {lost:.0f} us in all while processes waited ready "
                       f"past a quantum; e.g. {w.job}.{w.proc} waited from {w.start_us:.0f} us with a hart idle "
                       f"{over:.0f} us of it", lost)
    return Verdict("work-conservation", "pass", "no hart idle while a process waited past a quantum", 0.0)


def expected_shares(case: Case, trace, decl: Declaration, span) -> dict[int, float] | str:
    """job -> the share the declaration promises in ``span``, or why it cannot be judged."""
    jobs = [j for j, info in case.jobs.items() if info["app"] == "hog"]
    if decl.share == "equal":
        return {j: 1.0 / len(jobs) for j in jobs}
    if decl.share == "per-hart":
        return _per_hart_shares(trace, jobs, span)
    if decl.share == "tickets":
        total = sum(case.jobs[j]["tickets"] for j in jobs)
        return {j: case.jobs[j]["tickets"] / total for j in jobs}
    reps = measure.allotments(trace) or {}
    held = {j: measure.mean_allotment(reps.get(j), span) for j in jobs}
    if sum(held.values()) <= 0:
        return "the trace shows no allotment (rep records) for the competing jobs"
    return {j: h / sum(held.values()) for j, h in held.items()}


def _per_hart_shares(trace, jobs, span) -> dict[int, float]:
    """The competing jobs' time on each hart split equally among their processes whose home it is in ``span``
    (the hart a process ran on longest there: a move at a repartition does not count it twice; the time a
    non-competitor - the sleeper - took from a hart is nobody's share)."""
    where, on_hart = {}, {}
    for i in tr.intervals(trace):
        if i.job in jobs:
            took = max(0.0, min(span[1], i.end_us) - max(span[0], i.start_us))
            per = where.setdefault((i.job, i.proc), {})
            per[i.hart] = per.get(i.hart, 0.0) + took
            on_hart[i.hart] = on_hart.get(i.hart, 0.0) + took
    homes = {key: max(per, key=per.get) for key, per in where.items() if max(per.values()) > 0}
    count = {}
    for hart in homes.values():
        count[hart] = count.get(hart, 0) + 1
    want = dict.fromkeys(jobs, 0.0)
    for (job, _), hart in homes.items():
        want[job] += on_hart[hart] / count[hart]
    total = sum(want.values()) or 1.0
    return {j: w / total for j, w in want.items()}


def judge_fairness(case: Case, trace, decl: Declaration) -> Verdict:
    if decl.share == "none" or case.mix != "share":
        return Verdict("fairness", "not-declared" if decl.share == "none" else "not-run")
    hogs = [j for j, info in case.jobs.items() if info["app"] == "hog"]
    span = measure.window(trace, hogs)
    if span is None or span[1] - span[0] < MIN_WINDOW_QUANTA * trace.quantum_us:
        got = 0 if span is None else (span[1] - span[0]) / trace.quantum_us
        return Verdict("fairness", "fail", f"the window in which every job competes is {got:.0f} quanta, under "
                       f"{MIN_WINDOW_QUANTA}: a job ended (or never ran) too early to judge its share")
    if decl.share == "draws":
        return judge_draws(case, trace, decl, hogs, span)
    want = expected_shares(case, trace, decl, span)
    if isinstance(want, str):
        return Verdict("fairness", "fail", want)
    got = measure.hart_time(trace, span)
    total = sum(got.get(j, 0.0) for j in hogs)
    groups = {}                     # tickets: one group per ticket value; else one per job
    for j in hogs:
        groups.setdefault(case.jobs[j]["tickets"] if decl.share == "tickets" else j, []).append(j)
    worst = (0.0, None, 0.0, 0.0)
    for key, members in groups.items():
        e = sum(want[j] for j in members)
        m = sum(got.get(j, 0.0) for j in members) / total if total else 0.0
        off = abs(m / e - 1) if e > 0 else (0.0 if m < 0.02 else float("inf"))
        if off >= worst[0]:
            worst = (off, key, m, e)
    off, key, m, e = worst
    who = f"the jobs with {decl.share_key}={key}" if decl.share == "tickets" else f"job {key}"
    text = (f"{who} got {m:.3f} of the hart time over {(span[1] - span[0]) / trace.quantum_us:.0f} quanta, "
            f"declared {e:.3f} ({decl.share}): {off:.0%} off, tolerance {SHARE_TOLERANCE:.0%}")
    return Verdict("fairness", "fail" if off > SHARE_TOLERANCE else "pass", text, off)


def judge_draws(case: Case, trace, decl: Declaration, hogs: list[int], span) -> Verdict:
    """A lottery's promise over the window: every dispatch there is a draw among the jobs with a ready
    process (and the winner), which a job holding t of the pool's T tickets wins with probability p = t / T.
    A ticket class's wins are then a sum of independent Bernoulli draws: expected sum(p), variance
    sum(p (1 - p)) (Waldspurger and Weihl, Lottery Scheduling, OSDI 1994, section 2.2: wins are binomial,
    the first win geometric). The class's wins must be within BINOMIAL_Z standard deviations of that."""
    tickets = {j: info["tickets"] for j, info in case.jobs.items()}
    group = {j: tickets[j] for j in hogs}
    want, var, won = {}, {}, {}
    draws = 0
    for _, winner, pool in measure.draws(trace, span):
        total = sum(tickets.get(j, 1) for j in pool)
        draws += 1
        for key in set(group.values()):
            p = sum(tickets[j] for j in pool if group.get(j) == key) / total
            want[key] = want.get(key, 0.0) + p
            var[key] = var.get(key, 0.0) + p * (1 - p)
        if winner in group:
            won[group[winner]] = won.get(group[winner], 0) + 1
    worst = None
    for key in sorted(want):
        if want[key] <= 0:
            continue
        off = abs(won.get(key, 0) / want[key] - 1)
        allowed = BINOMIAL_Z * math.sqrt(var[key]) / want[key]
        if worst is None or off - allowed > worst[0] - worst[1]:
            worst = (off, allowed, key)
    if worst is None:
        return Verdict("fairness", "fail", "no draw in the window had a competing job in its pool")
    off, allowed, key = worst
    text = (f"the jobs with {decl.share_key}={key} won {won.get(key, 0)} of {draws} draws over "
            f"{(span[1] - span[0]) / trace.quantum_us:.0f} quanta, their tickets promise {want[key]:.1f} "
            f"(sd {math.sqrt(var[key]):.1f}): {off:.0%} off, tolerance {allowed:.0%} ({BINOMIAL_Z:.0f} sd)")
    return Verdict("fairness", "fail" if off > allowed else "pass", text, off)


def invariant_problem(name: str, trace) -> str | None:
    if name == "coscheduled":
        bad = {j: c for j, c in gangcheck.gang_violations(trace, grace_us=GRACE_US).items() if c.fraction > 0}
        if bad:
            job, c = next(iter(bad.items()))
            return f"coscheduled: job {job}'s processes ran {c.fraction:.1%} of their time while a member waited ready"
    elif name == "disjoint-partitions":
        return _partition_problem(trace)
    elif name == "bound":
        harts = {}
        for r in trace.records:
            if r.event == "run":
                harts.setdefault((r.job, r.proc), set()).add(r.hart)
        moved = sorted(k for k, v in harts.items() if len(v) > 1)
        if moved:
            job, proc = moved[0]
            return f"bound: process {job}.{proc} ran on harts {sorted(harts[moved[0]])}"
    elif name == "job-fifo":
        return _fifo_problem(measure.waits(trace))
    return None


def _partition_problem(trace) -> str | None:
    """Between two repartitions, while no more jobs hold harts than there are harts, each hart runs
    processes of one job only (with more jobs than harts, partitions are shared: allot.h)."""
    reps = measure.allotments(trace) or {}
    cuts = sorted({t for steps in reps.values() for t, _ in steps})
    owners = {}
    for r in trace.records:
        if r.event == "run" and cuts and r.time_us >= cuts[0]:
            epoch = sum(1 for t in cuts if t <= r.time_us)
            owners.setdefault((epoch, r.hart), set()).add(r.job)
    for (epoch, hart), jobs in sorted(owners.items()):
        start = cuts[epoch - 1]
        holding = [j for j, steps in reps.items() if measure.allotment_at(steps, start) > 0]
        if len(jobs) > 1 and len(holding) <= trace.harts:
            return (f"disjoint-partitions: hart {hart} ran jobs {sorted(jobs)} between repartitions {epoch} and "
                    f"{epoch + 1} (from {start:.0f} us), with {len(holding)} jobs holding harts")
    return None


def _fifo_problem(waits) -> str | None:
    """The first of one job's waits that ended (ran) before a wait of another of its processes that had
    begun strictly earlier and was still waiting; one pass per job over the waits in start order."""
    by_job = {}
    for w in waits:
        if w.ran:
            by_job.setdefault(w.job, []).append(w)
    for job, ws in sorted(by_job.items()):
        ws.sort(key=lambda w: w.start_us)
        latest = None                   # among waits begun strictly before the current start: the last to run
        i = 0
        while i < len(ws):
            k = i
            while k < len(ws) and ws[k].start_us == ws[i].start_us:
                k += 1
            for b in ws[i:k]:
                if latest is not None and latest.proc != b.proc and b.end_us < latest.end_us:
                    return (f"job-fifo: process {job}.{b.proc}, ready at {b.start_us:.0f} us, ran at "
                            f"{b.end_us:.0f} us before {job}.{latest.proc}, ready since {latest.start_us:.0f} us, "
                            f"ran at {latest.end_us:.0f} us")
            for a in ws[i:k]:
                if latest is None or a.end_us > latest.end_us:
                    latest = a
            i = k
    return None


def judge_invariants(trace, decl: Declaration, timed: bool = True) -> Verdict:
    """The declared invariants; ``timed`` False: only those that are about order, not time (a perturbed boot)."""
    if not decl.invariants:
        return Verdict("invariants", "not-declared")
    names = [n for n in decl.invariants if timed or n not in TIMED_INVARIANTS]
    if not names:
        return Verdict("invariants", "not-run", PERTURBED)
    if not trace.complete or any(trace.dropped.values()):
        return Verdict("invariants", "fail", "the trace ring overflowed: the invariants cannot be judged")
    for name in names:
        problem = invariant_problem(name, trace)
        if problem:
            return Verdict("invariants", "fail", problem, 1.0)
    return Verdict("invariants", "pass", ", ".join(names) + " held", 0.0)


def judge(case: Case, run, decl: Declaration) -> list[Verdict]:
    """Every check ``case``'s mix feeds, judged on its boot."""
    case.jobs = {r["job"]: {"app": r.get("app"), "tickets": r.get(decl.share_key, 1)} for r in run.results}
    trace = None
    if "trace=on" in case.tokens.split() and run.traces:
        trace = tr.parse_trace(run.console)
    lost = sum(trace.dropped.values()) if trace is not None else 0
    whole = trace is not None and not lost and trace.complete
    out = [judge_contract(run, trace if whole else None)]
    if case.mix == "contract":
        return out
    if not whole or out[0].status == "fail":
        why = ("no trace" if trace is None else "the boot broke its contract" if out[0].status == "fail" else
               f"the trace ring overflowed ({lost} records lost): the mix is too long for this topology")
        return out + [Verdict(c, "not-run", why) for c in CHECKS[1:]]
    if case.topo.perturb:
        return out + [Verdict(c, "not-run", PERTURBED) for c in ("progress", "work-conservation", "fairness")] + \
            [judge_invariants(trace, decl, timed=False)]
    return out + [judge_progress(trace, decl), judge_work_conservation(trace, decl), judge_fairness(case, trace, decl),
                  judge_invariants(trace, decl)]
