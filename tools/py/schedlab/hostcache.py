"""Per-host measurements kept in a small JSON file: the first ``keep`` values of each key, after which the
reference stays put (busy.py's quiet calibration cards, pace.py's capacity probes). A file that cannot be read
is empty; one that cannot be written (a read-only tree) only costs measuring again."""

from __future__ import annotations

import json
from pathlib import Path


def load(path: Path) -> dict:
    """key -> the values kept, or {} when the file is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def keep_first(path: Path, key: str, value, keep: int) -> None:
    """Add ``value`` to ``key``'s list while it holds fewer than ``keep``."""
    data = load(path)
    kept = data.setdefault(key, [])
    if len(kept) >= keep:
        return
    kept.append(value)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(data, indent=1) + "\n")
    except OSError:
        pass
