#!/usr/bin/env python3
# (ran from /tmp/cg62 on the VM: python3 cg-recompute.py OUT/tmp ...; OUT from efab_sidebyside --callgrind)
# Recompute --callgrind's per-operation cells from the kept callgrind files,
# with the sidebyside's current POLLERS (the same arithmetic as its callgrind()).
import glob, os, sys, re
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
loader = SourceFileLoader("sbs", "/work/main/bench/tools/efab_sidebyside")
m = module_from_spec(spec_from_loader("sbs", loader)); loader.exec_module(m)
root = "/work/main"
own_e = [root + "/bench/", root + "/lib/", "bench/", "lib/"]
own_f = ["/fabtests/common/", "/fabtests/benchmarks/", "/fabtests/include/", "/fabtests/prov/"]
for tmp in sys.argv[1:]:
    for s0 in sorted(glob.glob(tmp + "/cg-efa-direct-*-s.ft.client")):
        case = re.search(r"cg-efa-direct-(.*)-s\.ft\.client", s0).group(1)
        n, d = m.cg_counts_erma(case)
        res = {}
        ok = True
        for tag in "sl":
            pre = f"{tmp}/cg-efa-direct-{case}-{tag}"
            ef = sorted(glob.glob(pre + ".efab.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
            paths = ef + [pre + ".ft.client", pre + ".ft.server"]
            if len(ef) != 2 or not all(os.path.exists(p) for p in paths):
                ok = False; break
            try:
                res[tag] = [(m.cg_total(p),) + m.cg_own(p, own_e if i < 2 else own_f)
                            for i, p in enumerate(paths)]
            except Exception as e:
                ok = False; break
        if not ok:
            print(f"# {tmp}: {case}: incomplete"); continue
        per = [[(res["l"][i][k] - res["s"][i][k]) / d for k in range(4)] for i in range(4)]
        cells = " | ".join(f"{p[0]:.0f} / {p[1]:.0f} / **{p[2]:.0f}** / {p[3]:.2f}" for p in per)
        name = m.CASES[case][0] if case in m.CASES else m.erma_case(case)[0]
        print(f"| {case} | {name} | {n}, {d} | {cells} |", flush=True)
