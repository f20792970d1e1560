/* efasim: The data path: work requests built between wr_start and wr_complete, and
 * their execution as the device would (checks, byte moves, both completions). */
#include "sim.h"

static struct sim_wr *cur_wr(struct sim_qp *q)
{
	return q->nwr ? &q->wrs[q->nwr - 1] : NULL;
}

void wr_start(struct ibv_qp_ex *qpx)
{
	struct sim_qp *q = container_of(qpx, struct sim_qp, qpx);
	q->in_batch = 1;
	q->batch_err = 0;
	q->nwr = 0;
}

static struct sim_wr *new_wr(struct sim_qp *q, int op)
{
	struct ibv_qp_ex *x = &q->qpx;
	if (!q->in_batch || q->batch_err)
		return NULL;
	if (x->qp_base.state != IBV_QPS_RTS && x->qp_base.state != IBV_QPS_SQD) {
		q->batch_err = EINVAL;
		return NULL;
	}
	if (!(x->wr_flags & IBV_SEND_SIGNALED) && !q->sig_all) {
		q->batch_err = EINVAL; /* EFA: non-signaled WRs not supported */
		return NULL;
	}
	if (x->wr_flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_INLINE)) {
		q->batch_err = EINVAL;
		return NULL;
	}
	if (atomic_load_explicit(&q->sq_out, memory_order_relaxed) + q->nwr >= q->sq_max) {
		q->batch_err = ENOMEM; /* SQ full */
		return NULL;
	}
	if (q->nwr == q->cap) {
		size_t n = q->cap ? 2 * q->cap : 16;
		void *p = realloc(q->wrs, n * sizeof(*q->wrs));
		if (!p) {
			q->batch_err = ENOMEM;
			return NULL;
		}
		q->wrs = p;
		q->cap = n;
	}
	struct sim_wr *w = &q->wrs[q->nwr++];
	memset(w, 0, sizeof(*w));
	w->op = op;
	w->wr_id = x->wr_id;
	w->flags = x->wr_flags;
	return w;
}

void wr_send(struct ibv_qp_ex *x)
{
	new_wr(container_of(x, struct sim_qp, qpx), OP_SEND);
}

void wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct sim_wr *w = new_wr(container_of(x, struct sim_qp, qpx), OP_SEND_IMM);
	if (w)
		w->imm = be32toh(imm);
}

static int rdma_allowed(struct sim_qp *q, uint32_t cap, uint64_t op)
{
	if (!(sim.caps & cap) || !(q->send_ops & op)) {
		q->batch_err = EOPNOTSUPP;
		return 0;
	}
	return 1;
}

void wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	if (!rdma_allowed(q, EFADV_DEVICE_ATTR_CAPS_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ))
		return;
	struct sim_wr *w = new_wr(q, OP_READ);
	if (w) {
		w->rkey = rkey;
		w->raddr = raddr;
	}
}

void wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	if (!rdma_allowed(q, EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE))
		return;
	struct sim_wr *w = new_wr(q, OP_WRITE);
	if (w) {
		w->rkey = rkey;
		w->raddr = raddr;
	}
}

void wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	if (!rdma_allowed(q, EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM))
		return;
	struct sim_wr *w = new_wr(q, OP_WRITE_IMM);
	if (w) {
		w->rkey = rkey;
		w->raddr = raddr;
		w->imm = be32toh(imm);
	}
}

void wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct sim_wr *w = cur_wr(container_of(x, struct sim_qp, qpx));
	if (!w)
		return;
	memcpy(w->dst_gid, container_of(ah, struct sim_ah, ah)->gid, 16);
	w->dst_qpn = qpn;
	w->qkey = qkey;
	w->have_ah = 1;
}

void wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *l)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	struct sim_wr *w = cur_wr(q);
	if (!w)
		return;
	if (n > MAX_SQ_SGE) {
		q->batch_err = EINVAL;
		return;
	}
	w->nsge = (uint32_t)n;
	memcpy(w->sge, l, n * sizeof(*l));
}

void wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge s = {.addr = addr, .length = len, .lkey = lkey};
	wr_set_sge_list(x, 1, &s);
}

/* Inline data is copied at post time: the buffer may be reused at once. */
void wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *l)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	struct sim_wr *w = cur_wr(q);
	if (!w)
		return;
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += l[i].length;
	if (total > q->max_inline || total > sim.inline_ex) {
		q->batch_err = EINVAL;
		return;
	}
	/* rdma-core: inline data on an RDMA write only on a QP created with
	 * EFADV_QP_FLAGS_INLINE_WRITE, never on a read ("inline op_type isn't
	 * supported") */
	if (w->op == OP_READ || ((w->op == OP_WRITE || w->op == OP_WRITE_IMM) && !q->inline_write)) {
		q->batch_err = EINVAL;
		return;
	}
	w->inl = malloc(total ? total : 1);
	if (!w->inl) {
		q->batch_err = ENOMEM;
		return;
	}
	w->inl_len = total;
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		struct mk_ref d = {MK_HOST, sim.pid, (uintptr_t)(w->inl + off), -1, NULL};
		struct mk_ref src = {mk_kind_local(l[i].addr), sim.pid, (uintptr_t)l[i].addr, -1, NULL};
		if (mk_copy(d, src, l[i].length)) {
			q->batch_err = EFAULT;
			return;
		}
		off += l[i].length;
	}
	w->nsge = 0;
}

void wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t len)
{
	struct ibv_data_buf b = {.addr = addr, .length = len};
	wr_set_inline_data_list(x, 1, &b);
}

void wr_set_processing_hints(struct efadv_qp *dv, uint32_t hints)
{
	/* a performance hint: counted (qp_stats), the WR runs as any other */
	struct sim_qp *q = container_of(dv, struct sim_qp, dv);
	q->v_hinted += (hints & EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE) != 0;
}

void wr_abort(struct ibv_qp_ex *x)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	for (size_t i = 0; i < q->nwr; i++)
		free(q->wrs[i].inl);
	q->nwr = 0;
	q->in_batch = 0;
}

/* Local SGEs must be covered by this process's MRs on this NIC and PD. */
static int local_iov(struct sim_qp *q, const struct sim_wr *w, struct sim_seg *seg, size_t *total)
{
	*total = 0;
	if (w->inl) {
		seg[0] = (struct sim_seg){(uintptr_t)w->inl, w->inl_len, MK_HOST, -1};
		*total = w->inl_len;
		return 1;
	}
	struct efasim_registry *r = sim.reg;
	for (uint32_t i = 0; i < w->nsge; i++) {
		const struct ibv_sge *s = &w->sge[i];
		const struct efasim_mr_ent *m = &r->mrs[s->lkey & 0xffff];
		if (!m->used || m->key != s->lkey || m->pid != sim.pid || m->dev != q->ctx->dev->gdev ||
		    m->pd_tag != q->pd->tag || s->addr < m->iova || s->addr + s->length > m->iova + m->len)
			return -1;
		seg[i] = (struct sim_seg){m->va + (s->addr - m->iova), s->length, m->mk.kind, (int)(s->lkey & 0xffff)};
		*total += s->length;
	}
	return (int)w->nsge;
}

/* Move bytes between l (this process) and r (process pid), to_remote: l -> r.
 * Host memory of another process in one process_vm_readv/writev; anything
 * else piece by piece through mk_copy (memkind.c). */
static ssize_t move_bytes(pid_t pid, int to_remote, const struct sim_seg *l, int nl, const struct sim_seg *r,
			  int nr)
{
	int host = pid != sim.pid;
	for (int i = 0; i < nl; i++)
		host &= l[i].kind == MK_HOST;
	for (int i = 0; i < nr; i++)
		host &= r[i].kind == MK_HOST;
	if (host) {
		struct iovec li[EFASIM_MAX_SGE + 1], ri[EFASIM_MAX_SGE + 1];
		if (nl > EFASIM_MAX_SGE + 1 || nr > EFASIM_MAX_SGE + 1)
			return -1;
		for (int i = 0; i < nl; i++)
			li[i] = (struct iovec){(void *)(uintptr_t)l[i].addr, l[i].len};
		for (int i = 0; i < nr; i++)
			ri[i] = (struct iovec){(void *)(uintptr_t)r[i].addr, r[i].len};
		return to_remote ? process_vm_writev(pid, li, (unsigned long)nl, ri, (unsigned long)nr, 0)
				 : process_vm_readv(pid, li, (unsigned long)nl, ri, (unsigned long)nr, 0);
	}
	size_t li = 0, lo = 0, ri = 0, ro = 0, done = 0;
	while ((int)li < nl && (int)ri < nr) {
		size_t n = l[li].len - lo;
		if (r[ri].len - ro < n)
			n = r[ri].len - ro;
		struct mk_ref a = {l[li].kind, sim.pid, l[li].addr + lo, l[li].mr, NULL};
		struct mk_ref b = {r[ri].kind, pid, r[ri].addr + ro, r[ri].mr, NULL};
		if (n && (to_remote ? mk_copy(b, a, n) : mk_copy(a, b, n)))
			return done ? (ssize_t)done : -1;
		done += n;
		lo += n;
		ro += n;
		if (lo == l[li].len) {
			li++;
			lo = 0;
		}
		if (ro == r[ri].len) {
			ri++;
			ro = 0;
		}
	}
	return (ssize_t)done;
}

/* A multi-MTU write placed in reverse MTU order (the default; EFASIM_REORDER=0
 * places it in address order): SRD delivers the packets of one write in any
 * order and the device places each where it lands, so the last byte can be
 * there before the rest (libfabric 2.6.0 prov/efa/docs/efa_rdm_protocol_v4.md
 * 1.1 and 4.x: no ordering guarantee, "does not support ordered write
 * operation"). Last-first is the harshest order for a poller of the last
 * byte. Both paths come here: the verbs path's ibv_wr_* and the direct
 * engine's parsed WQEs (direct.c) go through execute(). */
static ssize_t write_reordered(pid_t pid, const struct sim_seg *l, int nl, const struct sim_seg *dst, size_t total)
{
	char *tmp = malloc(total);
	if (!tmp)
		return -1;
	struct sim_seg t = {(uintptr_t)tmp, total, MK_HOST, -1};
	if (move_bytes(sim.pid, 0, &t, 1, l, nl) != (ssize_t)total) { /* gather the source */
		free(tmp);
		return -1;
	}
	size_t mtu = sim.prof->max_msg_sz;
	size_t nchunks = (total + mtu - 1) / mtu;
	for (size_t c = nchunks; c-- > 0;) {
		size_t o = c * mtu, n = total - o < mtu ? total - o : mtu;
		struct sim_seg a = {(uintptr_t)(tmp + o), n, MK_HOST, -1}, b = {dst->addr + o, n, dst->kind, dst->mr};
		if (move_bytes(pid, 1, &a, 1, &b, 1) != (ssize_t)n) {
			free(tmp);
			return -1;
		}
	}
	free(tmp);
	return (ssize_t)total;
}

static void throttle(int src_dev, int dst_dev, size_t bytes)
{
	struct efasim_dev_ent *s = &sim.reg->devs[src_dev], *d = &sim.reg->devs[dst_dev];
	uint64_t ns = 1000ull * (s->delay_us + d->delay_us);
	uint32_t rate = s->rate_MBps;
	if (d->rate_MBps && (!rate || d->rate_MBps < rate))
		rate = d->rate_MBps;
	if (rate)
		ns += (uint64_t)bytes * 1000ull / rate;
	if (!ns)
		return;
	/* A slow NIC costs its host no CPU: sleep through most of the wait (a
	 * spinning simulator would slow every other process sharing the cores,
	 * and with them the figures of NICs that are not slow), spin the end. */
	uint64_t end = now_ns() + ns;
	if (ns > 60000) {
		struct timespec ts = {(time_t)((ns - 50000) / 1000000000ull),
				      (long)((ns - 50000) % 1000000000ull)};
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	while (now_ns() < end)
		;
}

/* Pop a receive WQE of the target QP; 0 = none posted (RNR). */
static int rq_pop(struct efasim_ring_hdr *h, struct efasim_rqe *out)
{
	robust_lock(&h->lock);
	if (h->direct) {
		int got = rq_pop_direct(h, out);
		pthread_mutex_unlock(&h->lock);
		return got;
	}
	if (h->head == h->tail) {
		pthread_mutex_unlock(&h->lock);
		return 0;
	}
	memcpy(out, ring_slot(h, h->head), sizeof(*out));
	h->head++;
	pthread_mutex_unlock(&h->lock);
	return 1;
}

enum { GRH_LEN = 40 }; /* UD: the receive buffer starts with the packet's GRH */

/* A receive WQE's buffers, checked against the receiver's MRs as its NIC
 * would; nonzero: a bad lkey. */
static int rqe_iov(const struct efasim_rqe *rqe, const struct efasim_qp_ent *tq, int dst_dev, struct sim_seg *riov,
		   size_t *cap)
{
	struct efasim_registry *r = sim.reg;
	int bad = 0;
	*cap = 0;
	robust_lock(&r->lock);
	for (uint32_t i = 0; i < rqe->nsge; i++) {
		const struct ibv_sge *s = &rqe->sge[i];
		const struct efasim_mr_ent *m = &r->mrs[s->lkey & 0xffff];
		if (!m->used || m->key != s->lkey || m->pid != tq->pid || m->dev != dst_dev || m->pd_tag != tq->pd_tag ||
		    s->addr < m->iova || s->addr + s->length > m->iova + m->len) {
			bad = 1;
			break;
		}
		riov[i] = (struct sim_seg){m->va + (s->addr - m->iova), s->length, m->mk.kind, (int)(s->lkey & 0xffff)};
		*cap += s->length;
	}
	pthread_mutex_unlock(&r->lock);
	return bad;
}

/* UD (the provider's FI_EP_DGRAM endpoint): unreliable datagrams, sends only.
 * The sender's completion reports local errors only; a datagram the target
 * cannot take (no such host, QP or process, a different qkey, an SRD QP, no
 * receive posted: no RNR on UD) is dropped without a word. The receiver gets
 * the packet's 40-byte GRH (IB layout: version 6, payload length, next header,
 * hop limit, SGID, DGID) and then the payload, scattered over its buffers as
 * one stream, and byte_len counts both: the provider's msg_prefix_size 40. */
static void execute_ud(struct sim_qp *q, struct sim_wr *w)
{
	struct efasim_registry *r = sim.reg;
	struct efasim_cqe sc = {.wr_id = w->wr_id, .qp_num = q->qpx.qp_base.qp_num, .qp_slot = q->slot, .src_dev = -1,
				.req64 = (uint8_t)q->req64};
	struct efasim_cqe rc = {.recv_side = 1, .src_qp = q->qpx.qp_base.qp_num, .src_dev = q->ctx->dev->gdev};
	memcpy(rc.src_gid, q->ctx->dev->gid, 16);
	uint8_t grh[GRH_LEN] = {0};
	struct sim_seg liov[EFASIM_MAX_SGE + 1] = {{(uintptr_t)grh, GRH_LEN, MK_HOST, -1}};
	size_t len = 0;
	int nl = local_iov(q, w, liov + 1, &len);
	int status = ES_OK;
	if (!w->have_ah)
		status = ES_LOCAL_INVALID_AH;
	else if (nl < 0)
		status = ES_LOCAL_INVALID_LKEY;
	else if (len > sim.prof->max_msg_sz)
		status = ES_LOCAL_BAD_LENGTH;
	if (status != ES_OK)
		goto done;
	robust_lock(&r->lock);
	int dst_dev = find_dev_by_gid(w->dst_gid), ts = -1;
	if (dst_dev >= 0)
		for (int i = 0; i < EFASIM_MAX_QPS; i++)
			if (r->qps[i].used && r->qps[i].dev == dst_dev && r->qps[i].qpn == w->dst_qpn) {
				ts = i;
				break;
			}
	struct efasim_qp_ent tq;
	if (ts >= 0)
		tq = r->qps[ts];
	int dropped = dst_dev >= 0 && sim.drop_host[0] && !strcmp(r->devs[dst_dev].host, sim.drop_host);
	pthread_mutex_unlock(&r->lock);
	hw_add(q->ctx->dev->gdev, HW_SEND_WRS, 1);
	hw_add(q->ctx->dev->gdev, HW_SEND_BYTES, len);
	hw_add(q->ctx->dev->gdev, HW_TX_BYTES, len);
	hw_add(q->ctx->dev->gdev, HW_TX_PKTS, 1);
	if (dst_dev < 0 || dropped)
		goto done;
	if (ts < 0 || !tq.ud || tq.qkey != w->qkey || !pid_alive(tq.pid)) {
		hw_add(dst_dev, HW_RX_DROPS, 1);
		goto done;
	}
	throttle(q->ctx->dev->gdev, dst_dev, len);
	struct efasim_ring_hdr *trq = ring_get(tq.rq_file), *tcq = ring_get(tq.cq_file);
	struct efasim_rqe rqe;
	if (!trq || !tcq || !rq_pop(trq, &rqe)) {
		hw_add(dst_dev, HW_RX_DROPS, 1);
		goto done;
	}
	hw_add(dst_dev, HW_RX_BYTES, len);
	hw_add(dst_dev, HW_RX_PKTS, 1);
	hw_add(dst_dev, HW_RECV_WRS, 1);
	hw_add(dst_dev, HW_RECV_BYTES, len);
	rc.wr_id = rqe.wr_id;
	rc.qp_num = tq.qpn;
	rc.qp_slot = ts;
	grh[0] = 0x60; /* IP version 6, traffic class 0, flow label 0 */
	grh[4] = (uint8_t)(len >> 8);
	grh[5] = (uint8_t)len;
	grh[6] = 0x1b; /* next header: IB transport */
	grh[7] = 1;    /* hop limit */
	memcpy(grh + 8, q->ctx->dev->gid, 16);
	memcpy(grh + 24, r->devs[dst_dev].gid, 16);
	struct sim_seg riov[EFASIM_MAX_SGE];
	size_t cap = 0;
	if (rqe_iov(&rqe, &tq, dst_dev, riov, &cap))
		rc.status = ES_LOCAL_INVALID_LKEY;
	else if (cap < GRH_LEN + len)
		rc.status = ES_LOCAL_BAD_LENGTH;
	else if (move_bytes(tq.pid, 1, liov, nl + 1, riov, (int)rqe.nsge) != (ssize_t)(GRH_LEN + len))
		rc.status = ES_LOCAL_QP_INTERNAL;
	rc.byte_len = (uint32_t)(GRH_LEN + len);
	if (w->op == OP_SEND_IMM) {
		rc.has_imm = 1;
		rc.imm = w->imm;
	}
	cq_push(tcq, &rc);
	cc_resp(&tq, CC_RECV, rc.status);
done:
	sc.status = (uint16_t)status;
	if (status != ES_OK)
		slog("ud qp %u wr %#llx -> status %d", q->qpx.qp_base.qp_num, (unsigned long long)w->wr_id, status);
	cq_push(q->scq->ring, &sc);
	cc_sq(q, w->op, status);
	free(w->inl);
	w->inl = NULL;
}

/* EFASIM_LOSS: a lossy link at a NIC. SRD recovers lost packets in the
 * device, below the provider (the completion comes as usual, only later on
 * real hardware): the sending NIC counts what it sent again in
 * retrans_pkts / retrans_bytes. Every loss_every-th packet through the NIC
 * (sent or received) is lost once. */
static void count_loss(int sd, int dd, size_t len)
{
	struct efasim_registry *r = sim.reg;
	uint64_t pkts = hw_pkts(len), mtu = sim.prof->max_msg_sz, lost = 0;
	for (int k = 0; k < 2; k++) {
		int d = k ? dd : sd;
		uint32_t every = d >= 0 ? r->devs[d].loss_every : 0;
		if (!every)
			continue;
		uint64_t s0 = __atomic_fetch_add(&r->devs[d].loss_seq, pkts, __ATOMIC_RELAXED);
		lost += (s0 + pkts) / every - s0 / every;
	}
	if (!lost)
		return;
	hw_add(sd, HW_RETRANS_PKTS, lost);
	hw_add(sd, HW_RETRANS_BYTES, lost * (len < mtu ? (len ? len : 1) : mtu));
}

/* EFASIM_RETRANS=N (default EFASIM_RETRANS_DEFAULT; 0 off): a background
 * retransmission rate, one packet in N that a NIC sends counted as sent
 * again in its retrans_pkts / retrans_bytes, on every link. SRD recovers
 * the loss of a healthy, loaded fabric (packets dropped at congested switch
 * queues on one of its many paths) in the device, below the provider: the
 * data and completions are as usual, only the sender's retrans_* counters
 * show it (amzn-drivers kernel/linux/efa/src: retrans_bytes/retrans_pkts
 * are the device's network stats, efa_com_cmd.h struct efa_com_network_stats,
 * which efa_verbs.c exposes as port hw_counters, EFA_DEFINE_PORT_STATS). No
 * public source gives the real rate; 1 in 1000
 * (0.1 %) is assumed: enough that a scan round of a few thousand packets
 * counts some, as a loaded p5en does, and 10x below efab_scan's
 * --max-retrans default (1 %). Deterministic: the Nth, 2Nth, ... packet
 * through the NIC (a per-NIC sequence in the registry, across processes). */
#define EFASIM_RETRANS_DEFAULT 1000u

static uint32_t retrans_every(void)
{
	static int every = -1; /* read once; a race only reads the variable twice */
	int e = __atomic_load_n(&every, __ATOMIC_RELAXED);
	if (e < 0) {
		const char *v = getenv("EFASIM_RETRANS");
		char *end;
		long x = v && *v ? strtol(v, &end, 10) : (long)EFASIM_RETRANS_DEFAULT;
		if (v && *v && (*end || x < 0 || x > 1000000000L))
			x = EFASIM_RETRANS_DEFAULT;
		e = (int)x;
		__atomic_store_n(&every, e, __ATOMIC_RELAXED);
	}
	return (uint32_t)e;
}

static void count_background(int d, size_t len)
{
	uint32_t every = retrans_every();
	if (!every || d < 0)
		return;
	uint64_t pkts = hw_pkts(len), mtu = sim.prof->max_msg_sz;
	uint64_t s0 = __atomic_fetch_add(&sim.reg->devs[d].retrans_seq, pkts, __ATOMIC_RELAXED);
	uint64_t n = (s0 + pkts) / every - s0 / every;
	if (!n)
		return;
	hw_add(d, HW_RETRANS_PKTS, n);
	hw_add(d, HW_RETRANS_BYTES, n * (len < mtu ? (len ? len : 1) : mtu));
}

/* The hw counters of one SRD WR (counters.c), at the initiator's NIC sd and
 * the responder's dd: counted before the bytes land at the responder (a NIC
 * counts a packet as it sends and receives it; a reader who saw the data
 * finds it counted), or, for a WR that fails before, with its status. */
static void count_srd(int sd, int dd, int op, int status, size_t len)
{
	int ok = status == ES_OK;
	if (ok)
		count_loss(sd, dd, len);
	if (status == ES_LOCAL_UNRESP_REMOTE)
		hw_add(sd, HW_UNRESPONSIVE_REMOTE_EVENTS, 1);
	switch (op) {
	case OP_SEND:
	case OP_SEND_IMM:
		hw_add(sd, HW_SEND_WRS, 1);
		if (!ok)
			return;
		hw_add(sd, HW_SEND_BYTES, len);
		hw_add(dd, HW_RECV_WRS, 1);
		hw_add(dd, HW_RECV_BYTES, len);
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		hw_add(sd, HW_RDMA_WRITE_WRS, 1);
		if (!ok) {
			hw_add(sd, HW_RDMA_WRITE_WR_ERR, 1);
			return;
		}
		hw_add(sd, HW_RDMA_WRITE_BYTES, len);
		hw_add(dd, HW_RDMA_WRITE_RECV_BYTES, len);
		break;
	case OP_READ:
		hw_add(sd, HW_RDMA_READ_WRS, 1);
		if (!ok) {
			hw_add(sd, HW_RDMA_READ_WR_ERR, 1);
			return;
		}
		hw_add(sd, HW_RDMA_READ_BYTES, len);
		hw_add(dd, HW_RDMA_READ_RESP_BYTES, len);
		/* the data flows from the responder to the initiator */
		hw_add(dd, HW_TX_BYTES, len);
		hw_add(dd, HW_TX_PKTS, hw_pkts(len));
		count_background(dd, len);
		hw_add(sd, HW_RX_BYTES, len);
		hw_add(sd, HW_RX_PKTS, hw_pkts(len));
		return;
	}
	hw_add(sd, HW_TX_BYTES, len);
	hw_add(sd, HW_TX_PKTS, hw_pkts(len));
	count_background(sd, len);
	hw_add(dd, HW_RX_BYTES, len);
	hw_add(dd, HW_RX_PKTS, hw_pkts(len));
}

/* A WR counted as sent (count_srd, ES_OK, before its bytes moved) that then
 * failed (the responder's process was gone): what the failure adds. */
static void count_failure(int sd, int op, int status)
{
	if (status == ES_LOCAL_UNRESP_REMOTE)
		hw_add(sd, HW_UNRESPONSIVE_REMOTE_EVENTS, 1);
	if (op == OP_WRITE || op == OP_WRITE_IMM)
		hw_add(sd, HW_RDMA_WRITE_WR_ERR, 1);
	else if (op == OP_READ)
		hw_add(sd, HW_RDMA_READ_WR_ERR, 1);
}

atomic_ullong exec_n, exec_ns; /* EFASIM_ENGINE_STATS=1: WRs executed, thread CPU time in execute */

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int execute_wr(struct sim_qp *q, struct sim_wr *w);

/* Execute one WR as the device would; returns RETRY on RNR with retries left. */
int execute(struct sim_qp *q, struct sim_wr *w)
{
	if (!sim.stats)
		return execute_wr(q, w);
	uint64_t t = thread_cpu_ns();
	int r = execute_wr(q, w);
	atomic_fetch_add_explicit(&exec_ns, thread_cpu_ns() - t, memory_order_relaxed);
	atomic_fetch_add_explicit(&exec_n, 1, memory_order_relaxed);
	return r;
}

static int execute_wr(struct sim_qp *q, struct sim_wr *w)
{
	if (q->ud) {
		execute_ud(q, w);
		return DONE;
	}
	struct efasim_registry *r = sim.reg;
	struct efasim_cqe sc = {.wr_id = w->wr_id, .qp_num = q->qpx.qp_base.qp_num, .qp_slot = q->slot,
				.rdma_write = (w->op == OP_WRITE || w->op == OP_WRITE_IMM),
				.rdma_read = w->op == OP_READ, .src_dev = -1, .req64 = (uint8_t)q->req64};
	struct efasim_cqe rc = {.recv_side = 1, .qp_slot = -1, .src_qp = q->qpx.qp_base.qp_num,
				.src_dev = q->ctx->dev->gdev};
	memcpy(rc.src_gid, q->ctx->dev->gid, 16);
	struct sim_seg liov[EFASIM_MAX_SGE];
	size_t len = 0;
	int nl = local_iov(q, w, liov, &len);
	int dst_dev = -1;
	struct efasim_qp_ent tq;
	struct efasim_ring_hdr *trq = NULL, *tcq = NULL;
	int status = ES_OK;
	int counted = 0; /* the NICs counted the WR (before its bytes landed, as a NIC counts) */

	if (!w->have_ah) {
		status = ES_LOCAL_INVALID_AH;
		goto done;
	}
	if (nl < 0) {
		status = ES_LOCAL_INVALID_LKEY;
		goto done;
	}
	if ((w->op == OP_SEND || w->op == OP_SEND_IMM) ? len > sim.prof->max_msg_sz : len > sim.prof->max_rdma_size) {
		status = ES_LOCAL_BAD_LENGTH;
		goto done;
	}
	robust_lock(&r->lock);
	dst_dev = find_dev_by_gid(w->dst_gid);
	int ts = -1;
	if (dst_dev >= 0)
		for (int i = 0; i < EFASIM_MAX_QPS; i++)
			if (r->qps[i].used && r->qps[i].dev == dst_dev && r->qps[i].qpn == w->dst_qpn) {
				ts = i;
				break;
			}
	if (ts >= 0)
		tq = r->qps[ts];
	int dropped = dst_dev >= 0 && sim.drop_host[0] && !strcmp(r->devs[dst_dev].host, sim.drop_host);
	pthread_mutex_unlock(&r->lock);
	if (dst_dev < 0) {
		status = ES_LOCAL_UNREACH_REMOTE;
		goto done;
	}
	if (dropped) {
		status = ES_LOCAL_UNRESP_REMOTE;
		goto done;
	}
	if (ts < 0 || tq.ud) { /* no such QP, or a UD one (SRD and UD do not talk) */
		status = ES_REMOTE_BAD_DEST_QPN;
		goto done;
	}
	if (!pid_alive(tq.pid)) {
		status = ES_LOCAL_UNRESP_REMOTE;
		goto done;
	}
	throttle(q->ctx->dev->gdev, dst_dev, len);
	rc.qp_num = tq.qpn;
	rc.qp_slot = ts;

	if (w->op == OP_SEND || w->op == OP_SEND_IMM || (w->op == OP_WRITE_IMM && !tq.unsolicited_write_recv)) {
		if (w->op != OP_WRITE_IMM && w->qkey != tq.qkey) {
			status = ES_REMOTE_BAD_DEST_QPN;
			goto done;
		}
		trq = ring_get(tq.rq_file);
		tcq = ring_get(tq.cq_file);
		if (!trq || !tcq) {
			status = ES_REMOTE_BAD_DEST_QPN;
			goto done;
		}
		struct efasim_rqe rqe;
		if (!rq_pop(trq, &rqe)) {
			if (w->tries_left != 0) {
				if (w->tries_left > 0)
					w->tries_left--;
				w->backoff_ns = !w->backoff_ns ? RNR_RETRY_MIN_NS
					      : w->backoff_ns >= RNR_RETRY_MAX_NS / 2 ? RNR_RETRY_MAX_NS
										       : 2 * w->backoff_ns;
				w->next_try_ns = now_ns() + w->backoff_ns;
				/* the send goes out again after the receiver's RNR */
				hw_add(q->ctx->dev->gdev, HW_RETRANS_PKTS, hw_pkts(len));
				hw_add(q->ctx->dev->gdev, HW_RETRANS_BYTES, len);
				return RETRY;
			}
			status = ES_REMOTE_RNR;
			goto done;
		}
		rc.wr_id = rqe.wr_id;
		if (w->op == OP_WRITE_IMM)
			goto rdma;
		/* scatter into the receive buffers, checked against the receiver's MRs */
		struct sim_seg riov[EFASIM_MAX_SGE];
		size_t cap = 0;
		int bad = rqe_iov(&rqe, &tq, dst_dev, riov, &cap);
		if (bad) {
			rc.status = ES_LOCAL_INVALID_LKEY;
			status = ES_REMOTE_BAD_STATUS;
		} else if (cap < len) {
			rc.status = ES_LOCAL_BAD_LENGTH;
			status = ES_REMOTE_BAD_LENGTH;
		} else {
			count_srd(q->ctx->dev->gdev, dst_dev, w->op, ES_OK, len);
			counted = 1;
			if (len && move_bytes(tq.pid, 1, liov, nl, riov, (int)rqe.nsge) != (ssize_t)len) {
				rc.status = ES_LOCAL_QP_INTERNAL;
				status = ES_LOCAL_UNRESP_REMOTE;
			}
		}
		rc.byte_len = (uint32_t)len;
		if (w->op == OP_SEND_IMM) {
			rc.has_imm = 1;
			rc.imm = w->imm;
		}
		cq_push(tcq, &rc);
		cc_resp(&tq, CC_RECV, rc.status);
		goto done;
	}

rdma:
	if (w->op == OP_WRITE || w->op == OP_WRITE_IMM || w->op == OP_READ) {
		/* The responder's device needs an AH for the requester. */
		if (!ah_known_by(tq.pid, dst_dev, q->ctx->dev->gid)) {
			status = ES_REMOTE_UNKNOWN_PEER;
			goto rdma_done;
		}
		int need = w->op == OP_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
		robust_lock(&r->lock);
		const struct efasim_mr_ent *m = &r->mrs[w->rkey & 0xffff];
		int ok = m->used && m->key == w->rkey && m->pid == tq.pid && m->dev == dst_dev &&
			 m->pd_tag == tq.pd_tag && (m->access & need) && w->raddr >= m->iova &&
			 w->raddr + len <= m->iova + m->len;
		uint64_t va = ok ? m->va + (w->raddr - m->iova) : 0;
		int kind = ok ? m->mk.kind : MK_HOST;
		pthread_mutex_unlock(&r->lock);
		if (!ok) {
			status = ES_REMOTE_BAD_ADDRESS;
			goto rdma_done;
		}
		struct sim_seg riov = {va, len, kind, (int)(w->rkey & 0xffff)};
		count_srd(q->ctx->dev->gdev, dst_dev, w->op, ES_OK, len);
		counted = 1;
		ssize_t n;
		if (!len)
			n = 0;
		else if (w->op == OP_READ)
			n = move_bytes(tq.pid, 0, liov, nl, &riov, 1);
		else if (sim.reorder && len > sim.prof->max_msg_sz)
			n = write_reordered(tq.pid, liov, nl, &riov, len);
		else
			n = move_bytes(tq.pid, 1, liov, nl, &riov, 1);
		if (n != (ssize_t)len) {
			int e = errno;
			slog("%s of %zu bytes (local %s at %#llx, %d segment%s) %s pid %d's %s memory at %#llx: "
			     "moved %zd (%s): completes with 'unresponsive remote'",
			     w->op == OP_READ ? "read" : "write", len, nl > 0 && liov[0].kind != MK_HOST ? "CUDA" : "host",
			     nl > 0 ? (unsigned long long)liov[0].addr : 0ull, nl, nl == 1 ? "" : "s",
			     w->op == OP_READ ? "from" : "to", (int)tq.pid, kind != MK_HOST ? "CUDA" : "host",
			     (unsigned long long)va, n, n < 0 ? strerror(e) : "short");
			status = ES_LOCAL_UNRESP_REMOTE;
		}
	rdma_done:
		if (w->op == OP_WRITE_IMM) {
			if (tq.unsolicited_write_recv) {
				tcq = ring_get(tq.cq_file);
				rc.unsolicited = 1;
				rc.wr_id = 0;
			}
			/* a consumed WQE completes even when the write failed */
			if (tcq && (status == ES_OK || !tq.unsolicited_write_recv)) {
				if (status != ES_OK)
					rc.status = ES_REMOTE_ABORT;
				rc.rdma_write = 1;
				rc.has_imm = 1;
				rc.imm = w->imm;
				rc.byte_len = (uint32_t)len;
				cq_push(tcq, &rc);
			}
		}
		/* the bytes landed (and a write with immediate's CQE is written) */
		if (status == ES_OK)
			cc_resp(&tq, w->op == OP_READ ? CC_REMOTE_RDMA_READ : CC_REMOTE_RDMA_WRITE, ES_OK);
	}
done:
	if (!counted)
		count_srd(q->ctx->dev->gdev, dst_dev, w->op, status, len);
	else if (status != ES_OK)
		count_failure(q->ctx->dev->gdev, w->op, status);
	sc.status = (uint16_t)status;
	if (status != ES_OK)
		slog("qp %u wr %#llx op %d -> status %d", q->qpx.qp_base.qp_num, (unsigned long long)w->wr_id, w->op,
		     status);
	cq_push(q->scq->ring, &sc);
	cc_sq(q, w->op, status);
	free(w->inl);
	w->inl = NULL;
	return DONE;
}

