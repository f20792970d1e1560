/* NVSHMEM's own RMA measured with efabench's rows (bench/ops/shmem_put.cc):
 * the main of efab_shmem_lat and efab_shmem_bw (bench/ops/shmem_lat.cc,
 * shmem_bw.cc), which differ only in their row. */
#ifndef EFAB_SHMEM_PUT_H
#define EFAB_SHMEM_PUT_H

#include "efab_opts.h"

/* The program for row (efab_row("efab_shmem_lat") or "efab_shmem_bw"): its
 * exit status (0, 1 runtime failure or -c mismatch, 2 usage, 77 skipped). */
int efab_shmem_put_main(int argc, char **argv, const efab_bench_row_t *row);

#endif
