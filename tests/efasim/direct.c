/* efasim: The direct (MMIO) data path, SIMULATED. efadv_query_qp_wqs and
 * efadv_query_cq hand the provider queue memory in the device's own formats
 * (rdma-core 64's providers/efa/efa_io_defs.h, copied below): it writes
 * efa_io_tx_wqe send WQEs and efa_io_rx_desc receive descriptors itself,
 * rings doorbells with plain 32-bit stores and parses efa_io_cdesc_common /
 * efa_io_rx_cdesc_ex completions (phase bit) straight out of the CQ buffer.
 *
 * Where each piece lives, and who plays the NIC:
 * - SQ: process-private memory (on EFA a write-combined BAR page: LLQ) and a
 *   doorbell word on a page of its own (on EFA an uncached BAR page), both
 *   anonymous mappings an application may cuMemHostRegister for a GPU that
 *   posts WQEs itself (GDA). A doorbell is a plain store, so a per-process
 *   device engine thread notices it by polling the doorbells of this
 *   process's direct QPs: after work it sleeps with a doubling wait (2 us ..
 *   256 us; 4 ms after a second of idleness), so an idle process costs
 *   little CPU and a busy one's doorbells wait microseconds (README). It
 *   parses each WQE (phase checked), and executes it with execute() -- the
 *   SRD semantics, checks and completions of the verbs path.
 * - RQ: the shared-memory receive ring of the QP (rings.c) holds the
 *   descriptors, and its header the RQ doorbell: an initiator in any process
 *   pops descriptors between the consumer index and the doorbell's producer
 *   counter (rq_pop_direct), as the responder's NIC would.
 * - CQ: the shared-memory CQ ring holds the device CQEs; whoever completes
 *   (the engine, a remote initiator, the RNR retry thread) writes them with
 *   cq_write_direct, phase bit last; the CQ doorbell (consumer index, cmd_sn,
 *   arm) is read there to raise completion events. A CQ in external memory
 *   (GDA: efadv_create_cq with EXT_MEM_DMABUF) has its entries in CUDA memory
 *   of its owner: the same CQE is written there with two ordered CUDA copies
 *   (from another process through the ring's IPC handle); it has no doorbell.
 * Timings measure the simulator, never EFA. */
#include "sim.h"


/* ------------------------------------------- rdma-core 64 efa_io_defs.h */
enum { IO_SEND_QUEUE = 1, IO_RECV_QUEUE = 2 };
enum { IO_SEND = 0, IO_RDMA_READ = 1, IO_RDMA_WRITE = 2 };
struct io_tx_meta_desc {
	uint16_t req_id;
	uint8_t ctrl1;           /* 3:0 op_type, 4 has_imm, 5 inline_msg, 6 meta_extension, 7 meta_desc */
	uint8_t ctrl2;           /* 0 phase, 2 first, 3 last, 4 comp_req */
	uint16_t dest_qp_num;
	uint16_t length;         /* SGEs, or inline bytes */
	uint32_t immediate_data;
	uint16_t ah;
	uint8_t ctrl3;           /* 1:0 processing hints */
	uint8_t reserved;
	uint32_t qkey;
	uint8_t reserved2[6];
	uint16_t req_id_ex[3];   /* rdma-core >= 65: wr_id bits 63:16 when the SQ has 64-bit request ids (MBZ before) */
};
struct io_tx_buf_desc {
	uint32_t length;
	uint32_t lkey;           /* 23:0 */
	uint32_t buf_addr_lo, buf_addr_hi;
};
struct io_remote_mem_addr {
	uint32_t length, rkey, buf_addr_lo, buf_addr_hi;
};
struct io_tx_wqe {
	struct io_tx_meta_desc meta;
	union {
		struct io_tx_buf_desc sgl[2];
		uint8_t inline_data[32];
		struct {
			struct io_remote_mem_addr remote_mem;
			struct io_tx_buf_desc local_mem[1];
		} rdma_req;
	} data;
};
/* rdma-core >= 60 efa_io_tx_wqe_128: the same meta descriptor; 80 bytes of
 * inline data for a send, or an RDMA request whose local side is one buffer
 * or, on a QP with inline RDMA writes, 80 bytes of inline data */
struct io_tx_wqe_128 {
	struct io_tx_meta_desc meta;
	union {
		struct io_tx_buf_desc sgl[2];
		uint8_t inline_data[80];
		struct {
			struct io_remote_mem_addr remote_mem;
			union {
				struct io_tx_buf_desc local_mem[1];
				uint8_t inline_data[80];
			};
		} rdma_req;
	} data;
};
struct io_rx_desc {
	uint32_t buf_addr_lo, buf_addr_hi;
	uint16_t req_id;
	uint16_t length;
	uint32_t lkey_ctrl;      /* 23:0 lkey, 30 first, 31 last */
};
struct io_cdesc_common {
	uint16_t req_id;
	uint8_t status;
	uint8_t flags;           /* 0 phase, 2:1 q_type, 3 has_imm, 6:4 op_type, 7 unsolicited */
	uint16_t qp_num;
};
struct io_rx_cdesc {
	struct io_cdesc_common common;
	uint16_t length;
	uint16_t ah;
	uint16_t src_qp_num;
	uint32_t imm;
};
struct io_rx_cdesc_ex {
	struct io_rx_cdesc base;
	union {
		uint16_t length_hi;      /* RDMA write with immediate */
		uint8_t src_addr[16];
	} u;
};
_Static_assert(sizeof(struct io_tx_wqe) == 64, "efa_io_tx_wqe is 64 bytes");
_Static_assert(sizeof(struct io_tx_wqe_128) == WIDE_WQE_SIZE, "efa_io_tx_wqe_128 is 128 bytes");
_Static_assert(offsetof(struct io_tx_wqe_128, data.rdma_req.local_mem) == offsetof(struct io_tx_wqe, data.rdma_req.local_mem),
	       "the RDMA request at the same offset in both");
_Static_assert(sizeof(struct io_rx_desc) == 16, "efa_io_rx_desc is 16 bytes");
_Static_assert(sizeof(struct io_rx_cdesc) == 16, "efa_io_rx_cdesc is 16 bytes");
_Static_assert(sizeof(struct io_rx_cdesc_ex) == 32, "efa_io_rx_cdesc_ex is 32 bytes");
_Static_assert(sizeof(struct io_rx_cdesc_ex) == DIRECT_CQE_SIZE, "sim.h's DIRECT_CQE_SIZE");
_Static_assert(sizeof(struct io_tx_wqe) == NARROW_WQE_SIZE, "sim.h's NARROW_WQE_SIZE");
enum { CQE_SIZE = sizeof(struct io_rx_cdesc_ex),
       SQ_MAX_BATCH = 64 /* assumed: LLQ depth between doorbells */ };
#define CQ_DB_CI_MASK 0xffffu
#define CQ_DB_ARM 0x80000000u
#define RX_LKEY_MASK 0xffffffu
#define RX_FIRST (1u << 30)
#define RX_LAST (1u << 31)

/* ------------------------------------------------------------ RQ and CQ */

int rq_pop_direct(struct efasim_ring_hdr *h, struct efasim_rqe *out)
{
	/* With h->lock held. head counts descriptors consumed; the doorbell holds
	 * the provider's producer counter (16 bits, wrapping). */
	uint16_t pc = (uint16_t)__atomic_load_n(&h->db, __ATOMIC_ACQUIRE);
	uint16_t avail = (uint16_t)(pc - (uint16_t)h->head);
	if (!avail || avail > h->size)
		return 0;
	uint32_t n = 0;
	for (;;) {
		const struct io_rx_desc *d = ring_slot(h, h->head + n);
		if (n == 0)
			out->wr_id = d->req_id;
		if (n < EFASIM_MAX_SGE)
			out->sge[n] = (struct ibv_sge){.addr = ((uint64_t)d->buf_addr_hi << 32) | d->buf_addr_lo,
						       .length = d->length,
						       .lkey = d->lkey_ctrl & RX_LKEY_MASK};
		n++;
		if (d->lkey_ctrl & RX_LAST)
			break;
		if (n == avail)
			return 0; /* the rest of the WR is not posted yet */
	}
	/* more descriptors than the device takes: a WR with a bad lkey (0) */
	out->nsge = n > EFASIM_MAX_SGE ? EFASIM_MAX_SGE : n;
	if (n > EFASIM_MAX_SGE)
		out->sge[0].lkey = 0;
	h->head += n;
	return 1;
}

/* A CQE into a ring in external (CUDA) memory of h->owner, as the device
 * DMAs it: the 32 bytes with the previous pass's phase, then the flags byte
 * with this pass's phase -- two CUDA copies on one stream, the first
 * synchronised before the second is issued, so the phase lands last. From
 * another process the ring is reached through the IPC handle in its header
 * (memkind.c opens it once). A failed copy loses the completion: said on
 * stderr whatever EFASIM_LOG is, counted in ext_lost, and the slot is not
 * consumed (the next completion goes there). With h->lock held. */
static int cq_write_ext(struct efasim_ring_hdr *h, const struct io_rx_cdesc_ex *v, uint8_t flags)
{
	uint64_t at = h->ext_dev + (h->tail & (h->size - 1)) * (uint64_t)CQE_SIZE;
	struct mk_ref dst = {MK_CUDA, h->owner, at, -1, &h->ext_mk};
	struct mk_ref src = {MK_HOST, sim.pid, (uint64_t)(uintptr_t)v, -1, NULL};
	int rc = mk_copy(dst, src, sizeof(*v));
	if (!rc) {
		dst.addr = at + offsetof(struct io_cdesc_common, flags);
		src.addr = (uint64_t)(uintptr_t)&flags;
		rc = mk_copy(dst, src, 1);
	}
	if (rc) {
		h->ext_lost++;
		fprintf(stderr,
			"efasim[%d]: ext-mem CQ of pid %d: CQE %llu (req_id %u, status %u) could not be written to GPU "
			"memory %#llx: completion LOST (%llu lost on this CQ)\n",
			(int)getpid(), (int)h->owner, (unsigned long long)h->tail, v->base.common.req_id,
			v->base.common.status, (unsigned long long)at, (unsigned long long)h->ext_lost);
	}
	return rc;
}

/* A completion in the device's format (the receiver's AH number for the
 * sender from ah_num_by, mr.c: 0xFFFF and the SGID when it has none). */
void cq_write_direct(struct efasim_ring_hdr *h, const struct efasim_cqe *e)
{
	/* With h->lock held. */
	uint8_t phase = (uint8_t)(((h->tail / h->size) & 1) ^ 1); /* the first pass writes phase 1 */
	struct io_rx_cdesc_ex v;
	memset(&v, 0, sizeof(v));
	v.base.common.req_id = (uint16_t)e->wr_id;
	v.base.common.status = (uint8_t)e->status;
	v.base.common.qp_num = (uint16_t)e->qp_num;
	uint8_t op = e->rdma_write ? IO_RDMA_WRITE : e->rdma_read ? IO_RDMA_READ : IO_SEND;
	uint8_t flags = (uint8_t)((e->recv_side ? IO_RECV_QUEUE : IO_SEND_QUEUE) << 1) | (uint8_t)(op << 4);
	if (e->has_imm)
		flags |= 1u << 3;
	if (e->unsolicited)
		flags |= 1u << 7;
	if (!e->recv_side && e->req64) { /* efa_io_tx_cdesc: req_id_ex follows the common part */
		uint16_t ex[3] = {(uint16_t)(e->wr_id >> 16), (uint16_t)(e->wr_id >> 32), (uint16_t)(e->wr_id >> 48)};
		memcpy((uint8_t *)&v + sizeof(struct io_cdesc_common), ex, sizeof(ex));
	}
	if (e->recv_side) {
		v.base.length = (uint16_t)e->byte_len;
		v.base.ah = ah_num_by(h->owner, h->dev, e->src_gid);
		v.base.src_qp_num = (uint16_t)e->src_qp;
		v.base.imm = e->imm;
		if (v.base.ah == EFASIM_UNKNOWN_AH)
			memcpy(v.u.src_addr, e->src_gid, 16);
		if (e->rdma_write) /* the same bytes as src_addr's first two, as on the device */
			v.u.length_hi = (uint16_t)(e->byte_len >> 16);
	}
	/* the body with the previous pass's phase (still not pending to the
	 * provider), then the flags with this pass's phase bit, last */
	v.base.common.flags = (uint8_t)((flags & ~1u) | (phase ^ 1u));
	if (h->ext) {
		if (cq_write_ext(h, &v, (uint8_t)(flags | phase)) == 0)
			h->tail++;
		return;
	}
	struct io_rx_cdesc_ex *c = ring_slot(h, h->tail);
	memcpy(c, &v, sizeof(v));
	__atomic_store_n(&c->base.common.flags, (uint8_t)(flags | phase), __ATOMIC_RELEASE);
	h->tail++;
}

/* An event is due when the CQ doorbell is armed: one event per arm, as the
 * device. The arm bit is taken back out of the doorbell word when the event is
 * raised, so a later arm (the provider's next store, whatever its cmd_sn)
 * arms again. With h->lock held. */
int cq_direct_event_due(struct efasim_ring_hdr *h)
{
	uint32_t db = __atomic_load_n(&h->db, __ATOMIC_ACQUIRE);
	while (db & CQ_DB_ARM)
		if (__atomic_compare_exchange_n(&h->db, &db, db & ~CQ_DB_ARM, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

/* ------------------------------------------------------------ queries */

int efasim_efadv_query_cq(struct ibv_cq *ibcq, struct efadv_cq_attr *attr, uint32_t inlen)
{
	if (!efasim_is_sim_context(ibcq->context))
		return EOPNOTSUPP;
	if (inlen < offsetof(struct efadv_cq_attr, num_entries) + sizeof(attr->num_entries))
		return EINVAL;
	struct sim_cq *c = container_of((struct ibv_cq_ex *)ibcq, struct sim_cq, cqx);
	struct efasim_ring_hdr *h = c->ring;
	if (c->ext) {
		/* the caller's buffer pointer (NULL: the ring is GPU memory only the
		 * GPU reads), and no doorbell: the kernel maps none for external
		 * memory (amzn-drivers efa_create_cq_umem: no mmap entries) */
		attr->comp_mask = 0;
		attr->buffer = (uint8_t *)(uintptr_t)h->ext_cpu;
		attr->entry_size = CQE_SIZE;
		attr->num_entries = h->size;
		if (inlen >= offsetof(struct efadv_cq_attr, doorbell) + sizeof(attr->doorbell))
			attr->doorbell = NULL;
		slog("direct data path: ext-mem CQ %s (%u entries of %u B, device address %#llx, buffer %p)", c->file,
		     h->size, CQE_SIZE, (unsigned long long)h->ext_dev, (void *)attr->buffer);
		return 0;
	}
	robust_lock(&h->lock);
	if (!h->direct) {
		if (h->tail != h->head) { /* completions already in the verbs format */
			pthread_mutex_unlock(&h->lock);
			return EBUSY;
		}
		memset(ring_slot(h, 0), 0, (size_t)h->size * h->entry_size);
		h->entry_size = CQE_SIZE;
		h->head = h->tail = 0;
		h->db = 0;
		h->direct = 1;
	}
	pthread_mutex_unlock(&h->lock);
	c->direct = 1;
	slog("direct data path: CQ %s (%u entries of %u B) handed to the provider", c->file, h->size, CQE_SIZE);
	attr->comp_mask = 0;
	attr->buffer = (uint8_t *)ring_slot(h, 0);
	attr->entry_size = CQE_SIZE;
	attr->num_entries = h->size;
	if (inlen >= offsetof(struct efadv_cq_attr, doorbell) + sizeof(attr->doorbell))
		attr->doorbell = (uint32_t *)&h->db;
	return 0;
}

static void engine_start_locked(void);

int efasim_efadv_query_qp_wqs(struct ibv_qp *qp, struct efadv_wq_attr *sq, struct efadv_wq_attr *rq, uint32_t inlen)
{
	if (!efasim_is_sim_context(qp->context))
		return EOPNOTSUPP;
	if (inlen < offsetof(struct efadv_wq_attr, max_batch) + sizeof(sq->max_batch))
		return EINVAL;
	struct sim_qp *q = (struct sim_qp *)qp;
	if (q->owner != sim.pid)
		return EINVAL;
	if (!q->sq_buf) {
		uint32_t n = 1;
		while (n < q->sq_max)
			n <<= 1;
		/* anonymous mappings of their own (zeroed): the SQ, PAGE_ALIGN(n * 64)
		 * bytes, and a page whose first word is the doorbell, so two QPs never
		 * share a page an application registers for its GPU */
		size_t pg = (size_t)sysconf(_SC_PAGESIZE);
		size_t map = ((size_t)n * q->wqe_size + pg - 1) & ~(pg - 1);
		void *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return ENOMEM;
		void *db = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (db == MAP_FAILED) {
			munmap(p, map);
			return ENOMEM;
		}
		struct efasim_ring_hdr *h = q->rq;
		robust_lock(&h->lock);
		if (h->tail != h->head) {
			pthread_mutex_unlock(&h->lock);
			munmap(p, map);
			munmap(db, pg);
			return EBUSY;
		}
		h->entry_size = sizeof(struct io_rx_desc);
		h->head = h->tail = 0;
		h->db = 0;
		h->direct = 1;
		pthread_mutex_unlock(&h->lock);
		q->sq_cnt = n;
		q->sq_cc = 0;
		q->sq_map = map;
		q->sq_dbp = db;
		pthread_mutex_lock(&sim.lock);
		q->sq_buf = p; /* the engine looks at QPs with an SQ buffer */
		engine_start_locked();
		pthread_mutex_unlock(&sim.lock);
	}
	slog("direct data path: QP %u SQ %u x %u B, RQ %u descriptors handed to the provider", qp->qp_num, q->sq_cnt,
	     q->wqe_size, q->rq->size);
	sq->comp_mask = 0;
	sq->buffer = q->sq_buf;
	sq->entry_size = q->wqe_size;
	sq->num_entries = q->sq_cnt;
	sq->doorbell = (uint32_t *)q->sq_dbp;
	sq->max_batch = q->sq_cnt < SQ_MAX_BATCH ? q->sq_cnt : SQ_MAX_BATCH;
#ifdef EFASIM_REQ_ID_EX
	/* rdma-core >= 65 fills caps (and zeroes reserved) when the caller's struct has them */
	if (inlen >= offsetof(struct efadv_wq_attr, reserved) + sizeof(sq->reserved)) {
		sq->caps = q->req64 ? EFADV_WQ_CAPS_64_BIT_REQ_ID : 0;
		memset(sq->reserved, 0, sizeof(sq->reserved));
		rq->caps = 0;
		memset(rq->reserved, 0, sizeof(rq->reserved));
	}
#endif
	rq->comp_mask = 0;
	rq->buffer = (uint8_t *)ring_slot(q->rq, 0);
	rq->entry_size = sizeof(struct io_rx_desc);
	rq->num_entries = q->rq->size;
	rq->doorbell = (uint32_t *)&q->rq->db;
	rq->max_batch = q->rq->size;
	return 0;
}

/* ------------------------------------------------------------ the engine */

/* The WR op of a WQE's op type (completion counters), -1 if none. */
static int wqe_wr_op(uint8_t ctrl1)
{
	switch (ctrl1 & 0xf) {
	case IO_SEND: return OP_SEND;
	case IO_RDMA_READ: return OP_READ;
	case IO_RDMA_WRITE: return OP_WRITE;
	default: return -1;
	}
}

/* The request id a WQE carries: 16 bits, or 64 (req_id + req_id_ex) on an SQ
 * with 64-bit request ids (rdma-core >= 65, efa_set_sq_comp_wrid). */
static uint64_t wqe_req_id(const struct sim_qp *q, const struct io_tx_meta_desc *m)
{
	if (!q->req64)
		return m->req_id;
	return (uint64_t)m->req_id | (uint64_t)m->req_id_ex[0] << 16 | (uint64_t)m->req_id_ex[1] << 32 |
	       (uint64_t)m->req_id_ex[2] << 48;
}

/* A WQE's inline data (len bytes at src) into the WR, as the verbs path's
 * wr_set_inline_data copies it at post time: the status (ES_OK, or the
 * length or allocation failure). */
static int take_inline(struct sim_qp *q, struct sim_wr *w, const uint8_t *src, uint32_t len, size_t room)
{
	if (len > q->max_inline || len > room)
		return ES_LOCAL_BAD_LENGTH;
	w->inl = malloc(len ? len : 1);
	if (!w->inl)
		return ES_LOCAL_QP_INTERNAL;
	memcpy(w->inl, src, len);
	w->inl_len = len;
	return ES_OK;
}

/* One WQE: parsed into a sim_wr and executed as the verbs path's WRs are. */
static void run_wqe(struct sim_qp *q, const void *wqe_dev)
{
	/* the WQE as the device reads it: q->wqe_size bytes, 64 or 128 */
	struct io_tx_wqe_128 wqe;
	memset(&wqe, 0, sizeof(wqe));
	memcpy(&wqe, wqe_dev, q->wqe_size);
	size_t inline_room = q->wqe_size == WIDE_WQE_SIZE ? sizeof(wqe.data.inline_data) : 32;
	const struct io_tx_meta_desc *m = &wqe.meta;
	struct sim_wr w;
	memset(&w, 0, sizeof(w));
	w.wr_id = wqe_req_id(q, m);
	w.flags = IBV_SEND_SIGNALED;
	int op = m->ctrl1 & 0xf, imm = !!(m->ctrl1 & (1u << 4)), inl = !!(m->ctrl1 & (1u << 5));
	int status = ES_OK;
	if (!(m->ctrl1 & (1u << 7)) || !(m->ctrl2 & (1u << 2)) || !(m->ctrl2 & (1u << 3)) ||
	    !(m->ctrl2 & (1u << 4)))
		status = ES_LOCAL_QP_INTERNAL; /* not a single signalled meta descriptor */
	/* the destination AH by number in this process's table */
	struct sim_ctx *ctx = q->ctx;
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->nah; i++)
		if (ctx->ahs[i].refs > 0 && ctx->ahs[i].ahn == m->ah) {
			memcpy(w.dst_gid, ctx->ahs[i].gid, 16);
			w.have_ah = 1;
			break;
		}
	pthread_mutex_unlock(&ctx->lock);
	w.dst_qpn = m->dest_qp_num;
	w.qkey = m->qkey;
	if (imm)
		w.imm = m->immediate_data;
	uint32_t caps = sim.caps;
	switch (op) {
	case IO_SEND:
		w.op = imm ? OP_SEND_IMM : OP_SEND;
		if (inl) {
			status = take_inline(q, &w, wqe.data.inline_data, m->length, inline_room);
		} else {
			if (m->length > MAX_SQ_SGE) {
				status = ES_LOCAL_BAD_LENGTH;
				break;
			}
			w.nsge = m->length;
			for (uint32_t i = 0; i < w.nsge; i++) {
				const struct io_tx_buf_desc *b = &wqe.data.sgl[i];
				w.sge[i] = (struct ibv_sge){((uint64_t)b->buf_addr_hi << 32) | b->buf_addr_lo, b->length,
							    b->lkey & RX_LKEY_MASK};
			}
		}
		break;
	case IO_RDMA_READ:
	case IO_RDMA_WRITE: {
		uint32_t cap = op == IO_RDMA_READ ? EFADV_DEVICE_ATTR_CAPS_RDMA_READ : EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE;
		uint64_t qop = op == IO_RDMA_READ ? IBV_QP_EX_WITH_RDMA_READ
			     : imm		  ? IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
						  : IBV_QP_EX_WITH_RDMA_WRITE;
		/* inline data on an RDMA write only on a QP created for it
		 * (EFADV_QP_FLAGS_INLINE_WRITE: 128-byte WQEs); never on a read */
		if (!(caps & cap) || !(q->send_ops & qop) || q->ud ||
		    (inl && (op == IO_RDMA_READ || !q->inline_write))) {
			status = ES_LOCAL_UNSUPPORTED_OP;
			break;
		}
		w.op = op == IO_RDMA_READ ? OP_READ : imm ? OP_WRITE_IMM : OP_WRITE;
		const struct io_remote_mem_addr *r = &wqe.data.rdma_req.remote_mem;
		w.rkey = r->rkey;
		w.raddr = ((uint64_t)r->buf_addr_hi << 32) | r->buf_addr_lo;
		if (inl) { /* rdma-core efa_send_wr_set_inline_data: length in the meta and remote_mem */
			status = r->length != m->length ? ES_LOCAL_BAD_LENGTH
				 : take_inline(q, &w, wqe.data.rdma_req.inline_data, m->length,
					       sizeof(wqe.data.rdma_req.inline_data));
			break;
		}
		if (m->length != 1) {
			status = ES_LOCAL_BAD_LENGTH;
			break;
		}
		const struct io_tx_buf_desc *b = &wqe.data.rdma_req.local_mem[0];
		w.nsge = 1;
		w.sge[0] = (struct ibv_sge){((uint64_t)b->buf_addr_hi << 32) | b->buf_addr_lo, b->length,
					    b->lkey & RX_LKEY_MASK};
		if (r->length != b->length)
			status = ES_LOCAL_BAD_LENGTH;
		break;
	}
	default:
		status = ES_LOCAL_UNSUPPORTED_OP;
	}
	if (status != ES_OK) {
		free(w.inl);
		struct efasim_cqe sc = {.wr_id = w.wr_id, .qp_num = q->qpx.qp_base.qp_num, .qp_slot = q->slot,
					.status = (uint16_t)status, .src_dev = -1, .req64 = (uint8_t)q->req64};
		slog("direct qp %u req %u op %d -> status %d", q->qpx.qp_base.qp_num, m->req_id, op, status);
		cq_push(q->scq->ring, &sc);
		cc_sq(q, wqe_wr_op(m->ctrl1), status);
		return;
	}
	w.tries_left = q->rnr_retry >= 7 ? -1 : q->rnr_retry;
	if (execute(q, &w) == RETRY) {
		struct sim_wr *p = malloc(sizeof(*p));
		if (!p) {
			w.tries_left = 0;
			execute(q, &w);
			return;
		}
		*p = w;
		park(q, p);
	}
}

/* Everything rung on one QP's SQ doorbell; the number of WQEs run. */
static unsigned run_sq(struct sim_qp *q)
{
	uint16_t pc = (uint16_t)__atomic_load_n(q->sq_dbp, __ATOMIC_ACQUIRE);
	unsigned n = 0;
	uint16_t adv = (uint16_t)(pc - q->sq_cc);
	if (adv) { /* one doorbell advance seen: at least one doorbell write */
		q->db_adv++;
		q->db_wqes += adv;
		int b = 0;
		while (b < 6 && (adv >> (b + 1)))
			b++;
		q->db_hist[b]++;
	}
	while (q->sq_cc != pc) {
		uint32_t idx = q->sq_cc & (q->sq_cnt - 1);
		const struct io_tx_wqe *wqe = (const struct io_tx_wqe *)(q->sq_buf + (size_t)idx * q->wqe_size);
		/* the provider's phase starts at 0 and flips at each wrap of the queue */
		unsigned want = (q->sq_cc / q->sq_cnt) & 1;
		if ((wqe->meta.ctrl2 & 1u) != want) {
			slog("direct qp %u: WQE %u has phase %u, expected %u (doorbell %u)", q->qpx.qp_base.qp_num,
			     q->sq_cc, wqe->meta.ctrl2 & 1u, want, pc);
			struct efasim_cqe sc = {.wr_id = wqe_req_id(q, &wqe->meta), .qp_num = q->qpx.qp_base.qp_num,
						.qp_slot = q->slot, .status = ES_LOCAL_QP_INTERNAL, .src_dev = -1,
						.req64 = (uint8_t)q->req64};
			cq_push(q->scq->ring, &sc);
			cc_sq(q, wqe_wr_op(wqe->meta.ctrl1), ES_LOCAL_QP_INTERNAL);
		} else {
			q->hinted += (wqe->meta.ctrl3 & 3u) != 0; /* processing hints, 1:0 */
			run_wqe(q, wqe);
		}
		q->sq_cc++;
		n++;
	}
	return n;
}

static unsigned engine_pass(void)
{
	unsigned done = 0;
	pthread_mutex_lock(&sim.lock);
	for (struct sim_qp *q = sim.qps; q; q = q->next_qp) {
		if (q->dead || !q->sq_buf || q->sq_cc == (uint16_t)__atomic_load_n(q->sq_dbp, __ATOMIC_RELAXED))
			continue;
		q->busy++;
		pthread_mutex_unlock(&sim.lock);
		done += run_sq(q);
		pthread_mutex_lock(&sim.lock);
		if (--q->busy == 0 && q->dead)
			pthread_cond_broadcast(&sim.idle_cond);
	}
	pthread_mutex_unlock(&sim.lock);
	return done;
}

atomic_ullong engine_wakeups, engine_wqes, engine_cpu_ns; /* EFASIM_ENGINE_STATS=1 prints them at exit */

void engine_stats(void)
{
	unsigned long long n = atomic_load(&exec_n), w = atomic_load(&engine_wqes);
	fprintf(stderr,
		"efasim[%d]: direct engine %llu wakeups, %llu WQEs, engine thread CPU %.3f ms (%.0f ns/WQE); "
		"execute %llu WRs, %.0f ns CPU each\n",
		(int)getpid(), (unsigned long long)atomic_load(&engine_wakeups), w, atomic_load(&engine_cpu_ns) / 1e6,
		w ? (double)atomic_load(&engine_cpu_ns) / (double)w : 0.0, n,
		n ? (double)atomic_load(&exec_ns) / (double)n : 0.0);
}

enum { SLEEP_MIN_NS = 2000, SLEEP_MAX_NS = 256000, SLEEP_IDLE_NS = 4000000,
       IDLE_LONG_NS = 1000000000 };

static void *engine_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* short sleeps are short */
	uint64_t last_work = now_ns(), sleep_ns = 0;
	while (!sim_stopping()) {
		atomic_fetch_add_explicit(&engine_wakeups, 1, memory_order_relaxed);
		unsigned n = engine_pass();
		if (sim.stats) {
			struct timespec c;
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
			atomic_store(&engine_cpu_ns, (unsigned long long)c.tv_sec * 1000000000ull + (unsigned long long)c.tv_nsec);
		}
		if (n) {
			atomic_fetch_add_explicit(&engine_wqes, n, memory_order_relaxed);
			last_work = now_ns();
			sleep_ns = 0;
			continue;
		}
		/* a doubling sleep after the last work, a long one once idle for a
		 * second. No spinning: on 2 cores a spinning (or yielding) engine
		 * competes with the application's own CQ polling, and a sleeper that
		 * wakes gets the core back sooner (measured: README) */
		sleep_ns = !sleep_ns ? SLEEP_MIN_NS : sleep_ns * 2 > SLEEP_MAX_NS ? SLEEP_MAX_NS : sleep_ns * 2;
		uint64_t s = now_ns() - last_work > IDLE_LONG_NS ? SLEEP_IDLE_NS : sleep_ns;
		struct timespec ts = {(time_t)(s / 1000000000ull), (long)(s % 1000000000ull)};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* With sim.lock held. */
static void engine_start_locked(void)
{
	if (!sim.engine_thread && sim_thread_start(engine_main, "the direct path's device engine") == 0)
		sim.engine_thread = 1;
}
