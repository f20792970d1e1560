#!/usr/bin/env python3
"""NVSHMEM's batching knobs side by side, from the CSV of tests/nvshmem/sitting.sh's
part knobs (efab_shmem_bw rows, the knob settings alternating run by run):

  tests/nvshmem/knob_table.py KNOBS_CSV

One line per fabric, initiator, op, size and knob setting: every run's MB/s
(10^6 B/s, in the CSV's order, that is the order they ran), their median, and
the ratio of that median to the baseline setting's median (NVSHMEM's own
defaults: every nv_* column "default", else the first setting seen for that
group). A setting's runs that failed their check (errors > 0) or have no
bandwidth are shown and left out of the median; a group without a baseline
figure has no ratio. Settings are named by the rows' nv_* columns (what NVSHMEM
was started with), never by what a run asked. Every NIC figure is the
SIMULATED device's (efasim) unless the rows say otherwise; NVSHMEM's,
libfabric's and the CPU's parts are real."""
import csv
import statistics
import sys

KNOBS = ("nv_disable_batch_rma", "nv_batch_max_ops", "nv_proxy_batch_max", "nv_lf_proxy_batch_max")


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def setting(r):
    parts = ["%s=%s" % (k[3:], r[k]) for k in KNOBS if r.get(k, "default") not in ("", "default")]
    return " ".join(parts) if parts else "defaults"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    with open(argv[1], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("bench") == "shmem_bw"]
    if not rows:
        print("%s: no shmem_bw rows" % argv[1], file=sys.stderr)
        return 1
    groups = {}  # (fabric, initiator, op, size) -> {setting: [(bw, errors)]}, in order
    for r in rows:
        key = (r.get("lf_fabric", ""), r.get("initiator", ""), r.get("op", ""), int(r["size_bytes"]))
        groups.setdefault(key, {}).setdefault(setting(r), []).append((num(r.get("bw_MBps")), r.get("errors", "")))
    sim = any("simulated" in (r.get("provider_version", "") + r.get("fabric", "")) for r in rows)
    print("# NVSHMEM's knobs (efab_shmem_bw): MB/s per run in run order, median, ratio = median / "
          "the baseline's median%s" % ("; SIMULATED NIC (efasim)" if sim else ""))
    print("# fabric | initiator | op | size | setting | runs MB/s | median | ratio")
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3])):
        g = groups[key]
        base = "defaults" if "defaults" in g else next(iter(g))
        med = {}
        for s, runs in g.items():
            good = [bw for bw, e in runs if bw is not None and e in ("", "0")]
            med[s] = statistics.median(good) if good else None
        for s, runs in g.items():
            shown = ", ".join(("-" if bw is None else "%.1f" % bw) + ("" if e in ("", "0") else " (errors %s)" % e)
                              for bw, e in runs)
            ratio = "%.3f" % (med[s] / med[base]) if med[s] and med[base] else "-"
            if s == base:
                ratio += " (baseline)"
            print(" | ".join([key[0], key[1], key[2], str(key[3]), s, shown,
                              "-" if med[s] is None else "%.1f" % med[s], ratio]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
