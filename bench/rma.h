/* RMA benchmark functions (rma_lat.c, rma_bw.c). */
#ifndef EFAB_RMA_H
#define EFAB_RMA_H

#include "harness.h"

int efab_rma_notes(efab_ctx_t *c);
int efab_put_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);
int efab_get_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);

size_t efab_bw_region(const efab_ctx_t *c, uint64_t max_size);
int efab_bw_setup(efab_ctx_t *c);
int efab_bw_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);
int efab_bw_report(efab_ctx_t *c, efab_row_t *row, int active, uint64_t total_ns, size_t ns,
		   uint64_t n, double bytes_per_op, const char *inject);
extern const char *const efab_bw_cols[];
extern const size_t efab_n_bw_cols;

extern const efab_bench_t efab_bench_put_lat, efab_bench_get_lat, efab_bench_put_bw,
	efab_bench_get_bw;

#endif
