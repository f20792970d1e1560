"""Report section "Runs": a row per run directory from its meta.json, the
libfabric installs of a run swept against several, and a flag for every
provenance key in which the runs differ besides the grouping key."""
import os


def provenance_flags(runs, group_by):
    keys = ("hostname", "instance_type", "kernel", "libfabric_version", "efa_installer",
            "efa_driver", "gpus", "mpi")
    flags = []
    for k in keys:
        if k == group_by:
            continue
        vals = {r["meta"].get(k, "") for r in runs}
        if len(vals) > 1:
            flags.append(f"runs differ in `{k}` ({', '.join(sorted(map(str, vals)))}), "
                         f"not only in the grouping key `{group_by}`")
    return flags


def lines(runs, group_by):
    L = ["## Runs", "",
         "| run | label | host | instance | libfabric | EFA installer | efa driver | GPUs | jobs |",
         "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        m = r["meta"]
        L.append(f"| {os.path.basename(os.path.normpath(r['path']))} | {r['label']} | "
                 f"{m.get('hostname', '')} | {m.get('instance_type', '') or '-'} | "
                 f"{m.get('libfabric_version', '')} | {m.get('efa_installer', '') or '-'} | "
                 f"{m.get('efa_driver', '') or '-'} | {m.get('gpus', '') or '-'} | "
                 f"{len(m.get('jobs', []))} |")
    insts = [(r, i) for r in runs for i in r["meta"].get("libfabric_installs", []) or []]
    if insts:
        L += ["", "libfabric installs (key `libfabric` of the sweep; every job ran once against each, "
              "interleaved):", "", "| run | install | library | version | EFA installer | probe |",
              "|---|---|---|---|---|---|"]
        for r, i in insts:
            L.append(f"| {os.path.basename(os.path.normpath(r['path']))} | `{i.get('libfabric', '')}` | "
                     f"`{i.get('library', '')}` | {i.get('version', '') or '-'} | "
                     f"{i.get('efa_installer', '') or '-'} | "
                     f"{(i.get('probe') or {}).get('file') or (i.get('probe') or {}).get('status', '-')} |")
    flags = provenance_flags(runs, group_by)
    if flags:
        L.append("")
        for f in flags:
            L.append(f"**Flag:** {f}.")
    return L
