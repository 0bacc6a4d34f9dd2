"""The generated references (tools/docs/reference.py, schedlab.refdocs) and the one key table behind them.

The scenario language's keys live in one place, the parser's tables (kernel/scenario.c, scenario_words.c):
the kernel prints them at a listing boot (list=keys, KEY lines), a host build of the parser writes the same
rows to build/scenario-keys.txt, and the harness takes its settings from there. Here: the harness and the
kernel agree; the pages made from one listing boot hold every key the kernel accepts, every console key and
every command-line option; and the generator refuses, naming the place, a table it cannot read.
"""

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import REPO_ROOT, kernel_under_test
from schedlab import keytable, mix, model
from schedlab import refdocs as reference
from schedlab.console import parse_console
from schedlab.qemu import HarnessError
from schedlab.refdocs import console_keys
from schedlab.refdocs import pages
from schedlab.refdocs.pages import ReferenceError


@pytest.fixture(scope="module")
def listing():
    """One listing boot of the kernel under test: its console (KEY lines, then one tiny job's lines)."""
    return reference.listing_console(kernel_under_test())


@pytest.fixture(scope="module")
def generated(listing, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference")
    reference.write_pages(out, listing)
    return {path.name: path.read_text() for path in out.iterdir()}


def _section(page: str, heading: str) -> str:
    """The text of page under '## heading', up to the next such heading."""
    start = page.index(f"\n## {heading}\n")
    end = page.find("\n## ", start + 1)
    return page[start:end if end > 0 else None]


@pytest.mark.qemu
def test_the_harness_reads_the_kernel_own_settings(listing):
    booted = [k for k in keytable.parse(listing) if k.scope in ("setting", "job")]
    assert keytable.host_table() == booted                      # the host build and the kernel: one table
    settings = {k.name for k in booted if k.scope == "setting"}
    assert set(mix.GLOBAL_SETTINGS) == settings - {"job"}
    assert {"idle", "model", "perturb", "quantum"} <= set(mix.GLOBAL_SETTINGS)


@pytest.mark.qemu
def test_every_key_the_kernel_accepts_is_on_its_page(listing, generated):
    keys = keytable.parse(listing)
    policies = parse_console(listing).boot["policies"]
    for key in keys:
        scope, _, owner = key.scope.partition(":")
        if scope in ("setting", "job"):
            page = generated["scenario-keys.md"]
        elif scope in ("option", "jobkey"):
            page = _section(generated["policy-options.md"], owner)
        elif scope == "app" and not owner:
            assert f"\n## {key.name}\n" in generated["apps.md"]
            continue
        else:
            page = _section(generated["apps.md"], owner)
        assert f"| `{key.name}` |" in page, (key, scope)
    assert policies and all(f"\n## {p}\n" in generated["policy-options.md"] for p in policies)


@pytest.mark.qemu
def test_every_console_key_profile_number_and_option_is_on_its_page(listing, generated):
    lines = pages.contract_lines(listing)
    for kind in ("BOOT", "CALIB", "SUMMARY"):
        assert all(f"| `{k}` |" in _section(generated["results.md"], kind) for k in lines[kind])
    result = _section(generated["results.md"], "RESULT")
    assert all(f"| `{k}` |" in result for k in pages.kernel_result_keys(REPO_ROOT))
    for name in model.profiles():
        section = _section(generated["profiles.md"], name)
        assert all(f"| `{k}` | {v} |" in section for k, v in model.load_profile(name).items())
    from schedlab import cli
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    for name, command in sub.choices.items():
        section = _section(generated["cli.md"], name)
        if name not in cli.DELEGATED:
            assert all(f"`{o}`" in section for a in command._actions for o in a.option_strings
                       if a.help != "show this help message and exit")
    assert "`--from`" in _section(generated["cli.md"], "trace")


@pytest.mark.check
def test_a_cut_or_garbled_key_table_is_refused_naming_it():
    whole = "KEY scope=setting name=seed values=<n> default=1 help=x\nKEY end\n"
    with pytest.raises(HarnessError, match="ends before its 'KEY end'"):
        keytable.parse(whole.replace("KEY end", ""))
    with pytest.raises(HarnessError, match="line 2: not a KEY row"):
        keytable.parse("KEY scope=setting name=seed values=<n> default=1 help=x\nKEY scope=setting name=x\nKEY end\n")
    with pytest.raises(HarnessError, match="no KEY rows"):
        keytable.parse("KEY end\n")


@pytest.mark.check
def test_a_console_key_without_its_meaning_or_a_stale_meaning_is_refused(monkeypatch):
    lines = {kind: dict.fromkeys(keys, "1") for kind, keys in console_keys.LINES.items()}
    lines["RESULT"]["app"] = "synth"
    result_keys = list(console_keys.RESULT)
    assert pages.results_page(lines, result_keys, [])        # the meanings as they are: a page
    lines["SUMMARY"]["idle_us"] = "5"
    with pytest.raises(ReferenceError, match="SUMMARY key 'idle_us' has no meaning"):
        pages.results_page(lines, result_keys, [])
    del lines["SUMMARY"]["idle_us"]
    monkeypatch.setitem(console_keys.BOOT, "gone", "a key no line has")
    with pytest.raises(ReferenceError, match="BOOT keys no line has: gone"):
        pages.results_page(lines, result_keys, [])


@pytest.mark.check
def test_a_profile_number_without_its_source_is_refused(monkeypatch):
    text = (model.PROFILE_DIR / "iris.conf").read_text()
    profiles = Path(tempfile.mkdtemp(prefix="test-reference-", dir=REPO_ROOT / "build"))  # model names it from the repo
    try:
        (profiles / "iris.conf").write_text(re.sub(r"(?m)^(line_b\s*=\s*\d+)\s*#.*$", r"\1", text))
        monkeypatch.setattr(model, "PROFILE_DIR", profiles)
        with pytest.raises(ReferenceError, match=r"iris.conf:\d+: expected 'key = integer   # source'"):
            pages.profiles_page()
    finally:
        shutil.rmtree(profiles)


@pytest.mark.check
def test_the_api_page_names_every_public_name(tmp_path):
    pages.check_api_page(REPO_ROOT / "docs" / "reference" / "api.md")
    page = tmp_path / "api.md"
    page.write_text("::: schedlab.api.run\n::: schedlab.api.nothing\n")
    with pytest.raises(ReferenceError, match="'::: schedlab.api.nothing' names nothing"):
        pages.check_api_page(page)
    page.write_text("::: schedlab.api.run\n")
    with pytest.raises(ReferenceError, match="no '::: ' directive for compare, Record, HarnessError"):
        pages.check_api_page(page)


@pytest.mark.check
def test_the_generator_fails_loudly_without_a_kernel(tmp_path, capsys):
    assert reference.main(["--out", str(tmp_path), "--kernel", str(tmp_path / "none.elf"), "--no-build"]) == 2
    assert "reference: error:" in capsys.readouterr().err and not list(tmp_path.glob("*.md"))
