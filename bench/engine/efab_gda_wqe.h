/* EFA device formats for a GPU-initiated data path (issue 37): the 64-byte
 * send WQE of an RDMA write, write-with-immediate or read, the 32-byte CQE,
 * the phase bits and the SQ doorbell value, as rdma-core 64's
 * providers/efa/efa_io_defs.h lays them out (libfabric 2.6.0's
 * prov/efa/src/efa_io_defs.h has the same layouts; docs/gda-design.md §3).
 * Used by the CUDA kernels (bench/ops/gda_kernels.cu) and by the host unit
 * test (tests/unit/test_gda_wqe.c), so one builder is checked byte for byte
 * on the CPU. Plain C: no libfabric, no CUDA headers. */
#ifndef EFAB_GDA_WQE_H
#define EFAB_GDA_WQE_H

#include <stdint.h>

#ifdef __CUDACC__
#define EFAB_HD static __host__ __device__ __forceinline__
#else
#define EFAB_HD static inline
#endif

/* efa_io_send_op_type */
enum { EFAB_IO_SEND = 0, EFAB_IO_RDMA_READ = 1, EFAB_IO_RDMA_WRITE = 2 };
/* efa_io_queue_type (CQE flags bits 2:1) */
enum { EFAB_IO_SEND_QUEUE = 1, EFAB_IO_RECV_QUEUE = 2 };

/* efa_io_tx_meta_desc ctrl1 / ctrl2 bits */
#define EFAB_IO_CTRL1_OP_MASK 0x0fu
#define EFAB_IO_CTRL1_HAS_IMM (1u << 4)
#define EFAB_IO_CTRL1_INLINE (1u << 5)
#define EFAB_IO_CTRL1_META_EXT (1u << 6)
#define EFAB_IO_CTRL1_META_DESC (1u << 7)
#define EFAB_IO_CTRL2_PHASE (1u << 0)
#define EFAB_IO_CTRL2_FIRST (1u << 2)
#define EFAB_IO_CTRL2_LAST (1u << 3)
#define EFAB_IO_CTRL2_COMP_REQ (1u << 4)
#define EFAB_IO_LKEY_MASK 0x00ffffffu

/* efa_io_cdesc_common flags bits */
#define EFAB_IO_CDESC_PHASE (1u << 0)
#define EFAB_IO_CDESC_QTYPE_SHIFT 1
#define EFAB_IO_CDESC_QTYPE_MASK (3u << 1)
#define EFAB_IO_CDESC_HAS_IMM (1u << 3)
#define EFAB_IO_CDESC_OP_SHIFT 4
#define EFAB_IO_CDESC_OP_MASK (7u << 4)
#define EFAB_IO_CDESC_UNSOLICITED (1u << 7)

enum { EFAB_GDA_WQE_BYTES = 64, EFAB_GDA_WQE_BYTES_WIDE = 128, EFAB_GDA_CQE_BYTES = 32 };
/* A send queue's entries are 64 bytes (efa_io_tx_wqe) or, on a QP created for
 * inline data above 32 bytes (rdma-core >= 60 EFADV_QP_FLAGS_INLINE_WRITE,
 * libfabric >= 2.7 asked for a larger inject_size), 128 (efa_io_tx_wqe_128:
 * the same meta descriptor and RDMA request at the same offsets, 80 bytes of
 * inline room). The kernels write the 64-byte WQE and zero the rest. */

/* struct efa_io_tx_wqe for RDMA: 32 B meta + remote_mem (16 B) + local_mem[0] (16 B). */
typedef struct efab_gda_wqe {
	/* efa_io_tx_meta_desc */
	uint16_t req_id;         /* 0: echoed in the completion */
	uint8_t ctrl1;           /* 2: op_type 3:0, has_imm 4, inline 5, meta_ext 6, meta_desc 7 (must be 1) */
	uint8_t ctrl2;           /* 3: phase 0, first 2, last 3, comp_req 4 */
	uint16_t dest_qp_num;    /* 4 */
	uint16_t length;         /* 6: buffer descriptors (1 for RDMA) */
	uint32_t immediate_data; /* 8: host order (rdma-core stores be32toh of the verbs imm) */
	uint16_t ah;             /* 12: the device's address handle number */
	uint8_t ctrl3;           /* 14 */
	uint8_t reserved;        /* 15 */
	uint32_t qkey;           /* 16 */
	uint8_t reserved2[6];    /* 20 */
	uint16_t req_id_ex[3];   /* 26: request id bits 63:16 on a send queue with 64-bit request ids
	                          * (rdma-core >= 65, efa_io_req_id_ex); MBZ (reserved2) on others */
	/* efa_io_remote_mem_addr */
	uint32_t r_length;       /* 32 */
	uint32_t rkey;           /* 36 */
	uint32_t r_addr_lo;      /* 40 */
	uint32_t r_addr_hi;      /* 44 */
	/* efa_io_tx_buf_desc local_mem[0] */
	uint32_t l_length;       /* 48 */
	uint32_t lkey;           /* 52: 23:0 */
	uint32_t l_addr_lo;      /* 56 */
	uint32_t l_addr_hi;      /* 60 */
} efab_gda_wqe_t;

/* struct efa_io_rx_cdesc_ex (the CQ entry of a CQ created with SGID: 32 B);
 * a send completion (efa_io_tx_cdesc) uses its first 8 bytes. */
typedef struct efab_gda_cqe {
	uint16_t req_id;     /* 0 */
	uint8_t status;      /* 2: efa_io_comp_status, 0 = OK */
	uint8_t flags;       /* 3: phase 0, q_type 2:1, has_imm 3, op_type 6:4, unsolicited 7 */
	uint16_t qp_num;     /* 4 */
	uint16_t length;     /* 6: bytes 15:0 (receive side) */
	uint16_t ah;         /* 8 */
	uint16_t src_qp_num; /* 10 */
	uint32_t imm;        /* 12 */
	uint16_t length_hi;  /* 16: bytes 31:16, RDMA write with immediate */
	uint8_t rest[14];
} efab_gda_cqe_t;
/* A send completion (efa_io_tx_cdesc) on a queue with 64-bit request ids
 * carries bits 63:16 in req_id_ex, the 6 bytes after the common part: where
 * the receive layout has length, ah and src_qp_num. */

#ifndef __cplusplus
_Static_assert(sizeof(efab_gda_wqe_t) == EFAB_GDA_WQE_BYTES, "efa_io_tx_wqe is 64 bytes");
_Static_assert(sizeof(efab_gda_cqe_t) == EFAB_GDA_CQE_BYTES, "efa_io_rx_cdesc_ex is 32 bytes");
#endif

/* What the initiator needs of its peer (libfabric's query_addr, the peer's
 * MR key and address) and of its own buffer (get_mr_lkey). */
typedef struct efab_gda_dest {
	uint16_t ahn, qpn;
	uint32_t qkey;
	uint32_t rkey;
	uint32_t lkey;
} efab_gda_dest_t;

/* The phase a WQE carries at producer index pc of a queue of 2^log2n entries:
 * 0 on the first pass, flipping at every wrap (rdma-core
 * efa_sq_advance_post_idx). pc may be any width: 2^log2n divides 2^16. */
EFAB_HD unsigned efab_gda_sq_phase(uint32_t pc, unsigned log2n)
{
	return (pc >> log2n) & 1u;
}

/* The SQ doorbell value after WQEs up to pc: the 16-bit producer counter. */
EFAB_HD uint32_t efab_gda_sq_doorbell(uint32_t pc)
{
	return pc & 0xffffu;
}

/* The CQ consumer's expected phase at consumer index cc: 1 on the first pass
 * (rdma-core efa_sub_cq_initialize), flipping at every wrap. */
EFAB_HD unsigned efab_gda_cq_phase(uint32_t cc, unsigned log2n)
{
	return ((cc >> log2n) & 1u) ^ 1u;
}

/* An RDMA WQE (op EFAB_IO_RDMA_WRITE or EFAB_IO_RDMA_READ; has_imm only
 * with write) as rdma-core's efa_send_wr_rdma_write/_read + set_sge build it:
 * one meta descriptor, first and last, completion requested. */
EFAB_HD void efab_gda_wqe_rdma(efab_gda_wqe_t *w, unsigned op, int has_imm, uint32_t imm,
			       uint64_t req_id, int req64, unsigned phase, const efab_gda_dest_t *d,
			       uint64_t raddr, uint64_t laddr, uint32_t len)
{
	w->req_id = (uint16_t)req_id;
	/* rdma-core efa_set_sq_comp_wrid: bits 63:16 only with 64-bit ids */
	w->req_id_ex[0] = req64 ? (uint16_t)(req_id >> 16) : 0u;
	w->req_id_ex[1] = req64 ? (uint16_t)(req_id >> 32) : 0u;
	w->req_id_ex[2] = req64 ? (uint16_t)(req_id >> 48) : 0u;
	w->ctrl1 = (uint8_t)((op & EFAB_IO_CTRL1_OP_MASK) | EFAB_IO_CTRL1_META_DESC |
			     (has_imm ? EFAB_IO_CTRL1_HAS_IMM : 0u));
	w->ctrl2 = (uint8_t)((phase & 1u) | EFAB_IO_CTRL2_FIRST | EFAB_IO_CTRL2_LAST |
			     EFAB_IO_CTRL2_COMP_REQ);
	w->dest_qp_num = d->qpn;
	w->length = 1;
	w->immediate_data = has_imm ? imm : 0u;
	w->ah = d->ahn;
	w->ctrl3 = 0;
	w->reserved = 0;
	w->qkey = d->qkey;
	for (int i = 0; i < 6; i++)
		w->reserved2[i] = 0;
	w->r_length = len;
	w->rkey = d->rkey;
	w->r_addr_lo = (uint32_t)raddr;
	w->r_addr_hi = (uint32_t)(raddr >> 32);
	w->l_length = len;
	w->lkey = d->lkey & EFAB_IO_LKEY_MASK;
	w->l_addr_lo = (uint32_t)laddr;
	w->l_addr_hi = (uint32_t)(laddr >> 32);
}

/* How many WQEs the next doorbell may cover: at most max_batch, what is left
 * to post, and the free SQ slots (n minus those posted and not completed). */
EFAB_HD uint32_t efab_gda_burst(uint32_t want, uint32_t max_batch, uint32_t n, uint32_t posted,
				uint32_t completed)
{
	uint32_t free_slots = n - (posted - completed);
	uint32_t k = want < max_batch ? want : max_batch;
	return k < free_slots ? k : free_slots;
}

/* CQE fields from its flags byte. */
EFAB_HD int efab_gda_cqe_valid(uint8_t flags, uint32_t cc, unsigned log2n)
{
	return (flags & EFAB_IO_CDESC_PHASE) == efab_gda_cq_phase(cc, log2n);
}
EFAB_HD unsigned efab_gda_cqe_op(uint8_t flags)
{
	return (flags & EFAB_IO_CDESC_OP_MASK) >> EFAB_IO_CDESC_OP_SHIFT;
}
EFAB_HD unsigned efab_gda_cqe_qtype(uint8_t flags)
{
	return (flags & EFAB_IO_CDESC_QTYPE_MASK) >> EFAB_IO_CDESC_QTYPE_SHIFT;
}
/* Bytes of a receive-side completion (RDMA write with immediate: 32 bits). */
EFAB_HD uint32_t efab_gda_cqe_bytes(const efab_gda_cqe_t *e)
{
	return (uint32_t)e->length | ((uint32_t)e->length_hi << 16);
}

/* log2 of a power of two (queue sizes); 32 if n is not one. */
EFAB_HD unsigned efab_gda_log2(uint32_t n)
{
	if (!n || (n & (n - 1)))
		return 32;
	unsigned l = 0;
	while ((1u << l) < n)
		l++;
	return l;
}


/* ---- placement and limits the real driver imposes (host side, unit-tested) ---- */

/* The EFA driver refuses a CQ in external memory that is not one
 * DMA-contiguous block (efa_create_cq_umem: !ib_umem_is_contiguous ->
 * "Non contiguous CQ unsupported", EINVAL). GPU memory is physically
 * contiguous within one 2 MiB page (cudaMalloc maps 2 MiB pages at 2 MiB-
 * aligned device addresses); across a boundary it may or may not be. So a
 * ring is placed inside one 2 MiB-aligned window. */
#define EFAB_GDA_GPU_PAGE (2ull << 20)

/* Offsets (from an arena at device address base) of two rings of a_len and
 * b_len bytes, a first, each page-aligned (4 KiB) and neither crossing a
 * 2 MiB boundary; *end: bytes of the arena used. 0, or -1 when a ring is
 * larger than 2 MiB (no placement can be contiguous for sure). An arena of
 * a_len + b_len + 2 x 2 MiB always holds the result. */
EFAB_HD int efab_gda_place_rings(uint64_t base, uint64_t a_len, uint64_t b_len, uint64_t *a_off,
				 uint64_t *b_off, uint64_t *end)
{
	const uint64_t P = EFAB_GDA_GPU_PAGE;
	uint64_t len[2] = {a_len, b_len}, off[2], o = 0;
	for (int i = 0; i < 2; i++) {
		if (len[i] > P)
			return -1;
		o = (o + 4095) & ~4095ull;
		uint64_t s = base + o;
		if (len[i] && s / P != (s + len[i] - 1) / P)
			o = (s / P + 1) * P - base; /* the next 2 MiB boundary */
		off[i] = o;
		o += len[i];
	}
	*a_off = off[0];
	*b_off = off[1];
	*end = o;
	return 0;
}

/* Windows of a writedata stream that one launch may post: an external-memory
 * CQ gives the NIC no consumer index, so nothing stops it from overwriting
 * receive completions the target's kernel has not read. With at most rx_n
 * operations per launch, and the target draining every one before the next
 * launch, the ring cannot be lapped. warm + n windows of `window` operations
 * are asked for; *warm and *n are cut to fit (warmup first kept at >= 1).
 * 0 when nothing was cut, 1 when it was, -1 when not even 2 windows fit
 * (window > rx_n / 2). */
EFAB_HD int efab_gda_rx_bound(uint32_t rx_n, uint64_t window, uint64_t *warm, uint64_t *n)
{
	if (!window || window * 2 > rx_n)
		return -1;
	uint64_t fit = rx_n / window;
	if (*warm + *n <= fit)
		return 0;
	if (*warm >= fit)
		*warm = fit / 2 ? fit / 2 : 1;
	*n = fit - *warm;
	return 1;
}

/* The send queue's request-id width (libfabric >= 2.7's fi_efa_wq_attr.caps,
 * FI_EFA_WQ_CAPS_64_BIT_REQ_ID = 1, from rdma-core >= 65's efadv_wq_attr):
 * the 16-bit caps sit right after max_batch, at byte 28 of the 32-byte
 * struct -- where 2.3-2.6's struct has padding, which their query_qp_wqs
 * leaves as the caller zeroed it. So a build against older headers reads it
 * too: attr (sz bytes, zeroed before the query) -> caps, 0 if none. */
EFAB_HD unsigned efab_gda_wq_caps(const void *attr, unsigned long sz)
{
	if (sz < 30)
		return 0;
	const uint8_t *b = (const uint8_t *)attr;
	return (unsigned)b[28] | ((unsigned)b[29] << 8);
}
#define EFAB_GDA_WQ_CAPS_64_BIT_REQ_ID 1u

/* The request id of a send completion: req_id, with req_id_ex's bits 63:16
 * (bytes 6-11) on a queue with 64-bit request ids (rdma-core >= 65
 * efa_get_sq_comp_wrid). */
EFAB_HD uint64_t efab_gda_tx_req_id(const efab_gda_cqe_t *e, int req64)
{
	uint64_t id = e->req_id;
	if (req64)
		id |= (uint64_t)e->length << 16 | (uint64_t)e->ah << 32 | (uint64_t)e->src_qp_num << 48;
	return id;
}

/* Whether a completed request id is one of the last sq_n posted before
 * producer count pc (at most sq_n are in flight; completions may come in any
 * order). The kernels number requests by their 32-bit producer count: with
 * 64-bit ids all 32 bits come back and are checked, so a device that drops or
 * garbles req_id_ex is caught; with 16-bit ids nothing is checked (2^16 is
 * not more than sq_n apart from the ids in flight on the largest queues). */
EFAB_HD int efab_gda_req_in_flight(uint64_t id, uint32_t pc, uint32_t sq_n)
{
	if (id >> 32)
		return 0;
	return (uint32_t)(pc - 1u - (uint32_t)id) < sq_n;
}

#endif
