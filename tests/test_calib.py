"""The calibration card: the kernel's CALIB line (kernel/calib.c) and what the harness does with it.

The line's presence, fields and sanity (every cost positive, ipi_ns na with one hart), never the size of a
value: those are this host's, and this host is shared.
"""

import json

import pytest

from schedlab import console
from helpers import recorded, run_cli

COSTS = ("syscall_ns", "switch_ns", "tick_ns", "synth_unit_ns")


def sane(card, harts):
    assert set(console.CALIB_KEYS) <= set(card)
    assert all(isinstance(card[k], float) and card[k] > 0 for k in COSTS)
    assert isinstance(card["cost_us"], int) and card["cost_us"] > 0
    if harts == 1:
        assert card["ipi_ns"] == "na"
    else:
        assert isinstance(card["ipi_ns"], float) and card["ipi_ns"] > 0


# ---------------------------------------------------------------- the harness, on recorded consoles

def test_recorded_cards_parse():
    sane(console.parse_console(recorded("gang-trace")).calib, harts=2)
    sane(console.parse_console(recorded("job-error")).calib, harts=1)
    assert console.parse_console(recorded("bad-token")).calib is None      # refused before t0: no card


def test_a_card_missing_a_field_is_malformed():
    parsed = console.parse_console("CALIB syscall_ns=1.00 switch_ns=2.00\n")
    assert parsed.calib is None and parsed.malformed == ["CALIB syscall_ns=1.00 switch_ns=2.00"]


def test_job_output_cannot_forge_a_card():
    parsed = console.parse_console("[1] CALIB syscall_ns=1 switch_ns=1 ipi_ns=1 tick_ns=1 synth_unit_ns=1 cost_us=1\n")
    assert parsed.calib is None and parsed.output[1][0].startswith("CALIB")


def test_stored_with_every_result_and_shown_by_compare(fake, capsys, tmp_path):  # noqa: F811
    fake.sim()
    assert run_cli(fake, "compare", "--repeat", "1", "--policies", "gang", "--json", str(tmp_path / "c.json"),
                    "job=gauss") == 0
    out = capsys.readouterr().out
    header = out.splitlines()[1]
    assert header.startswith("calibration (2 boots, median (min..max)): syscall ")
    assert all(label in header for label in ("switch ", "ipi ", "tick ", "synth unit "))
    document = json.loads((tmp_path / "c.json").read_text())
    assert all(run["calib"]["syscall_ns"] > 0 for run in document["runs"])
    assert all(record["calib_switch_ns"] > 0 for record in document["records"])


def test_compare_says_when_there_is_no_card(fake, capsys):  # noqa: F811
    fake.sim()
    assert run_cli(fake, "compare", "--repeat", "1", "--policies", "gang", "job=gauss", "calib=off") == 0
    assert "calibration: none" in capsys.readouterr().out


# ---------------------------------------------------------------- the kernel

@pytest.mark.parametrize("cpus", [1, 2])
def test_every_boot_prints_a_sane_card_before_t0(boot, cpus):
    run = boot(cpus, "job=synth:iters=20")
    assert run.ok, run.console
    sane(run.calib, cpus)
    lines = [line for line in run.console.splitlines() if line.startswith(("BOOT ", "CALIB ", "RESULT "))]
    assert [line.split()[0] for line in lines] == ["BOOT", "CALIB", "RESULT"]


def test_calib_off_skips_it(boot):
    run = boot(2, "calib=off job=synth:iters=20")
    assert run.ok and run.calib is None and "CALIB" not in run.console


@pytest.mark.parametrize("value", ["yes", "1", ""])
def test_bad_calib_value_is_one_error(boot, value):
    run = boot(1, f"calib={value} job=synth:iters=20")
    assert run.exit_code == 2 and run.results == []
    assert run.errors == [f"ERROR bad token 'calib={value}': expected calib=on or calib=off "
                          f"(the calibration card, a CALIB line)"]
