/* RMA benchmark functions (rma_lat.c, rma_bw.c). */
#ifndef EFAB_RMA_H
#define EFAB_RMA_H

#include "harness.h"

int efab_rma_notes(efab_ctx_t *c);
/* Warmup of a latency size: at least 1, since iteration 0 is the first. */
uint64_t efab_lat_warmup(const efab_ctx_t *c, uint64_t size);
/* first_us into extra[col], lat_us_batch (if > 0) into extra[col + 1]. */
void efab_lat_extra(efab_row_t *row, int col, double first_us, double batch_us);
int efab_put_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);
int efab_get_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);

size_t efab_bw_region(const efab_ctx_t *c, uint64_t max_size);
int efab_bw_setup(efab_ctx_t *c);
int efab_bw_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);
/* total_us: sum of the measured windows; first_us: this rank's first window
 * of the size (<= 0: none); footprint: the CSV's footprint cell. */
int efab_bw_report(efab_ctx_t *c, efab_row_t *row, int active, double total_us, size_t ns,
		   uint64_t n, double bytes_per_op, const char *inject, double first_us,
		   const char *footprint);
extern const char *const efab_bw_cols[];
extern const size_t efab_n_bw_cols;

extern const efab_bench_t efab_bench_put_lat, efab_bench_get_lat, efab_bench_put_bw,
	efab_bench_get_bw;

#endif
