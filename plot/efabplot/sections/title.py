"""The report's title, and the SIMULATED banner when any run ran on efasim."""


def lines(runs):
    L = ["# efabench comparison report", ""]
    if any(r.get("simulated") for r in runs):
        L += ["**SIMULATED:** runs marked `(simulated)` ran on efasim, a simulated EFA device "
              "under libfabric's efa provider; their figures measure the simulator, never EFA "
              "hardware.", ""]
    return L
