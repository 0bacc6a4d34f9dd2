"""The simulator's app models as plug-ins (tools/sim/sim.h struct sim_app, docs/guide/adding-a-sim-app.md): a model
is one file that registers itself - built in from outside the tree (EXTRA_SIM_APPS, as EXTRA_POLICIES adds a
policy), it is on BOOT's apps= and runs its app with no other edit; two models of one app are refused; and the
engine, the kit and the models call one another only downward (tools/sim/LAYERS), with no cycle at all.
Correctness only, never timings."""

import json
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
    double unit;
};

static const struct sim_key keys[] = { SIM_KEY(struct walk, passes), { 0 } };

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    SIM_STATE(w, struct walk)->unit = calib_get("memwalk_unit_ns", 2.0); /* its own unit, by name */
    return 0;
}

static void step(struct sproc *sp, uint64_t t)
{
    const struct walk *w = SIM_STATE(sjob_of(sp->p.job), struct walk);
    if (job_begin(sp, t))
        return;
    if (sp->iter >= (uint64_t)w->passes)
        return job_end(sp, t);
    sp->iter++;
    core_compute(sp, t, (uint64_t)(100000 * w->unit));
}

static const struct sim_app NAME = { .name = "NAME", .keys = keys, .setup = setup, .step = step };
SIM_APP(NAME);
'''


def make_sim(out, files):
    build = subprocess.run(["make", "--no-print-directory", f"SIM_OUT={out}", f"EXTRA_SIM_APPS={' '.join(files)}",
                            f"{out}/schedlab-sim"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    return out / "schedlab-sim"


@pytest.fixture(scope="module")
def sims(tmp_path_factory):
    """build/sim's objects plus a memwalk model, and the same plus a second synth model: (one, two) simulators
    (one build directory: the second only compiles its model and links)."""
    if not (REPO_ROOT / "build" / "sim" / "obj").is_dir():
        pytest.skip("build/sim is not built (make sim)")
    tmp = tmp_path_factory.mktemp("simapps")
    seed_sim_build(tmp / "sim")          # make sim's objects: what is compiled here is the models
    walk, dup = tmp / "memwalk_model.c", tmp / "synth_model.c"
    walk.write_text(MODEL.replace("NAME", "memwalk"))
    dup.write_text(MODEL.replace('"NAME"', '"synth"').replace("NAME", "synth2"))
    one = make_sim(tmp / "sim", [str(walk)])
    (tmp / "one").write_bytes(one.read_bytes())
    (tmp / "one").chmod(0o755)
    two = make_sim(tmp / "sim", [str(walk), str(dup)])
    return tmp / "one", two


def sim(binary, bootargs, cpus=2, calib=None):
    argv = [str(binary), "--cpus", str(cpus)] + (["--calib", str(calib)] if calib else []) + [bootargs]
    return subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


def cpu_us(run, job=1):
    result = next(line for line in run.stdout.splitlines() if line.startswith(f"RESULT job={job} "))
    return int(next(f for f in result.split() if f.startswith("cpu_us=")).split("=")[1])


def test_a_new_app_model_is_one_file(sims, tmp_path):
    binary = sims[0]
    run = sim(binary, "job=memwalk:procs=2,passes=3 job=synth:procs=2,iters=5")
    assert run.returncode == 0, run.stdout + run.stderr
    boot = next(line for line in run.stdout.splitlines() if line.startswith("BOOT"))
    apps = next(f for f in boot.split() if f.startswith("apps=")).split("=")[1].split(",")
    assert "memwalk" in apps and "synth" in apps and apps == sorted(apps), boot
    result = next(line for line in run.stdout.splitlines() if line.startswith("RESULT job=1"))
    assert "app=memwalk" in result and "check=ok" in result and "passes=3" in result, result
    # its unit is its own calibration key, read by name (calib_get): 2 ns a unit without one, 20 with it -
    # 3 passes of 100000 units on each of 2 processes add 2 x 3 x 1.8 ms of CPU time
    calib = json.loads((REPO_ROOT / "tools" / "sim" / "calib" / "default.json").read_text())
    (tmp_path / "calib.json").write_text(json.dumps(dict({"memwalk_unit_ns": 20.0}, **calib)))  # before "sources"
    dear = sim(binary, "job=memwalk:procs=2,passes=3 job=synth:procs=2,iters=5", calib=tmp_path / "calib.json")
    assert dear.returncode == 0, dear.stdout + dear.stderr
    assert cpu_us(dear) - cpu_us(run) == 2 * 3 * 1800, (cpu_us(run), cpu_us(dear))


def test_two_models_of_one_app_are_refused(sims):
    binary = sims[1]
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
