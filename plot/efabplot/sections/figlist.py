"""Report section "Figures": a link to every figure drawn."""
import os


def lines(figures):
    L = ["## Figures", ""]
    for bench, fig in sorted(figures.items()):
        L.append(f"![{bench}]({os.path.basename(fig)})")
    L.append("")
    return L
