"""The simulator's app models as plug-ins (tools/sim/sim.h struct sim_app, docs/guide/adding-a-sim-app.md): a model
is one file that registers itself - built in from outside the tree (EXTRA_SIM_APPS, as EXTRA_POLICIES adds a
policy), it is on BOOT's apps= and runs its app with no other edit; two models of one app are refused; and the
engine, the kit and the models call one another only downward (tools/sim/LAYERS), with no cycle at all.
Correctness only, never timings."""

import subprocess
import sys

import pytest

from helpers import seed_sim_build
from schedlab.qemu import REPO_ROOT

pytestmark = pytest.mark.check  # boots nothing: the fast tier (make check)

#: A model of memwalk (an app of build/apps the tree does not model): `passes` segments of work, then the
#: job's end - the smallest program on the kit's job life (sim_kit.h job_begin, job_end).
MODEL = r'''
#include "sim.h"
#include "sim_kit.h"

struct walk {
    int64_t passes;
};

static const struct sim_key keys[] = { SIM_KEY(struct walk, passes), { 0 } };

static void step(struct sproc *sp, uint64_t t)
{
    const struct walk *w = SIM_STATE(sjob_of(sp->p.job), struct walk);
    if (job_begin(sp, t))
        return;
    if (sp->iter >= (uint64_t)w->passes)
        return job_end(sp, t);
    sp->iter++;
    core_compute(sp, t, 1000 * (uint64_t)calib.synth_unit);
}

static const struct sim_app NAME = { .name = "NAME", .keys = keys, .step = step };
SIM_APP(NAME);
'''


def build_with(tmp_path, *models):
    """build/sim's objects plus the given model files (name -> source): the simulator they make."""
    seed_sim_build(tmp_path / "sim")          # make sim's objects: what is compiled here is the models
    files = []
    for name, src in models:
        path = tmp_path / f"{name}_model.c"
        path.write_text(src)
        files.append(str(path))
    build = subprocess.run(["make", "--no-print-directory", f"SIM_OUT={tmp_path}/sim",
                            f"EXTRA_SIM_APPS={' '.join(files)}", f"{tmp_path}/sim/schedlab-sim"],
                           cwd=REPO_ROOT, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    return tmp_path / "sim" / "schedlab-sim"


def sim(binary, bootargs, cpus=2):
    return subprocess.run([str(binary), "--cpus", str(cpus), bootargs], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_new_app_model_is_one_file(tmp_path):
    if not (REPO_ROOT / "build" / "sim" / "obj").is_dir():
        pytest.skip("build/sim is not built (make sim)")
    binary = build_with(tmp_path, ("memwalk", MODEL.replace("NAME", "memwalk")))
    run = sim(binary, "job=memwalk:procs=2,passes=3 job=synth:procs=2,iters=5")
    assert run.returncode == 0, run.stdout + run.stderr
    boot = next(line for line in run.stdout.splitlines() if line.startswith("BOOT"))
    apps = next(f for f in boot.split() if f.startswith("apps=")).split("=")[1].split(",")
    assert "memwalk" in apps and "synth" in apps and apps == sorted(apps), boot
    result = next(line for line in run.stdout.splitlines() if line.startswith("RESULT job=1"))
    assert "app=memwalk" in result and "check=ok" in result and "passes=3" in result, result


def test_two_models_of_one_app_are_refused(tmp_path):
    if not (REPO_ROOT / "build" / "sim" / "obj").is_dir():
        pytest.skip("build/sim is not built (make sim)")
    binary = build_with(tmp_path, ("synth", MODEL.replace('"NAME"', '"synth"').replace("NAME", "synth2")))
    run = sim(binary, "job=synth:procs=2,iters=5")
    assert run.returncode == 2 and not run.stdout, run.stdout
    assert "two app models are named synth" in run.stderr, run.stderr


def test_the_simulators_files_call_only_downward_with_no_cycle():
    objs = REPO_ROOT / "build" / "sim" / "obj" / "tools" / "sim"
    if not objs.is_dir():
        pytest.skip("build/sim is not built (make sim)")
    out = subprocess.run([sys.executable, "tools/layers.py", "tools/sim/LAYERS", str(objs), "--graph"], cwd=REPO_ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "# cycles (files that reach each other): 0" in out.stdout, out.stdout
    # the engine names no app model: no edge from the engine's or the kit's files into apps/
    lower = ("sim_core.c", "sim_apps.c", "sim_sync.c", "sim_start.c", "sim_kernel.c", "sim_jobs.c", "sim_program.c",
             "sim_barrier.c", "sim_loops.c", "sim_threads.c", "sim_touch.c", "sim_alloc.c")
    edges = [line for line in out.stdout.splitlines() if " -> apps/" in line and line.startswith(lower)]
    assert not edges, edges
