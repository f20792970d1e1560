/* The benchmark rows: one per executable, the only list of them
 * (rows.c). Pure data: efab_sweep links it without MPI. */
#ifndef EFAB_ROWS_H
#define EFAB_ROWS_H

#include "efab_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whose callbacks measure a row (bench/engine/families.c maps them). */
enum efab_family_id {
	EFAB_FAMILY_NONE = 0, /* an executable with its own main (mr_reg, shmem_reg, probe, sweep, topo) */
	EFAB_FAMILY_RMA,      /* write, writedata, read: bench/ops/rma_*.c */
	EFAB_FAMILY_ATOMIC,   /* bench/ops/atomic.c */
	EFAB_FAMILY_CONNECT,  /* bench/ops/connect.c */
	EFAB_FAMILY_SCAN,     /* bench/ops/scan.c */
	EFAB_N_FAMILIES
};

extern const efab_bench_row_t efab_bench_rows[];
extern const size_t efab_n_bench_rows;

/* The row of executable name; a missing row is a build mistake (aborts). */
const efab_bench_row_t *efab_row(const char *name);

#ifdef __cplusplus
}
#endif

#endif
