# Atomics: every op x u64 with -c on shm and tcp, a subset of dtypes,
# contention, the message-rate variant, and the checks failing when they must.

t_atomic_lat_all_ops_u64() {
	for p in shm tcp; do
		rm -f "$WORK/a.csv"
		for a in add fadd cswap swap min max bor band bxor; do
			expect_rc 0 mpi 2 "$BIN/efab_atomic_lat" -p $p --aop $a -c -n 100 -m 8:32 \
				--csv "$WORK/a.csv"
		done
		csvcheck "$WORK/a.csv" --bench atomic_lat --rows 27 --lat --provider $p
		csvcheck "$WORK/a.csv" --bench atomic_lat --rows 3 --lat --where op=cswap_u64 \
			--sizes 8,16,32
	done
}

# Every datatype with fadd, cswap and min on shm; on tcp the 32-bit and the
# floating-point ones (the datatype is efabench's operand and check, the same
# on any provider; tcp's support of each is libfabric's).
t_atomic_dtypes() {
	local p d a dts
	for p in shm tcp; do
		dts="u32 i32 i64 f32 f64"
		[ $p = tcp ] && dts="u32 f64"
		for d in $dts; do
			for a in fadd cswap min; do
				expect_rc 0 mpi 2 "$BIN/efab_atomic_lat" -p $p --aop $a --dtype $d -c -n 50
			done
		done
	done
}

t_atomic_bw_ops() {
	for p in shm tcp; do
		rm -f "$WORK/b.csv"
		for a in add fadd cswap swap max bxor; do
			expect_rc 0 mpi 2 "$BIN/efab_atomic_bw" -p $p --aop $a -c -n 10 -W 16 -m 8:16 \
				--csv "$WORK/b.csv"
		done
		csvcheck "$WORK/b.csv" --bench atomic_bw --rows 12 --bw \
			--extra pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link
	done
}

t_atomic_contend() {
	for p in shm tcp; do
		for a in fadd cswap swap add; do
			expect_rc 0 mpi 3 "$BIN/efab_atomic_lat" -p $p --contend --aop $a -c -n 20 \
				--csv "$WORK/c.csv"
		done
		expect_rc 0 mpi 4 "$BIN/efab_atomic_bw" -v -p $p --contend --aop fadd -c -n 5 -W 8 \
			--csv "$WORK/d.csv"
		grep -q "contend: 3 initiators" "$WORK/last.out" || die "header lacks --contend"
	done
	csvcheck "$WORK/c.csv" --bench atomic_lat --rows 8 --lat
	# pairs mode on 4 ranks, every pair on its own word
	expect_rc 0 mpi 4 "$BIN/efab_atomic_bw" -p shm --aop fadd -c -n 5 -W 8 --per-pair
}

t_atomic_check_catches_wrong_final() {
	EFAB_FAULT_CORRUPT=1 expect_rc 1 mpi 2 "$BIN/efab_atomic_lat" -p shm --aop fadd -c -n 20
	expect_msg "validation failed"
	EFAB_FAULT_CORRUPT=1 expect_rc 1 mpi 2 "$BIN/efab_atomic_bw" -p tcp --aop min -c -n 2 -W 4
	expect_msg "validation failed"
}

t_atomic_bad_inputs() {
	expect_rc 2 mpi 2 "$BIN/efab_atomic_lat" -p shm --aop nand
	expect_msg "expected one of add, fadd"
	expect_rc 2 mpi 2 "$BIN/efab_atomic_lat" -p shm --dtype u16
	expect_msg "expected one of u64"
	expect_rc 2 mpi 2 "$BIN/efab_atomic_lat" -p shm -m 12
	expect_msg "not a whole number of u64 elements"
	expect_rc 2 mpi 2 "$BIN/efab_atomic_lat" -p shm -m 1M
	expect_msg "above the provider's max atomic count"
	expect_rc 2 mpi 3 "$BIN/efab_atomic_lat" -p shm
	expect_msg "exactly 2 ranks"
}
