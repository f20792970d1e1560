"""Report section "Method": the rule of stats.compare_verdict in words."""
from .. import stats


def lines():
    return ["", "## Method", "",
            "Values are medians over repeats of each row's p50 (latency) or bandwidth. A "
            "difference is called only when the data can carry it; the verdict is one of three. "
            "(1) A ratio within 1 % of 1 is never called: no significant difference. "
            f"(2) With {stats.MIN_REPEATS} or more repeats on both sides, ln(median) is compared "
            "with the repeats' own spread (each side's 95 % half-width = the standard error of the "
            "median of its repeats, sigma = range of ln(values) / d2(n); timings vary by factors, "
            "and each repeat's p50 already summarises its iterations): beyond both half-widths "
            "combined it is significant; within them it is no significant difference when the "
            "two sides' repeat ranges overlap and inconclusive when they do not. "
            "(3) With fewer repeats, each side's 95 % interval is the hull over its repeats of "
            "median ± 1.96 × 1.2533 × (p75 - p25) / 1.349 / sqrt(n) (the standard error of the "
            "median from the interquartile range, which a few preempted samples cannot inflate; "
            "for bandwidth from the window times' quartiles; rows written before the quartiles "
            "were recorded use the stdev, or (p99 - p50) / 2.326 where smaller): disjoint "
            "intervals are significant, overlapping ones inconclusive (n repeats) -- too few "
            "repeats to claim there is no difference.", ""]
