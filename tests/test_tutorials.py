"""The tutorials work when followed literally: docs/guide/adding-a-policy.md and adding-an-app.md.

Each page holds one whole C file (a ```c block whose comment starts with the file's name) and, in a ```sh
block, the command that builds it into a kernel of its own (make B=build/mine EXTRA_POLICIES= or EXTRA_APPS=)
and the command that boots it. This test takes those blocks from the page itself, writes the file into a
build directory (never into the tree), runs the page's make command with only the paths put there - one
build per page, started from build/'s objects (helpers.seed_kernel_build) - and boots the page's scenario,
checking what the page says it shows: the new name in BOOT, every job check=ok, and the ERROR a bad value
gives, quoted from the page.
"""

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from helpers import build_lock, seed_kernel_build
from schedlab import qemu

GUIDE = REPO_ROOT / "docs" / "guide"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_FILE = re.compile(r"\A/\*\n \* (\w+\.c) - ")


def page_blocks(page: str, lang: str) -> list[str]:
    return [body for kind, body in _FENCE.findall(page) if kind == lang]


def page_file(page: str) -> tuple[str, str]:
    """(name, text) of the page's one whole C file."""
    files = [(m.group(1), body) for body in page_blocks(page, "c") if (m := _FILE.match(body))]
    assert len(files) == 1, f"expected one whole file (a ```c block opening '/*\\n * <name>.c - '), got {files}"
    return files[0]


def page_command(page: str, start: str) -> list[str]:
    lines = [line for body in page_blocks(page, "sh") for line in body.splitlines() if line.startswith(start)]
    assert lines, f"the page has no ```sh line starting {start!r}"
    return shlex.split(lines[0])


def build_page_kernel(page: str, out: str) -> Path:
    """The page's file built as the page's make command says, into build/<out> instead of build/mine."""
    name, text = page_file(page)
    argv = page_command(page, "make B=build/mine ")
    build = REPO_ROOT / "build" / out
    with build_lock(build):
        kernel, main = build / "kernel.elf", qemu.DEFAULT_KERNEL
        if kernel.is_file() and main.is_file() and kernel.stat().st_mtime < main.stat().st_mtime:
            shutil.rmtree(build)        # older than the main build: start again from its objects, not from ours
        seed_kernel_build(build)
        source = REPO_ROOT / "build" / out / "src" / name
        source.parent.mkdir(parents=True, exist_ok=True)
        if not source.is_file() or source.read_text() != text:
            source.write_text(text)
        moved = [a.replace("build/mine", f"build/{out}") for a in argv]
        moved = [re.sub(rf"^(EXTRA_\w+=){re.escape(name)}$", rf"\g<1>{source.relative_to(REPO_ROOT)}", a)
                 for a in moved]
        assert moved != argv and any(a.endswith(f"src/{name}") for a in moved), moved
        done = subprocess.run([*moved[:1], "-s", *moved[1:]], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return REPO_ROOT / "build" / out / "kernel.elf"


def boot_page_run(page: str, kernel: Path, *extra: str) -> qemu.Run:
    """The page's `tools/schedlab run --kernel build/mine/kernel.elf --cpus N tokens...`, on ``kernel``."""
    argv = page_command(page, "tools/schedlab run ")
    assert argv[2:4] == ["--kernel", "build/mine/kernel.elf"] and argv[4] == "--cpus", argv
    return qemu.boot(int(argv[5]), argv[6:] + list(extra), kernel=kernel, timeout=300)


def quoted_error(page: str, token: str) -> str:
    found = re.search(rf"`(ERROR bad token '{re.escape(token)}'[^`]*)`", page)
    assert found, f"the page quotes no ERROR for {token}"
    return " ".join(found.group(1).split())         # the page may wrap it


def follow(page_name: str, out: str, bad: str, bad_token: str) -> qemu.Run:
    """Build and boot the page's example as it says; its bad scenario gives exactly the ERROR it quotes."""
    page = (GUIDE / page_name).read_text()
    kernel = build_page_kernel(page, out)
    run = boot_page_run(page, kernel)
    assert run.ok and not run.errors and not run.panics, run.console[-2000:]
    assert run.results and all(r["check"] == "ok" for r in run.results), run.results
    refused = qemu.boot(1, bad, kernel=kernel, timeout=120)
    assert refused.exit_code == 2 and refused.errors == [quoted_error(page, bad_token)], refused.console[-800:]
    return run


@pytest.mark.qemu
def test_the_policy_tutorial_builds_and_boots_as_written():
    run = follow("adding-a-policy.md", "tutorial-policy", "policy=turns turns_quanta=0 job=synth:procs=1,iters=1",
                 "turns_quanta=0")
    assert run.summary["policy"] == "turns" and run.boot["policies"][-1] == "turns"
    assert set(run.boot["options"]["turns"]) == {"turns_quanta", "turns_wake"}


@pytest.mark.qemu
def test_the_app_tutorial_builds_and_boots_as_written():
    run = follow("adding-an-app.md", "tutorial-app", "job=sumsq:n=0", "job=sumsq:n=0")
    assert "sumsq" in run.boot["apps"]
    for result in run.results:
        n = result["n"]
        assert result["total"] == n * (n + 1) * (2 * n + 1) // 6, result
        assert f"sum of squares of 1..{n}: {result['total']}" in run.output[result["job"]]
