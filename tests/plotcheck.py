#!/usr/bin/env python3
"""Checks efab_plot's output: every PNG exists, has a size efab_plot draws
and is not blank; and the headline
table of report.md matches medians and ratios recomputed here from the CSVs."""
import csv
import glob
import os
import re
import struct
import sys


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"plotcheck: {path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def not_blank(path):
    import matplotlib.image as mpimg
    img = mpimg.imread(path)
    return float(img.std()) > 0.02


def median(v):
    v = sorted(v)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def main():
    plots, run, *benches = sys.argv[1:]
    for b in benches:
        p = os.path.join(plots, f"{b}.png")
        if not os.path.exists(p):
            raise SystemExit(f"plotcheck: {p} missing")
        w, h = png_size(p)
        # latency/bandwidth: 990 px wide (9 in at 110 dpi), 3.6 in per panel plus
        # the caption; mr_reg: small multiples 6.8 in per memory kind, 2.7 in per regime
        if w < 740 or not 396 <= h <= 6000:
            raise SystemExit(f"plotcheck: {p} is {w}x{h}")
        if not not_blank(p):
            raise SystemExit(f"plotcheck: {p} is blank")
    # recompute the headline table of put_lat grouped by provider
    rows = list(csv.DictReader(open(os.path.join(run, "put_lat.csv"))))
    rep = open(os.path.join(plots, "report.md")).read()
    sec = rep.split("### put_lat")[1].split("###")[0]
    checked = 0
    for line in sec.splitlines():
        m = re.match(r"\| (\S+) (\S+) host:host \| (\S+) \| (\S+) \| (\S+) \| (\S+) \|", line)
        if not m:
            continue
        section, op, size, shm, tcp, ratio = m.groups()
        mult = {"K": 1024, "M": 1 << 20}.get(size[-1], 1)
        nbytes = int(size.rstrip("KM")) * mult
        got = {}
        for prov in ("shm", "tcp;ofi_rxm"):
            v = [float(r["lat_us_p50"]) for r in rows
                 if r["op"] == op and int(r["size_bytes"]) == nbytes and r["provider"] == prov
                 and re.split(r"[\[#]", r["run_id"].split(":", 1)[1])[0] == section]
            got[prov] = median(v)
        if abs(got["shm"] - float(shm)) > 0.0015 or abs(got["tcp;ofi_rxm"] - float(tcp)) > 0.0015:
            raise SystemExit(f"plotcheck: {op} {size}: report {shm}/{tcp}, CSV {got}")
        r = got["tcp;ofi_rxm"] / got["shm"]
        if abs(r - float(ratio.rstrip("*"))) > 0.0015:
            raise SystemExit(f"plotcheck: {op} {size}: ratio {ratio}, recomputed {r:.3f}")
        checked += 1
    if checked < 4:
        raise SystemExit(f"plotcheck: only {checked} headline rows found")
    print(f"plotcheck: {len(benches)} figures, {checked} headline rows agree with the CSV")


if __name__ == "__main__":
    main()
