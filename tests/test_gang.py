"""policy=gang under QEMU, checked from the schedule trace (trace=on).

The gang invariant: whenever a process of job J runs, every live, runnable process of J in the same row
runs too - except inside a slot-switch window (from the switch's start until the last hart entered the new
slot: the measured skew) and in the first GRACE_US of a process becoming runnable (the time to dispatch it
on its hart). tools/py/schedlab/trace.py computes it; here it must hold under gang and fail under
timeslice for the same mix. The other tests check the idle mask, wake-ups within a slot, gangs wider than
the harts, arrivals and departures, both fits and alternates, from the same records.

They boot in deterministic mode (clock=virtual, kernel/vclock.h): no host thread can stall, so every hart
acts on every switch not superseded at once and the invariant holds exactly outside the windows, on a
loaded host too (in normal mode a busy host stalls harts' threads for milliseconds, and these checks
needed allowances for missed acknowledgements and stray pair-time).
"""

import bisect

import pytest

from schedlab import gangcheck, trace as tr
from schedule_checks import GANG_MIX as MIX, GRACE_US, assert_coscheduled, gang_coschedules_every_gang, rows_of, traced


def test_gang_coschedules_every_gang(boot):
    gang_coschedules_every_gang(boot)


class SlotClock:
    """The current slot at any time: the row of the latest switch started at or before it."""

    def __init__(self, trace):
        switches = [r for r in trace.records if r.event in tr.SWITCH_EVENTS]
        self.times = [r.time_us for r in switches]
        self.slots = [r.arg for r in switches]

    def at(self, t):
        i = bisect.bisect_right(self.times, t)
        return self.slots[i - 1] if i else None

    def next_switch_after(self, t):
        i = bisect.bisect_right(self.times, t)
        return self.times[i] if i < len(self.times) else float("inf")


def test_timeslice_does_not_coschedule(boot):
    trace = traced(boot(2, "policy=timeslice " + MIX, timeout=120, deterministic=True))
    assert tr.switch_stats(trace).count == 0
    worst = max(check.fraction for check in gangcheck.gang_violations(trace, grace_us=GRACE_US).values())
    assert worst > 0.10, worst


def test_idle_mask_ends_a_sleeping_slot_early(boot):
    """Both processes of `sleeper` block at once; its slot must end early, not at the 20 ms quantum."""
    iters = 12
    trace = traced(boot(2, f"policy=gang trace=on quantum=20ms job=sleeper:procs=2,iters={iters},sleep_us=1000 "
                           "job=hog:procs=2", timeout=120, deterministic=True))
    stats = tr.switch_stats(trace)
    assert stats.early >= iters, stats
    # at every early switch, every process of the row being left is blocked or gone (the mask was full)
    rows = {key: next(iter(s)) for key, s in rows_of(trace).items()}
    state, current = {}, None
    for r in trace.records:
        if r.event in ("run", "blk", "exit", "wake", "new", "pre", "yld"):
            state[(r.job, r.proc)] = r.event
        elif r.event in tr.SWITCH_EVENTS:
            if r.event == "early" and current is not None:
                members = [key for key, row in rows.items() if row == current]
                # (None: not created yet)
                assert all(state.get(key) in ("blk", "exit", None) for key in members), (r, current, state)
            current = r.arg


def test_woken_within_its_slot_runs_at_once(boot):
    trace = traced(boot(2, "policy=gang trace=on quantum=20ms job=gauss:n=128,barrier=block,procs=2 "
                           "job=hog:procs=2", timeout=120, deterministic=True))
    clock = SlotClock(trace)
    rows = {key: next(iter(s)) for key, s in rows_of(trace).items()}
    runs = {}
    for r in trace.records:
        if r.event == "run":
            runs.setdefault((r.job, r.proc), []).append(r.time_us)
    checked, late = 0, []
    for r in trace.records:
        key = (r.job, r.proc)
        if r.event != "wake" or clock.at(r.time_us) != rows.get(key):
            continue
        deadline = clock.next_switch_after(r.time_us)
        if deadline - r.time_us < 1000:
            continue               # woken just before the slot ends: it may wait for its next turn
        later = runs[key][bisect.bisect_left(runs[key], r.time_us):]
        checked += 1
        if not (later and later[0] < deadline):
            late.append((r, deadline))
    # Without the rule every such wake-up would wait for the next round of slots (in deterministic mode no
    # host thread stalls past the slot's end, so none may)
    assert checked >= 20 and not late, (checked, late[:5])


def test_gang_wider_than_the_harts(boot):
    trace = traced(boot(2, "policy=gang trace=on quantum=5ms job=gauss:n=32,barrier=spin,procs=5 "
                           "job=synth:procs=3,iters=100", timeout=180, deterministic=True))
    rows = rows_of(trace)
    gauss_rows = set().union(*(rows[(1, p)] for p in range(5)))
    synth_rows = set().union(*(rows[(2, p)] for p in range(3)))
    assert len(gauss_rows) == 3 and len(synth_rows) == 2
    assert all(len(rows[(1, p)]) == 1 for p in range(5))       # a process keeps its row
    assert_coscheduled(trace)


@pytest.mark.parametrize("cpus", [1, 3, 4, 16])
def test_arrivals_departures_and_every_width(boot, cpus):
    """Gangs of width 1..H (1, H/2, H for large H) and one of H+1 arrive 5 ms apart and leave as they finish;
    every job is correct and each job of at most H processes runs in exactly one row."""
    widths = sorted({1, max(1, cpus // 2), cpus} | (set(range(1, cpus + 1)) if cpus <= 4 else set())) + [cpus + 1]
    jobs = " ".join(f"job=synth:procs={w},iters={60 + 20 * i},grain=500,barrier=block,at={5 * i}ms"
                    for i, w in enumerate(widths))
    run = boot(cpus, f"policy=gang trace=on quantum=2ms {jobs}", timeout=300, deterministic=True)
    trace = traced(run)
    assert [r["procs"] for r in sorted(run.results, key=lambda r: r["job"])] == widths
    rows = rows_of(trace)
    for job, width in enumerate(widths, start=1):
        used = set().union(*(s for (j, _), s in rows.items() if j == job))
        assert len(used) == (1 if width <= cpus else 2), (job, width, used)


@pytest.mark.parametrize("fit,expect_row_of", [("first", 1), ("best", 2)])
def test_gangfit(boot, fit, expect_row_of):
    """Row of job 1 has 2 free entries, row of job 2 has 1: a 1-wide job 3 goes to the first (first fit) or
    the fuller (best fit)."""
    trace = traced(boot(4, f"policy=gang gangfit={fit} trace=on job=hog:procs=2 job=hog:procs=3 "
                           "job=synth:procs=1,iters=300,at=20ms", timeout=120, deterministic=True))
    rows = rows_of(trace)
    assert rows[(3, 0)] == rows[(expect_row_of, 0)]


@pytest.mark.parametrize("alternates", ["off", "on"])
def test_alternates(boot, alternates):
    """A 1-wide hog leaves a column idle in its slot; with alternates=on the 2-wide job's process of that
    column runs there (a run whose row is not the current slot), with off it never does."""
    trace = traced(boot(2, f"policy=gang alternates={alternates} trace=on quantum=5ms job=hog:procs=1 "
                           "job=synth:procs=2,iters=3000,grain=500", timeout=120, deterministic=True))
    clock = SlotClock(trace)
    alt = [r for r in trace.records if r.event == "run" and clock.at(r.time_us) not in (None, r.arg)]
    if alternates == "on":
        assert alt, "no alternate ran"
    else:
        assert not alt, alt[:5]
