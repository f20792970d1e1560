#!/usr/bin/env python3
"""efabplot.grouping: series keys, groups (a provider on several fabrics
split into a group per fabric), comparisons, build(), headline sizes,
coverage gaps."""
import unittest

import plotdata
from plotdata import row
from efabplot import grouping, stats


def run(rows, label="r"):
    return {"label": label, "rows": rows}


class Series(unittest.TestCase):
    def test_request_of(self):
        self.assertIsNone(grouping.request_of({}))
        self.assertIsNone(grouping.request_of({"_legacy": True, "provider_req": "tcp"}))
        self.assertEqual(grouping.request_of({"_legacy": False, "provider_req": "efa",
                                              "fabric_req": "efa-direct"}),
                         "-p efa -f efa-direct")
        self.assertEqual(grouping.request_of({"_legacy": False, "provider_req": "",
                                              "fabric_req": ""}), "")

    def test_job_section(self):
        self.assertEqual(grouping.job_section("20261202-x:put_lat_shm[provider=shm]#2"),
                         "put_lat_shm")
        self.assertEqual(grouping.job_section("dir:mr_reg#1"), "mr_reg")
        self.assertEqual(grouping.job_section("standalone"), "")

    def test_series_key_by_provider_leaves_provider_and_fabric_out(self):
        d = row(run_id="x:job[a]#1", provider="tcp", fabric="lo", op="writedata",
                mem_local="cuda", mem_remote="host")
        self.assertEqual(grouping.series_key(d, "provider"), "job writedata cuda:host")
        self.assertEqual(grouping.series_key(d, "fabric"), "job writedata cuda:host")

    def test_series_key_otherwise_is_the_request(self):
        legacy = row(run_id="x:job#1", provider="tcp;ofi_rxm", fabric="lo", _legacy=True)
        self.assertEqual(grouping.series_key(legacy, "label"),
                         "job write host:host tcp;ofi_rxm lo")
        asked = dict(legacy, _legacy=False, provider_req="tcp", fabric_req="")
        self.assertEqual(grouping.series_key(asked, "label"), "job write host:host -p tcp")
        nothing = dict(asked, provider_req="")
        self.assertEqual(grouping.series_key(nothing, "libfabric"), "job write host:host")

    def test_series_key_shmem_reg_keeps_libfabric_fabrics_apart(self):
        # NVSHMEM on efa-direct and on efa (forced, EFAB_FITRACE_FABRIC) are
        # two lines, not repeats of one; no libfabric under it: no lf part
        d = row("shmem_reg", run_id="x#1", op="buffer_register_cuda", provider="nvshmem",
                fabric="libfabric", mem_local="cuda+host", mem_remote="-", lf_fabric="efa-direct")
        direct = grouping.series_key(d, "provider")
        forced = grouping.series_key(dict(d, lf_fabric="efa (EFAB_FITRACE_FABRIC)"), "provider")
        self.assertEqual(direct, "buffer_register_cuda cuda+host:- lf=efa-direct")
        self.assertEqual(forced, "buffer_register_cuda cuda+host:- lf=efa")
        self.assertEqual(grouping.series_key(dict(d, fabric="none", lf_fabric="-"), "provider"),
                         "buffer_register_cuda cuda+host:-")

    def test_series_key_shmem_rma_initiator_and_fabric(self):
        # NVSHMEM's own put/get: host and stream initiators, and the libfabric
        # fabric under NVSHMEM, are lines of their own; an unregistered buffer too
        d = row("shmem_lat", run_id="x#1", op="put", provider="nvshmem", fabric="libfabric",
                mem_local="cuda", mem_remote="host", lf_fabric="efa-direct", initiator="host",
                registered="yes")
        self.assertEqual(grouping.series_key(d, "provider"), "put cuda:host lf=efa-direct initiator=host")
        self.assertEqual(grouping.series_key(dict(d, initiator="stream", registered="no",
                                                  lf_fabric="efa (EFAB_FITRACE_FABRIC)"), "provider"),
                         "put cuda:host lf=efa initiator=stream unregistered")
        bw = dict(d, bench="shmem_bw", pairs="1")
        self.assertEqual(grouping.series_key(bw, "provider"), "put cuda:host 1p lf=efa-direct initiator=host")

    def test_series_key_peak_options_are_lines_of_their_own(self):
        # issue 48: a sweep matrix runs post lists, the pipeline, the EFA flags and
        # several endpoints under one job section: each combination is a line
        d = row("put_bw", run_id="x:j[post-list=8]#1", pairs="1")
        self.assertEqual(grouping.series_key(d, "provider"), "j write host:host 1p")
        tuned = dict(d, post_list="8", pipeline="yes", high_pps="yes",
                     tclass="FI_TC_LOW_LATENCY", eps="2")
        self.assertEqual(grouping.series_key(tuned, "provider"),
                         "j write host:host 1p post_list=8 pipeline=yes high_pps=yes "
                         "tclass=FI_TC_LOW_LATENCY eps=2")
        defaults = dict(d, post_list="1", pipeline="no", high_pps="no", tclass="FI_TC_UNSPEC",
                        eps="1")
        self.assertEqual(grouping.series_key(defaults, "provider"), "j write host:host 1p")

    def test_series_key_bandwidth_mr_reg_fanout_footprint(self):
        bw = row("put_bw", run_id="x:j#1", pairs="4")
        self.assertEqual(grouping.series_key(bw, "provider"), "j write host:host 4p")
        self.assertIsNone(grouping.series_key(dict(bw, pair="2"), "provider"))
        self.assertEqual(grouping.series_key(dict(bw, pair="all", domains="2",
                                                  footprint="window"), "provider"),
                         "j write host:host 4p k=2 footprint=window")
        # a GPU kernel's rows (--initiator gpu) are a line of their own; cpu and
        # CSVs before the column are the same line
        self.assertEqual(grouping.series_key(dict(bw, pair="all", initiator="cpu"), "provider"),
                         "j write host:host 4p")
        self.assertEqual(grouping.series_key(dict(bw, pair="all", initiator="gpu", gpu_threads="1"),
                                             "provider"), "j write host:host 4p initiator=gpu")
        self.assertEqual(grouping.series_key(dict(bw, pair="all", initiator="gpu", gpu_threads="32"),
                                             "provider"),
                         "j write host:host 4p initiator=gpu gpu_threads=32")
        reg = row("mr_reg", run_id="x:r#1", op="fresh", mem_remote="-")
        self.assertEqual(grouping.series_key(reg, "provider"), "r fresh host:-")
        self.assertIsNone(grouping.series_key(dict(reg, rank="1"), "provider"))
        self.assertEqual(grouping.series_key(dict(reg, domains="1"), "provider"),
                         "r fresh host:-")


class Groups(unittest.TestCase):
    def efa_rows(self):
        return [row(run_id="x:lat[shm]#1", provider="shm", fabric="shm"),
                row(run_id="x:lat[d]#1", provider="efa", fabric="efa-direct"),
                row(run_id="x:lat[e]#1", provider="efa", fabric="efa"),
                row(run_id="x:lat[t]#1", provider="tcp", fabric="lo", size=16),
                row("put_bw", run_id="x:bw[t]#1", provider="tcp", fabric="eth0")]

    def test_fabric_group(self):
        self.assertEqual(grouping.fabric_group({"provider": "efa", "fabric": "efa-direct"}),
                         "efa/efa-direct")
        self.assertEqual(grouping.fabric_group({"provider": "efa (simulated)",
                                                "fabric": "efa (simulated)"}),
                         "efa/efa (simulated)")

    def test_a_provider_on_two_fabrics_of_one_series_is_split(self):
        runs = [run(self.efa_rows())]
        # tcp ran on lo and eth0, but in different series: one group
        self.assertEqual(grouping.split_providers(runs, "provider"),
                         {"efa": ["efa/efa", "efa/efa-direct"]})
        self.assertEqual(grouping.split_providers(runs, "label"), {})
        groups, splits = grouping.assign_groups(runs, "provider")
        self.assertEqual(groups, ["shm", "efa/efa", "efa/efa-direct", "tcp"])
        self.assertEqual(splits, [["efa/efa", "efa/efa-direct"]])
        self.assertEqual([d["_group"] for d in runs[0]["rows"]],
                         ["shm", "efa/efa-direct", "efa/efa", "tcp", "tcp"])

    def test_group_by_a_key_the_rows_lack_is_the_run_label(self):
        runs = [run([row()], "a"), run([row()], "b")]
        self.assertEqual(grouping.assign_groups(runs, "nokey"), (["a", "b"], []))

    def test_compare_pairs(self):
        self.assertEqual(grouping.compare_pairs(["a", "b", "c"]), [("a", "b"), ("a", "c")])
        self.assertEqual(grouping.compare_pairs(["shm", "efa/efa", "efa/efa-direct"],
                                                [["efa/efa", "efa/efa-direct"]]),
                         [("efa/efa", "efa/efa-direct"), ("shm", "efa/efa"),
                          ("shm", "efa/efa-direct")])
        self.assertEqual(grouping.compare_pairs(["only"]), [])


class Build(unittest.TestCase):
    def test_build_nests_bench_series_group_size(self):
        rows = [row(size=8, p50=1, provider="shm", fabric="shm", run_id="x:l#1"),
                row(size=8, p50=3, provider="shm", fabric="shm", run_id="x:l#2"),
                row(size=64, p50=2, provider="tcp", fabric="lo", run_id="x:l#1"),
                row("connect", peers="4", provider="tcp", fabric="lo", run_id="x:c#1"),
                row("put_bw", pair="1", run_id="x:b#1")]  # a per-pair row: not plotted
        runs = [run(rows)]
        grouping.assign_groups(runs, "provider")
        data = grouping.build(runs, "provider")
        self.assertEqual(sorted(data), ["connect", "put_lat"])
        series = data["put_lat"]
        self.assertEqual(list(series), ["l write host:host"])
        self.assertEqual(sorted(series["l write host:host"]), ["shm", "tcp"])
        pt = series["l write host:host"]["shm"][8]
        self.assertIsInstance(pt, stats.Point)
        self.assertEqual(pt.median("lat_us_p50"), 2)
        self.assertEqual(list(data["connect"]["c write host:host"]["tcp"]), [4])  # x = peers

    def test_bench_groups_headline_sizes_coverage(self):
        series = {"s1": {"b": {}, "a": {}}, "s2": {"a": {}}}
        self.assertEqual(grouping.bench_groups(series, ["a", "c", "b"]), ["a", "b"])
        self.assertEqual(grouping.headline_sizes([8, 16, 4096, 2 << 20]), [8, 4096, 2 << 20])
        self.assertEqual(grouping.headline_sizes([8, 65536, 1 << 20]), [8, 65536, 1 << 20])
        self.assertEqual(grouping.headline_sizes([]), [])
        p = stats.Point()
        data = {"put_lat": {"s1": {"a": {8: p}, "b": {8: p}}, "s2": {"a": {8: p}}},
                "get_lat": {"s3": {"a": {8: p}}}}
        self.assertEqual(grouping.coverage_gaps(data, ["a", "b"]),
                         [("put_lat", "s2", ["a"], ["b"])])


class FromCsv(plotdata.TempDir, unittest.TestCase):
    def test_two_providers_loaded(self):
        r = plotdata.two_providers(self.tmp, shm=(1.0, 1.2), tcp=(10.0,))
        data, groups, splits = plotdata.data_of([r])
        self.assertEqual((groups, splits), (["shm", "tcp"], []))
        pts = data["put_lat"]["put_lat write host:host"]
        self.assertEqual(pts["shm"][8].values("lat_us_p50"), [1.0, 1.2])
        self.assertEqual(pts["tcp"][4096].median("lat_us_p50"), 10.0)


if __name__ == "__main__":
    unittest.main()
