"""Scenario files and command-line scenarios.

A scenario is the kernel's bootargs: space-separated tokens (``policy=gang``,
``job=gauss:n=256,procs=2``...).  The harness does not check tokens - the
kernel does, and answers a bad one with an ``ERROR`` line - it only collects
them.

A scenario file (``tools/scenarios/<name>.scn``, or any path) holds tokens
over any number of lines; ``#`` starts a comment.  Comment lines of the form
``# <directive>: <value>`` *before the first token* are header directives:

    # cpus: 2        default --cpus for this scenario
    # repeat: 5      default --repeat for this scenario

A known directive after the first token is an error naming its line (it would otherwise be silently
ignored: move it to the top).  Other comments are free text.  On the command line, a positional argument
containing ``=`` is a token and one without is a scenario reference (a path,
or a name under tools/scenarios with or without ``.scn``); at most one
reference, and tokens given after it are appended to the file's tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .qemu import REPO_ROOT, HarnessError

SCENARIO_DIR = REPO_ROOT / "tools" / "scenarios"
SUFFIX = ".scn"
_DIRECTIVE = re.compile(r"#\s*([A-Za-z][\w-]*)\s*:\s*(\S.*?)\s*\Z")
#: Header directives a scenario file may set, with their value types.
DIRECTIVES = {"cpus": int, "repeat": int}


@dataclass
class Scenario:
    """Tokens to pass as bootargs, plus defaults from a file's header."""

    tokens: list[str] = field(default_factory=list)
    cpus: int | None = None
    repeat: int | None = None
    source: Path | None = None

    @property
    def bootargs(self) -> str:
        return " ".join(self.tokens)


def parse_scenario_text(text: str, source: Path | None = None) -> Scenario:
    """Parse the contents of a scenario file."""
    scenario = Scenario(source=source)
    in_header = True
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"{source}:{number}" if source else f"line {number}"
        if line.startswith("#"):
            match = _DIRECTIVE.match(line)
            if match and match.group(1).lower() in DIRECTIVES and not in_header:
                raise HarnessError(f"{where}: directive '{match.group(1).lower()}' after the first token: header "
                                   "directives (# cpus:, # repeat:) must come before any token; move it to the top")
            if match and match.group(1).lower() in DIRECTIVES:
                name, value = match.group(1).lower(), match.group(2)
                try:
                    setattr(scenario, name, DIRECTIVES[name](value))
                except ValueError:
                    raise HarnessError(f"{where}: directive '{name}' expects a number, got '{value}'")
            continue
        tokens = line.split("#", 1)[0].split()
        if tokens:
            in_header = False
            scenario.tokens.extend(tokens)
    return scenario


def resolve_scenario(ref: str) -> Path:
    """Find a scenario file: an existing path, else a name under ``SCENARIO_DIR``."""
    candidates = [Path(ref)]
    if "/" not in ref:
        candidates += [SCENARIO_DIR / ref, SCENARIO_DIR / (ref + SUFFIX)]
    for path in candidates:
        if path.is_file():
            return path
    known = ", ".join(sorted(p.stem for p in SCENARIO_DIR.glob("*" + SUFFIX))) or "none"
    raise HarnessError(f"scenario '{ref}' not found (a path, or one of: {known})")


def load_scenario(ref: str) -> Scenario:
    path = resolve_scenario(ref)
    return parse_scenario_text(path.read_text(), source=path)


def scenario_from_args(args: list[str], default_tokens: list[str] | None = None) -> Scenario:
    """Build the scenario from positional arguments (tokens and/or one file reference). A batch of scenarios
    (``then`` between them, quoted or not: kernel/batch.c) is taken as its tokens, each scenario's settings
    checked on their own."""
    from .inputs import single_settings
    from .qemu import BATCH_WORD, batch_scenarios
    words = [w for a in args for w in a.split()]
    if BATCH_WORD in words:
        if any("=" not in w for w in words if w != BATCH_WORD):
            raise HarnessError(f"a batch of scenarios ({BATCH_WORD} between them) takes key=value tokens only, "
                               f"not scenario files: {' '.join(w for w in words if '=' not in w and w != BATCH_WORD)}")
        for scenario in batch_scenarios(" ".join(words)):
            single_settings(scenario.split())
        return Scenario(tokens=words)
    refs = [a for a in args if "=" not in a]
    tokens = [a for a in args if "=" in a]
    single_settings(tokens)         # on one command line a setting given twice is a slip, not an override
    if len(refs) > 1:
        raise HarnessError(f"more than one scenario file given ({', '.join(refs)}); "
                           f"tokens must look like key=value")
    if refs:
        scenario = load_scenario(refs[0])
        scenario.tokens.extend(tokens)
        return scenario
    if not tokens and default_tokens is not None:
        return Scenario(tokens=list(default_tokens))
    return Scenario(tokens=tokens)
