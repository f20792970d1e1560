/* Which path libfabric's efa provider took to register a GPU buffer, from
 * what libfabric itself reports: its log (reglog.c). libfabric 2.6 and
 * 2.7.0a1 register an FI_HMEM_CUDA buffer dma-buf first and fall back to
 * ibv_reg_mr on its address (prov/efa/src/efa_mr.c, efa_mr_reg_ibv_mr),
 * saying so only at FI_LOG_INFO in the MR subsystem; 2.1 and 2.4 register it
 * with ibv_reg_mr, silently. ibv_reg_mr on a GPU address is served by a
 * peer-memory module (nvidia-peermem, or the EFA installer's efa-nv-peermem);
 * ibv_reg_dmabuf_mr by the dma-buf the CUDA driver exports. */
#ifndef EFAB_REGLOG_H
#define EFAB_REGLOG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Start capturing libfabric's MR messages (fi_import_log, libfabric >= 1.13;
 * warnings still go to stderr). EFAB_OK, or EFAB_SKIP when this libfabric
 * cannot hand its log over (then reg_path says unknown). */
int efab_reglog_begin(void);

/* Stop, give libfabric its own logging back; the captured text (at most
 * len - 1 bytes, NUL-terminated) in buf. */
void efab_reglog_end(char *buf, size_t len);

/* The path, from the captured MR messages of one registration that
 * succeeded: explicit (efabench passed FI_MR_DMABUF itself) -> "dmabuf";
 * "assumed dmabuf support ... was incorrect" -> "dmabuf->va" (dma-buf tried,
 * refused, ibv_reg_mr took it); "Registering dmabuf MR" -> "dmabuf";
 * "Fall back to ibv_reg_mr" -> "va" (no dma-buf fd for it); no such message
 * -> "va" where the running libfabric (lf = FI_VERSION) is one whose code was
 * read to register CUDA memory silently only through ibv_reg_mr (2.1 to 2.7),
 * else "unknown". captured = 0 (the log could not be taken): "unknown". */
const char *efab_reglog_path(const char *log, int captured, int explicit_dmabuf, uint32_t lf);

#ifdef __cplusplus
}
#endif

#endif
