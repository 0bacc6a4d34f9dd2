"""The machine model (tools/model/, issue 24) under QEMU: counts a test can predict, attribution to the right
job under every policy built, every app's answer and every profile's boot under a model.

These assert counts and answers, never timings. The counts come from memwalk (apps/memwalk.c), whose
accesses are known in advance; the slack on each bound covers what a job does besides its walk (its start,
the library, the kernel's work on its behalf: system calls and ticks are counted to the job that runs).
"""

import pytest

from helpers import APPS, assert_all_ok

#: One private level of 16 KiB, 4 ways, 64-byte lines, no L2 and no LLC, one node: every private miss is a
#: miss, so a walk's misses are exactly predictable.
L1_ONLY = "modern,l1_kb=16,l1_ways=4,l2_kb=0,l2_ways=0,llc_kb=0,llc_ways=0,nodes=1"
LINE = 64
L1_LINES = 16 * 1024 // LINE
#: Misses a memwalk job makes besides its walk: its start, the library, its system calls...
SLACK = 3000
#: ... and the kernel's work on each tick or interrupt taken while the job holds a hart (all of it counts to
#: the job that runs), so a bound grows with the job's own elapsed time: a busy host stretches it.
MISSES_PER_TICK = 300
QUANTUM_US = 10_000


def slack(result):
    """What a job may miss besides its walk, from its own RESULT (elapsed time and harts)."""
    return SLACK + MISSES_PER_TICK * result["harts"] * (result["elapsed_us"] // QUANTUM_US + 1)


def model_job(run, job):
    """The MODEL job=<job> line of a run, as a dict."""
    assert run.parsed.model_end is not None, run.console[-2000:]
    assert job in run.parsed.model_jobs, (job, run.parsed.model_jobs)
    return run.parsed.model_jobs[job]


def built(boot):
    """The BOOT line of the build: its policies= and apps= are what the tests run."""
    run = boot(1, "calib=off job=memwalk:kb=4,passes=1")
    assert_all_ok(run)
    return run.boot


def test_walk_larger_than_the_cache_misses_every_line_every_pass(boot):
    kb, passes = 32, 40
    lines = kb * 1024 // LINE
    run = boot(1, f"job=memwalk:kb={kb},passes={passes},procs=1", model=L1_ONLY)
    assert_all_ok(run)
    assert run.boot["model"].startswith("modern,") and run.results[0]["lines"] == lines
    m = model_job(run, 1)
    expected = lines * (passes + 1)           # the fill and every pass, each line once
    assert expected <= m["misses"] <= expected + slack(run.results[0]), m
    assert m["misses"] == m["local"] + m["coherence"] + m["llc_hits"] + m["remote"], m
    assert m["remote"] == 0 and m["llc_hits"] == 0 and m["l2_hits"] == 0, m


def test_walk_that_fits_misses_once_per_line(boot):
    kb, passes = 8, 200
    lines = kb * 1024 // LINE
    assert lines * 2 <= L1_LINES
    run = boot(1, f"job=memwalk:kb={kb},passes={passes},procs=1", model=L1_ONLY)
    assert_all_ok(run)
    m = model_job(run, 1)
    assert m["accesses"] >= lines * (passes + 1), m
    assert lines <= m["misses"] <= lines + slack(run.results[0]), m  # thrashing: lines * (passes + 1) = 25 728


def test_a_flag_written_by_one_hart_costs_the_reader_one_coherence_miss(boot):
    rounds = 3000
    run = boot(2, f"job=memwalk:mode=pingpong,rounds={rounds},procs=2", model=L1_ONLY)
    assert_all_ok(run)
    m = model_job(run, 1)
    writes = 2 * rounds                       # flag and ack, each written once a round
    # A reader can see a write before the writer's callback has told the model (QEMU calls a plugin after
    # the access), which loses that round's miss: a few, never more than a quarter.
    assert writes * 0.75 <= m["coherence"] <= writes + slack(run.results[0]), m


def test_each_job_is_charged_its_own_accesses_under_every_policy(boot):
    """Job 1 thrashes the cache, job 2 fits in it: their counts must not trade places under any policy built,
    though job 2 loses its lines whenever the two share a hart (the cache corruption the model is for)."""
    big_lines, big_passes = 32 * 1024 // LINE, 30
    small_lines, small_passes = 8 * 1024 // LINE, 400
    for policy in built(boot)["policies"]:
        run = boot(2, f"policy={policy} job=memwalk:kb=32,passes={big_passes},procs=1 "
                      f"job=memwalk:kb=8,passes={small_passes},procs=1", model=L1_ONLY)
        assert_all_ok(run)
        big, small = model_job(run, 1), model_job(run, 2)
        small_result = next(r for r in run.results if r["job"] == 2)
        assert big["misses"] >= big_lines * (big_passes + 1), (policy, big)
        assert big["accesses"] >= big_lines * (big_passes + 1), (policy, big)
        assert small["accesses"] >= small_lines * (small_passes + 1), (policy, small)
        # job 2's misses: its lines once, again after each time job 1 ran on its hart, and the kernel's
        assert small["misses"] < small_lines * (small_passes + 1) // 4 + slack(small_result), (policy, small)


def test_remote_accesses_by_node(boot):
    """butterfly: no caches, two nodes. Process 0 allocates the working set in its node; whichever process
    runs on the other node reads its share remotely, every word of every pass."""
    kb, passes = 16, 10
    words_per_share = kb * 1024 // LINE // 2
    run = boot(2, f"job=memwalk:kb={kb},passes={passes},procs=2", model="butterfly")
    assert_all_ok(run)
    assert run.boot["nodes"] == 2
    m = model_job(run, 1)
    assert m["misses"] == m["accesses"] - m["l2_hits"] or m["misses"] == m["accesses"], m  # no caches
    assert m["remote"] >= words_per_share * (passes + 1), m
    assert m["local"] >= words_per_share * (passes + 1), m


def test_every_profile_boots_and_reports(boot):
    from schedlab import model as machine_model
    for profile in machine_model.profiles():
        run = boot(2, "job=memwalk:kb=16,passes=4", model=profile)
        assert_all_ok(run)
        assert run.boot["model"].split(",")[0] == profile
        assert run.boot["idle"] in ("poll", "auto") and run.boot["cycle_ps"] > 0
        end = run.parsed.model_end
        assert end["profile"] == profile and end["cycle_ps"] > 0 and end["charge"] == "on", end
        assert model_job(run, 1)["accesses"] > 0


#: Apps per boot in test_every_app_answers_under_the_model: a boot's start under the model costs more than a small
#: app's run, so the apps share boots (as jobs of one mix, which the kernel runs side by side as any mix).
APPS_PER_BOOT = 6


def test_every_app_answers_under_the_model(boot):
    """Every app the build has (background ones beside foreground jobs) finishes check=ok under a model, and
    the model reports each job."""
    info = built(boot)
    small = {}
    for scenario in APPS.values():                   # the first small scenario of each app test_apps has
        small.setdefault(scenario.split()[0].split(":")[0].removeprefix("job="), scenario)
    small.setdefault("memwalk", "job=memwalk:kb=16,passes=2")
    foreground = [a for a in info["apps"] if a not in info["background"]]
    background = [a for a in info["apps"] if a in info["background"]]
    assert foreground, info
    groups = [foreground[i:i + APPS_PER_BOOT] for i in range(0, len(foreground), APPS_PER_BOOT)]
    for n, group in enumerate(groups):
        scenario = [small.get(app, f"job={app}") for app in group]
        scenario += [f"job={app}" for app in background] if n == 0 else []     # beside this boot's foreground
        run = boot(2, " ".join(scenario), model="iris")
        assert_all_ok(run)
        assert sorted(r["app"] for r in run.results) == sorted(group + (background if n == 0 else [])), run.results
        assert run.parsed.model_end is not None, (group, run.console[-1000:])
        assert {r["job"] for r in run.results} <= set(run.parsed.model_jobs), (group, run.parsed.model_jobs)


def test_no_model_means_no_model(boot):
    run = boot(2, "job=memwalk:kb=16,passes=2")
    assert_all_ok(run)
    assert run.boot["model"] == "none" and run.boot["cycle_ps"] == 0 and run.boot["idle"] == "auto"
    assert run.parsed.model_end is None and not run.parsed.model_jobs
