"""Batches of deterministic scenarios in one boot (kernel/batch.c, tools/py/schedlab/batch.py): every scenario
gets its own verdict, nothing of one scenario's state reaches the next, a batch replays byte for byte and so
does each of its prefixes, a scenario that ends the run (the watchdog, a bad scenario) ends the batch, and the
explorer boots the scenarios a batch did not reach again and prints a failure's batch up to it."""

import json
import re
import pytest

from schedlab import batch, explore, qemu
from helpers import every_boot_is

PLAIN = "calib=off policy=global quantum=200us job=synth:procs=2,iters=6,barrier=spin"


def _drawn(boot, harts, n, seed):
    """n perturbed scenarios drawn from the build as the explorer draws them (no machine model)."""
    listing = boot(1, explore.LISTING, deterministic=True).boot
    policies, apps = listing["policies"], listing["apps"]
    policies = policies.split(",") if isinstance(policies, str) else list(policies)
    apps = apps.split(",") if isinstance(apps, str) else list(apps)
    background = set(str(listing.get("background") or "").split(",")) - {""}
    cases = (explore.draw(i, seed, policies, apps, background, explore.wait_kinds(), [harts]) for i in range(4 * n))
    return [c["tokens"] for c in cases if not c["model"]][:n]


def test_a_batch_replays_byte_for_byte_and_each_prefix_replays_its_last_scenario(boot):
    scenarios = _drawn(boot, 3, 4, 31)
    whole = boot(3, batch.line(scenarios), deterministic=True)
    again = boot(3, batch.line(scenarios), deterministic=True)
    assert whole.console == again.console
    runs = batch.split(whole, scenarios)
    assert [explore.judge(r) for r in runs] == ["ok"] * 4, whole.console[-1500:]
    for k in (1, 3):
        prefix = batch.last(boot(3, batch.line(scenarios[:k]), deterministic=True))
        assert prefix.console == runs[k - 1].console, f"scenario {k}"


def test_no_state_of_a_scenario_reaches_the_next(boot):
    """The first scenario is perturbed, traced and gang-scheduled with a hog; the second is none of that. It
    prints what a batch of its own prints but for the time it booted at: no perturbation counts, no trace, its
    jobs numbered from 1, the same BOOT line."""
    first = "calib=off policy=gang trace=on quantum=1ms job=oddeven:n=64,procs=3,barrier=block job=hog:procs=2 " \
            "perturb=7,depth=3"
    both = batch.split(boot(3, batch.line([first, PLAIN]), deterministic=True), [first, PLAIN])
    alone = batch.last(boot(3, batch.line([PLAIN]), deterministic=True))
    assert [explore.judge(r) for r in both] == ["ok", "ok"], both[-1].console[-1500:]
    after = both[1]
    assert "TRACE begin" in both[0].console and "TRACE" not in after.console
    assert not any(k.startswith("perturb_") for k in after.summary) and after.summary["jobs"] == 1
    assert [r["job"] for r in after.results] == [r["job"] for r in alone.results] == [1]
    def boot_line(run):
        return re.sub(r"boot_us=\d+", "", next(l for l in run.console.splitlines() if l.startswith("BOOT ")))
    assert boot_line(after) == boot_line(alone)
    assert [r["check"] for r in after.results] == [r["check"] for r in alone.results] == ["ok"]


def test_each_scenario_has_its_verdict_and_one_that_ends_the_run_ends_the_batch(boot):
    scenarios = [PLAIN, "calib=off policy=gang job=fault:procs=1 job=synth:procs=2,iters=3",
                 "calib=off policy=global timeout=1ms job=synth:procs=2,iters=300", PLAIN]
    run = boot(2, batch.line(scenarios), deterministic=True)
    runs = batch.split(run, scenarios)
    assert [r.exit_code for r in runs] == [0, 1, 4] and run.exit_code == 4      # QEMU's: the worst of them
    assert [explore.judge(r) == "ok" for r in runs] == [True, False, False]
    assert "killed" in runs[1].errors[0] and "timeout" in runs[2].errors[0]
    assert re.findall(r"^END scenario=(\d) status=(\d)", run.console, re.M) == [("1", "0"), ("2", "1"), ("3", "4")]
    empty = boot(2, f"{PLAIN} then then {PLAIN}", deterministic=True)
    assert empty.exit_code == 2 and any("scenario 2 of the batch is empty" in e for e in empty.errors)
    timed = boot(2, f"{PLAIN} then {PLAIN}")
    assert timed.exit_code == 2 and any("needs clock=virtual" in e for e in timed.errors)


def test_run_reports_each_scenario_of_a_batch(boot):
    from conftest import kernel_under_test
    from helpers import schedlab_cmd
    line = batch.line([PLAIN, "calib=off policy=gang timeout=1ms job=synth:procs=2,iters=300", PLAIN])
    out = schedlab_cmd("run", "--deterministic", "--cpus", "2", "--kernel", str(kernel_under_test()), line).stdout
    assert "-- scenario 1/3: ok" in out and "-- scenario 2/3: FAIL (exit 4)" in out
    assert "-- scenario 3/3: not reached" in out and out.count("summary: policy=global") == 1


def _run(console, exit_code=0, timed_out=False, bootargs=""):
    from schedlab.console import parse_console
    return qemu.Run(cpus=2, bootargs=bootargs, argv=[], console=console, exit_code=exit_code, timed_out=timed_out,
                    seconds=1.0, parsed=parse_console(console))


def test_split_cuts_at_the_end_lines_and_gives_the_unfinished_scenario_the_boot_s_end():
    done = "BOOT harts=2\nSUMMARY policy=gang harts=2 jobs=0 failed=0 makespan_us=5\nEND scenario=1 status=0\n"
    runs = batch.split(_run(done + "BOOT harts=2\nPANIC 1 oops\n", 3), ["a=1", "b=2", "c=3"])
    assert [(r.bootargs, r.exit_code) for r in runs] == [("a=1 clock=virtual", 0), ("b=2 clock=virtual", 3)]
    assert runs[1].panics and "END" not in runs[0].console
    slow = batch.split(_run(done + "BOOT harts=2\n", None, True), ["a=1", "b=2"])
    assert slow[1].timed_out and explore.judge(slow[1]) == "SLOW" and not slow[0].timed_out
    assert len(batch.split(_run(done + "END scenario=2 status=1\n", 1), ["a=1", "b=2", "c=3"])) == 2
    assert batch.line(["a=1", "b=2"]) == "a=1 then b=2 then"
    assert qemu.batch_scenarios("a=1 then b=2 then") == ["a=1", "b=2"]
    assert qemu.deterministic_bootargs("a=1 then b=2 clock=real then") == \
        "a=1 clock=virtual then b=2 clock=virtual then"
    short = batch.last(_run(done, 0, bootargs="a=1 then b=2 then"))
    assert short.exit_code == 2 and "ended in scenario 1 of 2" in short.errors[0]


def test_the_explorer_boots_what_a_batch_did_not_reach_and_prints_a_failure_s_batch(monkeypatch, capsys, tmp_path):
    """A batch of four whose second scenario ends the run (the watchdog): the first is judged, the second
    fails with its batch up to it as the replay line, the last two are booted again in a second round."""
    tasks = []
    def make_run():                             # the batch just submitted (every_boot_is checks, then boots)
        tokens = tasks[-1].tokens
        if len(qemu.batch_scenarios(tokens)) == 4:
            return _run("BOOT\nSUMMARY jobs=0 failed=0\nEND scenario=1 status=0\nBOOT\n"
                        "ERROR timeout: jobs not finished\nEND scenario=2 status=4\n", 4, bootargs=tokens)
        return _run("".join(f"BOOT\nSUMMARY jobs=0 failed=0\nEND scenario={k + 1} status=0\n"
                            for k in range(len(qemu.batch_scenarios(tokens)))), 0, bootargs=tokens)
    every_boot_is(monkeypatch, make_run, tasks.append)
    assert explore.main(["--boots", "4", "--scenario", "policy=gang job=synth", "--harts", "2", "--batch", "4",
                         "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert [len(qemu.batch_scenarios(t.tokens)) for t in tasks] == [4, 2]
    assert tasks[0].timeout == 4 * explore.BOOT_TIMEOUT
    assert ("tools/schedlab run --deterministic --cpus 2 policy=gang job=synth perturb=1,depth=3 then "
            "policy=gang job=synth perturb=2,depth=3 then") in out
    assert "4 boots, 1 distinct scenarios, 1 failure(s)" in out
    failed = [e for e in map(json.loads, (tmp_path / "explore.jsonl").read_text().splitlines()) if e["verdict"] != "ok"]
    assert len(failed) == 1 and failed[0]["batch_position"] == 2 and failed[0]["replay"].endswith("depth=3 then")


def test_a_batch_line_pasted_into_a_shell_is_one_scenario_per_then_and_traces_its_last():
    """A failure's replay line unquoted: the shell splits it into words, settings repeat across scenarios (each
    has its own policy=), and --trace traces the last scenario without making a new one."""
    import shlex
    from schedlab.commands import with_trace_on
    from schedlab.scenario import scenario_from_args
    line = "tools/schedlab run --deterministic --cpus 2 policy=gang job=synth then policy=gang seed=2 job=synth then"
    words = shlex.split(line)[5:]
    tokens = scenario_from_args(words).tokens
    assert qemu.batch_scenarios(" ".join(tokens)) == ["policy=gang job=synth", "policy=gang seed=2 job=synth"]
    assert scenario_from_args([" ".join(words)]).tokens == tokens                     # quoted: the same
    with pytest.raises(qemu.HarnessError, match="given twice"):
        scenario_from_args(["policy=gang", "policy=global", "job=synth", "then", "job=synth"])
    with pytest.raises(qemu.HarnessError, match="not scenario files"):
        scenario_from_args(["mix.scn", "then", "job=synth"])
    assert qemu.batch_scenarios(" ".join(with_trace_on(tokens))) == \
        ["policy=gang job=synth", "policy=gang seed=2 job=synth trace=on"]


@pytest.mark.parametrize("line", ["a=1 perturb=5 then b=2 perturb=9,depth=2 then"])
def test_diff_reseeds_and_traces_a_batch_line_s_last_scenario(line):
    case = explore.parse_replay(f"tools/schedlab run --deterministic --cpus 2 {line}", 2)
    assert explore.reseeded(case, 10)["tokens"] == "a=1 perturb=5 then b=2 perturb=10,depth=2 then"
    assert explore.traced(case)["tokens"] == "a=1 perturb=5 then trace=on b=2 perturb=9,depth=2 then"
