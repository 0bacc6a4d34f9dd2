"""A deterministic boot's device tree: QEMU's own for the machine booted, less the nodes nothing reads.

Under ``-icount`` every instruction is host time. A firmware that looks its drivers up in the flattened device tree
(OpenSBI: libfdt walks the whole tree for each compatible string it matches) pays for every node, and so does a
walk of the tree (the kernel's, and the deterministic boots' firmware's, kernel/fdt.c and firmware/fw.c). QEMU's
``virt`` machine describes eight virtio-mmio transports, a PCIe host, flash, fw_cfg, an RTC, the platform bus and
a cpu-map, none of which either uses (kernel/fdt.c reads /cpus, /memory, /chosen, /reserved-memory and the
ACLINT's or CLINT's per-hart registers). ``trimmed(argv)`` asks the same QEMU for the tree of the same
machine (``-machine ...,dumpdtb=``: the same -smp, -m and -numa options, no kernel), drops those nodes
(``prune``) and keeps the result under build/dtb/, named by what it was made from; a deterministic boot passes it
with ``-dtb`` (QEMU still writes the bootargs into /chosen). Timed boots keep QEMU's own tree: their host time is
what they measure, and the kernel sees the same machine either way.

The format (the Devicetree Specification, ch. 5): a 40-byte big-endian header, the memory reservation block, the
structure block - tokens BEGIN_NODE name, END_NODE, PROP len nameoff value, NOP, END, each 4-byte aligned - and the
strings block. ``prune`` rewrites the structure block without the dropped nodes' token ranges and lays the blocks
out again; everything else is copied as it was.
"""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

MAGIC = 0xD00DFEED
BEGIN_NODE, END_NODE, PROP, NOP, END = 1, 2, 3, 4, 9
#: Node names (a prefix up to the unit address) no one reads on this machine.
UNUSED = ("virtio_mmio@", "pci@", "flash@", "platform-bus@", "fw-cfg@", "rtc@", "cpu-map")
#: Room left after the blocks: QEMU adds /chosen/bootargs (the scenario) to the tree it loads. Longer bootargs (a
#: batch of scenarios) get room for them and SLACK more (``slack``).
SLACK = 8192
HEADER = struct.Struct(">10I")   # magic totalsize off_struct off_strings off_rsvmap version last_comp boot_cpu
#                                  size_strings size_struct



def dtb_dir() -> Path:
    """Where trimmed trees are kept: $SCHEDLAB_DTB_DIR, else build/dtb of the checkout the harness works in."""
    from .qemu import REPO_ROOT     # qemu.py imports this module
    return Path(os.environ.get("SCHEDLAB_DTB_DIR") or REPO_ROOT / "build" / "dtb")


class TreeError(ValueError):
    """Not a flattened device tree this module can rewrite."""


def _align(n: int, to: int = 4) -> int:
    return (n + to - 1) & ~(to - 1)


def _node_tokens(block: bytes):
    """(start, end, token, name) for each token of a structure block; name only for BEGIN_NODE."""
    i = 0
    while i < len(block):
        if i + 4 > len(block):
            raise TreeError("the structure block ends inside a token")
        token, start, name = struct.unpack_from(">I", block, i)[0], i, None
        i += 4
        if token == BEGIN_NODE:
            nul = block.find(b"\0", i)
            if nul < 0:
                raise TreeError("a node name without its NUL")
            name, i = block[i:nul].decode("ascii", "replace"), _align(nul + 1)
        elif token == PROP:
            (length,) = struct.unpack_from(">I", block, i)
            i = _align(i + 8 + length)
        elif token not in (END_NODE, NOP, END):
            raise TreeError(f"unknown token {token:#x} at offset {start}")
        yield start, i, token, name
        if token == END:
            return


def slack(bootargs: str) -> int:
    """The room a tree needs for these bootargs: SLACK, or more in whole 4 KiB for a long batch."""
    need = len(bootargs.encode()) + 1 + 1024       # the string, its NUL, the property's header and then some
    return SLACK if need <= SLACK else SLACK + _align(need, 4096)


def prune(blob: bytes, unused: tuple[str, ...] = UNUSED, room: int = SLACK) -> bytes:
    """The tree ``blob`` without the nodes whose name starts with one of ``unused`` (their subnodes with them)."""
    if len(blob) < HEADER.size:
        raise TreeError("shorter than a device tree header")
    (magic, _total, off_struct, off_strings, off_rsv, version, last_comp, boot_cpu, size_strings,
     size_struct) = HEADER.unpack_from(blob)
    if magic != MAGIC or version < 17:
        raise TreeError(f"not a version-17 flattened device tree (magic {magic:#x}, version {version})")
    kept, skipping = bytearray(), 0
    for start, end, token, name in _node_tokens(blob[off_struct:off_struct + size_struct]):
        if token == BEGIN_NODE and (skipping or name.startswith(unused)):
            skipping += 1
        elif token == END_NODE and skipping:
            skipping -= 1
        elif not skipping:
            kept += blob[off_struct + start:off_struct + end]
    rsv_end = off_rsv
    while struct.unpack_from(">QQ", blob, rsv_end) != (0, 0):   # the block ends with an all-zero entry
        rsv_end += 16
    rsvmap, strings = blob[off_rsv:rsv_end + 16], blob[off_strings:off_strings + size_strings]
    new_rsv = _align(HEADER.size, 8)
    new_struct = new_rsv + len(rsvmap)
    new_strings = new_struct + len(kept)
    total = _align(new_strings + len(strings)) + room
    out = bytearray(total)
    HEADER.pack_into(out, 0, MAGIC, total, new_struct, new_strings, new_rsv, version, last_comp, boot_cpu,
                     len(strings), len(kept))
    out[new_rsv:new_struct], out[new_struct:new_strings] = rsvmap, kept
    out[new_strings:new_strings + len(strings)] = strings
    return bytes(out)


def node_names(blob: bytes) -> list[str]:
    """Every node's name, in order (the root's is empty)."""
    header = HEADER.unpack_from(blob)
    off_struct, size_struct = header[2], header[9]
    return [name for _s, _e, token, name in _node_tokens(blob[off_struct:off_struct + size_struct])
            if token == BEGIN_NODE]


def machine_args(argv: list[str]) -> list[str]:
    """The options of a boot's QEMU command line that shape the machine's device tree: the command with its
    kernel, firmware, plugin, bootargs, deterministic-mode and tree options left out."""
    out, i = [], 0
    drop_with_value = {"-kernel", "-bios", "-append", "-plugin", "-icount", "-accel", "-dtb", "-D", "-d"}
    while i < len(argv):
        if argv[i] in drop_with_value:
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def _identity(binary: str) -> str:
    """What the tree depends on besides the options: the QEMU binary, by path, size and time."""
    from shutil import which
    path = which(binary) or binary
    try:
        st = os.stat(path)
        return f"{path}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return path


def trimmed(argv: list[str]) -> Path | None:
    """A pruned copy of the tree QEMU builds for the machine of ``argv`` (a boot's full command), made once and
    kept under dtb_dir(); None if this QEMU cannot dump one (then the boot keeps QEMU's own)."""
    args = machine_args(argv)
    try:
        m = args.index("-machine")
    except ValueError:
        return None
    room = slack(argv[argv.index("-append") + 1]) if "-append" in argv[:-1] else SLACK
    made_of = [_identity(args[0]), *args[1:], ",".join(UNUSED), str(room)]
    key = hashlib.sha256("\0".join(made_of).encode()).hexdigest()[:16]
    where = dtb_dir()
    path = where / f"{key}.dtb"
    if path.is_file():
        return path
    where.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        raw = Path(tmp) / "qemu.dtb"
        dump = [*args[:m + 1], f"{args[m + 1]},dumpdtb={raw}", *args[m + 2:]]
        try:
            subprocess.run(dump, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
            tree = prune(raw.read_bytes(), room=room)
        except (OSError, subprocess.TimeoutExpired, TreeError):
            return None
        part = Path(tmp) / "trimmed.dtb"
        part.write_bytes(tree)
        os.replace(part, path)    # atomic: boots side by side may make it at once
    return path


def main(argv: list[str] | None = None) -> int:
    """``python3 -m schedlab.devtree QEMU-ARGS...``: print the trimmed tree's path for that machine (make qemu
    DETERMINISTIC=1 passes it as the harness does), or nothing if this QEMU cannot dump one."""
    path = trimmed(list(sys.argv[1:] if argv is None else argv))
    if path:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
