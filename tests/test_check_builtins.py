"""Every policy of the build passes its own check: the battery's churn and share mixes at 8 simulated harts,
judged by schedlab check's definitions (battery.judge: contract, progress, and what the policy's own
'schedlab check:' block declares - work conservation, its share, its invariants). Generic over the
simulator's policies (conftest's ``sim_policy``: a policy file built in with EXTRA_POLICIES gets it too; one
whose file is not in the tree is judged on contract and progress). Simulated runs take a fraction of a
second, so this is make check's tier; `schedlab check <policy>` runs the whole battery, QEMU included.
"""

import pytest

from schedlab import sim
from schedlab.check import battery, declare

pytestmark = pytest.mark.check

TOPOLOGY = next(t for t in battery.FULL if t.name == "sim-8")


def test_every_policy_passes_its_own_check_in_the_simulator(sim_policy):
    decl = declare.declaration(sim_policy)
    for case in battery.cases(sim_policy, decl, [TOPOLOGY]):
        run = sim.sim_boot(TOPOLOGY.harts, case.tokens, timeout=120, charge=False)
        verdicts = battery.judge(case, run, decl)
        failed = [f"{v.check}: {v.detail}" for v in verdicts if v.status == "fail"]
        assert not failed, (case.id, failed)
        judged = {v.check for v in verdicts if v.status == "pass"}
        assert {"contract", "progress"} <= judged, (case.id, verdicts)
        if decl.share != "none" and case.mix == "share":
            assert "fairness" in judged
