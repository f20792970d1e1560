/* efab_probe --live's put matrix (probe_put.c): per fabric, a put from a
 * registered and from an unregistered source, host and cuda memory, with
 * and without FI_MR_LOCAL in the hints, each case in a pair of child
 * processes so that a provider crash or hang is a verdict. */
#ifndef PROBE_PUT_H
#define PROBE_PUT_H

#include <stddef.h>
#include <rdma/fabric.h>

#include "efab_rt.h"

/* Bytes of each put (one page, efab_shmem_seed's default). */
#define PROBE_PUT_BYTES 4096

/* One case: a row of the column (its property name) and what it asks. */
typedef struct probe_put_row {
	const char *name; /* "live_put_host_mrlocal_unreg" */
	int mem;	  /* EFAB_MEM_HOST or EFAB_MEM_CUDA */
	int mr_local;	  /* FI_MR_LOCAL in the hints */
	int registered;	  /* the source registered, its descriptor passed */
} probe_put_row_t;

extern const probe_put_row_t probe_put_rows[];
extern const size_t probe_put_nrows;

/* The rows saying which fabric fi_getinfo lists first for the column's
 * provider and domain when the hints name no fabric, with and without
 * FI_MR_LOCAL (what NVSHMEM, aws-ofi-nccl or NIXL get when they name only
 * the provider). */
#define PROBE_PUT_FIRST_MRLOCAL "live_first_fabric_mrlocal"
#define PROBE_PUT_FIRST_NOMRLOCAL "live_first_fabric_nomrlocal"

/* Whether a property is one of the matrix's (the table prints them in their
 * own section). */
int probe_put_is_row(const char *name);

/* Collective (both ranks of the --live runtime): every case of col, each in
 * a pair of children of the two ranks (this program again, --live-child),
 * their collectives carried by rt. add(arg, name, value) is called with each
 * row on every rank, in probe_put_rows order after the two first-fabric rows.
 * timeout_s bounds each wait of a child; a child silent for 2 x timeout_s + 5 s
 * is killed as hung. */
void probe_put_matrix(efab_rt_t *rt, const struct fi_info *col, double timeout_s,
		      void (*add)(void *arg, const char *name, const char *value), void *arg);

/* The child's main: efab_probe --live-child ... (never by hand). */
int probe_put_child_main(int argc, char **argv);

#endif
