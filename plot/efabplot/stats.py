"""Statistics and verdicts: a Point (the repeats of one measurement) with
its within-run interval and its repeats' noise on a log scale; the rule that
calls a difference significant, none or inconclusive (compare_verdict; the
report's Method section says it in words); the metric of each benchmark and
the baseline gate's list of what got significantly worse (regressions)."""
import math

from . import fmt


Z = 1.96  # two-sided 95 %


def metric_of(bench):
    if bench.endswith("_bw"):
        return "bw_MBps", "higher"
    return "lat_us_p50", "lower"


class Point:
    """One (group, series, size): the repeats of that measurement."""

    def __init__(self):
        self.rows = []

    def add(self, d):
        self.rows.append(d)

    def values(self, col):
        return [v for v in (fmt.fnum(d.get(col)) for d in self.rows) if v is not None]

    def median(self, col):
        v = sorted(self.values(col))
        if not v:
            return None
        m = len(v) // 2
        return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2

    def within(self, d, col):
        """Half-width of a 95 % interval for repeat d's value from its own
        samples (None when the row has no spread recorded). Robust: from the
        interquartile range when the row has its quartiles (lat_us_p25/p75,
        window_us_p25/p75): sigma = IQR / 1.349, the standard error of the
        median 1.2533 sigma / sqrt(n). A few preempted samples move neither
        quartile, while they inflate stdev and p99 by orders of magnitude (one
        sample of 7 ms among 1000 of 0.3 us gives a stdev of 236 us). Rows
        written before the quartiles existed: the recorded stdev, or
        (p99 - p50) / 2.326 where that is smaller."""
        v = fmt.fnum(d.get(col))
        n = max(fmt.fnum(d.get("iters")) or 1, 1)
        if v is None:
            return None
        if col.startswith("lat_us"):
            q1, q3 = fmt.fnum(d.get("lat_us_p25")), fmt.fnum(d.get("lat_us_p75"))
            if q1 is not None and q3 is not None and q3 >= q1:
                sd = (q3 - q1) / 1.349
            else:
                sd = fmt.fnum(d.get("lat_us_stdev"))
                p50, p99 = fmt.fnum(d.get("lat_us_p50")), fmt.fnum(d.get("lat_us_p99"))
                if p50 is not None and p99 is not None and p99 >= p50:
                    sd = min(sd, (p99 - p50) / 2.326) if sd is not None else (p99 - p50) / 2.326
                if sd is None:
                    return None
            return Z * 1.2533 * sd / math.sqrt(n)
        if col in ("bw_MBps", "msg_rate_Mops"):
            w50 = fmt.fnum(d.get("window_us_p50"))
            q1, q3 = fmt.fnum(d.get("window_us_p25")), fmt.fnum(d.get("window_us_p75"))
            if w50 and q1 is not None and q3 is not None and q3 >= q1:
                rel = 1.2533 * (q3 - q1) / 1.349 / w50
            else:
                w99 = fmt.fnum(d.get("window_us_p99"))
                if not (w50 and w99):
                    return None
                rel = (w99 - w50) / w50
            return Z * v * rel / math.sqrt(n)
        return None

    def interval(self, col):
        """(lo, hi): the hull of every repeat's 95 % within-run interval, so
        that it also spans the run-to-run spread. None when a repeat has no
        spread recorded."""
        lo = hi = None
        for d in self.rows:
            v, h = fmt.fnum(d.get(col)), self.within(d, col)
            if v is None:
                continue
            if h is None:
                return None
            lo = v - h if lo is None else min(lo, v - h)
            hi = v + h if hi is None else max(hi, v + h)
        return None if lo is None else (lo, hi)

    def log_noise(self, col):
        """With 3 or more repeats: the 95 % half-width of ln(median) from the
        repeats' own spread, which measures how well their median is known,
        machine load included (each repeat's p50 already summarises its
        iterations). Timings and rates vary by factors, not by amounts, so on
        a log scale: sigma = range of ln(values) / d2(n), then the standard
        error of a median of n. None with fewer repeats or a value <= 0."""
        vals = self.values(col)
        if len(vals) < 3 or min(vals) <= 0:
            return None
        logs = [math.log(v) for v in vals]
        d2 = {3: 1.693, 4: 2.059, 5: 2.326, 6: 2.534, 7: 2.704, 8: 2.847, 9: 2.970}
        sigma = (max(logs) - min(logs)) / d2.get(len(vals), 3.078)
        return Z * 1.2533 * sigma / math.sqrt(len(vals))


MIN_REPEATS = 3  # what the repeat rule of compare() needs on each side


def compare_verdict(a, b, col):
    """(ratio b/a, verdict): "significant", "none" (no significant
    difference) or "inconclusive". The rule (the report's Method says it):
    - a ratio within 1 % of 1 is never called: "none";
    - 3 or more repeats on both sides: ln(median) against the repeats' own
      spread (log_noise): "significant" beyond it; within it "none" only
      when the two sides' repeat ranges overlap, else "inconclusive";
    - fewer repeats: "significant" when the within-run 95 % intervals of
      the two sides (interval(): robust, from the quartiles, hull over the
      repeats) do not overlap, else "inconclusive" -- too few repeats to
      say there is no difference."""
    ma, mb = a.median(col), b.median(col)
    if not ma or mb is None:
        return None, "none"
    ratio = mb / ma
    if abs(ratio - 1) <= 0.01:
        return ratio, "none"
    va, vb = a.values(col), b.values(col)
    disjoint = max(va) < min(vb) or max(vb) < min(va)
    la, lb = a.log_noise(col), b.log_noise(col)
    if la is not None and lb is not None and mb > 0:
        if abs(math.log(ratio)) > math.hypot(la, lb):
            return ratio, "significant"
        return ratio, "inconclusive" if disjoint else "none"
    ia, ib = a.interval(col), b.interval(col)
    if ia is not None and ib is not None and (ia[1] < ib[0] or ib[1] < ia[0]):
        return ratio, "significant"
    return ratio, "inconclusive"


def repeats(a, b, col):
    return min(len(a.values(col)), len(b.values(col)))


def compare(a, b, col):
    """Ratio b/a and whether the difference is significant (compare_verdict)."""
    r, v = compare_verdict(a, b, col)
    return r, v == "significant"


def regressions(data, base_group, cand_group):
    worse = []
    for bench, series in sorted(data.items()):
        col, better = metric_of(bench)
        for skey, bygroup in sorted(series.items()):
            a, b = bygroup.get(base_group), bygroup.get(cand_group)
            if not a or not b:
                continue
            for s in sorted(set(a) & set(b)):
                r, sig = compare(a[s], b[s], col)
                if r is None or not sig:
                    continue
                if (better == "lower" and r > 1) or (better == "higher" and r < 1):
                    worse.append((bench, skey, s, r, col))
    return worse


def verdict_phrase(v, n):
    return {"significant": "significant", "none": "no significant difference"}.get(
        v, f"inconclusive ({n} repeats)")


def verdict_word(r, v, better, n):
    if r is None:
        return "-"
    if v != "significant":
        return verdict_phrase(v, n)
    return "faster" if (r < 1) == (better == "lower") else "slower"
