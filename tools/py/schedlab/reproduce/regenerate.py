"""Regenerating docs/results.md and results.json from the stored measurements alone (no boot).

Every section registered with ``restates`` rebuilds its rows from its stored data and its declared criteria;
every other row keeps its stored verdict (recomputed when it has a criterion). The header still names the runs
that measured. ``tools/py/schedlab/reproduce`` calls it as ``rejudge``; tests/test_criteria.py checks that the
committed results are what it makes of them.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from . import PAGES, Ctx, _load_sections, render
from ..writers import dumps


def rejudge(out: Path) -> Path:
    path = out / "results.json"
    doc = json.loads(path.read_text())
    sections = _load_sections(doc, restate=True)
    ctx = Ctx(cpus=doc.get("cpus", 2), quick=bool(doc.get("quick")), out=out, progress=lambda m: None)
    shutil.rmtree(ctx.figdir, ignore_errors=True)
    (out / "results.md").write_text(render(sections, ctx, bool(doc.get("reruns")), doc.get("written"),
                                           doc.get("reruns")))
    for write in PAGES:
        write(sections, out)
    path.write_text(dumps({**doc, "sections": [asdict(s) for s in sections]}, indent=1, default=str) + "\n")
    return path
