"""The machine model's profile files (tools/model/profiles/*.conf) have one parser per language: the harness's
model.load_profile and the simulator's (tools/sim/sim_mem.c, printed by `schedlab-sim --profile-values FILE`).
Both must read every profile file of the tree to the same values, and refuse the same malformed files. Boots
nothing: a few runs of the simulator's parser only (make check)."""

import subprocess

import pytest

from schedlab import model
from schedlab.qemu import REPO_ROOT
from schedlab.sim import ensure_sim

ASAN = REPO_ROOT / "build" / "sim-asan" / "schedlab-sim"
PROFILES = sorted((REPO_ROOT / "tools" / "model" / "profiles").glob("*.conf"))


def sim_values(path):
    """(exit status, {key: value} in the simulator's order, stderr) of the simulator's parser on path."""
    sim = ASAN if ASAN.is_file() else ensure_sim()
    out = subprocess.run([str(sim), "--profile-values", str(path)], capture_output=True, text=True, timeout=60)
    values = dict(line.split("=", 1) for line in out.stdout.splitlines())
    return out.returncode, {k: int(v) for k, v in values.items()}, out.stderr


def test_the_tree_has_profiles():
    assert {p.stem for p in PROFILES} == set(model.profiles()) and len(PROFILES) >= 3


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_both_parsers_read_every_profile_to_the_same_values(path):
    status, values, err = sim_values(path)
    assert status == 0, err
    assert list(values) == list(model.KEYS)                   # every key, in the table's order
    assert values == model.load_profile(path.stem)


MODERN = model.load_profile("modern")
GOOD = "".join(f"{k} = {v}   # test\n" for k, v in MODERN.items())


@pytest.mark.parametrize("text", [
    GOOD.replace("nodes = 2", "nodes = two"),                 # not an integer
    GOOD.replace("line_b = 64   # test\n", ""),               # a key missing
    GOOD + "bogus_key = 3\n",                                 # an unknown key
    GOOD.replace("nodes = 2", "nodes = 2 3"),                 # two values
    GOOD.replace("line_b = 64", "line_b = 8"),                # out of range
    GOOD + "nodes = 1\n",                                     # a key twice
], ids=["not-integer", "missing-key", "unknown-key", "two-values", "out-of-range", "twice"])
def test_both_parsers_refuse_the_same_malformed_profiles(tmp_path, monkeypatch, text):
    (tmp_path / "bad.conf").write_text(text)
    monkeypatch.setattr(model, "PROFILE_DIR", tmp_path)
    status, _, err = sim_values(tmp_path / "bad.conf")
    assert status == 2 and f"{tmp_path}/bad.conf" in err and err.startswith("schedlab-sim: --model: ")
    with pytest.raises(model.ModelError):
        model.load_profile("bad")


def test_a_profile_outside_the_checkout_loads_and_its_errors_name_its_path(tmp_path, monkeypatch):
    """PROFILE_DIR outside the repository: no ValueError from making its path relative to the checkout."""
    monkeypatch.setattr(model, "PROFILE_DIR", tmp_path)
    (tmp_path / "mine.conf").write_text(GOOD)
    assert model.load_profile("mine") == MODERN
    (tmp_path / "short.conf").write_text(GOOD.replace("l1_kb = 32   # test\n", ""))
    with pytest.raises(model.ModelError, match=f"{tmp_path}/short.conf: missing l1_kb"):
        model.load_profile("short")
    (tmp_path / "typo.conf").write_text(GOOD.replace("nodes = 2", "nodes = x"))
    with pytest.raises(model.ModelError, match=f"{tmp_path}/typo.conf:13: nodes=x"):
        model.load_profile("typo")
