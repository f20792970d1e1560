#!/usr/bin/env python3
"""NVSHMEM's own put/get beside the raw fabric, from the CSVs of
tests/nvshmem/sitting.sh's part put (put_<fabric>_<bench>.csv in OUTDIR):

  tests/nvshmem/put_table.py OUTDIR

One line per fabric, NVSHMEM benchmark, initiator, op and size: NVSHMEM's
figure, the raw fabric's partner on the same simulated NIC pair, and NVSHMEM's
cost above it. Partners (docs/nvshmem.md, "Beside the raw fabric"):
  efab_shmem_lat -o put  (put + quiet)  beside efab_put_bw -W 1's window p50 (one
                         write and its completion: the like-for-like partner,
                         put_<fabric>_put_bw_w1.csv) and, on a second line,
                         beside 2 x efab_put_lat p50 (a ping-pong's round trip,
                         one leg into the other side's memory kind)
  efab_shmem_lat -o get                               beside efab_get_lat p50
  efab_shmem_bw -o put / get                          beside efab_put_bw / efab_get_bw
  efab_shmem_lat -o put-signal  beside efab_put_bw -o writedata --signal-send -W 1's
                         window p50 (one writedata + its 32-byte signal send and their
                         completions; put_<fabric>_signal_bw_w1.csv)
  efab_shmem_bw -o put-signal   beside efab_put_bw -o writedata --signal-send
                         (put_<fabric>_signal_bw.csv)
Latency rows of efab_shmem_lat --nbi (column form = nbi: the _nbi form + the quiet)
have "nbi" after their initiator, beside the same partners.
Latency: p50 in us, ratio = NVSHMEM / raw, above = NVSHMEM - raw (us).
Bandwidth: MB/s (10^6 B/s), ratio = raw / NVSHMEM (how many times the raw
fabric's rate), above = the time per operation NVSHMEM adds (us:
size / NVSHMEM's rate - size / raw rate). Rows with errors > 0 or a missing
partner say so; nothing is filled in. The bandwidth runs checked with -c
(put_<fabric>_checked_*.csv: a checked window's time includes its barriers)
are listed after the table with their sizes and errors, paired with nothing. Every NIC figure is the SIMULATED
device's (efasim); NVSHMEM's, libfabric's and the CPU's parts are real."""
import csv
import glob
import os
import sys


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def line(fab, r, pr, part, col, k):
    """One table line: NVSHMEM's row r beside the raw row pr (or its absence)."""
    op, bench, errs = r["op"], r["bench"], r.get("errors", "")
    size, lat = int(r["size_bytes"]), bench == "efab_shmem_lat"
    mine = num(r["lat_us_p50" if lat else "bw_MBps"])
    other = k * num(pr[col]) if pr and num(pr.get(col)) is not None else None
    if pr and pr.get("errors") not in ("", "0", None):
        other, part = None, part + " (errors %s)" % pr["errors"]
    if lat:
        ratio = mine / other if mine and other else None
        above = mine - other if mine is not None and other is not None else None
        unit = "us"
    else:
        ratio = other / mine if mine and other else None
        above = (size / mine - size / other) if mine and other else None
        unit = "MB/s"
    if errs not in ("", "0"):  # NVSHMEM's own row failed its check: compared with nothing
        ratio = above = None
        part += " (not compared: errors)"
    fmt = lambda x, p: "-" if x is None else ("%." + str(p) + "f") % x
    ini = r.get("initiator", "")
    if lat and r.get("form") == "nbi":  # efab_shmem_lat --nbi: the _nbi form + the quiet
        ini += " nbi"
    print(" | ".join([fab, bench, ini, op, str(size),
                      fmt(mine, 2) + " " + unit,
                      part if pr else part + ": no row",
                      fmt(other, 2), fmt(ratio, 2) + ("x" if ratio else ""),
                      fmt(above, 2), errs, r.get("nvshmem_version", ""),
                      r.get("lf_fabric", "")]))


def main(d):
    raw = {}    # (fabric, bench, size) -> row
    nv = []
    checked = {}  # (file, bench, initiator, op) -> [sizes, errors]
    for f in sorted(glob.glob(os.path.join(d, "put_*.csv"))):
        fab = os.path.basename(f)[len("put_"):].split("_", 1)[0]
        for r in csv.DictReader(open(f)):
            # the CSV's bench column names the row without "efab_" (shmem_lat, put_lat)
            r["bench"] = "efab_" + r["bench"] if not r["bench"].startswith("efab_") else r["bench"]
            base = os.path.basename(f)
            if base.endswith("_put_bw_w1.csv"):  # efab_put_bw -W 1
                r["bench"] = "efab_put_bw_w1"
            elif base.endswith("_signal_bw_w1.csv"):  # efab_put_bw --signal-send -W 1
                r["bench"] = "efab_put_bw_signal_w1"
            elif base.endswith("_signal_bw.csv") and "_checked_" not in base:
                r["bench"] = "efab_put_bw_signal"
            if "_checked_" in os.path.basename(f):
                k = (os.path.basename(f), r["bench"], r.get("initiator", ""), r["op"])
                c = checked.setdefault(k, [0, 0])
                c[0] += 1
                c[1] += int(r["errors"] or 0)
                continue
            size = int(r["size_bytes"])
            if r["bench"].startswith("efab_shmem_"):
                nv.append((fab, r))
            else:
                raw[(fab, r["bench"], size)] = r
    if not nv:
        print("no NVSHMEM rows (put_*_shmem_*.csv) in %s" % d)
        return 1
    print("SIMULATED NIC (efasim): NVSHMEM's and libfabric's software and the CPU are real")
    print("fabric | nvshmem bench | initiator | op | size | nvshmem | raw partner | raw | ratio | above (us) | errors | nvshmem_version | lf_fabric")
    for fab, r in nv:
        size, op = int(r["size_bytes"]), r["op"]
        lat = r["bench"] == "efab_shmem_lat"
        # the partners: each one's row, name, figure column and factor
        if lat and op == "put-signal":
            partners = [("efab_put_bw_signal_w1", "efab_put_bw --signal-send -W 1 window p50",
                         "window_us_p50", 1)]
        elif op == "put-signal":
            partners = [("efab_put_bw_signal", "efab_put_bw --signal-send MB/s", "bw_MBps", 1)]
        elif lat and op == "put":
            partners = [("efab_put_bw_w1", "efab_put_bw -W 1 window p50", "window_us_p50", 1),
                        ("efab_put_lat", "2 x efab_put_lat p50", "lat_us_p50", 2)]
        elif lat:
            partners = [("efab_get_lat", "efab_get_lat p50", "lat_us_p50", 1)]
        else:
            partners = [("efab_%s_bw" % op, "efab_%s_bw MB/s" % op, "bw_MBps", 1)]
        for pb, part, col, k in partners:
            line(fab, r, raw.get((fab, pb, size)), part, col, k)
    if checked:
        print("")
        print("checked runs (-c, not timed beside anything) | bench | initiator | op | sizes | errors")
        for k, (n, e) in sorted(checked.items()):
            print(" | ".join([k[0], k[1], k[2], k[3], str(n), str(e)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
