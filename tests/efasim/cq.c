/* efasim: Completion queues: extended polling, the old poll_cq, completion channels;
 * CQs in external (GPU) memory (efadv_create_cq with EXT_MEM_DMABUF). */
#include "sim.h"

static int cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr);
static int cq_next_poll(struct ibv_cq_ex *cqx);
static void cq_end_poll(struct ibv_cq_ex *cqx);
static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *cqx);
static uint32_t cq_read_vendor_err(struct ibv_cq_ex *cqx);
static uint32_t cq_read_byte_len(struct ibv_cq_ex *cqx);
static __be32 cq_read_imm_data(struct ibv_cq_ex *cqx);
static uint32_t cq_read_qp_num(struct ibv_cq_ex *cqx);
static uint32_t cq_read_src_qp(struct ibv_cq_ex *cqx);
static unsigned int cq_read_wc_flags(struct ibv_cq_ex *cqx);
static uint32_t cq_read_slid(struct ibv_cq_ex *cqx);
static uint8_t cq_read_sl(struct ibv_cq_ex *cqx);
static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *cqx);
static int cq_wc_read_sgid(struct efadv_cq *dv, union ibv_gid *sgid);
static bool cq_wc_is_unsolicited(struct efadv_cq *dv);

/* A CQ ring in external memory: where its entries are (cq.c's
 * efasim_efadv_create_cq resolved the dma-buf). */
struct ext_ring {
	uint32_t entries;
	uint64_t dev;            /* device address of entry 0 */
	uint64_t cpu;            /* the caller's buffer pointer, may be 0 */
	struct efasim_mem_info mk;
};

static struct ibv_cq_ex *create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr, uint64_t efa_wc_flags,
				   const struct ext_ring *ext)
{
	const uint64_t supported = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
				   IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				   IBV_WC_EX_WITH_DLID_PATH_BITS;
	if (attr->wc_flags & ~supported) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((efa_wc_flags & EFADV_WC_EX_WITH_SGID) && !(sim.caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* rdma-core 64 create_cq (providers/efa/verbs.c): attribute masks and
	 * flags beyond PD|FLAGS and SINGLE_THREADED are refused before the kernel */
	if ((attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_PD | IBV_CQ_INIT_ATTR_MASK_FLAGS)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->cqe || attr->cqe > sim.max_cqe) {
		errno = EINVAL;
		return NULL;
	}
	struct sim_cq *cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->ctx = to_ctx(ctx);
	cq->owner = sim.pid;
	pthread_mutex_lock(&sim.lock);
	snprintf(cq->file, sizeof(cq->file), "c-%d-%u", (int)sim.pid, ++sim.file_counter);
	pthread_mutex_unlock(&sim.lock);
	cq->ring = ext ? ring_create_hdr(cq->file, ext->entries, DIRECT_CQE_SIZE, &cq->map_size)
		       : ring_create(cq->file, attr->cqe, sizeof(struct efasim_cqe), &cq->map_size);
	if (!cq->ring) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->ring->owner_handle = (uint64_t)(uintptr_t)cq;
	cq->ring->dev = cq->ctx->dev->gdev;
	if (ext) {
		/* the device's format from birth, no doorbell (ring->db is never
		 * handed out, so no completion event is ever due) */
		cq->ring->ext_dev = ext->dev;
		cq->ring->ext_cpu = ext->cpu;
		cq->ring->ext_mk = ext->mk;
		cq->ring->direct = 1;
		cq->direct = cq->ext = 1;
	}
	if (attr->channel)
		snprintf(cq->ring->chan_fifo, sizeof(cq->ring->chan_fifo), "%s/h-%d-%d", sim.dir,
			 (int)container_of(attr->channel, struct sim_chan, ch)->owner, attr->channel->fd);
	struct ibv_cq_ex *x = &cq->cqx;
	x->context = ctx;
	x->channel = attr->channel;
	x->cq_context = attr->cq_context;
	x->cqe = (int)cq->ring->size;
	pthread_mutex_init(&x->mutex, NULL);
	pthread_cond_init(&x->cond, NULL);
	x->start_poll = cq_start_poll;
	x->next_poll = cq_next_poll;
	x->end_poll = cq_end_poll;
	x->read_opcode = cq_read_opcode;
	x->read_vendor_err = cq_read_vendor_err;
	x->read_byte_len = cq_read_byte_len;
	x->read_imm_data = cq_read_imm_data;
	x->read_qp_num = cq_read_qp_num;
	x->read_src_qp = cq_read_src_qp;
	x->read_wc_flags = cq_read_wc_flags;
	x->read_slid = cq_read_slid;
	x->read_sl = cq_read_sl;
	x->read_dlid_path_bits = cq_read_dlid_path_bits;
	cq->dv.wc_read_sgid = cq_wc_read_sgid;
	cq->dv.wc_is_unsolicited = cq_wc_is_unsolicited;
	if (attr->channel)
		attr->channel->refcnt++;
	return x;
}

struct ibv_cq_ex *sim_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	return create_cq(ctx, attr, 0, NULL);
}

/* rdma-core 64's efadv_create_cq, then (EXT_MEM_DMABUF) the kernel's CQ with
 * external memory: the dma-buf imported as ib_umem_dmabuf_get_pinned does
 * (amzn-drivers efa_create_cq_umem_backport), then efa_create_cq_umem's checks
 * (attr->flags EOPNOTSUPP; entries = cqe rounded up to a power of two as
 * rdma-core does, with no minimum, above the device's maximum EINVAL; a umem
 * shorter than PAGE_ALIGN(32 * entries) EINVAL, "External memory too small").
 * A driver without the capability (EFASIM_EXT_CQ=0) refuses the ioctl's
 * buffer attributes: EOPNOTSUPP. Then "Non contiguous CQ unsupported" (the
 * kernel's ib_umem_is_contiguous), modelled as a ring crossing a 2 MiB page
 * of GPU memory. Last, efasim's own step: which device memory
 * the dma-buf is, through an MR of it this process registered (memkind.c);
 * without one EOPNOTSUPP and a log line. */
#define CQ_GPU_PAGE (2ull << 20)

struct ibv_cq_ex *efasim_efadv_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
					 struct efadv_cq_init_attr *efa_attr, uint32_t inlen)
{
	if (!efasim_is_sim_context(ctx)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* vext_field_avail(wc_flags), comp_mask, an extension not cleared */
	if (!efa_attr || inlen < offsetof(struct efadv_cq_init_attr, wc_flags) + sizeof(efa_attr->wc_flags) ||
	    efa_attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	for (uint32_t i = sizeof(*efa_attr); i < inlen; i++)
		if (((const uint8_t *)efa_attr)[i]) {
			errno = EINVAL;
			return NULL;
		}
	uint64_t supp = 0;
	if (sim.caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID)
		supp |= EFADV_WC_EX_WITH_SGID;
	if (sim.caps & EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV)
		supp |= EFADV_WC_EX_WITH_IS_UNSOLICITED;
	if (efa_attr->wc_flags & ~supp) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct efadv_cq_init_attr a = {0};
	memcpy(&a, efa_attr, inlen < sizeof(a) ? inlen : sizeof(a));
	if (!(a.flags & EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF))
		return create_cq(ctx, attr, a.wc_flags, NULL);

	/* rdma-core's create_cq checks come before the kernel's */
	if ((attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_PD | IBV_CQ_INIT_ATTR_MASK_FLAGS)) ||
	    (attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(sim.caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF)) {
		slog("ext-mem CQ: the driver has no CQ with external memory (EFASIM_EXT_CQ=0): EOPNOTSUPP");
		errno = EOPNOTSUPP;
		return NULL;
	}
	const uint64_t off = a.ext_mem_dmabuf.offset, len = a.ext_mem_dmabuf.length;
	const int fd = a.ext_mem_dmabuf.fd;
	int e = mk_dmabuf_check(fd, off, len);
	if (e) {
		slog("ext-mem CQ: dma-buf fd %d, offset %llu, length %llu: %s", fd, (unsigned long long)off,
		     (unsigned long long)len, e == EBADF ? "no such fd" : "not a dma-buf, or the range runs past it");
		errno = e;
		return NULL;
	}
	uint32_t n = 1;
	while (attr->cqe && n < attr->cqe && n <= sim.max_cqe)
		n <<= 1;
	if (!attr->cqe || n > sim.max_cqe) {
		slog("ext-mem CQ: %u entries (max_cqe %u): EINVAL", attr->cqe, (unsigned)sim.max_cqe);
		errno = EINVAL;
		return NULL;
	}
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t need = ((uint64_t)n * DIRECT_CQE_SIZE + (uint64_t)pg - 1) & ~((uint64_t)pg - 1);
	if (len < need) {
		slog("ext-mem CQ: External memory too small: %llu bytes for %u entries (PAGE_ALIGN(32 * %u) = %llu): EINVAL",
		     (unsigned long long)len, n, n, (unsigned long long)need);
		errno = EINVAL;
		return NULL;
	}
	/* efa_create_cq_umem: !ib_umem_is_contiguous(umem) -> "Non contiguous CQ
	 * unsupported", EINVAL. GPU memory is physically contiguous within a 2 MiB
	 * page; a ring crossing a 2 MiB boundary of device addresses may be split
	 * on the GPU, and efasim refuses it (EFASIM_CQ_CONTIG=0: never checked) */
	uint64_t dva = 0;
	if (sim.cq_contig && !mk_dmabuf_devaddr(fd, off, &dva) && len &&
	    dva / CQ_GPU_PAGE != (dva + len - 1) / CQ_GPU_PAGE) {
		slog("ext-mem CQ: Non contiguous CQ unsupported: device address %#llx + %llu bytes crosses a "
		     "2 MiB GPU page: EINVAL",
		     (unsigned long long)dva, (unsigned long long)len);
		errno = EINVAL;
		return NULL;
	}
	struct ext_ring x = {.entries = n, .cpu = (uint64_t)(uintptr_t)a.ext_mem_dmabuf.buffer};
	e = mk_dmabuf_resolve(fd, off, len, &x.dev, &x.mk);
	if (e) {
		errno = e;
		return NULL;
	}
	struct ibv_cq_init_attr_ex ca = *attr;
	ca.cqe = n;
	struct ibv_cq_ex *cqx = create_cq(ctx, &ca, a.wc_flags, &x);
	if (cqx) {
		attr->cqe = n; /* rdma-core rounds the caller's attr in place */
		slog("ext-mem CQ %s: %u entries of %u B at device address %#llx (dma-buf fd %d + %llu, %llu B), "
		     "buffer %p, no doorbell",
		     container_of(cqx, struct sim_cq, cqx)->file, n, DIRECT_CQE_SIZE, (unsigned long long)x.dev, fd,
		     (unsigned long long)off, (unsigned long long)len, (void *)a.ext_mem_dmabuf.buffer);
	}
	return cqx;
}

struct efadv_cq *efasim_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cqx)
{
	return &container_of(cqx, struct sim_cq, cqx)->dv;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct sim_cq *c = container_of((struct ibv_cq_ex *)cq, struct sim_cq, cqx);
	if (atomic_load(&c->usecnt)) {
		ebusy_note("ibv_destroy_cq", "QPs bound", atomic_load(&c->usecnt));
		return EBUSY; /* ib_destroy_cq_user */
	}
	if (c->owner != sim.pid) { /* inherited: the ring is the parent's */
		free(c);
		return 0;
	}
	char path[PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s", sim.dir, c->file);
	unlink(path);
	munmap(c->ring, c->map_size);
	if (c->cqx.channel)
		c->cqx.channel->refcnt--;
	free(c);
	return 0;
}

atomic_int npending;

static void qp_sq_done(const struct efasim_cqe *e)
{
	if (e->recv_side || e->qp_slot < 0 || e->qp_slot >= EFASIM_MAX_QPS)
		return;
	pthread_mutex_lock(&sim.lock);
	struct sim_qp *q = sim.qp_by_slot[e->qp_slot];
	if (q) {
		unsigned n = atomic_load(&q->sq_out);
		while (n && !atomic_compare_exchange_weak(&q->sq_out, &n, n - 1))
			;
	}
	pthread_mutex_unlock(&sim.lock);
}

static int qp_alive_here(const struct efasim_cqe *e)
{
	if (e->qp_slot < 0 || e->qp_slot >= EFASIM_MAX_QPS)
		return 0;
	pthread_mutex_lock(&sim.lock);
	struct sim_qp *q = sim.qp_by_slot[e->qp_slot];
	int ok = q && q->qpx.qp_base.qp_num == e->qp_num;
	pthread_mutex_unlock(&sim.lock);
	return ok;
}

static int cq_pop(struct sim_cq *c)
{
	struct efasim_ring_hdr *h = c->ring;
	if (h->head == __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE))
		return ENOENT;
	robust_lock(&h->lock);
	if (h->head == h->tail) {
		pthread_mutex_unlock(&h->lock);
		return ENOENT;
	}
	memcpy(&c->cur, ring_slot(h, h->head), sizeof(c->cur));
	h->head++;
	pthread_mutex_unlock(&h->lock);
	/* As libefa: a completion of a QP that no longer exists is consumed and
	 * reported as EINVAL (the provider drains its CQ that way after destroying
	 * a QP). */
	if (!qp_alive_here(&c->cur))
		return EINVAL;
	qp_sq_done(&c->cur);
	c->cqx.wr_id = c->cur.wr_id;
	switch (c->cur.status) {
	case ES_OK: c->cqx.status = IBV_WC_SUCCESS; break;
	case ES_FLUSHED: c->cqx.status = IBV_WC_WR_FLUSH_ERR; break;
	case ES_LOCAL_QP_INTERNAL:
	case ES_LOCAL_UNSUPPORTED_OP:
	case ES_LOCAL_INVALID_AH: c->cqx.status = IBV_WC_LOC_QP_OP_ERR; break;
	case ES_LOCAL_INVALID_LKEY: c->cqx.status = IBV_WC_LOC_PROT_ERR; break;
	case ES_LOCAL_BAD_LENGTH: c->cqx.status = IBV_WC_LOC_LEN_ERR; break;
	case ES_REMOTE_ABORT: c->cqx.status = IBV_WC_REM_ABORT_ERR; break;
	case ES_REMOTE_RNR: c->cqx.status = IBV_WC_RNR_RETRY_EXC_ERR; break;
	case ES_REMOTE_BAD_DEST_QPN: c->cqx.status = IBV_WC_REM_INV_RD_REQ_ERR; break;
	case ES_REMOTE_BAD_STATUS: c->cqx.status = IBV_WC_BAD_RESP_ERR; break;
	case ES_REMOTE_BAD_LENGTH: c->cqx.status = IBV_WC_REM_INV_REQ_ERR; break;
	case ES_LOCAL_UNRESP_REMOTE:
	case ES_LOCAL_UNREACH_REMOTE: c->cqx.status = IBV_WC_RESP_TIMEOUT_ERR; break;
	case ES_REMOTE_BAD_ADDRESS: c->cqx.status = IBV_WC_REM_ACCESS_ERR; break;
	case ES_REMOTE_UNKNOWN_PEER: c->cqx.status = IBV_WC_REM_OP_ERR; break;
	default: c->cqx.status = IBV_WC_GENERAL_ERR; break;
	}
	return 0;
}

/* The verbs path has nothing to read on a CQ in external memory: its
 * entries are GPU memory the provider (or the GPU) parses itself. rdma-core
 * 64 would walk sub-CQs it never initialised when the buffer is NULL
 * (create_cq): efasim answers ENOENT and says so once per CQ. */
static int cq_ext_verbs_poll(struct sim_cq *c)
{
	if (!c->ext)
		return 0;
	if (!atomic_exchange(&c->ext_poll_logged, 1))
		slog("ext-mem CQ %s polled through the verbs API: its completions are in GPU memory, ENOENT", c->file);
	return 1;
}

static int cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	(void)attr;
	struct sim_cq *c = container_of(cqx, struct sim_cq, cqx);
	if (cq_ext_verbs_poll(c))
		return ENOENT;
	progress_pending();
	return cq_pop(c);
}

static int cq_next_poll(struct ibv_cq_ex *cqx)
{
	struct sim_cq *c = container_of(cqx, struct sim_cq, cqx);
	if (cq_ext_verbs_poll(c))
		return ENOENT;
	return cq_pop(c);
}

static void cq_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;
}

#define CUR(x) (container_of(x, struct sim_cq, cqx)->cur)

static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *x)
{
	/* As libefa: a send-queue completion is RDMA_WRITE or SEND (RDMA read too). */
	if (!CUR(x).recv_side)
		return CUR(x).rdma_write ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
	return CUR(x).rdma_write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
}
static uint32_t cq_read_vendor_err(struct ibv_cq_ex *x) { return CUR(x).status; }
static uint32_t cq_read_byte_len(struct ibv_cq_ex *x) { return CUR(x).recv_side ? CUR(x).byte_len : 0; }
static __be32 cq_read_imm_data(struct ibv_cq_ex *x) { return htobe32(CUR(x).imm); }
static uint32_t cq_read_qp_num(struct ibv_cq_ex *x) { return CUR(x).qp_num; }
static uint32_t cq_read_src_qp(struct ibv_cq_ex *x) { return CUR(x).src_qp; }
static unsigned int cq_read_wc_flags(struct ibv_cq_ex *x) { return CUR(x).has_imm ? IBV_WC_WITH_IMM : 0; }
static uint8_t cq_read_sl(struct ibv_cq_ex *x) { (void)x; return 0; }
static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *x) { (void)x; return 0; }

/* The sender's AH number in the receiver's table, or 0xFFFF when it has none
 * (then the SGID is readable: the RDM handshake identifies peers by it). */
static uint32_t cq_read_slid(struct ibv_cq_ex *x)
{
	struct sim_cq *c = container_of(x, struct sim_cq, cqx);
	struct sim_ctx *ctx = c->ctx;
	uint32_t ahn = EFASIM_UNKNOWN_AH;
	if (!c->cur.recv_side)
		return ahn;
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->nah; i++)
		if (ctx->ahs[i].refs > 0 && !memcmp(ctx->ahs[i].gid, c->cur.src_gid, 16))
			ahn = ctx->ahs[i].ahn;
	pthread_mutex_unlock(&ctx->lock);
	return ahn;
}

static int cq_wc_read_sgid(struct efadv_cq *dv, union ibv_gid *sgid)
{
	struct sim_cq *c = container_of(dv, struct sim_cq, dv);
	if (cq_read_slid(&c->cqx) != EFASIM_UNKNOWN_AH)
		return -ENOENT;
	memcpy(sgid->raw, c->cur.src_gid, 16);
	return 0;
}

static bool cq_wc_is_unsolicited(struct efadv_cq *dv)
{
	return container_of(dv, struct sim_cq, dv)->cur.unsolicited;
}

int sim_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct ibv_cq_ex *x = (struct ibv_cq_ex *)cq;
	struct sim_cq *c = container_of(x, struct sim_cq, cqx);
	int got = 0;
	if (cq_ext_verbs_poll(c))
		return 0;
	progress_pending();
	while (got < n && cq_pop(c) == 0) {
		struct ibv_wc *w = &wc[got++];
		memset(w, 0, sizeof(*w));
		w->wr_id = x->wr_id;
		w->status = x->status;
		w->opcode = cq_read_opcode(x);
		w->vendor_err = c->cur.status;
		w->byte_len = cq_read_byte_len(x);
		w->imm_data = cq_read_imm_data(x);
		w->qp_num = c->cur.qp_num;
		w->src_qp = c->cur.src_qp;
		w->wc_flags = cq_read_wc_flags(x);
		w->slid = (uint16_t)cq_read_slid(x);
	}
	return got;
}

/* Completion channels: a FIFO per channel; the device writes the CQ's handle
 * into it when an armed CQ gets a completion. */
EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct sim_chan *sc = calloc(1, sizeof(*sc));
	if (!sc) {
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_comp_channel *ch = &sc->ch;
	sc->owner = sim.pid;
	static atomic_int next_fifo;
	char path[PATH_MAX + 80];
	int id = atomic_fetch_add(&next_fifo, 1);
	snprintf(path, sizeof(path), "%s/h-%d-x%d", sim.dir, (int)sim.pid, id);
	unlink(path);
	if (mkfifo(path, 0600)) {
		free(sc);
		return NULL;
	}
	ch->fd = open(path, O_RDWR | O_CLOEXEC);
	if (ch->fd < 0) {
		unlink(path);
		free(sc);
		return NULL;
	}
	/* the CQ finds the FIFO by the channel's fd number */
	char byfd[PATH_MAX + 80];
	snprintf(byfd, sizeof(byfd), "%s/h-%d-%d", sim.dir, (int)sim.pid, ch->fd);
	unlink(byfd);
	if (rename(path, byfd)) {
		close(ch->fd);
		unlink(path);
		free(sc);
		return NULL;
	}
	ch->context = ctx;
	return ch;
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct sim_chan *sc = container_of(ch, struct sim_chan, ch);
	if (ch->refcnt)
		return EBUSY;
	if (sc->owner == sim.pid) { /* an inherited channel's FIFO is the parent's */
		char path[PATH_MAX + 80];
		snprintf(path, sizeof(path), "%s/h-%d-%d", sim.dir, (int)sc->owner, ch->fd);
		unlink(path);
	}
	close(ch->fd);
	free(sc);
	return 0;
}

int sim_req_notify(struct ibv_cq *cq, int solicited)
{
	(void)solicited;
	struct sim_cq *c = container_of((struct ibv_cq_ex *)cq, struct sim_cq, cqx);
	if (c->ext) {
		/* no CQ doorbell (the kernel maps none for external memory); rdma-core
		 * 64 would store to a NULL doorbell here */
		slog("ext-mem CQ %s: ibv_req_notify_cq: it has no doorbell and cannot be armed: EOPNOTSUPP", c->file);
		return EOPNOTSUPP;
	}
	robust_lock(&c->ring->lock);
	c->ring->armed = 1;
	pthread_mutex_unlock(&c->ring->lock);
	return 0;
}

EXPORT int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	uint64_t handle;
	ssize_t n = read(ch->fd, &handle, sizeof(handle));
	if (n != sizeof(handle))
		return -1;
	struct sim_cq *c = (struct sim_cq *)(uintptr_t)handle;
	*cq = (struct ibv_cq *)&c->cqx;
	*cq_context = c->cqx.cq_context;
	return 0;
}

EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct sim_cq *c = container_of((struct ibv_cq_ex *)cq, struct sim_cq, cqx);
	c->events_acked += nevents;
}

