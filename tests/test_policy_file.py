"""Adding a policy is one file (issue 11): tests/policies/fifo.c exists only in the test tree, registers
itself (SCHED_CLASS) and declares its own option; a kernel built with it - and with no other file
touched - boots it by name, takes its option, refuses a wrong one, and lists both on the BOOT line.
"""

import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from schedlab_harness import qemu

BUILD = "build/policy-fifo"
POLICY = "tests/policies/fifo.c"


@pytest.fixture(scope="module")
def fifo_kernel():
    """build/policy-fifo/kernel.elf: the whole kernel and its apps, plus the test tree's policy."""
    done = subprocess.run(["make", "-s", f"B={BUILD}", f"EXTRA_POLICIES={POLICY}", f"{BUILD}/kernel.elf"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return REPO_ROOT / BUILD / "kernel.elf"


def test_no_file_outside_the_policy_names_it():
    hits = subprocess.run(["git", "grep", "-l", "fifo_class", "--", "kernel", "lib", "linker", "Makefile"],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert hits.stdout == "", hits.stdout


@pytest.mark.qemu
def test_a_policy_file_from_the_test_tree_boots_with_its_option(fifo_kernel):
    run = qemu.boot(2, "policy=fifo fifo_wake=front timeout=60s job=gauss:n=64,barrier=block "
                       "job=sleeper:iters=3 job=oddeven:n=500,barrier=block", kernel=fifo_kernel, timeout=300)
    assert run.exit_code == 0 and not run.timed_out, run.console[-2000:]
    assert run.summary["policy"] == "fifo" and run.summary["failed"] == 0
    assert run.boot["policies"] == ["timeslice", "gang", "partition", "global", "fifo"]
    assert run.boot["options"]["fifo"] == {"fifo_wake": ["back", "front"]}
    assert run.boot["options"]["gang"] == {"alternates": ["off", "on"], "gangfit": ["first", "best"]}


@pytest.mark.qemu
@pytest.mark.parametrize("bootargs, needle", [
    ("policy=fifo fifo_wake=sideways job=gauss", "fifo_wake=sideways, expected back or front"),
    ("fifo_wake=front job=gauss", "fifo_wake= is an option of policy fifo, not of timeslice"),
    ("policy=fifo alternates=on job=gauss", "alternates= is an option of policy gang, not of fifo"),
])
def test_a_policy_files_options_are_checked(fifo_kernel, bootargs, needle):
    run = qemu.boot(1, bootargs, kernel=fifo_kernel, timeout=120)
    assert run.exit_code == 2 and len(run.errors) == 1 and needle in run.errors[0], run.errors


def test_the_default_kernel_has_no_fifo(boot):
    run = boot(1, "policy=fifo job=gauss")
    assert run.exit_code == 2 and "no policy 'fifo'" in run.errors[0]
