/* NVSHMEM's tuning knobs of its proxy and libfabric transport
 * (efab_shmem_lat/bw --nv-batch-rma, --nv-batch-ops, --nv-proxy-batch,
 * --nv-lf-proxy-batch): each option is one NVSHMEM environment variable,
 * set before NVSHMEM starts. Which NVSHMEM reads which variable is learnt
 * from the NVSHMEM libraries this process mapped (their environment table
 * holds the name without "NVSHMEM_", e.g. "LIBFABRIC_DISABLE_BATCH_RMA"),
 * never assumed from a version number. Pure C, no NVSHMEM headers, so the
 * unit tests reach it. */
#ifndef EFAB_NVTUNE_H
#define EFAB_NVTUNE_H

#include <stddef.h>

#include "efab_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	EFAB_NV_DISABLE_BATCH_RMA = 0,   /* NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA (--nv-batch-rma) */
	EFAB_NV_TRANSPORT_BATCH_MAX_OPS, /* NVSHMEM_TRANSPORT_BATCH_MAX_OPS (--nv-batch-ops) */
	EFAB_NV_PROXY_REQUEST_BATCH_MAX, /* NVSHMEM_PROXY_REQUEST_BATCH_MAX (--nv-proxy-batch) */
	EFAB_NV_LF_PROXY_REQUEST_BATCH_MAX, /* NVSHMEM_LIBFABRIC_PROXY_REQUEST_BATCH_MAX (--nv-lf-proxy-batch) */
	EFAB_NV_N_KNOBS
};

const char *efab_nv_knob_env(int k);    /* the environment variable */
const char *efab_nv_knob_option(int k); /* "--nv-batch-rma" */
const char *efab_nv_knob_column(int k); /* the CSV column, "nv_disable_batch_rma" */

/* The value knob k's option asks for ("" when the option was not given). */
void efab_nv_knob_asked(const efab_opts_t *o, int k, char *v, size_t len);

/* Before NVSHMEM starts: setenv every asked knob. A different value of the
 * same variable already in the environment is a usage error (the message
 * in err, EFAB_EUSAGE); the same value is accepted. */
int efab_nv_tune_apply(const efab_opts_t *o, char *err, size_t len);

/* The NVSHMEM libraries mapped in this process: maps is a /proc/<pid>/maps
 * file (NULL: /proc/self/maps); paths gets each libnvshmem_host.so* and
 * nvshmem_transport_*.so* file's path once, at most max of them. Returns
 * how many, -1 when maps cannot be read. */
#define EFAB_NV_PATH 1024
int efab_nv_libs(const char *maps, char paths[][EFAB_NV_PATH], int max);

/* The remote transports NVSHMEM loaded, from those libraries: the names of
 * its nvshmem_transport_<name>.so.N plugins (libfabric, ibrc, ucx, ...),
 * "+"-joined, each once; "none" where none is mapped. */
void efab_nv_transports(const char *maps, char *out, size_t len);

/* After NVSHMEM started: which knobs an NVSHMEM library mapped in this
 * process reads. maps: a /proc/<pid>/maps file (NULL: /proc/self/maps);
 * its libnvshmem_host.so* and nvshmem_transport_*.so* files are searched
 * for each knob's name between two NUL bytes. known[k] = 1 where found.
 * libs gets the searched libraries' base names ("+"-joined, "" for none).
 * Returns the number of libraries searched, -1 when maps cannot be read. */
int efab_nv_tune_scan(const char *maps, int known[EFAB_NV_N_KNOBS], char *libs, size_t len);

/* The asked knobs all known (EFAB_OK), or EFAB_SKIP with the reason: an
 * option NVSHMEM would ignore changes nothing, so nothing is measured. */
int efab_nv_tune_check(const efab_opts_t *o, const int known[EFAB_NV_N_KNOBS], const char *libs,
		       const char *nv_version, char *err, size_t len);

/* Knob k's cell: "default" (unset: NVSHMEM's default), the value set, or
 * "unread:<value>" where it is set but no mapped NVSHMEM library reads it. */
void efab_nv_knob_cell(int k, const int known[EFAB_NV_N_KNOBS], char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
