#!/bin/bash
# An NVSHMEM wheel packed small enough to carry to the GPU machine (whose
# device calls take at most 64 MiB with the repository):
#   tests/nvshmem/pack-wheel.sh WHEEL OUT.tar.xz
# WHEEL: nvidia_nvshmem_cu13-<V>-...whl (python3 -m pip download --no-deps
# --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64
# nvidia-nvshmem-cu13==V). Keeps include/ and lib/ (host library, libfabric
# transport, bootstraps, libnvshmem_device.a); leaves out the device bitcode
# (libnvshmem_device.bc) and the transports efabench never loads (ucx, ibrc,
# ibgda, ibdevx); zeroes the host library's __nv_relfatbin section (relocatable
# device code for a device link, not used at run time: 3.6.5 then packs to 16
# MB instead of 34, and its seed, smoke and fabrics runs were the same on the
# H200 machine). Check each new version before relying on it: the section's
# name and use are NVSHMEM's, not promised. Unpack there with
#   mkdir -p /tmp/nv && tar xJf OUT.tar.xz -C /tmp/nv   (then NVSHMEM_HOME=/tmp/nv)
set -eu
W=${1:?usage: tests/nvshmem/pack-wheel.sh WHEEL OUT.tar.xz}
OUTF=${2:?usage: tests/nvshmem/pack-wheel.sh WHEEL OUT.tar.xz}
command -v readelf >/dev/null || { echo "pack-wheel: needs readelf (binutils)" >&2; exit 2; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$W" "$t"
nv=$t/nvidia/nvshmem
[ -f "$nv/include/nvshmem.h" ] || { echo "pack-wheel: $W holds no nvidia/nvshmem/include/nvshmem.h" >&2; exit 1; }
host=$(ls "$nv"/lib/libnvshmem_host.so.* | head -1)
# the section's file offset and size (readelf -SW: [Nr] Name Type Address Off Size ...)
read -r off size < <(readelf -SW "$host" | awk '$2 == "__nv_relfatbin" { print $5, $6 } $3 == "__nv_relfatbin" { print $6, $7 }')
if [ -n "${off:-}" ]; then
	python3 - "$host" "$off" "$size" <<'EOF'
import sys
path, off, size = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16)
with open(path, "r+b") as f:
    f.seek(off)
    f.write(b"\0" * size)
print("pack-wheel: zeroed __nv_relfatbin (%d bytes at %#x) of %s" % (size, off, path.split("/")[-1]))
EOF
else
	echo "pack-wheel: no __nv_relfatbin section in $(basename "$host"): packed as it is"
fi
tar -C "$nv" -cJf "$OUTF" --exclude='*.bc' --exclude='*ucx*' --exclude='*ibrc*' --exclude='*ibgda*' \
	--exclude='*ibdevx*' include lib
echo "pack-wheel: $OUTF, $(du -h "$OUTF" | cut -f1)"
