"""The busy-host flag (tools/py/schedlab/busy.py; issue 25, item 5): every command that reports timings
marks the boots whose calibration card or host load says the host was busy, and docs/ is not written from
them without --allow-busy.  The host is faked (a calibration card, a load average, other QEMUs: the
``busy_check`` fixture of conftest.py); nothing here loads the machine or depends on its load.
"""

import json

import pytest

from schedlab import busy, qemu
from schedlab import reproduce as rp
from helpers import CONSOLE, line_of, run_cli

CARD = {"syscall_ns": 380.4, "switch_ns": 81.07, "ipi_ns": 1352.0, "tick_ns": 624.5, "synth_unit_ns": 9.67,
        "cost_us": 3591}
QUIET = busy.HostLoad(0.3, 2, ())
CALIB = line_of(CONSOLE, "CALIB ")


def test_judge_card_bounds_quiet_card_load_and_other_qemus():
    assert not busy.judge(CARD, 2, QUIET, None).busy
    slow = {**CARD, "ipi_ns": 5.91e6}                           # the card: ipi 5.91 ms
    assert "calibration ipi 5.91 ms" in str(busy.judge(slow, 2, QUIET, None))
    drift = {**CARD, "ipi_ns": 9000.0}                          # under the absolute bound, 6.7x the quiet card
    assert not busy.judge(drift, 2, QUIET, None).busy
    assert "6.7x this host's quiet card" in str(busy.judge(drift, 2, QUIET, CARD))
    assert not busy.judge({**CARD, "ipi_ns": "na"}, 1, QUIET, CARD).busy       # one hart: no IPI to time
    assert "load average 3.50 on 2 cores" in str(busy.judge(CARD, 2, busy.HostLoad(3.5, 2, ()), CARD))
    other = busy.judge(CARD, 2, busy.HostLoad(0.1, 2, ((4242, "qemu-system-ris"),)), CARD)
    assert "1 other QEMU process running: qemu-system-ris (pid 4242)" in str(other)


def test_quiet_card_is_learnt_from_the_first_quiet_boots(busy_check, tmp_path, monkeypatch):
    monkeypatch.setattr(busy, "QUIET_CARDS", tmp_path / "cards.json")
    for ipi in (1000.0, 1400.0, 1200.0):
        busy.assess(_run({**CARD, "ipi_ns": ipi}))
    assert busy.quiet_card(2)["ipi_ns"] == 1200.0 and busy.quiet_card(1) is None
    assert busy.assess(_run({**CARD, "ipi_ns": 6000.0})).busy           # 5x the quiet card's median
    busy_check.load = busy.HostLoad(9.0, 2, ())
    assert busy.assess(_run(CARD)).busy                                 # a busy boot teaches nothing
    assert len(json.loads((tmp_path / "cards.json").read_text())[busy._key(2)]) == 3
    for _ in range(10):
        busy_check.load = QUIET
        busy.assess(_run(CARD))
    assert len(json.loads((tmp_path / "cards.json").read_text())[busy._key(2)]) == busy.KEEP


def test_quiet_cards_are_kept_per_machine_model(busy_check, tmp_path, monkeypatch):
    """Under the machine model every emulated instruction is slower (the plugin's callbacks), so its card is
    compared only with quiet cards of boots under the same model, never flagged against a model-less one."""
    monkeypatch.setattr(busy, "QUIET_CARDS", tmp_path / "cards.json")
    for _ in range(busy.KEEP):
        busy.assess(_run(CARD))
    slow = {**CARD, "syscall_ns": CARD["syscall_ns"] * 6}
    assert busy.assess(_run(slow)).busy                                 # 6x the card of no model
    assert not busy.assess(_run(slow, model="iris,l1_kb=64")).busy      # the first card under that model
    assert busy.quiet_card(2, "iris,l1_kb=64")["syscall_ns"] == slow["syscall_ns"]
    assert busy.quiet_card(2)["syscall_ns"] == CARD["syscall_ns"]


def _run(card, cpus=2, model="none"):
    run = qemu.Run(cpus=cpus, bootargs="job=gauss", argv=[], console="", exit_code=0, model=model)
    run.parsed.calib = dict(card)
    return run


def _busy_template(tmp_path, monkeypatch, ipi_ns="5910000.00"):
    """The fake kernel (sim mode) prints a calibration card with this ipi."""
    template = tmp_path / "template.console"
    template.write_text(CONSOLE.replace(CALIB, CALIB.replace(f"ipi_ns={_value(CALIB, 'ipi_ns')}",
                                                             f"ipi_ns={ipi_ns}")))
    monkeypatch.setenv("FAKE_QEMU_TEMPLATE", str(template))


def _value(line, key):
    return next(w.partition("=")[2] for w in line.split() if w.startswith(key + "="))


def test_run_marks_a_busy_boot(fake, busy_check, capsys):  # noqa: F811
    fake.canned(CONSOLE.replace(CALIB, CALIB.replace(f"ipi_ns={_value(CALIB, 'ipi_ns')}", "ipi_ns=5910000.00")))
    assert run_cli(fake, "run", "--cpus", "2", "--repeat", "2", "job=gauss") == 0
    out = capsys.readouterr().out
    assert out.count("BUSY HOST  (") == 2 and "busy host: calibration ipi 5.91 ms" in out
    assert "BUSY 2/2" in out and "BUSY HOST: 2 of 2 boots ran on a busy host" in out
    fake.replay("gang-trace")
    assert run_cli(fake, "run", "--cpus", "2", "job=gauss") == 0
    assert "BUSY" not in capsys.readouterr().out


def test_compare_marks_rows_and_refuses_docs(fake, busy_check, capsys, tmp_path, monkeypatch):  # noqa: F811
    fake.sim()
    monkeypatch.setattr(busy, "REPO_ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    busy_check.load = busy.HostLoad(4.2, 2, ((77, "qemu-system-ris"),))
    status = run_cli(fake, "compare", "--repeat", "1", "--policies", "gang,timeslice", "--json",
                      str(tmp_path / "docs" / "c.json"), "job=gauss", "job=oddeven")
    out, err = capsys.readouterr()
    rows = [line.split() for line in out.splitlines() if line.startswith(("gang ", "timeslice "))]
    assert rows and all(row[-2:] == ["BUSY", "2/2"] for row in rows)          # alone + mix boot per row
    assert "load average 4.20 on 2 cores" in out and "other QEMU process" in out
    assert status == 1 and "not writing" in err and not (tmp_path / "docs" / "c.json").exists()
    assert run_cli(fake, "compare", "--repeat", "1", "--policies", "gang", "--allow-busy", "--json",
                    str(tmp_path / "docs" / "c.json"), "job=gauss") == 0
    runs = json.loads((tmp_path / "docs" / "c.json").read_text())["runs"]
    assert all("load average 4.20" in r["busy"] for r in runs)


def test_sweep_marks_points_from_a_busy_card(fake, busy_check, capsys, tmp_path, monkeypatch):  # noqa: F811
    fake.sim()
    _busy_template(tmp_path, monkeypatch)
    assert run_cli(fake, "sweep", "--repeat", "2", "--policies", "gang", "--vary", "quantum=2ms,5ms", "--no-plot",
                    "--out", str(tmp_path / "q"), "job=gauss") == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("gang ")]
    assert len(rows) == 2 and all(row[-2:] == ["BUSY", "2/2"] for row in rows)
    assert "calibration ipi 5.91 ms" in out


def test_reproduce_does_not_write_docs_from_a_busy_host(fake, busy_check, tmp_path, monkeypatch, capsys):  # noqa: F811
    """The results of a busy run go to build/reproduce-busy/, docs/ keeps what it had; --allow-busy writes it."""
    fake.replay("gang-trace")
    monkeypatch.setattr(qemu, "DEFAULT_KERNEL", qemu.Path(fake.kernel_path))
    monkeypatch.setattr(rp, "REPO", tmp_path)
    monkeypatch.setattr(busy, "REPO_ROOT", tmp_path)

    def section(ctx):
        t = rp.elapsed_us(ctx.boot("policy=gang job=gauss"), "gauss")
        return rp.Section("t-boot", "T", "-", "-", [rp.Row("elapsed", "-", "-", f"{t:.0f}", "reproduced")], "")

    rp.load_all()
    monkeypatch.setitem(rp.SECTIONS, "t-boot", rp.SectionSpec("t-boot", "Boots once", 1, 1, 1, section))
    busy_check.load = busy.HostLoad(6.0, 2, ())
    docs = tmp_path / "docs"
    rp.run(["t-boot"], rp.Ctx(out=docs, progress=lambda msg: None))
    assert not (docs / "results.md").exists()
    md = (tmp_path / "build" / "reproduce-busy" / "results.md").read_text()
    assert "BUSY HOST: 1 of 1 boots of this section" in md
    rp.run(["t-boot"], rp.Ctx(out=docs, progress=lambda msg: None, allow_busy=True))
    assert "BUSY HOST: 1 of 1" in (docs / "results.md").read_text()
    busy_check.load = QUIET
    rp.run(["t-boot"], rp.Ctx(out=docs, progress=lambda msg: None))
    assert "BUSY" not in (docs / "results.md").read_text()
