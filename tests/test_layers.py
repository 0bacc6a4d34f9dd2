"""The library's layers (lib/LAYERS) as `make test` checks them: tools/layers.py reads the file-level call
graph from the objects (nm) of both targets and fails on a call to a higher layer or a cycle across
layers. Here: the real lib/ passes on both targets; the same objects fail, naming caller, callee, symbol
and both layers, when the spec puts threads below wait (so the check sees real edges and cannot pass
vacuously); and a small synthetic tree, compiled here, fails on a deliberately upward call, on a
cross-layer cycle and on a file in no layer, and passes with calls only downward or within a layer."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "layers.py"
CROSS_NM = "riscv64-unknown-elf-nm"
TARGETS = {"kernel": (REPO / "build" / "u" / "lib", CROSS_NM, "make"),
           "host": (REPO / "build" / "host" / "obj" / "lib", "nm", "make host")}


def layers(*args, cwd=REPO):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def objdir(target):
    """The target's lib objects; `make test` builds them first (its all and host)."""
    d, nm, cmd = TARGETS[target]
    assert any(d.rglob("*.o")), f"no lib objects of the {target} target under {d}: run `{cmd}` first"
    if shutil.which(nm) is None:
        pytest.fail(f"{nm} is not installed (make deps)")
    return d, nm


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_lib_calls_only_downward(target):
    d, nm = objdir(target)
    r = layers("lib/LAYERS", d, "--nm", nm, "--name", target, "--graph")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "every call downward or within a layer" in r.stdout
    # the graph it checked is the real one: the layers' known edges are there
    for edge in ("wait/wait.c [wait] -> base/", "threads/uready.c [threads] -> wait/wait.c [wait]: sl_wait_poke",
                 "barriers/barrier.c [barriers] -> wait/wait.c [wait]", "workers/workers.c [workers] -> threads/"):
        assert edge in r.stdout, r.stdout


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_lib_fails_when_a_layer_is_misplaced(tmp_path, target):
    """The same objects against a spec with threads below wait: the thread layer's calls of the wait layer
    are then upward, and each is named with both files, the symbol and both layers."""
    d, nm = objdir(target)
    spec = (REPO / "lib" / "LAYERS").read_text().replace("threads   threads/\n", "")
    spec = spec.replace("wait      wait/\n", "threads   threads/\nwait      wait/\n")
    assert spec.index("threads   threads/") < spec.index("wait      wait/")
    (tmp_path / "LAYERS").write_text(spec)
    r = layers(tmp_path / "LAYERS", d, "--nm", nm, "--root", REPO / "lib", "--name", target)
    assert r.returncode == 1, r.stdout
    assert ("upward call: lib/threads/uready.c (threads) calls sl_wait_poke in lib/wait/wait.c (wait)"
            in r.stdout), r.stdout
    # --report lists the same and exits 0 (for a tree still being untangled)
    r2 = layers(tmp_path / "LAYERS", d, "--nm", nm, "--root", REPO / "lib", "--report")
    assert r2.returncode == 0 and "upward call: lib/threads/uready.c" in r2.stdout


def build_tree(root, spec, files):
    """A tree under root/src with its spec and each file compiled to root/obj/<same path>.o."""
    src, obj = root / "src", root / "obj"
    (src / "LAYERS").parent.mkdir(parents=True)
    (src / "LAYERS").write_text(spec)
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
        o = obj / rel.replace(".c", ".o")
        o.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cc", "-c", "-o", str(o), str(src / rel)], check=True)
    return src / "LAYERS", obj


SPEC = "low low/\nmid mid/ extra.c\nhigh high/\n"
DOWN = {"low/a.c": "int low_a(void) { return 1; }\n",
        "low/b.c": "int low_a(void); int low_b(void) { return low_a(); }\n",
        "mid/m.c": "int low_b(void); int mid_m(void) { return low_b(); }\n",
        "extra.c": "int mid_m(void); int extra(void) { return mid_m(); }\n",
        "high/h.c": "int mid_m(void); int low_a(void); int high_h(void) { return mid_m() + low_a(); }\n"}


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a host C compiler")
def test_synthetic_tree_downward_passes(tmp_path):
    files = dict(DOWN)
    files["low/a.c"] = "int low_b(void); int low_a(void) { return 1; } int again(void) { return low_b(); }\n"
    spec, obj = build_tree(tmp_path, SPEC, files)       # low/a.c <-> low/b.c: a cycle inside one layer
    r = layers(spec, obj, "--graph")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cycle of 2: low/a.c low/b.c" in r.stdout
    assert "extra.c [mid] -> mid/m.c [mid]: mid_m" in r.stdout
    # "./" is the whole tree: one layer, for listing a tree not yet in layers (kernel/ today)
    (tmp_path / "ONE").write_text("all ./\n")
    r = layers(tmp_path / "ONE", obj, "--root", tmp_path / "src", "--graph", "--report")
    assert r.returncode == 0 and "5 files in 1 layers" in r.stdout, r.stdout
    r = layers(tmp_path / "src", obj, "--graph", "--report")     # the same, the tree named by its directory
    assert r.returncode == 0 and "5 files in 1 layers" in r.stdout, r.stdout


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a host C compiler")
def test_synthetic_tree_upward_call_fails(tmp_path):
    files = dict(DOWN)
    files["low/b.c"] = "int low_a(void); int high_h(void); int low_b(void) { return low_a() + high_h(); }\n"
    spec, obj = build_tree(tmp_path, SPEC, files)
    r = layers(spec, obj)
    assert r.returncode == 1, r.stdout
    assert "upward call: " in r.stdout and "low/b.c (low) calls high_h in " in r.stdout
    assert "high/h.c (high)" in r.stdout
    # low/b -> high/h -> mid/m -> low/b: a cycle across the three layers, reported as such
    assert "cycle across layers high, low, mid" in r.stdout


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a host C compiler")
def test_synthetic_tree_data_reference_and_unplaced_file_fail(tmp_path):
    files = dict(DOWN)
    files["mid/m.c"] = "int low_b(void); extern int high_data; int mid_m(void) { return low_b() + high_data; }\n"
    files["high/h.c"] += "int high_data = 3;\n"
    files["stray/s.c"] = "int low_a(void); int stray(void) { return low_a(); }\n"
    spec, obj = build_tree(tmp_path, SPEC, files)
    r = layers(spec, obj)
    assert r.returncode == 1, r.stdout
    assert "mid/m.c (mid) calls high_data in " in r.stdout
    assert "stray/s.c is in no layer of" in r.stdout
    # an object whose source was removed (a build left behind after a move) is not part of the tree
    (tmp_path / "src" / "stray" / "s.c").unlink()
    r = layers(spec, obj)
    assert "stray" not in r.stdout
