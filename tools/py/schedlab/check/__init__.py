"""``schedlab check POLICY_FILE_OR_NAME``: a policy checked for the properties a scheduler must have, across
topologies, with a report card, a replay line per failure and a grading mode for courses.

    schedlab check tests/policies/lottery.c              # an out-of-tree file: nothing in the tree is edited
    schedlab check gang --quick                          # a policy of the tree, the edit loop's battery
    schedlab check my.c --json card.json --out build/card --jobs 2
    schedlab check my.c --case share@qemu-2              # replay one case of the battery, with details
    schedlab check my.c --rubric docs/assignment/stride/rubric.toml     # points per item and a total

The model. ``kbuild`` builds a checked kernel (KCHECKS=1) and the simulator with the policy; ``declare``
reads what the policy promises from a ``schedlab check:`` comment block of its file; ``battery`` lists the
boots (mixes x topologies, deterministic so a verdict is the same on any host) and judges each named check
(contract, progress, work-conservation, fairness, invariants: their definitions are battery.py's header);
``run`` boots them on the executor (``--jobs``, ``--executor dask://``) and fills the card; ``baseline``
runs the separating mixes under every policy of the build, shown and not judged; ``report`` prints the
table and writes JSON, Markdown, HTML and the plot; ``rubric`` grades.

Exit status: 0 every check held; 3 contract, 4 progress, 5 work-conservation, 6 fairness, 7 invariants
(the first failing class, report.EXIT); 2 a usage or build problem; with --rubric, 0 when graded (1 below
the rubric's pass mark).
"""

from __future__ import annotations

import argparse
import sys

from .. import executor
from ..qemu import HarnessError
from . import baseline, battery, declare, kbuild, report, run


def deterministic(args):
    """Every boot of a check is deterministic or simulated: one host core each, so --jobs may use them all."""
    args.deterministic = True
    return args


def _topologies(args) -> list:
    return battery.QUICK if args.quick else battery.FULL


def build_listing(target) -> list[str]:
    from ..explore import build_listing as listing
    return listing(target.kernel)[0]


def make_card(args, target=None) -> run.Card:
    target = target or kbuild.build(args.policy)
    decl = declare.declaration(target.policy, target.source)
    return run.Card(target.policy, target, decl, _topologies(args))


def check(args, log=print) -> run.Card:
    """Build, run the battery (and the baseline), and return the filled card."""
    card = make_card(args)
    cases = run.battery_cases(card)
    if args.only:
        cases = [c for c in cases if c.mix in args.only.split(",") or c.topo.name in args.only.split(",")]
    card.topologies = [t for t in card.topologies if any(c.topo.name == t.name for c in cases)]
    say = (lambda m: print(m, file=sys.stderr, flush=True))
    say(f"check: {card.policy}: {len(cases)} boots on {len({c.topo.name for c in cases})} topologies"
        + (" (--quick)" if args.quick else ""))
    with run.simulator(card.target), executor.use(executor.from_args(deterministic(args), cpus=1)):
        run.execute(card, cases)
        if not args.no_baseline:
            policies = build_listing(card.target)
            card.baseline = baseline.measure(policies, card.target.kernel, args.quick, card.target.sim is not None,
                                             say)
    return card


def replay(args) -> int:
    """--case: one case again, its verdicts with details and its boot line."""
    target = kbuild.build(args.policy, quiet=True)
    card = make_card(args, target)
    every = battery.cases(card.policy, card.decl, battery.FULL + battery.QUICK)
    found = [c for c in every if c.id == args.case]
    if not found:
        ids = sorted({c.id for c in every})
        print(f"schedlab check: no case {args.case!r}; the cases are: {', '.join(ids)}", file=sys.stderr)
        return 2
    case = found[0]
    card.topologies = [case.topo]
    with run.simulator(target), executor.use(executor.from_args(deterministic(args), cpus=1)):
        run.execute(card, [case])
    print(f"boot: {run.boot_line(case, target)}")
    for check_ in battery.CHECKS:
        cell = card.cell(check_, case.topo.name)
        print(f"{check_}: {cell.status}" + (f" - {cell.detail}" if cell.detail else ""))
    return report.exit_code(card)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedlab check", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("policy", metavar="POLICY_FILE_OR_NAME", help="a policy file (.c) or a policy of the tree")
    p.add_argument("--quick", action="store_true", help="the edit loop's battery: one topology of each kind, "
                   "one baseline mix (under a minute once built)")
    p.add_argument("--json", metavar="FILE", help="write the card as JSON")
    p.add_argument("--out", metavar="DIR", help="write card.md, card.html and baseline.png there")
    p.add_argument("--case", metavar="MIX@TOPOLOGY", help="replay one case of the battery (a failure's line)")
    p.add_argument("--only", metavar="NAME[,NAME]", help="only the cases of these mixes or topologies")
    p.add_argument("--no-baseline", action="store_true", help="skip the separating mixes")
    p.add_argument("--rubric", metavar="FILE.toml", help="grade against a rubric (rubric.py): points per item")
    executor.add_options(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.case:
            return replay(args)
        if args.rubric:
            from . import rubric
            return rubric.main(args)
        card = check(args)
    except HarnessError as exc:
        print(f"schedlab check: {exc}", file=sys.stderr)
        return 2
    print(report.table(card))
    if args.json:
        report.write_json(card, args.json)
    if args.out:
        print(f"check: card written to {report.write_pages(card, args.out)}/card.md (and .html)")
    return report.exit_code(card)
