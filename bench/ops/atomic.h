/* Atomic benchmarks (atomic.c) and the value model their validation uses. */
#ifndef EFAB_BENCH_ATOMIC_H
#define EFAB_BENCH_ATOMIC_H

#include "efab_atomic.h"
#include "harness.h"

size_t efab_atomic_region(const efab_ctx_t *c, uint64_t max_size);
int efab_atomic_setup(efab_ctx_t *c);
int efab_atomic_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);
int efab_atomic_bw_run(efab_ctx_t *c, uint64_t size, efab_row_t *row);

extern const efab_bench_t efab_bench_atomic_lat, efab_bench_atomic_bw;

#endif
