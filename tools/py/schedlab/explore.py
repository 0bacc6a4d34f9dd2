"""``schedlab explore``: perturbed deterministic boots of scenarios drawn from the build, each checked, any
failure replayed byte for byte by one printed line (the kernel's side is kernel/perturb.h).

    schedlab explore [--boots N] [--seed S] [--harts 2,3,4] [--jobs J] [--out DIR] [--resume] [--trace]
    schedlab explore --scenario "TOKENS" --harts H [--boots N] [--depth D]   # one scenario, N perturb seeds
    schedlab explore --diff "REPLAY LINE"            # a failure's first divergence from a passing neighbour seed

The model. Boot i of a campaign with seed S draws its scenario from random.Random(S * 1000003 + i)
(explore_draw.py): 2-4 harts (``--harts``), a policy of the build (BOOT's ``policies=``), foreground jobs of
the build's apps that ``SIZES`` knows a small size for - each with a wait kind and a barrier shape where the
app takes them (lib/wait/wait.h's ``SL_WAIT_CHOICES``), staggered arrivals - sometimes a hog beside, sometimes
the machine model (``modern``: in deterministic mode it counts, never charges), and
``perturb=<seed>,depth=<1..4>``; one of three classes (``--class`` keeps one): any such mix, Tucker & Gupta's
spinning mix under a migrating policy, or process-control churn (wide worker jobs whose allotments short
arrivals shrink and grow). Every boot runs with ``clock=virtual`` (QEMU -icount on one host thread), so
the same line gives the same console on any host. The checks are the ones the suite already knows: the
kernel's verdict is ok (every job ended with check=ok, no ERROR or PANIC, no deadlock, the scenario's own
watchdog did not fire), every job printed its RESULT, and under gang with every job at most as wide as the harts,
the trace shows every gang coscheduled outside switch windows and stops (gangcheck.gang_violations). A failure
prints ``FAIL <verdict>: <replay command>``. A boot that outlasts the host's limit (``--timeout``) is SLOW,
printed with its replay line and counted apart, not judged (``judge`` says why).

``--scenario`` explores one scenario instead: boot i is it with ``perturb=<S + i>,depth=<D>`` - for hunting a
failure seen once, and for comparing a failing seed's trace with its passing neighbours'.

``--diff`` takes a failure's replay line (or its tokens, with ``--harts``) and boots it traced (``trace=on``) beside
its nearest passing neighbour seed (perturb seed +1, -1, +2, ...; same scenario, same depth), and prints the first
trace record in which the two differ in what happened - hart, event, job, process, argument; times aside, as
two seeds shift them from the first turn on, and the perturbation's hand-overs (``held``) aside, which differ by
construction - with the records before it, and the failure's own verdict. The
trace's own instructions move virtual time and so the interleaving: a line that fails only untraced is found
again traced (``--trace``, or ``--scenario "trace=on TOKENS"``), and that failing line diffed. The kernel dumps
its trace at the end of a boot, so a failure that ends it sooner (a PANIC) leaves none to compare: --diff then
says so and names the passing neighbour.

Batches: the boots go N scenarios of one hart count to a QEMU (``--batch``, default BATCH; kernel/batch.c,
batch.py), which pays QEMU's start and the kernel's boot once for the N; the machine model's boots stay alone. A
scenario's interleaving in a batch is its own (the virtual clock goes on across the batch), so a failure's replay
line is its batch up to it, and a scenario the batch did not reach (an earlier one ended QEMU) is booted again.

Resumable: every finished boot is one line of ``OUT/explore.jsonl`` (its index, scenario, verdict, virtual time
and host seconds); with
``--resume`` the boots already there are not booted again and count in the summary. The summary counts
boots, distinct scenarios (the drawn scenario without its perturb seed), failures, slow boots, and boots per
policy, and gives this run's pace (boots a minute of wall time).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from types import SimpleNamespace
from pathlib import Path

from . import batch, executor
from .explore_draw import (CLASSES, HOSTILE, MIX_SHARE, PROCCTL_SHARE, SIZES, draw, gang_checkable,  # noqa: F401
                           mix_jobs, policy_of, procctl_case)
from .qemu import REPO_ROOT, HarnessError, Run, batch_scenarios

LISTING = "calib=off clock=virtual timeout=60s job=synth:procs=1,iters=1"
BOOT_TIMEOUT = 120.0
BATCH = 8                                       # scenarios a boot (--batch): docs/notes/explorer.md measures it
GRACE_US = 500.0                                # dispatch latency forgiven (tests/schedule_checks.py's)


def wait_kinds() -> list[str]:
    """The library's wait kinds, from lib/wait/wait.h (the build's list, not a copy)."""
    text = (REPO_ROOT / "lib" / "wait" / "wait.h").read_text()
    found = re.search(r'#define SL_WAIT_CHOICES "([a-z|]+)"', text)
    if not found:
        raise HarnessError("explore: lib/wait/wait.h has no SL_WAIT_CHOICES")
    return found.group(1).split("|")


def build_listing(kernel=None) -> tuple[list[str], list[str], set[str]]:
    """(policies, apps, background apps) from one short boot's BOOT line."""
    run = executor.boot(1, LISTING, kernel=kernel, timeout=BOOT_TIMEOUT, deterministic=True)
    boot = run.boot or {}
    def names(key):
        value = boot.get(key) or ""
        return list(value) if isinstance(value, (list, tuple)) else [v for v in str(value).split(",") if v]
    if not names("policies") or not names("apps"):
        raise HarnessError(f"explore: the listing boot printed no BOOT policies=/apps= ({run.verdict})")
    return names("policies"), names("apps"), set(names("background"))


def fixed(index: int, seed: int, scenario: str, harts: int, depth: int) -> dict:
    """Boot `index` of a --scenario campaign: the scenario with the perturb seed seed + index."""
    tokens = f"{scenario} perturb={seed + index},depth={depth}"
    return {"index": index, "harts": harts, "tokens": tokens, "model": None}


def gang_problem(run: Run) -> str | None:
    """What breaks the gang invariant in a traced gang boot (gangcheck.gang_violations, as tests/schedule_checks.py
    asserts it), or None; a trace whose ring overflowed is not judged."""
    from . import gangcheck, trace as tr
    trace = tr.parse_trace(run.console)
    if not trace.complete or any(trace.dropped.values()):
        return None
    bad = {job: c for job, c in gangcheck.gang_violations(trace, grace_us=GRACE_US).items() if c.fraction > 0}
    if not bad:
        return None
    job, check = next(iter(bad.items()))
    return f"GANG: job {job}'s processes ran {check.fraction:.1%} of their time while a member waited ready"


def replay_line(case: dict) -> str:
    """The line that boots the case again, byte for byte: its tokens, or - booted in a batch - the batch up to
    it (batch.py: a prefix runs alike)."""
    model = f" --model {case['model']}" if case["model"] else ""
    tokens = batch.line([*case["before"], case["tokens"]]) if case.get("before") is not None else case["tokens"]
    return f"tools/schedlab run --deterministic --cpus {case['harts']}{model} {tokens}"


def batches(cases: list[dict], size: int) -> list[list[dict]]:
    """The cases grouped to boot together: up to `size` of one hart count, in index order; a case under the
    machine model alone (its plugin's state would carry over: kernel/batch.c)."""
    out, filling = [], {}
    for case in cases:
        if case["model"] or size <= 1:
            out.append([case])
            continue
        group = filling.setdefault(case["harts"], [])
        group.append(case)
        if len(group) == size:
            out.append(filling.pop(case["harts"]))
    return out + [g for g in filling.values()]


def boot_task(group: list[dict], timeout: float, kernel):
    """The executor task of a group: one boot, or one batch (its host limit the sum of its boots')."""
    first = group[0]
    tokens = first["tokens"] if len(group) == 1 else batch.line([c["tokens"] for c in group])
    return executor.qemu_task(first["harts"], tokens, kernel, timeout * len(group), (), True, first["model"])


def scenario_runs(group: list[dict], run: Run) -> list[tuple[dict, Run]]:
    """(case, its Run) for each case of the group that the boot reached, each case with ``before`` (the
    batch's scenarios before it, for its replay line) when the group was a batch; at least the first."""
    if len(group) == 1:
        return [(group[0], run)]
    runs = batch.split(run, [c["tokens"] for c in group]) or [run]
    return [({**c, "before": [b["tokens"] for b in group[:k]]}, r) for k, (c, r) in enumerate(zip(group, runs))]


def judge(run: Run) -> str:
    """'ok', SLOW, or what is wrong with a finished boot (the suite's checks).

    SLOW is no verdict on the kernel: the boot did not end within the host's time limit. In deterministic mode
    every hart's timer fires at least every VCLOCK_SLICE_US of virtual time (kernel/vclock.h), so virtual time
    never stands still, and a boot that never ends runs into the scenario's own watchdog (timeout=, virtual,
    explore_draw.VIRTUAL_TIMEOUT): an ERROR, judged like any other - except, for now, where a perturbation point
    on the interrupt path keeps SSIP pending and so starves the timer (docs/notes/explorer.md). A long boot on a
    slow or loaded host (a spinning mix that crawls, as the papers' collapse does, is long) only takes more host
    time - its replay with a longer --timeout says which."""
    if run.timed_out:
        return "SLOW"
    if not run.ok:
        return run.verdict + (f": {run.errors[0]}" if run.errors else f": {run.panics[0]}" if run.panics else "")
    if run.summary and len(run.results) != run.summary.get("jobs"):
        return f"FAIL ({len(run.results)} RESULT lines for {run.summary.get('jobs')} jobs)"
    if "trace=on" in run.bootargs.split() and gang_checkable(run.bootargs.split(), run.cpus):
        return gang_problem(run) or "ok"
    return "ok"


SEED = re.compile(r"(^|\s)perturb=(\d+)")
REPLAY = re.compile(r"--cpus (\d+)(?: --model (\S+))? (.*)$")


def parse_replay(line: str, harts: int) -> dict:
    """A case from a replay line as a failure prints it, or from bare tokens booted at `harts` harts."""
    line = line.strip()
    found = REPLAY.search(line)
    case = {"index": 0, "harts": int(found.group(1)), "tokens": found.group(3), "model": found.group(2)} if found \
        else {"index": 0, "harts": harts, "tokens": line, "model": None}
    if not SEED.search(batch_scenarios(case["tokens"])[-1]):
        raise HarnessError(f"explore --diff: no perturb=<seed> in {line!r}" + (" (its last scenario)"
                                                                              if batch.is_batch(line) else ""))
    return case


def reseeded(case: dict, seed: int) -> dict:
    def change(tokens):
        return SEED.sub(lambda m: f"{m.group(1)}perturb={seed}", tokens, count=1)
    return {**case, "tokens": batch.on_last(case["tokens"], change)}


def traced(case: dict) -> dict:
    def change(tokens):
        return tokens if "trace=on" in tokens.split() else f"trace=on {tokens}"
    return {**case, "tokens": batch.on_last(case["tokens"], change)}


def happened(record) -> tuple:
    """What a trace record says happened, its time aside."""
    return (record.hart, record.event, record.job, record.proc, record.arg)


def schedule_records(trace) -> list:
    """A trace's records without its ``held`` ones: every perturbed hand-over of a hart is one, and neighbour
    seeds differ in them by construction, so they would hide where the schedules part."""
    return [r for r in trace.records if r.event != "held"]


def first_divergence(failing, passing) -> int | None:
    """Index of the first record (in time order) where two traces differ in what happened; None if never."""
    for i, (a, b) in enumerate(zip(failing.records, passing.records)):
        if happened(a) != happened(b):
            return i
    same = len(failing.records) == len(passing.records)
    return None if same else min(len(failing.records), len(passing.records))


def _show(record) -> str:
    return (f"{record.time_us:12.1f} us  hart {record.hart}  {record.event:<6} job {record.job} proc {record.proc} "
            f"arg {record.arg}") if record else "(no record: the trace ends)"


def diff(args) -> int:
    from . import trace as tr
    case = traced(parse_replay(args.diff, int(args.harts.split(",")[0])))
    seed = int(SEED.search(batch_scenarios(case["tokens"])[-1]).group(2))

    def boot(c):                                # a batch line's last scenario is the one compared (batch.py)
        return batch.last(executor.boot(c["harts"], c["tokens"], args.kernel, args.timeout, (), True, c["model"]))
    failing = boot(case)
    verdict = judge(failing)
    print(f"explore --diff: {replay_line(case)}\n  verdict: {verdict}", flush=True)
    if verdict == "ok":
        print("  the traced line passes: trace=on adds instructions, so virtual time and the interleaving moved "
              "off the failure. Find one that fails traced: explore --scenario \"trace=on TOKENS\" (the line's "
              "tokens without perturb=) and --diff its failing line")
        return 1
    for delta in (1, -1, 2, -2, 3, -3, 4, -4):
        if seed + delta < 0:
            continue
        near = reseeded(case, seed + delta)
        run = boot(near)
        if judge(run) == "ok":
            break
    else:
        print(f"  no passing neighbour seed within 4 of {seed}")
        return 1
    if "TRACE begin" not in failing.console:
        print(f"  the failure left no trace: it ended the boot before the dump (a PANIC does); its neighbour "
              f"perturb={seed + delta} passes")
        return 1
    a, b = (SimpleNamespace(records=schedule_records(tr.parse_trace(r.console))) for r in (failing, run))
    at = first_divergence(a, b)
    print(f"  passing neighbour: perturb={seed + delta} ({len(b.records)} records; the failure {len(a.records)})")
    if at is None:
        print("  the traces agree record for record: the difference lies after the trace or outside it")
        return 0
    print(f"  first divergence at record {at} (the {at} before agree, times aside):")
    for r in a.records[max(0, at - args.context):at]:
        print(f"      {_show(r)}")
    print(f"    failing  {_show(a.records[at] if at < len(a.records) else None)}")
    print(f"    passing  {_show(b.records[at] if at < len(b.records) else None)}")
    return 0


def _journal(path: Path) -> dict[int, dict]:
    done = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                entry = json.loads(line)
                done[int(entry["index"])] = entry
            except (ValueError, KeyError, TypeError):
                continue                        # a torn line: that boot runs again
    return done


def campaign(args) -> int:
    waits = wait_kinds()
    policies, apps, background = build_listing(args.kernel)
    harts = [int(h) for h in args.harts.split(",")]
    out = Path(args.out) if args.out else None
    journal = out / "explore.jsonl" if out else None
    done = _journal(journal) if journal and args.resume else {}
    if out:
        out.mkdir(parents=True, exist_ok=True)
        if not args.resume and journal.exists():
            journal.unlink()
    if args.scenario:
        cases = [fixed(i, args.seed, args.scenario, harts[0], args.depth) for i in range(args.boots)]
    else:
        try:
            cases = [draw(i, args.seed, policies, apps, background, waits, harts, args.only)
                     for i in range(args.boots)]
        except ValueError as exc:
            raise HarnessError(f"explore --class {args.only}: {exc}") from exc
    if args.trace:
        cases = [traced(c) for c in cases]
    to_boot = [c for c in cases if c["index"] not in done]
    skipped = sorted(a for a in apps if a not in SIZES and a not in background and a not in HOSTILE)
    print(f"explore: {len(cases)} boots (seed {args.seed}, {len(done)} from the journal), harts {args.harts}, "
          f"policies {','.join(policies)}, waits {','.join(waits)}"
          + (f"; apps without a small size here, left out: {','.join(skipped)}" if skipped else ""), flush=True)
    results = dict(done)
    started = time.monotonic()
    args.deterministic = True                   # every boot: one host thread, so --jobs may use every core
    pending = to_boot
    with executor.use(executor.from_args(args, cpus=1)) as ex:
        while pending:                          # again for the cases a batch did not reach (batch.py)
            groups = batches(pending, args.batch)
            left = []
            for group, run in zip(groups, ex.map([boot_task(g, args.timeout, args.kernel) for g in groups])):
                reached = scenario_runs(group, run)
                for case, scenario_run in reached:
                    results[case["index"]] = record(case, scenario_run, run.seconds / len(reached), journal, args)
                left += group[len(reached):]
            pending = left
    failures = [e for e in results.values() if e["verdict"] not in ("ok", "SLOW")]
    slow = sum(e["verdict"] == "SLOW" for e in results.values())
    distinct = {re.sub(r" perturb=\S+", "", e["tokens"]) + f"@{e['harts']}/{e['model']}" for e in results.values()}
    per_policy = Counter(policy_of(e["tokens"]) for e in results.values())
    per_class = Counter(e.get("class", "scenario") for e in results.values())
    print(f"explore: {len(results)} boots, {len(distinct)} distinct scenarios, {len(failures)} failure(s), "
          f"{slow} slow (not judged); "
          + ", ".join(f"{p} {n}" for p, n in sorted(per_policy.items())) + "; classes "
          + ", ".join(f"{c} {n}" for c, n in sorted(per_class.items())), flush=True)
    print(rate(len(to_boot), time.monotonic() - started, ex.slots), flush=True)
    return 1 if failures else 0


def record(case: dict, run: Run, host_s: float, journal: Path | None, args) -> dict:
    """Judge one scenario's run, journal it, and print a failure's (or a SLOW boot's) replay line."""
    verdict = judge(run)
    entry = {k: v for k, v in case.items() if k != "before"}
    entry.update(verdict=verdict, virtual_us=(run.summary or {}).get("makespan_us"), host_s=round(host_s, 3))
    if case.get("before") is not None:
        entry["batch_position"] = len(case["before"]) + 1
    if verdict != "ok":                         # a batch's line is not in the entry's tokens: keep it
        entry["replay"] = replay_line(case)
    if journal:
        with journal.open("a") as handle:
            handle.write(json.dumps(entry) + "\n")
    if verdict == "SLOW":
        print(f"SLOW (no end within {args.timeout:g} s of host time; replay with --timeout): "
              f"{replay_line(case)}", flush=True)
    elif verdict != "ok":
        print(f"FAIL {verdict}: {replay_line(case)}", flush=True)
    return entry


def rate(boots: int, seconds: float, slots: int) -> str:
    """The campaign's pace: this run's boots a minute of wall time, and the minutes 20,000 would take at it."""
    if not boots or seconds <= 0:
        return "explore: no boot ran in this run (all from the journal)"
    per_minute = boots * 60.0 / seconds
    return (f"explore: {boots} boots in {seconds / 60:.1f} min on {slots} slot(s): {per_minute:.0f} a minute "
            f"(20,000 would take {20000 / per_minute:.0f} min)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="schedlab explore", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boots", type=int, default=200, help="boots in the campaign (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="the campaign's seed: the same seed draws the same boots")
    parser.add_argument("--harts", default="2,3,4", help="hart counts to draw from (default 2,3,4)")
    parser.add_argument("--kernel", default=None, help="kernel ELF (default build/kernel.elf)")
    parser.add_argument("--out", default=None, help="keep explore.jsonl here (for --resume)")
    parser.add_argument("--resume", action="store_true", help="skip the boots OUT/explore.jsonl already has")
    parser.add_argument("--scenario", metavar="TOKENS", help="one scenario (bootargs) under --boots perturb seeds "
                        "from --seed, at the first of --harts")
    parser.add_argument("--class", dest="only", choices=CLASSES, default=None,
                        help="draw every boot from one class: any, mix (the spinning mix), churn (process control "
                             "under allotment churn)")
    parser.add_argument("--depth", type=int, default=3, help="with --scenario: PCT's depth, 1..8 (default 3)")
    parser.add_argument("--diff", metavar="LINE", help="a failure's replay line: boot it traced beside its nearest "
                        "passing neighbour seed and print their first differing trace record")
    parser.add_argument("--trace", action="store_true", help="boot every scenario with trace=on, so that a "
                        "failure's line can be given to --diff as it is (the trace moves the interleavings)")
    parser.add_argument("--context", type=int, default=8, help="with --diff: records shown before the divergence")
    parser.add_argument("--batch", type=int, default=BATCH, metavar="N",
                        help=f"scenarios of one hart count booted in one QEMU (kernel/batch.c; default {BATCH}; 1: "
                             "a boot each). A failure's replay line is then its batch up to it")
    parser.add_argument("--timeout", type=float, default=BOOT_TIMEOUT, metavar="SECONDS",
                        help=f"host seconds a boot may take before it counts as SLOW, not judged (default "
                             f"{BOOT_TIMEOUT:g})")
    executor.add_options(parser)
    args = parser.parse_args(argv)
    if args.boots < 1 or args.seed < 0 or not args.timeout > 0 or not 1 <= args.batch <= 64:
        parser.error("--boots takes a whole number from 1, --seed from 0, --timeout a positive number of seconds, "
                     "--batch 1..64")
    try:
        if not all(h.strip().isdigit() and 1 <= int(h) <= 64 for h in args.harts.split(",")):
            parser.error(f"--harts {args.harts}: expected hart counts 1..64, e.g. 2,3,4")
        if args.scenario and ("perturb=" in args.scenario or not 1 <= args.depth <= 8):
            parser.error("--scenario: give the scenario without perturb= (explore adds it), and --depth 1..8")
        if args.scenario and args.only:
            parser.error("--class draws scenarios; --scenario gives one: not both")
        if args.resume and not args.out:
            parser.error("--resume needs --out DIR (where the journal is)")
        if args.diff:
            args.deterministic = True
            with executor.use(executor.from_args(args, cpus=1)):
                return diff(args)
        return campaign(args)
    except HarnessError as exc:
        print(f"schedlab explore: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
