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

/* GDRCopy. The efa provider's efa fabric (not efa-direct) pins and maps every
 * CUDA registration made without FI_MR_DMABUF through GDRCopy once
 * libfabric's CUDA support loaded it: ofi_hmem_dev_register ->
 * cuda_gdrcopy_dev_register (src/hmem_cuda_gdrcopy.c: gdr_pin_buffer +
 * gdr_map; fi_close: gdr_unmap + gdr_unpin_buffer), called from
 * efa_rdm_mr_hmem_setup (prov/efa/src/rdm/efa_rdm_mr.c, 2.6.0 and 2.7.0a1)
 * or efa_mr_hmem_setup (prov/efa/src/efa_mr.c, 2.1.0 and 2.4.0: info_type
 * EFA_INFO_RDM), whatever the size. A pin that works says nothing; libfabric
 * states whether GDRCopy is in use only when its CUDA support initialises
 * (cuda_hmem_init, src/hmem_cuda.c, inside the first fi_getinfo): hence a
 * second tap, on FI_LOG_CORE, around that first fi_getinfo. */
#define EFAB_GDRLOG_LINES 8

typedef struct efab_gdrlog {
	char line[EFAB_GDRLOG_LINES][240]; /* what libfabric said of GDRCopy and of CUDA hmem */
	size_t n;
	int captured; /* the tap was on libfabric's log */
	int saw_hmem; /* libfabric's hmem initialisation ran under it ("Hmem iface" said) */
	char why[160];
	efab_filog_tap_t tap;
} efab_gdrlog_t;

enum { EFAB_GDR_UNKNOWN, EFAB_GDR_OFF, EFAB_GDR_ON };

/* Tap FI_LOG_CORE at info and above until efab_gdrlog_end; to be begun
 * before libfabric's first fi_getinfo in the process (fi_ini). EFAB_OK, or
 * EFAB_ERR with g->why. */
int efab_gdrlog_begin(efab_gdrlog_t *g);
void efab_gdrlog_end(efab_gdrlog_t *g);
/* One core line (the tap does this; tests feed constructed lines): kept when
 * it is about GDRCopy or CUDA's hmem interface. */
void efab_gdrlog_add(efab_gdrlog_t *g, const char *msg);
/* GDRCopy as libfabric set it up: env = FI_HMEM_CUDA_USE_GDRCOPY (NULL:
 * unset), mapped = libgdrapi in this process's maps (1, 0, -1 unread),
 * taken after the first fi_getinfo. EFAB_GDR_ON only on libfabric's
 * "Loaded GDRCopy library" (2.4.0 and later, dlopen builds) with no failure
 * said after it; EFAB_GDR_OFF on a false FI_HMEM_CUDA_USE_GDRCOPY, a failure
 * libfabric said, CUDA hmem not initialised, or no libgdrapi in the process;
 * else EFAB_GDR_UNKNOWN. why: the evidence, one line. */
int efab_gdr_state(const efab_gdrlog_t *g, const char *env, int mapped, char *why, size_t len);
/* 1, 0, or -1 when /proc/self/maps cannot be read. */
int efab_libgdrapi_mapped(void);
/* Does a registration take the GDRCopy step when GDRCopy is on: provider
 * efa, fabric not efa-direct, CUDA memory, no FI_MR_DMABUF flag. */
int efab_gdr_applies(const char *prov, const char *fabric, int cuda, int fi_mr_dmabuf);
/* The reg_path suffix for the registration l watched: "" (no GDRCopy step:
 * !applies or state off), "+gdrcopy" (on, and libfabric said no pin failed),
 * "+gdrcopy-failed" (it said "Unable to register handle for GPU memory":
 * the pin was tried and the registration went on without it),
 * "+gdrcopy-unknown" (state unknown). */
const char *efab_reglog_gdr_suffix(const efab_reglog_t *l, int applies, int state);

#ifdef __cplusplus
}
#endif

#endif
