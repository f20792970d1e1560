/* The benchmark table: one row per executable. */
#include "rma.h"

static const char *const put_lat_cols[] = {"inject"};

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
	.n_extra = 1,
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
	.n_extra = 6,
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
	.n_extra = 6,
	.region = efab_bw_region,
	.setup = efab_bw_setup,
	.run = efab_bw_run,
};
