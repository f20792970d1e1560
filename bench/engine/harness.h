/* The MPI harness shared by every benchmark executable: the lifecycle
 * (runtime, options, plan, placement, fabric, memory, keys, the size loop,
 * report, teardown). The top rung of the engine (tests/layers.conf): what a
 * benchmark is comes from its row (rows.c), how it is timed from its
 * pattern (pattern.h), its operation from its family (family.h, bench/ops),
 * and all of them share the context (context.h); none of them calls back
 * into this file. */
#ifndef EFAB_HARNESS_H
#define EFAB_HARNESS_H

#include "context.h"
#include "evidence.h"
#include "family.h"
#include "mpi_rt.h"
#include "pattern.h"
#include "provenance.h"
#include "rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The MPI benchmark main: row is the executable's (efab_row(name)), fam its
 * operation family (family.h): an executable links only its own family. */
int efab_bench_main(int argc, char **argv, const efab_bench_row_t *row, const efab_family_t *fam);

#ifdef __cplusplus
}
#endif

#endif
