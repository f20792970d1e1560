/* The host side of a GPU-initiated data path on efa-direct (issue 37):
 * libfabric >= 2.3's GPU Direct Async ops (fi_open_ops(domain,
 * FI_EFA_GDA_OPS), rdma/fi_ext_efa.h) give an endpoint's send queue and
 * doorbell, CQs whose rings live in GPU memory (cq_open_ext over a dma-buf),
 * the peer's address handle / QP number / qkey and a registration's lkey;
 * this file sets them up so a CUDA kernel can post and poll with no CPU in
 * between (bench/ops/gda_kernels.cu), in the order libfabric's own GDA
 * fabtest (fabtests/prov/efa/src/efa_gda.c) uses. No MPI here: the caller
 * exchanges the names. */
#ifndef EFAB_GDA_H
#define EFAB_GDA_H

#include <stddef.h>
#include <stdint.h>

#include "efab_endpoint.h"
#include "efab_gda_wqe.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efab_gda {
	int device;            /* CUDA ordinal */
	void *ops;             /* struct fi_efa_ops_gda * */
	struct fid_ep *ep;     /* the GPU's own endpoint: libfabric never posts on it */
	struct fid_cq *tx_cq, *rx_cq;
	/* GPU memory for the CQ rings, exported once as a dma-buf and registered
	 * from that fd (the rings are carved from it) */
	void *arena;
	size_t arena_len;
	int fd;
	uint64_t fd_off;       /* where arena starts in the dma-buf */
	struct fid_mr *arena_mr;
	uint8_t *tx_ring, *rx_ring; /* device pointers */
	uint32_t tx_n, rx_n, cqe_size;
	/* the send queue as query_qp_wqs gave it (CPU addresses) and mapped */
	uint8_t *sq_buf;
	uint32_t *sq_db;
	uint32_t sq_n, sq_entry, max_batch;
	int req64;                   /* 64-bit request ids (fi_efa_wq_attr.caps, libfabric >= 2.7) */
	void *sq_reg, *db_reg;       /* what was cuMemHostRegister'ed (page starts) */
	size_t sq_reg_len;
	uint8_t *sq_dev;             /* device addresses */
	uint32_t *db_dev;
	int iomemory;                /* 1: mapped as I/O memory (what a real BAR needs) */
	char map_note[256];          /* how the SQ reached the GPU, for the header */
	uint32_t lkey;               /* of the data buffer */
	fi_addr_t peer;
	efab_gda_dest_t dest;
	char name[EFAB_ADDR_MAX];
	size_t namelen;
	int depth_probe;             /* open_ext_cq: EINVAL is EFAB_AGAIN (the depth is probed) */
	char depth_note[160];        /* the receive ring was cut to the device's CQ depth: what */
	char why[512];               /* EFAB_SKIP: the reason */
} efab_gda_t;

/* Is the GDA path compiled in (libfabric headers with FI_EFA_GDA_OPS and
 * CUDA)? If not, why (for the exit-77 line). */
int efab_gda_compiled(const char **why);

/* Open the GPU's endpoint on fab's efa-direct domain: the ops, the CQ rings
 * in a dma-buf of GPU memory, the endpoint (bound to fab's AV), the send
 * queue mapped into the GPU, the lkey of data_mr. rx_entries: the RX CQ
 * (writedata arrivals). simulated: the NIC is efasim's (its SQ is process
 * memory, which CUDA maps without IOMEMORY). wqe_bytes: 0 takes the send
 * queue libfabric gives; 128 asks for 128-byte entries (an inject size of 80 B
 * in the endpoint's fi_getinfo: libfabric >= 2.7 creates the QP with
 * EFADV_QP_FLAGS_INLINE_WRITE). EFAB_OK; EFAB_SKIP with g->why (what this host
 * lacks); EFAB_ERR (logged). */
int efab_gda_open(efab_gda_t *g, efab_fabric_t *fab, int device, struct fid_mr *data_mr,
		  uint32_t rx_entries, int simulated, unsigned wqe_bytes);
/* Insert the peer's GDA endpoint name into fab's AV and ask the provider for
 * its address handle number, QP number and qkey; rkey of the peer's buffer. */
int efab_gda_connect(efab_gda_t *g, efab_fabric_t *fab, const void *name, size_t namelen,
		     uint64_t rkey);
void efab_gda_close(efab_gda_t *g);

#ifdef __cplusplus
}
#endif

#endif
