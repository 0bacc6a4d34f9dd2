"""The harness's own inputs, checked before anything boots: each check returns the value in the
form the harness uses or raises ``HarnessError`` with one line naming the input and what was expected, so a
user's mistake is never a traceback nor retried as an infrastructure failure.
"""
from __future__ import annotations

import argparse
import ipaddress
import re
import shlex

from .mix import token_key
from .qemu import HarnessError

#: The most boots per configuration a command takes: every boot is kept (tables, records), so a bound is
#: what keeps memory bounded; a million repeats is no measurement anyway.
MAX_REPEAT = 10_000
#: The most harts (the kernel's and the model's directory's 64).
MAX_CPUS = 64
_DIGITS = re.compile(r"[0-9]+\Z")
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\Z")


def whole_number(name: str, value, low: int = 1, high: int | None = None, unit: str = "") -> int:
    """``value`` as an int in low..high: a real int (not a bool, a float or a string) for the API, digits
    0-9 only for text (``int()`` would take '３' and ' 2 ')."""
    if isinstance(value, str):
        if not _DIGITS.match(value):
            raise HarnessError(f"{name}={value!r}: expected a whole number written in the digits 0-9")
        value = int(value)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise HarnessError(f"{name}={value!r}: expected a whole number (int), got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f"at least {low}"
        raise HarnessError(f"{name}={value}: expected a whole number {bound}{' ' + unit if unit else ''}")
    return value


def argparse_int(low: int, high: int | None = None):
    """An argparse ``type=`` for a whole number in low..high written in 0-9."""
    def parse(text: str) -> int:
        try:
            return whole_number("value", text, low, high)
        except HarnessError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix("value=")) from None
    parse.__name__ = "whole number"
    return parse


def qemu_extra(text) -> list[str]:
    """--qemu-extra (a shell-quoted string, or a list of words) as QEMU's words."""
    if text is None:
        return []
    if isinstance(text, (list, tuple)):
        if not all(isinstance(w, str) for w in text):
            raise HarnessError(f"qemu_extra={list(text)!r}: expected a string or a list of strings")
        return list(text)
    if not isinstance(text, str):
        raise HarnessError(f"qemu_extra={text!r}: expected a string or a list of strings")
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise HarnessError(f"--qemu-extra {text!r}: {exc} (quote it as in a shell: -numa 'node,...')") from None


def executor_address(text) -> str:
    """``dask://HOST:PORT`` (also ``tcp://HOST:PORT`` and ``HOST:PORT``; an IPv6 host in brackets) as the
    ``tcp://`` address distributed takes."""
    expected = "expected dask://HOST:PORT (e.g. dask://127.0.0.1:8786)"
    if not isinstance(text, str) or not text:
        raise HarnessError(f"--executor {text!r}: {expected}")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "dask", text
    if scheme not in ("dask", "tcp"):
        raise HarnessError(f"--executor {text!r}: scheme {scheme + '://'!r} is not dask://: {expected}")
    host, port = _host_port(text, rest, expected)
    return f"tcp://{host}:{port}"


def _host_port(text: str, rest: str, expected: str) -> tuple[str, int]:
    if rest.startswith("["):
        end = rest.find("]")
        host, tail = (rest[1:end], rest[end + 1:]) if end > 0 else ("", "")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise HarnessError(f"--executor {text!r}: {rest!r} is not [IPv6]:PORT: {expected}") from None
        host = f"[{host}]"
    else:
        host, colon, port = rest.partition(":")
        tail = colon + port
        if not _HOST.match(host):
            raise HarnessError(f"--executor {text!r}: no host name: {expected}")
    if not tail.startswith(":") or not _DIGITS.match(tail[1:]) or not 0 < int(tail[1:]) < 65536:
        raise HarnessError(f"--executor {text!r}: no port 1..65535 after the host: {expected}")
    return host, int(tail[1:])


def single_settings(tokens: list[str]) -> None:
    """A setting (every key=value but job=) given twice on one command line is a mistake, not an override:
    ``window=4 window=5`` would run one of them silently."""
    seen: set[str] = set()
    for token in tokens:
        key = token_key(token)
        if key != "job" and key in seen:
            given = [t for t in tokens if token_key(t) == key]
            raise HarnessError(f"{key}= is given twice ({' '.join(given)}): give each setting once")
        seen.add(key)
