"""The documentation is tested as code is: what it names exists, what it says to run runs, and the site's
navigation lists every page.

- Paths: every repository path that README.md, a page under docs/ or a source file names (a word that starts
  with one of the top-level folders, e.g. ``lib/threads/uthread.h`` or ``kernel/sched/*.c``) exists in the
  tree. A path with a placeholder (``apps/<name>.c``, ``tools/scenarios/NAME.scn``, ``$(B)``) is a pattern,
  not a path, and is skipped; a glob must match a file (but in a makefile, whose wildcards may match nothing).
  A path may be relative to a folder the file is in or names (the simulator's ``apps/gauss.c`` beside
  ``tools/sim/sim.h``), and a tutorial may name the file its own example block holds (a block whose header
  comment opens ``<path> - ...``), which the reader creates. A dated note (docs/notes/) may name a path of its
  time: one the repository's history has, or a file since moved. The design's
  contracts are docs/design.md, so nothing cites the copy outside the repository (``../shared/``).
- Runnable blocks: a fenced block right after a ``<!-- runnable -->`` line in README.md or docs/ is run line by
  line from the repository's root, as a reader would, and every line must exit 0. Such blocks use quick sizes.
- Navigation: mkdocs.yml's nav names every page of docs/ and every generated reference page, and nothing else
  (tests/test_docs_browser.py builds the site with --strict and opens it in a browser).
"""

import fnmatch
import re
import shlex
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The folders a repository path starts with.
TOP = ("kernel", "lib", "apps", "tools", "tests", "docs", "include", "linker")
PATH_RE = re.compile(r"(?<![\w./~$-])(?:\.\./shared/[\w./-]*|(?:%s)/[\w.*\[\]/-]*[\w*\]/])" % "|".join(TOP))
#: Paths named that are not this repository's, with why.
EXTERNAL = {"include/qemu/qemu-plugin.h": "QEMU's own plugin header, which tools/model/qemu_api.h stands in for"}
#: Source files whose paths are checked (README.md and docs/ are, too).
SOURCE = re.compile(r"(\.(c|h|S|py|sh|mk|ld|toml|scn|conf)|/Makefile|^Makefile|/LAYERS[.\w]*|tools/schedlab)$")
#: The pages the site generates (tools/docs/reference.py, make docs), which docs/ does not hold.
GENERATED = {f"reference/{n}.md" for n in ("scenario-keys", "policy-options", "apps", "results", "profiles", "cli")}
RUNNABLE = "<!-- runnable -->"


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return out.split()


def documents(files) -> list[str]:
    """README.md, docs/'s pages and the source files whose named paths must exist (this file names stale
    ones on purpose, to test the check)."""
    return [f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))
            or (SOURCE.search(f) and not f.startswith("tests/data/") and f != "tests/test_docs.py")]


def named_paths(text: str):
    """(line number, path) for each repository path the text names, placeholders left out."""
    for n, line in enumerate(text.splitlines(), 1):
        for m in PATH_RE.finditer(line):
            path, after = m.group(0).rstrip("."), line[m.end():m.end() + 1]
            if after in ("$", "<", "{", "%") or "[" in path and "]" not in path:
                continue
            yield n, path


def history() -> set[str]:
    """Every path a commit of the repository has touched."""
    out = subprocess.run(["git", "log", "--format=", "--name-only"], cwd=REPO, capture_output=True, text=True)
    return set(out.stdout.split())


def moved(files: list[str]) -> set[str]:
    """The file names the tree has anywhere (a note's old path of a file since moved, in a shallow clone too)."""
    return {Path(f).name for f in files}


def exists(path: str, files: list[str], make=False) -> bool:
    if path.startswith("../shared/"):
        return False                    # outside the repository: the contracts are docs/design.md
    parts = [p for p in path.split("/") if p]
    if any(re.fullmatch(r"[A-Z][A-Z_]*", p.split(".")[0]) and not (REPO / path).exists() for p in parts):
        return True                     # NAME, PREFIX: a placeholder
    if any(c in path for c in "*?["):
        return make or any(fnmatch.fnmatch(f, path.rstrip("/")) or fnmatch.fnmatch(f, path.rstrip("/") + "/*")
                   for f in files)
    return (REPO / path).exists() or (REPO / (path + ".c")).exists() or path in EXTERNAL


def bases(name: str, text: str, named: list[str]) -> list[Path]:
    """The folders a path in the file may be relative to: the file's own and every folder it names."""
    folders = {Path(name).parent, *(Path(p if p.endswith("/") else Path(p).parent) for p in named)}
    return [REPO / d for f in folders for d in (f, *f.parents) if (REPO / d).is_dir()]


def examples(text: str) -> set[str]:
    """The files a page's own example blocks hold: a block whose header comment opens '<file> - '."""
    return set(re.findall(r"^```\w*\n(?:/\*\n)?\s*[*#/]*\s*([\w./-]+\.\w+) - ", text, re.M))


def stale_in(name: str, files: list[str], old: set[str]) -> list[str]:
    text = (REPO / name).read_text(errors="replace")
    found = list(named_paths(text))
    near = bases(name, text, [p for _, p in found])
    made = {Path(e).name for e in examples(text)}
    return [f"{name}:{n}: {p}" for n, p in found
            if not exists(p, files, make=name.endswith((".mk", "Makefile")))
            and not any((b / p).exists() for b in near) and Path(p).name not in made
            and not (name.startswith("docs/notes/") and (p in old or Path(p).name in moved(files)))]


def test_every_path_named_exists():
    files, old = tracked(), history()
    stale = [line for f in documents(files) if (REPO / f).is_file() for line in stale_in(f, files, old)]
    assert not stale, "paths named that do not exist (moved? fix the reference):\n" + "\n".join(stale)


def test_the_path_check_sees_what_it_must():
    """The checker itself: a moved header is caught, patterns and placeholders are not paths."""
    files = tracked()
    found = [p for _, p in named_paths("see `lib/wait.h` and lib/threads/uthread.h, apps/<name>.c, "
                                       "lib/platform/host_uctx_$(ARCH).S, tools/scenarios/NAME.scn, ../shared/DESIGN.md")]
    assert found == ["lib/wait.h", "lib/threads/uthread.h", "tools/scenarios/NAME.scn", "../shared/DESIGN.md"]
    assert [exists(p, files) for p in found] == [False, True, True, False]
    assert exists("kernel/sched/*.c", files) and not exists("kernel/sched/nothing*.c", files)


def runnable_blocks():
    """(file, line, command) for every line of every fenced block marked runnable."""
    for f in ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]:
        lines = (REPO / f).read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip() != RUNNABLE:
                continue
            assert i + 1 < len(lines) and lines[i + 1].startswith("```"), f"{f}:{i + 1}: {RUNNABLE} before no block"
            for j in range(i + 2, len(lines)):
                if lines[j].startswith("```"):
                    break
                command = lines[j].split(" #")[0].strip()
                if command:
                    yield f, j + 1, command


@pytest.mark.qemu
@pytest.mark.parametrize("where,line,command", list(runnable_blocks()),
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_runnable_block_runs(where, line, command):
    result = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (f"{where}:{line}: `{command}` exited {result.returncode}\n"
                                    f"{result.stdout[-2000:]}\n{result.stderr[-2000:]}")


def test_some_blocks_are_runnable():
    blocks = list(runnable_blocks())
    assert len(blocks) >= 3 and all(shlex.split(c) for _, _, c in blocks)


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav names (its `- Title: page.md` lines)."""
    text = (REPO / "mkdocs.yml").read_text().split("\nnav:", 1)[1]
    return re.findall(r"^\s+- (?:\"[^\"]*\"|[^:\n]+):\s+(\S+\.md)\s*$", text, re.M)


def test_the_navigation_lists_every_page():
    pages = nav_pages()
    assert len(pages) == len(set(pages)), "a page twice in the nav"
    on_disk = {str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md")}
    assert sorted(on_disk - set(pages)) == [], "pages under docs/ missing from mkdocs.yml's nav"
    assert sorted(set(pages) - on_disk - GENERATED) == [], "nav entries with no page (docs/ or generated)"
    assert GENERATED <= set(pages), "a generated reference page missing from the nav"
