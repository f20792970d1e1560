"""Every figure's caption: what is plotted, in which definition and unit,
in the code that draws it (caption_text); a bandwidth caption follows
load.BW_DEFINITION."""
from . import load


# Every figure's caption: what is plotted, in which definition and unit.
CAPTIONS = {
    "put_lat": "put_lat: RMA write latency = half the round trip (½ RTT) of a write ping-pong "
               "completed at the target, µs.",
    "get_lat": "get_lat: RMA read latency = full round trip (full RTT) of fi_read to its "
               "completion at the initiator, µs.",
    "atomic_lat": "atomic_lat: atomic latency = full round trip (full RTT) of one atomic to its "
                  "completion at the initiator, µs.",
    "put_bw": "put_bw: write bandwidth = bytes / elapsed time of the timed loop (first post to "
              "last completion, the end confirmed at the target), MB/s = 10^6 B/s (decimal); "
              "message rate in 10^6 ops/s; sum over pairs.",
    "get_bw": "get_bw: read bandwidth = bytes / elapsed time of the timed loop (first post to "
              "last read completion), MB/s = 10^6 B/s (decimal); message rate in 10^6 ops/s; "
              "sum over pairs.",
    "atomic_bw": "atomic_bw: atomic message rate = atomics / elapsed time of the timed loop "
                 "(first post to last completion), 10^6 ops/s (bw_MBps = rate × operand bytes, "
                 "10^6 B/s).",
    "mr_reg": "mr_reg: fi_mr_regattr time per call, µs, per memory kind (columns) and regime "
              "(rows): fresh = a new buffer each call, same = one buffer again, accumulate = "
              "registrations kept alive; k = NICs each buffer is registered on.",
    "shmem_reg": "shmem_reg: NVSHMEM's registration time per call, µs, per regime (rows): "
                 "buffer_register_cuda / buffer_register_host = nvshmemx_buffer_register of "
                 "cudaMalloc'd / host memory (buffer_register_cuda_vmm: of CUDA VMM memory, "
                 "cuMemCreate; --mem cuda-vmm), nvshmem_malloc = nvshmem_malloc of the size; "
                 "lf = the libfabric fabric under NVSHMEM's transport (a line each).",
    "shmem_lat": "shmem_lat: NVSHMEM latency, µs: host = one nvshmem_putmem + nvshmem_quiet (put) or "
                 "nvshmem_getmem (get); stream = one nvshmemx_*_on_stream + "
                 "nvshmemx_quiet_on_stream between cudaEvents, the stream synchronized after each; "
                 "lf = the libfabric fabric under NVSHMEM's transport (a line each).",
    "shmem_bw": "shmem_bw: NVSHMEM bandwidth = payload bytes of the measured windows (W non-blocking "
                "puts or gets, then the quiet) / elapsed time of the loop, MB/s = 10^6 B/s "
                "(decimal); message rate in 10^6 ops/s; host or stream initiator, a line each.",
    "connect": "connect: first operation to each new peer on a new endpoint (efa's handshake, "
               "tcp's connect) to its completion at the initiator, µs, against the peer count; "
               "second = the next operation to the same peer; av_insert = one fi_av_insert of "
               "all peers.",
}


LAT_NOTE = (" Line = p50, shaded band = p50 to p99 over the measured iterations; "
            "× = the first operation of the size (cold: for the first size the first "
            "operation to the peer), never in p50/p99.")


REG_NOTE = (" Line = p50, band = p50 to p99 over the calls after the first; × = the first call "
            "of the size (cold), never in p50/p99; dotted = fit register_us = fixed + per_MiB × "
            "MiB weighted by 1/y² (each parameter with its 95 % interval in the legend).")


BW_CAPTION_WINDOWS = {
    "put_bw": "put_bw: write bandwidth = bytes / sum of window times (first post to last local "
              "completion; some inputs predate the elapsed-time bw_MBps, so every run is shown "
              "in this definition: bw_MBps_windows), MB/s = 10^6 B/s (decimal); message rate "
              "in 10^6 ops/s; sum over pairs.",
    "get_bw": "get_bw: read bandwidth = bytes / sum of window times (some inputs predate the "
              "elapsed-time bw_MBps: bw_MBps_windows), MB/s = 10^6 B/s (decimal); message rate "
              "in 10^6 ops/s; sum over pairs.",
    "atomic_bw": "atomic_bw: atomic message rate = atomics / sum of window times (some inputs "
                 "predate the elapsed-time figure: msg_rate_Mops_windows), 10^6 ops/s "
                 "(bw_MBps = rate × operand bytes, 10^6 B/s).",
}


def caption_text(bench):
    c = CAPTIONS.get(bench, bench + ".")
    if load.BW_DEFINITION[0] == "windows" and bench in BW_CAPTION_WINDOWS:
        c = BW_CAPTION_WINDOWS[bench]
    if bench in ("mr_reg", "shmem_reg"):
        c += REG_NOTE
    elif bench.endswith("_lat"):
        c += LAT_NOTE
    elif bench.endswith("_bw"):
        c += (" × = the first window of the size (cold), never among the windows measured, "
              "in each panel's units: its bytes (window × size) / its time, MB/s, and its "
              "operations / its time, 10^6 ops/s -- one initiating rank's window (the slowest).")
    return c


def add_caption(fig, bench, bottom_in):
    import textwrap
    w = fig.get_size_inches()[0]
    fig.text(0.01, 0.01, "\n".join(textwrap.wrap(caption_text(bench), int(w * 15))),
             fontsize=7, va="bottom", ha="left", wrap=True)
