"""Parsing of the kernel's serial console.

The kernel prints a few line kinds, each a keyword followed by fields:

    BOOT harts=<H> nodes=<k> mem_mb=<m> policies=<p,...> apps=<a,...> boot_hart=<h> boot_us=<t> background=<a,...> options=<p.o=a|b,...>
         timer=sstc|sbi ipi=sswi|sbi clock=real|virtual jobkeys=<p.k=1..n,...|none> idle=auto|poll
         model=<canonical spec>|none cycle_ps=<n>
    RESULT job=<id> app=<name> policy=<p> ... check=ok|FAIL [more key=value]
    SUMMARY policy=<p> harts=<H> jobs=<n> failed=<n> makespan_us=<t>
    CALIB syscall_ns=<x> switch_ns=<x> ipi_ns=<x|na> tick_ns=<x> synth_unit_ns=<x> cost_us=<n>
                                                the calibration card (calib=on, the default): this host's costs
    ERROR <free text>
    PANIC <hart> <cause> <sepc> <stval> ...
    TRACE ... / T <hart> <ticks> <event> ...    the trace dump (trace=on; see ``trace``)
    ULOG ... / U <job> <proc> <ticks> <event> ...   the library's event logs, after it (see ``ulog``)
    MODEL end profile=<p> cycle_ps=<n> charge=on|off accesses=<n> stall_us=<n>
    MODEL job=<id> accesses=<n> misses=<n> l2_hits=<n> llc_hits=<n> coherence=<n> local=<n> remote=<n> stall_us=<n>
                                                the machine model's report (tools/model/README.md), printed by the
                                                QEMU plugin at exit, after SUMMARY; job=0 is the kernel and idle harts

Each of these starts at the beginning of a line.  What a job writes is never
one of them: the kernel puts each of its lines on a line of its own that starts
with the job's id in brackets, with every byte that could break or hide a line
shown as ``\\xHH``::

    [<job id>] <the job's text>                 e.g. ``[2] BENCH call_ns 3.10 ns``

Those lines go to ``output[<job id>]`` (the text after ``"[<id>] "``); a job's
own ``ERROR ...`` line (``sl_die``) is job output, never in ``errors``.

Everything else (the OpenSBI banner, QEMU's own messages, kinds added later)
is ignored.  ``key=value`` values never contain spaces; they are typed:
decimal integers become ``int``, things that look like finite decimal floats
(``1e-12``, ``3.5``) become ``float``, anything else (hex addresses, words,
``nan``, ``inf``, ``1e999``) stays a ``str``.  A field without ``=`` is kept with the value ``True``.

QEMU may be killed mid-line; ``parse_console(text, complete=False)`` then drops
the unterminated last line, and a RESULT that lacks a required key is kept
apart in ``malformed`` instead of polluting ``results``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

#: A job's output line: ``[<job id>] <text>`` (an empty job line may lose its trailing space).
JOB_LINE = re.compile(r"\[(\d+)\](?: (.*))?\Z", re.S)
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?\Z")

#: Keys every RESULT line carries (the console contract).
RESULT_KEYS = ("job", "app", "policy", "harts", "procs", "arrive_us", "start_us",
               "end_us", "elapsed_us", "cpu_us", "check")
#: Keys every SUMMARY line carries.
SUMMARY_KEYS = ("policy", "harts", "jobs", "failed", "makespan_us")
#: Keys every CALIB line carries (kernel/calib.c); ``ipi_ns`` is ``"na"`` with one hart.
CALIB_KEYS = ("syscall_ns", "switch_ns", "ipi_ns", "tick_ns", "synth_unit_ns", "cost_us")
#: Keys of the machine model's lines (tools/model/README.md): ``MODEL end ...`` and ``MODEL job=<id> ...``.
MODEL_END_KEYS = ("profile", "cycle_ps", "charge", "accesses", "stall_us")
MODEL_JOB_KEYS = ("job", "accesses", "misses", "l2_hits", "llc_hits", "coherence", "local", "remote", "stall_us")
#: BOOT keys whose values are comma-separated lists.
#: ``background`` lists the apps that declare SL_APP_BACKGROUND (empty when none).
BOOT_LIST_KEYS = ("policies", "apps", "background")


#: RESULT and SUMMARY keys that are counts or times the kernel prints as unsigned integers: a line whose value
#: is anything else (``elapsed_us=abc``, a number of 400 digits, a negative time) is not the kernel's and is
#: kept apart in ``malformed``, so no table or ratio ever sees it.
RESULT_INTS = ("job", "harts", "procs", "arrive_us", "start_us", "end_us", "elapsed_us", "cpu_us")
SUMMARY_INTS = ("harts", "jobs", "failed", "makespan_us")
#: The largest value the kernel prints (a uint64).
MAX_U64 = (1 << 64) - 1
#: Digits of the longest integer typed as one (a uint64 has 20): longer ones stay strings, never a huge int.
MAX_INT_DIGITS = 20


def parse_value(text: str):
    """Type one field value: int, then a finite float, else the string unchanged (``nan``, ``inf`` and
    ``1e999`` stay strings: no NaN or infinity reaches a median or a JSON file)."""
    if _INT.match(text):
        return int(text) if len(text.lstrip("+-")) <= MAX_INT_DIGITS else text
    if _FLOAT.match(text):
        value = float(text)
        return value if math.isfinite(value) else text
    return text


def bounded(value, low: int, high: int) -> bool:
    """value is an int (not a bool) in low..high: a field the kernel could have printed."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def decimal(word: str) -> int | None:
    """A decimal integer of at most MAX_INT_DIGITS digits, else None (never a 4300-digit int() error)."""
    digits = word[1:] if word[:1] in "+-" else word
    return int(word) if 0 < len(digits) <= MAX_INT_DIGITS and digits.isdigit() and digits.isascii() else None


def parse_fields(text: str) -> dict:
    """Parse space-separated ``key=value`` fields into a typed dict (last key wins)."""
    fields = {}
    for word in text.split():
        key, eq, value = word.partition("=")
        fields[key] = parse_value(value) if eq else True
    return fields


@dataclass
class Console:
    """The recognised lines of one boot's console, in order of appearance.

    ``errors``, ``panics`` and ``traces`` hold the lines verbatim (``ERROR ...``,
    ``PANIC ...``; ``TRACE ...`` and the ``T ...`` records of the trace dump)
    so they can be shown to a user unchanged or handed to ``trace.parse_trace``.
    ``output`` maps a job id to the lines that job wrote, prefix removed, in order.
    ``model_end`` is the machine model's ``MODEL end`` line and ``model_jobs`` its ``MODEL job=`` lines by job
    id (0: the kernel and idle harts); both empty without a model.
    """

    boot: dict | None = None
    calib: dict | None = None
    results: list[dict] = field(default_factory=list)
    summary: dict | None = None
    errors: list[str] = field(default_factory=list)
    panics: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    output: dict[int, list[str]] = field(default_factory=dict)
    model_end: dict | None = None
    model_jobs: dict[int, dict] = field(default_factory=dict)

    def job_lines(self, job: int | None = None) -> list[str]:
        """The output lines of job ``job`` (of every job, in job-id order, when None)."""
        if job is not None:
            return list(self.output.get(job, []))
        return [line for key in sorted(self.output) for line in self.output[key]]

    def job_errors(self, job: int | None = None) -> list[str]:
        """A job's own ``ERROR ...`` lines (``sl_die``), each labelled ``[<id>] `` as on the console."""
        jobs = [job] if job is not None else sorted(self.output)
        return [f"[{j}] {line}" for j in jobs for line in self.output.get(j, []) if line.startswith("ERROR")]


def parse_policy_options(text: str) -> dict:
    """BOOT's ``options=gang.alternates=off|on,gang.gangfit=first|best,...`` (``none``: no policy has any)
    as ``{"gang": {"alternates": ["off", "on"], "gangfit": ["first", "best"]}}``: every policy's own
    scenario options and their choices, the first choice being the default. A numeric option is listed as
    its range, ``lottery.lottery_turn=1..100`` -> ``{"lottery": {"lottery_turn": ["1..100"]}}``."""
    options: dict = {}
    for item in text.split(","):
        name, eq, choices = item.partition("=")
        policy, dot, option = name.partition(".")
        if eq and dot:
            options.setdefault(policy, {})[option] = choices.split("|")
    return options


def _parse_boot(rest: str) -> dict:
    boot = parse_fields(rest)
    for key in BOOT_LIST_KEYS:
        value = boot.get(key)
        if isinstance(value, str):
            boot[key] = [v for v in value.split(",") if v]
        elif value is not None and value is not True:
            boot[key] = [str(value)]
    # parse_fields split options= at its first '=': the rest of the word is the value
    # and so did jobkeys= (the policies' per-job keys, job=<app>:tickets=3): the same form
    for word in rest.split():
        for key in ("options", "jobkeys"):
            if word.startswith(key + "="):
                boot[key] = parse_policy_options(word[len(key) + 1:])
    return boot


def _complete(line: str, rest: str, required: tuple, into: Console, ints: tuple = ()) -> dict | None:
    """The fields of a contract line that carries every required key, each of ``ints`` an integer the kernel
    can print (0..2^64-1); else None, and the line is malformed."""
    fields = parse_fields(rest)
    if all(k in fields for k in required) and all(bounded(fields[k], 0, MAX_U64) for k in ints):
        return fields
    into.malformed.append(line)
    return None


def parse_line(line: str, into: Console) -> None:
    """Add one console line to ``into`` if it is of a known kind."""
    job = JOB_LINE.match(line.rstrip("\r\n").lstrip())
    if job:
        into.output.setdefault(int(job.group(1)), []).append(job.group(2) or "")
        return
    line = line.strip()
    keyword, _, rest = line.partition(" ")
    if keyword == "RESULT":
        fields = _complete(line, rest, RESULT_KEYS, into, RESULT_INTS)
        if fields is not None:
            into.results.append(fields)
    elif keyword == "SUMMARY":
        into.summary = _complete(line, rest, SUMMARY_KEYS, into, SUMMARY_INTS) or into.summary
    elif keyword == "BOOT":
        into.boot = _parse_boot(rest)
    elif keyword == "CALIB":
        into.calib = _complete(line, rest, CALIB_KEYS, into) or into.calib
    elif keyword == "ERROR":
        into.errors.append(line)
    elif keyword == "PANIC":
        into.panics.append(line)
    elif keyword in ("TRACE", "T", "ULOG", "U"):
        into.traces.append(line)
    elif keyword == "MODEL":
        _parse_model(line, rest, into)


def _parse_model(line: str, rest: str, into: Console) -> None:
    """``MODEL end ...`` or ``MODEL job=<id> ...`` (the plugin's report); anything else is malformed."""
    if rest.split()[:1] == ["end"]:
        fields = _complete(line, rest.partition(" ")[2], MODEL_END_KEYS, into)
        if fields is not None:
            into.model_end = fields
    elif rest.startswith("job="):
        fields = _complete(line, rest, MODEL_JOB_KEYS, into)
        if fields is not None and isinstance(fields["job"], int):
            into.model_jobs[fields["job"]] = fields
        elif fields is not None:
            into.malformed.append(line)
    else:
        into.malformed.append(line)


def parse_console(text: str, complete: bool = True) -> Console:
    """Parse a whole console.  ``complete=False`` drops an unterminated last line."""
    lines = text.splitlines(keepends=True)
    if not complete and lines and not lines[-1].endswith(("\n", "\r")):
        lines.pop()
    parsed = Console()
    for line in lines:
        parse_line(line, parsed)
    return parsed
