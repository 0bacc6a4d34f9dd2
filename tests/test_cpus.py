"""A number of harts that is not one is refused before anything boots (issue 25, item 6).

``make qemu CPUS=0`` used to boot one hart without a word (QEMU's -smp 0), and -1 or abc got QEMU's own
error; the Makefile now refuses them with a message that says what to give. The harness's --cpus does the
same. QEMU is replaced by ``echo`` here, so the tests only see whether it would have been started.
"""

import subprocess
from pathlib import Path

import pytest

from schedlab import cli

REPO = Path(__file__).resolve().parents[1]


def make_qemu(cpus):
    return subprocess.run(["make", "-s", "qemu", f"CPUS={cpus}", "QEMU=echo QEMU-STARTED", "BOOTARGS=job=synth"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("cpus", ["0", "-1", "abc", "", "2x", "1 2", "00"])
def test_make_qemu_refuses_a_bad_cpus_before_booting(cpus):
    out = make_qemu(cpus)
    assert out.returncode != 0 and "QEMU-STARTED" not in out.stdout, (out.stdout, out.stderr)
    assert f"CPUS={cpus} is not a number of harts" in out.stderr and "CPUS=2" in out.stderr, out.stderr


@pytest.mark.parametrize("cpus", ["1", "2", "12"])
def test_make_qemu_passes_a_good_cpus_to_qemu(cpus):
    out = make_qemu(cpus)
    assert out.returncode == 0, out.stderr
    assert "QEMU-STARTED" in out.stdout and f" -smp {cpus} " in out.stdout


@pytest.mark.parametrize("cpus", ["0", "-1", "abc"])
@pytest.mark.parametrize("command", ["run", "compare", "sweep"])
def test_harness_refuses_a_bad_cpus(cpus, command, capsys):
    extra = ["--vary", "seed=1,2"] if command == "sweep" else []
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--cpus", cpus, *extra, "job=synth"])
    assert exit_.value.code == 2
    assert "--cpus" in capsys.readouterr().err
