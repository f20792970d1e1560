#!/usr/bin/env python3
"""Writes the constructed CSVs of tests/integration/t_plot_path.sh (issue 25,
proof of path) into this directory: tests/data/path/gen.py, then commit.

The headers are efab_put_bw's and efab_put_lat's as they were written on
2026-12-01 (efab_put_bw -p shm; t_plot_path_fixture_header compares them with
the built benches) with the issue's columns appended: path .. post_ns,
poll_ns, nic_init_<c>, nic_tgt_<c>: schema-1 files (docs/csv.md "Schema 1":
a leading part of today's columns, the schema cell 1), which efab_plot
still reads. The numbers are made up but consistent:
payload_bytes = operations x size, path and path_ratio by the issue's rule
from the counters (every NIC once).

  two-fabric/  put_bw and put_lat: efa-direct (device-write), efa (emulated-send
               up to 64 KiB, device-read at 4 MiB), shm (no counters: path -)
  repeats/     put_bw efa-direct, 3 repeats; at 64 KiB they disagree
               (device-write, device-write, mixed)
  errors/      put_bw efa: retransmits and rx_drops at 64 KiB in one of two
               repeats, a hw_note at 4 KiB, path none (one host, shm) at 8 B
  fabrics/     put_bw and put_lat (t_plot_fabrics.sh): shm, then efa-direct,
               then efa, 3 repeats each (1 % apart); efa-direct exactly twice
               as fast as efa at every size (half the latency, twice the
               bandwidth), shm 4x as fast as efa-direct
"""
import csv
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BW_HEAD = ("schema,run_id,timestamp,bench,op,provider,fabric,domain,libfabric_version,"
           "provider_version,mem_local,mem_remote,ranks,pairs,window,size_bytes,iters,"
           "lat_us_min,lat_us_p50,lat_us_mean,lat_us_p99,lat_us_p999,lat_us_max,lat_us_stdev,"
           "bw_MBps,msg_rate_Mops,errors,provider_req,fabric_req,libfabric_built,libfabric_path,"
           "efa_installer,pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link,"
           "first_us,footprint,bw_MBps_windows,msg_rate_Mops_windows,end_confirm,"
           "window_us_p25,window_us_p75").split(",")
LAT_HEAD = ("schema,run_id,timestamp,bench,op,provider,fabric,domain,libfabric_version,"
            "provider_version,mem_local,mem_remote,ranks,pairs,window,size_bytes,iters,"
            "lat_us_min,lat_us_p50,lat_us_mean,lat_us_p99,lat_us_p999,lat_us_max,lat_us_stdev,"
            "bw_MBps,msg_rate_Mops,errors,provider_req,fabric_req,libfabric_built,"
            "libfabric_path,efa_installer,inject,first_us,lat_us_batch,lat_us_p25,"
            "lat_us_p75").split(",")
COUNTERS = ("tx_bytes tx_pkts rx_bytes rx_pkts send_bytes send_wrs recv_bytes recv_wrs "
            "rdma_write_bytes rdma_write_wrs rdma_write_recv_bytes rdma_read_bytes "
            "rdma_read_wrs rdma_read_resp_bytes rdma_write_wr_err rdma_read_wr_err rx_drops "
            "retrans_bytes retrans_pkts retrans_timeout_events unresponsive_remote_events "
            "impaired_remote_conn_events").split()
PATH_COLS = (["path", "path_ratio", "payload_bytes", "hw_nics", "hw_note", "post_ns", "poll_ns"]
             + [f"nic_init_{c}" for c in COUNTERS] + [f"nic_tgt_{c}" for c in COUNTERS]
             + ["initiator", "gpu_post_ns", "gpu_threads"])  # issue 37: who posted
# put_lat's last columns (issue 45): a write above one packet is a lower bound; late
# messages are counted only with -c (these fixture runs had none)
PUT_LAT_TAIL = ["lat_lower_bound", "late_msgs", "late_bytes"]
# put_bw's last columns (issue 48): the peak-rate techniques, all at their defaults
PUT_BW_TAIL = ["post_list", "pipeline", "high_pps", "tclass", "eps"]
TAILS = {"put_lat": PUT_LAT_TAIL, "put_bw": PUT_BW_TAIL}
LIB = "/opt/amazon/efa/lib/libfabric.so.1.32.0"
MTU, HDR = 8192, 64


def pkts(size):
    return max(1, math.ceil(size / MTU))


def counters(kind, size, nops):
    """(init, tgt) counter dicts for nops operations of size bytes by path kind."""
    i = dict.fromkeys(COUNTERS, 0)
    t = dict.fromkeys(COUNTERS, 0)
    n = nops * pkts(size)
    P = nops * size
    if kind == "device-write":
        i.update(rdma_write_bytes=P, rdma_write_wrs=nops, tx_bytes=P + n * HDR, tx_pkts=n)
        t.update(rdma_write_recv_bytes=P, rx_bytes=P + n * HDR, rx_pkts=n)
    elif kind == "emulated-send":
        i.update(send_bytes=P + n * HDR, send_wrs=n, tx_bytes=P + n * HDR, tx_pkts=n)
        t.update(recv_bytes=P + n * HDR, recv_wrs=n, rx_bytes=P + n * HDR, rx_pkts=n)
    elif kind == "device-read":  # the efa fabric's long read: the target reads the initiator
        i.update(send_bytes=nops * HDR, send_wrs=nops, rdma_read_resp_bytes=P,
                 tx_bytes=P + nops * HDR, tx_pkts=n + nops)
        t.update(rdma_read_bytes=P, rdma_read_wrs=nops, recv_bytes=nops * HDR, recv_wrs=nops,
                 rx_bytes=P + nops * HDR, rx_pkts=n + nops)
    elif kind == "mixed":  # half written, half sent
        h = P // 2
        i.update(rdma_write_bytes=h, rdma_write_wrs=nops, send_bytes=P - h, send_wrs=nops,
                 tx_bytes=P + n * HDR, tx_pkts=n)
        t.update(rdma_write_recv_bytes=h, recv_bytes=P - h, recv_wrs=nops,
                 rx_bytes=P + n * HDR, rx_pkts=n)
    elif kind == "none":  # the payload went through shm: a handshake crossed the NIC
        i.update(send_bytes=HDR, send_wrs=1, tx_bytes=HDR, tx_pkts=1)
        t.update(recv_bytes=HDR, recv_wrs=1, rx_bytes=HDR, rx_pkts=1)
    return i, t


def path_of(i, t, P, nics):
    """The issue's rule over distinct NICs (nics 1: init and tgt are one NIC)."""
    def tot(c):
        return i[c] + (0 if nics == 1 else t[c])
    W, R, S = tot("rdma_write_bytes"), tot("rdma_read_bytes"), tot("send_bytes")
    big = [name for name, v in (("device-write", W), ("device-read", R),
                                ("emulated-send", S)) if v >= 0.9 * P]
    if len(big) == 1:
        return big[0], {"device-write": W, "device-read": R, "emulated-send": S}[big[0]] / P
    if big or W + R + S >= 0.9 * P:
        return "mixed", (W + R + S) / P
    return "none", (W + R + S) / P


def row(head, bench, fabric, size, rep, kind, post, poll, run="20261202-010000-fixture",
        nics=2, note="", extra=None, iters=100, window=64, us=None):
    lat = bench.endswith("_lat")
    d = dict.fromkeys(head + PATH_COLS + TAILS.get(bench, []), "")
    if bench == "put_bw":
        d.update(post_list="1", pipeline="no", high_pps="no", tclass="FI_TC_UNSPEC", eps="1")
    if bench == "put_lat":
        d.update(lat_lower_bound="yes" if fabric != "shm" and size > 8928 else "no",
                 late_msgs="n/a", late_bytes="n/a")
    prov = "shm" if fabric == "shm" else "efa"
    nops = 2 * iters if lat else iters * window  # a ping-pong's both legs
    P = nops * size
    if us is None:
        us = 2.0 + size / 12000.0 * (1.3 if fabric == "efa" else 1.0) * (0.05 if fabric == "shm" else 1)
    d.update(schema="1", run_id=f"{run}:{bench}[fabric={fabric}]#{rep}",
             timestamp="2026-12-02T01:00:00Z", bench=bench, op="write", provider=prov,
             fabric=fabric, domain="shm" if prov == "shm" else "rdmap16s27-rdm",
             libfabric_version="2.6", provider_version="117.0" if prov == "shm" else "206.0",
             mem_local="host", mem_remote="host", ranks="2", pairs="1", initiator="cpu",
             window="0" if lat else str(window), size_bytes=str(size), iters=str(iters),
             errors="0", provider_req=prov, fabric_req="" if prov == "shm" else fabric,
             libfabric_built="2.6", libfabric_path=LIB, efa_installer="", inject="no",
             first_us=f"{us * 20:.3f}", payload_bytes=str(P), post_ns=f"{post:.1f}",
             poll_ns=f"{poll:.1f}")
    if lat:
        d.update(lat_us_min=f"{us * 0.95:.3f}", lat_us_p50=f"{us:.3f}",
                 lat_us_mean=f"{us * 1.02:.3f}", lat_us_p99=f"{us * 1.3:.3f}",
                 lat_us_p999=f"{us * 1.5:.3f}", lat_us_max=f"{us * 2:.3f}",
                 lat_us_stdev=f"{us * 0.05:.3f}", lat_us_batch=f"{us:.3f}",
                 lat_us_p25=f"{us * 0.98:.3f}", lat_us_p75=f"{us * 1.03:.3f}")
    else:
        wus = window * us * 0.4
        bw = window * size / wus
        d.update(bw_MBps=f"{bw:.3f}", msg_rate_Mops=f"{window / wus:.6f}", pair="all",
                 window_us_p50=f"{wus:.3f}", window_us_p99=f"{wus * 1.2:.3f}",
                 footprint="buffer", bw_MBps_windows=f"{bw * 1.01:.3f}",
                 msg_rate_Mops_windows=f"{window / wus * 1.01:.6f}",
                 end_confirm="unordered-flag", window_us_p25=f"{wus * 0.98:.3f}",
                 window_us_p75=f"{wus * 1.03:.3f}")
    if kind == "-":
        d["path"] = "-"
    else:
        i, t = counters(kind, size, nops)
        if extra:
            for k, v in extra.items():
                (i if k.startswith("init_") else t)[k.split("_", 1)[1]] = v
        if nics == 1:  # one NIC served both sides: both read the same counters
            i = t = {c: i[c] + t[c] for c in COUNTERS}
        path, ratio = path_of(i, t, P, nics)
        assert path == kind, (path, kind)
        d.update(path=path, path_ratio=f"{ratio:.6f}", hw_nics=str(nics), hw_note=note)
        d.update({f"nic_init_{c}": str(i[c]) for c in COUNTERS})
        d.update({f"nic_tgt_{c}": str(t[c]) for c in COUNTERS})
    return d


def write(sub, name, head, rows, label):
    os.makedirs(os.path.join(HERE, sub), exist_ok=True)
    with open(os.path.join(HERE, sub, name), "w", newline="") as f:
        tail = TAILS.get(name.split(".")[0], [])
        w = csv.DictWriter(f, fieldnames=head + PATH_COLS + tail, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(HERE, sub, "meta.json"), "w") as f:
        json.dump({"efabench": "0.1.0", "schema": 1, "label": label, "complete": True,
                   "hostname": "fixture", "libfabric_version": "2.6", "efa_installer": "",
                   "simulated": "no", "jobs": []}, f, indent=2)
        f.write("\n")


def main():
    M4 = 4 << 20
    bw = []
    for s, post, poll in ((8, 300.0, 100.0), (4096, 310.0, 102.0), (65536, 340.0, 110.0),
                          (M4, 420.0, 130.0)):
        bw.append(row(BW_HEAD, "put_bw", "efa-direct", s, 1, "device-write", post, poll))
    for s, kind, post, poll in ((8, "emulated-send", 750.0, 180.0),
                                (4096, "emulated-send", 800.0, 190.0),
                                (65536, "emulated-send", 1350.0, 260.0),
                                (M4, "device-read", 2100.0, 400.0)):
        bw.append(row(BW_HEAD, "put_bw", "efa", s, 1, kind, post, poll))
    for s in (8, 4096, 65536, M4):
        bw.append(row(BW_HEAD, "put_bw", "shm", s, 1, "-", 150.0, 60.0))
    write("two-fabric", "put_bw.csv", BW_HEAD, bw, "path-two-fabric")
    lat = []
    for s, post, poll in ((8, 250.0, 90.0), (4096, 260.0, 92.0), (65536, 280.0, 95.0)):
        lat.append(row(LAT_HEAD, "put_lat", "efa-direct", s, 1, "device-write", post, poll))
    for s, post, poll in ((8, 600.0, 150.0), (4096, 640.0, 155.0), (65536, 900.0, 210.0)):
        lat.append(row(LAT_HEAD, "put_lat", "efa", s, 1, "emulated-send", post, poll))
    for s in (8, 4096, 65536):
        lat.append(row(LAT_HEAD, "put_lat", "shm", s, 1, "-", 120.0, 50.0))
    write("two-fabric", "put_lat.csv", LAT_HEAD, lat, "path-two-fabric")

    rep = []
    for k in (1, 2, 3):
        rep.append(row(BW_HEAD, "put_bw", "efa-direct", 4096, k, "device-write",
                       300.0 + k, 100.0 + k))
        kind = "mixed" if k == 3 else "device-write"
        rep.append(row(BW_HEAD, "put_bw", "efa-direct", 65536, k, kind, 340.0 + k, 110.0 + k,
                       extra={"init_rdma_write_bytes": 64 * 100 * 65536 + 4200 * k}
                       if kind != "mixed" else None))
    write("repeats", "put_bw.csv", BW_HEAD, rep, "path-repeats")

    err = []
    for k in (1, 2):
        err.append(row(BW_HEAD, "put_bw", "efa", 8, k, "none", 700.0, 170.0, nics=1))
        err.append(row(BW_HEAD, "put_bw", "efa", 4096, k, "emulated-send", 800.0, 190.0,
                       note="tx_bytes went backwards: reset or wrap" if k == 2 else ""))
        bad = {"tgt_retrans_pkts": 12, "tgt_retrans_bytes": 98304, "init_rx_drops": 3}
        err.append(row(BW_HEAD, "put_bw", "efa", 65536, k, "emulated-send", 1350.0, 260.0,
                       extra=bad if k == 2 else None))
    write("errors", "put_bw.csv", BW_HEAD, err, "path-errors")

    # efa-direct twice as fast as efa at every size; shm first in the files, so
    # that the efa/efa-direct comparison is not the one against the first group
    M1 = 1 << 20
    run = "20261203-010000-fixture"
    for bench, head, sizes in (("put_bw", BW_HEAD, (8, 4096, 65536, M1)),
                               ("put_lat", LAT_HEAD, (8, 4096, 65536, M1))):
        fab = []
        for fabric, slow in (("shm", 0.25), ("efa-direct", 1.0), ("efa", 2.0)):
            for s in sizes:
                base = 2.0 + s / 12000.0
                if fabric == "shm":
                    kind = "-"
                elif fabric == "efa-direct":
                    kind = "device-write"
                else:
                    kind = "emulated-send" if s <= 65536 else "device-read"
                for k, jit in ((1, 1.0), (2, 1.01), (3, 0.99)):
                    fab.append(row(head, bench, fabric, s, k, kind, 300.0 * slow, 100.0 * slow,
                                   run=run, us=base * slow * jit))
        write("fabrics", f"{bench}.csv", head, fab, "path-fabrics")


if __name__ == "__main__":
    main()
