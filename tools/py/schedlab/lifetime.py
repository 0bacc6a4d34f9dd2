"""A child that dies with the harness: QEMU runs in a session of its own (qemu.py), so
SIGINT at the terminal misses it and the harness kills it on the way out; SIGKILL of the harness (or of a Dask
worker) leaves no way out, so the kernel must do it: Linux's parent-death signal (prctl PR_SET_PDEATHSIG).

It fires when the *thread* that started the child ends; qemu.boot's thread waits for QEMU, so it ends first
only when the whole process dies. It survives exec (of taskset, then QEMU: neither is set-user-ID).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal

PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's prctl, looked up now (never in a forked child), or None off Linux."""
    if not os.uname().sysname == "Linux":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def die_with_parent():
    """A ``preexec_fn`` for ``subprocess.Popen`` that makes the child get SIGKILL when this process dies
    (None where the platform has no parent-death signal)."""
    if _PRCTL is None:
        return None
    parent = os.getpid()

    def preexec():
        _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:      # the parent died before the signal was armed
            os._exit(1)
    return preexec
