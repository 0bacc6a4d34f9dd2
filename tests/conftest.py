"""Shared fixtures for the test suite.

QEMU tests take the ``boot`` fixture (or carry ``@pytest.mark.qemu``) and get a
callable that boots build/kernel.elf once and returns the harness's parsed
``Run`` (tools/schedlab_harness/qemu.py), the same object ``schedlab run`` uses:

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
"""

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tools"))

from schedlab_harness import busy, qemu  # noqa: E402

#: Seconds one test boot may take before the harness kills QEMU (generous: CI hosts are slow).
BOOT_TIMEOUT = float(os.environ.get("SCHEDLAB_TEST_TIMEOUT", "300"))


def qemu_missing_reason() -> str | None:
    """Why QEMU tests cannot run here, or None if the kernel and QEMU are both present."""
    if not qemu.DEFAULT_KERNEL.is_file():
        return f"{qemu.DEFAULT_KERNEL.relative_to(REPO_ROOT)} is missing: run `make` first"
    binary = qemu.qemu_binary()[0]
    if shutil.which(binary) is None:
        return f"{binary} is not installed (Debian: apt install qemu-system-misc)"
    return None


def _needs_qemu(item) -> bool:
    return item.get_closest_marker("qemu") is not None or "boot" in getattr(item, "fixturenames", ())


def pytest_configure(config):
    config.addinivalue_line("markers", "qemu: boots the kernel under QEMU (skipped if the kernel or QEMU is missing)")


def pytest_collection_modifyitems(config, items):
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
        return qemu.boot(cpus, bootargs, timeout=timeout, extra=extra, deterministic=deterministic, model=model)

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
