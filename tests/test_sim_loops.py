"""The simulator's chapter-5 loop apps tclosure and adjoint (tools/sim/apps/tclosure.c, adjoint.c, through the
library's own loop schedulers in sim_loops.c): the keys they report are the apps' (the closure computed on the
host from the app's own input; adjoint's sum redone with the app's arithmetic), the grab counts the library's
host tool's, and under a model an affinity scheduler keeps its rows in cache where self-scheduling loses them.
Correctness and invariants only, never timings."""

import json
import os
import tempfile
from pathlib import Path

import pytest

from schedlab import sim_validate as sv
from schedlab.qemu import REPO_ROOT
from schedlab.sim import sim_boot

from helpers import host_grabs

ASAN = REPO_ROOT / "build" / "sim-asan" / "schedlab-sim"
if ASAN.is_file():
    os.environ.setdefault("SCHEDLAB_SIM", str(ASAN))

SCHEDS = ["static", "ss", "gss", "factoring", "trapezoid", "afs", "mod-factoring", "best-static"]
TIMING_SPLIT = {"afs", "mod-factoring"}     # their local/remote split follows who grabs first


def ok(cpus, bootargs, model=None):
    run = sim_boot(cpus, bootargs, model=model)
    assert run.ok, run.console[-2000:]
    return run


def test_tclosure_and_adjoint_are_modelled_not_refused():
    run = ok(2, "job=tclosure:procs=2,n=16 job=adjoint:procs=2,n=6")
    assert {"tclosure", "adjoint"} <= set(run.boot["apps"])
    assert {r["app"]: r["check"] for r in run.results} == {"tclosure": "ok", "adjoint": "ok"}
    assert "tclosure" not in sv.UNMODELLED and "adjoint" not in sv.UNMODELLED


@pytest.mark.parametrize("app,keys,shape", [("tclosure", "n=40,graph=random,density=10", lambda n: (n, n)),
                                            ("tclosure", "n=40,graph=skewed,clique=30", lambda n: (n, n)),
                                            ("adjoint", "n=12,order=reverse", lambda n: (n * n, 1))])
@pytest.mark.parametrize("procs", [2, 3])
def test_grabs_are_the_librarys_for_every_scheduler(app, keys, shape, procs):
    """grabs= over the loops= loops is the host tool's count for the loop's N and P; remote= too, but for the
    schedulers whose split follows the timing."""
    for sched in SCHEDS:
        r = ok(procs, f"seed=2 job={app}:{keys},procs={procs},sched={sched}").results[0]
        n, loops = shape(r["n"])
        grabs, remote = host_grabs(sched, n, procs)
        assert r["loops"] == loops and r["grabs"] == loops * grabs, (sched, r, grabs)
        if sched in TIMING_SPLIT:
            assert 0 <= r["remote"] <= r["grabs"], r
        else:
            assert r["remote"] == loops * remote, (sched, r, remote)


def test_the_skewed_closure_is_the_clique_and_nothing_else():
    """A clique of C nodes: C (C - 1) edges, and every clique node reaches every clique node (itself too)."""
    r = ok(2, "job=tclosure:procs=2,n=50,graph=skewed,clique=40").results[0]
    c = 50 * 40 // 100
    assert (r["edges"], r["closure"], r["bad"]) == (c * (c - 1), c * c, 0)


def test_the_random_input_follows_the_seed_and_the_job():
    """The app draws row j from stream j of its job's seed: another seed= or another job number, another graph."""
    one = ok(2, "seed=5 job=tclosure:procs=2,n=48,graph=random,density=8").results[0]
    again = ok(2, "seed=5 job=tclosure:procs=2,n=48,graph=random,density=8").results[0]
    other = ok(2, "seed=6 job=tclosure:procs=2,n=48,graph=random,density=8").results[0]
    second = ok(2, "seed=5 job=hog:procs=1 job=tclosure:procs=2,n=48,graph=random,density=8").results
    assert (one["edges"], one["closure"]) == (again["edges"], again["closure"])
    assert one["edges"] != other["edges"]
    assert one["edges"] != next(r for r in second if r["app"] == "tclosure")["edges"]


def test_tclosure_and_adjoint_report_what_the_apps_report_on_qemu(boot):
    """Deterministic QEMU boots: the closure of a small random graph (edges=, closure=) and adjoint's sum= are
    the simulator's, whatever the scheduler."""
    cases = ["job=tclosure:procs=2,n=48,graph=random,density=8,sched=afs",
             "job=tclosure:procs=2,n=40,graph=random,density=4,sched=ss",
             "job=adjoint:procs=2,n=12,sched=gss", "job=adjoint:procs=2,n=9,order=reverse,sched=factoring"]
    for job in cases:
        q = boot(2, f"seed=3 {job}", timeout=120, deterministic=True)
        assert q.ok, q.console[-1500:]
        s = ok(2, f"seed=3 {job}")
        qr, sr = q.results[0], s.results[0]
        keys = ("edges", "closure", "bad") if qr["app"] == "tclosure" else ("sum", "diff")
        assert {k: qr[k] for k in keys} == {k: sr[k] for k in keys}, job
        assert (qr["loops"], qr["grabs"]) == (sr["loops"], sr["grabs"]), job


def test_static_keeps_tclosure_rows_in_cache_and_self_scheduling_loses_them():
    """Markatos 5.4.8: static hands a hart the same rows at every step, so they stay in its cache; ss deals
    them anew each step, and a row the other hart wrote last comes back as a coherence miss."""
    coherence = {}
    for sched in ("static", "afs", "ss"):
        run = ok(2, f"seed=1 job=tclosure:procs=2,n=128,graph=skewed,clique=40,sched={sched}", model="iris")
        job = run.parsed.model_jobs[1]
        assert job["misses"] == job["llc_hits"] + job["coherence"] + job["local"] + job["remote"]
        coherence[sched] = job["coherence"]
    assert coherence["ss"] > 10 * max(coherence["static"], coherence["afs"], 1), coherence


def test_the_releaser_grabs_first_so_gss_keeps_the_clique_on_one_hart():
    """A spinner sees a barrier's release only by reading the word the releaser stored, so the releaser - the
    last to arrive, which under GSS is the process that closed the clique (GSS's first chunk, half the rows,
    holds all of them) - takes the next step's first chunk: the clique's rows stay in its cache. With the
    waiter first, they changed hands at every step (20x the coherence misses of one hand-over)."""
    n, clique, line_b = 128, 40, 16                      # iris's 16-byte lines
    rows = n * clique // 100
    handover = rows * (n * 4 // line_b)                  # every clique row's lines, once
    job = ok(2, f"seed=1 job=tclosure:procs=2,n={n},graph=skewed,clique={clique},sched=gss",
             model="iris").parsed.model_jobs[1]
    assert job["coherence"] < handover, (job, handover)


def test_adjoint_touches_its_triangle():
    """Iteration i reads b[i..M-1] and c[0..M-1-i]: the loop reads about M^2 doubles, and its check again."""
    n = 16
    m = n * n
    job = ok(2, f"job=adjoint:procs=2,n={n},sched=ss", model="iris").parsed.model_jobs[1]
    assert job["accesses"] >= 2 * m * (m + 1)          # b and c, in the loop and in the check
    assert job["accesses"] < 3 * m * (m + 1)


def test_the_fit_scales_the_loop_apps_units():
    """validate's fit adds tclosure's and adjoint's units to a calibration that lacks them and scales them
    until the simulator's par_us is the target's."""
    with tempfile.TemporaryDirectory() as tmp:
        for token, unit in (("job=tclosure:procs=2,n=64,clique=40", "tclosure_step_ns"),
                            ("job=adjoint:procs=2,n=20", "adjoint_madd_ns")):
            base = sv.timed(ok(2, token), sv.app_of(token))
            path, _ = sv.fit_calib(2, [], [token], {token: 2 * base}, None, Path(tmp))
            data = json.loads(Path(path).read_text())
            assert unit in data and list(data).index(unit) < list(data).index("sources")
            got = sv.timed(sim_boot(2, token, calib=path), sv.app_of(token))
            assert abs(got / (2 * base) - 1) < 0.05, (token, got, base)


def test_a_one_loop_app_folds_at_its_start_barrier():
    """adjoint is one loop: its workers' start barrier is its only safe point before the end, and the library
    folds there (lib/threads/procctl.c: every wait's pause; on QEMU at 2 harts, 6 processes took 159 ms, 2
    took 151). A share smaller than its processes from the start folds at once: no process time-shares its
    hart spinning (sim_barrier.c safe_point_suspends; before, 6 processes on 2 harts spun for whole quanta)."""
    tokens = "policy=partition quantum=2ms job=adjoint:n=30"
    fit = ok(2, f"{tokens},procs=2").results[0]
    folded = ok(2, f"{tokens},procs=6").results[0]
    assert folded["check"] == "ok" and folded["preempts"] == 0 and folded["blocks"] >= 4, folded
    assert folded["elapsed_us"] < 1.5 * fit["elapsed_us"], (folded["elapsed_us"], fit["elapsed_us"])


@pytest.mark.parametrize("job", ["sor:n=64,iters=10", "sor:n=64,iters=10,sched=afs", "tclosure:n=64",
                                 "tclosure:n=64,sched=gss", "gauss:n=128,sched=ss"])
def test_a_loop_app_folds_under_process_control(job):
    """Partition with process control (adapt=yes, the apps' default): when a hog arrives and the loop app's share
    shrinks to one hart, a process suspends and the one left grabs for both workers in turn, as the library's
    worker run does; the answer checks, a static loop still makes every worker's grab, and it ends long
    before its adapt=no twin, which time-shares partners that spin at every loop's barrier. (adjoint is one
    loop with no barrier inside: no safe point to fold at, in the library as here.)"""
    tokens = f"policy=partition quantum=2ms job={job},procs=2"
    alone = ok(2, tokens).results[0]
    folded = next(r for r in ok(2, f"trace=on {tokens} job=hog:at=1ms").results if r["job"] == 1)
    shared = next(r for r in ok(2, f"{tokens},adapt=no job=hog:at=1ms").results if r["job"] == 1)
    assert folded["check"] == "ok" and folded["adapt"] == "yes", folded
    if "sched" not in job:
        assert folded["grabs"] == alone["grabs"], (folded, alone)
    assert folded["elapsed_us"] * 2 < shared["elapsed_us"], (folded["elapsed_us"], shared["elapsed_us"])
