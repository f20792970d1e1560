#!/usr/bin/env python3
"""Side by side: efabench vs fabtests (fi_rma_pingpong / fi_rma_bw) on libfabric 2.6.0,
shm and tcp loopback, medians of REPS alternating runs."""
import csv, os, random, statistics, subprocess, sys, time
ROOT = "/work/main"
LF = f"{ROOT}/build-efasim/lf-2.6.0"
FT = f"{LF}/fabtests/bin"
REPS = int(os.environ.get("REPS", "3"))
env = dict(os.environ)
env.update(LD_LIBRARY_PATH=f"{LF}/prefix/lib", FI_TCP_IFACE="lo", FI_SOCKETS_IFACE="lo",
           OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
LOG = open("/tmp/mine/sbs/commands.log", "a")

# (name, fabtests args, efabench exe and args, efab metric)
CASES = [
    ("8 B write latency (us, 1/2 RTT)", ["fi_rma_pingpong", "-o", "write", "-S", "8", "-I", "20000", "-w", "200"],
     ["efab_put_lat", "-m", "8", "-n", "20000", "-w", "200"], "lat"),
    ("8 B writedata latency (us, 1/2 RTT)", ["fi_rma_pingpong", "-o", "writedata", "-S", "8", "-I", "20000", "-w", "200"],
     ["efab_put_lat", "-o", "writedata", "-m", "8", "-n", "20000", "-w", "200"], "lat"),
    ("8 B write message rate (Mops/s)", ["fi_rma_bw", "-o", "write", "-S", "8", "-W", "64", "-I", "64000", "-w", "640"],
     ["efab_put_bw", "-m", "8", "-W", "64", "-n", "1000", "-w", "10", "--footprint", "window"], "mops"),
    ("64 KiB write bandwidth (MB/s)", ["fi_rma_bw", "-o", "write", "-S", "65536", "-W", "64", "-I", "6400", "-w", "640"],
     ["efab_put_bw", "-m", "64K", "-W", "64", "-n", "100", "-w", "10", "--footprint", "window"], "bw"),
    ("4 MiB write bandwidth (MB/s)", ["fi_rma_bw", "-o", "write", "-S", "4194304", "-W", "64", "-I", "640", "-w", "64"],
     ["efab_put_bw", "-m", "4M", "-W", "64", "-n", "10", "-w", "1", "--footprint", "window"], "bw"),
]

def run(cmd, timeout=120, **kw):
    LOG.write(" ".join(cmd) + "\n"); LOG.flush()
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, **kw)

def fabtests(prov, args):
    port = str(random.randint(20000, 40000))
    exe = f"{FT}/{args[0]}"
    base = [exe, "-p", prov, "-e", "rdm"] + args[1:] + [f"-E={port}"]
    LOG.write("server: " + " ".join(base) + "\n")
    srv = subprocess.Popen(base, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.5)
    cl = run(base + ["127.0.0.1"])
    try:
        srv.wait(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
    lines = [l.split() for l in cl.stdout.splitlines() if l.strip() and l.split()[0][0].isdigit()]
    if not lines:
        print("fabtests failed:", cl.stdout, cl.stderr, file=sys.stderr)
        return None
    f = lines[-1]  # bytes iters total time MB/sec usec/xfer Mxfers/sec
    return {"bw": float(f[4]), "lat": float(f[5]), "mops": float(f[6])}

def efab(prov, args, metric):
    out = "/tmp/mine/sbs/e.csv"
    if os.path.exists(out):
        os.remove(out)
    cmd = ["mpirun", "-np", "2", "-x", "LD_LIBRARY_PATH", f"{ROOT}/build/bin/{args[0]}", "-p", prov] + args[1:] + ["--csv", out]
    r = run(cmd)
    if r.returncode:
        print("efab failed", r.stdout[-2000:], r.stderr[-2000:], file=sys.stderr)
        return None
    d = list(csv.DictReader(open(out)))[0]
    if metric == "lat":
        return {"lat": float(d["lat_us_p50"]), "batch": float(d["lat_us_batch"]), "mean": float(d["lat_us_mean"])}
    return {"bw": float(d["bw_MBps"]), "mops": float(d["msg_rate_Mops"])}

res = {}
for prov in ("shm", "tcp"):
    for name, ft, ef, metric in CASES:
        for rep in range(REPS):
            order = [("efab", lambda: efab(prov, ef, metric)), ("ft", lambda: fabtests(prov, ft))]
            if rep % 2:
                order.reverse()
            for who, fn in order:
                v = fn()
                res.setdefault((prov, name, who), []).append(v)
                print(prov, name, who, rep, v, flush=True)

def med(vals, k):
    v = [x[k] for x in vals if x]
    return statistics.median(v) if v else float("nan"), v

with open("/tmp/mine/sbs/table.md", "w") as f:
    f.write("| provider | figure | efabench p50 | efabench batch | fabtests | efabench / fabtests (batch for latency) | runs (efab; fabtests) |\n|---|---|---|---|---|---|---|\n")
    for prov in ("shm", "tcp"):
        for name, ft, ef, metric in CASES:
            e = res[(prov, name, "efab")]; t = res[(prov, name, "ft")]
            if metric == "lat":
                ep, epv = med(e, "lat"); eb, ebv = med(e, "batch"); tv, tvv = med(t, "lat")
                ratio = eb / tv
                f.write(f"| {prov} | {name} | {ep:.3f} | {eb:.3f} | {tv:.3f} | {ratio:.2f} | p50 {', '.join('%.3f' % x for x in epv)}; batch {', '.join('%.3f' % x for x in ebv)}; {', '.join('%.3f' % x for x in tvv)} |\n")
            else:
                ev, evv = med(e, metric); tv, tvv = med(t, metric)
                f.write(f"| {prov} | {name} | {ev:.3f} | - | {tv:.3f} | {ev / tv:.2f} | {', '.join('%.3f' % x for x in evv)}; {', '.join('%.3f' % x for x in tvv)} |\n")
print(open("/tmp/mine/sbs/table.md").read())
