# Registration cost: the three regimes on host memory, CSV columns, the fit
# sentence, skip paths; and the unregistered-source experiment.

MRCOLS=rank,dereg_us_p50,dereg_us_p99,registered_before_MiB,mr_cache,access,includes_nic_work,fit_x,fit_fixed_us,fit_us_per_MiB,fit_r2,fit_fixed_us_lo,fit_fixed_us_hi,fit_us_per_MiB_lo,fit_us_per_MiB_hi

t_mr_reg_regimes() {
	for p in shm tcp; do
		rm -f "$WORK/m.csv"
		expect_rc 0 "$BIN/efab_mr_reg" -p $p -m 4K:1M:x4 --max-total 16M --csv "$WORK/m.csv" -v
		csvcheck "$WORK/m.csv" --bench mr_reg --rows 15 --lat --extra $MRCOLS
		for g in fresh same accumulate; do
			csvcheck "$WORK/m.csv" --bench mr_reg --rows 5 --lat --extra $MRCOLS --where op=$g \
				--sizes 4096,16384,65536,262144,1048576
		done
		grep -Eq "^# fresh: registration costs -?[0-9.]+ us \[-?[0-9.]+, -?[0-9.]+\] \+ -?[0-9.]+ us/MiB \[-?[0-9.]+, -?[0-9.]+\] \(weighted by 1/y\^2, R\^2 [0-9.-]+\) for host memory on" \
			"$WORK/last.out" || die "no fit sentence"
		grep -q "software bookkeeping" "$WORK/last.out" || die "no NIC-work label"
	done
	python3 - "$WORK/m.csv" <<'PY' || die "fit columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    assert r["includes_nic_work"] == "no", r
    assert r["fit_x"] == ("registered_before" if r["op"] == "accumulate" else "size"), r
    assert float(r["dereg_us_p50"]) > 0 and float(r["lat_us_p50"]) > 0, r
    if r["op"] == "accumulate":
        # 5 sizes x up to 64 buffers within 16M: registered before = (n-1) x size
        n = min(64, 16 * 2**20 // int(r["size_bytes"]))
        assert abs(float(r["registered_before_MiB"]) - (n - 1) * int(r["size_bytes"]) / 2**20) < 0.06, r
    # 95 % intervals around both fitted parameters
    for p in ("fit_fixed_us", "fit_us_per_MiB"):
        assert float(r[p + "_lo"]) <= float(r[p]) <= float(r[p + "_hi"]), r
PY
	# efab_plot's report shows the intervals
	mkdir -p "$WORK/run" && cp "$WORK/m.csv" "$WORK/run/mr_reg.csv"
	expect_rc 0 python3 plot/efab_plot "$WORK/run" -o "$WORK/plot"
	grep -Eq "^\| run \| tcp(;ofi_rxm)? \| host \| fresh \| -?[0-9.]+ \[-?[0-9.]+, -?[0-9.]+\] \| -?[0-9.]+ \[-?[0-9.]+, -?[0-9.]+\] \| [0-9.]+ \| 1/y² \|" \
		"$WORK/plot/report.md" || die "report lacks the fit intervals"
}

t_mr_reg_options_and_skips() {
	expect_rc 0 "$BIN/efab_mr_reg" -p shm -m 64K --regime same --mr-cache off --access local -n 5 -v
	grep -q "mr cache off (FI_MR_CACHE_MAX_COUNT=0 FI_EFA_MR_CACHE_ENABLE=0)" "$WORK/last.out" ||
		die "cache setting not recorded"
	grep -q "access local" "$WORK/last.out" || die "access not recorded"
	expect_rc 77 "$BIN/efab_mr_reg" -p shm --mem cuda -m 4K
	expect_msg "cuda memory kinds unavailable"
	expect_rc 2 "$BIN/efab_mr_reg" -p shm --dmabuf -m 4K
	expect_msg "add --mem cuda"
	expect_rc 2 "$BIN/efab_mr_reg" --regime sometimes
	expect_rc 2 "$BIN/efab_mr_reg" --max-total 0
	# under mpirun: one result per rank
	expect_rc 0 mpi 2 "$BIN/efab_mr_reg" -p shm -m 4K:8K --regime fresh -n 5 --csv "$WORK/r.csv"
	csvcheck "$WORK/r.csv" --bench mr_reg --rows 2 --lat --extra $MRCOLS --where rank=1
	csvcheck "$WORK/r.csv" --bench mr_reg --rows 2 --lat --extra $MRCOLS --where rank=0
}

t_src_unregistered() {
	for p in shm tcp; do
		# the notes (-v) say how the source was passed
		expect_rc 0 mpi 2 "$BIN/efab_put_lat" -p $p --src-unregistered -m 8:64K:x8 -c -v
		grep -q "desc = NULL" "$WORK/last.out" || die "header lacks --src-unregistered"
		# a mode that changes what is measured: in the short default header too
		expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p $p --src-unregistered -m 4K:64K:x16 -n 10 -c
		grep -q "^# --src-unregistered: local buffers passed with desc = NULL$" "$WORK/last.out" ||
			die "the default header lacks --src-unregistered"
	done
}

# efab_put_lat and efab_mr_reg built without CUDA (CUDA_HOME empty) into
# $BUILD/nocuda (SAN=1: build-san/nocuda, sanitized as the rest): made once
# for the tests that need it, remade only where a source changed (-MMD)
nocuda_build() {
	NOCUDA=$BUILD/nocuda
	make -s -j"$(nproc)" BUILD="$NOCUDA" CUDA_HOME= "$NOCUDA/bin/efab_put_lat" "$NOCUDA/bin/efab_mr_reg" \
		>"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; die "no-CUDA build failed"; }
}

t_gpu_paths_without_gpu() {
	# efab_shmem_reg exists only where NVSHMEM was found; without a GPU it skips
	if [ -x "$BIN/efab_shmem_reg" ]; then
		expect_rc 77 mpi 1 "$BIN/efab_shmem_reg" -m 4K
		expect_msg "cuda memory kinds unavailable|no GPU visible"
	fi
	# a build without CUDA names the missing piece
	nocuda_build
	expect_rc 77 mpi 2 "$NOCUDA/bin/efab_put_lat" -p shm -m 8 --mem cuda:host
	expect_msg "built without CUDA"
	expect_rc 77 "$NOCUDA/bin/efab_mr_reg" -p shm -m 4K --mem cuda-host
	expect_msg "built without CUDA"
}

# --mem cuda-vmm (CUDA VMM memory, cuMemCreate) where no GPU runs it: exit 77
# with one line saying why, from every tool that takes --mem cuda, and from a
# build without CUDA; --dmabuf accepts it as it accepts cuda.
t_cuda_vmm_without_gpu() {
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
		echo "a GPU is visible: tests/gpu/efasim_matrix.sh runs cuda-vmm (EFAB_MATRIX_ONLY=vmm)"
		exit 77
	fi
	local n
	expect_rc 77 "$BIN/efab_mr_reg" -p shm --mem cuda-vmm -m 4K
	expect_msg "cuda memory kinds unavailable"
	n=$(grep -c '^efab' "$WORK/last.err")
	[ "$n" = 1 ] || die "efab_mr_reg --mem cuda-vmm: $n lines on stderr, wanted one"
	expect_rc 77 "$BIN/efab_mr_reg" -p shm --mem cuda-vmm --dmabuf -m 4K
	expect_msg "cuda memory kinds unavailable"
	for b in efab_put_lat efab_get_lat efab_put_bw efab_get_bw; do
		expect_rc 77 mpi 2 "$BIN/$b" -p shm -m 8 --mem cuda-vmm
		expect_msg "cuda memory kinds unavailable"
		n=$(grep -Ec '^efab[a-z_]*(\[rank 0\])?: ' "$WORK/last.err")
		[ "$n" = 1 ] || die "$b --mem cuda-vmm: $n lines from rank 0, wanted one"
	done
	expect_rc 77 mpi 2 "$BIN/efab_put_lat" -p shm -m 8 --mem cuda-vmm:host
	expect_msg "cuda memory kinds unavailable"
	if [ -x "$BIN/efab_shmem_reg" ]; then
		expect_rc 77 mpi 1 "$BIN/efab_shmem_reg" -m 4K --mem cuda-vmm
		expect_msg "cuda memory kinds unavailable|no GPU visible"
	fi
	nocuda_build
	expect_rc 77 "$NOCUDA/bin/efab_mr_reg" -p shm -m 4K --mem cuda-vmm
	expect_msg "built without CUDA"
	expect_rc 77 mpi 2 "$NOCUDA/bin/efab_put_lat" -p shm -m 8 --mem host:cuda-vmm
	expect_msg "built without CUDA"
	expect_rc 2 "$BIN/efab_mr_reg" -p shm --mem cuda-vmx -m 4K
	expect_msg "cuda-vmm"
}

# Issue 17: the first call of every size and regime is its own figure
# (first_us), the samples are n calls after it; --domains registers each
# buffer on k domains (rows per k). tcp lists a domain per interface: without
# FI_TCP_IFACE (registration only, no traffic) lo and any other interface.
t_mr_reg_first_and_domains() {
	rm -f "$WORK/d.csv"
	expect_rc 0 env -u FI_TCP_IFACE "$BIN/efab_mr_reg" -p tcp -m 4K:64K:x4 -n 7 --regime fresh \
		--domains all --csv "$WORK/d.csv"
	local K
	K=$(sed -n 's/^# --domains all: K = \([0-9]*\) .*/\1/p' "$WORK/last.out")
	[ -n "$K" ] || die "header does not say K"
	python3 - "$WORK/d.csv" "$K" <<'PY' || die "first_us / domains rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
K = int(sys.argv[2])
ks = sorted({int(r["domains"]) for r in rows})
want = sorted({min(2 ** i, K) for i in range(8) if 2 ** i < 2 * K})
assert ks == want, (ks, want)
for r in rows:
    assert r["op"] == "fresh" and int(r["iters"]) == 7, r
    assert float(r["first_us"]) > 0, r
    assert r["fit_fixed_us"], r
for k in ks:
    assert [int(r["size_bytes"]) for r in rows if int(r["domains"]) == k] == [4096, 16384, 65536]
PY
	[ "$K" -gt 1 ] && ! grep -q "^# fresh on $K domains: registration costs" "$WORK/last.out" &&
		die "no fit sentence per k"
	expect_rc 2 env -u FI_TCP_IFACE "$BIN/efab_mr_reg" -p tcp -m 4K --domains 32
	expect_msg "domains asked, provider tcp;ofi_rxm has"
	expect_rc 2 "$BIN/efab_mr_reg" -p shm -m 4K --domains nic0
	expect_msg "expected local, gpu-pair, all or a count"
	# local without a GPU in the topology: one domain, said so
	expect_rc 0 "$BIN/efab_mr_reg" -p shm -m 4K -n 3 --regime same --domains local -v
	grep -q "^# --domains local: K = 1 (shm).*local = the domain in use" "$WORK/last.out" ||
		die "--domains local without a GPU does not say what it did"
}

# Issue 59 item 5: efab_mr_reg places itself by topology as the other
# benchmarks do. --domain auto (and --domains local|gpu-pair, which imply it)
# asks for the domain of the NIC nearest the GPU: on the p5en topology
# (tests/topo/p5en.xml) shm has none there, and says which NIC it looked for
# (before, --domain auto was ignored and shm's domain used: exit 0); on the
# H200 machine's topology (one GPU, no NIC) the header names the GPU and
# says the first domain is used.
t_mr_reg_domain_auto_topology() {
	expect_rc 2 env HWLOC_XMLFILE="$ROOT/tests/topo/p5en.xml" "$BIN/efab_mr_reg" -p shm -m 4K -n 3 \
		--regime same --domain auto
	expect_msg "no RDM domain on NIC rdmap20s0 .0000:14:00.0., the one nearest this rank.s GPU"
	expect_rc 2 env HWLOC_XMLFILE="$ROOT/tests/topo/p5en.xml" "$BIN/efab_mr_reg" -p shm -m 4K -n 3 \
		--regime same --domains gpu-pair --gpu 3
	expect_msg "no RDM domain on NIC rdmap38s0 .0000:26:00.0."
	expect_rc 0 env HWLOC_XMLFILE="$ROOT/tests/topo/h200-vm-1gpu.xml" "$BIN/efab_mr_reg" -p shm -m 4K \
		-n 3 --regime same --domain auto -v
	grep -q "^# placement (rank 0): GPU 0000:00:06.0, NIC - (-), .*--domain auto: no NIC near the GPU, the first matching domain" \
		"$WORK/last.out" || die "no placement line"
}

# efab_shmem_reg and efab_shmem_seed built against an NVSHMEM's headers and
# host library (NVSHMEM_HOME, e.g. an unpacked nvidia-nvshmem-cu13 wheel:
# .ci/run fetches 3.6.5's), run where there is no GPU: --help, and a run
# that says why it cannot measure (exit 77), not a crash. The interposer's
# fabric line (efab_fitrace_fabric) is what the seed prints: "-" untraced.
t_nvshmem_headers_build() {
	local nv=${NVSHMEM_HOME:-}
	[ -n "$nv" ] || nv=$(python3 -c "import importlib.util as u; s = u.find_spec('nvidia.nvshmem'); print(list(s.submodule_search_locations)[0] if s else '')" 2>/dev/null)
	if [ -z "$nv" ] || [ ! -f "$nv/include/nvshmem.h" ]; then
		echo "no NVSHMEM headers (set NVSHMEM_HOME; .ci/run fetches the 3.6.5 wheel)"
		exit 77
	fi
	[ -f /usr/local/cuda/include/cuda.h ] || [ -f "${CUDA_HOME:-/nonexistent}/include/cuda.h" ] ||
		{ echo "no CUDA headers (CUDA_HOME): efab_shmem_reg is not built without them"; exit 77; }
	# the kernel initiators (--initiator thread|warp|block) are built where
	# NVSHMEM_HOME has libnvshmem_device.a and nvcc is found; first the build
	# without them (a home of the headers and the host library alone), then,
	# in the same build folder (only shmem_put.o again), the one with them
	local kern=
	if [ -f "$nv/lib/libnvshmem_device.a" ] &&
		{ [ -x /usr/local/cuda/bin/nvcc ] || [ -x "${CUDA_HOME:-/nonexistent}/bin/nvcc" ]; }; then
		kern=1
		mkdir -p "$WORK/nvhost/lib"
		ln -sfn "$nv/include" "$WORK/nvhost/include"
		ln -sf "$nv"/lib/libnvshmem_host.so* "$WORK/nvhost/lib/"
		make -s -j"$(nproc)" BUILD="$WORK/nb" NVSHMEM_HOME="$WORK/nvhost" "$WORK/nb/bin/efab_shmem_bw" \
			>"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; die "build against $nv's headers and host library failed"; }
		nvshmem_kernels_absent "$WORK/nb/bin"
		rm -f "$WORK/nb/bench/ops/shmem_put.o"
	fi
	make -s -j"$(nproc)" BUILD="$WORK/nb" NVSHMEM_HOME="$nv" "$WORK/nb/bin/efab_shmem_reg" "$WORK/nb/bin/efab_shmem_seed" \
		"$WORK/nb/bin/efab_shmem_lat" "$WORK/nb/bin/efab_shmem_bw" \
		>"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; die "build against $nv failed"; }
	expect_rc 0 "$WORK/nb/bin/efab_shmem_reg" --help
	grep -q "nvshmemx_buffer_register" "$WORK/last.out" || die "--help does not say what it times"
	expect_rc 2 "$WORK/nb/bin/efab_shmem_reg" --mem cuda
	expect_msg "takes --mem cuda-vmm"
	expect_rc 0 "$WORK/nb/bin/efab_shmem_seed" --help
	grep -q "nvshmemx_buffer_register" "$WORK/last.err" "$WORK/last.out" || die "seed --help"
	expect_rc 2 "$WORK/nb/bin/efab_shmem_seed" --api nonesuch
	if ! command -v nvidia-smi >/dev/null 2>&1; then
		EFAB_FITRACE=0 expect_rc 77 mpi 1 "$WORK/nb/bin/efab_shmem_reg" -m 4K
		expect_msg "cuda memory kinds unavailable|no GPU visible"
		EFAB_FITRACE=0 expect_rc 77 mpi 1 "$WORK/nb/bin/efab_shmem_reg" -m 4K --mem cuda-vmm
		expect_msg "cuda memory kinds unavailable|no GPU visible"
		EFAB_FITRACE=0 expect_rc 77 mpi 2 "$WORK/nb/bin/efab_shmem_seed"
		grep -q "^seed: no GPU here" "$WORK/last.out" || die "the seed does not say why it cannot run"
	fi
	nvshmem_rma_checks "$WORK/nb/bin"
	if [ -n "$kern" ]; then
		nvshmem_kernels_built "$WORK/nb/bin"
		# PTX only (a GPU newer than the SASS asked, e.g. SHK_ARCH for
		# compute_90 alone): the device link then pulls in CUDA's device
		# runtime image, whose host part is libcudadevrt.a (undefined
		# __fatbinwrap_*_cuda_device_runtime_cu_* without it)
		rm -f "$WORK/nb/bench/ops/shmem_kernels.o" "$WORK/nb/bench/ops/shmem_kernels_dlink.o" "$WORK/nb/bin/efab_shmem_lat"
		make -s -j"$(nproc)" BUILD="$WORK/nb" NVSHMEM_HOME="$nv" SHK_ARCH="-gencode arch=compute_90,code=compute_90" \
			"$WORK/nb/bin/efab_shmem_lat" >"$WORK/make.log" 2>&1 ||
			{ cat "$WORK/make.log"; die "the kernel initiators' PTX-only build (SHK_ARCH compute_90) failed"; }
		nm "$WORK/nb/bin/efab_shmem_lat" | grep -q " T .*nvshmemi_init_thread" || die "PTX-only build: no nvshmemi_init_thread"
	else
		echo "  (no libnvshmem_device.a in $nv or no nvcc: the kernel initiators' build is not checked)"
		nvshmem_kernels_absent "$WORK/nb/bin"
	fi
}

# efab_shmem_bw built without the kernel initiators: each exits 77 saying
# why, before MPI or any GPU
nvshmem_kernels_absent() { # BINDIR
	for i in thread warp block; do
		expect_rc 77 "$1/efab_shmem_bw" --initiator $i
		expect_msg "--initiator $i \(kernel-initiated NVSHMEM\) is not built: make found no nvcc or no \\\$NVSHMEM_HOME/lib/libnvshmem_device.a"
		[ "$(wc -l <"$WORK/last.err")" = 1 ] || die "--initiator $i: more than one line on stderr"
	done
}

# efab_shmem_lat/bw with the kernel initiators (nvcc -rdc=true, device-linked
# with libnvshmem_device.a): NVSHMEM's device-state init and the kernels are
# in the executables, --help and usage paths per initiator, and without a
# GPU each initiator exits 77 with one line saying why (not 'not built'). What
# needs a GPU is tests/nvshmem/sitting.sh's part put (PUT_INITIATORS).
nvshmem_kernels_built() { # BINDIR
	local b=$1 e i
	for e in efab_shmem_lat efab_shmem_bw; do
		nm "$b/$e" | grep -q " T .*nvshmemi_init_thread" || die "$e: no nvshmemi_init_thread (libnvshmem_device.a not linked)"
		nm -C "$b/$e" | grep -q "efab_shk_launch" || die "$e: no kernel initiator"
		for i in thread warp block; do
			expect_rc 0 "$b/$e" --initiator $i --help
			grep -qF "nvshmemi_init_thread" "$WORK/last.out" || die "$e --initiator $i --help: no init"
		done
	done
	expect_rc 0 "$b/efab_shmem_lat" --help
	grep -qF -- "--gpu-threads N" "$WORK/last.out" || die "efab_shmem_lat --help lacks --gpu-threads"
	expect_rc 0 "$b/efab_shmem_bw" --initiator block --gpu-threads 256 --help
	for a in "efab_shmem_bw --initiator warp --gpu-threads 64" "efab_shmem_lat --initiator thread --gpu-threads 2" \
		"efab_shmem_bw --initiator block --gpu-threads 2048" "efab_shmem_lat --initiator block --src host" \
		"efab_shmem_lat --gpu-threads 8"; do
		# shellcheck disable=SC2086
		expect_rc 2 "$b/"$a
		[ "$(wc -l <"$WORK/last.err")" = 1 ] || die "$a: not one line on stderr"
	done
	expect_rc 2 "$b/efab_shmem_lat" --initiator block --src host
	expect_msg "a kernel's operand must be GPU memory"
	if ! command -v nvidia-smi >/dev/null 2>&1; then
		for i in thread warp block; do
			EFAB_FITRACE=0 expect_rc 77 mpi 2 "$b/efab_shmem_lat" --initiator $i -m 8 -c
			expect_msg "cuda memory kinds unavailable|no GPU visible"
			grep -q "not built" "$WORK/last.err" && die "--initiator $i: built, yet 'not built'"
			[ "$(grep -c '^efab_shmem_lat' "$WORK/last.err")" = 1 ] || die "--initiator $i: not one line of ours"
			EFAB_FITRACE=0 expect_rc 77 mpi 2 "$b/efab_shmem_bw" --initiator $i -m 8:64 -W 4 -o get
			expect_msg "cuda memory kinds unavailable|no GPU visible"
		done
	fi
}

# efab_shmem_lat / efab_shmem_bw (NVSHMEM's own put and get) where no GPU
# runs them: --help says what is timed, every bad option is one line and
# exit 2, and a run without a GPU exits 77 with the reason, not a crash
# (the kernel initiators: nvshmem_kernels_built / _absent). What needs a GPU
# (rows, -c, EFAB_FAULT_CORRUPT) is tests/nvshmem/sitting.sh's part put.
nvshmem_rma_checks() { # BINDIR
	local b=$1 lines
	expect_rc 0 "$b/efab_shmem_lat" --help
	for w in "nvshmem_putmem + nvshmem_quiet" nvshmemx_quiet_on_stream "--initiator host|stream|thread|warp|block" \
		"--nbi" nvshmemx_putmem_nbi_on_stream "Column form (blocking|nbi)" \
		"-o, --op put|get" "--src cuda|host" "--register" "exit 77"; do
		grep -qF -- "$w" "$WORK/last.out" || die "efab_shmem_lat --help lacks '$w'"
	done
	grep -q -- "--window" "$WORK/last.out" && die "efab_shmem_lat --help offers -W"
	expect_rc 0 "$b/efab_shmem_bw" --help
	for w in nvshmem_putmem_nbi nvshmemx_putmem_nbi_on_stream "elapsed time" "-W, --window" \
		"--nv-batch-rma on|off|default" NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA=1 NVSHMEM_TRANSPORT_BATCH_MAX_OPS=N \
		NVSHMEM_PROXY_REQUEST_BATCH_MAX=N NVSHMEM_LIBFABRIC_PROXY_REQUEST_BATCH_MAX=N; do
		grep -qF -- "$w" "$WORK/last.out" || die "efab_shmem_bw --help lacks '$w'"
	done
	# usage errors: one line on stderr, exit 2, before MPI or any GPU
	for a in "efab_shmem_lat -o write" "efab_shmem_lat --src cuda-host" "efab_shmem_lat -W 4" \
		"efab_shmem_lat --bogus" "efab_shmem_lat -m 0" "efab_shmem_bw -W 0" "efab_shmem_bw --time 1" \
		"efab_shmem_bw -m 1G -W 64" "efab_shmem_bw --initiator gpu" "efab_shmem_lat extra" \
		"efab_shmem_bw --nv-batch-rma maybe" "efab_shmem_lat --nv-batch-ops 0" "efab_shmem_bw --nbi"; do
		# shellcheck disable=SC2086
		expect_rc 2 "$b/"$a
		lines=$(wc -l <"$WORK/last.err")
		[ "$lines" = 1 ] || die "$a: $lines lines on stderr, expected one"
		expect_msg "."
	done
	expect_rc 2 "$b/efab_shmem_lat" -o write
	expect_msg "invalid value 'write' for --op: expected one of put, get"
	expect_rc 2 "$b/efab_shmem_bw" -m 1G -W 64
	expect_msg "above the 16G allowed"
	# -o put-signal (issue 62): NVSHMEM's put with a signal has no host form
	for a in efab_shmem_lat efab_shmem_bw; do
		expect_rc 2 "$b/$a" -o put-signal
		expect_msg "-o put-signal: NVSHMEM has no put with signal from the host .*use --initiator stream or thread.warp.block$"
	done
	grep -qF -- "-o, --op put|get|put-signal" <("$b/efab_shmem_lat" --help) || die "--help lacks put-signal"
	# a knob the user already set otherwise: refused before MPI, both named
	NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA=0 expect_rc 2 "$b/efab_shmem_bw" --nv-batch-rma off
	expect_msg "asks NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA=1, but the environment already has NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA=0"
	if ! command -v nvidia-smi >/dev/null 2>&1; then
		for e in efab_shmem_lat efab_shmem_bw; do
			EFAB_FITRACE=0 expect_rc 77 mpi 2 "$b/$e" -m 8 -c
			expect_msg "cuda memory kinds unavailable|no GPU visible"
		done
	fi
}

# FILE holds a line with FIXED (grep -F), else the file is shown and the test dies with MSG
want_line() { # FILE MSG FIXED
	grep -qF -- "$3" "$1" || { cat "$1"; die "$2"; }
}

# tests/nvshmem/put_table.py on constructed CSVs (bench named as efabench's CSVs name it: shmem_lat, put_lat; the sitting's part put runs
# on the GPU machine only): each NVSHMEM row beside its raw partner, the put
# latency beside twice efab_put_lat's p50, bandwidth as raw/NVSHMEM and the
# per-operation time added; a missing partner and a partner with errors say so
t_nvshmem_put_table() {
	local d=$WORK/pt
	mkdir -p "$d"
	local h="bench,op,size_bytes,lat_us_p50,bw_MBps,errors,initiator,nvshmem_version,lf_fabric"
	printf '%s\n%s\n%s\n%s\n' "$h" \
		"shmem_lat,put,8,10.0,,0,host,3.6.5,efa-direct" \
		"shmem_lat,get,8,9.0,,0,stream,3.6.5,efa-direct" \
		"shmem_lat,put,4096,12.0,,0,host,3.6.5,efa-direct" >"$d/put_default_shmem_lat.csv"
	printf '%s\n%s\n' "$h" "shmem_bw,put,1000000,,500.0,0,host,3.6.5,efa-direct" >"$d/put_default_shmem_bw.csv"
	printf '%s\n%s\n%s\n' "$h" "put_lat,put,8,4.0,,0,,," "put_lat,put,4096,5.0,,3,,," >"$d/put_default_put_lat.csv"
	printf '%s\n%s\n' "$h" "get_lat,get,8,6.0,,0,,," >"$d/put_default_get_lat.csv"
	printf '%s\n%s\n' "$h" "put_bw,put,1000000,,2000.0,0,,," >"$d/put_default_put_bw.csv"
	# the like-for-like put partner: efab_put_bw -W 1 (one write and its completion per window)
	printf '%s\n%s\n' "bench,op,size_bytes,window_us_p50,bw_MBps,errors" "put_bw,put,8,7.5,1.0,0" \
		>"$d/put_default_put_bw_w1.csv"
	python3 tests/nvshmem/put_table.py "$d" >"$WORK/t.out" 2>&1 || { cat "$WORK/t.out"; die "put_table.py failed"; }
	cat "$WORK/t.out"
	grep -q '^SIMULATED NIC' "$WORK/t.out" || die "no SIMULATED label"
	# put 8 B: 10 us beside one write and its completion, 7.5 us: 1.33x, 2.5 us above
	grep -q '^default | efab_shmem_lat | host | put | 8 | 10.00 us | efab_put_bw -W 1 window p50 | 7.50 | 1.33x | 2.50 | 0 |' "$WORK/t.out" ||
		die "put latency not beside efab_put_bw -W 1"
	# ... and not taken for the bandwidth partner (efab_put_bw MB/s of 1e6 B stays 2000)
	grep -q '| 4096 | 12.00 us | efab_put_bw -W 1 window p50: no row | - |' "$WORK/t.out" ||
		die "a missing -W 1 partner not said"
	# put 8 B: 10 us beside 2 x 4 us: 1.25x, 2 us above
	grep -q '^default | efab_shmem_lat | host | put | 8 | 10.00 us | 2 x efab_put_lat p50 | 8.00 | 1.25x | 2.00 | 0 |' "$WORK/t.out" ||
		die "put latency not beside twice efab_put_lat"
	# get 8 B: 9 us beside 6 us: 1.50x, 3 us above
	grep -q '^default | efab_shmem_lat | stream | get | 8 | 9.00 us | efab_get_lat p50 | 6.00 | 1.50x | 3.00 |' "$WORK/t.out" ||
		die "get latency not beside efab_get_lat"
	# the partner had errors: no figure compared
	grep -q '| 4096 | 12.00 us | 2 x efab_put_lat p50 (errors 3) | - | - | - |' "$WORK/t.out" ||
		die "a partner with errors was compared"
	# bandwidth: raw 2000 MB/s / 500 = 4.00x; 1e6 B: 2000 us - 500 us = 1500 us added
	grep -q '| 1000000 | 500.00 MB/s | efab_put_bw MB/s | 2000.00 | 4.00x | 1500.00 |' "$WORK/t.out" ||
		die "bandwidth ratio or time added wrong"
	# put-signal: latency beside --signal-send -W 1's window p50, rate beside --signal-send's MB/s
	# (never beside the plain put's partners, whose files hold other rows of the same sizes)
	printf '%s\n%s\n' "$h" "shmem_lat,put-signal,8,20.0,,0,thread,3.6.5,efa-direct" \
		>"$d/put_default_signal_shmem_lat.csv"
	printf '%s\n%s\n' "$h" "shmem_bw,put-signal,1000000,,250.0,0,stream,3.6.5,efa-direct" \
		>"$d/put_default_signal_shmem_bw.csv"
	printf '%s\n%s\n' "bench,op,size_bytes,window_us_p50,bw_MBps,errors" \
		"put_bw,writedata+send,8,8.0,1.0,0" >"$d/put_default_signal_bw_w1.csv"
	printf '%s\n%s\n' "$h" "put_bw,writedata+send,1000000,,1000.0,0,,," >"$d/put_default_signal_bw.csv"
	python3 tests/nvshmem/put_table.py "$d" >"$WORK/t6.out" 2>&1
	want_line "$WORK/t6.out" "put-signal latency not beside --signal-send -W 1" \
		'default | efab_shmem_lat | thread | put-signal | 8 | 20.00 us | efab_put_bw --signal-send -W 1 window p50 | 8.00 | 2.50x | 12.00 | 0 |'
	want_line "$WORK/t6.out" "put-signal rate not beside --signal-send" \
		'default | efab_shmem_bw | stream | put-signal | 1000000 | 250.00 MB/s | efab_put_bw --signal-send MB/s | 1000.00 | 4.00x | 3000.00 |'
	want_line "$WORK/t6.out" "the plain put's partner taken from the signal file" \
		'| 1000000 | 500.00 MB/s | efab_put_bw MB/s | 2000.00 | 4.00x |'
	rm "$d"/put_default_signal_*.csv
	# a --nbi latency row (column form): its initiator says nbi, same partner (get 8 B: 7 us beside 6 us)
	printf '%s\n%s\n' "$h,form" "shmem_lat,get,8,7.0,,0,host,3.6.5,efa-direct,nbi" >"$d/put_default_shmem_lat_nbi.csv"
	python3 tests/nvshmem/put_table.py "$d" >"$WORK/t5.out" 2>&1
	grep -q '^default | efab_shmem_lat | host nbi | get | 8 | 7.00 us | efab_get_lat p50 | 6.00 | 1.17x | 1.00 | 0 |' "$WORK/t5.out" ||
		{ cat "$WORK/t5.out"; die "a --nbi row not named so"; }
	grep -q '^default | efab_shmem_lat | host | get | 8 | 7.00' "$WORK/t5.out" && die "a --nbi row shown as blocking"
	rm "$d/put_default_shmem_lat_nbi.csv"
	# an NVSHMEM row with errors is compared with nothing
	printf '%s\n' "shmem_lat,get,8,1.0,,7,host,3.6.5,efa-direct" >>"$d/put_default_shmem_lat.csv"
	python3 tests/nvshmem/put_table.py "$d" >"$WORK/t4.out" 2>&1
	grep -q '| host | get | 8 | 1.00 us | efab_get_lat p50 (not compared: errors) | 6.00 | - | - | 7 |' "$WORK/t4.out" ||
		{ cat "$WORK/t4.out"; die "a row with errors was compared"; }
	sed -i '$d' "$d/put_default_shmem_lat.csv"
	# a checked run is listed with its errors, paired with nothing
	printf '%s\n%s\n%s\n' "$h" "shmem_bw,get,8,,0.1,2,host,3.6.5,efa-direct" \
		"shmem_bw,get,64,,0.2,1,host,3.6.5,efa-direct" >"$d/put_default_checked_shmem_bw.csv"
	python3 tests/nvshmem/put_table.py "$d" >"$WORK/t3.out" 2>&1
	grep -q '^put_default_checked_shmem_bw.csv | efab_shmem_bw | host | get | 2 | 3$' "$WORK/t3.out" ||
		{ cat "$WORK/t3.out"; die "checked runs not listed with their errors"; }
	[ "$(grep -c '| 0.10 MB/s' "$WORK/t3.out")" = 0 ] || die "a checked run was paired"
	rm "$d/put_default_get_lat.csv"
	python3 tests/nvshmem/put_table.py "$d" >"$WORK/t2.out" 2>&1
	grep -q 'efab_get_lat p50: no row | - | - | - |' "$WORK/t2.out" || die "a missing partner was not named"
	rm "$d"/put_default_shmem_*.csv
	expect_rc 1 python3 tests/nvshmem/put_table.py "$d"
}

# tests/nvshmem/knob_table.py on a constructed CSV (the sitting's part knobs
# runs on the GPU machine only): each setting's runs in run order, their
# median without failed runs, the ratio to NVSHMEM's defaults; settings
# named from the rows' nv_* columns
t_nvshmem_knob_table() {
	local c=$WORK/knobs.csv h="bench,op,size_bytes,bw_MBps,errors,initiator,lf_fabric,provider_version"
	h="$h,nv_disable_batch_rma,nv_batch_max_ops,nv_proxy_batch_max,nv_lf_proxy_batch_max"
	printf '%s\n' "$h" \
		"shmem_bw,put,8,100.0,0,host,efa-direct,NVSHMEM v3.8.0 simulated,default,default,default,default" \
		"shmem_bw,put,8,50.0,0,host,efa-direct,NVSHMEM v3.8.0 simulated,1,default,default,default" \
		"shmem_bw,put,8,120.0,0,host,efa-direct,NVSHMEM v3.8.0 simulated,default,default,default,default" \
		"shmem_bw,put,8,70.0,0,host,efa-direct,NVSHMEM v3.8.0 simulated,1,default,default,default" \
		"shmem_bw,put,8,9999.0,3,host,efa-direct,NVSHMEM v3.8.0 simulated,1,default,default,default" \
		"shmem_bw,put,64,10.0,0,stream,efa-direct,NVSHMEM v3.8.0 simulated,1,4,default,default" \
		"shmem_bw,put,64,30.0,0,stream,efa-direct,NVSHMEM v3.8.0 simulated,0,4,default,default" \
		"put_bw,put,8,1.0,0,,efa-direct,,,,," >"$c"
	expect_rc 0 python3 tests/nvshmem/knob_table.py "$c"
	local o=$WORK/last.out
	grep -q "SIMULATED NIC" "$o" || die "the table does not say the NIC was simulated"
	# defaults 100, 120: median 110, the baseline
	want_line "$o" "the defaults' line" "efa-direct | host | put | 8 | defaults | 100.0, 120.0 | 110.0 | 1.000 (baseline)"
	# batch RMA off: 50, 70 and a failed run shown, left out: median 60, 60/110
	want_line "$o" "a setting's runs, median or ratio" \
		"efa-direct | host | put | 8 | disable_batch_rma=1 | 50.0, 70.0, 9999.0 (errors 3) | 60.0 | 0.545"
	# no defaults row in a group: its first setting is the baseline
	want_line "$o" "the first setting as baseline" \
		"| stream | put | 64 | disable_batch_rma=1 batch_max_ops=4 | 10.0 | 10.0 | 1.000 (baseline)"
	want_line "$o" "the other setting's ratio" "| stream | put | 64 | disable_batch_rma=0 batch_max_ops=4 | 30.0 | 30.0 | 3.000"
	grep -q "^efa-direct | | put" "$o" && die "a raw row was taken"
	expect_rc 2 python3 tests/nvshmem/knob_table.py
	printf '%s\n' "$h" >"$c"
	expect_rc 1 python3 tests/nvshmem/knob_table.py "$c"
	grep -q "knobs.csv: no shmem_bw rows" "$WORK/last.err" || die "an empty CSV not said"
}
