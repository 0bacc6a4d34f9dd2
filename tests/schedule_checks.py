"""Schedule checks that run on QEMU and in the simulator alike: each takes a ``boot(cpus, bootargs, timeout=,
deterministic=)`` callable (the ``boot`` fixture, or tests/test_sim.py's ``simboot``) and asserts the policy's
invariant on the trace. The QEMU tests (test_gang, test_jobs, test_partition, test_workers) and test_sim call
them, so one check is written once and tests never import one another. The properties themselves - the
gang's coscheduling, disjoint partitions, no process on two harts at once - are schedlab check's definitions
(tools/py/schedlab/check/battery.py), which every policy that declares them is held to: here they are asked
of the mixes that show each policy's mechanism (slot switches, repartitions, migrations)."""

from collections import Counter

from schedlab import gangcheck, trace as tr
from schedlab.check import battery, measure
from helpers import assert_all_ok

#: Dispatch latency forgiven after a process becomes runnable (µs): the battery's grace.
GRACE_US = battery.GRACE_US
#: The gang mix: two 2-wide jobs that spin at barriers, several slot switches each.
GANG_MIX = "trace=on quantum=2ms job=gauss:n=192,barrier=spin,procs=2 job=gauss:n=192,barrier=spin,procs=2"


def traced(run) -> tr.Trace:
    assert_all_ok(run)
    trace = tr.parse_trace(run.console)
    assert trace.complete and not any(trace.dropped.values()), "the ring overflowed: make the run shorter"
    return trace


def assert_coscheduled(trace):
    """The gang invariant outside switch windows, for a deterministic boot. A switch some hart never
    acknowledged is one long window, so the check could pass vacuously if the broadcast were lost: a hart
    may skip a switch only when the next one superseded it before the hart got to it (gang_ack acts on the
    latest), and no pair-time may fall outside the windows."""
    stats = tr.switch_stats(trace)
    assert stats.count >= 3, stats
    following = zip(stats.switches, stats.switches[1:] + [None])
    skipped = [(s, h) for s, nxt in following for h in s.missing if nxt is None or h not in nxt.acks]
    assert not skipped, skipped[:3]
    assert all(check.run_us > 0 for check in gangcheck.gang_violations(trace, grace_us=GRACE_US).values())
    assert battery.invariant_problem("coscheduled", trace) is None


def rows_of(trace):
    """(job, proc) -> the set of slots its run records named."""
    rows = {}
    for r in trace.records:
        if r.event == "run":
            rows.setdefault((r.job, r.proc), set()).add(r.arg)
    return rows


def epochs(trace):
    """Times of the repartitions (reps recorded at one instant are one repartition)."""
    return sorted({r.time_us for r in trace.records if r.event == "rep"})


def gang_coschedules_every_gang(boot):
    trace = traced(boot(2, "policy=gang " + GANG_MIX, timeout=120, deterministic=True))
    assert_coscheduled(trace)
    # each 2-wide job sits in one row, its two processes in different columns
    rows = rows_of(trace)
    for job in (1, 2):
        assert len(rows[(job, 0)] | rows[(job, 1)]) == 1


def timeslice_spreads_each_job_over_the_harts(boot, harts, widths):
    """Each job's processes go one per hart (no two on a hart while it has no more than the harts), the
    load evens out, whatever order process creation took: every job's process 0 creates the others only
    after its set-up, while the other jobs' processes are being created."""
    jobs = " ".join(f"job=synth:procs={w},iters=100,grain=2000,barrier=block" for w in widths[:-1])
    run = boot(harts, f"policy=timeslice trace=on quantum=2ms {jobs} job=hog:procs={widths[-1]}", timeout=120,
               deterministic=True)
    assert_all_ok(run)
    bound = {(r.job, r.proc): r.arg for r in tr.parse_trace(run.console).records if r.event == "new"}
    assert len(bound) == sum(widths)
    for job, width in enumerate(widths, 1):
        per_hart = Counter(h for (j, _), h in bound.items() if j == job)
        assert max(per_hart.values()) - min(per_hart.get(h, 0) for h in range(harts)) <= 1, (job, per_hart)
    load = Counter(bound.values())
    assert max(load.values()) - min(load.get(h, 0) for h in range(harts)) <= 1, load


def harts_are_exclusive_between_repartitions(boot):
    run = boot(2, "policy=partition trace=on quantum=2ms job=synth:procs=2,iters=1500,barrier=block "
                  "job=synth:procs=2,iters=600,barrier=block,at=5ms", timeout=120, deterministic=True)
    trace = traced(run)
    assert battery.invariant_problem("disjoint-partitions", trace) is None
    # job 2's arrival split the harts, its departure gave them back (job 1 runs 0-25 ms, job 2 5-13 ms of
    # virtual time): three epochs at least
    assert len(epochs(trace)) >= 3


def global_migrates_never_doubles_and_serves_fifo(boot):
    procs = {1: 3, 2: 2}
    # deterministic mode: the FIFO bound is exact, with no allowance for a busy host
    run = boot(2, ["policy=global", "trace=on", "quantum=1ms",
                   f"job=synth:procs={procs[1]},iters=300,grain=2000,barrier=block",
                   f"job=hog:procs={procs[2]}"], timeout=120, deterministic=True)
    assert_all_ok(run)
    trace = tr.parse_trace(run.console)
    assert trace.complete and not any(trace.dropped.values())
    spans = tr.intervals(trace)
    by_proc = {}
    for i in spans:
        by_proc.setdefault((i.job, i.proc), []).append(i)
    # processes migrate freely: some process ran on both harts
    assert any(len({i.hart for i in v}) > 1 for v in by_proc.values())
    # never on two harts at once
    assert measure.double_runs(trace) == []
    # one FIFO: a process made ready runs after at most the nprocs - 1 others ahead of it
    nprocs = sum(procs.values())
    ready_events = {"new", "wake", "pre", "yld"}
    pending = {}
    worst = 0
    for r in trace.records:
        key = (r.job, r.proc)
        if r.event in ready_events:
            pending[key] = 0
        elif r.event == "run":
            pending.pop(key, None)
            for k in pending:
                pending[k] += 1
                worst = max(worst, pending[k])
    assert worst <= nprocs - 1, worst
