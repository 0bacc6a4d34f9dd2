"""Paced harts (tools/model/pace.h): the spec, pace=auto's choice, the fidelity flag, the refusal of
unpaced boots above the host's cores, and boots that show the plugin keeps each hart to its R.

The boots assert invariants that no load can break - a hart never executes more than R instructions per
wall-second plus its lead, the fidelity counts add up per hart and per job, misses are counted as unpaced -
never a timing (a loaded host only makes a paced boot fall behind, which the flag reports)."""

import pytest

from schedlab import busy, model as machine, pace
from schedlab.model import ModelError

RATE = 10_000_000                      # 10 M instructions/s per hart: a gauss n=64 takes ~0.1 s of model time
LEAD_S = 200e-6                        # tools/model/pace.h PACE_LEAD_NS_DEFAULT
CHUNK = RATE * LEAD_S / 4              # paced.c: instructions between two checks


# ---------------------------------------------------------------- the spec

def test_pace_alone_is_a_machine_without_caches():
    model = machine.parse_spec(f"pace={RATE}")
    assert (model.profile, model.pace, model.has_cache) == ("none", RATE, False)
    assert model.canonical == f"pace={RATE}" and model.memory_spec == "none"
    assert model.for_harts(8)["nodes"] == 1


def test_pace_ends_a_profile_spec():
    model = machine.parse_spec("modern,l2_kb=512,pace=auto")
    assert model.pace == "auto" and model["l2_kb"] == 512
    assert model.canonical.startswith("modern,line_b=") and model.canonical.endswith(",nodes=2,pace=auto")
    assert "pace" not in model.memory_spec
    assert machine.memory_spec("modern,pace=5000000", 2) == machine.canonical("modern", 2)


@pytest.mark.parametrize("spec, words", [
    ("pace=0", "pace=0 is not a pace"),
    ("pace=fast", "pace=fast is not a pace"),
    ("pace=99999999999", "is not a pace"),
    ("modern,pace=1000000,pace=2000000", "pace is given twice"),
    ("l1_kb=32,pace=1000000", "l1_kb= needs a profile"),
    ("none", None),
])
def test_bad_pace_specs_say_what_is_wrong(spec, words):
    if words is None:
        assert machine.parse_spec(spec) is None
        return
    with pytest.raises(ModelError, match=words):
        machine.parse_spec(spec)


def test_plan_refuses_unresolved_auto_and_deterministic_pace(tmp_path):
    kernel = tmp_path / "k.elf"
    kernel.write_bytes(b"")
    with pytest.raises(ModelError, match="pace=auto is resolved before a boot"):
        machine.plan("pace=auto", 2, kernel)
    with pytest.raises(ModelError, match="deterministic mode"):
        machine.plan(f"pace={RATE}", 2, kernel, deterministic=True)


# ---------------------------------------------------------------- pace=auto

@pytest.mark.parametrize("value, nice", [(0.3, 1), (1, 1), (19, 10), (20, 20), (49.9, 20), (50, 50), (99, 50),
                                         (123_456_789, 100_000_000)])
def test_nice_floor(value, nice):
    assert pace.nice_floor(value) == nice


def test_choose_keeps_the_harts_within_half_the_host():
    for harts in (1, 2, 4, 8, 16, 64):
        rate = pace.choose(300e6, harts, 2)
        assert harts * rate <= pace.FRACTION * 2 * 300e6 < 2.5 * harts * rate
    assert pace.choose(1.0, 64, 1) == machine.PACE_RANGE[0]          # never below the range


def test_resolve_uses_one_stored_capacity(monkeypatch, tmp_path):
    monkeypatch.setattr(pace, "CAPACITY_FILE", tmp_path / "cap.json")
    probes = []
    monkeypatch.setattr(pace, "probe", lambda spec, kernel=None: probes.append(spec) or 200e6)
    said = []
    spec = pace.resolve("modern,pace=auto", 8, cores=2, say=said.append)
    rate = pace.choose(200e6, 8, 2)
    assert spec == machine.parse_spec("modern").with_pace(rate).canonical
    assert len(probes) == pace.KEEP and set(probes) == {machine.parse_spec("modern").canonical}
    assert pace.resolve("modern,pace=auto", 8, cores=2, say=said.append) == spec and len(probes) == pace.KEEP
    assert any(f"R={rate}" in line for line in said)
    assert pace.resolve(f"pace={RATE}", 8) == f"pace={RATE}" and pace.resolve(None, 8) is None


def test_unpaced_boots_above_the_cores_are_refused(monkeypatch):
    monkeypatch.setattr(pace, "host_cores", lambda: 2)
    assert pace.needs_pace(2, False, False, None) is None
    why = pace.needs_pace(4, False, False, "modern")
    assert "--cpus 4 on a host with 2 cores" in why and "--model modern,pace=auto" in why
    for ok in [(4, True, False, None), (4, False, True, None), (4, False, False, "pace=auto"),
               (16, False, False, f"iris,pace={RATE}")]:
        assert pace.needs_pace(*ok) is None


# ---------------------------------------------------------------- the fidelity flag

def _end(lag, span, events=3):
    return {"pace": RATE, "pace_lag_us": lag, "pace_span_us": span, "pace_events": events, "pace_bound_us": 500}


def test_a_paced_boot_is_flagged_only_when_its_harts_fell_behind():
    assert not busy.judge_paced(_end(0, 100_000), 4).busy
    assert not busy.judge_paced(_end(3_999, 100_000), 4).busy                # 1 % of 4 x 100 ms
    verdict = busy.judge_paced(_end(4_001, 100_000), 4)
    assert verdict.busy and "cannot carry 4 harts x pace=10000000" in str(verdict)
    assert busy.judge_paced(None, 4).busy and busy.judge_paced({"pace": RATE}, 4).busy


# ---------------------------------------------------------------- boots

def _check_paced(run, harts):
    """The invariants of a paced boot's report (MODEL end and MODEL job lines)."""
    assert run.ok, run.console[-2000:]
    end, jobs = run.model_end, run.parsed.model_jobs
    assert end["pace"] == RATE and end["cycle_ps"] == 10**12 // RATE
    assert run.boot["cycle_ps"] == 10**12 // RATE
    span_s = end["pace_span_us"] / 1e6
    insns = sum(j["insns"] for j in jobs.values())
    # The pacing guarantee: no hart ran ahead of R by more than its lead and one chunk between checks.
    assert 0 < insns <= harts * (RATE * (span_s + LEAD_S) + 2 * CHUNK), (insns, span_s)
    per_hart = [int(x) for x in str(end["pace_hart_events"]).split("/")]
    assert len(per_hart) == harts and sum(per_hart) == end["pace_events"]
    assert sum(j["pace_events"] for j in jobs.values()) == end["pace_events"]
    for result in run.results:
        assert jobs[result["job"]]["insns"] > 0


@pytest.mark.parametrize("harts", [1, 4])
def test_paced_boot_keeps_every_hart_to_its_rate(boot, harts):
    run = boot(harts, f"job=gauss:n=64 job=synth:iters=40,procs={harts}", model=f"pace={RATE}")
    _check_paced(run, harts)
    assert "idle=" not in run.bootargs                 # paced, idle harts halt: an IPI wakes them at once


def test_paced_boot_under_a_profile_counts_misses_as_unpaced(boot):
    """Pacing changes when things happen, not what the model counts: a one-hart job's misses paced and unpaced
    agree (the kernel's own accesses between them differ with the number of timer ticks, a few in a thousand)."""
    scenario = "calib=off job=gauss:n=64,procs=1"
    paced = boot(1, scenario, model=f"modern,pace={RATE}")
    _check_paced(paced, 1)
    plain = boot(1, scenario, model="modern")
    assert plain.ok
    a, b = paced.parsed.model_jobs[1], plain.parsed.model_jobs[1]
    assert a["misses"] > 0 and abs(a["misses"] - b["misses"]) <= 0.01 * b["misses"] + 50, (a, b)
    assert paced.model_end["stall_us"] > 0


def test_a_paced_boot_reserves_its_share_of_the_host(monkeypatch, tmp_path):
    from schedlab import executor
    monkeypatch.setattr(pace, "CAPACITY_FILE", tmp_path / "cap.json")
    monkeypatch.setattr(pace, "host_cores", lambda: 8)
    task = executor.Task("qemu", 16, "job=gauss", "k.elf", "0", model="pace=5000000")
    assert task.cores_needed == 16                      # capacity never measured: a core per hart
    for _ in range(pace.KEEP):
        pace._store("none", 100e6)
    need = min(8, -(-16 * 5_000_000 // int(pace.FRACTION * 100e6)))    # 16 x R over FRACTION of a core
    assert pace.share("pace=5000000", 16) == need and task.cores_needed == need
    assert pace.share("pace=1000000", 16) == 2
    assert pace.share("pace=100000000", 16) == 8        # never more than the host
    assert executor.Task("qemu", 4, "job=gauss", "k.elf", "0").cores_needed == 4
    assert pace.share(None, 4) is None and pace.share("modern", 4) is None


def test_reproduce_refuses_unpaced_harts_above_the_cores(fake, capsys):
    from schedlab import cli
    assert cli.main(["reproduce", "--cpus", "3", "--only", "gang-switch", "--out", str(fake.path)]) == 2
    assert "--cpus 3 on a host with 2 cores" in capsys.readouterr().err and fake.calls() == []


def test_lead_is_a_pacing_key():
    model = machine.parse_spec(f"pace={RATE},lead=50")
    assert model.lead == 50 and model.canonical == f"pace={RATE},lead=50"
    assert machine.parse_spec("modern,pace=auto,lead=20").with_pace(RATE).canonical.endswith(f"pace={RATE},lead=20")
    for bad, words in (("modern,lead=50", "needs pace"), (f"pace={RATE},lead=5", "lead=5 is out of range")):
        with pytest.raises(ModelError, match=words):
            machine.parse_spec(bad)


def test_a_short_lead_reaches_the_plugin(boot):
    run = boot(2, "calib=off job=gauss:n=48", model=f"pace={RATE},lead=50")
    _check_paced(run, 2)
    assert any("pace_lead_us=50" in arg for arg in run.argv)


def test_the_paced_16_processor_section_paces_every_boot_at_one_rate(monkeypatch):
    """markatos-3.5.1-paced16 boots 16 harts at one R (pace=auto resolved once, or --model's own pace), and its
    rows are judged by the 2-hart section's criteria for 16 processors."""
    from schedlab import reproduce as rp
    from schedlab.reproduce import paced as paced16
    rp.load_all()
    assert "markatos-3.5.1-paced16" in rp.SECTIONS
    asked = []
    monkeypatch.setattr(paced16.pace, "resolve", lambda spec, harts, **kw: asked.append((spec, harts)) or "pace=7")
    ctx = rp.Ctx(cpus=2, progress=lambda msg: None)
    assert paced16._spec(ctx) == "pace=7" and asked[-1] == ("pace=auto", 16)
    ctx.model = "modern"
    paced16._spec(ctx)
    assert asked[-1] == (machine.parse_spec("modern").with_pace("auto").canonical, 16)
    ctx.model = f"pace={RATE}"
    paced16._spec(ctx)
    assert asked[-1] == (f"pace={RATE}", 16)
    assert all(c.needs_harts == 16 for key, c in paced16.ODD.items() if key != "order")
    ctx.deterministic = True
    assert paced16.timeslicing16(ctx).rows == []


def test_validate_takes_paced_references_above_the_cores(monkeypatch):
    """schedlab validate --pace: QEMU references at any --cpus, one R for all of them; unpaced above the cores,
    refused."""
    from argparse import Namespace
    from schedlab import sim_validate
    from schedlab.qemu import HarnessError
    monkeypatch.setattr(pace, "host_cores", lambda: 2)
    monkeypatch.setattr(pace, "resolve", lambda spec, harts, **kw: f"{spec}@{harts}")
    args = Namespace(pace=None, deterministic=False)
    with pytest.raises(HarnessError, match="--pace auto"):
        sim_validate._paced_spec(args, [4, 2])
    assert sim_validate._paced_spec(args, [2, 1]) is None
    assert sim_validate._paced_spec(Namespace(pace="auto", deterministic=False), [4, 16]) == "pace=auto@16"
    assert sim_validate._paced_spec(Namespace(pace="3000000", deterministic=False), [8]) == "pace=3000000@8"
    with pytest.raises(HarnessError, match="exclude each other"):
        sim_validate._paced_spec(Namespace(pace="auto", deterministic=True), [2])
    assert all("procs=8" in token for token in sim_validate.jobs("spin", 8, paced=True))


def test_versus_matches_the_unpaced_instructions_per_quantum():
    """pacing versus's like-for-like run: k is how much longer a job alone takes paced than unpaced (the unpaced
    harts' speed over R), and the paced mix gets the mix's quantum times k, clamped to the parser's range."""
    from schedlab.experiments import pacing as versus
    plain = {("gang", 1): 20_000.0, ("gang", 2): 10_000.0, ("global", 1): None}
    paced = {("gang", 1): 1_000_000.0, ("gang", 2): 800_000.0, ("global", 1): 5.0}
    assert versus._speed_ratio(plain, paced) == pytest.approx(65.0)          # median of 50 and 80
    assert versus._speed_ratio({("a", 1): None}, {("a", 1): 1.0}) is None
    assert versus._with_quantum(["job=gauss:n=128", "quantum=2ms"], 65.0) == ["job=gauss:n=128", "quantum=130000us"]
    from schedlab import keytable
    quantum = next(k.default for k in keytable.host_table() if k.name == "quantum")
    default = versus._with_quantum(["job=oddeven"], 2.0)
    assert default[-1] == f"quantum={2 * versus._time_us(quantum)}us" and default[0] == "job=oddeven"
    assert versus._with_quantum([], 1e9)[-1] == "quantum=10000000us"         # the parser's 10 s at most
    assert any(t.startswith("job=") for t in versus._with_quantum([], 2.0))  # compare's default mix kept
