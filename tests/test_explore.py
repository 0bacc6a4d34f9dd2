"""Perturbed deterministic boots and the schedule explorer (kernel/perturb.h, tools/py/schedlab/explore.py):
a perturbed boot replays byte for byte, another perturb seed gives another interleaving, the
token is refused without clock=virtual, and a small fixed campaign of scenarios drawn from the build passes -
the suite's own minute of exploration (the big campaign is `schedlab explore --boots 20000 --jobs 2`)."""

import json
import random
import re

import pytest

from schedlab import explore, explore_draw
from helpers import every_boot_is

SCENARIO = "calib=off policy=gang quantum=200us job=oddeven:n=256,barrier=block,procs=3 job=synth:iters=30,barrier=spin"


def _times(run):
    return [(r["job"], r["start_us"], r["end_us"]) for r in run.results]


def test_a_perturbed_boot_replays_byte_for_byte_and_another_seed_differs(boot):
    first = boot(2, f"{SCENARIO} perturb=11", deterministic=True)
    again = boot(2, f"{SCENARIO} perturb=11", deterministic=True)
    other = boot(2, f"{SCENARIO} perturb=12,depth=4", deterministic=True)
    plain = boot(2, SCENARIO, deterministic=True)
    assert first.ok and other.ok and plain.ok, first.console[-1500:]
    assert first.console == again.console
    assert len({tuple(_times(r)) for r in (first, other, plain)}) == 3     # three interleavings


def test_a_perturbed_boot_reaches_the_library_race_points_and_counts_them(boot):
    """Process control's suspend and resume, the barriers and the waits are race points of the library
    (abi.h enum sl_race); a perturbed boot reaches them through SYS_relax and its SUMMARY counts them. A plain
    deterministic boot reports none."""
    churn = ("policy=partition quantum=1ms seed=5 job=oddeven:n=48,procs=6,barrier=adaptive,shape=combination "
             "job=synth:procs=1,iters=60,grain=221,barrier=block,at=544us")
    run = boot(4, f"{churn} perturb=21", deterministic=True)
    plain = boot(4, churn, deterministic=True)
    assert run.ok and plain.ok, run.console[-1500:]
    counts = {k: int(run.summary[k]) for k in ("perturb_points", "perturb_library", "perturb_stops", "perturb_starved")}
    assert 0 < counts["perturb_library"] < counts["perturb_points"], counts
    assert not any(k.startswith("perturb_") for k in plain.summary)


def test_perturb_needs_the_virtual_clock(boot):
    run = boot(2, "perturb=3 job=synth:iters=5")
    assert run.exit_code != 0 and any("clock=virtual" in e for e in run.errors)


def test_draws_are_a_function_of_the_campaign_seed_and_cover_the_build():
    policies, apps, waits = ["timeslice", "gang", "partition"], ["synth", "oddeven", "gauss", "hog", "chaos"], \
        ["spin", "block"]
    a = [explore.draw(i, 7, policies, apps, {"hog"}, waits, [2, 3]) for i in range(300)]
    b = [explore.draw(i, 7, policies, apps, {"hog"}, waits, [2, 3]) for i in range(300)]
    assert a == b and a != [explore.draw(i, 8, policies, apps, {"hog"}, waits, [2, 3]) for i in range(300)]
    text = " ".join(c["tokens"] for c in a)
    for word in [*(f"policy={p}" for p in policies), "job=synth:", "job=oddeven:", "job=gauss:", "job=hog:",
                 "barrier=spin", "barrier=block", "shape=tree", "perturb=", ",at="]:
        assert word in text, word
    assert "chaos" not in text and {c["harts"] for c in a} == {2, 3}
    def spinning_mix(case):
        jobs = [t for t in case["tokens"].split() if t.startswith("job=") and not t.startswith("job=hog")]
        return all(f"procs={case['harts']},barrier=spin" in j and "shape=" not in j for j in jobs)
    mixes = [c for c in a if spinning_mix(c)]
    assert len(mixes) > 300 * explore.MIX_SHARE * 0.6             # the spinning mix's class, under a migrating policy
    assert all(explore.policy_of(c["tokens"]) == "partition" for c in mixes)
    assert all(explore.replay_line(c).startswith("tools/schedlab run --deterministic --cpus ") for c in a)
    assert explore.wait_kinds()[:2] == ["spin", "block"]


def test_the_churn_class_draws_process_control_under_allotment_churn():
    """Process-control churn: worker jobs wider than the harts under a policy that allots harts, and short
    one-process jobs arriving one after another (each arrival shrinks the wide jobs' allotments)."""
    policies, apps, waits = ["timeslice", "gang", "partition", "adaptive"], ["synth", "oddeven", "gauss", "hog"], \
        ["spin", "block", "twophase", "adaptive"]
    cases = [explore.draw(i, 11, policies, apps, {"hog"}, waits, [2, 3, 4]) for i in range(400)]
    churn = [c for c in cases if c["class"] == "churn"]
    assert 400 * explore.PROCCTL_SHARE * 0.6 < len(churn) < 400 * explore.PROCCTL_SHARE * 1.4
    for case in churn:
        words = case["tokens"].split()
        assert explore.policy_of(case["tokens"]) in ("partition", "adaptive") and case["harts"] in (3, 4)
        wide = [w for w in words if w.startswith("job=") and "procs=1," not in w]
        arrivals = [int(w.split(",at=")[1][:-2]) for w in words if w.startswith("job=synth:procs=1,")]
        assert 1 <= len(wide) <= 2 and all(explore_draw.procs_of(w.split(":")[1].split(",")) > case["harts"]
                                           for w in wide), case
        assert len(arrivals) >= 2 and arrivals == sorted(arrivals), case
    text = " ".join(c["tokens"] for c in churn)
    assert "barrier=adaptive,shape=combination" in text and "policy=adaptive" in text
    assert all(explore.draw(i, 11, policies, apps, {"hog"}, waits, [2, 3, 4], only="churn")["class"] == "churn"
               for i in range(20))
    with pytest.raises(ValueError):
        explore.draw(0, 1, ["gang"], ["synth"], set(), waits, [2], only="churn")    # nothing allots harts


def test_sizes_shrink_to_their_floor_and_busy_waits_draw_short_quanta():
    rng = random.Random(1)
    assert all(12 <= int(explore_draw.fill("{r:32-256/12}", rng, 0.1)) <= 26 for _ in range(200))
    assert all(32 <= int(explore_draw.fill("{r:32-256/12}", rng, 1.0)) <= 256 for _ in range(200))
    assert all(32 <= int(explore_draw.fill("{r:32-256}", rng, 0.1)) <= 54 for _ in range(200))
    cases = [explore.draw(i, 3, ["timeslice", "global"], ["oddeven", "synth"], set(), ["spin"], [2]) for i in range(200)]
    def load(case):
        return sum(int(m) for m in re.findall(r"[:,]procs=(\d+)", case["tokens"]))
    busy = [c for c in cases if load(c) > c["harts"]]
    assert busy and all("quantum=3ms" not in c["tokens"] for c in busy)
    assert any("quantum=3ms" in c["tokens"] for c in cases if load(c) <= c["harts"])


def test_a_small_campaign_of_the_build_passes(tmp_path, capsys):
    assert explore.main(["--boots", "10", "--seed", "3", "--harts", "2,3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "explore: 10 boots" in out and "0 failure(s)" in out and re.search(r"10 boots in [\d.]+ min", out)
    entries = [json.loads(line) for line in (tmp_path / "explore.jsonl").read_text().splitlines()]
    assert len(entries) == 10 and all(e["host_s"] > 0 and e["verdict"] == "ok" for e in entries)
    assert explore.main(["--boots", "12", "--seed", "3", "--harts", "2,3", "--out", str(tmp_path), "--resume"]) == 0
    assert "(seed 3, 10 from the journal)" in capsys.readouterr().out


def test_a_failure_prints_its_replay_line(monkeypatch, capsys, tmp_path):
    class Failed:
        timed_out, ok, verdict, errors, panics, summary, results = False, False, "FAIL (exit 3)", \
            ["ERROR job 1 (oddeven) deadlocked"], [], None, []
    every_boot_is(monkeypatch, Failed)
    assert explore.main(["--boots", "2", "--scenario", "policy=gang job=synth", "--harts", "3", "--batch", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL FAIL (exit 3): ERROR job 1 (oddeven) deadlocked: tools/schedlab run --deterministic --cpus 3 " \
           "policy=gang job=synth perturb=1,depth=3" in out and "2 failure(s)" in out


def test_a_boot_past_the_host_limit_is_slow_not_a_failure(monkeypatch, capsys):
    class Slow:
        timed_out, ok, verdict, errors, panics, summary, results = True, False, "TIMEOUT", [], [], None, []
    def check_task(task):
        assert task.timeout == 30
    every_boot_is(monkeypatch, Slow, check_task)
    assert explore.main(["--boots", "2", "--scenario", "policy=gang job=synth", "--harts", "2",
                         "--timeout", "30", "--batch", "1"]) == 0
    out = capsys.readouterr().out
    assert "SLOW (no end within 30 s of host time; replay with --timeout): tools/schedlab run --deterministic " \
           "--cpus 2 policy=gang job=synth perturb=1,depth=3" in out
    assert "0 failure(s), 2 slow (not judged)" in out
    with pytest.raises(SystemExit):
        explore.main(["--timeout", "0"])


def test_trace_boots_every_scenario_traced(monkeypatch, capsys):
    class Passed:
        timed_out, ok, verdict, errors, panics, summary, results, bootargs, cpus = False, True, "ok", [], [], None, \
            [], "", 2
    seen = []
    every_boot_is(monkeypatch, Passed, lambda task: seen.append(task.tokens.split()))
    assert explore.main(["--boots", "3", "--seed", "4", "--harts", "2", "--trace", "--batch", "1"]) == 0
    assert len(seen) == 3 and all(words.count("trace=on") == 1 for words in seen)


def test_gang_boots_are_traced_and_judged_for_coscheduling(boot):
    case = next(c for c in (explore.draw(i, 5, ["gang"], ["synth", "oddeven"], set(), ["spin", "block"], [3])
                            for i in range(50)) if "trace=on" in c["tokens"])
    run = boot(case["harts"], case["tokens"], deterministic=True)
    assert explore.judge(run) == "ok", explore.replay_line(case)
    assert explore.gang_checkable(["policy=gang", "job=synth:procs=2"], 2)
    assert not explore.gang_checkable(["policy=gang", "job=synth:procs=3"], 2)
    assert not explore.gang_checkable(["policy=timeslice", "job=synth:procs=1"], 2)


def test_diff_reads_a_replay_line_and_finds_the_first_divergence():
    line = "tools/schedlab run --deterministic --cpus 3 --model modern policy=global job=synth perturb=41,depth=2"
    case = explore.parse_replay(line, 2)
    assert (case["harts"], case["model"], case["tokens"]) == (3, "modern", "policy=global job=synth perturb=41,depth=2")
    assert explore.parse_replay("policy=gang job=synth perturb=5", 4)["harts"] == 4
    assert explore.reseeded(case, 42)["tokens"] == "policy=global job=synth perturb=42,depth=2"
    assert explore.traced(case)["tokens"].split()[0] == "trace=on" and explore.traced(explore.traced(case)) == \
        explore.traced(case)
    with pytest.raises(explore.HarnessError):
        explore.parse_replay("policy=gang job=synth", 2)
    from types import SimpleNamespace
    from schedlab.trace import Record
    def trace(*events, shift=0):
        return SimpleNamespace(records=[Record(0, t * 10 + shift, t, e, 1, 0, 0) for t, e in enumerate(events)])
    a = trace("run", "wake", "run", "stop")
    b = trace("run", "wake", "exit", "stop", shift=7)             # other times throughout: only the events count
    assert explore.first_divergence(a, b) == 2 and explore.first_divergence(a, a) is None
    handed = trace("run", "held", "wake", "run", "stop")                  # a hand-over's record is no divergence
    assert explore.schedule_records(handed) == [r for r in handed.records if r.event != "held"]
    assert explore.first_divergence(SimpleNamespace(records=explore.schedule_records(handed)), a) is None
    assert explore.first_divergence(a, trace("run", "wake")) == 2


# Failures the explorer found with a fixed bug put back; replayed against the fixed kernel they must pass.
#
# The double reap of commit 219da2f (the scheduler loop read the state of the process it had just left after
# releasing sched_lock): a hart found a process a zombie of another hart, which had meanwhile run it to its
# exit, and reaped it too - PANIC "hart 1 reaps process 1.1 in state 4, last run on hart 2" (the checked
# kernel's reap check). The first is a small global mix under --scenario, the second a drawn boot of Tucker &
# Gupta's spinning mix under the machine model.
#
# The lost poke of the thread layer before commit 6edcefa (a ringer cleared a word's sleepers bit and woke its
# sleepers once; another waiter set the bit again before the sleeping process's futex check): a suspended
# process's worker sat in the pin inbox of a process asleep on a barrier word, and the job deadlocked - ERROR
# deadlock, every process on a futex, the suspended one on its resume word (docs/notes/explorer.md). Two drawn
# boots of the process-control churn class (--class churn), oddeven under partition at 4 harts.
#
# The page table freed under a hart (found on the kernel of 480ff41 by the churn class, seed 1, boot 266): dispatch
# moved its hart's page-table reference from the old job to the new one under sched_lock, then dropped the lock
# for the satp write; stopped in between, the hart still walked the old job's table when that job's end took its
# last reference and freed it. The next fetch faulted, kernel_fault faulted again and again, and the nested frames
# ran down through .data onto sched_lock - PANIC "acquire: lock order: rank 0 taken while holding ?" on another
# hart. The old reference now goes after the write (core.c, drop_satp).
#
# The timer starved by hand-overs (the campaigns' 8-hart SLOW boots, on the kernel of 6d4b3d6 and before): a
# hart whose turn ended at a race point by a preemption stored, on leaving its lowering, the resume count of
# another lowered hart it had read before its turn ended - after that hart had resumed. The stale count made
# every later race point of sched_lock's release hand over, and the hand-over's pending SSIP made every return
# to U-mode trap for an IPI again, ahead of the timer: no tick and no watchdog on any hart for minutes of host
# time. Now nothing caches the lowered harts' counts (perturb.c lowered_due), and an IPI trap takes a timer
# interrupt pending behind it (trap.c).
#
# The gang member behind a reap (the seed-1212 campaign, on the kernel of e96f7ee, under the model): hart 3 freed
# a finished job's pages while the hog's fourth process waited ready in its column. The checked kernel's lock
# releases are race points, one a page, and each of the hart's draws that handed over cost it a round of the
# other harts' hog turns, so its short own work outlasted the grace; the check forgave stops only. Now such a
# hand-over is traced (`held`) and the gang check neither counts it nor lets it use up that hart's grace
# (gangcheck.py).
FOUND = {
    "double-reap-global-mix":
        "tools/schedlab run --deterministic --cpus 3 calib=off policy=global quantum=200us timeout=60s "
        "job=oddeven:n=256,procs=3,barrier=spin job=synth:iters=40,grain=500,procs=3,barrier=spin perturb=68,depth=3",
    "double-reap-tucker-gupta-modern":
        "tools/schedlab run --deterministic --cpus 4 --model modern policy=global quantum=200us seed=447 timeout=60s "
        "job=gauss:n=28,variant=fine,sync=barrier,procs=4,barrier=spin job=synth:iters=20,grain=972,var=88,procs=4,"
        "barrier=spin,at=1816us job=oddeven:n=105,procs=4,barrier=spin,at=1653us perturb=109527218,depth=1",
    "lost-poke-churn-twophase":
        "tools/schedlab run --deterministic --cpus 4 policy=partition quantum=1ms seed=101 timeout=60s "
        "job=oddeven:n=48,procs=6,barrier=adaptive,shape=combination job=gauss:n=14,variant=coarse,sync=cond,procs=5,"
        "barrier=twophase,shape=combination,at=215us job=synth:procs=1,iters=60,grain=221,barrier=block,at=544us "
        "job=synth:procs=1,iters=26,grain=633,barrier=block,at=2173us job=synth:procs=1,iters=10,grain=563,"
        "barrier=block,at=4125us job=synth:procs=1,iters=40,grain=500,barrier=block,at=6234us "
        "perturb=1955604158,depth=1",
    "lost-poke-churn-adaptive-combination":
        "tools/schedlab run --deterministic --cpus 4 policy=partition quantum=1ms seed=97 timeout=60s "
        "job=oddeven:n=64,procs=6,barrier=adaptive,shape=combination job=synth:procs=1,iters=45,grain=526,"
        "barrier=block,at=75us job=synth:procs=1,iters=10,grain=363,barrier=block,at=577us job=synth:procs=1,"
        "iters=52,grain=330,barrier=block,at=2881us perturb=1226708383,depth=2",
    "page-table-freed-under-dispatch-adaptive":
        "tools/schedlab run --deterministic --cpus 3 policy=adaptive quantum=1ms seed=759 timeout=60s "
        "job=synth:iters=38,grain=1348,var=92,procs=4,barrier=twophase,shape=combination job=synth:procs=1,iters=17,"
        "grain=726,barrier=block,at=277us job=synth:procs=1,iters=38,grain=601,barrier=block,at=2700us "
        "job=synth:procs=1,iters=23,grain=410,barrier=block,at=3072us perturb=374538152,depth=3",
    "timer-starved-by-handovers-adaptive":
        "tools/schedlab run --deterministic --cpus 8 policy=adaptive quantum=200us seed=959 timeout=5s "
        "job=msort:n=638,variant=coarse,procs=6 perturb=834545780,depth=1",
    "gang-member-on-a-starved-vcpu":
        "tools/schedlab run --deterministic --cpus 3 policy=gang trace=on quantum=1ms seed=900 timeout=5s "
        "job=tclosure:n=12,procs=3,barrier=twophase,shape=tree job=hog:procs=2 perturb=1510104081,depth=3",
    "gang-member-on-a-vcpu-starved-in-a-hand-over":
        "tools/schedlab run --deterministic --cpus 4 policy=gang trace=on quantum=1ms seed=163 timeout=5s "
        "job=oddeven:n=114,procs=4,barrier=adaptive,shape=combination job=hog:procs=1 perturb=219036990,depth=2",
    "gang-member-behind-a-held-reap-modern":
        "tools/schedlab run --deterministic --cpus 4 --model modern policy=gang trace=on quantum=3ms seed=192 "
        "timeout=5s job=tclosure:n=12,procs=4,barrier=block,shape=combination job=adjoint:n=8,procs=2,"
        "barrier=twophase,shape=combination,at=2000us job=knary:h=2,d=2,work=63,procs=2,at=1540us job=hog:procs=4 "
        "perturb=101606447,depth=4",
}


@pytest.mark.parametrize("line", FOUND.values(), ids=FOUND.keys())
def test_failures_the_explorer_found_replay_clean(boot, line):
    case = explore.parse_replay(line, 0)
    run = boot(case["harts"], case["tokens"], deterministic=True, model=case["model"])
    if (run.boot or {}).get("checks") != "on":  # its interleaving has the checked kernel's race points
        pytest.skip("the replay is of the checked kernel (KCHECKS=1, which make test builds)")
    assert explore.judge(run) == "ok", run.console[-1500:]

