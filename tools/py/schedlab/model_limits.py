"""What a machine-model spec must also satisfy beyond its keys' ranges (model.py): the spec's text, the
profile file's bytes, what QEMU's ``virt`` boots, and what this host's memory holds.
Each check raises ``model.ModelError`` with one line naming the input and what was expected.

* ``check_spec_text``: a spec is ASCII without white space (``l1_kb=３２`` or ``l1_kb=32 `` is not 32).
* ``check_profile_file``: ``tools/model/profiles/<name>.conf`` is a regular file of UTF-8 text whose values
  are ASCII.
* ``check_machine``: the nodes QEMU 7.2's ``virt`` boots (``QEMU_MAX_NODES``; the simulator refuses the same,
  tools/sim/sim_mem.c ``SIM_MAX_NODES``, and a test keeps the two equal) and the caches' host memory
  (``footprint_bytes``, the allocations of tools/model/cache.c ``model_alloc``) against the host's.
* ``check``: all of them for one spec at ``harts`` harts, before anything boots; the parsed Model or None.
"""
from __future__ import annotations

import re

from . import model as _model

#: The most NUMA nodes (sockets) QEMU 7.2's virt boots with the harness's contiguous hart split: a third
#: socket aborts in its PLIC wiring ("Property 'riscv.sifive.plic.unnamed-gpio-out[N]' not found", seen at
#: 3 nodes on 3, 5..9 harts and 4 nodes on 4, 6, 8, 12, 16 harts), and from 5 nodes it refuses outright.
QEMU_MAX_NODES = 2
#: Of the host's available memory, the share one boot's model caches (plus the guest's RAM) may take.
HOST_SHARE = 0.5
#: Bytes per entry of the plugin's tables (tools/model/cache.c): private tags, LLC words, directory words.
TAG_BYTES, LLC_BYTES, DIR_BYTES = 4, 8, 8
_NAME = re.compile(r"[a-z0-9_]+\Z")


def _error(message: str):
    return _model.ModelError(message)


def check_spec_text(spec) -> None:
    """A spec (str or None) is ASCII with no white space anywhere: ``int()`` and ``\\d`` would read
    full-width digits and a trailing space as the number, and the plugin and the kernel would not."""
    if spec is None:
        return
    if not isinstance(spec, str):
        raise _error(f"model {spec!r}: expected a string <profile>[,key=value...], got {type(spec).__name__}")
    bad = next((c for c in spec if not c.isascii() or c.isspace()), None)
    if bad is not None:
        what = "white space" if bad.isspace() else f"the non-ASCII character {bad!r}"
        raise _error(f"model {spec!r}: has {what}: a spec is <profile>[,key=value...] in ASCII with no spaces, "
                     "numbers in the digits 0-9")


def check_profile_file(name: str) -> None:
    """``tools/model/profiles/<name>.conf``, when it exists, is a regular file of UTF-8 text whose values are
    ASCII (a missing one is model.load_profile's to report)."""
    if not _NAME.match(name):
        return
    path = _model.PROFILE_DIR / f"{name}.conf"
    if not path.exists():
        return
    if not path.is_file():
        raise _error(f"model profile {name!r}: {path} is not a regular file (a directory?): a profile is a "
                     "file of 'key = integer   # source' lines")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(f"model profile {name!r}: {path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                     f"{exc.start}): a profile is 'key = integer   # source' lines") from None
    for number, line in enumerate(text.splitlines(), 1):
        value = line.split("#", 1)[0].partition("=")[2].strip()
        if not value.isascii():
            raise _error(f"{path}:{number}: value {value!r} is not ASCII: expected a decimal integer in 0-9")


def _lines(kb: int, line_b: int) -> int:
    return kb * 1024 // line_b


def footprint_bytes(values: dict, harts: int, ram_mb: int) -> int:
    """Host bytes the model's caches and directory take at ``harts`` harts and ``ram_mb`` of guest RAM (as
    tools/model/cache.c allocates them: private tags per hart, one LLC per node with a word per set beside
    its ways, a directory word per line of RAM unless there is no cache at all). A machine without a profile
    (``pace=R`` alone: no cache keys) has none."""
    if "line_b" not in values:
        return 0
    line, nodes = values["line_b"], max(1, min(values["nodes"], harts))
    private = (_lines(values["l1_kb"], line) + _lines(values["l2_kb"], line)) * TAG_BYTES * harts
    llc = 0
    if values["llc_kb"] and values["llc_ways"]:
        sets = _lines(values["llc_kb"], line) // values["llc_ways"]
        llc = sets * (values["llc_ways"] + 1) * LLC_BYTES * nodes
    cached = values["l1_kb"] or values["l2_kb"] or values["llc_kb"]
    directory = (ram_mb << 20) // line * DIR_BYTES if cached else 0
    return private + llc + directory


def available_bytes() -> int | None:
    """The host's available memory (Linux MemAvailable; else physical pages), or None when unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _gb(n: int) -> str:
    return f"{n / (1 << 30):.2f} GB"


def check_machine(values: dict, harts: int, ram_mb: int = 256, host_bytes: int | None = None) -> None:
    """The model (every key of model.KEYS) at ``harts`` harts boots on QEMU's virt and fits this host:
    nodes (after the clamp to the harts) at most QEMU_MAX_NODES, the caches' memory plus the guest's RAM
    within HOST_SHARE of ``host_bytes`` (default: available_bytes())."""
    nodes = min(values.get("nodes", 1), harts)            # no profile (pace=R alone): one node
    if nodes > QEMU_MAX_NODES:
        raise _error(f"model nodes={values['nodes']} at {harts} harts: QEMU 7.2's virt machine boots at most "
                     f"{QEMU_MAX_NODES} NUMA nodes (a third socket aborts QEMU): give nodes=1..{QEMU_MAX_NODES}")
    need = footprint_bytes(values, harts, ram_mb) + (ram_mb << 20)
    host = available_bytes() if host_bytes is None else host_bytes
    if host is not None and need > HOST_SHARE * host:
        raise _error(f"model caches need {_gb(need)} of host memory at {harts} harts (with the guest's {ram_mb} MB), "
                     f"more than {HOST_SHARE:.0%} of the {_gb(host)} this host has available: give smaller "
                     "l1_kb/l2_kb/llc_kb or a larger line_b")


def check(spec, harts: int, ram_mb: int = 256, host_bytes: int | None = None):
    """Every check for ``spec`` (text, or a Model parsed already) at ``harts`` harts: the Model (nodes clamped),
    or None without a model."""
    if not isinstance(spec, _model.Model):
        check_spec_text(spec)
        spec = (spec or "").strip()
        if spec in ("", _model.NONE):
            return None
    model = _model.resolve(spec, harts)
    if model.has_cache:
        check_machine(dict(model.values), harts, ram_mb, host_bytes)
    return model
