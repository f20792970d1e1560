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
# libfabric 2.6.0 and efabench against NVSHMEM 3.8.0, where a call before did not build them
# (J26: make's jobs for libfabric, default 12; fewer beside a gpu-check)
need26() { [ -f $B/lf-2.6.0/prefix/lib/libfabric.so ] || { ( JOBS=${J26:-12} make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"; }
	[ -x $B/lf-2.6.0/efab-nv380/bin/efab_shmem_lat ] || { bnv; el "nv380 build rc=$?"; }; }
# part put (issue 47): NVSHMEM 3.8.0's own put/get from PUT_INITIATORS beside the raw fabric, one
# sitting, leaving $1 s of the call for what follows
putsit() { env PUT_FABRICS=${PUT_FABRICS:-default} PUT_INITIATORS="${PUT_INITIATORS:-thread warp block}" PUT_LAT_FORMS="blocking nbi" \
	PUTSZ="-m 8:16M:x16" PUTSZ_CHECK="-m 4K:1M:x16" PUT_LAT_N=20 PUT_BW_N=3 PUT_CORRUPT=0 PUT_T=15 EFAB_PUT_TIMEOUT=60 EFAB_NV_STACKS=40 \
	timeout $(( $(left) - $1 )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/put put > $O/put.out 2>&1
	el "put rc=$?"; cut -c1-220 $O/put/summary.txt
	[ -s $O/put/put_table.txt ] || python3 tests/nvshmem/put_table.py $O/put > $O/put/put_table.txt 2>&1; }
