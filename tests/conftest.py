"""Shared fixtures for the test suite.

QEMU tests take the ``boot`` fixture (or carry ``@pytest.mark.qemu``) and get a
callable that boots build/kernel.elf once and returns the harness's parsed
``Run`` (tools/py/schedlab/qemu.py), the same object ``schedlab run`` uses:

    def test_gauss_ok(boot):
        run = boot(2, "policy=gang job=gauss:n=64")
        assert run.exit_code == 0 and not run.timed_out
        assert [r["check"] for r in run.results] == ["ok"]
        assert run.summary["failed"] == 0

``boot(cpus, bootargs, timeout=BOOT_TIMEOUT, extra=(), deterministic=False, model=None)``:
``bootargs`` is a string or a list of tokens, ``extra`` extra QEMU arguments
(string or list).  ``deterministic=True`` boots with ``clock=virtual`` under
QEMU ``-icount`` on one host thread (kernel/vclock.h): the console is the same
bytes on every boot and every host, so tests of schedule invariants use it and
need no allowance for a busy host stalling a hart's thread. ``model="<profile>[,key=value...]"`` boots
under the machine model (tools/model/README.md).
The Run has ``.results`` (list of dicts, ints/floats typed), ``.summary``
(dict or None), ``.boot`` (the BOOT line as a dict or None), ``.errors`` and
``.panics`` (the lines verbatim), ``.exit_code`` (None if killed),
``.timed_out``, ``.ok``, ``.console`` (raw text) and ``.traces``.

When the kernel ELF or QEMU is missing every QEMU test is skipped with the
reason, unless SCHEDLAB_REQUIRE_QEMU=1 (then they fail instead, so CI cannot
pass by skipping).  SCHEDLAB_TEST_TIMEOUT sets the default per-boot timeout.
SCHEDLAB_TEST_KERNEL boots another build's kernel (e.g. one made with
EXTRA_POLICIES=) in place of build/kernel.elf.

Tests generic over policies take them from the build, never from a list:
a test with a ``policy`` argument (and no parametrize of its own for it) runs
once per policy the kernel's BOOT line lists (``policies=``), and one with a
``sim_policy`` argument once per policy the simulator lists (its BOOT line;
$SCHEDLAB_SIM, else build/sim). Each list is learnt from one short boot, at
collection. So a new policy file gets every invariant and hostile check the
built-ins get:

    def test_x(boot, policy):
        run = boot(2, f"policy={policy} job=gauss")

Tests of the harness take ``fake`` instead: tests/fake_qemu.py as QEMU and a dummy kernel, with helpers to
play a recorded console (``fake.replay``), play a tiny kernel (``fake.sim``) and read the argv of each boot;
``helpers.run_cli(fake, "run", ...)`` runs the command against it in-process.

The package ``schedlab`` (tools/py) is imported as it is, installed or not: pyproject.toml's pytest section
puts tools/py and tests/ on the path.
"""

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from schedlab import busy, qemu, sim
from helpers import CONSOLES, RECORDED, recorded

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The fake QEMU the ``fake`` fixture runs (a Python script: see its docstring).
FAKE_QEMU = REPO_ROOT / "tests" / "fake_qemu.py"

#: Seconds one test boot may take before the harness kills QEMU (generous: CI hosts are slow).
BOOT_TIMEOUT = float(os.environ.get("SCHEDLAB_TEST_TIMEOUT", "300"))
#: The scenario that makes a build print its BOOT line and end at once.
LISTING_BOOT = "calib=off timeout=60s job=synth:procs=1,iters=1"


# The tests' own make commands (make qemu, make -n, builds elsewhere with EXTRA_POLICIES=) build with the KCHECKS=
# of the build under test: make test and make check export theirs (1), and a plain `pytest` after a plain
# `make` gets its 0 from the stamp. Otherwise the first such command would flip the stamp and rebuild
# build/kernel.elf while other tests (another pytest-xdist worker) boot it.
_KCHECKS_STAMP = REPO_ROOT / "build" / "kernel" / "kchecks.stamp"
if "KCHECKS" not in os.environ and _KCHECKS_STAMP.is_file():
    os.environ["KCHECKS"] = _KCHECKS_STAMP.read_text().strip() or "0"


def kernel_under_test() -> Path:
    """The kernel the QEMU tests boot: $SCHEDLAB_TEST_KERNEL, else build/kernel.elf."""
    return Path(os.environ.get("SCHEDLAB_TEST_KERNEL") or qemu.DEFAULT_KERNEL)


def qemu_missing_reason() -> str | None:
    """Why QEMU tests cannot run here, or None if the kernel and QEMU are both present."""
    kernel = kernel_under_test()
    if not kernel.is_file():
        where = kernel.relative_to(REPO_ROOT) if kernel.is_relative_to(REPO_ROOT) else kernel
        return f"{where} is missing: run `make` first"
    binary = qemu.qemu_binary()[0]
    if shutil.which(binary) is None:
        return f"{binary} is not installed (Debian: apt install qemu-system-misc)"
    return None


def _needs_qemu(item) -> bool:
    return item.get_closest_marker("qemu") is not None or "boot" in getattr(item, "fixturenames", ())


def pytest_configure(config):
    config.addinivalue_line("markers", "qemu: boots the kernel under QEMU (skipped if the kernel or QEMU is missing)")
    config.addinivalue_line("markers", "check: the fast tier, `make check` (pytest -m check): CHECK_TIER below")


# ---------------------------------------------------------------- the fast tier (make check)

#: `make check`, the edit-test loop's tier (under 2 minutes on 2 cores, with the host unit tests): the simulator's
#: tests (every module, its QEMU comparisons left to make test) and a few boots per policy - each policy of the
#: build boots its invariant, hostile and determinism checks once or twice. Module -> test names (None: every
#: test of the module that boots no QEMU). `make test` runs everything, these included.
CHECK_TIER = {
    "test_sim.py": None, "test_sim_loops.py": None, "test_sim_memory.py": None, "test_sim_startup.py": None,
    "test_sim_threads.py": None, "test_core_sim.py": None, "test_docs.py": None, "test_profiles.py": None,
    "test_determinism.py": ["test_two_boots_print_the_same_bytes"],
    "test_reliability.py": ["test_a_process_exiting_with_an_error_ends_its_job"],
    "test_chaos.py": ["test_neighbours_of_chaos_are_unaffected"],
    "test_intr.py": ["test_direct_paths_under_every_policy"],
    "test_boot.py": ["test_boots_on_n_harts"],
}
#: ... but not these: the simulator's reproduce sections (the docs' pipeline, 10-20 s) stay in make test.
CHECK_TIER_SKIP = {"test_sixteen_processor_sections_are_complete_and_reproducible"}


def _in_check_tier(item) -> bool:
    names = CHECK_TIER.get(Path(str(item.fspath)).name, ())
    if getattr(item, "originalname", item.name) in CHECK_TIER_SKIP:
        return False
    if names is None:
        return not _needs_qemu(item)
    return getattr(item, "originalname", item.name) in names


_listed: dict = {}


def _listing(what: str, run) -> list[str]:
    listed = (run.boot or {}).get("policies")
    if not listed or not run.ok:
        raise pytest.UsageError(f"{what} printed no BOOT line with policies= and a clean run for "
                                f"{LISTING_BOOT!r}:\n{run.console[-1500:]}")
    return listed


def built_policies() -> tuple[list[str] | None, str]:
    """The policies of the kernel under test (BOOT ``policies=``), or None and why there are none to test."""
    if "kernel" not in _listed:
        reason = qemu_missing_reason()
        if reason is not None:
            if os.environ.get("SCHEDLAB_REQUIRE_QEMU") == "1":
                raise pytest.UsageError(f"SCHEDLAB_REQUIRE_QEMU=1 but {reason}")
            _listed["kernel"] = None, f"QEMU test: {reason}"
        else:
            run = qemu.boot(1, LISTING_BOOT, kernel=kernel_under_test(), timeout=BOOT_TIMEOUT)
            _listed["kernel"] = _listing(str(kernel_under_test()), run), ""
    return _listed["kernel"]


def sim_policies() -> tuple[list[str] | None, str]:
    """The policies of the simulator under test (its BOOT ``policies=``), or None and why."""
    if "sim" not in _listed:
        if not sim.sim_binary().is_file():
            _listed["sim"] = None, f"simulator {sim.sim_binary()} not found: build it with `make sim`"
        else:
            _listed["sim"] = _listing(str(sim.sim_binary()), sim.sim_boot(1, LISTING_BOOT, timeout=BOOT_TIMEOUT)), ""
    return _listed["sim"]


def _parametrizes(metafunc, name: str) -> bool:
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if name in names:
            return True
    return False


def pytest_generate_tests(metafunc):
    """``policy`` / ``sim_policy``: every policy of the build under test (module docstring)."""
    for name, listing in (("policy", built_policies), ("sim_policy", sim_policies)):
        if name in metafunc.fixturenames and not _parametrizes(metafunc, name):
            policies, why = listing()
            metafunc.parametrize(name, policies if policies else
                                 [pytest.param(None, id="no-build", marks=pytest.mark.skip(reason=why))])


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _in_check_tier(item):
            item.add_marker(pytest.mark.check)
    reason = qemu_missing_reason()
    if reason is None or os.environ.get("SCHEDLAB_REQUIRE_QEMU") == "1":
        return
    skip = pytest.mark.skip(reason=f"QEMU test: {reason}")
    for item in items:
        if _needs_qemu(item):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def boot():
    """A callable ``boot(cpus, bootargs, timeout=BOOT_TIMEOUT, extra=())`` -> parsed ``Run``."""
    reason = qemu_missing_reason()
    if reason is not None:
        if os.environ.get("SCHEDLAB_REQUIRE_QEMU") == "1":
            pytest.fail(f"SCHEDLAB_REQUIRE_QEMU=1 but {reason}")
        pytest.skip(f"QEMU test: {reason}")

    def _boot(cpus, bootargs, timeout=BOOT_TIMEOUT, extra=(), deterministic=False, model=None):
        return qemu.boot(cpus, bootargs, kernel=kernel_under_test(), timeout=timeout, extra=extra,
                         deterministic=deterministic, model=model)

    return _boot


#: The real busy-host check, for the tests of the check itself (the ``busy_check`` fixture).
REAL_ASSESS = busy.assess


def _quiet(run):
    run.busy = busy.Verdict()
    return run.busy


@pytest.fixture(autouse=True)
def quiet_host(monkeypatch, tmp_path_factory):
    """Every test sees a quiet host: the busy-host flag (busy.py) must never change a test's verdict with the
    machine's load or a recorded console's calibration card. The flag's own tests take ``busy_check``."""
    monkeypatch.setattr(busy, "assess", _quiet)
    monkeypatch.setattr(busy, "QUIET_CARDS", tmp_path_factory.mktemp("calib") / "quiet-cards.json")


@pytest.fixture
def busy_check(monkeypatch):
    """The real check, with a fake host: set ``.load`` (a busy.HostLoad) to what the host should look like."""
    class Host:
        load = busy.HostLoad(0.0, 2, ())
    host = Host()
    monkeypatch.setattr(busy, "assess", REAL_ASSESS)
    monkeypatch.setattr(busy, "host_load", lambda: host.load)
    return host


# ---------------------------------------------------------------- the fake QEMU (harness tests)

@pytest.fixture
def fake(tmp_path, monkeypatch):
    """tests/fake_qemu.py on SCHEDLAB_QEMU, a dummy kernel, and helpers to set it up and read its argv log."""
    kernel = tmp_path / "kernel.elf"
    kernel.write_bytes(b"\x7fELF")
    log = tmp_path / "argv.log"
    monkeypatch.setenv("SCHEDLAB_QEMU", f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_QEMU))}")
    monkeypatch.setenv("FAKE_QEMU_LOG", str(log))
    monkeypatch.setattr(qemu.os, "cpu_count", lambda: 2)

    class Fake:
        path = tmp_path
        kernel_path = str(kernel)

        def canned(self, text, exit_code=0, mode="canned"):
            console_file = tmp_path / "console.txt"
            console_file.write_bytes(text.encode())
            monkeypatch.setenv("FAKE_QEMU_MODE", mode)
            monkeypatch.setenv("FAKE_QEMU_CONSOLE", str(console_file))
            monkeypatch.setenv("FAKE_QEMU_EXIT", str(exit_code))
            monkeypatch.setenv("FAKE_QEMU_PIDFILE", str(tmp_path / "child.pid"))

        def replay(self, name, mode="canned"):
            """Play the recorded console `name` with the exit status its boot had."""
            self.canned(recorded(name), exit_code=RECORDED[name]["exit"], mode=mode)

        def sim(self, policies="timeslice,gang,partition"):
            monkeypatch.setenv("FAKE_QEMU_MODE", "sim")
            monkeypatch.setenv("FAKE_QEMU_TEMPLATE", str(CONSOLES / "gang-trace.console"))
            monkeypatch.setenv("FAKE_QEMU_POLICIES", policies)

        def calls(self):
            if not log.exists():
                return []
            return [json.loads(line) for line in log.read_text().splitlines()]

        def bootargs(self):
            return [argv[argv.index("-append") + 1] for argv in self.calls()]

    return Fake()
