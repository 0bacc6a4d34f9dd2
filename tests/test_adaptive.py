"""policy=adaptive (kernel/sched/adaptive/adaptive.c): each job in a gang row, a partition with process control, or filler,
moved by its measured synchronization - checked from the schedule trace and the RESULT lines, never by timings.

Under churn (every app of the build, arriving 3 ms apart and leaving as they finish, 1..4 harts, deterministic
mode) the regimes' invariants hold: a gang job's processes are coscheduled within its row (outside slot-switch
windows and a dispatch grace), part jobs hold disjoint harts in the space-sharing slot, no filler process waits
ready while a hart idles, every job's time per regime adds up to its life, and no job moves more often than the
hysteresis allows (one move per confirm= + 1 windows). A job writing garbage into its sync statistics hurts
nobody, and only policy=adaptive maps that page at all. The simulator runs the same file: there its regime
decisions are deterministic, so a job sitting at the threshold is checked not to flap.
"""

import os
import re
import subprocess

import pytest

from schedlab import trace as tr
from schedlab.qemu import REPO_ROOT
from schedlab.sim import sim_boot
from helpers import assert_all_ok
from regime_checks import (QUANTUM_MS, assert_filler_served, assert_gang_rows_coscheduled, assert_partitions_disjoint,
                           assert_regime_accounting, assert_regimes_exact, deterministic_grace, regimes)

#: Small work for the apps this test knows; an app it does not know (a new one) runs with its defaults.
SMALL = {
    "gauss": "n=64,barrier=spin", "oddeven": "n=300,barrier=spin", "synth": "grain=200,var=200,iters=300",
    "msort": "n=2000,leaf=16", "grassfire": "n=48", "sor": "n=24,iters=3,barrier=spin",
    "tclosure": "n=40,barrier=block", "adjoint": "n=12", "knary": "h=5", "memwalk": "kb=16,passes=2",
    "sleeper": "iters=5,sleep_us=500", "fault": "kind=badptr", "scribble": "mode=partial,lines=4,gap_us=50",
    "chaos": "mode=random,calls=200", "kbench": "what=syscall,ops=200", "bbench": "ms=1,batches=1",
    "tbench": "batches=1,ops=50", "hog": "",
}


def churn_jobs(apps):
    jobs = []
    for i, app in enumerate(apps):
        keys = ",".join(k for k in (SMALL.get(app, ""), f"at={3 * i}ms") if k)
        jobs.append(f"job={app}:{keys}")
    return " ".join(jobs)


def churn_every_app(boot, cpus, window):
    apps = boot(1, "calib=off job=synth:procs=1,iters=1").boot["apps"]
    run = boot(cpus, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms window={window} confirm=1 "
               f"{churn_jobs(apps)}", timeout=600, deterministic=True)
    assert_all_ok(run)
    trace = tr.parse_trace(run.console)
    assert trace.complete and not any(trace.dropped.values()), "the ring overflowed: make the run shorter"
    timeline = regimes(trace)
    assert {r["app"] for r in run.results} == set(apps)
    assert_gang_rows_coscheduled(trace, timeline, run.results, deterministic_grace(cpus))
    assert_partitions_disjoint(trace, timeline, cpus, run.results)
    assert_filler_served(trace, timeline, cpus)
    assert_regime_accounting(run.results, window, 1)


@pytest.mark.parametrize("cpus", [1, 2, 3, 4])
def test_churn_every_app(boot, cpus):
    churn_every_app(boot, cpus, 1)


def test_churn_every_app_with_probes(boot):
    """window=4: every quantum of a new job's first window is probed (adaptive.c probe), a window is the time
    since the job's last judgment, and one restarts when the job's wait timing turns on - the same
    invariants hold as with window=1, where no probe runs (every window is one quantum)."""
    churn_every_app(boot, 2, 4)


def test_a_gang_and_its_filler(boot):
    """A balanced fine-grain job that cannot fold (adapt=no: a partition would make it block) next to a hog:
    the job goes to a gang row and stays coscheduled there. Its three processes leave one entry of its row on
    4 harts empty, a hole, and the hog fills it (adaptive.c holes_besides; a full row of spinners has none:
    test_sim_regimes_add_up_and_are_traced[spin])."""
    run = boot(4, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms window=1 confirm=1 "
                  "job=synth:procs=3,grain=300,iters=3000,adapt=no job=hog", timeout=600, deterministic=True)
    assert_all_ok(run)
    by_app = {r["app"]: r for r in run.results}
    assert by_app["synth"]["gang_us"] > 0 and by_app["hog"]["fill_us"] > 0, by_app
    trace = tr.parse_trace(run.console)
    timeline = regimes(trace)
    assert_gang_rows_coscheduled(trace, timeline, run.results)
    assert_filler_served(trace, timeline, 4)
    assert_regime_accounting(run.results, 1, 1)


THREADS_WAITING = "job=gauss:n=128,variant=fine,adapt=no job=hog"
#: A job that cannot fold and spins at its barriers, beside a hog: time-sharing a hart, its waits last until its
#: descheduled partner has had its quantum (F&R eq. 8). (A thread program's idle processes yield their harts:
#: lib/threads/uthread.c, and the simulator models it, so time-shared they lose far less.)
SPINNING_WAITING = "job=synth:procs=2,grain=500,var=500,iters=2000,barrier=spin,adapt=no job=hog"


def test_a_thread_program_waiting_on_partners_is_coscheduled(boot):
    """lib/threads/uthread.c streak_begins: a thread program whose threads are placed (gauss variant=fine pins
    each row update to its row's process) synchronizes by running out of threads until its partners' progress
    gives it more - no barrier of its own. The library publishes those idle streaks as episodes and waits, so
    beside a hog, time-sharing one hart it cannot fold onto (adapt=no), it goes to a gang row and stays
    coscheduled there (before, it published nothing: it stayed in its partition, 20x gang's time)."""
    run = boot(2, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms window=1 confirm=1 {THREADS_WAITING}",
               timeout=600, deterministic=True)
    assert_all_ok(run)
    gauss = next(r for r in run.results if r["app"] == "gauss")
    assert gauss["regime"] == "gang" and gauss["gang_us"] > gauss["part_us"], gauss
    trace = tr.parse_trace(run.console)
    timeline = regimes(trace)
    assert_gang_rows_coscheduled(trace, timeline, run.results)
    assert_regime_accounting(run.results, 1, 1)


def test_garbage_statistics_hurt_nobody(boot):
    """chaos mode=syncstat scribbles over its sync statistics all the time; its neighbours finish correct, the
    kernel survives, and the scribbler moves no more often than the hysteresis allows."""
    run = boot(2, f"policy=adaptive quantum={QUANTUM_MS}ms window=1 confirm=1 job=chaos:mode=syncstat,calls=2000 "
                  "job=gauss:n=96,barrier=spin job=synth:grain=300,iters=3000,adapt=no job=hog",
               timeout=600, deterministic=True)
    assert_all_ok(run)
    chaos = next(r for r in run.results if r["app"] == "chaos")
    assert chaos["garbage"] > 0
    assert_regime_accounting(run.results, 1, 1)


def test_a_worker_run_tells_its_units(boot):
    """The library publishes a worker run's units (abi.h, lib/workers/workers.c) and the kernel allots by them.
    On 4 harts, two 3-worker barrier jobs and knary hold a hart each and one spare: a worker job's second hart
    takes its 3 rounds to 2 (3/2), knary's halves its time (2/1). Once the workers have shown their episodes
    in a window, the spare hart is knary's while both worker jobs still run."""
    run = boot(4, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms job=synth:procs=3,grain=2000,iters=400,barrier=spin "
                  "job=oddeven:procs=3,n=6000,barrier=spin job=knary:procs=4,h=8", timeout=600, deterministic=True)
    assert_all_ok(run)
    ends = {r["app"]: r["end_us"] for r in run.results}
    knary = next(r["job"] for r in run.results if r["app"] == "knary")
    given = [r.time_us for r in tr.parse_trace(run.console).records if r.event == "rep" and r.job == knary and r.arg == 2]
    assert given and given[0] < min(ends["synth"], ends["oddeven"]), (given, ends, allotments(run))


def test_only_adaptive_maps_the_statistics(boot, policy):
    """The page exists under policy=adaptive only; elsewhere the library publishes nothing (chaos finds no
    page to scribble on) and RESULT has no regime keys."""
    run = boot(2, f"policy={policy} job=chaos:mode=syncstat,calls=20", deterministic=True)  # no busy-host stalls
    assert_all_ok(run)
    r = run.results[0]
    assert (r["garbage"] > 0) == (policy == "adaptive"), r
    assert ("regime" in r) == (policy == "adaptive"), r


# ---- the simulator runs the same file ----

def sim_ok(harts, bootargs):
    run = sim_boot(harts, bootargs)
    assert_all_ok(run)
    return run


@pytest.mark.parametrize("barrier", ["twophase", "spin"])
def test_sim_regimes_add_up_and_are_traced(barrier):
    """A synth that cannot fold goes to a gang row; knary and the hog (no barrier episodes) fill its holes when
    its waits sleep (two-phase), and keep their partitions beside a full row of spinners, which has none
    (adaptive.c holes_besides)."""
    run = sim_ok(8, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms job=synth:grain=500,iters=20000,adapt=no,"
                    f"barrier={barrier} job=gauss:n=256 job=knary:h=9,work=1000 job=hog")
    trace = tr.parse_trace(run.console)
    timeline = regimes(trace)
    by_app = {r["app"]: r for r in run.results}
    filler = "fill" if barrier == "twophase" else "part"
    assert by_app["synth"]["regime"] == "gang" and by_app["knary"]["regime"] == filler, by_app
    assert by_app["hog"]["regime"] == filler and by_app["gauss"]["regime"] == "part", by_app
    if barrier == "spin":
        assert by_app["knary"]["fill_us"] == by_app["hog"]["fill_us"] == 0, by_app
    assert_regimes_exact(run.results, timeline)
    assert_gang_rows_coscheduled(trace, timeline, run.results)
    assert_partitions_disjoint(trace, timeline, 8, run.results)


@pytest.mark.parametrize("var", [600, 800, 950, 1100, 1300])
def test_sim_a_job_at_the_threshold_does_not_flap(var):
    """synth with adapt=no has gang_loss = its imbalance t_w, which var moves across omega (the calibrated
    block + wake): at every var, default hysteresis, it moves at most twice (into a gang row, and out of it
    for good); with no margin and confirm=1 it still moves at most once per two windows."""
    job = f"job=synth:grain=2000,var={var},iters=6000,adapt=no job=hog"
    run = sim_ok(8, f"policy=adaptive quantum={QUANTUM_MS}ms {job}")
    synth = next(r for r in run.results if r["app"] == "synth")
    assert synth["regime_moves"] <= 2, synth
    run = sim_ok(8, f"policy=adaptive quantum={QUANTUM_MS}ms window=1 confirm=1 margin=0 {job}")
    assert_regime_accounting(run.results, 1, 1)


def test_the_experiment_is_a_subcommand_and_judges_adaptive(capsys):
    """``schedlab experiment adaptive`` (through the executor, on the simulator): a row per policy, adaptive's
    row with each job's regime and a verdict against the fixed policies."""
    from schedlab.experiments import main as experiment
    assert experiment(["adaptive", "--sim", "--harts", "4", "--seeds", "1", "--mixes", "fine+hog",
                       "--quantum", "2ms", "--policies", "partition,adaptive"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| fine+hog | 4 |")]
    assert [r.split("|")[3].strip() for r in rows] == ["partition", "adaptive"], rows
    # no gang row, so nothing for a filler to fill: the hog holds a share (adrule.c)
    assert "hog#2=part" in rows[1] and any(v in rows[1] for v in ("/ win", "/ tie (within 1 %)", "/ loses to partition (")), rows


def test_the_experiment_interleaves_the_policies_seed_by_seed(monkeypatch):
    """The mix boots go seed by seed, each seed's policies in a rotated order, so a host that drifts over the
    session moves every policy alike (policy after policy, it favoured whichever came first); each policy's
    numbers are still its own."""
    from types import SimpleNamespace
    import schedlab.experiments.adaptive as exp
    order = []

    def fake_boots(args, harts, bootargs_list):
        runs = []
        for b in bootargs_list:
            seed, policy = (int(re.search(r"seed=(\d+)", b)[1]), re.search(r"policy=(\w+)", b)[1])
            order.append((policy, seed) if b.count("job=") > 1 else None)
            end = 1000 * seed + {"gang": 100, "partition": 200, "adaptive": 300}[policy]
            runs.append(SimpleNamespace(results=[{"job": 1, "app": "synth", "arrive_us": 0, "end_us": end}],
                                        summary={"makespan_us": end}))
        return runs

    monkeypatch.setattr(exp, "boots", fake_boots)
    out = exp.measure_mix(SimpleNamespace(quantum="2ms"), 4, ["gang", "partition", "adaptive"],
                          ["synth:grain=500", "hog"], [1, 2, 3])
    assert [k for k in order if k] == [("gang", 1), ("partition", 1), ("adaptive", 1), ("partition", 2),
                                       ("adaptive", 2), ("gang", 2), ("adaptive", 3), ("gang", 3), ("partition", 3)]
    # each policy's makespans, in seed order, are its own runs'
    assert {p: [m for _, m, _ in v] for p, v in out.items()} == {
        "gang": [1100, 2100, 3100], "partition": [1200, 2200, 3200], "adaptive": [1300, 2300, 3300]}


def test_the_experiment_takes_a_mix_of_ones_own(capsys):
    """--mix adds a mix of the user's (named or not) and, alone, runs only it; a bad one is a usage error."""
    from schedlab.experiments import main as experiment
    from schedlab.experiments.adaptive import parse_mix
    assert parse_mix("blocky=synth:grain=500,barrier=block hog", 1) == ("blocky", ["synth:grain=500,barrier=block", "hog"])
    assert parse_mix("synth:grain=500 knary", 2) == ("custom2", ["synth:grain=500", "knary"])
    for bad in ("x=", "hog", "  "):
        with pytest.raises(ValueError):
            parse_mix(bad, 1)
    assert experiment(["adaptive", "--sim", "--harts", "4", "--seeds", "1", "--quantum", "2ms",
                       "--policies", "partition,adaptive", "--mix", "two=synth:grain=500,iters=2000 knary:h=7"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| two ")]
    assert [r.split("|")[1:4] for r in rows] == [[" two ", " 4 ", " partition "], [" two ", " 4 ", " adaptive "]], rows
    with pytest.raises(SystemExit):
        experiment(["adaptive", "--sim", "--mix", "hog"])


def test_the_experiment_draws_random_mixes_from_the_build(capsys):
    """--random N draws N mixes of 2-3 jobs from the build's apps (the same seed, the same mixes; an app the build
    lacks is never drawn), names and prints each, and the table ends with the tally of adaptive's verdicts."""
    from schedlab.experiments import main as experiment
    from schedlab.experiments.adaptive import random_mixes, tally
    apps, bg = ["synth", "knary", "hog"], frozenset({"hog"})
    mixes = random_mixes(20, 7, apps, bg)
    assert mixes == random_mixes(20, 7, apps, bg) and mixes != random_mixes(20, 8, apps, bg)
    assert all(2 <= len([j for j in m if j != "hog"]) <= 3 for m in mixes.values()), mixes
    assert {j.partition(":")[0] for m in mixes.values() for j in m} <= set(apps), mixes
    assert any("hog" in m for m in mixes.values()) and not all("hog" in m for m in mixes.values()), mixes
    with pytest.raises(ValueError):
        random_mixes(1, 1, ["hog"], bg)
    assert tally(["win", "tie (within 1 %)", "loses to gang (slowdown +2.0 %), partition (makespan +3.0 %)",
                  "loses to gang (makespan +1.5 %: worse on 2 of 3 seeds)"]) == \
        "# 4 cases: 1 wins, 1 ties, 2 losses (against gang 2, partition 1)"
    assert experiment(["adaptive", "--sim", "--harts", "4", "--seeds", "1", "--quantum", "2ms", "--policies",
                       "partition,adaptive", "--random", "1", "--random-seed", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("# random3.1: ") and out[-1].startswith("# 1 cases: "), out
    assert [r.split("|")[1:4] for r in out if r.startswith("| random3.1 ")] == \
        [[" random3.1 ", " 4 ", " partition "], [" random3.1 ", " 4 ", " adaptive "]], out


def test_the_summary_states_the_goals_over_every_case():
    """The lines before the tally: each policy's geometric mean slowdown over the cases (best first), the cases
    adaptive lost to the best fixed policy in hindsight (past the tie tolerance), and its worst ratios against
    that best and against partition, with the case and the counts past 25 % and 10 %."""
    from schedlab.experiments.adaptive import summary
    cases = [("m1", 8, {"gang": 2.0, "partition": 1.0, "adaptive": 1.3}),
             ("m2", 16, {"gang": 1.0, "partition": 4.0, "adaptive": 1.005}),
             ("m3", 32, {"gang": 3.0, "partition": 2.0, "adaptive": 2.1})]
    geo, goals = summary(cases, ["gang", "partition"], 1)
    assert geo == "# geometric mean slowdown over 3 cases: adaptive 1.400, gang 1.817, partition 2.000", geo
    assert goals == ("# adaptive against the best fixed policy: 2 of 3 cases lost, 1 more than 25 % above; worst "
                     "x1.300 (m1 at 8 harts); against partition: 1 more than 10 % above, worst x1.300 (m1 at 8 "
                     "harts)"), goals
    assert summary([], ["gang"], 1) == []


def test_slowdown_counts_the_wait_for_a_first_slot():
    """The experiment's slowdown is a job's response time (arrival to end), not elapsed_us (from its first
    dispatch): under gang the second row's job waits a quantum before it runs, and that wait is its loss too."""
    from schedlab.experiments.adaptive import response_us
    run = sim_ok(2, f"policy=gang quantum={QUANTUM_MS}ms job=synth:grain=500,iters=2000 job=synth:grain=500,iters=2000")
    second = max(run.results, key=lambda r: r["start_us"])
    assert second["start_us"] - second["arrive_us"] >= QUANTUM_MS * 1000 * 0.9, second
    assert response_us(second) == second["end_us"] - second["arrive_us"] > second["elapsed_us"], second


def test_the_verdict_counts_medians_within_the_tie_tolerance_as_equal():
    """The verdict reads medians (slowdown, makespan ms): within --tie percent is equal, past it a loss that
    names the policy, the metric, by how much and on how many seeds; a win needs one metric below by more than
    the tolerance."""
    from schedlab.experiments.adaptive import verdict
    med = {"gang": (3.21, 409), "partition": (3.23, 326)}
    assert verdict({**med, "adaptive": (3.23, 326)}, ["gang", "partition"], 1) == "tie (within 1 %)"
    assert verdict({**med, "adaptive": (3.23, 300)}, ["gang", "partition"], 1) == "win"
    assert verdict({**med, "adaptive": (3.23, 300)}, ["gang", "partition"], 0.1) == \
        "loses to gang (slowdown +0.6 %)"
    assert verdict({**med, "adaptive": (3.40, 330)}, ["gang", "partition"], 1) == \
        "loses to gang (slowdown +5.9 %), partition (slowdown +5.3 %, makespan +1.2 %)"
    # seed by seed: on how many seeds adaptive was past the tolerance against the same seed's boot
    per_seed = {"gang": [(3.0, 400), (3.2, 409), (3.3, 420)], "partition": [(3.2, 320), (3.23, 326), (3.3, 330)],
                "adaptive": [(3.1, 330), (3.4, 330), (3.5, 331)]}
    assert verdict({**med, "adaptive": (3.40, 330)}, ["gang", "partition"], 1, per_seed) == \
        ("loses to gang (slowdown +5.9 %: worse on 3 of 3 seeds), "
         "partition (slowdown +5.3 %: worse on 2 of 3 seeds, makespan +1.2 %: worse on 2 of 3 seeds)")


def published_sync(bootargs, cpus=2):
    """{job: (episodes, waits)} the jobs published (the simulator's --stats, which runs adaptive.c unchanged)."""
    binary = os.environ.get("SCHEDLAB_SIM") or str(REPO_ROOT / "build" / "sim" / "schedlab-sim")
    out = subprocess.run([binary, "--cpus", str(cpus), "--stats", bootargs], capture_output=True, text=True,
                         timeout=120, check=True)
    return {int(j): (int(e), int(w)) for j, e, w in
            re.findall(r"sim: job (\d+) sync episodes=(\d+) waits=(\d+)", out.stderr)}


def test_waits_are_timed_only_where_the_rule_reads_them():
    """abi.h sync_timed: a job folded onto its share (adapt=yes beside a hog) is judged by its episodes alone,
    so its waits do not time themselves; one that time-shares harts it cannot fold onto (adapt=no) times them,
    and they take it to a gang row."""
    job = "job=synth:iters=400,grain=1000,procs=2,barrier=spin"
    folded = published_sync(f"policy=adaptive {job},adapt=yes job=hog")
    shared = published_sync(f"policy=adaptive {job},adapt=no job=hog")
    assert folded[1][0] >= 800 and folded[1][1] == 0, folded
    assert shared[1][0] >= 800 and shared[1][1] > 0, shared
    run = sim_boot(2, f"policy=adaptive {job},adapt=no job=hog")
    assert next(r for r in run.results if r["job"] == 1)["regime"] == "gang"


def test_sim_a_thread_program_waiting_on_partners_is_judged_on_its_idle_streaks():
    """The simulator's thread programs publish their idle streaks as the library does (sim_threads.c): gauss fine
    beside a hog takes the prior's row, and its first window there is judged on its episodes - the move out of
    the row carries its grain. (Its idle processes yield their harts, so on its own hart time-sharing would cost
    it little: the weighing takes it back to its partition, adrule.c timeshare_factor.)"""
    run = sim_ok(2, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms window=1 confirm=1 {THREADS_WAITING}")
    gauss = next(r for r in run.results if r["app"] == "gauss")
    moves = [tr.regime_move(x) for x in tr.parse_trace(run.console).records if x.event == "regime" and x.job == gauss["job"]]
    assert moves[0] == ("part", "gang", 0, None) and len(moves) == gauss["regime_moves"] == 2, moves
    assert moves[1][:2] == ("gang", "part") and moves[1][3] > 0, moves


@pytest.mark.parametrize("hog_at", ["", ",at=2ms"])
def test_sim_a_decisive_loss_moves_a_new_job_before_its_first_window_ends(hog_at):
    """adaptive.c probe: every quantum of a job's first window, the window so far is judged; a spinning synth
    that cannot fold, time-sharing one hart beside a hog, loses far more than decisive= block + wakes per
    episode, so it moves to a gang row before the first window (window= 4 quanta) ends, not after it. A hog
    arriving 2 ms later shrinks its share to one hart, which turns its wait timing on mid-window: its window
    restarts there (adaptive.c restart_window) rather than carrying no evidence to the end. (prior=part: it
    starts there, to be measured.)"""
    quantum_ms = 10
    jobs = SPINNING_WAITING.replace("job=hog", "job=hog:procs=2" + hog_at)
    synth = next(r for r in sim_ok(2, f"policy=adaptive prior=part quantum={quantum_ms}ms {jobs}").results
                 if r["app"] == "synth")
    assert synth["regime"] == "gang" and synth["regime_moves"] == 1, synth
    assert synth["part_us"] < 4 * quantum_ms * 1000, synth


@pytest.mark.parametrize("hog_at", ["", ",at=2ms"])
def test_sim_a_job_that_cannot_fold_starts_coscheduled(hog_at):
    """prior=gang (adrule.c's prior): gauss fine (adapt=no) time-sharing one hart beside a hog has no
    measurement yet, and would lose its partners' quanta there (F&R eq. 8) and nothing in a gang row: it starts in one - from its
    admission, or from the hog's arrival 2 ms later (its share shrinks to one hart), with no grain behind the
    move (nothing measured). It stays: no memory of part, so its own imbalance is no reason to leave. A job
    that folds (adapt=yes) starts in its partition, and so does one whose share covers its processes."""
    jobs = THREADS_WAITING.replace("job=hog", "job=hog:procs=2" + hog_at)
    run = sim_ok(2, f"policy=adaptive prior=gang trace=on quantum={QUANTUM_MS}ms {jobs}")
    gauss = next(r for r in run.results if r["app"] == "gauss")
    assert gauss["regime"] == "gang" and gauss["regime_moves"] == 1, gauss
    assert gauss["part_us"] <= (2000 if hog_at else 0), gauss
    moves = [tr.regime_move(x) for x in tr.parse_trace(run.console).records if x.event == "regime" and x.job == gauss["job"]]
    assert moves == [("part", "gang", 0, None)], moves
    for other in ("job=synth:grain=500,iters=2000 job=hog", "job=synth:grain=500,iters=2000,adapt=no,procs=2 job=hog:procs=2"):
        run = sim_ok(4, f"policy=adaptive prior=gang trace=on quantum={QUANTUM_MS}ms {other}")
        synth = next(r for r in run.results if r["app"] == "synth")
        moves = [tr.regime_move(x) for x in tr.parse_trace(run.console).records
                 if x.event == "regime" and x.job == synth["job"]]
        assert synth["part_us"] > 0 and all(m[3] is not None for m in moves), (synth, moves)  # none by the prior


@pytest.mark.parametrize("prior", ["part", "gang"])
def test_sim_a_row_just_entered_runs_next(prior):
    """adround.c ad_switch: a job that enters a gang row - by the prior at its admission, or judged losing in its
    partition at a quantum's end - gets its row at the next switch (at once, at an admission in the SPACE slot),
    not after the SPACE slot's remaining quanta (one per job there: three here); the round then goes on where
    it was left, so the SPACE slot comes back next. A spinning synth that cannot fold arrives with three jobs
    at 4 harts."""
    mix = ("job=synth:procs=4,grain=500,var=500,iters=2000,barrier=spin,adapt=no job=synth:grain=500,iters=4000 "
           "job=knary:h=7 job=hog")
    run = sim_ok(4, f"policy=adaptive prior={prior} trace=on quantum={QUANTUM_MS}ms {mix}")
    mover = next(r for r in run.results if r["job"] == 1)
    assert mover["regime"] == "gang", mover
    records = tr.parse_trace(run.console).records
    at = next(i for i, x in enumerate(records) if x.event == "regime" and x.job == mover["job"])
    switches = [x for x in records[at:] if x.event in tr.SWITCH_EVENTS]
    row, after = switches[0], switches[1]
    assert row.arg >= 0 and row.time_us - records[at].time_us < 1, (records[at], row)  # its row, at that moment
    ran = {x.job for x in records if x.event == "run" and row.time_us <= x.time_us < after.time_us}
    assert ran == {mover["job"]}, ran
    assert after.arg == -1 or after.time_us >= mover["end_us"], after  # the SPACE slot it cut short comes back


def test_sim_a_row_taken_at_admission_runs_at_its_first_process():
    """adround.c ad_run_row_next: a job the prior coschedules at its admission has no process yet, so its row is
    empty then; the switch to it waits for its first process's enqueue instead of giving up (it stayed in the
    SPACE slot, and gauss fine began two quanta late: 8 harts, beside oddeven and a hog)."""
    mix = "job=oddeven:n=16384,barrier=spin job=gauss:n=192,variant=fine,adapt=no,mem=8M job=hog"
    run = sim_ok(8, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms {mix}")
    gauss = next(r for r in run.results if r["app"] == "gauss")
    assert gauss["regime_moves"] >= 1 and gauss["gang_us"] > 0, gauss
    records = tr.parse_trace(run.console).records
    first = next(x for x in records if x.event == "run" and x.job == gauss["job"])
    row = [x for x in records if x.event in tr.SWITCH_EVENTS and x.time_us <= first.time_us][-1]
    assert row.arg >= 0 and first.time_us - gauss["arrive_us"] < QUANTUM_MS * 1000 / 10, (row, first, gauss)


def test_sim_every_slot_has_one_turn_per_round():
    """adround.c ad_switch: a row's early turn (row_next) takes the place of its next regular one. Two spinning
    synths that cannot fold take rows 0 and 1 at their admission, the second while row 0 runs; the switch to
    row 1 went on from row 0 afterwards and gave row 1 a second quantum in a row, while the blocking synth in
    the SPACE slot waited (slots 0, 1, 1: it began at 30 ms instead of 20)."""
    mix = ("job=synth:grain=20000,var=20000,iters=100,barrier=spin,adapt=no "
           "job=synth:grain=2000,var=1000,iters=1000,barrier=spin,adapt=no "
           "job=synth:grain=20000,var=40000,iters=100,barrier=block")
    run = sim_ok(4, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms {mix}")
    assert sorted(r["regime"] for r in run.results) == ["gang", "gang", "part"], run.results
    first_end = min(r["end_us"] for r in run.results)
    slots = [x.arg for x in tr.parse_trace(run.console).records
             if x.event in tr.SWITCH_EVENTS and x.time_us < first_end]  # all three runnable: three slots a round
    assert len(slots) >= 4 and set(slots[:3]) == {0, 1, -1}, slots
    assert all(a != b for a, b in zip(slots, slots[1:])), slots  # one quantum per slot: one job each


def test_sim_a_trace_that_overflowed_keeps_every_decision():
    """trace.h: the policy's decisions are kept in a small ring of their own too, and the dump puts back those
    the big ring overwrote. Here the big rings drop records (a blocking oddeven that cannot fold, at 12 harts),
    and every job's regime moves and its share at its admission are still in the trace; before, oddeven's
    move and every job's first share were gone, so the Perfetto track could not explain them."""
    mix = ("job=oddeven:n=12288,barrier=block,adapt=no,at=7ms "
           "job=synth:grain=200,var=20000,iters=300,barrier=twophase,adapt=no job=sleeper:iters=5,sleep_us=500,at=7ms")
    run = sim_ok(12, f"seed=2049 policy=adaptive trace=on quantum=5ms {mix}")
    trace = tr.parse_trace(run.console)
    assert trace.complete and sum(trace.dropped.values()) > 0, trace.dropped  # the big rings overflowed
    for r in run.results:
        moves = [x for x in trace.records if x.event == "regime" and x.job == r["job"]]
        assert len(moves) == r["regime_moves"] >= 1, (r, moves)
        reps = [x.time_us for x in trace.records if x.event == "rep" and x.job == r["job"]]
        assert reps and reps[0] <= r["arrive_us"] + 1, (r, reps[:3])


def test_sim_a_new_process_is_bound_away_from_its_creator():
    """adround.c ad_pick_hart: among the harts of its share that hold fewest of its job's processes, a new
    process goes to one other than the hart creating it - which is busy admitting the job (process 0: on
    QEMU at 2 harts gauss fine's first process, bound to hart 0 while hart 0 admitted the hog, waited 7 ms
    with hart 1 idle) or running the creator (the others)."""
    run = sim_ok(4, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms job=synth:procs=4,iters=200")
    news = [r for r in tr.parse_trace(run.console).records if r.event == "new"]
    assert len(news) == 4 and all(r.arg != r.hart for r in news), news
    assert sorted(r.arg for r in news) == [0, 1, 2, 3], news  # one per hart: fewest first


@pytest.mark.parametrize("barrier,harts", [("block", 8), ("block", 4), ("spin", 8)])
def test_sim_a_guessed_row_is_left_when_the_waits_sleep(barrier, harts):
    """adrule.c's prior: an imbalanced coarse synth that cannot fold starts in a gang row unmeasured. Blocking,
    its waits sleep - time-sharing a share of its own, its partners would take its hart - so its first
    evidence (past its start-up, probed every quantum) sends it to its partition with no confirmation,
    measured (t_p shown), and it stays there: on its own share it loses only its idle harts, not the waits
    its partners run through (4 harts: it went back to its row on its whole wait). Spinning, it stays in
    its row. adaptive.c counts as asleep only the time blocked inside a wait."""
    mix = f"job=synth:grain=20000,var=40000,iters=300,barrier={barrier},adapt=no job=knary:h=9,work=1000 job=hog"
    run = sim_ok(harts, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms {mix}")
    synth = next(r for r in run.results if r["app"] == "synth")
    moves = [(x.time_us, tr.regime_move(x)) for x in tr.parse_trace(run.console).records
             if x.event == "regime" and x.job == synth["job"]]
    assert moves[0][1] == ("part", "gang", 0, None), moves  # the prior
    if barrier == "spin":
        assert synth["regime"] == "gang" and synth["regime_moves"] == 1, (synth, moves)
        return
    assert len(moves) == 2 and moves[1][1][:2] == ("gang", "part") and moves[1][1][3] is not None, moves
    assert moves[1][0] - moves[0][0] <= 4 * QUANTUM_MS * 1000 + 1, moves  # within its first window
    assert synth["regime"] == "part", synth


def test_sim_a_wait_still_open_counts_in_its_window():
    """abi.h wait_open: at a 2 ms quantum, a spinning synth that cannot fold, time-sharing one hart, waits for
    its partner a quantum, so at the first probes its waits were still open - uncounted until they ended, the
    probe saw nothing and the job waited out its whole first window (4 quanta) in its partition. Counted up to
    now, they move it at the second. (prior=part: it starts there, to be measured.)"""
    synth = next(r for r in sim_ok(2, f"policy=adaptive prior=part quantum={QUANTUM_MS}ms {SPINNING_WAITING}")
                 .results if r["app"] == "synth")
    assert synth["regime"] == "gang" and synth["regime_moves"] == 1, synth
    assert synth["part_us"] < 4 * QUANTUM_MS * 1000, synth


def allotments(run):
    """{job: [harts, ...]} in the order the repartitions (``rep`` records) gave them."""
    out = {}
    for r in tr.parse_trace(run.console).records:
        if r.event == "rep":
            out.setdefault(r.job, []).append(r.arg)
    return out


def test_sim_spare_harts_go_where_they_take_time_off():
    """allot.h's told shapes. On 8 harts, two jobs of 8 pinned workers that meet at barriers and knary (stealing
    threads) share 2 harts each and 2 spare: partition gives them in arrival order (3, 3, 2); under adaptive,
    once a window has shown the workers' episodes (the library publishes its units, abi.h), a worker job's third
    hart only takes 4 rounds to 3 (4/3) while knary's takes a third off its time (3/2): knary gets one. A
    background job (the hog, first to arrive) takes spare harts last."""
    mix = ("job=oddeven:n=24576,barrier=spin job=synth:grain=20000,var=0,iters=400,barrier=spin "
           "job=knary:h=9,work=1000")
    part = allotments(sim_ok(8, f"policy=partition trace=on quantum={QUANTUM_MS}ms {mix}"))
    adap = allotments(sim_ok(8, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms {mix}"))
    assert part[2] == [4, 3] and part[3][0] == 2 and 3 not in part[3], part  # knary: 2 until synth leaves
    assert adap[2][:3] == [4, 3, 2] and adap[3][:2] == [2, 3], adap
    hog = allotments(sim_ok(8, f"policy=adaptive trace=on quantum={QUANTUM_MS}ms job=hog "
                               "job=oddeven:n=24576,barrier=spin job=knary:h=9,work=1000"))
    assert hog[1][:3] == [8, 4, 2] and hog[3][0] == 3, hog


def test_sim_a_grown_share_is_used():
    """adround.c wake_hart: when a job leaves, a blocking job's share grows and process control resumes
    processes that slept bound to harts its others run on; they must spread over the harts just gained, not
    queue behind each other. Simulated time is deterministic, so the check is the job's time against
    partition's, which levels every binding at a repartition: before the fix 84 ms against 68."""
    mix = "job=synth:grain=2000,iters=300 job=oddeven:n=16384,barrier=block job=knary:h=8,work=2000"
    ends = {p: next(r["elapsed_us"] for r in sim_ok(12, f"policy={p} quantum=10ms {mix}").results
                    if r["app"] == "oddeven") for p in ("partition", "adaptive")}
    assert ends["adaptive"] <= 1.01 * ends["partition"], ends


def test_sim_a_row_that_costs_the_others_more_than_it_gains_is_left():
    """adrule.c "The others' cost": a blocking oddeven that cannot fold takes the prior's gang row at 16 harts,
    where its row's efficiency is low (its waits sleep), while gauss (spinning, adapt=yes) and the synth's row
    share the round with it. Weighed at a window's end, the row gains oddeven less than it costs gauss (on 16
    harts for fewer quanta instead of 8 for more, sublinear), so oddeven leaves it for a partition, measured (its
    grain shown), and stays there; the spinning synth keeps its row (time-shared, its waits would lose a quantum
    an episode: F&R eq. 8). Without the weighing it stayed in its row to the end."""
    mix = ("job=oddeven:n=16384,barrier=block,adapt=no job=gauss:n=512,barrier=spin "
           "job=synth:grain=20000,var=20000,iters=400,barrier=spin,adapt=no job=hog")
    run = sim_ok(16, f"policy=adaptive trace=on quantum=10ms {mix}")
    by_app = {r["app"]: r for r in run.results}
    moves = [(x.job, tr.regime_move(x)[:2]) for x in tr.parse_trace(run.console).records if x.event == "regime"]
    odd, synth = by_app["oddeven"]["job"], by_app["synth"]["job"]
    assert [m for j, m in moves if j == odd] == [("part", "gang"), ("gang", "part")], moves
    assert [m for j, m in moves if j == synth] == [("part", "gang")], moves
    assert by_app["oddeven"]["regime"] == "part" and by_app["oddeven"]["gang_us"] > 0, by_app["oddeven"]


def test_sim_a_guessed_row_whose_waits_yield_is_left():
    """adrule.c yield_spin: msort (adapt=no) on 8 harts beside gauss takes the prior's gang row, where its idle
    processes' waits read as spinning - each yields its hart every few failed polls (lib/threads/uthread.c
    pause_vp; sim_threads.c models it), and in the row a yield comes straight back. The kernel counts those
    yields inside a wait (admeasure.c ad_ready), so its first evidence shows waits that yield: time-sharing a
    share of its own would lose a yield's spin and switch an episode (F&R eq. 12's case), not its partners'
    quanta (eq. 8), and it leaves its row, measured (its grain shown). The trace shows the yields in its row.
    A spinning synth that cannot fold keeps its row (test_sim_a_guessed_row_is_left_when_the_waits_sleep)."""
    run = sim_ok(8, f"policy=adaptive trace=on quantum=10ms job=gauss:n=512,barrier=spin job=msort:n=262144,adapt=no")
    msort = next(r for r in run.results if r["app"] == "msort")
    records = tr.parse_trace(run.console).records
    moves = [(x.time_us, tr.regime_move(x)) for x in records if x.event == "regime" and x.job == msort["job"]]
    assert [m[:2] for _, m in moves][:2] == [("part", "gang"), ("gang", "part")], moves
    assert moves[1][1][3] is not None, moves  # judged on a measured grain, not the prior's guess
    row = [x for x in records if x.event == "yld" and x.job == msort["job"] and moves[0][0] <= x.time_us < moves[1][0]]
    assert row, "msort's idle processes yielded no hart in its row"
