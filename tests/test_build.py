"""What the harness builds by itself (tools/py/schedlab/build.py): a command that needs the simulator or a host
tool that is missing runs `make -s <target>` in the checkout, and says what failed and the one command to run
when make cannot build it (issue 27: `schedlab reproduce` after `make run` failed three sections on
"build/sim/schedlab-sim is missing: run `make sim`"). Each test builds in a checkout of its own (a Makefile
written here), never in the real build/."""

import os
import textwrap

import pytest

from schedlab import build, sim
from schedlab.qemu import HarnessError
from schedlab.reproduce import markatos_library


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A directory that looks like a checkout (Makefile, kernel/) and is the harness's REPO_ROOT."""
    (tmp_path / "kernel").mkdir()
    monkeypatch.setattr(build, "REPO_ROOT", tmp_path)

    def makefile(text):
        (tmp_path / "Makefile").write_text(textwrap.dedent(text).replace("    ", "\t"))
    return tmp_path, makefile


def test_an_existing_output_is_not_rebuilt(checkout):
    root, makefile = checkout
    makefile("""
    out/x:
        exit 1
    """)
    (root / "out").mkdir()
    (root / "out" / "x").write_text("built before")
    assert build.ensure(root / "out" / "x", "out/x") == root / "out" / "x"


def test_a_missing_output_is_built_with_make(checkout, capsys):
    root, makefile = checkout
    makefile("""
    out/x:
        mkdir -p out && echo made > out/x
    """)
    assert build.ensure(root / "out" / "x", "out/x").read_text() == "made\n"
    assert "out/x is missing: building it with `make -s out/x`" in capsys.readouterr().err


def test_a_failed_build_says_why_and_the_one_command(checkout):
    root, makefile = checkout
    makefile("""
    sim:
        echo "cc: error: no such compiler" >&2; exit 2
    """)
    with pytest.raises(HarnessError) as err:
        build.ensure(root / "build" / "sim" / "schedlab-sim", "sim")
    said = str(err.value)
    assert "`make -s sim` did not build it (exit 2)" in said and "no such compiler" in said
    assert said.rstrip().endswith("then run `make sim`")


def test_outside_a_checkout_it_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "REPO_ROOT", tmp_path)
    with pytest.raises(HarnessError, match="run `make host` in one"):
        build.ensure(tmp_path / "loopsched", "host")


def test_the_simulator_is_built_when_missing(checkout, monkeypatch):
    root, makefile = checkout
    makefile("""
    sim:
        mkdir -p build/sim && printf '#!/bin/sh\\necho ran\\n' > build/sim/schedlab-sim && chmod +x build/sim/schedlab-sim
    """)
    monkeypatch.delenv("SCHEDLAB_SIM", raising=False)
    monkeypatch.setattr(sim, "DEFAULT_SIM", root / "build" / "sim" / "schedlab-sim")
    assert sim.ensure_sim() == root / "build" / "sim" / "schedlab-sim"
    assert os.access(sim.DEFAULT_SIM, os.X_OK)
    # a simulator the user named is theirs to build: the error says so, nothing is made
    monkeypatch.setenv("SCHEDLAB_SIM", str(root / "mine" / "schedlab-sim"))
    with pytest.raises(HarnessError, match="SCHEDLAB_SIM"):
        sim.ensure_sim()
    assert not (root / "mine").exists()


def test_the_loop_scheduler_tool_is_built_when_missing(checkout, monkeypatch):
    root, makefile = checkout
    makefile("""
    build/host/loopsched:
        mkdir -p build/host && printf '#!/bin/sh\\necho grabs=7\\n' > $@ && chmod +x $@
    """)
    monkeypatch.setattr(markatos_library, "REPO", root)
    assert markatos_library.grabs("gss", 512, 4) == 7
