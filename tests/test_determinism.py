"""Deterministic mode (clock=virtual, kernel/vclock.h): the same scenario gives the same console bytes.

``make qemu DETERMINISTIC=1`` and ``schedlab run --deterministic`` boot QEMU with one host thread for every
hart and an instruction-counting clock (``-icount``), and add ``clock=virtual`` to the bootargs. Two boots of
one scenario must print the same console, trace dump included, byte for byte; every output says the times
are virtual; spin waits hand the host thread over, so a spinning gang costs microseconds of virtual time per
barrier, not a timer period; compare refuses slowdowns from virtual times unless asked.
"""

import struct
import subprocess
from pathlib import Path

import pytest

from schedlab import cli, commands, devtree, qemu
from schedlab import trace as tr
from check_boots import battery_session, cases_on, declaration_of, judged  # noqa: F401 (a fixture)
from conftest import built_policies, kernel_under_test
from helpers import REPO, assert_all_ok, run_cli
from schedule_checks import GANG_MIX, assert_coscheduled, traced

#: Spinning and blocking barriers, a hog that never blocks, threads stealing: every kind of wait.
MIX = ("trace=on quantum=2ms job=oddeven:n=400,barrier=spin job=gauss:n=64,barrier=twophase,procs=3 "
       "job=knary:h=5,procs=2 job=hog")


def test_two_boots_print_the_same_bytes(boot, policy):
    first, second = (boot(2, f"policy={policy} {MIX}", timeout=120, deterministic=True) for _ in range(2))
    assert_all_ok(first)
    trace = tr.parse_trace(first.console)
    assert trace.complete and not any(trace.dropped.values()) and len(trace.records) > 50
    assert first.console == second.console
    assert first.boot["clock"] == "virtual" and first.summary["clock"] == "virtual"
    assert "clock=virtual" in first.traces[0]            # the TRACE header says so too


def test_three_harts_and_another_seed_print_the_same_bytes(boot, tmp_path, capsys):
    runs = [boot(3, f"policy=gang seed=7 {MIX}", timeout=120, deterministic=True) for _ in range(2)]
    assert_all_ok(runs[0])
    assert runs[0].console == runs[1].console
    # `schedlab trace` of the saved console says its times are virtual
    log = tmp_path / "run.log"
    log.write_text(runs[0].console)
    assert cli.main(["trace", str(log), "-o", str(tmp_path / "run.json")]) == 0
    assert commands.VIRTUAL_NOTE in capsys.readouterr().out


def test_spinning_gang_hands_the_host_thread_over(boot):
    """Without the hand-over each barrier of a spinning gang waited for the next timer deadline: 2000 phases
    took 100 s of virtual time. With it a phase costs a few microseconds (instructions, not host time)."""
    run = boot(2, "policy=gang job=oddeven:n=2000,barrier=spin", timeout=120, deterministic=True)
    assert_all_ok(run)
    (r,) = run.results
    assert r["phase_us"] < 100 and r["elapsed_us"] < 1_000_000, r


@pytest.mark.parametrize("irq", ["auto", "sbi"])
@pytest.mark.parametrize("perturb", ["", "perturb=11,depth=2", "perturb=12,depth=3"])
def test_a_slot_switch_during_a_hand_over_reaches_every_hart(boot, irq, perturb):
    """Spinning gangs hand the host thread over at every spin pause, so a slot switch's IPIs mostly land while
    their targets sit in a hand-over - which takes its own SSIP off again afterwards unless the sender marked the
    hart (kernel/vclock.h "The hand-over"). An IPI lost there is a switch that hart never acknowledged, which
    assert_coscheduled fails on; perturbed boots hand over at race points too, and stop harts."""
    run = boot(3, f"policy=gang irq={irq} {GANG_MIX} job=synth:iters=40,barrier=spin,procs=3 {perturb}",
               timeout=120, deterministic=True)
    assert run.boot["ipi"] == ("sbi" if irq == "sbi" else "sswi")
    assert_coscheduled(traced(run))


def test_normal_boot_says_clock_real(boot):
    run = boot(1, "job=synth:iters=10")
    assert_all_ok(run)
    assert run.boot["clock"] == "real" and "clock" not in run.summary and not run.virtual_clock


def test_bad_clock_token_is_refused(boot):
    run = boot(1, "clock=fast job=synth")
    assert run.exit_code == 2 and len(run.errors) == 1
    assert "clock=fast" in run.errors[0] and "clock=virtual" in run.errors[0]


# ---------------------------------------------------------------- the harness and the Makefile

def test_virtual_bootargs_get_the_deterministic_qemu_flags(monkeypatch):
    monkeypatch.delenv("SCHEDLAB_QEMU", raising=False)
    argv = qemu.qemu_argv(2, "job=gauss clock=virtual", "k.elf")
    flags = list(qemu.DETERMINISTIC_FLAGS)
    assert argv[-2 - len(flags):-2] == flags and argv[-1] == "job=gauss clock=virtual"
    assert "-icount" not in qemu.qemu_argv(2, "job=gauss", "k.elf")
    assert "-icount" not in qemu.qemu_argv(2, "clock=virtual job=gauss clock=real", "k.elf")   # the last wins
    assert qemu.deterministic_bootargs("job=gauss clock=real") == "job=gauss clock=virtual"
    assert qemu.deterministic_bootargs("clock=virtual job=gauss") == "clock=virtual job=gauss"


def test_make_qemu_deterministic_is_the_harness_command():
    """make qemu DETERMINISTIC=1 and the harness pass QEMU the same mode flags and bootarg."""
    out = subprocess.run(["make", "-s", "-n", "qemu", "DETERMINISTIC=1", "BOOTARGS=job=gauss", "QEMU=QEMU"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("QEMU "))
    assert " ".join(qemu.DETERMINISTIC_FLAGS) in line
    assert line.endswith('-append "job=gauss timeout=600s clock=virtual"'), line
    plain = subprocess.run(["make", "-s", "-n", "qemu", "BOOTARGS=job=gauss", "QEMU=QEMU"],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "-icount" not in plain and "clock=virtual" not in plain


def test_run_deterministic_boots_with_clock_virtual(fake, capsys):  # noqa: F811
    fake.replay("gang-trace")
    assert run_cli(fake, "run", "--deterministic", "--cpus", "2", "policy=gang", "job=gauss") == 0
    argv = fake.calls()[0]
    assert argv[-1] == "policy=gang job=gauss clock=virtual" and "-icount" in argv
    assert "clock=virtual: times are instructions" in capsys.readouterr().out


def test_compare_refuses_virtual_times_unless_allowed(fake, capsys):  # noqa: F811
    fake.sim()
    for argv in (["--deterministic"], ["clock=virtual", "job=gauss"]):
        assert run_cli(fake, "compare", "--cpus", "1", *argv) == 2
        assert "refuses to compute slowdowns from virtual times" in capsys.readouterr().err
    assert fake.calls() == []
    assert run_cli(fake, "compare", "--cpus", "1", "--deterministic", "--allow-virtual", "--policies", "gang",
                    "job=gauss") == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("== compare"))
    assert "clock=virtual" in header and "instruction-count ratios" in out
    assert fake.calls() and all(argv[-1].endswith("clock=virtual") for argv in fake.calls())


def test_a_long_tick_hook_does_not_starve_its_hart(battery_session):
    """kernel/vclock.h, "The slices": a hart in a long stretch with interrupts off arms no deadline, and with
    the other harts' slice deadlines clustered it got a few hundred instructions per round of theirs. Adaptive's
    window judgment (thousands of instructions in hart 0's tick, its only quantum timer) then left a ready
    process waiting 30+ quanta at 3 harts. Judged by schedlab check's own progress definition."""
    if "adaptive" not in (built_policies()[0] or []):
        pytest.skip("this kernel has no policy=adaptive, the one whose tick hook runs long")
    decl = declaration_of("adaptive")
    case = cases_on("adaptive", decl, "qemu-3")["share"]
    _, verdicts = judged(battery_session, case, decl, kernel_under_test())
    progress = next(v for v in verdicts if v.check == "progress")
    assert progress.status == "pass", progress.detail


# ---------------------------------------------------------------- the trimmed device tree (devtree.py)

def _tree(*nodes):
    """A version-17 tree of the given (depth, name) nodes under the root, each with one property."""
    strings = b"reg\0"
    body = bytearray()
    def begin(name):
        raw = name.encode() + b"\0"
        body.extend(struct.pack(">I", devtree.BEGIN_NODE) + raw + b"\0" * (-len(raw) % 4))
        body.extend(struct.pack(">III", devtree.PROP, 4, 0) + b"\x00\x00\x00\x01")
    begin("")
    depth = 0
    for d, name in nodes:
        while depth >= d:
            body.extend(struct.pack(">I", devtree.END_NODE))
            depth -= 1
        begin(name)
        depth = d
    while depth >= 0:
        body.extend(struct.pack(">I", devtree.END_NODE))
        depth -= 1
    body.extend(struct.pack(">I", devtree.END))
    rsv = b"\0" * 16
    off_struct = 40 + len(rsv)
    off_strings = off_struct + len(body)
    total = off_strings + len(strings)
    header = struct.pack(">10I", devtree.MAGIC, total, off_struct, off_strings, 40, 17, 16, 0, len(strings), len(body))
    return header + rsv + bytes(body) + strings


def test_prune_drops_a_node_with_its_subnodes_and_keeps_the_rest():
    blob = _tree((1, "cpus"), (2, "cpu@0"), (2, "cpu-map"), (3, "cluster0"), (1, "pci@30000000"), (2, "x"),
                 (1, "soc"), (2, "virtio_mmio@10001000"), (2, "serial@10000000"))
    assert devtree.node_names(blob) == ["", "cpus", "cpu@0", "cpu-map", "cluster0", "pci@30000000", "x", "soc",
                                        "virtio_mmio@10001000", "serial@10000000"]
    pruned = devtree.prune(blob)
    assert devtree.node_names(pruned) == ["", "cpus", "cpu@0", "soc", "serial@10000000"]
    assert devtree.node_names(devtree.prune(pruned)) == devtree.node_names(pruned)     # nothing left to drop
    with pytest.raises(devtree.TreeError):
        devtree.prune(b"\0" * 64)


def test_deterministic_boots_load_the_trimmed_tree_and_see_the_same_machine(boot):
    """A deterministic boot passes QEMU its own tree for that machine less the nodes no one reads: the kernel
    sees the same harts and NUMA nodes as a timed boot, and fewer boot instructions go by."""
    run = boot(3, "calib=off job=synth:procs=1,iters=1", deterministic=True, model="butterfly")
    tree = Path(run.argv[run.argv.index("-dtb") + 1])
    names = devtree.node_names(tree.read_bytes())
    assert sum(n.startswith("cpu@") for n in names) == 3 and not any(n.startswith(devtree.UNUSED) for n in names)
    plain = boot(3, "calib=off job=synth:procs=1,iters=1", model="butterfly")
    assert "-dtb" not in plain.argv
    assert run.ok and plain.ok and (run.boot["harts"], run.boot["nodes"]) == (plain.boot["harts"], plain.boot["nodes"])

