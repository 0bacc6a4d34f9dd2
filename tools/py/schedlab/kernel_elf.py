"""The policies built into a kernel ELF, read without booting it: so ``compare`` and ``sweep`` can refuse a
misspelt ``--policies`` name before any boot.

Each policy registers itself with ``SCHED_CLASS`` (kernel/sched/sched.h), which puts a pointer to its
``struct sched_class`` in the ``.sched_classes`` section; the struct's first field is ``const char *name``.
So: the section's 64-bit pointers, each to a struct whose first word points to the name.  Anything that does
not fit (another format, a position-independent binary whose pointers are filled in at load time, a section
missing) gives None, and the kernel's own parser judges the names at the first boot, as before.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

_NAME = re.compile(rb"[a-z][a-z0-9_]{0,14}\Z")     # the scenario parser's policy names: <= 15 bytes
_SHT_NOBITS = 8


def _sections(data: bytes) -> dict[str, tuple[int, int, int, int]] | None:
    """name -> (type, address, file offset, size) of every section of a little-endian ELF64."""
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        return None
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    names = data[strtab[4]:strtab[4] + strtab[5]]
    out = {}
    for name, kind, _flags, addr, offset, size in headers:
        end = names.find(b"\0", name)
        out[names[name:end].decode("ascii", "replace")] = (kind, addr, offset, size)
    return out


def _read(data: bytes, sections, addr: int, size: int) -> bytes | None:
    """Up to ``size`` bytes at virtual address ``addr`` (fewer at the end of its section), from the file."""
    for kind, base, offset, length in sections.values():
        if kind != _SHT_NOBITS and base and base <= addr < base + length:
            start = offset + addr - base
            return data[start:start + min(size, base + length - addr)]
    return None


def policies(path: str | Path) -> list[str] | None:
    """The policy names in the kernel ELF at ``path`` (in section order), or None when they cannot be read."""
    try:
        data = Path(path).read_bytes()
        sections = _sections(data)
        if not sections or ".sched_classes" not in sections:
            return None
        _, _, offset, size = sections[".sched_classes"]
        names = []
        for (cls,) in struct.iter_unpack("<Q", data[offset:offset + size - size % 8]):
            pointer = _read(data, sections, cls, 8)
            text = _read(data, sections, struct.unpack("<Q", pointer)[0], 16) if pointer and len(pointer) == 8 \
                else None
            name = text.split(b"\0", 1)[0] if text and b"\0" in text else None
            if name is None or not _NAME.match(name):
                return None
            names.append(name.decode())
        return names or None
    except (OSError, struct.error, ValueError):
        return None
