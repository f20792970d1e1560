/* efasim: Queue pairs: creation (SRD through efadv, UD through verbs), state changes,
 * destruction (with its completions purged), post_recv. */
#include "sim.h"

static struct ibv_qp *create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr, int srd, uint32_t flags)
{
	struct sim_ctx *c = to_ctx(ctx);
	/* As libefa: efadv_create_qp_ex makes SRD (IBV_QPT_DRIVER) QPs, the plain
	 * ibv_create_qp_ex only UD ones (the provider's FI_EP_DGRAM endpoint). */
	if (attr->qp_type != (srd ? IBV_QPT_DRIVER : IBV_QPT_UD) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	/* rdma-core efa_check_qp_limits: 128-byte WQEs for more inline data than
	 * a 64-byte one holds, or for inline RDMA writes; the LLQ then holds half
	 * as many */
	int inline_write = srd && (flags & EFADV_QP_FLAGS_INLINE_WRITE);
	uint32_t wqe_size = SIM_SQ_WQE_SIZE(attr->cap.max_inline_data, inline_write);
	if (attr->cap.max_send_wr > SIM_SQ_DEPTH(wqe_size) || attr->cap.max_recv_wr > MAX_RQ_WR ||
	    attr->cap.max_send_sge > MAX_SQ_SGE || attr->cap.max_recv_sge > MAX_RQ_SGE ||
	    attr->cap.max_inline_data > sim.inline_ex) {
		errno = EINVAL;
		return NULL;
	}
	if ((flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV) &&
	    !(sim.caps & EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* supported send ops as libefa's efa_check_qp_attr: UD sends only, SRD
	 * also the RDMA the device offers */
	uint64_t ops = (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? attr->send_ops_flags : 0;
	uint64_t supp = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	if (srd && (sim.caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ))
		supp |= IBV_QP_EX_WITH_RDMA_READ;
	if (srd && (sim.caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE))
		supp |= IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (ops & ~supp) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct sim_qp *q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->ctx = c;
	q->owner = sim.pid;
	q->ud = !srd;
	q->req64 = sim.req_id_64; /* every QP (efa_setup_qp), SRD and UD */
	q->wqe_size = wqe_size;
	q->inline_write = inline_write;
	q->pd = container_of(attr->pd, struct sim_pd, pd);
	q->scq = container_of((struct ibv_cq_ex *)attr->send_cq, struct sim_cq, cqx);
	q->rcq = container_of((struct ibv_cq_ex *)attr->recv_cq, struct sim_cq, cqx);
	q->sq_max = attr->cap.max_send_wr ? attr->cap.max_send_wr : 1;
	q->max_inline = attr->cap.max_inline_data;
	q->sig_all = attr->sq_sig_all;
	q->unsolicited = !!(flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV);
	q->send_ops = ops;
	pthread_mutex_lock(&sim.lock);
	snprintf(q->rq_file, sizeof(q->rq_file), "q-%d-%u", (int)sim.pid, ++sim.file_counter);
	pthread_mutex_unlock(&sim.lock);
	q->rq = ring_create(q->rq_file, attr->cap.max_recv_wr ? attr->cap.max_recv_wr : 1, sizeof(struct efasim_rqe),
			    &q->rq_map);
	if (!q->rq) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	/* QP numbers are unique per NIC across processes, and distinct modulo the
	 * table size within it (the provider indexes its table by qpn & 255). */
	struct efasim_registry *r = sim.reg;
	robust_lock(&r->lock);
	registry_gc_locked();
	int slot = -1, used_low[EFASIM_QP_TABLE] = {0};
	for (int i = 0; i < EFASIM_MAX_QPS; i++) {
		if (r->qps[i].used && r->qps[i].dev == c->dev->gdev)
			used_low[r->qps[i].qpn & (EFASIM_QP_TABLE - 1)] = 1;
		else if (!r->qps[i].used && slot < 0)
			slot = i;
	}
	int low = 1;
	while (low < EFASIM_QP_TABLE && used_low[low])
		low++;
	if (slot < 0 || low >= EFASIM_QP_TABLE) {
		pthread_mutex_unlock(&r->lock);
		char p[PATH_MAX + 80];
		snprintf(p, sizeof(p), "%s/%s", sim.dir, q->rq_file);
		unlink(p);
		munmap(q->rq, q->rq_map);
		free(q);
		errno = ENOSPC;
		return NULL;
	}
	struct efasim_dev_ent *d = &r->devs[c->dev->gdev];
	d->next_qp_gen = (d->next_qp_gen + 1) & 0xffff;
	struct efasim_qp_ent *e = &r->qps[slot];
	memset(e, 0, sizeof(*e));
	e->pid = sim.pid;
	e->dev = c->dev->gdev;
	e->qpn = ((d->next_qp_gen & 0xff) << 8) | (uint32_t)low; /* the provider keeps 16 bits */
	e->pd_tag = q->pd->tag;
	e->unsolicited_write_recv = q->unsolicited;
	e->ud = (uint8_t)q->ud;
	snprintf(e->rq_file, sizeof(e->rq_file), "%s", q->rq_file);
	snprintf(e->cq_file, sizeof(e->cq_file), "%s", q->rcq->file);
	e->used = 1;
	pthread_mutex_unlock(&r->lock);
	q->slot = slot;
	/* ib_qp_usecnt_inc: the PD and each CQ (send, recv) are held */
	atomic_fetch_add(&q->pd->usecnt, 1);
	atomic_fetch_add(&q->scq->usecnt, 1);
	atomic_fetch_add(&q->rcq->usecnt, 1);
	struct ibv_qp *qp = &q->qpx.qp_base;
	qp->context = ctx;
	qp->qp_context = attr->qp_context;
	qp->pd = attr->pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->handle = (uint32_t)slot;
	qp->qp_num = e->qpn;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = attr->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	struct ibv_qp_ex *x = &q->qpx;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	q->dv.wr_set_processing_hints = wr_set_processing_hints;
	pthread_mutex_lock(&sim.lock);
	sim.qp_by_slot[slot] = q;
	q->next_qp = sim.qps;
	sim.qps = q;
	pthread_mutex_unlock(&sim.lock);
	return qp;
}

struct ibv_qp *sim_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	return create_qp(ctx, attr, 0, 0);
}

struct ibv_qp *efasim_efadv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
					 struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	if (!efa_attr || inlen < offsetof(struct efadv_qp_init_attr, flags) + sizeof(uint16_t) ||
	    efa_attr->driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* inline RDMA writes need the device's RDMA write and its 128-byte WQEs
	 * (rdma-core offers the flag with RDMA write; a device without wide WQEs,
	 * EFASIM_WIDE_WQE=0, refuses it here) */
	if ((efa_attr->flags & EFADV_QP_FLAGS_INLINE_WRITE) &&
	    (!(sim.caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE) || sim.inline_ex <= sim.prof->inline_size)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct ibv_qp *qp = create_qp(ctx, attr, 1, efa_attr->flags);
	if (qp) {
		/* the service level and hints as the kernel's create_qp command
		 * carries them (rdma-core providers/efa/verbs.c: req.sl =
		 * efa_attr->sl); no range check is modelled (assumed: the device
		 * takes what the kernel passes) */
		struct sim_qp *q = container_of(qp, struct sim_qp, qpx.qp_base);
		if (inlen >= offsetof(struct efadv_qp_init_attr, sl) + sizeof(efa_attr->sl))
			q->sl = efa_attr->sl;
		if (inlen >= offsetof(struct efadv_qp_init_attr, wr_flags) + sizeof(efa_attr->wr_flags))
			q->hints_flag = !!(efa_attr->wr_flags & EFADV_WR_EX_WITH_PROCESSING_HINTS);
	}
	return qp;
}

void qp_stats(const struct sim_qp *q)
{
	if (!sim.qp_stats || (!q->db_adv && !q->v_db))
		return;
	const uint64_t *h = q->db_hist;
	fprintf(stderr,
		"efasim[%d]: qp %u sl %u hints %s: direct %llu WQEs in %llu doorbell advances "
		"(by WQEs 1/2-3/4-7/8-15/16-31/32-63/64+: %llu/%llu/%llu/%llu/%llu/%llu/%llu), %llu "
		"burst-PPS; verbs %llu WRs in %llu doorbells, %llu burst-PPS; %llu RNR\n",
		(int)getpid(), q->qpx.qp_base.qp_num, q->sl, q->hints_flag ? "on" : "off",
		(unsigned long long)q->db_wqes, (unsigned long long)q->db_adv,
		(unsigned long long)h[0], (unsigned long long)h[1], (unsigned long long)h[2],
		(unsigned long long)h[3], (unsigned long long)h[4], (unsigned long long)h[5],
		(unsigned long long)h[6], (unsigned long long)q->hinted,
		(unsigned long long)q->v_wrs, (unsigned long long)q->v_db,
		(unsigned long long)q->v_hinted, (unsigned long long)q->rnr_parked);
}

struct efadv_qp *efasim_efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *qpx)
{
	return &container_of(qpx, struct sim_qp, qpx)->dv;
}

EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return container_of(qp, struct ibv_qp_ex, qp_base);
}

static struct sim_qp *to_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct sim_qp, qpx.qp_base);
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct sim_qp *q = to_qp(qp);
	if (mask & IBV_QP_QKEY) {
		robust_lock(&sim.reg->lock);
		sim.reg->qps[q->slot].qkey = a->qkey;
		pthread_mutex_unlock(&sim.reg->lock);
	}
	if (mask & IBV_QP_RNR_RETRY) {
		if (q->ud || (!(sim.caps & EFADV_DEVICE_ATTR_CAPS_RNR_RETRY) && a->rnr_retry))
			return EINVAL; /* UD has no RNR (the kernel's modify rejects the attribute) */
		q->rnr_retry = a->rnr_retry;
	}
	if (mask & IBV_QP_STATE)
		qp->state = a->qp_state;
	return 0;
}

/* Completions of a destroyed QP leave its CQs at once: libfabric 2.1 and 2.4
 * index their QP table with a CQE's qp_num without a NULL check. */
static void cq_purge(struct sim_cq *c, int slot, uint32_t qpn)
{
	struct efasim_ring_hdr *h = c->ring;
	robust_lock(&h->lock);
	uint64_t w = h->head;
	for (uint64_t r = h->head; r < h->tail; r++) {
		struct efasim_cqe *e = ring_slot(h, r);
		if (e->qp_slot == slot && e->qp_num == qpn)
			continue;
		if (w != r)
			memcpy(ring_slot(h, w), e, sizeof(*e));
		w++;
	}
	h->tail = w;
	pthread_mutex_unlock(&h->lock);
}

/* The direct path's SQ and doorbell page (direct.c efasim_efadv_query_qp_wqs). */
static void sq_unmap(struct sim_qp *q)
{
	if (!q->sq_buf)
		return;
	munmap(q->sq_buf, q->sq_map);
	munmap((void *)q->sq_dbp, (size_t)sysconf(_SC_PAGESIZE));
	q->sq_buf = NULL;
	q->sq_dbp = NULL;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct sim_qp *q = to_qp(qp);
	/* ib_qp_usecnt_dec */
	atomic_fetch_sub(&q->pd->usecnt, 1);
	atomic_fetch_sub(&q->scq->usecnt, 1);
	atomic_fetch_sub(&q->rcq->usecnt, 1);
	if (q->owner != sim.pid) { /* inherited from the parent: the QP is the parent's */
		sq_unmap(q); /* this process's copies of its private mappings */
		for (struct sim_wr *w = q->pending, *n; w; w = n) {
			n = w->next;
			free(w->inl);
			free(w);
		}
		for (size_t i = 0; i < q->nwr; i++)
			free(q->wrs[i].inl);
		free(q->wrs);
		free(q);
		return 0;
	}
	qp_stats(q);
	robust_lock(&sim.reg->lock);
	sim.reg->qps[q->slot].used = 0;
	pthread_mutex_unlock(&sim.reg->lock);
	/* out of the tables, then wait for a retry pass that is executing its WRs */
	pthread_mutex_lock(&sim.lock);
	sim.qp_by_slot[q->slot] = NULL;
	q->dead = 1;
	while (q->busy)
		pthread_cond_wait(&sim.idle_cond, &sim.lock);
	for (struct sim_qp **pp = &sim.qps; *pp; pp = &(*pp)->next_qp)
		if (*pp == q) {
			*pp = q->next_qp;
			break;
		}
	struct sim_wr *pend = q->pending;
	q->pending = NULL;
	pthread_mutex_unlock(&sim.lock);
	char p[PATH_MAX + 80];
	snprintf(p, sizeof(p), "%s/%s", sim.dir, q->rq_file);
	unlink(p);
	munmap(q->rq, q->rq_map);
	/* direct CQs: the provider drops a destroyed QP's CQEs by its generation */
	if (!q->scq->direct)
		cq_purge(q->scq, q->slot, qp->qp_num);
	if (q->rcq != q->scq && !q->rcq->direct)
		cq_purge(q->rcq, q->slot, qp->qp_num);
	sq_unmap(q); /* the engine is done with it: the QP left sim.qps with busy 0 */
	for (struct sim_wr *w = pend, *n; w; w = n) {
		n = w->next;
		atomic_fetch_sub(&npending, 1);
		free(w->inl);
		free(w);
	}
	for (size_t i = 0; i < q->nwr; i++)
		free(q->wrs[i].inl);
	free(q->wrs);
	free(q);
	return 0;
}

EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0; /* SRD: no ordering guarantee for data placement */
}

int sim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct sim_qp *q = to_qp(qp);
	struct efasim_ring_hdr *h = q->rq;
	robust_lock(&h->lock);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > EFASIM_MAX_SGE || h->tail - h->head >= h->size) {
			pthread_mutex_unlock(&h->lock);
			*bad = wr;
			return wr->num_sge > EFASIM_MAX_SGE ? EINVAL : ENOMEM;
		}
		struct efasim_rqe *e = ring_slot(h, h->tail);
		e->wr_id = wr->wr_id;
		e->nsge = (uint32_t)wr->num_sge;
		memcpy(e->sge, wr->sg_list, sizeof(struct ibv_sge) * (size_t)wr->num_sge);
		h->tail++;
	}
	pthread_mutex_unlock(&h->lock);
	return 0;
}

