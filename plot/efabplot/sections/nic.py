"""Report section "What the NIC did" (issue 25): per series and size the path
the NIC's counters prove (path, path_ratio), the byte counters of both
sides, and every non-zero error or retransmit counter named."""
from .. import fmt, pathrows


# Issue 25: columns appended to the RMA and atomic benches' rows. The path
# the NIC counters prove, the payload it is judged against, and per counter
# c the delta over the timed phase on the initiating side (nic_init_<c>)
# and on the target side (nic_tgt_<c>); post_ns/poll_ns, the software cost
# per operation. Rows without the columns (older CSVs) have none of them.
NIC_COUNTERS = ("tx_bytes tx_pkts rx_bytes rx_pkts send_bytes send_wrs recv_bytes recv_wrs "
                "rdma_write_bytes rdma_write_wrs rdma_write_recv_bytes rdma_read_bytes "
                "rdma_read_wrs rdma_read_resp_bytes rdma_write_wr_err rdma_read_wr_err "
                "rx_drops retrans_bytes retrans_pkts retrans_timeout_events "
                "unresponsive_remote_events impaired_remote_conn_events").split()


NIC_ERROR_COUNTERS = ("rdma_write_wr_err", "rdma_read_wr_err", "rx_drops", "retrans_bytes",
                      "retrans_pkts", "retrans_timeout_events", "unresponsive_remote_events",
                      "impaired_remote_conn_events")


# A finding, as efab_scan judges a NIC (bench/ops/scan_verdict.c efab_scan_nic_trouble,
# docs/scan.md): SRD resends what a loaded fabric drops, below the provider,
# so a healthy NIC's retransmit and drop counters rise at some background
# rate; they are a finding above MAX_RETRANS of that side's own traffic (or
# with no traffic to judge them by). Error and event counters are a finding
# at any count. Every non-zero one is named in the table either way.
MAX_RETRANS = 0.01  # efab_scan --max-retrans's default
RELATIVE_TO = {"retrans_pkts": "tx_pkts", "retrans_bytes": "tx_bytes", "rx_drops": "rx_pkts"}


def is_trouble(d, side, c):
    """Counter c of one row's side ("init"/"tgt") is a finding."""
    v = fmt.fnum(d.get(f"nic_{side}_{c}"))
    if not v:
        return False
    per = RELATIVE_TO.get(c)
    if per is None:
        return True
    p = fmt.fnum(d.get(f"nic_{side}_{per}"))
    return not p or v > MAX_RETRANS * p


NIC_BYTE_COLUMNS = (("rdma_write_bytes", "RDMA write"), ("rdma_read_bytes", "RDMA read"),
                    ("send_bytes", "send"), ("tx_bytes", "tx"), ("rx_bytes", "rx"))


def has_path(d):
    return bool(d.get("path"))


def side_sum(d, c):
    """Counter c over both sides of the job: initiating + target side; with
    hw_nics 1 one NIC served both sides (ranks on one host sharing it), so it
    is counted once. None when neither side has the counter."""
    i, t = fmt.fnum(d.get("nic_init_" + c)), fmt.fnum(d.get("nic_tgt_" + c))
    if fmt.fnum(d.get("hw_nics")) == 1:
        return i if i is not None else t
    vals = [v for v in (i, t) if v is not None]
    return sum(vals) if vals else None


def paths_seen(rows):
    seen = []
    for d in rows:
        if d["path"] not in seen:
            seen.append(d["path"])
    return seen


def error_notes(rows, trouble_only=False):
    """Every non-zero error or retransmit counter of the repeats, named, with
    its side; the hw_note of any repeat. Nothing is hidden by a median: the
    largest value, and in how many repeats it was non-zero. trouble_only:
    only the counters that are a finding in some repeat (is_trouble), with
    the share of their side's traffic where they are judged by it."""
    notes = []
    for c in NIC_ERROR_COUNTERS:
        for side, word in (("init", "initiator"), ("tgt", "target")):
            vals = [fmt.fnum(d.get(f"nic_{side}_{c}")) for d in rows]
            nz = [v for v in vals if v]
            if not nz:
                continue
            share = ""
            if trouble_only:
                bad = [d for d in rows if is_trouble(d, side, c)]
                if not bad:
                    continue
                per = RELATIVE_TO.get(c)
                if per:
                    d = max(bad, key=lambda r: fmt.fnum(r.get(f"nic_{side}_{c}")) or 0)
                    v, p = fmt.fnum(d.get(f"nic_{side}_{c}")), fmt.fnum(d.get(f"nic_{side}_{per}"))
                    share = (f"; {100.0 * v / p:.2f} % of {fmt.fcount(p)} {per}" if p
                             else f"; 0 {per}")
            k = f"; {len(nz)} of {len(rows)} repeats" if len(rows) > 1 else ""
            notes.append(f"{c} {fmt.fcount(max(nz))} ({word}{k}{share})")
    for d in rows:
        n = d.get("hw_note", "")
        if n and f"note: {fmt.md_cell(n)}" not in notes and not trouble_only:
            notes.append(f"note: {fmt.md_cell(n)}")
    return notes


def nic_section(runs, group_by):
    """Report lines "What the NIC did"; empty when no row has the columns."""
    data = pathrows.path_points(runs, group_by, has_path, False)
    if not data:
        return []
    sim = any(d.get("_simulated") for b in data.values() for k in b.values()
              for rs in k.values() for d in rs)
    L = ["## What the NIC did", "",
         "Per series and size, what the NIC's hardware counters say the payload took "
         "(deltas over the timed phase; columns `path`, `path_ratio`, `nic_init_*`, "
         "`nic_tgt_*` of the CSV). With P = `payload_bytes` (the timed phase's payload, every "
         "initiated operation: a put ping-pong counts both legs) and W, R, S the "
         "rdma_write, rdma_read and send bytes summed over every distinct NIC of the job "
         "(both sides, each NIC once): `device-write`, `device-read` or `emulated-send` is "
         "the one category with at least 0.9 P; `mixed`: two or more such categories, or "
         "none but W + R + S ≥ 0.9 P; `none`: W + R + S < 0.9 P (the payload did not cross "
         "the NIC, e.g. the efa fabric's shm between ranks on one host); `stale`: W + R + S < "
         "0.9 P although the payload had to cross a NIC (efa-direct, or ranks on different "
         "hosts), also when the counters were read again: they were not the device's current "
         "values. `path_ratio` is the "
         "path's bytes ÷ P ((W + R + S) ÷ P for mixed and none); protocol headers can put it "
         "above 1. The byte columns add the initiating and the target side (each NIC is "
         "counted once, on the side of the first rank that uses it, so the sum counts "
         "every NIC once). Byte counts in bytes, decimal prefixes (k = 10^3, "
         "M = 10^6, G = 10^9). With repeats: medians, and every path the repeats showed; "
         "non-zero error and retransmit counters are named with their largest value. A "
         "finding, as efab_scan judges a NIC: any error or event counter; retransmits "
         "(retrans_pkts, retrans_bytes) or rx_drops above 1 % of that side's tx_pkts, tx_bytes "
         "or rx_pkts (SRD resends what a loaded fabric drops, so a healthy NIC's rise too).", ""]
    if sim:
        L += ["Rows marked `(simulated)`: the counters are efasim's, counted as the simulated "
              "device moves bytes, not a NIC's.", ""]
    bare, findings = {}, []
    for bench in sorted(data):
        series = data[bench]
        table = []
        for (name, prov, fab), bysize in sorted(series.items()):
            allrows = [d for rs in bysize.values() for d in rs]
            if all(d["path"] == "-" for d in allrows):
                short = name[len(prov) + 3:] if name.startswith(prov + " · ") else name
                bare.setdefault(prov, []).append(f"{bench} [{short}]")
                continue
            for s in sorted(bysize):
                rs = bysize[s]
                seen = paths_seen(rs)
                if len(seen) > 1:
                    counts = ", ".join(f"{p} ×{sum(1 for d in rs if d['path'] == p)}"
                                       for p in seen)
                    findings.append(f"{bench} [{name}] {fab} at {fmt.human(s)}: the repeats "
                                    f"disagree on the path ({counts}).")
                ratio = fmt.median_of(fmt.fnum(d.get("path_ratio")) for d in rs)
                pay = fmt.median_of(fmt.fnum(d.get("payload_bytes")) for d in rs)
                cells = [fmt.fcount(fmt.median_of(side_sum(d, c) for d in rs))
                         for c, _ in NIC_BYTE_COLUMNS]
                nics = fmt.median_of(fmt.fnum(d.get("hw_nics")) for d in rs)
                errs = error_notes(rs)
                bad = error_notes(rs, trouble_only=True)
                if bad:
                    findings.append(f"{bench} [{name}] {fab} at {fmt.human(s)}: error counters, or "
                                    f"retransmits/drops above {MAX_RETRANS * 100:g} % of the side's "
                                    f"traffic: {'; '.join(bad)}.")
                table.append(f"| {name} | {fab} | {fmt.size_label(s)} | {' / '.join(seen)} | "
                             f"{len(rs)} | {fmt.fcount(pay)} | "
                             f"{'-' if ratio is None else f'{ratio:.6f}'} | "
                             + " | ".join(cells) + f" | {fmt.fcount(nics)} | "
                             f"{'; '.join(errs) or '-'} |")
        if not table:
            continue
        L += [f"### {bench}", "",
              "| series | fabric | size | path | repeats | payload (B) | path_ratio | "
              + " | ".join(f"{w} (B)" for _, w in NIC_BYTE_COLUMNS)
              + " | NICs | errors, retransmits, notes |",
              "|" + "---|" * (9 + len(NIC_BYTE_COLUMNS))] + table + [""]
    for f in findings:
        L += [f"**Finding:** {f}", ""]
    if bare:
        L += ["No NIC counters (path `-` in every row: the provider bypasses the NIC or the "
              "driver has no counters; every nic_* column empty): "
              + "; ".join(f"{p}: {', '.join(v)}" for p, v in sorted(bare.items())) + ".", ""]
    return L
