# pct_of_link is bw_MBps over link_Gbps, the port speed libfabric reports
# (fi_info->nic->link_attr->speed). Payload cannot outrun its port, so a
# figure above 100 % says the reported speed is wrong (an EFA driver that
# reports 100 Gb/s for a 200 Gb/s p5en port reads up to ~190 %), not what
# the link did: the table prints ">100?" instead, a header line says why,
# and the CSV keeps the figure (docs/csv.md). The test hook
# EFAB_FAULT_LINK_GBPS=G stands for such a driver (shm reports no speed).

# The table cell of COLUMN in the row whose size is SIZE, from $WORK/last.out.
table_cell() { # SIZE COLUMN
	awk -v s="$1" -v c="$2" '$1 == "size" { for (i = 1; i <= NF; i++) if ($i == c) k = i }
		$1 == s && k { print $k; exit }' "$WORK/last.out"
}

t_pct_of_link_over_100_flagged() {
	local cols=pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link cell
	EFAB_FAULT_LINK_GBPS=0.1 expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p shm -m 64K:128K -n 5 \
		--csv "$WORK/o.csv"
	csvcheck "$WORK/o.csv" --bench put_bw --rows 2 --bw --extra $cols
	# the CSV keeps the figure, a number (above 100 here)
	python3 - "$WORK/o.csv" <<'EOF' || die "the CSV's pct_of_link is not the figure"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert r["link_Gbps"] == "0.1", r["link_Gbps"]
    assert float(r["pct_of_link"]) > 100, r["pct_of_link"]
EOF
	# the table does not print it as a share of the link
	for s in 64K 128K; do
		cell=$(table_cell $s pct_of_link)
		[ "$cell" = ">100?" ] || die "size $s: pct_of_link printed as '$cell', not flagged"
	done
	# a header line defines the columns and says what >100? means
	grep -q '^# link_Gbps = the port speed libfabric reports.*above 100 % it is printed as >100?.*speed is wrong' \
		"$WORK/last.out" || die "no header line saying >100? is a wrong reported speed"
	# a plausible figure is printed as it is
	EFAB_FAULT_LINK_GBPS=100000 expect_rc 0 mpi 2 "$BIN/efab_put_bw" --columns size,pct_of_link -p shm -m 64K -n 5
	cell=$(table_cell 64K pct_of_link)
	[[ "$cell" =~ ^[0-9]+\.[0-9]$ ]] || die "pct_of_link '$cell' under 100 % not printed as a number"
	return 0
}
