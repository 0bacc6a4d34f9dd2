#!/bin/sh
# qemu10.sh - boot schedlab, the machine model and a paced run under Debian 13's QEMU (10.x), which users with a
# newer system have: the plugin must load on their QEMU's plugin API (tools/model/qemu_api.h), not only 7.2's.
#
#   sudo tools/compat/qemu10.sh          (root: debootstrap, chroot, mount)
#
# The first run makes a Debian 13 root with QEMU in $SCHEDLAB_TRIXIE_ROOT (default /var/tmp/schedlab-trixie,
# ~550 MB, a few minutes), later runs reuse it. It builds the plugin for that QEMU's API into build/compat/,
# binds this checkout into the root at the same path, and runs four boots through the harness with that QEMU
# (SCHEDLAB_QEMU): no model, MODEL=modern, 4 paced harts, and 3 harts in deterministic mode (-icount). Each
# must end ok (the model's with its report); the script exits non-zero at the first that does not. Not part of
# make test (it needs the network once, and root).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
root=${SCHEDLAB_TRIXIE_ROOT:-/var/tmp/schedlab-trixie}
cd "$here"
[ "$(id -u)" -eq 0 ] || { echo "qemu10.sh: run as root (debootstrap, chroot and mount need it)" >&2; exit 2; }
if [ ! -x "$root/usr/bin/qemu-system-riscv64" ]; then
    command -v debootstrap >/dev/null || { echo "qemu10.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
    echo "qemu10.sh: making a Debian 13 root with QEMU in $root"
    debootstrap --variant=minbase --include=qemu-system-misc,qemu-system-data trixie "$root" >/dev/null
fi
mkdir -p build/compat
wrapper=$here/build/compat/qemu-system-riscv64
printf '#!/bin/sh\nexec chroot %s qemu-system-riscv64 "$@"\n' "$root" > "$wrapper"
chmod +x "$wrapper"
echo "qemu10.sh: $("$wrapper" --version | head -n1)"
api=$(sh tools/model/qemu_api.sh "$wrapper")
make -s all
make -s B=build/compat MODEL_API="$api" build/compat/model/model.so
echo "qemu10.sh: plugin built for plugin API $api"

mkdir -p "$root$here" "$root/proc" "$root/dev"
cleanup() { umount "$root$here" "$root/proc" "$root/dev" 2>/dev/null || true; }
trap cleanup EXIT INT TERM
mount --bind "$here" "$root$here"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"

export SCHEDLAB_QEMU="$wrapper" SCHEDLAB_MODEL_PLUGIN="$here/build/compat/model/model.so"
check() {   # check PATTERN ARGS... : a run through the harness must exit 0 and print a line matching PATTERN
    pattern=$1; shift
    out=$(tools/schedlab run --allow-busy "$@" 2>&1) || { echo "$out"; echo "qemu10.sh: FAILED: run $*" >&2; exit 1; }
    echo "$out" | grep -E "$pattern" || { echo "$out"; echo "qemu10.sh: FAILED: run $* printed no /$pattern/" >&2; exit 1; }
}
check '^== run 1/1 .* ok ' --cpus 2 job=gauss:n=64
check '^model: profile=modern ' --cpus 2 --model modern job=gauss:n=64
check '^pace: 10000000 ' --cpus 4 --model pace=10000000 job=gauss:n=64
check '^summary: .* failed=0 ' --deterministic --cpus 3 policy=adaptive quantum=200us job=sleeper:iters=10 job=hog job=hog \
    job=hog job=hog
echo "qemu10.sh: ok: QEMU $("$wrapper" --version | head -n1 | sed 's/.*version //') boots schedlab, the model and paced harts"
