#!/bin/bash
# device call 4 (stop 54): verify efasim's context-lifetime fix (libfabric 2.7's p2p probe) and
# efabench's VMM copy synchronisation, on libfabric 2.7.0a1 + rdma-core main (sim-main)
set -u
export EFAB_DEPS=$PWD/.dc
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
B=$PWD/build-efasim
( make efasim V=2.7.0a1 ) > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?"; tail -1 $O/b27.log
make -s -C .dc/efold RDMA_CORE=$B/rdma-core-main/prefix OUT=/tmp/simold CUDA_HOME=/usr/local/cuda > $O/bold.log 2>&1; el "old sim rc=$?"
export EFASIM_P2P=1
EFASIM_DIR=/tmp/st-new tests/efasim/run 2.7.0a1 timeout 120 $B/sim-main/bin/gpu_selftest > $O/st-new.log 2>&1; el "gpu_selftest new efasim rc=$?"
grep -E '^(FAIL|ok   stage)|gpu_selftest:' $O/st-new.log | cut -c1-250
EFASIM_DIR=/tmp/st-old EFASIM_SIMULATED=1 EFASIM_LIBFABRIC=2.7.0a1 LD_LIBRARY_PATH=/tmp/simold/lib:$B/lf-2.7.0a1/prefix/lib \
	timeout 120 /tmp/simold/bin/gpu_selftest > $O/st-old.log 2>&1; el "gpu_selftest (new) on the old efasim rc=$?"
grep -E '^(FAIL|ok   stage)|gpu_selftest:|stage-writer' $O/st-old.log | cut -c1-250
M=tests/gpu/efasim_matrix.sh
EFASIM_GPU_ONLY=efa-direct EFAB_MATRIX_ONLY='^(put_lat writedata|get_lat|put_bw writedata|get_bw) --mem (cuda:host|host:cuda) ?$' \
	timeout 150 $M 2.7.0a1 $O/x27 > $O/x27.out 2>&1; el "2.7.0a1 cuda:host/host:cuda rc=$?"; grep -E '^(PASS|FAIL)|^efasim-gpu' $O/x27.out | cut -c1-160
EFAB_MATRIX_ONLY='^vmm' timeout $(( 470 - ($(date +%s)-t0) )) $M 2.7.0a1 $O/v27 > $O/v27.out 2>&1; el "2.7.0a1 vmm rc=$?"; grep -E '^(PASS|FAIL)|^efasim-gpu' $O/v27.out | cut -c1-200
tar czf $O/d4.tgz -C $O x27 v27 x27.out v27.out st-new.log st-old.log b27.log bold.log 2>/dev/null; rm -rf $O/x27 $O/v27 $O/*.log $O/*.out
el done
