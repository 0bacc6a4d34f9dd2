#!/bin/sh
# qemu_api.sh [QEMU] - the TCG plugin API version to build tools/model's plugin for, from QEMU's version
# (tools/model/qemu_api.h lists what each version changed): 1 before QEMU 9.0, 2 for 9.0, 3 from 9.1 on (QEMU
# 9.1-10.x accept 3). Prints 1 when QEMU is not installed, so a build without QEMU still has a plugin for 7.2.
qemu=${1:-qemu-system-riscv64}
v=$("$qemu" --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n1)
set -- $v
major=${1:-0}
minor=${2:-0}
if [ "$major" -lt 9 ]; then echo 1
elif [ "$major" -eq 9 ] && [ "$minor" -eq 0 ]; then echo 2
else echo 3
fi
