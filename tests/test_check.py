"""schedlab check without booting (make check's tier): where a policy's promises are read from and how a
bad block is refused, the battery's judges on hand-made traces (progress, work conservation, fairness,
the invariants), the card's table, exit codes and pages, a rubric's loading and scoring, and the command's
errors for what a user can get wrong. tests/test_check_rubric.py boots the worked assignment; the built-in
policies' own checks are test_check_builtins.py's.
"""

import json

import pytest

from conftest import REPO_ROOT
from schedlab import trace as tr
from schedlab.check import battery, declare, kbuild, measure, report, rubric, run
from schedlab.check.declare import Declaration
from schedlab.qemu import HarnessError

pytestmark = pytest.mark.check


def dump(harts, lines, quantum_us=1000, policy="x"):
    """A TRACE dump of ``lines`` ("hart us event job proc arg"), at 1 MHz, as the kernel prints it."""
    per = {h: [] for h in range(harts)}
    for line in lines:
        hart, us, event, job, proc, arg = line.split()
        per[int(hart)].append(f"T {hart} {us} {event} {job} {proc} {arg}")
    out = [f"TRACE begin harts={harts} timebase_hz=1000000 policy={policy} quantum_us={quantum_us}"]
    for h, recs in per.items():
        out += [f"TRACE hart={h} records={len(recs)} dropped=0", *recs]
    return tr.parse_trace("\n".join(out + ["TRACE end"]))


# ---------------------------------------------------------------- declarations

def test_the_tree_policies_declare_their_promises():
    assert declare.declaration("global").work_conserving is True
    assert declare.declaration("global").share == "equal"
    assert declare.declaration("gang").invariants == ["coscheduled"]
    assert declare.declaration("partition").share == "per-hart"
    assert declare.declaration("timeslice").invariants == ["bound"]


def test_a_file_without_a_block_declares_nothing(tmp_path):
    plain = tmp_path / "plain.c"
    plain.write_text((REPO_ROOT / "tests" / "policies" / "fifo.c").read_text().replace("schedlab check:", "-"))
    decl = declare.declaration("fifo", plain)
    assert not decl.declared and decl.work_conserving is None and decl.share == "none" and decl.invariants == []
    assert decl.progress == declare.DEFAULT_PROGRESS


def test_a_policy_that_never_preempts_promises_no_progress_and_gets_no_hogs():
    decl = declare.declaration("fifo", REPO_ROOT / "tests" / "policies" / "fifo.c")
    assert decl.progress == 0 and decl.work_conserving and decl.invariants == ["job-fifo"]
    assert {c.mix for c in battery.cases("fifo", decl, battery.QUICK)} == {"contract", "churn"}
    assert battery.judge_progress(None, decl).status == "not-declared"


def test_the_lottery_declares_its_draws_and_a_bound_in_probability():
    decl = declare.declaration("lottery", REPO_ROOT / "tests" / "policies" / "lottery.c")
    assert (decl.work_conserving, decl.share, decl.invariants, decl.progress) == (True, "draws", ["job-fifo"], 240)


def test_the_reference_stride_declares_tickets():
    decl = declare.declaration("stride", REPO_ROOT / "tests" / "policies" / "stride.c")
    assert decl.as_dict()["share"] == "tickets" and decl.work_conserving and decl.invariants == ["job-fifo"]


@pytest.mark.parametrize("line, says", [
    (" *   share  halves", "share halves: expected one of equal"),
    (" *   invariants  coscheduled,sorted", "invariant 'sorted' is not one the checker knows"),
    (" *   work-conserving  maybe", "expected yes or no"),
    (" *   colour  blue", "unknown key 'colour'"),
    (" *   progress  0", "expected quanta per job, 1..1000, or none"),
])
def test_a_bad_block_is_refused_naming_its_line(line, says):
    text = f"/*\n * schedlab check:\n{line}\n */\n"
    with pytest.raises(HarnessError, match=says) as err:
        declare.parse(text, "p", None)
    assert ":3:" in str(err.value)


def test_a_policy_name_or_file_is_resolved_with_clear_errors(tmp_path):
    assert kbuild.resolve("gang") == ("gang", None)
    assert kbuild.resolve(str(REPO_ROOT / "kernel" / "sched" / "gang.c")) == ("gang", None)
    name, source = kbuild.resolve(str(REPO_ROOT / "tests" / "policies" / "fifo.c"))
    assert name == "fifo" and source.name == "fifo.c"
    with pytest.raises(HarnessError, match="no policy 'sjf' in kernel/sched/"):
        kbuild.resolve("sjf")
    with pytest.raises(HarnessError, match="no such policy file"):
        kbuild.resolve(str(tmp_path / "missing.c"))
    clash = tmp_path / "g.c"
    clash.write_text('const struct sched_class g_class = { .name = "gang", };\n')
    with pytest.raises(HarnessError, match="registers policy 'gang', which kernel/sched/gang.c already defines"):
        kbuild.resolve(str(clash))
    junk = tmp_path / "junk.c"
    junk.write_text("int x;\n")
    with pytest.raises(HarnessError, match="is it a policy file"):
        kbuild.resolve(str(junk))


# ---------------------------------------------------------------- the judges on hand-made traces

def test_progress_names_the_longest_wait_against_its_bound():
    # two jobs; job 2's process waits 1000..9000 us: 8 quanta > 2 x 2 jobs quanta + 500 us
    trace = dump(1, ["0 0 run 1 0 -1", "0 1000 new 2 0 0", "0 9000 pre 1 0 0", "0 9000 run 2 0 -1",
                     "0 9500 exit 2 0 0", "0 9500 run 1 0 -1", "0 9900 exit 1 0 0"])
    v = battery.judge_progress(trace, Declaration("x", None))
    assert v.status == "fail" and "process 2.0 waited ready 8000 us (8.0 quanta)" in v.detail and v.value == 8.0
    assert battery.judge_progress(trace, Declaration("x", None, progress=4)).status == "pass"


def test_a_process_that_never_runs_is_starved():
    trace = dump(1, ["0 0 run 1 0 -1", "0 100 new 2 0 0", "0 5000 exit 1 0 0"])
    assert "never ran: starved" in battery.judge_progress(trace, Declaration("x", None)).detail


def test_work_conservation_counts_idle_harts_beside_long_waits_only():
    lines = ["0 0 run 1 0 -1", "1 0 idle 0 -1 0", "0 100 new 2 0 0", "1 3000 run 2 0 -1", "1 3500 exit 2 0 0",
             "0 4000 exit 1 0 0"]
    decl = Declaration("x", None, work_conserving=True)
    v = battery.judge_work_conservation(dump(2, lines), decl)
    assert v.status == "fail" and v.value == pytest.approx(3000 - 100 - 1500)      # after a quantum + 500 us
    quick = [l.replace("1 3000 run", "1 900 run") for l in lines]
    assert battery.judge_work_conservation(dump(2, quick), decl).status == "pass"
    assert battery.judge_work_conservation(dump(2, lines), Declaration("x", None)).status == "not-declared"


def share_case(tickets):
    case = battery.Case("share", battery.Topology("t", "qemu", 1), "")
    case.jobs = {1: {"app": "sleeper", "tickets": 1}, **{j: {"app": "hog", "tickets": t} for j, t in tickets.items()}}
    return case


def alternating(turns):
    """Hogs 2 and 3 on one hart in turns of (job, quanta), 1 ms quanta, from 0."""
    lines, t = [], 0
    for job, quanta in turns:
        lines += [f"0 {t} run {job} 0 -1", f"0 {t + quanta * 1000} pre {job} 0 0"]
        t += quanta * 1000
    return lines


def test_fairness_by_tickets_judges_each_ticket_class():
    tickets = {2: 1, 3: 3}
    good = dump(1, alternating([(2, 1), (3, 3)] * 20))
    decl = Declaration("x", None, share="tickets")
    v = battery.judge_fairness(share_case(tickets), good, decl)
    assert v.status == "pass" and v.value < 0.1, v.detail
    equal = dump(1, alternating([(2, 2), (3, 2)] * 20))           # tickets ignored: the 1-ticket job gets 2x
    v = battery.judge_fairness(share_case(tickets), equal, decl)
    assert v.status == "fail" and "tickets=1 got 0.500" in v.detail and "declared 0.250" in v.detail
    short = dump(1, alternating([(2, 1), (3, 3)] * 5))
    assert "under 50" in battery.judge_fairness(share_case(tickets), short, decl).detail


def drawn(winners):
    """Hogs 2 (1 ticket) and 3 (3 tickets) on one hart, always both ready: one 1 ms turn per draw's winner."""
    return dump(1, ["0 0 new 2 0 0", "0 0 new 3 0 0"] + alternating([(w, 1) for w in winners]))


def test_a_lottery_is_judged_by_its_draws_within_their_binomial_spread():
    tickets = {2: 1, 3: 3}
    decl = Declaration("x", None, share="draws")
    # every draw from {2: 1, 3: 3}: a quarter of the window's draws promised to the 1-ticket job, 3 sd of
    # sqrt(n 3/16) wins allowed either way
    fair = ([3, 2] + [3] * 2) * 20
    v = battery.judge_fairness(share_case(tickets), drawn(fair), decl)
    assert v.status == "pass" and v.value < 0.05 and "(3 sd)" in v.detail, v.detail
    even = [3, 2] * 40                                  # tickets ignored: 2x the 1-ticket job's wins, 5 sd off
    v = battery.judge_fairness(share_case(tickets), drawn(even), decl)
    assert v.status == "fail" and "tickets=1 won 40 of 79 draws" in v.detail, v.detail
    assert "promise 19.8 (sd 3.8): 103% off, tolerance 58% (3 sd)" in v.detail, v.detail
    near = [3, 2, 2, 3, 3, 2, 3, 3] * 3 + [3, 2, 3, 3] * 14    # about 1.5 sd off: off, and tolerated
    v = battery.judge_fairness(share_case(tickets), drawn(near), decl)
    assert v.status == "pass" and v.value > 0.05, v.detail


def test_harts_that_draw_at_one_tick_draw_one_after_another():
    # hart 0 runs job 2, hart 1 job 3, job 4 waits; at 1000 us both preempt and draw: the first draw's pool is
    # {2, 3, 4}, the second's lacks its winner, 4
    trace = dump(2, ["0 0 run 2 0 -1", "1 0 run 3 0 -1", "0 0 new 4 0 0", "0 1000 pre 2 0 0", "1 1000 pre 3 0 0",
                     "0 1000 run 4 0 -1", "1 1000 run 2 0 -1", "0 2000 exit 4 0 0", "1 2000 exit 2 0 0",
                     "1 2000 run 3 0 -1", "1 3000 exit 3 0 0"])
    assert measure.draws(trace, (1000, 2000)) == [(1000, 4, {2, 3, 4}), (1000, 2, {2, 3}), (2000, 3, {3})]


def test_invariants_from_the_trace():
    moved = dump(2, ["0 0 run 1 0 -1", "0 10 pre 1 0 0", "1 20 run 1 0 -1", "1 30 exit 1 0 0"])
    assert battery.invariant_problem("bound", moved) == "bound: process 1.0 ran on harts [0, 1]"
    shared = dump(2, ["0 0 rep 1 0 1", "0 0 rep 2 0 1", "0 5 run 1 0 -1", "0 10 pre 1 0 0", "0 20 run 2 0 -1",
                      "0 30 exit 2 0 0", "1 5 run 2 1 -1", "1 8 exit 2 1 0"])
    assert "hart 0 ran jobs [1, 2]" in battery.invariant_problem("disjoint-partitions", shared)
    # job 1: process 0 ready at 100, process 1 at 200; process 1 runs first
    jumped = dump(1, ["0 0 run 2 0 -1", "0 100 new 1 0 0", "0 200 new 1 1 0", "0 300 pre 2 0 0", "0 300 run 1 1 -1",
                      "0 400 exit 1 1 0", "0 400 run 1 0 -1", "0 500 exit 1 0 0", "0 500 run 2 0 -1",
                      "0 600 exit 2 0 0"])
    assert "job-fifo: process 1.1, ready at 200 us, ran at 300 us before 1.0" in \
        battery.invariant_problem("job-fifo", jumped)
    in_order = dump(1, [l.replace("run 1 1", "run 1 X").replace("run 1 0", "run 1 1").replace("run 1 X", "run 1 0")
                        .replace("exit 1 1", "exit 1 X").replace("exit 1 0", "exit 1 1").replace("exit 1 X", "exit 1 0")
                        for l in ["0 0 run 2 0 -1", "0 100 new 1 0 0", "0 200 new 1 1 0", "0 300 pre 2 0 0",
                                  "0 300 run 1 1 -1", "0 400 exit 1 1 0", "0 400 run 1 0 -1", "0 500 exit 1 0 0",
                                  "0 500 run 2 0 -1", "0 600 exit 2 0 0"]])
    assert battery.invariant_problem("job-fifo", in_order) is None


# ---------------------------------------------------------------- the card

def card_with(statuses):
    target = kbuild.Target("p", None, REPO_ROOT / "build" / "k.elf", None, "no simulator")
    card = run.Card("p", target, Declaration("p", None), [battery.QUICK[0]])
    for check, status in statuses.items():
        cell = card.cell(check, battery.QUICK[0].name)
        cell.status, cell.detail, cell.case = status, f"{check} detail", f"share@{battery.QUICK[0].name}"
        cell.replay = f"tools/schedlab check p --case {cell.case}"
    return card


@pytest.mark.parametrize("failing, code", [((), 0), (("contract", "fairness"), 3), (("progress",), 4),
                                           (("work-conservation", "invariants"), 5), (("fairness",), 6),
                                           (("invariants",), 7)])
def test_each_failure_class_has_its_exit_code(failing, code):
    card = card_with({c: ("fail" if c in failing else "pass") for c in battery.CHECKS})
    assert report.exit_code(card) == code
    assert ("PASS" if not failing else "FAIL") in report.table(card).splitlines()[0]


def test_the_card_as_json_markdown_and_html(tmp_path):
    card = card_with({"contract": "pass", "progress": "fail", "fairness": "not-declared"})
    card.baseline = {"rows": [{"mix": "collapse", "engine": "sim", "harts": 8, "policy": p, "slowdowns": [2.0, 1.0],
                               "mean": 1.5} for p in ("gang", "p")], "note": ""}
    report.write_json(card, tmp_path / "c.json")
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["failed"] == ["progress"] and data["exit"] == 4
    folder = report.write_pages(card, tmp_path / "card")
    md = (folder / "card.md").read_text()
    assert "| progress | FAIL |" in md and "replay: `tools/schedlab check p --case share@qemu-2`" in md
    assert "| collapse | sim 8 harts | p **(checked)** | 2.00, 1.00 | 1.50 |" in md
    assert (folder / "card.html").read_text().count("<table") == 2
    assert (folder / "baseline.png").stat().st_size > 1000


# ---------------------------------------------------------------- rubrics

def test_the_shipped_rubric_loads():
    r = rubric.load(REPO_ROOT / "docs" / "assignment" / "stride" / "rubric.toml")
    assert r.total == 100 and {i.check for i in r.items} == set(battery.CHECKS)
    assert r.reference == REPO_ROOT / "tests" / "policies" / "stride.c"


@pytest.mark.parametrize("text, says", [
    ("[[item]]\ncheck = 'speed'\npoints = 3\n", "needs check"),
    ("colour = 'red'\n[[item]]\ncheck = 'contract'\npoints = 1\n", "unknown key 'colour'"),
    ("title = 'x'\n", "no \\[\\[item\\]\\]"),
    ("[[item]]\ncheck = 'progress'\npoints = 1\nwithin = 2.0\n", "names no file"),
    ("battery = 'huge'\n[[item]]\ncheck = 'contract'\npoints = 1\n", "expected quick or full"),
    ("[[item]\n", "rubric"),
])
def test_a_bad_rubric_is_refused(tmp_path, text, says):
    path = tmp_path / "r.toml"
    path.write_text(text)
    with pytest.raises(HarnessError, match=says):
        rubric.load(path)


def test_points_are_shared_over_the_topologies_judged():
    card = card_with({"fairness": "pass"})
    second = battery.QUICK[1]
    card.topologies.append(second)
    card.cell("fairness", second.name).status, card.cell("fairness", second.name).value = "fail", 1.0
    card.cell("fairness", battery.QUICK[0].name).value = 0.3
    item = rubric.Item("share", "fairness", 30)
    assert rubric.score(item, card, None)[0] == 15
    assert rubric.score(rubric.Item("share", "fairness", 30, tolerance=0.2), card, None)[0] == 0
    assert rubric.score(rubric.Item("share", "fairness", 30, tolerance=1.0), card, None)[0] == 30
    within = rubric.Item("wait", "fairness", 30, within=2.0, slack=0.0)
    ref = {("fairness", battery.QUICK[0].name): 0.1}
    earned, lost = rubric.score(within, card, ref)
    assert earned == 0 and "0.3 > 2.0 x the reference's" in lost[0]


def test_a_per_hart_share_splits_each_hart_among_the_processes_at_home_there():
    # hart 0: hogs 2 and 3 in turns of 1 quantum; hart 1: hog 4 alone: 1/4, 1/4, 1/2 of the hogs' time
    lines = alternating([(2, 1), (3, 1)] * 30) + [f"1 0 run 4 0 -1", "1 60000 pre 4 0 0"]
    case = share_case({2: 1, 3: 1, 4: 1})
    v = battery.judge_fairness(case, dump(2, lines), Declaration("x", None, share="per-hart"))
    assert v.status == "pass" and v.value < 0.05, v.detail
    v = battery.judge_fairness(case, dump(2, lines), Declaration("x", None, share="equal"))
    assert v.status == "fail" and "job 4 got 0.500" in v.detail


def test_a_perturbed_boot_judges_the_contract_and_order_only():
    """perturb= stops harts on purpose: a 20-quantum wait there is the perturbation's, not the policy's."""
    from schedlab.console import parse_console
    from schedlab.qemu import Run
    trace = ["TRACE begin harts=1 timebase_hz=1000000 policy=x quantum_us=1000", "TRACE hart=0 records=6 dropped=0",
             "T 0 0 run 1 0 -1", "T 0 100 new 2 0 0", "T 0 20000 pre 1 0 0", "T 0 20000 run 2 0 -1",
             "T 0 21000 exit 2 0 0", "T 0 21000 idle 0 -1 0", "TRACE end"]
    results = [f"RESULT job={j} app=synth policy=x harts=1 procs=1 arrive_us=0 start_us=0 end_us=1 elapsed_us=1 "
               f"cpu_us=1 check=ok" for j in (1, 2)]
    text = "\n".join(results + trace + ["SUMMARY policy=x harts=1 jobs=2 failed=0 makespan_us=1"]) + "\n"
    decl = Declaration("x", None, invariants=["coscheduled", "bound"])
    for perturbed, progress in ((False, "fail"), (True, "not-run")):
        topo = battery.Topology("t", "qemu", 1, perturb=perturbed)
        case = battery.Case("churn", topo, "policy=x trace=on")
        run = Run(1, case.tokens, [], text, 0, parsed=parse_console(text))
        got = {v.check: v for v in battery.judge(case, run, decl)}
        assert got["contract"].status == "pass" and got["progress"].status == progress, got
        assert got["invariants"].status == "pass"
        assert ("coscheduled" in got["invariants"].detail) != perturbed
