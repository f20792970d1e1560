# Connection setup (efab_connect) and NIC fan-out (efab_mr_reg --domains) on
# shm, tcp loopback and the simulated EFA device (issue 17 items 2 and 3).
# The tests check what is measured and recorded, never speed, except that a
# first contact on tcp (a connect) is slower than the next write to the peer.

CONNCOLS=peers,av_insert_us,av_insert_us_per_peer,second_us_p50,ep_open_us_p50

conn_rows_check() { # CSV PEERS...: one row per peer count, figures positive
	python3 - "$@" <<'PY' || die "connect rows of $1"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = [int(p) for p in sys.argv[2:]]
assert [int(r["peers"]) for r in rows] == want, [r["peers"] for r in rows]
for r in rows:
    assert int(r["pairs"]) == int(r["peers"]), r
    for k in ("av_insert_us", "av_insert_us_per_peer", "second_us_p50", "ep_open_us_p50",
              "lat_us_p50"):
        assert float(r[k]) > 0, (k, r)
    assert abs(float(r["av_insert_us_per_peer"]) * int(r["peers"]) - float(r["av_insert_us"])) < 0.01, r
PY
}

t_connect_shm_tcp() {
	for p in shm tcp; do
		rm -f "$WORK/c.csv"
		expect_rc 0 mpi 2 "$BIN/efab_connect" -v -p $p -n 3 --csv "$WORK/c.csv"
		csvcheck "$WORK/c.csv" --bench connect --rows 1 --lat --op write --extra $CONNCOLS
		conn_rows_check "$WORK/c.csv" 1
		grep -q "^# per peer count p and each of 3 rounds, on new endpoints: av_insert_us" \
			"$WORK/last.out" || die "$p: header lacks the definition"
	done
	# tcp's first write to a new peer connects: slower than the one after it
	python3 - "$WORK/c.csv" <<'PY' || die "tcp: first contact not slower than the second write"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
assert float(r["lat_us_min"]) > float(r["second_us_p50"]), r
PY
	# 5 ranks: peer counts 1, 2, 4; reads too
	rm -f "$WORK/c.csv"
	expect_rc 0 mpi 5 "$BIN/efab_connect" -p tcp -n 2 --csv "$WORK/c.csv"
	conn_rows_check "$WORK/c.csv" 1 2 4
	rm -f "$WORK/c.csv"
	expect_rc 0 mpi 4 "$BIN/efab_connect" -p shm -o read -n 2 -m 64 --csv "$WORK/c.csv"
	csvcheck "$WORK/c.csv" --bench connect --rows 3 --lat --op read --extra $CONNCOLS --sizes 64,64,64
	conn_rows_check "$WORK/c.csv" 1 2 3
	expect_rc 2 mpi 2 "$BIN/efab_connect" -p shm -o writedata
	expect_rc 2 mpi 1 "$BIN/efab_connect" -p shm
}

# On libfabric 2.6.0's efa provider over simulated NICs (SIMULATED figures):
# the first write to each peer on both fabrics, and --domains over 4 NICs.
t_connect_efasim() {
	EFAB_EBIN=$ABIN efasim_need 2.6.0
	for f in efa efa-direct; do
		rm -f "$WORK/c.csv"
		expect_rc 0 efa_mpi 2.6.0 4 "$EBIN/efab_connect" -p efa -f $f -n 2 --csv "$WORK/c.csv"
		grep -q "SIMULATED EFA device" "$WORK/last.out" || die "$f: not labelled simulated"
		simulated_csv "$WORK/c.csv"
		conn_rows_check "$WORK/c.csv" 1 2 3
	done
}

t_mr_reg_domains_efasim() {
	EFAB_EBIN=$ABIN efasim_need 2.6.0
	export EFASIM_NICS=4
	rm -f "$WORK/d.csv"
	expect_rc 0 efa_run 2.6.0 "$EBIN/efab_mr_reg" -p efa -f efa-direct -m 4K:256K:x8 -n 4 \
		--regime fresh --domains all --csv "$WORK/d.csv" -v
	grep -q "^# --domains all: K = 4 (rdmap" "$WORK/last.out" || die "not the 4 simulated NICs"
	grep -q "^# fresh on 4 domains: registration costs" "$WORK/last.out" || die "no fit for k = 4"
	simulated_csv "$WORK/d.csv"
	python3 - "$WORK/d.csv" <<'PY' || die "fan-out rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted({int(r["domains"]) for r in rows}) == [1, 2, 4], rows
for r in rows:
    assert r["includes_nic_work"] == "yes" and float(r["first_us"]) > 0, r
    assert r["reg_path"] == "host", r["reg_path"]  # host memory: no GPU path to tell
PY
	grep -q "^# reg_path = how libfabric registered a buffer" "$WORK/last.out" || die "the header does not define reg_path"
	rm -f "$WORK/d.csv"
	expect_rc 0 efa_run 2.6.0 "$EBIN/efab_mr_reg" -p efa -f efa -m 64K -n 3 --regime same \
		--domains 3 --csv "$WORK/d.csv" -v
	# the further domains on the fabric asked for: EFA names each NIC's domain
	# under efa-direct and efa, and the domain name alone selected efa-direct's
	grep -q "^# --domains 3: K = 3 (rdmap[^;]*; all on fabric efa)" "$WORK/last.out" ||
		die "-f efa's further domains not all on efa: $(grep '^# --domains' "$WORK/last.out")"
	python3 - "$WORK/d.csv" <<'PY' || die "--domains 3 rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["domains"]) for r in rows] == [1, 2, 3], [r["domains"] for r in rows]
PY
	expect_rc 2 efa_run 2.6.0 "$EBIN/efab_mr_reg" -p efa -f efa-direct -m 4K --domains 5
	expect_msg "5 domains asked, provider efa has 4 here"
	unset EFASIM_NICS
}
