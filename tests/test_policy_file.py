"""Adding a policy is one file (issues 11 and 25): a policy file from the test tree registers itself
(SCHED_CLASS) and declares its own options and per-job keys; a kernel built with it - and with no other file
touched - boots it by name, takes its settings, refuses wrong ones, lists them on the BOOT line, and gets
every policy-generic test of the suite (conftest: the policies come from the build, never from a list).

tests/policies/fifo.c is the smallest such file; tests/policies/lottery.c uses the whole contract of
kernel/sched/sched.h: a per-job key (tickets=), a numeric option (lottery_turn=), private per-job and
per-process storage, and run_ticks current when its hooks run. A policy that leaves a mandatory hook out is
named at boot instead of jumping to address 0; the optional ones may be left out. tests/policies/rogue.c breaks
the rest of the contract (sched.h) on purpose, and a checked kernel (KCHECKS=1, kernel/sched/hooks.h) names it.
"""

import os
import re
import subprocess
import sys

import pytest

from conftest import LISTING_BOOT, REPO_ROOT
from schedlab import qemu
from helpers import assert_all_ok, build_lock, seed_kernel_build, seed_sim_build

#: The policy-generic modules: each runs some tests once per policy of the build.
GENERIC = ["tests/test_chaos.py", "tests/test_determinism.py", "tests/test_reliability.py", "tests/test_ulog.py",
           "tests/test_intr.py", "tests/test_sim.py"]


def build(name, *policies, sim=False):
    """build/<name>/kernel.elf (and its simulator, build/<name>/sim/schedlab-sim) with the test tree's
    policy files added: the whole kernel and its apps, as `make EXTRA_POLICIES=...` makes them, checked
    (KCHECKS=1: the policy contract and the lock order asserted, as make test builds the kernel)."""
    out = f"build/{name}"
    targets = [f"{out}/kernel.elf"] + ([f"{out}/sim/schedlab-sim"] if sim else [])
    with build_lock(REPO_ROOT / out):          # one worker builds it; another waits and finds it made
        seed_kernel_build(REPO_ROOT / out)
        if sim:
            seed_sim_build(REPO_ROOT / out / "sim")
        done = subprocess.run(["make", "-s", f"B={out}", "KCHECKS=1", f"EXTRA_POLICIES={' '.join(policies)}",
                               *targets], cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return REPO_ROOT / out


@pytest.fixture(scope="module")
def fifo_kernel():
    return build("policy-fifo", "tests/policies/fifo.c") / "kernel.elf"


@pytest.fixture(scope="module")
def lottery_build():
    return build("policy-lottery", "tests/policies/lottery.c", sim=True)


@pytest.fixture(scope="module")
def default_boot():
    """The default kernel's BOOT line: the built-in policies, whatever they are."""
    run = qemu.boot(1, LISTING_BOOT, timeout=120)
    assert run.ok and run.boot, run.console[-2000:]
    return run.boot


def test_no_file_outside_the_policy_names_it():
    hits = subprocess.run(["git", "grep", "-l", "-e", "fifo_class", "-e", "lottery_class", "--", "kernel", "lib",
                           "linker", "Makefile", "tools"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert hits.stdout == "", hits.stdout


@pytest.mark.qemu
def test_a_policy_file_from_the_test_tree_boots_with_its_option(fifo_kernel, default_boot):
    run = qemu.boot(2, "policy=fifo fifo_wake=front timeout=60s job=gauss:n=64,barrier=block "
                       "job=sleeper:iters=3 job=oddeven:n=500,barrier=block", kernel=fifo_kernel, timeout=300)
    assert run.exit_code == 0 and not run.timed_out, run.console[-2000:]
    assert run.summary["policy"] == "fifo" and run.summary["failed"] == 0
    assert run.boot["policies"] == default_boot["policies"] + ["fifo"]          # order 100: after the built-ins
    assert run.boot["options"]["fifo"] == {"fifo_wake": ["back", "front"]}
    assert {p: o for p, o in run.boot["options"].items() if p != "fifo"} == default_boot["options"]


@pytest.mark.qemu
@pytest.mark.parametrize("bootargs, needle", [
    ("policy=fifo fifo_wake=sideways job=gauss", "fifo_wake=sideways, expected back or front"),
    ("fifo_wake=front job=gauss", "fifo_wake= is an option of policy fifo, not of timeslice"),
    ("policy=fifo alternates=on job=gauss", "alternates= is an option of policy gang, not of fifo"),
])
def test_a_policy_files_options_are_checked(fifo_kernel, bootargs, needle):
    run = qemu.boot(1, bootargs, kernel=fifo_kernel, timeout=120)
    assert run.exit_code == 2 and len(run.errors) == 1 and needle in run.errors[0], run.errors


def test_the_default_kernel_has_no_fifo(boot):
    run = boot(1, "policy=fifo job=gauss")
    assert run.exit_code == 2 and "no policy 'fifo'" in run.errors[0]


# ---------------------------------------------------------------- the generic tests take it from the build

def pytest_ids(env, *args):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=1800)
    return done


def test_every_generic_test_runs_a_new_policy_as_it_runs_the_built_ins(lottery_build, default_boot):
    """Every test of the generic modules that runs once per built-in policy runs once more for lottery when the
    kernel and simulator under test have it - the lists come from their BOOT lines, not from the tests."""
    env = dict(os.environ, SCHEDLAB_TEST_KERNEL=str(lottery_build / "kernel.elf"),
               SCHEDLAB_SIM=str(lottery_build / "sim" / "schedlab-sim"))
    plain = dict(os.environ, SCHEDLAB_TEST_KERNEL=str(qemu.DEFAULT_KERNEL))
    collected = {}
    for name, e in (("plain", plain), ("lottery", env)):
        done = pytest_ids(e, "--collect-only", *GENERIC)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        collected[name] = set(re.findall(r"^(tests/\S+::\S+)$", done.stdout, re.M))
    builtins = default_boot["policies"]
    per_policy = [i for i in collected["plain"] if re.search(r"\[(.*-)?(%s)(-.*)?\]" % "|".join(builtins), i)]
    assert len(per_policy) >= 6 * len(builtins), sorted(collected["plain"])
    for test_id in per_policy:
        # the twins: one policy name of the id replaced by lottery (a policy may share its name with another
        # parameter's value - policy=adaptive and barrier=adaptive - so each occurrence is tried alone)
        twins = [test_id[:m.start()] + "lottery" + test_id[m.end():] for policy in builtins
                 for m in re.finditer(r"(?<=[\[-])%s(?=[\]-])" % re.escape(policy), test_id)]
        assert any(twin in collected["lottery"] for twin in twins), (test_id, twins)
    assert collected["plain"] <= collected["lottery"]


@pytest.mark.qemu
def test_the_generic_tests_pass_for_a_new_policy(lottery_build):
    """...and they pass for it: the invariant and hostile checks (chaos, determinism, a failing process, the
    library's records, the interrupt paths, the simulator's wait kinds) of a policy file from the test tree."""
    env = dict(os.environ, SCHEDLAB_TEST_KERNEL=str(lottery_build / "kernel.elf"),
               SCHEDLAB_SIM=str(lottery_build / "sim" / "schedlab-sim"))
    done = pytest_ids(env, "-k", "lottery", *GENERIC)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"(\d+) passed", done.stdout) and int(re.search(r"(\d+) passed", done.stdout)[1]) >= 10, \
        done.stdout[-2000:]


# ---------------------------------------------------------------- the contract: keys, numbers, storage, accounting

@pytest.mark.qemu
def test_lottery_takes_per_job_tickets_and_a_numeric_option(lottery_build, default_boot):
    run = qemu.boot(2, "policy=lottery lottery_turn=3 quantum=2ms timeout=60s job=gauss:n=64,barrier=block,tickets=40 "
                       "job=oddeven:n=400,barrier=spin job=synth:iters=100,tickets=1 job=sleeper:iters=3",
                    kernel=lottery_build / "kernel.elf", timeout=300)
    assert_all_ok(run)
    assert run.boot["policies"] == default_boot["policies"] + ["lottery"]
    assert run.boot["options"]["lottery"] == {"lottery_turn": ["1..100"]}
    assert run.boot["jobkeys"] == {"lottery": {"tickets": ["1..10000"]}}
    assert {r["job"]: r["tickets"] for r in run.results} == {1: 40, 2: 10, 3: 1, 4: 10}   # RESULT says each job's
    # the default kernel has no job keys, and says so
    assert default_boot["jobkeys"] == {}


@pytest.mark.qemu
@pytest.mark.parametrize("bootargs, needle", [
    ("policy=lottery job=gauss:tickets=0", "tickets=0, expected a whole number from 1 to 10000"),
    ("policy=lottery job=gauss:tikets=3", "gauss has no key 'tikets'"),
    ("policy=lottery job=gauss:tickets=3,tickets=4", "tickets given twice"),
    ("job=gauss:tickets=3", "tickets= is a job key of policy lottery, not of timeslice"),
    ("policy=gang job=hog:tickets=3", "tickets= is a job key of policy lottery, not of gang"),
    ("policy=lottery tickets=3 job=gauss", "tickets= is a per-job key of policy lottery"),
    ("policy=lottery lottery_turn=0 job=gauss", "lottery_turn=0, expected a whole number from 1 to 100"),
    ("policy=lottery lottery_turn=many job=gauss", "lottery_turn=many, expected a whole number from 1 to 100"),
    ("lottery_turn=2 job=gauss", "lottery_turn= is an option of policy lottery, not of timeslice"),
])
def test_lottery_keys_and_options_are_checked(lottery_build, bootargs, needle):
    run = qemu.boot(1, bootargs, kernel=lottery_build / "kernel.elf", timeout=120)
    assert run.exit_code == 2 and len(run.errors) == 1 and needle in run.errors[0], run.errors
    assert run.errors[0].split("'")[1] in bootargs.split()     # it names the token


@pytest.mark.qemu
def test_tickets_decide_who_finishes_first(lottery_build):
    """Two equal jobs on one hart, 1 ticket against 30: in deterministic mode the draws are a fixed sequence
    (seed=), and the rich job wins ~97 % of some 60 turns, so it ends first however the draws fall."""
    for rich in (1, 2):
        tickets = {1: 1, 2: 1}
        tickets[rich] = 30
        run = qemu.boot(1, "policy=lottery quantum=1ms seed=3 " + " ".join(
            f"job=synth:procs=1,iters=6000,grain=2000,tickets={tickets[j]}" for j in (1, 2)),
            kernel=lottery_build / "kernel.elf", timeout=300, deterministic=True)
        assert_all_ok(run)
        ends = {r["job"]: r["end_us"] for r in run.results}
        assert ends[rich] < ends[3 - rich], ends
        by_job = {r["job"]: r for r in run.results}
        assert by_job[rich]["preempts"] >= 20, by_job     # it was preempted for a draw, with the other waiting


def test_private_storage_too_large_for_its_struct_fails_to_compile(tmp_path):
    """SCHED_PRIV checks the policy's struct against the space at compile time (here in the simulator's build,
    which compiles policy files the kernel's way)."""
    src = (REPO_ROOT / "tests/policies/lottery.c").read_text()
    big = tmp_path / "big.c"
    big.write_text(src.replace('"lottery"', '"big"').replace("lottery_class", "big_class")
                   .replace("long turn_left;", "long turn_left; char pad[4096];"))
    seed_sim_build(tmp_path / "sim")
    done = subprocess.run(["make", "--no-print-directory", f"SIM_OUT={tmp_path}/sim", f"EXTRA_POLICIES={big}",
                           f"{tmp_path}/sim/schedlab-sim"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and "SCHED_PRIV" in done.stderr, done.stderr[-2000:]


def broken_policy(tmp_path, hook):
    """lottery.c renamed 'broken', with one hook left out of its struct sched_class."""
    src = (REPO_ROOT / "tests/policies/lottery.c").read_text()
    line = re.search(rf"^    \.{hook} = (\w+),\n", src, re.M)
    assert line, hook
    src = re.sub(rf"^static (.*\b{line[1]}\()", r"__attribute__((unused)) static \1", src.replace(line[0], ""),
                 flags=re.M)                               # its function stays, unused
    path = tmp_path / "broken.c"
    path.write_text(src.replace('"lottery"', '"broken"').replace("lottery_class", "broken_class"))
    return path


@pytest.mark.qemu
def test_a_missing_hook_is_named_at_boot(tmp_path):
    """Before: PANIC 0 instruction-page-fault 0x0 0x0, the first time the core called the hook. Now every
    policy built is checked at boot, chosen or not, and the PANIC names it, the hook, and what to do (the
    default build: the boot check is no KCHECKS check)."""
    path = broken_policy(tmp_path, "pick_next")
    out = REPO_ROOT / "build" / "policy-broken"
    with build_lock(out):
        seed_kernel_build(out)
        done = subprocess.run(["make", "-s", f"B={out}", f"EXTRA_POLICIES={path}", f"{out}/kernel.elf"],
                              cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    for bootargs in ("policy=broken job=synth", "job=synth"):
        run = qemu.boot(1, bootargs, kernel=out / "kernel.elf", timeout=120)
        assert run.exit_code == 3 and len(run.panics) == 1, run.console[-2000:]
        assert "policy 'broken' has no pick_next hook" in run.panics[0], run.panics
        assert "enqueue and pick_next are mandatory" in run.panics[0], run.panics
        assert not run.results


def sim_of(tmp_path, path, scenario="job=synth:procs=2,iters=5"):
    seed_sim_build(tmp_path / "sim")          # the simulator's own files as make sim built them: only `path` is new
    done = subprocess.run(["make", "--no-print-directory", f"SIM_OUT={tmp_path}/sim", f"EXTRA_POLICIES={path}",
                           f"{tmp_path}/sim/schedlab-sim"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return subprocess.run([f"{tmp_path}/sim/schedlab-sim", "--cpus", "2", scenario],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("hook", ["enqueue", "pick_next"])
def test_a_missing_hook_is_named_by_the_simulator(tmp_path, hook):
    run = sim_of(tmp_path, broken_policy(tmp_path, hook))
    # the simulator speaks the kernel's contract: a PANIC line on the console, exit 3 (a bug, not bad input)
    assert run.returncode == 3 and "RESULT" not in run.stdout, (run.stdout, run.stderr)
    panics = [line for line in run.stdout.splitlines() if line.startswith("PANIC ")]
    assert len(panics) == 1 and f"policy 'broken' has no {hook} hook" in panics[0], (run.stdout, run.stderr)


@pytest.mark.parametrize("hook", ["tick", "blocked", "exited", "job_done"])
def test_an_optional_hook_may_be_left_out(tmp_path, hook):
    """Before, every hook but ipi was mandatory (an empty function where a policy had nothing to do); now a
    NULL hook means what sched.h says (tick: no preemption; the others: nothing), and the run is whole."""
    run = sim_of(tmp_path, broken_policy(tmp_path, hook), "policy=broken job=synth:procs=2,iters=5 job=sleeper:iters=3")
    assert run.returncode == 0 and "PANIC" not in run.stdout, (run.stdout, run.stderr)
    assert "SUMMARY policy=broken" in run.stdout and "failed=0" in run.stdout, run.stdout


def test_proc_new_without_abandoned_is_named(tmp_path):
    """What proc_new took must be given back if the process never becomes ready: a policy with proc_new and
    no abandoned hook is a PANIC at boot (here the simulator's, the same check of classes.c)."""
    src = (REPO_ROOT / "tests/policies/fifo.c").read_text()
    assert "    .enqueue = fifo_enqueue," in src, "tests/policies/fifo.c changed"
    path = tmp_path / "binder.c"
    path.write_text(src.replace('"fifo"', '"binder"').replace("fifo_class", "binder_class")
                    .replace("fifo_wake", "binder_wake")
                    .replace("static struct runq queue;",
                             "static struct runq queue;\nstatic void binder_new(struct proc *p) { p->hart = 0; }")
                    .replace("    .enqueue = fifo_enqueue,", "    .proc_new = binder_new,\n    .enqueue = fifo_enqueue,"))
    run = sim_of(tmp_path, path)
    panics = [line for line in run.stdout.splitlines() if line.startswith("PANIC ")]
    assert run.returncode == 3 and len(panics) == 1, (run.stdout, run.stderr)
    assert "policy 'binder' has proc_new but no abandoned hook" in panics[0], panics


# ---------------------------------------------------------------- the contract asserted (KCHECKS, hooks.h)

@pytest.fixture(scope="module")
def rogue_kernel():
    return build("policy-rogue", "tests/policies/rogue.c") / "kernel.elf"


@pytest.mark.qemu
def test_a_policy_keeping_the_rules_passes_the_checks(rogue_kernel):
    run = qemu.boot(2, "policy=rogue rogue=none timeout=60s job=gauss:n=64,barrier=block job=sleeper:iters=3 "
                       "job=kbench:what=futex,procs=2,ops=100", kernel=rogue_kernel, timeout=300)
    assert_all_ok(run)


@pytest.mark.qemu
@pytest.mark.parametrize("rule, cpus, job, says", [
    ("pick", 1, "job=sleeper:iters=3",
     r"policy 'rogue' hook pick_next on hart 0 returned process 1\.0 in state (BLOCKED|FREE|ZOMBIE): it must return "
     r"a READY process"),
    ("elsewhere", 2, "job=synth:procs=2,iters=20",
     r"policy 'rogue' hook pick_next on hart \d returned process 1\.\d bound to hart \d: it must return a process "
     r"with p->hart == c->id"),
    ("print", 1, "job=synth:iters=20", r"policy 'rogue' hook enqueue printed \(a line beginning 'rogue: enqueue "
                                       r"1\.0'\): a hook must not print"),
    ("block", 1, "job=synth:iters=200000", r"policy 'rogue' hook tick blocked: .*a hook must not block"),
])
def test_a_hook_breaking_the_contract_is_a_panic_naming_it(rogue_kernel, rule, cpus, job, says):
    """Before: a policy that returned a blocked process ran it anyway (the kernel never looked), one that printed
    from a hook printed, one that blocked in a hook switched a process out from under its own trap."""
    run = qemu.boot(cpus, f"policy=rogue rogue={rule} quantum=1ms timeout=60s {job}", kernel=rogue_kernel,
                    timeout=300)
    assert run.exit_code == 3 and len(run.panics) == 1 and not run.timed_out, run.console[-2000:]
    assert re.search(says, run.panics[0]), run.panics
    assert "rogue: enqueue" not in run.console.replace(run.panics[0], ""), run.console[-2000:]   # nothing printed
