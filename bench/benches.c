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
