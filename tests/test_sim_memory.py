"""Memory in the simulator (issue 28, tools/sim/sim_mem.[ch], sim_touch.c and the app models): the plugin's cache model
(tools/model/cache.c, whose own host tests check it against a reference) on simulated harts, fed by the same
profile files; these tests check the simulator's use of it. Correctness only, never timings."""

import json
import os
import subprocess

import pytest

from helpers import schedlab_cmd
from schedlab.qemu import REPO_ROOT
from schedlab.sim import ensure_sim, sim_argv, sim_boot

ASAN = REPO_ROOT / "build" / "sim-asan" / "schedlab-sim"
if ASAN.is_file():
    os.environ.setdefault("SCHEDLAB_SIM", str(ASAN))

MIX = "policy=gang quantum=5ms job=gauss:procs=2,n=64 job=oddeven:procs=2,n=512"


def model_jobs(run):
    assert run.ok, run.console[-2000:]
    assert run.parsed.model_end is not None and not run.parsed.malformed, run.console[-2000:]
    return run.parsed.model_jobs


def test_a_simulated_run_under_a_model_is_the_same_bytes_twice():
    ensure_sim()
    argv = sim_argv(2, MIX, model="modern")
    outs = [subprocess.run(argv, capture_output=True, check=True).stdout for _ in range(2)]
    assert outs[0] == outs[1]
    assert b"\nMODEL end profile=modern " in outs[0]


def test_model_lines_parse_and_join_the_results_as_a_qemu_boots_do():
    run = sim_boot(2, MIX, model="iris")
    jobs = model_jobs(run)
    assert run.model.startswith("iris,line_b=16,") and run.boot["model"] == run.model
    assert set(jobs) == {r["job"] for r in run.results}         # gauss and oddeven both touch memory
    for j in jobs.values():                                     # the plugin's identity (tools/model/README.md)
        assert j["misses"] == j["llc_hits"] + j["coherence"] + j["local"] + j["remote"]
        assert 0 < j["misses"] < j["accesses"]
    assert run.parsed.model_end["accesses"] == sum(j["accesses"] for j in jobs.values())


def test_without_caches_every_access_is_served_by_memory_local_or_remote():
    jobs = model_jobs(sim_boot(2, MIX, model="butterfly"))
    for j in jobs.values():
        assert j["misses"] == j["accesses"] == j["local"] + j["remote"]
        assert j["remote"] > 0 and j["local"] > 0             # two nodes: each hart reads the other's half


def test_misses_cost_simulated_time():
    plain = sim_boot(2, MIX)
    slow = sim_boot(2, MIX, model="butterfly")
    assert plain.ok and slow.ok and plain.parsed.model_end is None
    for r in plain.results:
        s = next(x for x in slow.results if x["job"] == r["job"])
        assert s["cpu_us"] > r["cpu_us"]


def test_a_competing_job_that_thrashes_the_cache_adds_misses():
    """oddeven's 8 KB of keys stay in iris's 64 KB L1 alone; a gauss of 260 KB on the same hart evicts them
    at every switch (CPUS=1, short quanta), so oddeven misses more (with no L2 behind the L1 to catch them)."""
    spec = "iris,l2_kb=0,l2_ways=0"
    alone = model_jobs(sim_boot(1, "policy=timeslice quantum=1ms job=oddeven:procs=1,n=2048", model=spec))
    mixed = model_jobs(sim_boot(1, "policy=timeslice quantum=1ms job=oddeven:procs=1,n=2048 "
                                   "job=gauss:procs=1,n=180", model=spec))
    # the same work; beyond it only the kernel's lines at the extra switches and ticks (whole kernel states,
    # sim_start.c: 384 bytes, as `--stats` says; kernel stacks and the scheduler's words, sim_kernel.c)
    extra = mixed[1]["accesses"] - alone[1]["accesses"]
    assert 0 <= extra < alone[1]["accesses"] // 100 and extra >= kernel_state_bytes() // 8
    assert mixed[1]["misses"] > alone[1]["misses"]


def test_switches_cost_the_job_the_kernels_lines():
    """sim_kernel.c: a quantum of 1 ms instead of 100 ms gives the hog beside Gauss ~85 more switches on 2 harts;
    each touches the kernel's stack and shared words, which the other hart wrote since (ksr1: coherence, as
    deterministic QEMU's 7.5 kernel misses a switch), so the hog misses more by a few lines a switch - and its
    work in registers is the same."""
    mix = "policy=timeslice quantum={} job=gauss:n=256,variant=coarse,sync=barrier,procs=2 job=hog:procs=2"
    runs = {q: sim_boot(2, mix.format(q), model="ksr1", charge=False) for q in ("1ms", "100ms")}
    hog = {q: (model_jobs(r)[2], next(x for x in r.results if x["app"] == "hog")) for q, r in runs.items()}
    switches = hog["1ms"][1]["switches"] - hog["100ms"][1]["switches"]
    assert switches > 50
    per_switch = (hog["1ms"][0]["misses"] - hog["100ms"][0]["misses"]) / switches
    assert 2 <= per_switch <= 30, per_switch
    assert hog["1ms"][0]["coherence"] > hog["100ms"][0]["coherence"] + 2 * switches


def kernel_state_bytes():
    p = subprocess.run(sim_argv(1, "job=synth:procs=1,iters=1", model="iris") + ["--stats"], capture_output=True,
                       text=True, check=True)
    return int(p.stderr.split("sim: kernel state ", 1)[1].split()[0])


@pytest.mark.parametrize("spec, message", [
    ("nosuch", "cannot read profile"),
    ("iris,l1_kb=x", "l1_kb"),
    ("iris,bogus=1", "bogus"),
])
def test_a_bad_model_is_refused_with_the_key_named(spec, message):
    ensure_sim()
    argv = [a for a in sim_argv(2, MIX)]
    argv[-1:-1] = ["--model", spec]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr and proc.stdout == ""


# ---------------------------------------------------------------- the validation pipeline (deterministic QEMU)

@pytest.mark.qemu
def test_validation_pipeline_fits_and_pairs_on_deterministic_qemu(tmp_path):
    """validate --tiny --deterministic: the first set's tiny mix and the spin-beside-block pairing under gang,
    each app's unit fitted to QEMU's run alone (so the simulator's alone run is QEMU's within a few %)."""
    out = schedlab_cmd("validate", "--tiny", "--deterministic", "--cpus", "2", "--json", str(tmp_path / "v.json"),
                       timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = json.loads((tmp_path / "v.json").read_text())
    pair = [r for r in rows if r["quantum"] == "5ms"]
    assert {r["job"].split(":")[0] for r in pair} == {"job=oddeven", "job=synth"}
    assert all(r["policy"] == "gang" and r["qemu"] and r["sim"] for r in pair)
    assert "cases within 15 %" in out.stdout


@pytest.mark.qemu
def test_validation_under_the_model_reports_time_and_misses_side_by_side(tmp_path):
    out = schedlab_cmd("validate", "--tiny", "--deterministic", "--model", "iris", "--cpus", "1", "--json",
                       str(tmp_path / "m.json"), timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = json.loads((tmp_path / "m.json").read_text())
    assert {r["case"] for r in rows} == {"ch2", "fig3.2", "ch5", "ch4"} and all(r["profile"] == "iris" for r in rows)
    assert {r["policy"] for r in rows if r["case"] == "ch5"} == {"sor:afs", "tclosure:afs"}
    for r in rows:
        assert r["misses_alone"]["qemu"] > 0 and r["misses_alone"]["sim"] > 0   # both under the model
    assert "comparisons within 15 %" in out.stdout and "Not modelled in the simulator" not in out.stdout  # all are


# ---------------------------------------------------------------- the validation's fit and pairings (simulator only)

def test_fit_makes_each_apps_run_alone_take_the_target_time(tmp_path):
    """The gang spin/block hole (issue 28 item 2): one synth speed ratio scaled oddeven's unit too, so the
    simulator's oddeven alone was 11-30 % off QEMU's, and under gang a slowdown steps with the jobs' lengths.
    fit_calib scales each app's own unit until its run alone takes the target."""
    from schedlab import sim_validate as sv
    head = ["policy=gang", "quantum=5ms", "seed=1"]
    jobs = ["job=oddeven:procs=2,n=1024,barrier=spin", "job=synth:procs=2,iters=300,grain=2000,barrier=block"]
    plain = {t: sv.timed(sim_boot(2, " ".join(head + [t])), sv.app_of(t)) for t in jobs}
    target = {jobs[0]: plain[jobs[0]] * 1.3, jobs[1]: plain[jobs[1]] * 0.8}
    calib, unfitted = sv.fit_calib(2, head, jobs, target, None, tmp_path)
    for t in jobs:
        fitted = sv.timed(sim_boot(2, " ".join(head + [t]), calib=calib), sv.app_of(t))
        assert abs(fitted / target[t] - 1) < 0.03, (t, fitted, target[t])
    assert abs(unfitted[jobs[0]] - (1 / 1.3 - 1)) < 0.01 and abs(unfitted[jobs[1]] - (1 / 0.8 - 1)) < 0.01


def test_fit_reaches_the_target_where_the_models_stalls_are_most_of_the_time(tmp_path):
    """Under butterfly most of coarse Gauss's time at 2 harts is the far process's remote stalls, which its
    unit does not scale: scaling by the ratio alone stopped 19 % short in three runs. The fit's secant steps
    take the time's affine shape."""
    from schedlab import sim_validate as sv
    head, job = ["seed=1"], "job=gauss:n=96,variant=coarse,sync=barrier,procs=2"
    plain = sv.timed(sim_boot(2, " ".join(head + [job]), model="butterfly"), "gauss")
    for factor in (1.6, 3.0):
        calib, _ = sv.fit_calib(2, head, [job], {job: plain * factor}, None, tmp_path, model="butterfly")
        fitted = sv.timed(sim_boot(2, " ".join(head + [job]), calib=calib, model="butterfly"), "gauss")
        assert abs(fitted / (plain * factor) - 1) < 0.02, (factor, fitted, plain * factor)


def test_pairings_cover_every_policy_of_the_build_with_a_spinner_beside_a_blocker():
    from schedlab import sim_validate as sv
    policies = sim_boot(1, "job=synth:procs=1,iters=1").boot["policies"]
    pairs = sv.pairings()
    assert [p for p, _ in pairs] == list(policies)
    for _, jobs in pairs:
        assert any("barrier=spin" in j for j in jobs) and any("barrier=block" in j for j in jobs)


# ---------------------------------------------------------------- sor: the library's loop schedulers, under a model

def test_sor_takes_its_chunks_from_the_librarys_loop_schedulers():
    """static: one grab per process per loop; ss: one per row; every scheduler ends with check=ok and par_us."""
    n, iters = 66, 3
    for sched, grabs in [("static", 2 * 2 * iters), ("ss", 2 * iters * (n - 2))]:
        run = sim_boot(2, f"seed=1 job=sor:procs=2,n={n},iters={iters},sched={sched}")
        assert run.ok, run.console[-1500:]
        r = run.results[0]
        assert r["grabs"] == grabs and r["loops"] == 2 * iters and r["par_us"] > 0
    for sched in ("gss", "factoring", "trapezoid", "afs", "mod-factoring", "best-static"):
        assert sim_boot(2, f"seed=1 job=sor:procs=2,n={n},iters={iters},sched={sched}").ok


def test_sor_keeps_its_rows_in_cache_under_static_and_loses_them_under_self_scheduling():
    """Markatos ch. 5's point: a scheduler that hands a hart the same rows every loop (static, afs) keeps them
    in its cache; self-scheduling deals rows anew each loop, so they come from the other hart (coherence)."""
    misses = {}
    for sched in ("static", "afs", "ss"):
        jobs = model_jobs(sim_boot(2, f"seed=1 job=sor:procs=2,n=128,iters=4,sched={sched}", model="iris"))
        misses[sched] = jobs[1]["coherence"]
    assert misses["ss"] > 4 * misses["static"] and misses["ss"] > 4 * misses["afs"]


def test_the_librarys_heap_zeroed_after_sors_grids_evicts_them_from_an_l2_they_fill():
    """apps/sor.c takes its two grids before the library's first small block, so the kernel zeroes the heap's
    pages after the grids are written: in modern's 1 MB L2, which the two 512 KB grids fill, the heap's lines
    evict grid lines that the sweeps then take from the LLC (deterministic QEMU: 12,418 LLC hits at n=256,
    none with a 2 MB L2). With the heap first, as the simulator had it, the grids stayed in the L2."""
    job = "seed=1 job=sor:procs=1,n=256,iters=1,sched=static"
    fits = model_jobs(sim_boot(1, job, model="modern,l2_kb=2048", charge=False))[1]
    fills = model_jobs(sim_boot(1, job, model="modern", charge=False))[1]
    assert fits["llc_hits"] < 100 < 8000 < fills["llc_hits"]
    assert fills["local"] == fits["local"]  # the same lines from memory: only the re-misses differ


def test_a_hog_block_and_deterministic_modes_timer_traps_are_words_under_butterfly():
    """Without caches every word is an access: the hog's block saves registers and passes doubles through its
    stack (71 words a block on deterministic QEMU), and deterministic QEMU's hart traps every 100 us of run
    (kernel/vclock.h), each a tick's trap; only charge=off (that mode's stand-in) has the extra traps."""
    mix = "seed=1 policy=timeslice quantum=10ms job=gauss:n=256,variant=coarse,procs=1 job=hog:procs=1,block={}"
    def hog(block, charge):
        run = sim_boot(1, mix.format(block), model="butterfly", charge=charge)
        assert run.ok, run.console[-2000:]
        return model_jobs(run)[2]["accesses"]
    small, big = hog(5000, False), hog(50000, False)
    assert small > big  # the same run time in ten times the blocks
    assert hog(50000, True) < big  # without the 100 us traps


def test_charge_off_counts_the_misses_and_adds_no_time():
    """Beside deterministic QEMU, whose plugin counts but cannot charge (charge=off), the simulator's model
    does the same (sim_boot(charge=False), what validate --deterministic uses): the misses of a charged run,
    the time of a run without a model."""
    job = "job=gauss:procs=1,n=96"
    charged, free = sim_boot(1, job, model="iris"), sim_boot(1, job, model="iris", charge=False)
    bare = sim_boot(1, job)
    assert charged.parsed.model_end["charge"] == "on" and free.parsed.model_end["charge"] == "off"
    assert free.parsed.model_end["paid_us"] == 0 < charged.parsed.model_end["paid_us"]
    assert model_jobs(free)[1]["misses"] == model_jobs(charged)[1]["misses"] > 0
    assert free.results[0]["elapsed_us"] == bare.results[0]["elapsed_us"] < charged.results[0]["elapsed_us"]
    argv = sim_argv(1, job, model="iris")
    argv[argv.index("--model") + 1] += ",charge=maybe"
    refused = subprocess.run(argv, capture_output=True, text=True)
    assert refused.returncode != 0 and "charge=on or charge=off" in refused.stderr
