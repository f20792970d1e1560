/* The benchmark table: one row per executable. */
#include "atomic.h"
#include "rma.h"

/* Columns are only ever appended (readers and tests/csvcheck.py know each
 * bench's later additions). first_us: iteration 0 of the size, alone;
 * lat_us_batch: one batch of n iterations timed as a whole / n. */
static const char *const put_lat_cols[] = {"inject", "first_us", "lat_us_batch"};
static const char *const lat_cols[] = {"first_us", "lat_us_batch"};

const efab_bench_t efab_bench_put_lat = {
	.name = "efab_put_lat",
	.csv_name = "put_lat",
	.mask = EFAB_B_PUT_LAT,
	.summary = "RMA write latency between 2 ranks (mpirun -np 2).\n"
		   "Reported: half the round trip of a write ping-pong, in microseconds, completed at\n"
		   "the target: -o write polls the last byte of host memory; -o writedata waits for\n"
		   "the remote CQ data completion (always used for GPU memory).",
	.definition = "latency = half the round trip of a write ping-pong completed at the target "
		      "(last byte polled, or remote CQ data for writedata), microseconds",
	.default_op = EFAB_OP_WRITE,
	.ops = (1u << EFAB_OP_WRITE) | (1u << EFAB_OP_WRITEDATA),
	.exact_ranks = 2,
	.show_lat = 1,
	.extra_cols = put_lat_cols,
	.n_extra = 3,
	.setup = efab_rma_notes,
	.run = efab_put_lat_run,
};

const efab_bench_t efab_bench_get_lat = {
	.name = "efab_get_lat",
	.csv_name = "get_lat",
	.mask = EFAB_B_GET_LAT,
	.summary = "RMA read latency between 2 ranks (mpirun -np 2).\n"
		   "Reported: full round trip from posting fi_read to its completion at the\n"
		   "initiator, in microseconds.",
	.definition = "latency = full round trip of fi_read to its completion at the initiator, "
		      "microseconds",
	.default_op = EFAB_OP_READ,
	.ops = 1u << EFAB_OP_READ,
	.exact_ranks = 2,
	.show_lat = 1,
	.extra_cols = lat_cols,
	.n_extra = 2,
	.setup = efab_rma_notes,
	.run = efab_get_lat_run,
};

#define BW_SUMMARY_TAIL                                                                        \
	"With 2N ranks, ranks [0,N) pair with [N,2N) and all pairs run at once; the row\n"      \
	"reports the aggregate (sum over initiating ranks), --per-pair adds one row per pair.\n" \
	"Bandwidth in 10^6 B/s, message rate in 10^6 ops/s; -n counts windows of -W ops."

const efab_bench_t efab_bench_put_bw = {
	.name = "efab_put_bw",
	.csv_name = "put_bw",
	.mask = EFAB_B_PUT_BW,
	.summary = "RMA write bandwidth and message rate (mpirun -np 2N).\n"
		   "A window of -W writes is posted, then waited for; bandwidth = bytes / sum of\n"
		   "window times (first post to last local completion).\n" BW_SUMMARY_TAIL,
	.default_op = EFAB_OP_WRITE,
	.ops = (1u << EFAB_OP_WRITE) | (1u << EFAB_OP_WRITEDATA),
	.show_bw = 1,
	.extra_cols = efab_bw_cols,
	.n_extra = 8,
	.region = efab_bw_region,
	.setup = efab_bw_setup,
	.run = efab_bw_run,
};

const efab_bench_t efab_bench_get_bw = {
	.name = "efab_get_bw",
	.csv_name = "get_bw",
	.mask = EFAB_B_GET_BW,
	.summary = "RMA read bandwidth and message rate (mpirun -np 2N).\n"
		   "A window of -W reads is posted, then waited for; bandwidth = bytes / sum of\n"
		   "window times (first post to last read completion).\n" BW_SUMMARY_TAIL,
	.default_op = EFAB_OP_READ,
	.ops = 1u << EFAB_OP_READ,
	.show_bw = 1,
	.extra_cols = efab_bw_cols,
	.n_extra = 8,
	.region = efab_bw_region,
	.setup = efab_bw_setup,
	.run = efab_bw_run,
};

const efab_bench_t efab_bench_atomic_lat = {
	.name = "efab_atomic_lat",
	.csv_name = "atomic_lat",
	.mask = EFAB_B_ATOMIC_LAT,
	.summary = "Atomic latency between 2 ranks (mpirun -np 2; any count >= 2 with --contend).\n"
		   "Reported: full round trip of one atomic to its completion at the initiator, in\n"
		   "microseconds. -m is in bytes (a multiple of the datatype size; default one\n"
		   "element); ops: add fadd cswap swap min max bor band bxor; dtypes: u32 u64 i32\n"
		   "i64 f32 f64. Unsupported op/dtype combinations exit 77 (asked of the provider).",
	.definition = "latency = full round trip of one atomic to its completion at the initiator "
		      "(fetching ops: the result is back; add/min/max/bit ops: the provider's "
		      "default completion), microseconds",
	.default_op = EFAB_OP_ATOMIC,
	.ops = 1u << EFAB_OP_ATOMIC,
	.exact_ranks = 2,
	.show_lat = 1,
	.extra_cols = lat_cols,
	.n_extra = 2,
	.region = efab_atomic_region,
	.setup = efab_atomic_setup,
	.run = efab_atomic_lat_run,
};

const efab_bench_t efab_bench_atomic_bw = {
	.name = "efab_atomic_bw",
	.csv_name = "atomic_bw",
	.mask = EFAB_B_ATOMIC_BW,
	.summary = "Atomic message rate (mpirun -np 2N; any count >= 2 with --contend).\n"
		   "A window of -W atomics is posted, then waited for; rate = atomics / sum of\n"
		   "window times, in 10^6 ops/s (bw_MBps = rate x operand bytes). Pairs as in\n"
		   "efab_put_bw, or with --contend every rank but 0 hits the same words of rank 0.\n"
		   "-n counts windows (default 200).",
	.definition = "message rate = atomics / sum of window times (first post to last "
		      "completion), 10^6 ops/s; aggregate = sum over initiating ranks",
	.default_op = EFAB_OP_ATOMIC,
	.ops = 1u << EFAB_OP_ATOMIC,
	.show_bw = 1,
	.extra_cols = efab_bw_cols,
	.n_extra = 8,
	.region = efab_atomic_region,
	.setup = efab_atomic_setup,
	.run = efab_atomic_bw_run,
};
