"""The notebook API (tools/py/schedlab/api.py): ``schedlab.run`` and ``schedlab.compare`` return what the
commands print, as data. Against the fake QEMU (tests/fake_qemu.py, whose tiny kernel makes slowdowns exact),
then one real boot and one simulated run."""

import pytest

import schedlab
from schedlab.qemu import HarnessError


def test_run_returns_the_parsed_run(fake):
    fake.sim()
    run = schedlab.run("policy=gang job=gauss job=hog", cpus=2, kernel=fake.kernel_path)
    assert run.ok and run.exit_code == 0 and run.cpus == 2
    assert [(r["job"], r["app"], r["policy"], r["check"]) for r in run.results] == [
        (1, "gauss", "gang", "ok"), (2, "hog", "gang", "ok")]
    assert run.results[0]["elapsed_us"] == 15000            # 10000 x 1.5: gang's share with two jobs
    assert run.summary["jobs"] == 2 and run.boot["harts"] == 2
    assert fake.bootargs() == ["policy=gang job=gauss job=hog"]


def test_run_takes_a_token_list_and_returns_a_failed_boot(fake):
    fake.sim()
    run = schedlab.run(["job=fault:kind=load"], cpus=1, kernel=fake.kernel_path)
    assert not run.ok and run.exit_code == 3 and run.results[0]["check"] == "FAIL"


def test_run_refuses_what_the_command_refuses(fake):
    with pytest.raises(HarnessError, match="model="):
        schedlab.run("model=iris job=gauss", kernel=fake.kernel_path)
    with pytest.raises(HarnessError, match="harts"):
        schedlab.run("job=gauss", cpus=0, kernel=fake.kernel_path)
    assert fake.calls() == []


def test_compare_returns_one_record_per_policy_and_job_best_first(fake):
    fake.sim()
    rows = schedlab.compare(["job=gauss", "job=oddeven", "job=hog"], cpus=2, policies="timeslice,gang",
                            repeat=2, kernel=fake.kernel_path)
    assert [(r["policy"], r["job"], r["app"]) for r in rows] == [
        ("gang", 1, "gauss"), ("gang", 2, "oddeven"), ("gang", 3, "hog"),
        ("timeslice", 1, "gauss"), ("timeslice", 2, "oddeven"), ("timeslice", 3, "hog")]
    by = {(r["policy"], r["app"]): r for r in rows}
    # the fake kernel: with three jobs, elapsed = base x (1 + 2 x extra): gang 2.0, timeslice 3.0; every job
    # is first dispatched 10 us after it arrives, and slowdowns are of response times (from arrival: +10 us)
    assert by["gang", "gauss"]["slowdown"] == by["gang", "gauss"]["slowdown_max"] == pytest.approx(20010 / 10010)
    assert by["timeslice", "oddeven"]["slowdown"] == pytest.approx(60010 / 20010)
    assert by["gang", "gauss"]["alone_us"] == 10010 and by["gang", "gauss"]["mix_us"] == 20010
    assert by["gang", "hog"]["background"] and by["gang", "hog"]["slowdown"] is None
    assert by["gang", "gauss"]["mean_slowdown"] == pytest.approx((20010 / 10010 + 40010 / 20010) / 2)
    assert rows[0]["repeat"] == 2
    assert all(set(r) == set(schedlab.Record.__annotations__) for r in rows)     # the declared keys, no other
    # 2 repeats x 2 policies x (2 alone + 1 mix), the policies given: no discovery boot
    assert len(fake.calls()) == 12


def test_compare_raises_the_commands_message(fake):
    fake.sim(policies="timeslice,gang")
    with pytest.raises(HarnessError, match="foreground job"):
        schedlab.compare("job=hog", policies="gang", repeat=1, kernel=fake.kernel_path)
    with pytest.raises(HarnessError, match=r"1 boot\(s\) failed(.|\n)*\(fault\) check=FAIL"):
        schedlab.compare("job=gauss job=fault:kind=load", policies="gang", repeat=1, kernel=fake.kernel_path)


def test_compare_calls_the_core_and_says_how_far_to_trust_it(fake, monkeypatch):
    """No command line in between (the command is the core's other client), and each record carries the
    busy-host verdict of its boots and the calibration card: a notebook sees noisy numbers as such."""
    from schedlab import busy, cli, commands
    for module, name in ((cli, "main"), (commands, "compare_command")):
        monkeypatch.setattr(module, name, lambda *a, **k: pytest.fail("api.compare went through the command"))
    monkeypatch.setattr(busy, "count", lambda runs: len(list(runs)))      # every boot flagged busy
    fake.sim()
    rows = schedlab.compare("job=gauss job=hog", cpus=2, policies=["gang"], repeat=1, kernel=fake.kernel_path)
    gauss = next(r for r in rows if r["app"] == "gauss")
    assert gauss["boots"] == 2 and gauss["busy_boots"] == 2 and gauss["busy"]      # alone + mix
    assert gauss["model"] == "none" and "calib" in gauss


def test_run_raises_for_a_scenario_the_kernel_refuses(fake):
    """One error contract: a token the kernel refuses is the user's to fix, like the harness's own refusals;
    a boot that ran and failed is returned."""
    fake.sim()
    with pytest.raises(HarnessError, match="refused the scenario(.|\n)*bogus"):
        schedlab.run("job=gauss bogus=1", cpus=1, kernel=fake.kernel_path)


@pytest.mark.qemu
def test_run_boots_the_real_kernel():
    run = schedlab.run("calib=off job=synth:procs=1,iters=10", cpus=1)
    assert run.ok and [r["app"] for r in run.results] == ["synth"] and run.results[0]["check"] == "ok"


def test_run_in_the_simulator():
    run = schedlab.run("job=synth:procs=4,iters=20", cpus=4, sim=True)
    assert run.ok and run.summary["sim"] and run.results[0]["harts"] == 4


def test_the_api_says_which_tree_it_runs(fake, tmp_path, monkeypatch):
    """Called from inside another checkout (an editable install made elsewhere), it warns naming both trees;
    from its own tree, or outside any, it says nothing."""
    other = tmp_path / "other"
    (other / "tools" / "py" / "schedlab").mkdir(parents=True)
    (other / "tools" / "py" / "schedlab" / "__init__.py").write_text("")
    (other / "Makefile").write_text("")
    (other / "docs").mkdir()
    fake.sim()
    monkeypatch.chdir(other / "docs")
    with pytest.warns(UserWarning, match=f"not the checkout {other}"):
        schedlab.run("job=gauss", cpus=1, kernel=fake.kernel_path)
    monkeypatch.chdir(tmp_path)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        schedlab.run("job=gauss", cpus=1, kernel=fake.kernel_path)
