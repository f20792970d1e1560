# efab_probe: the matrix agrees with fi_getinfo (via libfabric's fi_info tool),
# --live on shm and tcp, filters, output formats, and the exit-77 atomic path
# found through the probe's own query rather than hard-coded.

t_probe_matrix_matches_fi_info() {
	expect_rc 0 "$BIN/efab_probe" --json
	python3 tests/probecheck.py "$WORK/last.out" || die "probe disagrees with fi_info"
	expect_rc 0 "$BIN/efab_probe"
	# a verdict for every RDM provider libfabric's own fi_info lists (1.17: shm,
	# tcp;ofi_rxm, sockets, udp;ofi_rxd; 2.6 also names plain tcp)
	local p n=0
	while read -r p; do
		grep -qF "verdict (provider $p," "$WORK/last.out" || die "no verdict for $p"
		n=$((n + 1))
	done < <(fi_info -t FI_EP_RDM | sed -n 's/^provider: //p' | sort -u)
	[ "$n" -ge 2 ] || die "fi_info lists only $n RDM providers"
	# the table fits 120 columns
	awk 'length > 120 && !/^(verdict|live_)/ { exit 1 }' "$WORK/last.out" || die "line over 120"
}

t_probe_filters_and_formats() {
	expect_rc 0 "$BIN/efab_probe" -p shm --csv "$WORK/p.csv"
	grep -q "^shm,shm,shm,mr_FI_MR_LOCAL,no$" "$WORK/p.csv" || die "csv lacks mr_FI_MR_LOCAL"
	[ "$(cut -d, -f1 "$WORK/p.csv" | sort -u | grep -vc provider)" = 1 ] || die "-p shm not filtered"
	expect_rc 0 "$BIN/efab_probe" -p tcp -f 127.0.0.1/32 --json
	python3 - "$WORK/last.out" <<'PY' || die "json filter"
import json, sys
f = json.load(open(sys.argv[1]))["fabrics"]
# libfabric 1.17 answers -p tcp with tcp;ofi_rxm only, 2.x with tcp and tcp;ofi_rxm
assert f and all(c["provider"] in ("tcp", "tcp;ofi_rxm") and c["fabric"] == "127.0.0.1/32" for c in f), f
assert len({(c["provider"], c["domain"]) for c in f}) == len(f), f
PY
	expect_rc 2 "$BIN/efab_probe" -p efa
	expect_msg "no RDM fabric matches provider 'efa'.*available here: .*shm/shm/shm"
	expect_rc 2 "$BIN/efab_probe" -p shm -f efa-direct
	expect_msg "available here"
	expect_rc 2 "$BIN/efab_probe" --domain nonexistent0
	expect_rc 2 "$BIN/efab_probe" -m 8
	expect_msg "unknown option"
}

t_probe_live() {
	for p in shm tcp; do
		expect_rc 0 mpi 2 "$BIN/efab_probe" --live -p $p --json
		python3 - "$WORK/last.out" <<'PY' || die "live results on $p"
import json, sys
for f in json.load(open(sys.argv[1]))["fabrics"]:
    for k in ("live_put_registered", "live_put_unregistered", "live_writedata", "live_read",
              "live_atomic_fadd_u64"):
        assert f[k] == "OK", (f["provider"], k, f[k])
PY
	done
	expect_rc 2 mpi 3 "$BIN/efab_probe" --live -p shm
	expect_msg "exactly 2 ranks"
}

t_atomic_unsupported_exit_77() {
	expect_rc 0 "$BIN/efab_probe" -p shm --json
	# an op/dtype pair the provider refuses, as the provider reports it
	local pair
	pair=$(python3 - "$WORK/last.out" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["fabrics"][0]
for op in ("add", "fadd", "cswap", "swap", "min", "max", "bor", "band", "bxor"):
    have = f["atomic_" + op].split()
    for dt in ("u64", "u32", "i64", "i32", "f64", "f32"):
        if dt not in have:
            print(op, dt)
            sys.exit(0)
PY
)
	[ -n "$pair" ] || die "shm supports every op x dtype: nothing to refuse"
	set -- $pair
	expect_rc 77 mpi 2 "$BIN/efab_atomic_lat" -p shm --aop "$1" --dtype "$2"
	expect_msg "does not support --aop $1 .* on $2"
	expect_rc 77 mpi 2 "$BIN/efab_atomic_bw" -p shm --aop "$1" --dtype "$2"
}
