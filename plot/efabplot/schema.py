"""The efabench CSV schemas efab_plot reads (docs/csv.md): 2, whose files
have exactly their benchmark's columns below, and 1, the same columns or a
leading part of them after at least the first SCHEMA1_BASE (schema 1 grew
by appending; its earliest files lack the request columns). The lists are
written out here, not read from docs/csv.md at run time;
tests/plot/test_schema.py compares them with the doc."""

SCHEMAS = (1, 2)

# every file of either schema starts with these
SCHEMA1_BASE = ("schema,run_id,timestamp,bench,op,provider,fabric,domain,libfabric_version,"
                "provider_version,mem_local,mem_remote,ranks,pairs,window,size_bytes,iters,"
                "lat_us_min,lat_us_p50,lat_us_mean,lat_us_p99,lat_us_p999,lat_us_max,"
                "lat_us_stdev,bw_MBps,msg_rate_Mops,errors").split(",")
COMMON = SCHEMA1_BASE + ["provider_req", "fabric_req", "libfabric_built", "libfabric_path",
                         "efa_installer"]

# docs/csv.md's groups
LAT = ["first_us", "lat_us_batch", "lat_us_p25", "lat_us_p75"]
STREAM = ["pair", "window_us_p50", "window_us_p99", "inject", "link_Gbps", "pct_of_link",
          "first_us", "footprint", "bw_MBps_windows", "msg_rate_Mops_windows", "end_confirm",
          "window_us_p25", "window_us_p75"]
COUNTERS = ["tx_bytes", "tx_pkts", "rx_bytes", "rx_pkts", "send_bytes", "send_wrs",
            "recv_bytes", "recv_wrs", "rdma_write_bytes", "rdma_write_wrs",
            "rdma_write_recv_bytes", "rdma_read_bytes", "rdma_read_wrs", "rdma_read_resp_bytes",
            "rdma_write_wr_err", "rdma_read_wr_err", "rx_drops", "retrans_bytes", "retrans_pkts",
            "retrans_timeout_events", "unresponsive_remote_events",
            "impaired_remote_conn_events"]
EVIDENCE = (["path", "path_ratio", "payload_bytes", "hw_nics", "hw_note", "post_ns", "poll_ns"]
            + ["nic_init_" + c for c in COUNTERS] + ["nic_tgt_" + c for c in COUNTERS])
GDA = ["initiator", "gpu_post_ns", "gpu_threads"]
PEAK = ["post_list", "pipeline", "high_pps", "tclass", "eps"]
REG = ["rank", "dereg_us_p50", "dereg_us_p99", "registered_before_MiB", "mr_cache", "access",
       "includes_nic_work", "fit_x", "fit_fixed_us", "fit_us_per_MiB", "fit_r2",
       "fit_fixed_us_lo", "fit_fixed_us_hi", "fit_us_per_MiB_lo", "fit_us_per_MiB_hi",
       "domains", "first_us", "lat_us_p25", "lat_us_p75", "reg_path"]
NVSHMEM = ["nvshmem_version", "transport", "lf_fabric", "lf_mr_mode"]
SHMEM_RMA = ["initiator", "mode", "src", "registered", "heap_kind", "form",
             "nv_disable_batch_rma", "nv_batch_max_ops", "nv_proxy_batch_max",
             "nv_lf_proxy_batch_max"]

# schema 2: every benchmark's columns, in order
COLUMNS = {
    "put_lat": COMMON + ["inject"] + LAT + EVIDENCE + GDA
    + ["lat_lower_bound", "late_msgs", "late_bytes"],
    "get_lat": COMMON + LAT + EVIDENCE + GDA,
    "atomic_lat": COMMON + LAT + EVIDENCE,
    "put_bw": COMMON + STREAM + EVIDENCE + GDA + PEAK,
    "get_bw": COMMON + STREAM + EVIDENCE + PEAK,
    "atomic_bw": COMMON + STREAM + EVIDENCE,
    "connect": COMMON + ["peers", "av_insert_us", "av_insert_us_per_peer", "second_us_p50",
                         "ep_open_us_p50"],
    "mr_reg": COMMON + REG,
    "shmem_reg": COMMON + REG + NVSHMEM + ["fi_mr_reg_calls", "fi_mr_reg_domains",
                                           "fi_mr_reg_inner"],
    "shmem_lat": COMMON + LAT + NVSHMEM + SHMEM_RMA + ["sync_us_p50", "sync_us_p99"],
    "shmem_bw": COMMON + ["window_us_p50", "window_us_p99", "first_us", "footprint",
                          "bw_MBps_windows", "msg_rate_Mops_windows", "end_confirm",
                          "window_us_p25", "window_us_p75"] + NVSHMEM + SHMEM_RMA,
}


def header_problem(header, schema, bench):
    """None when a file of this schema and bench may have this header, else
    what is wrong (one line). Schema 1: the first SCHEMA1_BASE columns (its
    older files differ from today's beyond them, docs/csv.md "Schema 1");
    schema 2: exactly COLUMNS[bench]."""
    if schema == 1:
        if header[:len(SCHEMA1_BASE)] != SCHEMA1_BASE:
            return "columns are not efabench CSV schema 1"
        return None
    want = COLUMNS.get(bench)
    if want is None:
        return f"bench {bench} is not in efabench CSV schema {schema}"
    for i, (g, w) in enumerate(zip(header, want)):
        if g != w:
            return f"column {i + 1} is {g}, schema {schema}'s {bench} has {w} there"
    if len(header) != len(want):
        return (f"{len(header)} columns, schema {schema}'s {bench} has {len(want)}")
    return None
