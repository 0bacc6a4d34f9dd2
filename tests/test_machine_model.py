"""The machine model's harness side (tools/py/schedlab/model.py, tools/model/README.md), without QEMU:
profiles and specs, the QEMU arguments and bootargs of a boot under a model, the plugin's MODEL lines and
their join into records, the refusal to mix models, and make's refusal of a bad MODEL.

The profiles are taken from tools/model/profiles (every file there), never from a list here. Booting uses
test_harness's fake QEMU, which prints MODEL lines when it is given -plugin; the kernel's symbols come from a
fake nm (SCHEDLAB_NM) and the plugin is an empty file (SCHEDLAB_MODEL_PLUGIN).
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab import cli, console, model, qemu, writers
from schedlab import reproduce as rp
from helpers import CONSOLE, run_cli

REPO = Path(__file__).resolve().parents[1]
PROFILES = sorted(p.stem for p in (REPO / "tools" / "model" / "profiles").glob("*.conf"))
ADDRESSES = {"model_marks": 0x80601000, "model_calib_loop": 0x80203000, "model_calib_loop_end": 0x80203080,
             "model_pace_start": 0x80204000}
MARK_FUNCTION = (0x80204100, 0x118)      # trace_model_rec: address and size (nm -S), the paced mark range


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A fake nm that lists the kernel's model symbols, and a plugin file; returns the tmp dir."""
    nm = tmp_path / "fake-nm"
    lines = "".join(f"{addr:016x} B {name}\\n" for name, addr in ADDRESSES.items())
    lines += f"{MARK_FUNCTION[0]:016x} {MARK_FUNCTION[1]:016x} T trace_model_rec\\n"      # nm -S: with its size
    nm.write_text(f"#!/bin/sh\nprintf '0000000080200000 T _entry\\n{lines}'\n")
    nm.chmod(0o755)
    plugin = tmp_path / "model.so"
    plugin.write_bytes(b"")
    monkeypatch.setenv("SCHEDLAB_NM", str(nm))
    monkeypatch.setenv("SCHEDLAB_MODEL_PLUGIN", str(plugin))
    return tmp_path


# ---------------------------------------------------------------- profiles and specs

def test_the_five_machines_of_the_issue_are_there():
    assert {"butterfly", "symmetry", "iris", "ksr1", "modern"} <= set(PROFILES) == set(model.profiles())


@pytest.mark.parametrize("name", PROFILES)
def test_profile_canonical_form_and_sources(name):
    parsed = model.parse_spec(name)
    assert parsed.profile == name and [k for k, _ in parsed.values] == list(model.KEYS)
    spec = parsed.canonical
    assert spec == name + "," + ",".join(f"{k}={parsed[k]}" for k in model.KEYS)
    assert model.parse_spec(spec) == parsed                  # the canonical spec reads back as itself
    assert len(spec) <= model.KERNEL_SPEC_MAX and re.fullmatch(r"[a-z0-9_,=]+", spec)   # the kernel's charset
    text = (REPO / "tools" / "model" / "profiles" / f"{name}.conf").read_text()
    assert text.startswith("#"), "the opening comment describes the machine"
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.search(r"=\s*\d+\s+#\s*\S", line), f"{name}: every number gives its source: {line!r}"
    # nodes is clamped to the harts; every other key is kept
    one = model.resolve(name, 1)
    assert one["nodes"] == 1 and one.replace(nodes=parsed["nodes"]) == parsed
    assert model.resolve(name, 64)["nodes"] == parsed["nodes"]


@pytest.mark.parametrize("name", PROFILES)
def test_overrides_change_only_their_key(name):
    parsed = model.parse_spec(name)
    changed = model.parse_spec(f"{name},mem_cycles={parsed['mem_cycles'] + 7},nodes=1")
    assert changed == parsed.replace(mem_cycles=parsed["mem_cycles"] + 7, nodes=1)


def test_none_and_empty_are_no_model():
    for spec in (None, "", "none", "  none "):
        assert model.parse_spec(spec) is None and model.canonical(spec, 2) == "none"


def test_profile_specific_numbers_follow_the_brief():
    butterfly, modern = model.parse_spec("butterfly"), model.parse_spec("modern")
    assert butterfly["l1_kb"] == butterfly["l2_kb"] == butterfly["llc_kb"] == 0        # no caches
    assert butterfly["nodes"] == 2 and butterfly["remote_cycles"] > butterfly["mem_cycles"] > 0
    assert modern["nodes"] == 2 and modern["l1_kb"] and modern["l2_kb"] and modern["llc_kb"]
    assert modern["remote_cycles"] > modern["mem_cycles"] > modern["llc_cycles"] > modern["l2_cycles"] > 0
    # the thesis's ordering of miss cost against processor speed: Symmetry cheap, Iris dear, KSR-1 dearer
    costs = [model.parse_spec(p)["mem_cycles"] for p in ("symmetry", "iris", "ksr1")]
    assert costs == sorted(costs) and costs[0] < costs[1] < costs[2]


@pytest.mark.parametrize("spec, words", [
    ("bogus", ["unknown model profile 'bogus'", *PROFILES]),
    ("modern,foo=1", ["unknown key 'foo'", *model.KEYS]),
    ("modern,l2_kb", ["expected key=value", "'l2_kb'"]),
    ("modern,l2_kb=big", ["l2_kb=big", "not a non-negative decimal integer"]),
    ("modern,l2_kb=-1", ["l2_kb=-1", "not a non-negative decimal integer"]),
    ("modern,l2_kb=1,l2_kb=2", ["l2_kb is given twice"]),
    ("modern,line_b=48", ["line_b=48", "power of two"]),
    ("modern,l1_ways=0", ["l1_kb=32 needs l1_ways >= 1"]),
    ("modern,l2_kb=100,l2_ways=3", ["not a whole number of sets"]),
    ("modern,l1_kb=0", ["a second level needs a first"]),
    ("Modern", ["unknown model profile 'Modern'"]),
])
def test_bad_specs_are_refused_with_what_is_allowed(spec, words):
    with pytest.raises(model.ModelError) as exc:
        model.parse_spec(spec)
    assert all(str(w) in str(exc.value) for w in words), str(exc.value)
    assert isinstance(exc.value, qemu.HarnessError)          # the CLI reports it as a usage error


@pytest.mark.parametrize("key", model.KEYS)
def test_every_key_has_a_range(key):
    low, high = model.LIMITS[key]
    with pytest.raises(model.ModelError, match=rf"{key}={high + 1} is out of range: {key} takes {low}\.\.{high}"):
        model.parse_spec(f"{PROFILES[0]},{key}={high + 1}")


def test_absent_levels_have_no_ways():
    assert model.parse_spec("iris,l2_kb=0")["l2_ways"] == 0


# ---------------------------------------------------------------- what a boot under a model gets

def _plugin_fields(argv):
    value = argv[argv.index("-plugin") + 1]
    path, *items = value.split(",")
    return path, [item.partition("=")[::2] for item in items]


def test_plan_plugin_argument_is_the_contract(machine):
    plan = model.plan("modern,l2_kb=512", 2, machine / "kernel.elf", "256M", host_cores=2)
    path, items = _plugin_fields(list(plan.qemu_args))
    assert Path(path) == (machine / "model.so").resolve()
    keys = [k for k, _ in items]
    assert keys == ["profile", *model.KEYS, "harts", "ram_mb", "marks", "calib_lo", "calib_hi", "pace_at",
                    "mark_lo", "mark_hi", "charge"]
    fields = dict(items)
    assert fields["profile"] == "modern" and fields["l2_kb"] == "512" and fields["nodes"] == "2"
    assert fields["harts"] == "2" and fields["ram_mb"] == "256" and fields["charge"] == "on"
    assert int(fields["marks"], 16) == ADDRESSES["model_marks"] and fields["marks"].startswith("0x")
    assert int(fields["calib_lo"], 16) == ADDRESSES["model_calib_loop"]
    assert int(fields["calib_hi"], 16) == ADDRESSES["model_calib_loop_end"]
    assert int(fields["pace_at"], 16) == ADDRESSES["model_pace_start"]
    assert int(fields["mark_lo"], 16) == MARK_FUNCTION[0] and int(fields["mark_hi"], 16) == sum(MARK_FUNCTION)
    assert plan.bootargs == (f"model={plan.canonical}", "idle=poll")
    paced = model.plan("pace=5000000", 2, machine / "kernel.elf", "256M", host_cores=2)
    fields = dict(_plugin_fields(list(paced.qemu_args))[1])
    assert fields["profile"] == "none" and fields["pace"] == "5000000" and "l1_kb" not in fields
    assert paced.bootargs == ("model=pace=5000000",)          # paced idle harts halt: no idle=poll
    assert plan.canonical == model.canonical("modern,l2_kb=512", 2)


def test_plan_numa_split_for_nodes(machine):
    args = list(model.plan("modern,nodes=2", 4, machine / "k", "512M").qemu_args)
    numa = [args[i + 1] for i, a in enumerate(args) if a == "-numa"]
    objects = [args[i + 1] for i, a in enumerate(args) if a == "-object"]
    assert numa == ["node,memdev=m0,cpus=0-1,nodeid=0", "node,memdev=m1,cpus=2-3,nodeid=1"]
    assert objects == ["memory-backend-ram,id=m0,size=256M", "memory-backend-ram,id=m1,size=256M"]
    # nodes is clamped to the harts: one hart, one node, no -numa
    single = model.plan("modern", 1, machine / "k", "256M")
    assert "-numa" not in single.qemu_args and single.model["nodes"] == 1
    with pytest.raises(model.ModelError, match="does not split evenly into nodes=2"):
        model.plan("modern", 2, machine / "k", "255M")


def test_plan_deterministic_oversubscribed_and_user_idle(machine):
    det = model.plan("iris", 2, machine / "k", deterministic=True, host_cores=8)
    assert dict(_plugin_fields(list(det.qemu_args))[1])["charge"] == "off"
    assert det.bootargs == (f"model={det.canonical}",)      # no idle=poll: the virtual clock skips halts
    assert model.plan("iris", 4, machine / "k", host_cores=2).bootargs == (f"model={det.canonical}",)
    assert "idle=poll" not in model.plan("iris", 2, machine / "k", bootargs="idle=auto", host_cores=8).bootargs


def test_plan_refusals(machine, monkeypatch):
    with pytest.raises(model.ModelError, match="already have -numa"):
        model.plan("modern", 2, machine / "k", extra="-numa node,nodeid=0")
    with pytest.raises(model.ModelError, match="already have model="):
        model.plan("modern", 2, machine / "k", bootargs="job=gauss model=iris")
    monkeypatch.setenv("SCHEDLAB_MODEL_PLUGIN", str(machine / "absent.so"))
    with pytest.raises(model.ModelError, match="is not built: run make"):
        model.plan("modern", 2, machine / "k")


def test_a_kernel_without_the_symbols_predates_the_model(machine, monkeypatch):
    nm = machine / "old-nm"
    nm.write_text("#!/bin/sh\necho '0000000080200000 T _entry'\n")
    nm.chmod(0o755)
    monkeypatch.setenv("SCHEDLAB_NM", str(nm))
    with pytest.raises(model.ModelError, match="model_marks, model_calib_loop, model_calib_loop_end.*predates"):
        model.plan("modern", 2, machine / "kernel.elf")
    monkeypatch.setenv("SCHEDLAB_NM", str(machine / "no-such-nm"))
    with pytest.raises(model.ModelError, match="not found"):
        model.kernel_symbols(machine / "kernel.elf")


def test_the_real_kernel_has_the_symbols():
    kernel = qemu.DEFAULT_KERNEL
    if not kernel.is_file():
        pytest.skip("build/kernel.elf is missing: run make first")
    found = model.kernel_symbols(kernel)
    assert set(found) == {"marks", "calib_lo", "calib_hi", "pace_at", "mark_lo", "mark_hi"}
    assert found["calib_lo"] < found["calib_hi"] and found["mark_lo"] < found["mark_hi"]


# ---------------------------------------------------------------- the MODEL lines

MODEL_LINES = ("MODEL end profile=modern cycle_ps=310 charge=on accesses=9000 stall_us=1234\n"
               "MODEL job=0 accesses=500 misses=40 l2_hits=3 llc_hits=10 coherence=5 local=20 remote=5 stall_us=9\n"
               "MODEL job=1 accesses=8000 misses=300 l2_hits=90 llc_hits=100 coherence=50 local=100 remote=50 "
               "stall_us=1200\n"
               "MODEL job=2 accesses=500 misses=4 l2_hits=0 llc_hits=1 coherence=1 local=1 remote=1 stall_us=25\n")


def test_model_lines_parse_after_summary():
    parsed = console.parse_console(CONSOLE + MODEL_LINES + "MODEL job=3 accesses=1\nMODEL bogus\n")
    assert parsed.model_end == {"profile": "modern", "cycle_ps": 310, "charge": "on",
                                "accesses": 9000, "stall_us": 1234}
    assert sorted(parsed.model_jobs) == [0, 1, 2]
    for counts in parsed.model_jobs.values():
        assert counts["misses"] == counts["llc_hits"] + counts["coherence"] + counts["local"] + counts["remote"]
    assert parsed.malformed == ["MODEL job=3 accesses=1", "MODEL bogus"]
    assert len(parsed.results) == 2 and parsed.summary is not None       # the rest is parsed as before


def test_records_join_each_job_with_its_model_line():
    parsed = console.parse_console(CONSOLE + MODEL_LINES)
    run = qemu.Run(cpus=2, bootargs="", argv=[], console="", exit_code=0, parsed=parsed, model="modern,x=1")
    records = writers.records([(writers.run_meta(0, run), run)])
    assert [r["job"] for r in records] == [1, 2]
    assert all(r["model"] == "modern,x=1" for r in records)
    for record in records:
        counts = parsed.model_jobs[record["job"]]
        assert {k: record[f"model_{k}"] for k in counts if k != "job"} == {k: v for k, v in counts.items()
                                                                            if k != "job"}
        assert "model_job" not in record
    summary = writers.run_summaries([(writers.run_meta(0, run), run)])[0]
    assert summary["model_end"]["stall_us"] == 1234 and summary["model_jobs"]["0"]["misses"] == 40
    plain = qemu.Run(cpus=2, bootargs="", argv=[], console="", exit_code=0, parsed=console.parse_console(CONSOLE))
    records = writers.records([(writers.run_meta(0, plain), plain)])
    assert all(r["model"] == "none" and not any(k.startswith("model_") for k in r) for r in records)


# ---------------------------------------------------------------- the commands

def test_run_under_a_model_boots_with_plugin_and_records_it(fake, machine, capsys, tmp_path):
    fake.sim()
    out_json = tmp_path / "r.json"
    assert run_cli(fake, "run", "--cpus", "2", "--model", "butterfly", "--json", str(out_json), "job=gauss") == 0
    argv = fake.calls()[0]
    spec = model.canonical("butterfly", 2)
    assert "-plugin" in argv and argv.count("-numa") == 2
    assert argv[-1].split()[-2:] == [f"model={spec}", "idle=poll"]
    out, _ = capsys.readouterr()
    assert f"model: {spec}" in out and "model: profile=butterfly" in out
    assert f"model={spec}" in next(line for line in out.splitlines() if line.startswith("== run"))
    doc = json.loads(out_json.read_text())
    (record,) = doc["records"]
    assert record["model"] == spec and record["model_misses"] == 11 and record["model_local"] == 7
    assert doc["runs"][0]["model_end"]["profile"] == "butterfly"


def test_run_without_a_model_is_unchanged(fake, machine, tmp_path):
    fake.sim()
    assert run_cli(fake, "run", "--cpus", "2", "--json", str(tmp_path / "r.json"), "job=gauss") == 0
    argv = fake.calls()[0]
    assert "-plugin" not in argv and "-numa" not in argv and argv[-1] == "job=gauss"
    full = qemu.qemu_argv(2, "job=gauss", fake.kernel_path)          # python3 fake_qemu.py ARGS: it logs ARGS
    assert full[-len(argv):] == argv and full[:-len(argv)] == qemu.qemu_binary()
    assert json.loads((tmp_path / "r.json").read_text())["records"][0]["model"] == "none"


def test_compare_under_a_model_shows_it_and_joins_counts(fake, machine, capsys, tmp_path):
    fake.sim()
    status = run_cli(fake, "compare", "--cpus", "2", "--repeat", "1", "--policies", "gang,partition",
                      "--model", "iris", "--json", str(tmp_path / "c.json"))
    assert status == 0
    out, _ = capsys.readouterr()
    spec = model.canonical("iris", 2)
    assert f"model={spec}" in next(line for line in out.splitlines() if line.startswith("== compare"))
    assert all(any(a.startswith("model=") for a in call[-1].split()) for call in fake.calls())
    records = json.loads((tmp_path / "c.json").read_text())["records"]
    assert records and all(r["model"] == spec and "model_stall_us" in r for r in records)
    header = next(line for line in out.splitlines() if line.startswith("policy "))
    assert "misses alone" in header and "misses mix" in header     # each job's misses beside its times
    jobs = json.loads((tmp_path / "c.json").read_text())["comparison"]["policies"][0]["jobs"]
    assert all(j["misses_mix"] and j["misses_mix"]["median"] >= 0 for j in jobs if not j["background"])


def test_compare_without_a_model_has_no_misses_columns(fake, capsys):
    fake.sim()
    assert run_cli(fake, "compare", "--cpus", "2", "--repeat", "1", "--policies", "gang") == 0
    header = next(line for line in capsys.readouterr()[0].splitlines() if line.startswith("policy "))
    assert "misses" not in header


@pytest.mark.parametrize("argv, message", [
    (["run", "--model", "bogus", "job=gauss"], "unknown model profile 'bogus'"),
    (["run", "--sim", "--model", "bogus", "job=gauss"], "unknown model profile 'bogus'"),
    (["run", "job=gauss", "model=modern"], "choose the machine model with --model"),
    (["sweep", "--vary", "model=iris,modern", "job=gauss"], "the machine model is not a key to vary"),
    (["compare", "--model", "modern,l2_kb=x"], "l2_kb=x is not a non-negative decimal integer"),
])
def test_bad_model_use_is_refused_before_any_boot(fake, machine, capsys, argv, message):
    fake.sim()
    try:
        status = run_cli(fake, *argv)
    except SystemExit as exc:           # argparse's usage errors
        status = exc.code
    assert status == 2 and message in capsys.readouterr().err
    assert fake.calls() == []


def test_check_same_names_both_models():
    assert model.check_same([("a", "iris"), ("b", "iris")], "compare") == "iris"
    with pytest.raises(model.ModelError, match=r"cannot compare .*model=iris \(a, b\) and model=none \(c\)"):
        model.check_same([("a", "iris"), ("b", "iris"), ("c", "none")], "compare")


def test_reproduce_refuses_to_merge_into_another_models_results(tmp_path, capsys):
    first = rp.load_all()[0].name
    rp.write_results([rp.Section(first, "T", "-", "-", [], "")], rp.Ctx(out=tmp_path, progress=lambda m: None))
    assert json.loads((tmp_path / "results.json").read_text())["model"] == "none"
    status = cli.main(["reproduce", "--only", first, "--model", "iris", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "model=none" in err and f"model={model.canonical('iris', 2)}" in err
    ctx = rp.Ctx(out=tmp_path, progress=lambda m: None)
    rp.check_model_destination(ctx)                          # the same model (none): merging is fine
    ctx.model = "iris"
    with pytest.raises(rp.ReproError, match="never merged"):
        rp.check_model_destination(ctx)
    with pytest.raises(rp.ReproError, match="no machine model yet"):
        ctx.sim("job=synth", 2)


# ---------------------------------------------------------------- make

def _make(*args):
    return subprocess.run(["make", "-n", "-s", *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_make_refuses_a_bad_model_before_anything():
    for spec, message in (("bogus", "unknown model profile 'bogus'"), ("modern,l2_kb=x", "l2_kb=x is not")):
        out = _make("qemu", f"MODEL={spec}")
        assert out.returncode != 0 and message in out.stderr, out.stderr
        assert "qemu-system" not in out.stdout
    assert all(p in _make("qemu", "MODEL=bogus").stderr for p in PROFILES)


def _qemu_line(out):
    return [line for line in out.stdout.splitlines() if "qemu-system" in line or "schedlab.model" in line]


def test_make_qemu_without_model_is_todays_command():
    plain, none = _make("qemu"), _make("qemu", "MODEL=none")
    assert plain.returncode == 0 and _qemu_line(plain) == _qemu_line(none)
    assert not any("-plugin" in line or "schedlab.model" in line for line in _qemu_line(plain))
    modelled = _make("qemu", "MODEL=modern,l2_kb=512")
    assert modelled.returncode == 0
    assert any("schedlab.model qemu 'modern,l2_kb=512' --harts 2" in line for line in _qemu_line(modelled))


def test_model_tool_prints_arguments_and_bootargs(machine):
    env = {"PYTHONPATH": str(REPO / "tools" / "py"), "PATH": "/usr/bin:/bin",
           "SCHEDLAB_NM": str(machine / "fake-nm")}
    out = subprocess.run([sys.executable, "-m", "schedlab.model", "qemu", "symmetry", "--harts", "2",
                          "--kernel", str(machine / "k"), "--plugin", str(machine / "model.so")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    args, _, boot = out.stdout.strip().partition("|")
    assert args.split()[0] == "-plugin" and boot.split()[0] == f"model={model.canonical('symmetry', 2)}"
    bad = subprocess.run([sys.executable, "-m", "schedlab.model", "check", "nope"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("MODEL=nope: unknown model profile 'nope'")


def test_make_builds_the_plugin_from_every_model_source(tmp_path):
    """qemu under a model depends on build/model/model.so, built from tools/model/*.c by the host compiler
    (MODEL_SRCS stands in for sources this tree may not have yet)."""
    source = tmp_path / "plugin.c"
    source.write_text("int qemu_plugin_version = 1;\n")
    out = _make("qemu", "MODEL=modern", f"MODEL_SRCS={source}")
    assert out.returncode == 0, out.stderr
    build = next(line for line in out.stdout.splitlines() if "-shared" in line)
    assert "-fPIC" in build and "-O2" in build and str(source) in build and "-o build/model/model.so" in build
    assert "-shared" not in _make("qemu", f"MODEL_SRCS={source}").stdout       # no model: no plugin needed


def test_make_run_passes_the_model_to_compare():
    out = _make("run", "MODEL=iris")
    assert out.returncode == 0, out.stderr
    assert any(line.endswith("tools/schedlab compare --model 'iris'") for line in out.stdout.splitlines())
    assert any(line.endswith("tools/schedlab compare ") or line.endswith("tools/schedlab compare")
               for line in _make("run").stdout.splitlines())
