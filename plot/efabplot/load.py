"""Loading result directories: efabench CSV schemas 1 and 2 (schema.py:
the columns every file starts with, each benchmark's), meta.json, the rows of a simulated
device marked in every grouping key, the libfabric install of each row, and
the one bandwidth definition every figure of a comparison shows
(BW_DEFINITION, set by use_bw_definition)."""
import csv
import json
import os

from . import schema

SCHEMA_BASE = schema.SCHEMA1_BASE
READS = "1 and 2"  # schema.SCHEMAS


GROUP_KEYS = ("fabric", "provider", "libfabric_version", "libfabric", "efa_installer", "label")


# Columns added to schema 1 after its first files (every schema-2 file has
# them): what was asked (-p/-f) and
# which library ran. Files without them still load; their request is unknown
# and their series fall back to the returned provider/fabric names.
REQUEST_COLS = ("provider_req", "fabric_req")


# Bandwidth benches: bw_MBps and msg_rate_Mops are over the timed loop's
# elapsed time; the sum-of-window-times figures are the *_windows columns.
# CSVs written before those columns hold the sum-of-window-times figure in
# bw_MBps itself (use_bw_definition: figures then compare like with like).
BW_WINDOWS = {"bw_MBps": "bw_MBps_windows", "msg_rate_Mops": "msg_rate_Mops_windows"}


class InputError(Exception):
    pass


def load_dir(path):
    if not os.path.isdir(path):
        raise InputError(f"{path}: not a directory")
    meta = {}
    mpath = os.path.join(path, "meta.json")
    if os.path.exists(mpath):
        try:
            with open(mpath) as f:
                meta = json.load(f)
        except (OSError, ValueError) as e:
            raise InputError(f"{mpath}: not valid JSON ({e})")
    label = meta.get("label") or os.path.basename(os.path.normpath(path))
    csvs = sorted(f for f in os.listdir(path) if f.endswith(".csv"))
    rows = []
    for name in csvs:
        fp = os.path.join(path, name)
        with open(fp, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                continue
            if header[:1] != ["schema"]:
                continue  # not a benchmark table (efab_probe's long format)
            if header[:len(SCHEMA_BASE)] != SCHEMA_BASE:
                raise InputError(f"{fp}: columns are not efabench CSV schema 1 or 2")
            benches = set()
            file_schema = None
            for n, rec in enumerate(reader, 2):
                if len(rec) != len(header):
                    raise InputError(f"{fp}:{n}: {len(rec)} fields, header has {len(header)}")
                d = dict(zip(header, rec))
                if d["schema"] not in [str(k) for k in schema.SCHEMAS]:
                    raise InputError(f"{fp}:{n}: schema {d['schema']}, this efab_plot reads {READS}")
                if file_schema is None:
                    file_schema = int(d["schema"])
                    problem = schema.header_problem(header, file_schema, d["bench"])
                    if problem:
                        raise InputError(f"{fp}: schema {file_schema}: {problem}")
                elif int(d["schema"]) != file_schema:
                    raise InputError(f"{fp}:{n}: schema {d['schema']} after schema {file_schema} "
                                     "rows; one schema per CSV")
                benches.add(d["bench"])
                d["_label"] = label
                d["_dir"] = path
                d["_legacy"] = not all(c in header for c in REQUEST_COLS)
                if d["bench"].endswith("_bw") and BW_WINDOWS["bw_MBps"] not in header:
                    d["_bw_windows_only"] = True  # its bw_MBps is the window-time sum
                    for head, win in BW_WINDOWS.items():
                        d[win] = d[head]
                # the installer of the library that ran (row), else the host's (meta)
                d["efa_installer"] = (d.get("efa_installer") or meta.get("efa_installer", "")
                                      or "unknown")
                d["libfabric"] = libfabric_name(d, meta)
                d["label"] = label
                rows.append(d)
            if len(benches) > 1:
                raise InputError(f"{fp}: mixes benchmarks {sorted(benches)}; one per CSV")
    if not rows:
        raise InputError(f"{path}: no efabench CSV (schema {READS}) in this directory")
    # A simulated EFA device (efasim) measures the simulator: every grouping key
    # of its rows says so, so no figure or table shows it as EFA.
    simulated = (any("simulated" in d["provider_version"] for d in rows)
                 or str(meta.get("simulated", "no")) not in ("no", "", "False", "false"))
    if simulated:
        for d in rows:
            d["_simulated"] = True
            for k in GROUP_KEYS:
                if not d[k].endswith(" (simulated)"):
                    d[k] = f"{d[k]} (simulated)"
        label = f"{label} (simulated)"
    return {"path": path, "meta": meta, "label": label, "rows": rows, "simulated": simulated}


def libfabric_name(d, meta):
    """The grouping value of key `libfabric`: the install a row ran against,
    by its release version where the sweep recorded one (meta.json
    libfabric_installs), else the runtime version of the row."""
    lib = d.get("libfabric_path", "")
    ver = d.get("libfabric_version", "")
    for inst in meta.get("libfabric_installs", []) or []:
        if lib and inst.get("library") == lib and inst.get("version"):
            ver = inst["version"]
    return f"libfabric {ver}"


def disambiguate_installs(runs):
    """Two libraries with one version name are two groups: add the path."""
    paths = {}
    for r in runs:
        for d in r["rows"]:
            paths.setdefault(d["libfabric"], set()).add(d.get("libfabric_path", ""))
    for r in runs:
        for d in r["rows"]:
            if len(paths[d["libfabric"]]) > 1:
                sim = d["libfabric"].endswith(" (simulated)")
                base = d["libfabric"][:-len(" (simulated)")] if sim else d["libfabric"]
                d["libfabric"] = f"{base} ({d.get('libfabric_path') or 'path unknown'})" + \
                    (" (simulated)" if sim else "")


# Which bandwidth definition the figures use: "elapsed" (the headline), or
# "windows" when an input predates it (set by use_bw_definition).
BW_DEFINITION = ["elapsed"]


def use_bw_definition(runs):
    """One bandwidth definition for every run of a figure: the elapsed-time
    headline, unless an input CSV predates it; then every run's bandwidth
    rows show their sum-of-window-times columns (the elapsed figure stays in
    bw_MBps_elapsed), and the captions say so."""
    rows = [d for r in runs for d in r["rows"] if d["bench"].endswith("_bw")]
    if not any(d.get("_bw_windows_only") for d in rows):
        BW_DEFINITION[0] = "elapsed"
        return
    BW_DEFINITION[0] = "windows"
    for d in rows:
        if d.get("_bw_windows_only"):
            continue
        for head, win in BW_WINDOWS.items():
            d[head + "_elapsed"] = d[head]
            d[head] = d.get(win, "")
