"""Report section "Registration fits": register_us = fixed_us + us_per_MiB x
MiB per run, provider, memory kind and regime (rank 0's rows), with the
95 % intervals the CSV carries."""
from .. import fmt


def fit_weighting(d):
    return "1/y²" if "fit_fixed_us_lo" in d else "none (OLS)"


def lines(runs):
    fits = []
    for r in runs:
        for d in r["rows"]:
            if (d["bench"] in ("mr_reg", "shmem_reg") and d.get("fit_x") == "size"
                    and d.get("rank", "0") == "0"):
                key = (r["label"], d["provider"], d["mem_local"], d["op"])
                if key not in {f[0] for f in fits}:
                    fits.append((key, d))
    if not fits:
        return []
    L = ["", "## Registration fits", "",
         "Fit register_us = fixed_us + us_per_MiB × MiB of the p50 registration time over "
         "the sizes, weighted by 1/y² (relative residuals: the small sizes set the fixed "
         "cost, the large ones the slope), with 95 % confidence intervals in brackets "
         "(t for n − 2 degrees of freedom); R² is the weighted fit's. Rank 0's rows (each "
         "rank registers its own buffers; the CSV has every rank's fit). CSVs written "
         "before the weighting hold an ordinary least-squares fit and no interval "
         "(weights \"none (OLS)\").", "",
         "| run | provider | memory | regime | fixed (µs) [95 % CI] "
         "| per MiB (µs) [95 % CI] | R² | weights | includes NIC work |",
         "|---|---|---|---|---|---|---|---|---|"]
    for (label, prov, mem, op), d in fits:
        r2 = fmt.fnum(d.get("fit_r2"))
        L.append(f"| {label} | {prov} | {mem} | {op} | {fmt.fit_param(d, 'fit_fixed_us', 3)} | "
                 f"{fmt.fit_param(d, 'fit_us_per_MiB', 5)} | "
                 f"{'-' if r2 is None else f'{r2:.3f}'} | {fit_weighting(d)} | "
                 f"{d.get('includes_nic_work', '')} |")
    return L
