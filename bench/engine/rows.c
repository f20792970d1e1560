/* The benchmark rows: one per executable. Everything that tells one
 * benchmark from another is here (name, options, ranks rule, caps, access,
 * counts, columns); the engine asks the row, never which benchmark runs. */
#include <rdma/fabric.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

#define TRAFFIC_OPTS                                                                               \
	(EFAB_OG_COMMON | EFAB_OG_SELECT | EFAB_OG_DOMAIN | EFAB_OG_SIZES | EFAB_OG_ITERS |        \
	 EFAB_OG_WARMUP | EFAB_OG_MEM | EFAB_OG_GPU | EFAB_OG_CHECK | EFAB_OG_NODES |              \
	 EFAB_OG_TCLASS | EFAB_OG_CUDA_API | EFAB_OG_COLUMNS)
#define STREAM_OPTS (EFAB_OG_WINDOW | EFAB_OG_WINDOW_STATS | EFAB_OG_PER_PAIR)
#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define ATOMIC_CAPS (FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define RMA_ACCESS (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
/* some providers check FI_SEND | FI_RECV for atomics */
#define ATOMIC_ACCESS (RMA_ACCESS | FI_SEND | FI_RECV)
#define COLS(a) .extra_cols = (a), .n_extra = EFAB_ARRAY_SIZE(a)
#define LAT_COUNTS {.iters = 1000, .pivot = 65536, .floor = 20}
#define BW_COUNTS {.iters = 200, .pivot = 8192, .floor = 10, .warmup_cap = 10}

/* Columns are only ever appended (readers and tests/csvcheck.py know each
 * bench's later additions). first_us: iteration 0 of the size, alone;
 * lat_us_batch: one batch of n iterations timed as a whole / n; lat_us_p25/p75
 * (window_us_p25/p75): the quartiles of the samples (windows), the robust
 * within-run spread efab_plot compares with; bw_MBps_windows,
 * msg_rate_Mops_windows: over the sum of window times (the headline bw_MBps
 * over the loop's elapsed time); end_confirm: how the end of the loop was
 * confirmed (pattern.h, rma.c). */
static const char *const put_lat_cols[] = {"inject", "first_us", "lat_us_batch", "lat_us_p25",
					   "lat_us_p75"};
/* put_lat, after every other column: lat_lower_bound (-o write above the
 * provider's MTU: the last byte can land before the rest, pattern.c
 * late_report), late_msgs and late_bytes (-c: messages whose bytes were
 * still landing when the last one was seen). */
static const char *const put_lat_tail[] = {"lat_lower_bound", "late_msgs", "late_bytes"};
static const char *const lat_cols[] = {"first_us", "lat_us_batch", "lat_us_p25", "lat_us_p75"};
static const char *const bw_cols[] = {"pair",		 "window_us_p50",	  "window_us_p99",
				      "inject",		 "link_Gbps",		  "pct_of_link",
				      "first_us",	 "footprint",		  "bw_MBps_windows",
				      "msg_rate_Mops_windows", "end_confirm",	  "window_us_p25",
				      "window_us_p75"};
/* put_bw and get_bw, after every other column (issue 48): --post-list N,
 * --pipeline (yes/no), --high-pps (yes/no), the endpoint's traffic class
 * (FI_TC_* the endpoint was opened with), the endpoints per rank (--eps) */
static const char *const peak_tail[] = {"post_list", "pipeline", "high_pps", "tclass", "eps"};
static const char *const connect_cols[] = {"peers", "av_insert_us", "av_insert_us_per_peer",
					   "second_us_p50", "ep_open_us_p50"};

/* NVSHMEM's own RMA (efab_shmem_lat, efab_shmem_bw: bench/ops/shmem_put.cc,
 * a main of their own): the put/get rows' columns where they mean the same,
 * then what NVSHMEM ran on and how the operation was issued. */
#define SHMEM_RMA_COLS                                                                         \
	"nvshmem_version", "transport", "lf_fabric", "lf_mr_mode", "initiator", "mode", "src",   \
	"registered", "heap_kind", "form", "nv_disable_batch_rma", "nv_batch_max_ops",         \
	"nv_proxy_batch_max", "nv_lf_proxy_batch_max"
static const char *const shmem_lat_cols[] = {"first_us", "lat_us_batch", "lat_us_p25", "lat_us_p75",
					     SHMEM_RMA_COLS, "sync_us_p50", "sync_us_p99"};
static const char *const shmem_bw_cols[] = {"window_us_p50", "window_us_p99", "first_us", "footprint",
					    "bw_MBps_windows", "msg_rate_Mops_windows", "end_confirm",
					    "window_us_p25", "window_us_p75", SHMEM_RMA_COLS};
#define SHMEM_OPTS                                                                                 \
	(EFAB_OG_COMMON | EFAB_OG_SIZES | EFAB_OG_ITERS | EFAB_OG_WARMUP | EFAB_OG_GPU |           \
	 EFAB_OG_CHECK | EFAB_OG_SHMEM | EFAB_OG_NV_TUNE | EFAB_OG_COLUMNS)
#define SHMEM_SUMMARY_TAIL                                                                     \
	"PE 0's local buffer (--src cuda: cuMemAlloc, host: malloc; --register:\n"              \
	"nvshmemx_buffer_register, untimed) and PE 1's symmetric heap (nvshmem_malloc), through\n" \
	"NVSHMEM's remote transport; NVSHMEM starts over MPI (unique-id bootstrap, host library\n" \
	"only for host/stream). -c checks every payload (puts at PE 1, gets at PE 0). Columns name NVSHMEM's\n"    \
	"version, the transport it loaded and the libfabric fabric and mr_mode under it\n"        \
	"(libefab_fitrace.so). --initiator thread|warp|block: one CTA of a CUDA kernel (1, 32,\n"    \
	"--gpu-threads threads) issues them; samples by the kernel's own clock (%globaltimer),\n"  \
	"lat_us_batch / the bandwidth loop by cudaEvents around one launch of n (perftest's);\n"   \
	"NVSHMEM starts with its device state (nvshmemi_init_thread); exit 77 where not built\n"  \
	"(no nvcc or libnvshmem_device.a). Needs NVSHMEM and a GPU: exit 77 without a GPU or\n"   \
	"without 2 PEs."

#define BW_SUMMARY_TAIL                                                                        \
	"With 2N ranks, ranks [0,N) pair with [N,2N) and all pairs run at once; the row\n"      \
	"reports the aggregate (sum over initiating ranks), --per-pair adds one row per pair.\n" \
	"Bandwidth in 10^6 B/s, message rate in 10^6 ops/s; -n counts windows of -W ops."

/* What the rows of one kind share. */
#define RMA_ROW .mpi = 1, .family = EFAB_FAMILY_RMA, .caps = RMA_CAPS, .access = RMA_ACCESS
#define ATOMIC_ROW                                                                             \
	.mpi = 1, .family = EFAB_FAMILY_ATOMIC, .caps = ATOMIC_CAPS, .access = ATOMIC_ACCESS,    \
	.max_size_is_msg = 1, .default_op = EFAB_OP_ATOMIC, .ops = 1u << EFAB_OP_ATOMIC
#define LAT_ROW                                                                                    \
	.pattern = EFAB_PATTERN_PINGPONG, .show_lat = 1, .counts = LAT_COUNTS, .ranks = 2,         \
	.table_cols = "size,iters,min_us,p50_us,p99_us,max_us,errors"
#define BW_ROW                                                                                     \
	.pattern = EFAB_PATTERN_STREAM, .show_bw = 1, COLS(bw_cols),                               \
	.table_cols = "size,MB/s,Mops/s,errors", .ranks = EFAB_RANKS_PAIRS
/* efab_put_bw and efab_get_bw: RMA in the windowed stream, its counts and the peak tail */
#define RMA_BW_ROW                                                                                 \
	RMA_ROW, BW_ROW, .counts = BW_COUNTS, .tail_cols = peak_tail,                              \
			 .n_tail = EFAB_ARRAY_SIZE(peak_tail)

const efab_bench_row_t efab_bench_rows[] = {
	{
		.name = "efab_put_lat",
		.brief =
			"latency = half the round trip of a write ping-pong, completed at the target; microseconds",
		.csv_name = "put_lat",
		.summary =
			"RMA write latency between 2 ranks (mpirun -np 2).\n"
			"Reported: half the round trip of a write ping-pong, in microseconds, completed at\n"
			"the target: -o write polls the last byte of host memory; -o writedata waits for\n"
			"the remote CQ data completion (always used for GPU memory).",
		.definition =
			"latency = half the round trip of a write ping-pong completed at the target "
			"(last byte polled, or remote CQ data for writedata), microseconds",
		.options = TRAFFIC_OPTS | EFAB_OG_RMA_OP | EFAB_OG_SRC | EFAB_OG_MR_CACHE |
			   EFAB_OG_INITIATOR,
		RMA_ROW,
		LAT_ROW,
		.default_op = EFAB_OP_WRITE,
		.ops = (1u << EFAB_OP_WRITE) | (1u << EFAB_OP_WRITEDATA),
		COLS(put_lat_cols),
		.tail_cols = put_lat_tail,
		.n_tail = EFAB_ARRAY_SIZE(put_lat_tail),
	},
	{
		.name = "efab_get_lat",
		.brief =
			"latency = full round trip of fi_read to its completion at the initiator; microseconds",
		.csv_name = "get_lat",
		.summary =
			"RMA read latency between 2 ranks (mpirun -np 2).\n"
			"Reported: full round trip from posting fi_read to its completion at the\n"
			"initiator, in microseconds.",
		.definition =
			"latency = full round trip of fi_read to its completion at the initiator, "
			"microseconds",
		.options = TRAFFIC_OPTS | EFAB_OG_RMA_OP | EFAB_OG_INITIATOR,
		RMA_ROW,
		LAT_ROW,
		.default_op = EFAB_OP_READ,
		.ops = 1u << EFAB_OP_READ,
		COLS(lat_cols),
	},
	{
		.name = "efab_put_bw",
		.brief =
			"MB/s = payload bytes / elapsed time of the timed loop (10^6 B/s); Mops/s = writes / that time",
		.csv_name = "put_bw",
		.summary =
			"RMA write bandwidth and message rate (mpirun -np 2N).\n"
			"A window of -W writes is posted, then waited for; bandwidth = bytes / elapsed\n"
			"time of the timed loop (first post to last completion, the end confirmed at the\n"
			"target: column end_confirm); bw_MBps_windows = bytes / sum of window times.\n" BW_SUMMARY_TAIL,
		.options = TRAFFIC_OPTS | STREAM_OPTS | EFAB_OG_RMA_OP | EFAB_OG_PAIR_LAYOUT |
			   EFAB_OG_INJECT | EFAB_OG_SRC | EFAB_OG_MR_CACHE | EFAB_OG_INITIATOR |
			   EFAB_OG_PEAK | EFAB_OG_HIGH_PPS,
		RMA_BW_ROW,
		.default_op = EFAB_OP_WRITE,
		.ops = (1u << EFAB_OP_WRITE) | (1u << EFAB_OP_WRITEDATA),
	},
	{
		.name = "efab_get_bw",
		.brief =
			"MB/s = payload bytes / elapsed time of the timed loop (10^6 B/s); Mops/s = reads / that time",
		.csv_name = "get_bw",
		.summary =
			"RMA read bandwidth and message rate (mpirun -np 2N).\n"
			"A window of -W reads is posted, then waited for; bandwidth = bytes / elapsed\n"
			"time of the timed loop (first post to last read completion);\n"
			"bw_MBps_windows = bytes / sum of window times.\n" BW_SUMMARY_TAIL,
		.options = TRAFFIC_OPTS | STREAM_OPTS | EFAB_OG_RMA_OP | EFAB_OG_PAIR_LAYOUT |
			   EFAB_OG_PEAK,
		RMA_BW_ROW,
		.default_op = EFAB_OP_READ,
		.ops = 1u << EFAB_OP_READ,
	},
	{
		.name = "efab_atomic_lat",
		.brief =
			"latency = full round trip of one atomic to its completion at the initiator; microseconds",
		.csv_name = "atomic_lat",
		.summary =
			"Atomic latency between 2 ranks (mpirun -np 2; any count >= 2 with --contend).\n"
			"Reported: full round trip of one atomic to its completion at the initiator, in\n"
			"microseconds. -m is in bytes (a multiple of the datatype size; default one\n"
			"element); ops: add fadd cswap swap min max bor band bxor; dtypes: u32 u64 i32\n"
			"i64 f32 f64. Unsupported op/dtype combinations exit 77 (asked of the provider).",
		.definition =
			"latency = full round trip of one atomic to its completion at the initiator "
			"(fetching ops: the result is back; add/min/max/bit ops: the provider's "
			"default completion), microseconds",
		.options = TRAFFIC_OPTS | EFAB_OG_ATOMIC,
		ATOMIC_ROW,
		LAT_ROW,
		COLS(lat_cols),
	},
	{
		.name = "efab_atomic_bw",
		.brief =
			"Mops/s = atomics / elapsed time of the timed loop; MB/s = that rate x operand bytes",
		.csv_name = "atomic_bw",
		.summary =
			"Atomic message rate (mpirun -np 2N; any count >= 2 with --contend).\n"
			"A window of -W atomics is posted, then waited for; rate = atomics / elapsed\n"
			"time of the timed loop (first post to last completion), in 10^6 ops/s\n"
			"(bw_MBps = rate x operand bytes; *_windows: over the sum of window times). Pairs as in\n"
			"efab_put_bw, or with --contend every rank but 0 hits the same words of rank 0.\n"
			"-n counts windows (default 200).",
		.definition =
			"message rate = atomics / elapsed time of the timed loop (first post to "
			"last completion), 10^6 ops/s; msg_rate_Mops_windows = atomics / sum of window "
			"times; aggregate = sum over initiating ranks",
		.options = TRAFFIC_OPTS | STREAM_OPTS | EFAB_OG_ATOMIC,
		ATOMIC_ROW,
		BW_ROW,
		.counts = {.iters = 200, .pivot = 65536, .floor = 4, .warmup_cap = 2},
	},
	{
		.name = "efab_connect",
		.brief =
			"min..max_us = first operation to each new peer, to its completion at rank 0; microseconds",
		.csv_name = "connect",
		.summary =
			"Connection setup (mpirun -np N, N >= 2): rank 0 and N-1 peers on new endpoints.\n"
			"Per peer count p = 1, 2, 4, ... N-1: fi_av_insert of p addresses, then the first\n"
			"operation (-o write, default, or read; 8 B or -m's smallest size) to each peer and\n"
			"a second one, in microseconds; -n rounds per peer count (default 5).",
		.options = TRAFFIC_OPTS | EFAB_OG_RMA_OP,
		.mpi = 1,
		.family = EFAB_FAMILY_CONNECT,
		.default_op = EFAB_OP_WRITE,
		.ops = (1u << EFAB_OP_WRITE) | (1u << EFAB_OP_READ),
		.ranks = EFAB_RANKS_ANY,
		.caps = RMA_CAPS,
		.access = RMA_ACCESS,
		.show_lat = 1,
		COLS(connect_cols),
		.table_cols =
			"peers,iters,min_us,p50_us,p99_us,max_us,av_insert_us,second_us_p50,errors",
		.counts = LAT_COUNTS,
	},
	{
		.name = "efab_scan",
		.csv_name = "scan",
		.options = EFAB_OG_COMMON | EFAB_OG_SELECT | EFAB_OG_ITERS | EFAB_OG_WARMUP |
			   EFAB_OG_WINDOW | EFAB_OG_CHECK | EFAB_OG_SCAN | EFAB_OG_NODES,
		.no_sweep = 1, /* its CSV is pairs x NICs, not result rows */
		.summary =
			"Cluster health scan: which node or NIC is slow (mpirun/srun over N nodes, one rank\n"
			"per NIC and node). Every node pair is measured once, in N-1 rounds of disjoint pairs\n"
			"(round-robin), NIC i with NIC i: write latency (half round trip, p50) and write\n"
			"bandwidth in both directions, with the code and definitions of efab_put_lat and\n"
			"efab_put_bw. Prints node x node matrices, a per-NIC table and the verdict; --csv\n"
			"writes one row per pair and NIC (plot/efab_scan_heatmap draws it). Exit 0 when no\n"
			"node or NIC is flagged, 1 otherwise. Bandwidth runs --time 0.5 s per direction\n"
			"unless -n or --time is given.",
		.mpi = 1,
		.family = EFAB_FAMILY_SCAN,
		.default_op = EFAB_OP_WRITE,
		.ops = 1u << EFAB_OP_WRITE,
		.ranks = EFAB_RANKS_ANY,
		.caps = RMA_CAPS,
		/* 200 timed ping-pongs per NIC pair: a p50 well known, and with
		 * 16 NICs measured one after the other a round's latency stays
		 * well under a second */
		.access = RMA_ACCESS,
		.counts = {.iters = 200, .pivot = 65536, .floor = 20},
	},
	{
		.name = "efab_mr_reg",
		.csv_name = "mr_reg",
		.summary =
			"Registration cost per call and per byte (single process, or one result per rank under\n"
			"mpirun). fi_mr_regattr and fi_close are timed apart, in microseconds, per size, in the\n"
			"regimes fresh (new buffer each time), same (one buffer again and again: MR caches) and\n"
			"accumulate (kept alive up to --max-total: cost against what is already registered);\n"
			"a fit register_us = fixed_us + us_per_MiB x MiB, weighted by 1/y^2 (relative error),\n"
			"is printed and recorded with 95% intervals.\n"
			"Default sizes 4K:1G. On shm/tcp registration is software bookkeeping; on EFA the NIC\n"
			"driver pins pages or imports a dmabuf (column includes_nic_work).\n"
			"The first call of every size and regime is timed apart (first_us), never among the\n"
			"samples. --domains local|all|N registers each buffer on k NICs (column domains).",
		.options = EFAB_OG_COMMON | EFAB_OG_SELECT | EFAB_OG_DOMAIN | EFAB_OG_SIZES |
			   EFAB_OG_ITERS | EFAB_OG_MEM | EFAB_OG_GPU | EFAB_OG_MR_CACHE |
			   EFAB_OG_REG | EFAB_OG_MAX_TOTAL | EFAB_OG_COLUMNS,
		.mpi = 0,
	},
	{
		.name = "efab_shmem_reg",
		.csv_name = "shmem_reg",
		.summary =
			"NVSHMEM registration cost (mpirun -np N, or one PE alone): nvshmemx_buffer_register /\n"
			"unregister of cuda and of host memory, and nvshmem_malloc / nvshmem_free, timed apart\n"
			"per size in microseconds, with the fit register_us = fixed_us + us_per_MiB x MiB\n"
			"(weighted by 1/y^2, 95% intervals; efab_mr_reg's fit and columns). --mem cuda-vmm adds\n"
			"buffer_register_cuda_vmm (CUDA VMM memory, cuMemCreate); no other --mem kind is taken.\n"
			"Default sizes 4K:1G. Needs a GPU (exit 77 without one).",
		.options = EFAB_OG_COMMON | EFAB_OG_SIZES | EFAB_OG_ITERS | EFAB_OG_GPU |
			   EFAB_OG_MAX_TOTAL | EFAB_OG_MEM | EFAB_OG_COLUMNS,
		.mpi = 1,
	},
	{
		.name = "efab_shmem_lat",
		.csv_name = "shmem_lat",
		.summary =
			"NVSHMEM put/get latency between 2 PEs (mpirun -np 2), in microseconds.\n"
			"--initiator host: one nvshmem_putmem + nvshmem_quiet (the put complete at PE 1), or one\n"
			"nvshmem_getmem (the data here, except over NVSHMEM's libfabric transport, which returns\n"
			"early: use --nbi); stream: one nvshmemx_putmem_on_stream (getmem_on_stream)\n"
			"+ nvshmemx_quiet_on_stream between two cudaEvents on the stream, which is synchronized\n"
			"after every iteration (sync_us_*: the host's time of it, stream sync included);\n"
			"lat_us_batch: -n iterations issued back to back, one stream sync, / n. --nbi: the _nbi\n"
			"form and the quiet instead of the blocking call (column form).\n" SHMEM_SUMMARY_TAIL,
		.definition =
			"latency = time of one blocking NVSHMEM operation issued by PE 0 (host: "
			"nvshmem_putmem + nvshmem_quiet, or nvshmem_getmem, host clock; stream: "
			"nvshmemx_putmem_on_stream or getmem_on_stream + nvshmemx_quiet_on_stream, "
			"cudaEvents on the stream; thread|warp|block: the same operation and quiet in a "
			"CUDA kernel, the kernel's %globaltimer; --nbi: the _nbi form + the quiet), "
			"microseconds",
		.brief =
			"lat_us = one NVSHMEM operation (and its quiet) issued by PE 0, microseconds; -v: "
			"how each initiator times it",
		.table_cols = "size,op,iters,min_us,p50_us,p99_us,max_us,errors",
		.options = SHMEM_OPTS | EFAB_OG_SHMEM_NBI,
		.mpi = 1,
		.ranks = 2,
		.show_lat = 1,
		.counts = LAT_COUNTS,
		COLS(shmem_lat_cols),
	},
	{
		.name = "efab_shmem_bw",
		.csv_name = "shmem_bw",
		.summary =
			"NVSHMEM put/get bandwidth and message rate between 2 PEs (mpirun -np 2).\n"
			"A window is -W non-blocking operations, op k at offset k x size on both sides, then the\n"
			"quiet: --initiator host: nvshmem_putmem_nbi (getmem_nbi) x W + nvshmem_quiet, host clock;\n"
			"stream: nvshmemx_putmem_nbi_on_stream (getmem_nbi_on_stream) x W +\n"
			"nvshmemx_quiet_on_stream, cudaEvents on the stream. Bandwidth = payload bytes of the\n"
			"measured windows / elapsed time of the loop (first operation to the last window's quiet),\n"
			"10^6 B/s; bw_MBps_windows = the same bytes / sum of window times. -n counts windows.\n" SHMEM_SUMMARY_TAIL,
		.definition =
			"bandwidth = payload bytes of the measured windows (n x W x size) / elapsed "
			"time of the timed loop (first operation to the last window's quiet completed; "
			"thread|warp|block: cudaEvents around the kernel launch), 10^6 B/s; message rate = operations / the same time, 10^6 ops/s",
		.brief =
			"MB/s = payload of the measured windows / elapsed time of the loop, 10^6 B/s; "
			"Mops/s = operations / the same time",
		.table_cols = "size,op,iters,MB/s,Mops/s,errors",
		.options = SHMEM_OPTS | EFAB_OG_WINDOW,
		.mpi = 1,
		.ranks = 2,
		.show_bw = 1,
		.counts = BW_COUNTS,
		COLS(shmem_bw_cols),
	},
	{
		.name = "efab_probe",
		.summary =
			"Capability and requirements matrix of every RDM fabric on this host (no MPI needed),\n"
			"one column per provider/fabric/domain, and a one-line verdict per fabric. With --live\n"
			"(mpirun -np 2) each fabric really runs a registered put, an unregistered put\n"
			"(desc = NULL), a writedata, a read and a fetch-add, recording OK or the exact error;\n"
			"then its put matrix: host and cuda memory x FI_MR_LOCAL in the hints or not x a\n"
			"registered or unregistered source, a 4096 B put each in its own pair of child processes,\n"
			"recording the fabric fi_getinfo returned and 'ok (data verified)', the error and the\n"
			"provider's words, 'killed by SIG... in <library>+0x...', or 'hang (killed after N s)'.\n"
			"efab_probe --diff A B [--json] compares two probe outputs (efab_probe --diff --help).",
		.options = EFAB_OG_COMMON | EFAB_OG_SELECT | EFAB_OG_DOMAIN | EFAB_OG_PROBE,
		.mpi = 0,
	},
};
const size_t efab_n_bench_rows = sizeof(efab_bench_rows) / sizeof(efab_bench_rows[0]);

const efab_bench_row_t *efab_row(const char *name)
{
	const efab_bench_row_t *r = efab_bench_row_find(efab_bench_rows, efab_n_bench_rows, name);
	if (!r)
		abort(); /* every main names its own row */
	return r;
}
