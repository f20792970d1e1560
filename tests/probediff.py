#!/usr/bin/env python3
"""Checks for efab_probe --diff (tests/integration/t_probe.sh).

  probediff.py construct A.json B.json EXPECTED.json
      B = a copy of A with five edits: the last column removed, the shm column's
      mr_FI_MR_LOCAL flipped, its inject_rma_size changed, f32 dropped from its
      atomic_fadd, its live_read changed (A must hold shm with live rows);
      EXPECTED = the changes efab_probe --diff A B must list, nothing else.
  probediff.py nics A.json A2.json B2.json EXPECTED.json
      Two columns of a made-up provider/fabric on two NICs each (copies of A's
      shm column), named after other NICs in B2 (another node's rdmap names):
      matched by position, with the domain and nic_name rows as the changes.
  probediff.py check EXPECTED.json DIFF.json TABLE.txt
      DIFF.json (efab_probe --diff --json) lists exactly the EXPECTED changes,
      and TABLE.txt (the same diff as a table) one line per change, each once.
"""
import json
import re
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def save(obj, path):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)


def change(kind, col, prop, a, b, bcol=None, **extra):
    c = {"kind": kind, "provider": col["provider"], "fabric": col["fabric"],
         "a_domain": col["domain"] if kind != "column_appeared" else None,
         "b_domain": (bcol or col)["domain"] if kind != "column_vanished" else None,
         "property": prop, "a": a, "b": b}
    c.update(extra)
    return c


def construct(a_path, b_path, exp_path):
    a = load(a_path)
    b = json.loads(json.dumps(a))
    cols = b["fabrics"]
    shm = next(c for c in cols if c["provider"] == "shm")
    assert "live_read" in shm, "A's shm column has no live rows (efab_probe --live)"
    assert cols[-1] is not shm, "the last column is shm: nothing else to remove"
    exp = []
    gone = cols.pop()
    exp.append(change("column_vanished", gone, None, "present", None))
    flip = {"yes": "no", "no": "yes"}[shm["mr_FI_MR_LOCAL"]]
    exp.append(change("changed", shm, "mr_FI_MR_LOCAL", shm["mr_FI_MR_LOCAL"], flip))
    shm["mr_FI_MR_LOCAL"] = flip
    exp.append(change("changed", shm, "inject_rma_size", shm["inject_rma_size"], "123"))
    shm["inject_rma_size"] = "123"
    dts = shm["atomic_fadd"].split()
    assert "f32" in dts, shm["atomic_fadd"]
    new = " ".join(d for d in dts if d != "f32")
    exp.append(change("changed", shm, "atomic_fadd", shm["atomic_fadd"], new,
                      datatypes_appeared=[], datatypes_vanished=["f32"]))
    shm["atomic_fadd"] = new
    broken = "fi_read (64 bytes from rank 1) failed: Input/output error (-5)"
    exp.append(change("changed", shm, "live_read", shm["live_read"], broken))
    shm["live_read"] = broken
    save(b, b_path)
    save(exp, exp_path)


def nics(a_path, a2_path, b2_path, exp_path):
    shm = next(c for c in load(a_path)["fabrics"] if c["provider"] == "shm")

    def col(nic, bus):
        c = dict(shm, provider="efa", fabric="efa", domain=f"{nic}-rdm", nic_name=nic,
                 pci_bus_id=f"0000:{bus:02x}:00.0")
        return c

    a2 = {"efabench": "test", "fabrics": [col("rdmap16s0", 0x10), col("rdmap32s0", 0x20), shm]}
    b2 = {"efabench": "test", "fabrics": [shm, col("rdmap79s0", 0x10), col("rdmap85s0", 0x20)]}
    exp = []
    for ca, cb in zip(a2["fabrics"][:2], b2["fabrics"][1:]):
        exp.append(change("changed", ca, "domain", ca["domain"], cb["domain"], cb))
        exp.append(change("changed", ca, "nic_name", ca["nic_name"], cb["nic_name"], cb))
    save(a2, a2_path)
    save(b2, b2_path)
    save(exp, exp_path)


def key(c):
    return json.dumps(c, sort_keys=True)


def table_line(c):
    dom = c["a_domain"] if c["a_domain"] is not None else c["b_domain"]
    k = f"{c['provider']}/{c['fabric']}/{dom}"
    if c["property"] is None:
        return (f"{k} (column) present -> absent (vanished in B)" if c["b"] is None
                else f"{k} (column) absent -> present (appeared in B)")
    s = f"{k} {c['property']} {c['a'] if c['a'] is not None else '(absent)'} -> " \
        f"{c['b'] if c['b'] is not None else '(absent)'}"
    notes = [f"{w}: {' '.join(c[f'datatypes_{w}'])}" for w in ("appeared", "vanished")
             if c.get(f"datatypes_{w}")]
    return s + (f" ({'; '.join(notes)})" if notes else "")


def check(exp_path, diff_path, table_path):
    exp = load(exp_path)
    d = load(diff_path)
    got = d["changes"]
    if sorted(map(key, got)) != sorted(map(key, exp)):
        missing = [c for c in exp if key(c) not in set(map(key, got))]
        extra = [c for c in got if key(c) not in set(map(key, exp))]
        raise SystemExit(f"probediff: --json changes differ\n  missing: {missing}\n  extra: {extra}")
    assert d["identical"] is False and d["differences"] == len(exp), d
    lines = open(table_path).read().splitlines()
    assert lines[0].startswith("efab_probe --diff: A = "), lines[0]
    body = [ln for ln in lines[1:] if not ln.startswith("note: ")]
    summary = body.pop()
    gone = sum(1 for c in exp if c["kind"] == "column_vanished")
    came = sum(1 for c in exp if c["kind"] == "column_appeared")
    assert re.match(rf"^{len(exp)} differences?: {gone} columns? vanished, {came} appeared, "
                    rf"{len(exp) - gone - came} propert(y|ies) changed$", summary), summary
    norm = [re.sub(r"^(\S+)\s+(\S+)\s+", r"\1 \2 ", ln) for ln in body]
    want = [table_line(c) for c in exp]
    if sorted(norm) != sorted(want):
        raise SystemExit("probediff: table lines differ\n  got:\n    " + "\n    ".join(norm)
                         + "\n  want:\n    " + "\n    ".join(want))
    print(f"probediff: {len(exp)} changes listed exactly, once each, in --json and the table")


if __name__ == "__main__":
    cmds = {"construct": (construct, 3), "nics": (nics, 4), "check": (check, 3)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != cmds[sys.argv[1]][1] + 2:
        raise SystemExit(__doc__)
    cmds[sys.argv[1]][0](*sys.argv[2:])
