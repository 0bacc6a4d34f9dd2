"""The library's event logs (lib/base/eventlog.h, kernel/ulog.c, tools/py/schedlab/ulog.py).

Parser and Perfetto checks need no QEMU; the boots check that what the library records agrees with what the
apps themselves count (grabs, steals, barrier episodes, marks), that logs exist only with trace=on, that a job
scribbling over its own log cannot break the dump, and that a job left out of the kernel's budget is named.
"""

from collections import Counter

import pytest

from schedlab import console, pftrace, trace, ulog
from schedlab.qemu import HarnessError
from trace_data import NESTED, dump, ulog_block

perfetto_pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

KERNEL = dump({0: ["0 run 1 0 -1", "100 pre 1 0 0"], 1: ["0 run 1 1 -1", "100 exit 1 1 0"]})


def test_parse_keeps_order_and_skips_scribbles():
    text = KERNEL + ulog_block({(1, 0): ["10 arrive 0 1", "20 ? 3 4", "2000 mark 1 0", "30 release 0 1"]}, off=[2])
    parsed = trace.parse_trace(text)
    assert [(r.event, r.ticks) for r in parsed.lib.records] == [("arrive", 10), ("release", 30)]
    assert parsed.lib.bogus == 2 and parsed.lib.off == [2] and parsed.lib.present
    assert parsed.lib.records[0].time_us == pytest.approx(10.0)       # the TRACE's timebase (1 MHz here)


def test_counts_must_match_a_complete_dump():
    text = ulog_block({(1, 0): ["10 mark 1 0"]}).replace("records=1", "records=2")
    with pytest.raises(HarnessError, match="ULOG record counts"):
        ulog.parse_ulog(text.splitlines(), 1_000_000)
    cut = ulog_block({(1, 0): ["10 mark 1 0"]}, end=False).replace("records=1", "records=2")
    assert len(ulog.parse_ulog(cut.splitlines(), 1_000_000).records) == 1


def test_no_ulog_block_is_an_empty_log():
    assert not trace.parse_trace(KERNEL).lib.present


def test_stretches_nest_per_process_and_strays_are_instants():
    log = ulog.parse_ulog(ulog_block(NESTED).splitlines(), 1_000_000)
    got = [(r.job, r.proc, r.event, role, name) for r, role, name in ulog.roles(log)]
    assert got == [
        (1, 0, "arrive", "begin", "barrier"), (1, 0, "block", "begin", "sleep"), (1, 0, "unblock", "end", "sleep"),
        (1, 0, "release", "end", "barrier"), (1, 0, "steal", "instant", "steal"),
        (1, 0, "arrive", "instant", "arrive"),            # never released on this process
        (1, 1, "release", "instant", "release"),          # released here, arrived elsewhere
        (1, 1, "grab", "instant", "grab"), (1, 1, "mark", "instant", "mark")]


def test_library_events_are_on_their_threads_tracks_in_perfetto():
    parsed = trace.parse_trace(KERNEL + ulog_block(NESTED))
    data = pftrace.to_perfetto(parsed, {1: "oddeven"})
    events = pftrace.read_lib_events(data)
    te = perfetto_pb.TrackEvent
    assert set(events) == {pftrace.tid_of(1, 0), pftrace.tid_of(1, 1)}
    for tid, items in events.items():
        assert [ns for ns, _, _ in items] == sorted(ns for ns, _, _ in items)
        depth = 0
        for _, kind, _ in items:                          # slices on a track close in the order they opened
            depth += {te.TYPE_SLICE_BEGIN: 1, te.TYPE_SLICE_END: -1}.get(kind, 0)
            assert depth >= 0
        assert depth == 0
    mine = events[pftrace.tid_of(1, 0)]
    assert len(mine) == len(NESTED[(1, 0)])
    assert (10_000, te.TYPE_SLICE_BEGIN, "barrier (participant 0)") in mine
    assert (50_000, te.TYPE_INSTANT, "steal from process 1") in mine
    packets = perfetto_pb.Trace.FromString(data).packet
    tracks = {(p.track_descriptor.thread.pid, p.track_descriptor.thread.tid) for p in packets
              if p.HasField("track_descriptor") and p.track_descriptor.HasField("thread")}
    assert tracks == {(1000, 1001), (1000, 1002)}


# ---------------------------------------------------------------- on the kernel

def lib_of(run):
    parsed = trace.parse_trace(run.traces)
    assert parsed.lib.present and not parsed.lib.bogus
    return parsed


def per_job(parsed, job):
    return [r for r in parsed.lib.records if r.job == job]


@pytest.mark.qemu
def test_records_agree_with_what_the_apps_count(boot):
    run = boot(2, "trace=on job=oddeven:n=128,sched=afs job=knary:procs=2,h=5,d=4 job=synth:procs=2,iters=20,"
                  "barrier=block")
    assert run.ok, run.console[-2000:]
    parsed = lib_of(run)
    res = {r["job"]: r for r in run.results}
    assert not any(parsed.lib.dropped.values())
    for (job, proc) in {(r.job, r.proc) for r in parsed.lib.records}:
        times = [r.ticks for r in parsed.lib.records if (r.job, r.proc) == (job, proc)]
        assert times == sorted(times), f"job {job} proc {proc}: records out of time order"
    grabs = [r for r in per_job(parsed, 1) if r.event == "grab"]
    assert len(grabs) == res[1]["grabs"] and sum(r.aux for r in grabs) == res[1]["remote"]
    kinds = Counter(r.event for r in per_job(parsed, 1))
    assert kinds["arrive"] == kinds["release"] == 2 * (128 + 1)      # n + 1 episodes of 2 participants
    steals = [r for r in per_job(parsed, 2) if r.event == "steal"]
    assert len(steals) == res[2]["steals"] and all(r.arg in (0, 1) and r.arg != r.proc for r in steals)
    synth = Counter(r.event for r in per_job(parsed, 3))
    assert synth["arrive"] == synth["release"] >= 2 * 20 and synth["block"] == synth["unblock"]
    assert_on_the_kernels_clock(parsed)


def assert_on_the_kernels_clock(parsed):
    """A process records only while it runs: every library record lies in one of its kernel run intervals
    (within a tick or two: the cycle clock's conversion, kernel/ulog.h)."""
    runs = {}
    for i in trace.intervals(parsed):
        runs.setdefault((i.job, i.proc), []).append((i.start_us, i.end_us))
    slack = 2e6 / parsed.timebase_hz
    outside = [r for r in parsed.lib.records
               if not any(a - slack <= r.time_us <= b + slack for a, b in runs.get((r.job, r.proc), []))]
    assert not outside, f"{len(outside)} library records outside their process's run intervals: {outside[:3]}"


@pytest.mark.qemu
def test_marks_land_in_order_and_only_with_trace_on(boot):
    run = boot(1, "trace=on job=kbench:what=ulog,ops=1000,procs=2")
    assert run.ok, run.console[-2000:]
    parsed = lib_of(run)
    for proc in (0, 1):
        marks = [r.arg for r in parsed.lib.records if r.proc == proc and r.event == "mark"]
        assert marks == list(range(1000))
    assert_on_the_kernels_clock(parsed)
    begin = next(line for line in run.traces if line.startswith("ULOG begin"))
    assert console.parse_fields(begin.split(" ", 2)[2])["kernel_record_ns"] > 0
    off = boot(1, "job=kbench:what=ulog,ops=10 job=oddeven:n=64")
    assert not any(line.startswith(("ULOG", "U ")) for line in off.console.splitlines())
    verdicts = {r["job"]: r["check"] for r in off.results}
    assert "error=ulog-needs-trace=on" in off.console and verdicts == {1: "FAIL", 2: "ok"}


@pytest.mark.qemu
def test_a_job_scribbling_its_log_cannot_break_the_dump(boot):
    run = boot(2, "trace=on job=scribble:mode=ulog,procs=3 job=oddeven:n=64")
    assert run.ok, run.console[-2000:]
    blocks = [console.parse_fields(line.split(" ", 1)[1]) for line in run.traces
              if line.startswith("ULOG job=1 ")]
    assert len(blocks) == 3 and all(0 < b["records"] <= 4096 for b in blocks)
    parsed = trace.parse_trace(run.traces)            # bounded, well-formed: the parser takes it
    assert parsed.lib.bogus > 0
    kinds = Counter(r.event for r in per_job(parsed, 2))
    assert kinds["arrive"] == kinds["release"] == 2 * 65


@pytest.mark.qemu
def test_jobs_beyond_the_budget_get_no_log_and_are_named(boot):
    jobs = " ".join("job=synth:procs=128,iters=2,grain=10" for _ in range(3))
    run = boot(2, f"trace=on {jobs} job=synth:procs=2,iters=5", timeout=600)
    assert run.ok, run.console[-2000:]
    parsed = lib_of(run)
    assert parsed.lib.off == [4]
    assert {r.job for r in parsed.lib.records} == {1, 2, 3}


@pytest.mark.qemu
def test_every_policy_keeps_library_records_inside_their_processes_runs(boot, policy):
    run = boot(2, f"trace=on policy={policy} quantum=2ms job=oddeven:n=120,barrier=twophase,sched=gss "
                  "job=synth:procs=3,iters=40,barrier=adaptive,shape=tree job=knary:h=5,d=4,at=3ms")
    assert run.ok, run.console[-2000:]
    parsed = lib_of(run)
    assert_on_the_kernels_clock(parsed)
    # A full log overwrites its oldest records (lib/base/eventlog.h) and the dump counts them: a job whose
    # waiting workers yield in a loop can fill its log on a slow host, and then its pairs no longer balance.
    # Pairs are checked on every job that kept all its records (oddeven's 4096 per process leave room for
    # thousands of switches; test_records_agree_with_what_the_apps_count asserts a run with nothing dropped).
    whole = [job for job in (1, 2) if not any(n for (j, _), n in parsed.lib.dropped.items() if j == job)]
    for job in whole:
        kinds = Counter(r.event for r in per_job(parsed, job))
        assert kinds["arrive"] == kinds["release"] > 0
        assert kinds["block"] == kinds["unblock"]
