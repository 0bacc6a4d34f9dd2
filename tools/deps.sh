#!/bin/sh
# Install what schedlab needs: the RISC-V cross compiler, QEMU, a host C compiler, gdb-multiarch (make qemu-gdb),
# Python 3 with pytest (and pytest-xdist: make test on every core), numpy and tqdm (tools/schedlab sweep, confidence intervals), matplotlib (plots) and
# perfetto (native Perfetto traces), distributed (Dask: --executor), MkDocs with mkdocstrings-python (make docs) and Chromium (the
# docs site's browser test), and the harness itself as a package (pip install -e .: the schedlab command). Debian/Ubuntu via
# apt-get; elsewhere it says what to install.
# Idempotent: installs only what is missing.
set -e

need_apt=""
command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 || need_apt="$need_apt gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf"
command -v qemu-system-riscv64 >/dev/null 2>&1 || need_apt="$need_apt qemu-system-misc"
[ -e /usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin ] || [ -e /usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.elf ] \
    || need_apt="$need_apt qemu-system-data"
command -v cc >/dev/null 2>&1 || need_apt="$need_apt gcc libc6-dev"
command -v make >/dev/null 2>&1 || need_apt="$need_apt make"
# make qemu-gdb: a GDB that knows RISC-V (Debian's gdb-multiarch)
command -v gdb-multiarch >/dev/null 2>&1 || need_apt="$need_apt gdb-multiarch"
command -v python3 >/dev/null 2>&1 || need_apt="$need_apt python3 python3-pip"
# tests/test_docs_browser.py opens the built site in headless Chromium (Debian's package; skipped without it)
command -v chromium >/dev/null 2>&1 || need_apt="$need_apt chromium"

if [ -n "$need_apt" ]; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        echo "deps: installing$need_apt"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need_apt >/dev/null
    else
        echo "deps: please install:$need_apt (the Debian package names; use your system's equivalents)" >&2
        exit 1
    fi
fi

pip_install() {
    python3 -m pip install -q "$@" 2>/dev/null || python3 -m pip install -q --break-system-packages "$@"
}
if ! python3 -c 'import pytest' 2>/dev/null; then
    echo "deps: pip installing pytest"
    pip_install pytest
fi
# pytest-xdist: make test and make check run the tests on every core (-n); without it they run on one
if ! python3 -c 'import xdist.scheduler.worksteal' 2>/dev/null; then
    echo "deps: pip installing pytest-xdist"
    pip_install 'pytest-xdist>=3.2' || echo "deps: warning: pytest-xdist could not be installed; make test will run on one core" >&2
fi
# numpy: the bootstrap confidence intervals of compare and sweep; tqdm: sweep's progress bar
for module in numpy tqdm; do
    if ! python3 -c "import $module" 2>/dev/null; then
        echo "deps: pip installing $module"
        pip_install "$module"
    fi
done
# matplotlib draws Gantt charts and sweep plots; nothing else needs it, so a failed install is only a warning
if ! python3 -c 'import matplotlib' 2>/dev/null; then
    echo "deps: pip installing matplotlib (optional)"
    pip_install matplotlib || echo "deps: warning: matplotlib could not be installed; plots will be unavailable" >&2
fi
# perfetto writes the native .pftrace of `schedlab trace` (its protos); without it only that file is missing
if ! python3 -c 'import perfetto.trace_builder.proto_builder' 2>/dev/null; then
    echo "deps: pip installing perfetto"
    pip_install perfetto || echo "deps: warning: perfetto could not be installed; .pftrace traces will be unavailable" >&2
fi
# distributed (Dask) runs boots on a cluster (--executor dask://HOST:PORT; tests/test_executor.py's LocalCluster
# test); without it everything else works and that test is skipped
if ! python3 -c 'import distributed' 2>/dev/null; then
    echo "deps: pip installing distributed (Dask)"
    pip_install distributed || echo "deps: warning: distributed could not be installed; --executor dask:// will be unavailable" >&2
fi
# MkDocs builds the documentation site (make docs, mkdocs.yml), mkdocstrings-python its Python API page from the
# docstrings; tests/test_docs_browser.py builds it too
if ! python3 -c 'import mkdocs, mkdocstrings_handlers.python' 2>/dev/null; then
    echo "deps: pip installing mkdocs and mkdocstrings-python"
    pip_install mkdocs mkdocstrings-python
fi
# The harness as a package (pyproject.toml): the `schedlab` command and `python3 -m schedlab`, editable so it
# follows this checkout (tools/schedlab runs the same without it). setuptools >= 64 with wheel builds it in place;
# without one, pip fetches it (build isolation).
here=$(cd "$(dirname "$0")/.." && pwd)
installed=$(cd / && python3 -c 'import os, schedlab; print(os.path.dirname(os.path.dirname(os.path.realpath(schedlab.__file__))))' 2>/dev/null || true)
if [ "$installed" != "$here/tools/py" ] || ! command -v schedlab >/dev/null 2>&1; then
    echo "deps: pip installing the harness (pip install -e $here: the schedlab command)"
    isolation=""
    python3 -c 'import setuptools, sys, wheel; sys.exit(int(setuptools.__version__.split(".")[0]) < 64)' 2>/dev/null \
        && isolation="--no-build-isolation"
    pip_install $isolation -e "$here" \
        || echo "deps: warning: the schedlab command could not be installed; tools/schedlab works without it" >&2
fi
# clang is optional: `make fuzz` uses its libFuzzer, and falls back to the standalone fuzzer without it
command -v clang >/dev/null 2>&1 || echo "deps: note: clang is not installed (optional: apt-get install clang, for make fuzz)"
command -v clang-format >/dev/null 2>&1 || echo "deps: note: clang-format is not installed (optional: apt-get install clang-format, for make format)"
echo "deps: ok ($(riscv64-unknown-elf-gcc --version | head -n1); $(qemu-system-riscv64 --version | head -n1))"
