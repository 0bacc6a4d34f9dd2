"""The machine model (tools/model/README.md): profiles, the spec a user writes, and what a boot under it gets.

A *profile* is ``tools/model/profiles/<name>.conf``: ``key = integer   # source`` lines, one for every key of
``KEYS``. A *spec* is ``<profile>[,key=value...]`` (``MODEL=`` of make, ``--model`` of the harness); ``none``
or nothing means no model. ``parse_spec`` reads and validates one, raising ``ModelError`` with what is wrong
and what is allowed; it is the only reader of a spec's text: a command parses its spec once, where it enters
(the command line, the API, ``executor.qemu_task``), and everything below takes the ``Model`` (``as_model``
passes one through unchanged, so a function that takes "a spec" takes either); ``Model.canonical`` is the spec with every key in ``KEYS`` order, overrides applied, and
``nodes`` clamped to the harts (``Model.for_harts``): the string BOOT echoes and every record carries.

``plan`` is everything a boot under a model adds, the same for make and the harness: the ``-plugin`` argument
(with the addresses of the kernel's ``model_marks``, ``model_calib_loop`` and ``model_calib_loop_end`` from
``riscv64-unknown-elf-nm``), the ``-numa`` options when ``nodes > 1``, and the bootargs ``model=<canonical>``
and ``idle=poll`` (while harts <= host cores, outside deterministic mode). Deterministic mode gets
``charge=off``: its clock counts instructions, so a stall could not be seen anyway.

*Pacing* (tools/model/pace.h): ``pace=R`` (instructions per second per hart) or ``pace=auto`` may end any spec,
and ``pace=R`` alone is a paced machine without caches (profile ``none``). A paced boot's wall time is model
time: every hart runs at most R instructions per wall-second from the kernel's model_pace_start on, and a
cycle of the profile's costs is 1/R. ``pace=auto`` is resolved by the harness (pace.py) to one R per command
before anything boots; ``plan`` takes only a resolved R. Deterministic mode refuses pacing (its clock counts
instructions already).

Run as ``PYTHONPATH=tools/py python3 -m schedlab.model`` it is the Makefile's helper (``check`` and
``qemu``, see ``main``): errors go to stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .qemu import REPO_ROOT, HarnessError
from . import model_limits

PROFILE_DIR = REPO_ROOT / "tools" / "model" / "profiles"
DEFAULT_PLUGIN = REPO_ROOT / "build" / "model" / "model.so"
DEFAULT_NM = "riscv64-unknown-elf-nm"
NONE = "none"
#: The pace a spec may end with (tools/model/pace.h PACE_RATE_MIN/MAX): instructions per second per hart.
PACE_RANGE = (1000, 10_000_000_000)
#: lead=<us>, only with pace: how far a hart may run ahead of the wall clock before it sleeps (pace.h's lead;
#: the plugin's default 200 us when not given). Smaller: less jitter on cross-hart events, more sleeps.
LEAD_RANGE = (10, 10_000)
AUTO = "auto"

#: Every key of a profile, in the canonical order (tools/model/README.md's table), with its allowed range.
KEYS = ("line_b", "l1_kb", "l1_ways", "l2_kb", "l2_ways", "llc_kb", "llc_ways",
        "l2_cycles", "llc_cycles", "coh_cycles", "mem_cycles", "remote_cycles", "nodes")
_MAX_KB = 1 << 20          # 1 GB: more cache than any guest has memory
_MAX_CYCLES = 100000
LIMITS = {"line_b": (16, 1024), "nodes": (1, 64),
          **{f"{level}_kb": (0, _MAX_KB) for level in ("l1", "l2", "llc")},
          **{f"{level}_ways": (0, 64) for level in ("l1", "l2", "llc")},
          **{key: (0, _MAX_CYCLES) for key in KEYS if key.endswith("_cycles")}}
LEVELS = ("l1", "l2", "llc")
#: The kernel symbols the plugin is given (include/schedlab/model.h, kernel/model.c, kernel/calib_loops.S).
SYMBOLS = {"marks": "model_marks", "calib_lo": "model_calib_loop", "calib_hi": "model_calib_loop_end",
           "pace_at": "model_pace_start"}
#: The function whose stores are the job marks (kernel/model.c): a paced machine without caches watches only it.
MARK_FUNCTION = "trace_model_rec"
#: The kernel's room for model=<spec> (kernel/scenario.h SCEN_MODEL_LEN, with its terminating NUL).
KERNEL_SPEC_MAX = 255

_NAME = re.compile(r"[a-z0-9_]+\Z")
_INT = re.compile(r"\d+\Z")
_LINE = re.compile(r"\s*([a-z0-9_]+)\s*=\s*(\S+)\s*(#.*)?\Z")


class ModelError(HarnessError):
    """A spec, profile or kernel the model cannot use: the message names it and what is allowed."""


@dataclass(frozen=True)
class Model:
    """A validated profile with its overrides: ``values`` holds every key of ``KEYS`` (none for profile
    ``none``, the paced machine without caches); ``pace`` is R, ``auto`` (not resolved yet) or 0 (unpaced)."""

    profile: str
    values: tuple[tuple[str, int], ...]
    pace: int | str = 0
    lead: int = 0                           # lead=<us> with pace; 0: the plugin's default

    def __getitem__(self, key: str) -> int:
        values = dict(self.values)
        return values.get(key, 1) if key == "nodes" else values[key]

    @property
    def has_cache(self) -> bool:
        return self.profile != NONE

    def for_harts(self, harts: int) -> "Model":
        """The model as a boot of ``harts`` harts runs it: ``nodes`` clamped to the harts."""
        return self.replace(nodes=min(self["nodes"], harts)) if self.has_cache else self

    def replace(self, **changes: int) -> "Model":
        return Model(self.profile, tuple((k, changes.get(k, v)) for k, v in self.values), self.pace, self.lead)

    def with_pace(self, pace: int | str) -> "Model":
        return Model(self.profile, self.values, pace, self.lead if pace else 0)

    @property
    def canonical(self) -> str:
        parts = [self.profile, *(f"{k}={v}" for k, v in self.values)] if self.has_cache else []
        paced = [f"pace={self.pace}"] + ([f"lead={self.lead}"] if self.lead else []) if self.pace else []
        return ",".join(parts + paced)

    @property
    def memory_spec(self) -> str:
        """The canonical spec without pace (the simulator's: its time is model time already), or none."""
        return self.with_pace(0).canonical if self.has_cache else NONE


# ---------------------------------------------------------------- profiles

def profiles() -> list[str]:
    """The profile names, from the files in tools/model/profiles (sorted)."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.conf") if _NAME.match(p.stem))


def _allowed_profiles() -> str:
    names = profiles()
    return ", ".join(names) if names else f"none ({PROFILE_DIR} has no <name>.conf)"


def load_profile(name: str) -> dict[str, int]:
    """The values of profile ``name`` (every key of KEYS, validated); ModelError if unknown or malformed."""
    path = PROFILE_DIR / f"{name}.conf"
    model_limits.check_profile_file(name)
    if not _NAME.match(name) or not path.is_file():
        raise ModelError(f"unknown model profile {name!r}: the profiles are {_allowed_profiles()} "
                         f"(tools/model/profiles/<name>.conf), or none")
    values: dict[str, int] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        where = f"{_shown(path)}:{number}"
        if not match:
            raise ModelError(f"{where}: expected 'key = integer   # source', got {line.strip()!r}")
        key, value, _ = match.groups()
        if key not in KEYS:
            raise ModelError(f"{where}: unknown key {key!r}: the keys are {', '.join(KEYS)}")
        if key in values:
            raise ModelError(f"{where}: {key} is given twice")
        values[key] = _integer(key, value, where)
    missing = [k for k in KEYS if k not in values]
    if missing:
        raise ModelError(f"{_shown(path)}: missing {', '.join(missing)} (a profile sets every key)")
    return values


def _shown(path: Path) -> str:
    """path relative to the checkout when it lies inside it, else as it is (PROFILE_DIR may lie elsewhere)."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT.resolve()))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- specs

def _integer(key: str, text: str, where: str) -> int:
    if not _INT.match(text):
        raise ModelError(f"{where}: {key}={text} is not a non-negative decimal integer")
    value = int(text)
    low, high = LIMITS[key]
    if not low <= value <= high:
        raise ModelError(f"{where}: {key}={value} is out of range: {key} takes {low}..{high}")
    return value


def _pace(text: str, where: str) -> int | str:
    """pace=R or pace=auto."""
    if text == AUTO:
        return AUTO
    low, high = PACE_RANGE
    if not _INT.match(text) or not low <= int(text) <= high:
        raise ModelError(f"{where}: pace={text} is not a pace: pace takes auto or {low}..{high} instructions "
                         "per second per hart (e.g. pace=10000000)")
    return int(text)


def _lead(text: str, where: str) -> int:
    low, high = LEAD_RANGE
    if not _INT.match(text) or not low <= int(text) <= high:
        raise ModelError(f"{where}: lead={text} is out of range: lead takes {low}..{high} microseconds")
    return int(text)


def _validate(values: dict[str, int], where: str) -> dict[str, int]:
    """The values with absent levels' ways set to 0; ModelError for an impossible cache."""
    line = values["line_b"]
    if line & (line - 1):
        raise ModelError(f"{where}: line_b={line} is not a power of two (16, 32, ..., 1024)")
    for level in LEVELS:
        kb, ways = values[f"{level}_kb"], values[f"{level}_ways"]
        if kb == 0:
            values[f"{level}_ways"] = 0          # no such level: its ways mean nothing
            continue
        if ways == 0:
            raise ModelError(f"{where}: {level}_kb={kb} needs {level}_ways >= 1 (1 = direct mapped)")
        if (kb * 1024) % (ways * line):
            raise ModelError(f"{where}: {level}_kb={kb} with {level}_ways={ways} and line_b={line} is not a "
                             f"whole number of sets ({kb} KB / ({ways} x {line} B))")
    if values["l2_kb"] and not values["l1_kb"]:
        raise ModelError(f"{where}: l2_kb={values['l2_kb']} without a first level (l1_kb=0): "
                         "a second level needs a first")
    return values


def parse_spec(spec: str | None) -> Model | None:
    """``<profile>[,key=value...]`` -> Model; None for ``none`` or nothing. ModelError names what is wrong."""
    model_limits.check_spec_text(spec.strip() if isinstance(spec, str) else spec)   # around it: make's MODEL=
    text = (spec or "").strip()
    if text in ("", NONE):
        return None
    where = f"model {text!r}"
    name, *items = text.split(",")
    if "=" in name:                        # pace=R alone: the paced machine without caches
        name, items = NONE, [name, *items]
    values = load_profile(name) if name != NONE else {}
    given: set[str] = set()
    pace: int | str = 0
    lead = 0
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ModelError(f"{where}: expected key=value after the profile, got {item!r} "
                             f"(e.g. {name},l2_kb=512)")
        if key in given:
            raise ModelError(f"{where}: {key} is given twice")
        given.add(key)
        if key == "pace":
            pace = _pace(value, where)
        elif key == "lead":
            lead = _lead(value, where)
        elif name == NONE:
            raise ModelError(f"{where}: {key}= needs a profile: a machine without one has only pace=R "
                             f"(e.g. {_allowed_profiles().split(',')[0]},{item})")
        elif key not in KEYS:
            raise ModelError(f"{where}: unknown key {key!r}: the keys are {', '.join(KEYS)}, pace, lead")
        else:
            values[key] = _integer(key, value, where)
    if name == NONE and not pace:
        raise ModelError(f"{where}: a model without a profile is a paced machine: give pace=R "
                         "(instructions per second per hart) or pace=auto")
    if lead and not pace:
        raise ModelError(f"{where}: lead= is the pacing's lead: it needs pace=R or pace=auto")
    values = _validate(values, where) if values else values
    model = Model(name, tuple((k, values[k]) for k in KEYS if k in values), pace, lead)
    if len(model.canonical) > KERNEL_SPEC_MAX:
        raise ModelError(f"{where}: the canonical spec is {len(model.canonical)} characters; the kernel takes "
                         f"{KERNEL_SPEC_MAX}")
    return model


def as_model(value: "str | Model | None") -> Model | None:
    """A spec as a Model: a Model as it is, text parsed (``parse_spec``), None or ``none`` as None."""
    return value if isinstance(value, Model) else parse_spec(value)


def resolve(spec: "str | Model | None", harts: int) -> Model | None:
    """The model a boot of ``harts`` harts runs under (nodes clamped), or None."""
    model = as_model(spec)
    return model.for_harts(harts) if model else None


def canonical(spec: "str | Model | None", harts: int) -> str:
    """The canonical spec for ``harts`` harts, or ``none``."""
    model = resolve(spec, harts)
    return model.canonical if model else NONE


def memory_spec(spec: "str | Model | None", harts: int) -> str:
    """The simulator's spec for ``spec``: its memory model without pace (the simulator's clock is model time
    already), or ``none`` (no spec, or a paced machine without caches)."""
    model = resolve(spec, harts)
    return model.memory_spec if model else NONE


def check_same(runs, what: str) -> str:
    """``runs``: (label, canonical spec) pairs. The one model they share; ModelError naming both sides when
    they differ: numbers made under different machine models are never compared or merged."""
    seen: dict[str, list[str]] = {}
    for label, spec in runs:
        seen.setdefault(spec or NONE, []).append(str(label))
    if len(seen) > 1:
        sides = [f"model={spec} ({', '.join(labels[:3])}{', ...' if len(labels) > 3 else ''})"
                 for spec, labels in seen.items()]
        raise ModelError(f"cannot {what} records made under different machine models: {' and '.join(sides)}; "
                         "run each model on its own")
    return next(iter(seen), NONE)


# ---------------------------------------------------------------- a boot under the model

def mem_mb(mem: str | int) -> int:
    """QEMU's -m value (``256M``, ``1G``, ``512``: MB by default) in MB."""
    text = str(mem).strip().upper()
    match = re.fullmatch(r"(\d+)([MG]?)B?", text)
    if not match:
        raise ModelError(f"memory size {mem!r}: expected <n>M or <n>G")
    return int(match.group(1)) * (1024 if match.group(2) == "G" else 1)


def kernel_symbols(kernel: str | os.PathLike, nm: str | None = None) -> dict[str, int]:
    """The plugin's addresses (SYMBOLS' arguments, and mark_lo/mark_hi: MARK_FUNCTION's code) from the kernel
    ELF's symbol table - read once per kernel file as it is now (a campaign boots the same kernel thousands of
    times)."""
    tool = nm or os.environ.get("SCHEDLAB_NM") or DEFAULT_NM
    try:
        st = os.stat(kernel)
    except OSError:
        return _kernel_symbols(kernel, tool)     # its own error message
    return dict(_kernel_symbols_of(os.path.realpath(kernel), st.st_mtime_ns, st.st_size, tool))


@functools.lru_cache(maxsize=8)
def _kernel_symbols_of(path: str, _mtime_ns: int, _size: int, tool: str) -> dict[str, int]:
    return _kernel_symbols(path, tool)


def _kernel_symbols(kernel: str | os.PathLike, tool: str) -> dict[str, int]:
    try:
        out = subprocess.run([*shlex.split(tool), "-S", str(kernel)], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise ModelError(f"{tool} not found: it reads the kernel's symbols for the model "
                         "(install the RISC-V toolchain: make deps, or set SCHEDLAB_NM)") from None
    if out.returncode != 0:
        raise ModelError(f"{tool} {kernel} failed: {out.stderr.strip() or f'exit {out.returncode}'}")
    table, sizes = {}, {}
    for line in out.stdout.splitlines():
        words = line.split()
        if len(words) in (3, 4):               # address [size] type name
            table[words[-1]] = words[0]
            if len(words) == 4:
                sizes[words[-1]] = int(words[1], 16)
    missing = [s for s in [*SYMBOLS.values(), MARK_FUNCTION] if s not in table]
    if missing:
        raise ModelError(f"{kernel} has no {', '.join(missing)}: the kernel predates the machine model or its "
                         "pacing (kernel/model.c); rebuild it with make from a tree that has it")
    symbols = {arg: int(table[symbol], 16) for arg, symbol in SYMBOLS.items()}
    symbols["mark_lo"] = int(table[MARK_FUNCTION], 16)
    symbols["mark_hi"] = symbols["mark_lo"] + sizes.get(MARK_FUNCTION, 0)
    return symbols


def plugin_path() -> Path:
    return Path(os.environ.get("SCHEDLAB_MODEL_PLUGIN") or DEFAULT_PLUGIN)


def plugin_arg(model: Model, harts: int, ram: int, symbols: dict[str, int], charge: bool,
               plugin: str | os.PathLike) -> str:
    """The -plugin value: the .so (QEMU option commas doubled), then the profile, every key, the machine and
    the addresses (tools/model/README.md)."""
    parts = [str(plugin).replace(",", ",,"), f"profile={model.profile}",
             *(f"{k}={v}" for k, v in model.values), f"harts={harts}", f"ram_mb={ram}",
             *(f"{arg}=0x{symbols[arg]:x}" for arg in [*SYMBOLS, "mark_lo", "mark_hi"]),
             f"charge={'on' if charge else 'off'}"]
    if model.pace:
        parts.append(f"pace={model.pace}")
    if model.lead:
        parts.append(f"pace_lead_us={model.lead}")
    return ",".join(parts)


def numa_args(nodes: int, harts: int, ram: int) -> list[str]:
    """QEMU's -numa options for ``nodes`` nodes: memory split evenly, harts split contiguously (node n has
    harts n*harts/nodes .. (n+1)*harts/nodes - 1). None for one node."""
    if nodes <= 1:
        return []
    if ram % nodes:
        raise ModelError(f"{ram} MB of memory does not split evenly into nodes={nodes} (set MEM to a multiple "
                         f"of {nodes} MB, or nodes=1)")
    args = []
    for n in range(nodes):
        lo, hi = n * harts // nodes, (n + 1) * harts // nodes - 1
        args += ["-object", f"memory-backend-ram,id=m{n},size={ram // nodes}M",
                 "-numa", f"node,memdev=m{n},cpus={lo}-{hi},nodeid={n}"]
    return args


@dataclass(frozen=True)
class Plan:
    """What one boot under a model adds: QEMU arguments and bootargs tokens."""

    model: Model
    qemu_args: tuple[str, ...]
    bootargs: tuple[str, ...]

    @property
    def canonical(self) -> str:
        return self.model.canonical


def _tokens(bootargs: str | list[str] | tuple[str, ...]) -> list[str]:
    return bootargs.split() if isinstance(bootargs, str) else list(bootargs)


def plan(spec: str | Model, harts: int, kernel: str | os.PathLike, mem: str | int = "256M",
         deterministic: bool = False, extra=(), bootargs="", host_cores: int | None = None,
         nm: str | None = None, plugin: str | os.PathLike | None = None) -> Plan:
    """Everything a boot of ``harts`` harts under ``spec`` adds (ModelError when it cannot): ``extra`` are the
    user's other QEMU arguments (a -numa among them is refused: the model sets the NUMA map), ``bootargs``
    theirs (a model= among them is refused; an idle= of theirs is kept)."""
    model = as_model(spec)
    if model is None:
        raise ModelError("no model to plan (the spec is none)")
    model = model.for_harts(harts)
    if model.pace == AUTO:
        raise ModelError("pace=auto is resolved before a boot (schedlab's commands do it: schedlab.pace.resolve); "
                         "give pace=R here, e.g. pace=10000000")
    if model.pace and deterministic:
        raise ModelError(f"model {model.canonical!r}: pace= cannot be used in deterministic mode (clock=virtual "
                         "counts instructions already): drop one")
    extra = shlex.split(extra) if isinstance(extra, str) else list(extra)
    if any(word == "-numa" or word.startswith("-numa=") for word in extra):
        raise ModelError("the extra QEMU arguments already have -numa: under a model the NUMA map is the "
                         f"model's (nodes={model['nodes']}); drop -numa, or set nodes= in the model spec")
    tokens = _tokens(bootargs)
    if any(t.startswith("model=") for t in tokens):
        raise ModelError("the bootargs already have model=: the model is chosen with MODEL= (make) or "
                         "--model (tools/schedlab), which also load the plugin; drop the token")
    plugin = Path(plugin) if plugin is not None else plugin_path()
    if not plugin.is_file():
        raise ModelError(f"the model plugin {plugin} is not built: run make (it builds build/model/model.so "
                         "from tools/model/*.c)")
    ram = mem_mb(mem)
    if model.has_cache:                     # what QEMU's virt boots and the caches' host memory (model_limits)
        model_limits.check_machine(dict(model.values), harts, ram)
    symbols = kernel_symbols(kernel, nm)
    args = ["-plugin", plugin_arg(model, harts, ram, symbols, not deterministic, plugin.resolve()),
            *numa_args(model["nodes"], harts, ram)]
    cores = host_cores if host_cores is not None else (os.cpu_count() or 1)
    added = [f"model={model.canonical}"]
    # idle=poll: a wake-up costs a store, as on a real machine - unpaced, while each hart has a core. Not paced:
    # a polling hart runs ahead of the wall clock and sleeps in the plugin, where it sees a wake-up only when it
    # wakes (up to the pacing lead, 200 us), while a halted hart is woken by its IPI at once (pace.h).
    if not deterministic and not model.pace and harts <= cores and not any(t.startswith("idle=") for t in tokens):
        added.append("idle=poll")
    return Plan(model, tuple(args), tuple(added))


# ---------------------------------------------------------------- the Makefile's helper

def main(argv: list[str] | None = None) -> int:
    """``check SPEC --harts N``: print the canonical spec. ``qemu SPEC --harts N --mem M --kernel ELF ...``:
    print the QEMU arguments, ``|``, and the bootargs to add. A problem: its message on stderr, exit 2."""
    parser = argparse.ArgumentParser(prog="python3 -m schedlab.model", description=main.__doc__)
    parser.add_argument("what", choices=("check", "qemu", "profiles"))
    parser.add_argument("spec", nargs="?", default="")
    parser.add_argument("--harts", type=int, default=1)
    parser.add_argument("--mem", default="256M")
    parser.add_argument("--kernel", default=str(REPO_ROOT / "build" / "kernel.elf"))
    parser.add_argument("--plugin")
    parser.add_argument("--nm")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--extra", default="")
    parser.add_argument("--bootargs", default="")
    args = parser.parse_args(argv)
    try:
        if args.what == "profiles":
            print(" ".join(profiles()))
        elif args.what == "check":
            print(canonical(args.spec, args.harts))
        else:
            spec = args.spec
            if not args.deterministic:            # pace=auto: this host's R, said on stderr (pace.py)
                from .pace import resolve
                spec = resolve(spec, args.harts, kernel=args.kernel)
            p = plan(spec, args.harts, args.kernel, args.mem, args.deterministic, args.extra,
                     args.bootargs, nm=args.nm, plugin=args.plugin)
            print(" ".join(p.qemu_args) + "|" + " ".join(p.bootargs))     # no argument has a space
    except HarnessError as exc:             # a ModelError, or pace=auto's probe failing
        print(f"MODEL={args.spec}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
