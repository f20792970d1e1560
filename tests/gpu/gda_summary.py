#!/usr/bin/env python3
"""The side-by-side table of a GDA sitting (tests/gpu/gda_sitting.sh OUTDIR):
per case and size the median over rounds of lat_us_p50 (latency rows) or
msg_rate_Mops and bw_MBps (bandwidth rows), the GPU-initiated / CPU-initiated
ratios on efa-direct from the same rounds, gpu_post_ns, the path the NIC
counters showed, and the errors column (must be 0). Every figure is the
simulated device's (efasim), never EFA's."""
import csv
import glob
import os
import re
import statistics
import sys


def load(outd):
    runs = {}
    for f in sorted(glob.glob(os.path.join(outd, "*.csv"))):
        m = re.match(r"(\d+)-(.+)\.csv$", os.path.basename(f))
        if not m:
            continue
        rnd, name = int(m.group(1)), m.group(2)
        for row in csv.DictReader(open(f)):
            runs.setdefault(name, {}).setdefault(int(row["size_bytes"]), []).append((rnd, row))
    return runs


def med(rows, col):
    v = [float(r[col]) for _, r in rows if r.get(col) not in (None, "")]
    return statistics.median(v) if v else None


def fmt(x, p=2):
    return "-" if x is None else f"{x:.{p}f}"


def main():
    outd = sys.argv[1]
    runs = load(outd)
    if not runs:
        print("no CSVs in", outd)
        return 1
    bad = 0
    print("SIMULATED EFA device (efasim): the kernel's code and GPU-side costs are real, the "
          "device's timings are the simulator's\n")
    groups = [("putw_lat", "write, arrival = the last byte polled by the target's kernel, half round trip, lat_us_p50", "lat_us_p50"),
              ("putd_lat", "writedata, half round trip, lat_us_p50", "lat_us_p50"),
              ("get_lat", "read, full round trip, lat_us_p50", "lat_us_p50"),
              ("put_bw", "windows of -W writes, msg_rate_Mops (bw_MBps)", "msg_rate_Mops")]
    for prefix, what, col in groups:
        names = sorted(n for n in runs if n.startswith(prefix + "-"))
        if not names:
            continue
        print(f"## {prefix}: {what}; median over rounds (n rounds)")
        hdr = ["size"] + names
        cpu = f"{prefix}-cpu-direct"
        gpus = [n for n in names if "-gpu" in n]
        hdr += [f"{g.split('-')[1]}/cpu" for g in gpus] + ["gpu_post_ns"] + ["path"]
        print(" | ".join(hdr))
        sizes = sorted({s for n in names for s in runs[n]})
        for s in sizes:
            cells = [str(s)]
            vals = {}
            for n in names:
                rows = runs[n].get(s, [])
                bad += sum(1 for _, r in rows if r.get("errors") not in ("0",))
                v = med(rows, col)
                vals[n] = v
                extra = f" ({fmt(med(rows, 'bw_MBps'), 1)} MB/s)" if col == "msg_rate_Mops" else ""
                cells.append(f"{fmt(v, 4 if col == 'msg_rate_Mops' else 2)}{extra} ({len(rows)})")
            for g in gpus:
                a, b = vals.get(g), vals.get(cpu)
                cells.append(fmt(a / b, 3) if a and b else "-")
            posts = [fmt(med(runs[g].get(s, []), "gpu_post_ns"), 0) for g in gpus]
            cells.append("/".join(posts))
            paths = sorted({r.get("path", "") for n in names for _, r in runs[n].get(s, [])})
            cells.append(",".join(p for p in paths if p))
            print(" | ".join(cells))
        print()
    print(f"rows with errors != 0: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
