/* Which path a memory registration took, from what libfabric itself reports
 * (reglog.c): its log, taken in-process with fi_import_log around one
 * untimed registration, and classified by the strings of the efa provider's
 * efa_mr_reg_ibv_mr (prov/efa/src/efa_mr.c; read in libfabric 2.1.0, 2.4.0,
 * 2.6.0 and 2.7.0a1, and the logging core of 1.17.1 and 2.x, src/log.c). */
#ifndef EFAB_REGLOG_H
#define EFAB_REGLOG_H

#include <stddef.h>

#include "efab_filog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EFAB_REGLOG_LINES 16

typedef struct efab_reglog {
	char line[EFAB_REGLOG_LINES][240]; /* libfabric's MR-subsystem lines, info and warn */
	size_t n;
	int captured;    /* the log was ours during the registration */
	char why[160];   /* captured == 0: why not */
	efab_filog_tap_t tap; /* on libfabric's log while captured */
} efab_reglog_t;

/* The values of the reg_path column. */
#define EFAB_REGPATH_DMABUF "dmabuf"            /* libfabric: "Registering dmabuf MR" */
#define EFAB_REGPATH_PEERMEM "peermem"          /* ibv_reg_mr on a GPU address */
#define EFAB_REGPATH_FALLBACK "dmabuf->peermem" /* dma-buf refused, ibv_reg_mr took it */
#define EFAB_REGPATH_EFAB_DMABUF "efabench-dmabuf" /* efabench's own FI_MR_DMABUF */
#define EFAB_REGPATH_HOST "host"
#define EFAB_REGPATH_NONE "-"                   /* no NIC registration (shm, tcp) */
#define EFAB_REGPATH_UNKNOWN "unknown"

/* Tap libfabric's log (efab_filog_attach) until efab_reglog_end: MR-subsystem
 * lines at info and above are kept in l; every line FI_LOG_LEVEL asks for is
 * still printed to stderr as libfabric prints it. EFAB_OK, or EFAB_ERR with
 * l->why set (an older libfabric, or the log imported by someone else). */
int efab_reglog_begin(efab_reglog_t *l);
/* Detach: with no other tap, libfabric's own logging is back, so
 * registrations after this format nothing the user did not ask for. */
void efab_reglog_end(efab_reglog_t *l);
/* Keep one line (what the logger does; tests feed constructed lines). */
void efab_reglog_add(efab_reglog_t *l, const char *msg);

/* A provider whose registrations are a NIC's (efa, verbs, psm3, cxi, opx,
 * usnic); shm and tcp register nothing on a NIC. */
int efab_reglog_nic_provider(const char *prov);

/* The path of the registration l watched: cuda = GPU memory (else host),
 * efab_dmabuf = efabench passed FI_MR_DMABUF, nic = a NIC provider's
 * registration (efa, verbs, ...; shm and tcp register nothing on a NIC).
 * One of the EFAB_REGPATH_* strings. */
const char *efab_reglog_classify(const efab_reglog_t *l, int cuda, int efab_dmabuf, int nic);
/* The line that decided (or ""): what -v and the header quote. */
const char *efab_reglog_evidence(const efab_reglog_t *l);

#ifdef __cplusplus
}
#endif

#endif
