# sourced by dA.sh dB.sh dC.sh (device calls of 2026-12-05): timing, the deps carried in .dc
set -u
export EFAB_DEPS=$PWD/.dc
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-580} - ($(date +%s)-t0) )); }
B=$PWD/build-efasim
nv380() { [ -f /tmp/nv380/include/nvshmem.h ] || { mkdir -p /tmp/nv380 && tar xJf .dc/nvshmem-3.8.0.tar.xz -C /tmp/nv380; }; }
# efabench against libfabric 2.6.0 and NVSHMEM 3.8.0 (the folder sitting.sh uses), in the background
bnv() { nv380; ( make -s -j4 BUILD="$B/lf-2.6.0/efab-nv380" LIBFABRIC_HOME="$B/lf-2.6.0/prefix" NVSHMEM_HOME=/tmp/nv380 \
	LDFLAGS="-Wl,-rpath-link,$B/rdma-core-64.0/prefix/lib" all ) > $O/bnv.log 2>&1; }
spin() { # issue 47: can efasim's copy finish while a kernel spins waiting for it
	[ -x $B/sim/bin/spin_copy ] || { echo "no spin_copy"; return; }
	timeout "$1" tests/efasim/spin_copy.sh $B/sim/bin/spin_copy $O/spin.txt > $O/spin.out 2>&1; el "spin_copy rc=$?"
	cat $O/spin.txt | cut -c1-220; }
