"""Report section "Capability diff (efab_probe --diff)": between the first
run's probe.json and each other run's, and between the installs of a run
swept against several libfabric installs. What counts as a difference is
efab_probe --diff's decision; this lays it out."""
import json
import os
import shutil
import subprocess

from .. import fmt


def find_probe():
    """efab_probe, for --diff: $EFAB_PROBE, else build/bin of this source tree,
    else PATH. None when there is none."""
    if os.environ.get("EFAB_PROBE"):
        return os.environ["EFAB_PROBE"]
    here = os.path.dirname(os.path.realpath(__file__))  # <tree>/plot/efabplot/sections
    cand = os.path.normpath(os.path.join(here, "..", "..", "..", "build", "bin", "efab_probe"))
    if os.access(cand, os.X_OK):
        return cand
    return shutil.which("efab_probe")


def diff_pair(L, probe, la, fa, lb, fb):
    """Lay out `efab_probe --diff --json fa fb` under a heading la -> lb."""
    L += [f"### {la} → {lb}", ""]
    cmd = [probe, "--diff", fa, fb, "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        d = json.loads(p.stdout) if p.returncode in (0, 1) else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        p, d = None, None
        why = str(e)
    if d is None:
        if p is not None:
            why = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        L += [f"Not compared: `{' '.join(cmd[:4])}`: {why}", ""]
        return
    for m in d["matched_by_position"]:
        L.append(f"{m['provider']}/{m['fabric']}: domain `{m['a_domain']}` matched to "
                 f"`{m['b_domain']}` by position (the domain names differ only in the NIC "
                 f"name).")
    if d["identical"]:
        n = d["a"]["columns"]
        L += [f"No capability differences ({n} column{'' if n == 1 else 's'}).", ""]
        return
    L += [f"{d['differences']} differences (`efab_probe --diff {fa} {fb}`):", "",
          "| column | property | " + la.replace("|", "\\|") + " | "
          + lb.replace("|", "\\|") + " |", "|---|---|---|---|"]
    for c in d["changes"]:
        dom = c["a_domain"] if c["a_domain"] is not None else c["b_domain"]
        key = f"{c['provider']}/{c['fabric']}/{dom}".replace("|", "\\|")
        if c["property"] is None:
            a, b = ("present", "absent (vanished)") if c["b"] is None else ("absent", "present (appeared)")
            L.append(f"| {key} | (column) | {a} | {b} |")
            continue
        b = fmt.md_cell(c["b"])
        notes = [f"{w}: {' '.join(c[k])}" for w, k in (("appeared", "datatypes_appeared"),
                                                       ("vanished", "datatypes_vanished"))
                 if c.get(k)]
        if notes:
            b += " (" + "; ".join(notes) + ")"
        L.append(f"| {key} | {c['property']} | {fmt.md_cell(c['a'])} | {b} |")
    L.append("")


def install_probes(run):
    """(name, probe file) of every libfabric install of a run swept with key
    `libfabric` whose probe was recorded, in install order."""
    out = []
    for inst in run["meta"].get("libfabric_installs", []) or []:
        f = (inst.get("probe") or {}).get("file") or ""
        if not f:
            continue
        name = f"libfabric {inst.get('version') or inst.get('libfabric', '?')}"
        if run.get("simulated"):
            name += " (simulated)"
        out.append((name, os.path.join(run["path"], f)))
    return out


def capability_diff(runs):
    """Report lines: the capability diff between the first run's probe.json
    and each other run's, and, inside a run swept against several libfabric
    installs, between its first install's probe and each other's. What counts
    as a difference is efab_probe --diff's decision (one definition, in
    bench/probe.c); this only lays it out. Empty when there is nothing to
    compare."""
    pairs, notes = [], []
    if len(runs) >= 2:
        files = [os.path.join(r["path"], "probe.json") for r in runs]
        have = [os.path.isfile(f) for f in files]
        if all(have):
            pairs += [(runs[0]["label"], files[0], r["label"], f)
                      for r, f in zip(runs[1:], files[1:])]
        elif any(have):
            missing = ", ".join(f"`{r['path']}`" for r, h in zip(runs, have) if not h)
            notes.append(f"Not compared: no probe.json in {missing} (efab_sweep "
                         "records one at the start of a run).")
    for r in runs:
        ip = install_probes(r)
        pairs += [(ip[0][0], ip[0][1], n, f) for n, f in ip[1:]]
    if not pairs and not notes:
        return []
    L = ["## Capability diff (efab_probe --diff)", ""]
    L += [n for n in notes] + ([""] if notes else [])
    if not pairs:
        return L
    probe = find_probe()
    if not probe:
        return L + ["Not compared: efab_probe not found (build it with `make`, or set "
                    "EFAB_PROBE).", ""]
    for la, fa, lb, fb in pairs:
        diff_pair(L, probe, la, fa, lb, fb)
    return L
