"""The invariants of policy=adaptive's regimes, read from a schedule trace and the RESULT lines (tests/test_adaptive.py,
tests/test_adaptive_random.py): a gang job's processes coscheduled within its row, part jobs on disjoint harts in
the space-sharing slot, no filler process waiting ready while a hart idles, every job's time per regime adding up
to its life. Each check excuses what is the kernel's and not the policy's: slot-switch windows, a job's
admission, silences of the whole machine, a hart's switch between processes, and a dispatch grace.
"""

import bisect

from schedlab import gangcheck, trace as tr


GRACE_US = 500.0
#: kernel/vclock.h VCLOCK_SLICE_US. Deterministic mode runs the harts one at a time on one host thread, each for
#: up to a slice: a hart sent an IPI, or handing a contended lock over, waits up to a slice per other hart for
#: its turn - twice on the way from a wake-up to the run (3 harts: a gang process woken at 666137 us ran at
#: 666637, 500.4 us later, its hart preempting the filler in its entry at 666336).
VCLOCK_SLICE_US = 100
QUANTUM_MS = 2


def deterministic_grace(cpus):
    return GRACE_US + 2 * (cpus - 1) * VCLOCK_SLICE_US


def regimes(trace):
    """job -> [(time_us, regime)] from its admission (part) through its moves."""
    out = {}
    for r in trace.records:
        if r.event == "regime":
            out.setdefault(r.job, [(0.0, "part")]).append((r.time_us, tr.regime_move(r)[1]))
    return out


def regime_at(timeline, job, t):
    moves = timeline.get(job, [(0.0, "part")])
    i = bisect.bisect_right([m[0] for m in moves], t)
    return moves[i - 1][1] if i else "part"


def regime_periods(timeline, job, regime, end_us):
    moves = timeline.get(job, [(0.0, "part")]) + [(end_us, None)]
    return [(t, nxt) for (t, r), (nxt, _) in zip(moves, moves[1:]) if r == regime]


def clip(spans, periods):
    return [(max(s, ps), min(e, pe)) for s, e in spans for ps, pe in periods if max(s, ps) < min(e, pe)]


def admissions(trace, results, grace=GRACE_US):
    """[(start, end)] of each job's admission: from its arrive_us to the creation of its process 0 (``new``). The
    launcher hart loads the job in its timer interrupt, so meanwhile it takes no tick (no slot switch) and no IPI."""
    first = {}
    for r in trace.records:
        if r.event == "new":
            first.setdefault(r.job, r.time_us)
    return [(r["arrive_us"], first.get(r["job"], r["arrive_us"]) + grace) for r in results]


def silences(trace, grace=GRACE_US):
    """[(start, end + grace)] of each stretch longer than two quanta in which no hart recorded anything: no tick
    switched a slot, no IPI was acknowledged. The kernel did not run there - a job's admission (the launcher hart
    loads it in its timer interrupt) or, in deterministic mode, QEMU's round robin leaving every hart's kernel
    unscheduled (measured at 3 harts: 4 to 100 ms, the longest TCG's kick period; before this policy's last
    changes too) - so the policy could not act."""
    times = [r.time_us for r in trace.records]
    return [(a, b + grace) for a, b in zip(times, times[1:]) if b - a > 2 * QUANTUM_MS * 1000]


def switching(trace):
    """[(start, end)] of each stretch in which a hart was between processes: from leaving one (``pre``, ``yld``,
    ``blk``, ``exit``) to running the next (``run``) or idling. The policy has acted by then - a woken gang
    process's hart has preempted its filler - and what the hart takes to switch is the kernel's, not the
    policy's; in deterministic mode QEMU's round robin can leave it unscheduled there (3 harts: 910 us from a
    filler's preemption to the gang process's dispatch)."""
    out, left = [], {}
    for r in trace.records:
        if r.event in ("pre", "yld", "blk", "exit"):
            left.setdefault(r.hart, r.time_us)
        elif r.event in ("run", "idle") and r.hart in left:
            out.append((left.pop(r.hart), r.time_us))
    return out


def subtract(span, holes):
    pieces = [span]
    for hs, he in holes:
        pieces = [p for s, e in pieces for p in ((s, min(e, hs)), (max(s, he), e)) if p[0] < p[1]]
    return pieces


def assert_gang_rows_coscheduled(trace, timeline, results, grace=GRACE_US):
    """While a job is in the gang regime, none of its processes runs in its row while another waits ready for
    that row - outside slot-switch windows (test_gang.py's invariant), the first `grace` us of each wait, a
    job's admission (the switching hart is busy loading it), and a hart's switch between processes."""
    holes = sorted([(s.time_us, s.window_end_us) for s in tr.switch_stats(trace).switches
                    if s.window_end_us > s.time_us] + admissions(trace, results, grace) + silences(trace, grace)
                   + switching(trace))
    runs, waits = tr.intervals(trace), gangcheck.waits(trace)
    for job in timeline:
        periods = regime_periods(timeline, job, "gang", trace.end_us)
        procs = {i.proc for i in runs if i.job == job}
        for p in procs:
            ran = clip([(i.start_us, i.end_us) for i in runs if i.job == job and i.proc == p and i.slot >= 0], periods)
            for q in procs - {p}:
                wait = clip([(w.start_us + grace, w.end_us) for w in waits.get((job, q), [])
                             if w.row is not None and w.row >= 0 and w.start_us + grace < w.end_us], periods)
                both = [(max(a, c), min(b, d)) for a, b in ran for c, d in wait if max(a, c) < min(b, d)]
                bad = [piece for span in both for piece in subtract(span, holes)]
                assert not bad, (job, p, q, bad[:3])


def space_periods(trace):
    """[(start, end)] of the space-sharing slot (a switch to slot -1) from the slot-switch records."""
    switches = [r for r in trace.records if r.event in tr.SWITCH_EVENTS]
    out = []
    for s, nxt in zip(switches, switches[1:] + [None]):
        if s.arg == -1:
            out.append((s.time_us, nxt.time_us if nxt else trace.end_us))
    return out


def assert_partitions_disjoint(trace, timeline, harts, results):
    """In a space-sharing period with no repartition and no move inside, each hart runs part processes of at
    most one job - unless more part and fill jobs live than harts (then one-hart partitions are shared)."""
    changes = sorted(r.time_us for r in trace.records if r.event in ("rep", "regime"))
    runs = tr.intervals(trace)
    for start, end in space_periods(trace):
        if bisect.bisect_right(changes, end + GRACE_US) != bisect.bisect_left(changes, start - GRACE_US):
            continue
        live = [r for r in results if r["arrive_us"] < end and r["end_us"] > start]  # at any time in it
        if sum(regime_at(timeline, r["job"], start) != "gang" for r in live) > harts:
            continue
        per_hart = {}
        for i in runs:
            if i.start_us >= start + GRACE_US and i.end_us <= end and regime_at(timeline, i.job, i.start_us) == "part":
                per_hart.setdefault(i.hart, set()).add(i.job)
        assert all(len(jobs) <= 1 for jobs in per_hart.values()), (start, per_hart)


def idle_periods(trace, harts):
    """Per hart, [(start, end)] from an ``idle`` record to its next ``run`` (a hart busy in the kernel - printing a
    RESULT, reaping - is not idle: only the scheduler loop's idle record says so)."""
    out = {h: [] for h in range(harts)}
    since = {}
    for r in trace.records:
        if r.event == "idle":
            since.setdefault(r.hart, r.time_us)
        elif r.event == "run" and r.hart in since:
            out[r.hart].append((since.pop(r.hart), r.time_us))
    for h, t in since.items():
        out[h].append((t, trace.end_us))
    return out


def assert_filler_served(trace, timeline, harts):
    """No filler process waits ready (past the grace) while a hart idles: every hart takes filler in a hole."""
    idle = idle_periods(trace, harts)
    for (job, proc), waits in gangcheck.waits(trace).items():
        for w in waits:
            start = w.start_us + GRACE_US
            if start >= w.end_us or regime_at(timeline, job, w.start_us) != "fill" \
                    or regime_at(timeline, job, w.end_us) != "fill":
                continue
            for h, spans in idle.items():
                for s, e in spans:
                    # an idle stretch wholly inside the wait, longer than the grace (kick to dispatch)
                    assert not (s >= start and e <= w.end_us and e - s > GRACE_US), \
                        f"hart {h} idle {s:.0f}..{e:.0f} us while filler {job}.{proc} waited {w.start_us:.0f}..{w.end_us:.0f}"


def assert_regime_accounting(results, window_quanta, confirm):
    for r in results:
        total = r["gang_us"] + r["part_us"] + r["fill_us"]
        assert r["elapsed_us"] - 2 <= total <= r["end_us"] - r["arrive_us"] + 2, r
        windows = (r["end_us"] - r["arrive_us"]) / (window_quanta * QUANTUM_MS * 1000)
        assert r["regime_moves"] <= windows / (confirm + 1) + 1, r


def assert_regimes_exact(results, timeline):
    """Simulated time: each job's time per regime adds up to its response (arrival to end; RESULT's whole
    microseconds may round one down), and its regime_moves are the trace's regime events for it."""
    for r in results:
        response = r["end_us"] - r["arrive_us"]
        assert response - 1 <= r["gang_us"] + r["part_us"] + r["fill_us"] <= response, r
        moves = timeline.get(r["job"], [])[1:]
        assert len(moves) == r["regime_moves"], (r, moves)
