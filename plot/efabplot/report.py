"""report.md: the sections in their order, each written by its module in
sections/."""
from .sections import (answer, capdiff, cost, coverage, figlist, grouped, headline, method, nic,
                       regfits, regression, requests, runtable, title, verdicts)


def write_report(path, runs, data, groups, group_by, figures, baseline, worse, splits=()):
    L = title.lines(runs)
    L += capdiff.capability_diff(runs)
    L += grouped.lines(group_by, groups, splits)
    L += requests.lines(runs, groups, group_by)
    if len(groups) > 1:
        L += coverage.lines(data, groups)
        L += answer.answer_section(data, groups, splits)
    L += runtable.lines(runs, group_by)
    L += method.lines()
    L += figlist.lines(figures)
    L += headline.lines(data, groups, splits)
    L += regfits.lines(runs)
    # the two proof-of-path sections, when the rows carry their columns
    proof = nic.nic_section(runs, group_by) + cost.cost_section(runs, group_by)
    if proof:
        L += [""] + proof[:-1]
    L += verdicts.lines(data, groups, splits)
    if baseline:
        L += regression.lines(data, groups, worse)
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
