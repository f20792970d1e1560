#!/usr/bin/env python3
"""Checks efab_probe --live's put matrix (bench/tools/probe_put.c) in its --json output.

  probeput.py shm FILE            shm: every host case ok, every row present
  probeput.py efa FILE VERSION    efasim's efa-direct and efa columns (one domain)
  probeput.py hooks FILE PROVIDER FABRIC TIMEOUT
                                  the verdicts EFAB_PROBE_LIVE_HOOK forced (segv on
                                  host_mrlocal_reg, abort on host_mrlocal_unreg, hang
                                  on host_nomrlocal_unreg, with -t TIMEOUT) and the one
                                  case left alone (host_nomrlocal_reg) still ok
  probeput.py table TEXT FILE     the table's section says what FILE says

FILE: the probe's --json output or its --csv long format.

cuda rows: where no GPU is (nvidia-smi -L fails) each must be skipped with its
reason; where one is, none may be skipped and efa's follow the host rules.
Exit 0, or 1 with what is wrong.
"""
import csv
import io
import json
import re
import subprocess
import sys

ROWS = [f"live_put_{m}_{l}_{s}" for m in ("host", "cuda") for l in ("mrlocal", "nomrlocal")
        for s in ("reg", "unreg")]
OK = "ok (data verified)"
EFA_DIRECT_WORDS = ("error: fi_write (4096 bytes to rank 1) failed: Invalid argument (-22) | provider: "
                    "efa_rma_post_write(): EFA direct requires FI_MR_LOCAL but application does not "
                    "provide a valid desc")
FORMS = re.compile(r"^(skipped|not offered): .+|^([\w.;-]+( \(FI_MR_LOCAL\))?: )?"
                   r"(ok \(data verified\)( \| provider: .+)?|error: .+|rank 1: .+|killed by .+|hang \(.+|exited with .+)$")


def gpu_here():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def load(path):
    """The columns of a --json output or a --csv file, as --json has them."""
    text = open(path).read()
    if text.lstrip().startswith("{"):
        return json.loads(text)["fabrics"]
    cols = {}
    for r in csv.DictReader(io.StringIO(text)):
        key = (r["provider"], r["fabric"], r["domain"])
        cols.setdefault(key, {"provider": key[0], "fabric": key[1], "domain": key[2]})[r["property"]] = r["value"]
    return list(cols.values())


def columns(path):
    cols = load(path)
    for c in cols:
        for r in ROWS + ["live_first_fabric_mrlocal", "live_first_fabric_nomrlocal"]:
            assert r in c, (c["fabric"], r, "missing")
        for r in ROWS:
            assert FORMS.match(c[r]), (c["fabric"], r, c[r])
    return cols


def check_cuda(c, host_rules):
    """No GPU: skipped with a reason. A GPU: the host rules, where given."""
    gpu = gpu_here()
    for r in ROWS[4:]:
        v = c[r]
        if not gpu:
            assert v.startswith("skipped: ") and len(v) > 12, (c["fabric"], r, v)
            continue
        assert not v.startswith("skipped"), (c["fabric"], r, v)
        rule = host_rules.get(r.replace("_cuda_", "_host_"))
        if rule:
            assert rule(v), (c["fabric"], r, v)


def check_shm(path):
    cols = columns(path)
    assert len(cols) == 1, [c["fabric"] for c in cols]
    c = cols[0]
    assert c["live_first_fabric_mrlocal"] == "shm" and c["live_first_fabric_nomrlocal"] == "shm", c
    for r in ROWS[:4]:
        assert c[r] == "shm: " + OK, (r, c[r])
    check_cuda(c, {})


def check_efa(path, version):
    v = tuple(int(x) for x in version.split(".")[:2])
    by = {c["fabric"]: c for c in columns(path)}
    assert set(by) == {"efa-direct", "efa"}, set(by)
    d, e = by["efa-direct"], by["efa"]
    for c in d, e:  # what an application naming only the provider gets
        assert c["live_first_fabric_mrlocal"] == "efa-direct (FI_MR_LOCAL)", c["live_first_fabric_mrlocal"]
        assert c["live_first_fabric_nomrlocal"] == "efa", c["live_first_fabric_nomrlocal"]
    rules = {
        "live_put_host_mrlocal_reg": lambda x: x == "efa-direct (FI_MR_LOCAL): " + OK,
        # 2.4 and later refuse the missing descriptor in the provider's words;
        # 2.1's efa-direct dereferences it (efa_rma_post_write): the crash is the verdict
        "live_put_host_mrlocal_unreg": (lambda x: x == "efa-direct (FI_MR_LOCAL): " + EFA_DIRECT_WORDS) if v >= (2, 4)
        else (lambda x: re.fullmatch(r"efa-direct \(FI_MR_LOCAL\): killed by SIGSEGV in libfabric\.so\.1\+0x[0-9a-f]+"
                                     r" \(fault address 0x[0-9a-f]+\), in fi_write", x) is not None),
    }
    for r in ("live_put_host_nomrlocal_reg", "live_put_host_nomrlocal_unreg"):
        rules[r] = lambda x: x.startswith("not offered: efa-direct (provider efa) requires FI_MR_LOCAL")
    for r, rule in rules.items():
        assert rule(d[r]), ("efa-direct", r, d[r])
    check_cuda(d, rules)
    erules = {
        "live_put_host_mrlocal_reg": lambda x: x == "efa (FI_MR_LOCAL): " + OK,
        # efa under FI_MR_LOCAL warns of the missing descriptor and registers the buffer itself
        "live_put_host_mrlocal_unreg": lambda x: x.startswith("efa (FI_MR_LOCAL): " + OK + " | provider: ")
        and "not compliant with FI_MR_LOCAL" in x and "buf: 0x... " in x,
        "live_put_host_nomrlocal_reg": lambda x: x == "efa: " + OK,
        "live_put_host_nomrlocal_unreg": lambda x: x == "efa: " + OK,
    }
    for r, rule in erules.items():
        assert rule(e[r]), ("efa", r, e[r])
    check_cuda(e, erules)


def check_hooks(path, provider, fabric, timeout):
    c = [c for c in columns(path) if c["provider"] == provider and c["fabric"] == fabric]
    assert len(c) == 1, (provider, fabric, len(c))
    c = c[0]
    m = re.fullmatch(r"(.+?)(?: \(FI_MR_LOCAL\))?: killed by SIGSEGV in libc\.so\.6\+0x[0-9a-f]+ "
                     r"\(fault address \(nil\)\), in fi_write", c["live_put_host_mrlocal_reg"])
    assert m and m.group(1) == fabric, c["live_put_host_mrlocal_reg"]
    assert re.fullmatch(re.escape(fabric) + r"( \(FI_MR_LOCAL\))?: killed by SIGABRT in libc\.so\.6\+0x[0-9a-f]+"
                        r", in fi_write", c["live_put_host_mrlocal_unreg"]), c["live_put_host_mrlocal_unreg"]
    quiet = 2 * float(timeout) + 5  # what the parent waits in silence
    assert c["live_put_host_nomrlocal_unreg"] == f"{fabric}: hang (killed after {quiet:.0f} s without progress, in fi_write)", \
        c["live_put_host_nomrlocal_unreg"]
    assert c["live_put_host_nomrlocal_reg"] == fabric + ": " + OK, c["live_put_host_nomrlocal_reg"]


def check_table(text, path):
    """Every row of every column stands in the table's section as in the JSON."""
    lines = open(text).read().splitlines()
    assert any(x.startswith("live put matrix: ") for x in lines), "no section"
    for c in columns(path):
        head = (f"{c['provider']}/{c['fabric']}/{c['domain']} (hints naming no fabric get: with FI_MR_LOCAL "
                f"{c['live_first_fabric_mrlocal']}, without {c['live_first_fabric_nomrlocal']})")
        assert head in lines, head
        at = lines.index(head)
        body = lines[at + 2:at + 2 + len(ROWS)]
        for r, line in zip(ROWS, body):
            _, mem, lcl, src = r.split("_")[1:]
            want = "  %-5s %-12s %-13s %s" % (mem, "in hints" if lcl == "mrlocal" else "not in hints",
                                              "registered" if src == "reg" else "unregistered", c[r])
            assert line == want, (line, want)
    # the column table keeps its rows out (they have this section)
    assert not any(x.startswith("live_put_host") or x.startswith("live_first") for x in lines)


def main(argv):
    try:
        if argv[1] == "shm":
            check_shm(argv[2])
        elif argv[1] == "efa":
            check_efa(argv[2], argv[3])
        elif argv[1] == "hooks":
            check_hooks(argv[2], argv[3], argv[4], argv[5])
        elif argv[1] == "table":
            check_table(argv[2], argv[3])
        else:
            raise SystemExit(__doc__)
    except AssertionError as e:
        print("probeput:", argv[1], "wrong:", e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
