#!/usr/bin/env python3
"""Checks an efabench CSV file: its header against docs/csv.md (schema 2:
exactly the bench's documented columns; schema 1: a leading part of them,
at least the common columns and --extra), whole rows, expected bench, row
count and sizes, zero errors, and sane statistics (min <= p50 <= p99 <=
max, all positive). Exit 0 when every check holds, else 1 with the reason;
a schema other than 1 and 2 is refused with one line."""
import argparse
import csv
import sys

import csvdoc

# The schemas this checker reads: 2 = docs/csv.md's, 1 = the same columns
# or a leading part of them (schema 1 grew by appending; docs/csv.md
# "Schema 1").
SCHEMAS = ("1", "2")
DOC = csvdoc.Schema()
BASE = DOC.common_columns()
CONFIRMS = ("local-completion", "remote-cq-data", "ordered-flag", "unordered-flag")
LOWER_BOUNDS = ("yes", "no", "unknown")
# issue 45: the path libfabric reported for a registration (bench/cli/reglog.c)
REG_PATHS = ("dmabuf", "peermem", "dmabuf->peermem", "efabench-dmabuf", "host", "-", "unknown")
REG_COMPONENTS = ("cuMemHostRegister", "dmabuf_export")


def fail(msg):
    print(f"csvcheck: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--bench", required=True)
    ap.add_argument("--rows", type=int, help="expected number of data rows")
    ap.add_argument("--sizes", help="comma-separated expected size_bytes in order")
    ap.add_argument("--errors", type=int, default=0, help="expected total errors")
    ap.add_argument("--lat", action="store_true", help="latency columns must be filled")
    ap.add_argument("--bw", action="store_true", help="bw/msg rate columns must be filled")
    ap.add_argument("--op", help="expected op in every row")
    ap.add_argument("--provider", help="substring expected in the provider column")
    ap.add_argument("--extra", default="", help="comma-separated extra columns after the base")
    ap.add_argument("--where", action="append", default=[],
                    help="COL=VALUE: only rows matching are counted and checked")
    ap.add_argument("--confirm", help="expected end_confirm in every row")
    ap.add_argument("--reg-path", help="expected reg_path in every row")
    ap.add_argument("--pairs-sum", action="store_true",
                    help="per size, the pair=all row's bw and rate equal the sum of the per-pair rows")
    a = ap.parse_args()
    with open(a.file, newline="") as f:
        text = f.read()
    if not text.endswith("\n"):
        fail("file does not end with a newline (torn row?)")
    rows = list(csv.reader(text.splitlines()))
    header = rows[0]
    schemas = sorted({r[0] for r in rows[1:] if r})
    if len(schemas) > 1:
        fail(f"rows mix schemas {', '.join(schemas)}")
    schema = schemas[0] if schemas else str(DOC.number)
    if schema not in SCHEMAS:
        fail(f"schema {schema}: csvcheck reads schemas {' and '.join(SCHEMAS)}")
    want = BASE + ([c for c in a.extra.split(",") if c])
    if a.bench in DOC.benches:
        full = DOC.columns(a.bench)
        if full[:len(want)] != want:
            fail(f"--extra {a.extra} is not the first of {a.bench}'s columns in docs/csv.md")
        if schema == "1" and len(header) >= len(want) and header == full[:len(header)]:
            want = header  # schema 1: a leading part of today's columns
        else:
            want = full
    if header != want:
        diff = csvdoc.first_difference(header, want)
        fail(f"schema-{schema} header differs from docs/csv.md's {a.bench}: {diff}")
    data = []
    for n, r in enumerate(rows[1:], 2):
        if len(r) != len(header):
            fail(f"line {n}: {len(r)} fields, header has {len(header)}")
        d = dict(zip(header, r))
        if all(d.get(k) == v for k, v in (w.split("=", 1) for w in a.where)):
            data.append(d)
    if a.rows is not None and len(data) != a.rows:
        fail(f"{len(data)} rows, expected {a.rows}")
    if a.sizes and [int(d["size_bytes"]) for d in data] != [int(s) for s in a.sizes.split(",")]:
        fail(f"sizes {[d['size_bytes'] for d in data]}, expected {a.sizes}")
    total_err = 0
    for d in data:
        if d["bench"] != a.bench:
            fail(f"bench {d['bench']}, expected {a.bench}")
        if d.get("path") == "-":
            filled = [k for k in d if (k.startswith("nic_") or k in ("path_ratio", "hw_nics")) and d[k]]
            if filled:
                fail(f"size {d['size_bytes']}: path '-' but NIC cells filled: {filled}")
        if "lat_lower_bound" in d:
            if d["lat_lower_bound"] not in LOWER_BOUNDS:
                fail(f"size {d['size_bytes']}: lat_lower_bound {d['lat_lower_bound']!r}")
            if d["op"] != "write" and d["lat_lower_bound"] != "no":
                fail(f"size {d['size_bytes']}: {d['op']} row is a lower bound")
            for k in ("late_msgs", "late_bytes"):
                if d.get(k) not in (None, "n/a") and not d[k].isdigit():
                    fail(f"size {d['size_bytes']}: {k} {d[k]!r}")
        if "reg_path" in d:
            rp = d["reg_path"]
            # +gdrcopy[-failed|-unknown]: the efa fabric's GDRCopy pin of a CUDA registration
            if rp.endswith(("+gdrcopy", "+gdrcopy-failed", "+gdrcopy-unknown")):
                if d.get("mem_local") not in ("cuda", "cuda-vmm") or d["op"] == "fresh_dmabuf":
                    fail(f"size {d['size_bytes']}: {d['op']} {d.get('mem_local')}: reg_path {rp!r}")
                rp = rp[:rp.rindex("+gdrcopy")]
            if rp not in REG_PATHS:
                fail(f"size {d['size_bytes']}: reg_path {rp!r} not one of {REG_PATHS}")
            if (d["op"] in REG_COMPONENTS or d.get("includes_nic_work") == "no") and rp != "-":
                fail(f"size {d['size_bytes']}: {d['op']} registers nothing on a NIC: reg_path {rp!r}")
            if d["op"] == "fresh_dmabuf" and rp != "efabench-dmabuf":
                fail(f"size {d['size_bytes']}: fresh_dmabuf passes FI_MR_DMABUF: reg_path {rp!r}")
            if (d["mem_local"] != "cuda" and d.get("includes_nic_work") == "yes"
                    and rp not in ("host", "dmabuf")):
                fail(f"size {d['size_bytes']}: {d['mem_local']} memory: reg_path {rp!r}")
        if a.reg_path and d.get("reg_path") != a.reg_path:
            fail(f"size {d['size_bytes']} {d['op']}: reg_path {d.get('reg_path')!r}, expected {a.reg_path}")
        if a.confirm and d.get("end_confirm") != a.confirm:
            fail(f"end_confirm {d.get('end_confirm')!r}, expected {a.confirm}")
        if a.op and d["op"] != a.op:
            fail(f"op {d['op']}, expected {a.op}")
        if a.provider and a.provider not in d["provider"]:
            fail(f"provider {d['provider']}, expected {a.provider}")
        if int(d["iters"]) <= 0:
            fail("iters <= 0")
        total_err += int(d["errors"])
        if a.lat:
            v = [float(d[k]) for k in ("lat_us_min", "lat_us_p50", "lat_us_p99", "lat_us_max")]
            if not (0 < v[0] <= v[1] <= v[2] <= v[3]):
                fail(f"size {d['size_bytes']}: min/p50/p99/max not ordered: {v}")
            if not (v[0] <= float(d["lat_us_mean"]) <= v[3]):
                fail(f"size {d['size_bytes']}: mean outside [min, max]")
            if d.get("lat_us_p25") and not (
                    v[0] <= float(d["lat_us_p25"]) <= v[1] <= float(d["lat_us_p75"]) <= v[3]):
                fail(f"size {d['size_bytes']}: p25/p50/p75 not ordered within [min, max]")
        if a.bw:
            if not (float(d["bw_MBps"]) > 0 and float(d["msg_rate_Mops"]) > 0):
                fail(f"size {d['size_bytes']}: bandwidth or message rate not positive")
            mb = float(d["msg_rate_Mops"]) * int(d["size_bytes"])
            if abs(mb - float(d["bw_MBps"])) > 0.01 * float(d["bw_MBps"]) + 0.01:
                fail(f"size {d['size_bytes']}: bw_MBps {d['bw_MBps']} != msg_rate x size {mb}")
            if d.get("pipeline") == "yes":
                # --pipeline times no windows: the window-sum columns stay empty
                if d.get("bw_MBps_windows") or d.get("window_us_p50"):
                    fail(f"size {d['size_bytes']}: --pipeline row with window figures")
                if d.get("end_confirm") not in CONFIRMS:
                    fail(f"size {d['size_bytes']}: end_confirm {d.get('end_confirm')!r}")
            elif d.get("bw_MBps_windows") is not None:
                # the headline divides by the loop's elapsed time, which holds
                # every window's time: it can never exceed the window-sum figure
                bw, bww = float(d["bw_MBps"]), float(d["bw_MBps_windows"])
                mw = float(d["msg_rate_Mops_windows"]) * int(d["size_bytes"])
                if bw > bww * 1.0005 + 0.001:
                    fail(f"size {d['size_bytes']}: bw_MBps {bw} (elapsed) above "
                         f"bw_MBps_windows {bww} (sum of window times)")
                if abs(mw - bww) > 0.01 * bww + 0.01:
                    fail(f"size {d['size_bytes']}: bw_MBps_windows {bww} != "
                         f"msg_rate_Mops_windows x size {mw}")
                if d.get("end_confirm") not in CONFIRMS:
                    fail(f"size {d['size_bytes']}: end_confirm {d.get('end_confirm')!r}")
    if a.pairs_sum:
        sizes = sorted({d["size_bytes"] for d in data}, key=int)
        for sz in sizes:
            agg = [d for d in data if d["size_bytes"] == sz and d["pair"] == "all"]
            per = [d for d in data if d["size_bytes"] == sz and d["pair"] != "all"]
            if len(agg) != 1 or len(per) != int(agg[0]["pairs"]):
                fail(f"size {sz}: {len(agg)} aggregate rows and {len(per)} pair rows")
            for col in ("bw_MBps", "msg_rate_Mops", "bw_MBps_windows", "msg_rate_Mops_windows"):
                if col not in agg[0] or agg[0][col] == "":  # (--pipeline: no window sums)
                    continue
                tot = sum(float(d[col]) for d in per)
                if abs(tot - float(agg[0][col])) > 0.01 * tot + 0.001:
                    fail(f"size {sz}: aggregate {col} {agg[0][col]} != sum of pairs {tot}")
    if total_err != a.errors:
        fail(f"errors column sums to {total_err}, expected {a.errors}")
    print(f"csvcheck: {a.file}: {len(data)} rows ok")


if __name__ == "__main__":
    main()
