"""Every policy passes its own check: schedlab check's quick battery, judged by the battery's definitions
(battery.judge: contract, progress, and what the policy's own 'schedlab check:' block declares - work
conservation, its share, its invariants) - the one definition of each property the suite has.

* Every policy of the kernel under test (conftest's ``policy``: its BOOT line, so a kernel built with
  EXTRA_POLICIES gets it too) on the quick battery's QEMU topologies (2 harts, and 2 perturbed), in
  deterministic mode, and every policy of the simulator (``sim_policy``) at 8 simulated harts. Each case is
  booted once per session (check_boots.py): test_chaos.py reads the contract mix's boot as well.
* Every policy file of the test tree (tests/policies/*.c) on the same QEMU topologies, in one kernel
  that carries them all (check_boots.tree_build, shared with test_check_rubric.py).
"""

import pytest

from check_boots import (TEST_POLICIES, battery_session, cases_on, declaration_of, failures, judged, topology,
                         tree_build)
from conftest import kernel_under_test
from schedlab.check import battery, declare

QEMU = [t.name for t in battery.QUICK if t.engine == "qemu"]
SIM = [t.name for t in battery.QUICK if t.engine == "sim"]


def own_check(session, policy, decl, topo, kernel):
    """Judge every case of ``topo``'s quick battery; assert that nothing failed; return {check: [statuses]}."""
    statuses, failed = {}, {}
    for case in cases_on(policy, decl, topo).values():
        run, verdicts = judged(session, case, decl, kernel)
        for v in verdicts:
            statuses.setdefault(v.check, []).append(v.status)
        for line in failures(verdicts):
            failed.setdefault(line.split(":")[0], []).append(f"{case.id}: {line}")
    assert not failed, failed
    return statuses


def assert_judged(statuses, decl, topo):
    """Every declared property was judged (passed) somewhere on ``topo``, not skipped for want of a trace."""
    assert "pass" in statuses["contract"], statuses
    if topology(topo).perturb:                        # perturbed: the contract and the order invariants only
        return
    declared = {"progress": decl.progress, "work-conservation": decl.work_conserving,
                "fairness": decl.share != "none", "invariants": bool(decl.invariants)}
    for check, wanted in declared.items():
        assert ("pass" in statuses[check]) == bool(wanted), (check, statuses[check])


@pytest.mark.qemu
@pytest.mark.parametrize("topo", QEMU)
def test_every_policy_passes_its_own_check(battery_session, policy, topo):
    decl = declaration_of(policy)
    assert_judged(own_check(battery_session, policy, decl, topo, kernel_under_test()), decl, topo)


@pytest.mark.check
@pytest.mark.parametrize("topo", SIM)
def test_every_policy_passes_its_own_check_in_the_simulator(battery_session, sim_policy, topo):
    decl = declaration_of(sim_policy)
    assert_judged(own_check(battery_session, sim_policy, decl, topo, kernel_under_test()), decl, topo)


@pytest.fixture(scope="module")
def tree_targets():
    return tree_build()


@pytest.mark.qemu
@pytest.mark.parametrize("topo", QEMU)
@pytest.mark.parametrize("source", sorted(p.name for p in TEST_POLICIES.glob("*.c")))
def test_every_test_tree_policy_passes_its_own_check(battery_session, tree_targets, source, topo):
    path = TEST_POLICIES / source
    policy = declare.policy_name(path)
    decl = declare.declaration(policy, path)
    assert_judged(own_check(battery_session, policy, decl, topo, tree_targets[policy].kernel), decl, topo)
