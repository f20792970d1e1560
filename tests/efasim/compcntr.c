/* efasim: completion counters, as rdma-core's main branch has them (after
 * 64.0: ibv_create_comp_cntr and friends, IBVERBS_1.18; efadv_create_comp_cntr,
 * EFA_1.7) and as the EFA driver implements them (linux-rdma "RDMA/efa: Add
 * Completion Counters support", v8 2026-07-07; its core patches; the man
 * pages ibv_create_comp_cntr.3, ibv_qp_attach_comp_cntr.3,
 * efadv_create_comp_cntr.3). SIMULATED.
 *
 * A counter is two 64-bit values, completions and errors. The device keeps
 * them (each is an EFA "event counter" created with the DMA address of its
 * memory) and writes each new value to that memory: rdma-core's own words
 * inside its counter object, an application's host address (VA) or a
 * dma-buf (DMABUF, e.g. GPU memory). Here the values live in the shared
 * registry (efasim_cntr_ent) and whoever plays the device for a completion
 * -- the initiator's process, its engine thread or its RNR retry thread --
 * increments one under the counter's lock and stores it to the memory: a
 * plain store in the owner's process, process_vm_writev from another, and
 * mk_copy (memkind.c) for a CUDA dma-buf. A QP's registry entry names the
 * counter attached for each op (efasim_qp_ent.cntr), so an initiator finds
 * the responder's RECV / REMOTE_* counter there, as it finds the QP.
 *
 * What counts (the driver's attach: a completion event and an error event
 * per op, no error event for the two REMOTE ops): SEND, RDMA_READ and
 * RDMA_WRITE at the initiator on its own completion (an error completion
 * counts as an error); RECV at the responder on each receive completion
 * (errors too); REMOTE_RDMA_READ / REMOTE_RDMA_WRITE at the responder when
 * the bytes are read or have landed. ASSUMED, no source says: the value is
 * written after the CQE of the same completion; an RDMA write with
 * immediate counts REMOTE_RDMA_WRITE at the responder, not RECV, though it
 * completes there with a receive CQE; the device writes 0 to both memories
 * when the counter is created; values wrap at 2^64 (caps max_value).
 *
 * set/inc are device commands (EFA_ADMIN_MODIFY_EVENT_COUNTER: the device
 * value changes and is written out); read is rdma-core's load of its
 * completion / error pointer (EOPNOTSUPP without one: a dma-buf counter
 * created without a CPU mapping). The API exists only when efasim is built
 * against rdma-core main's headers (EFASIM_COMP_CNTR, Makefile); the device
 * part below is in every build and counts nothing while no counter is
 * attached. */
#include "sim.h"

/* ------------------------------------------------------------ the device */

static void cc_write(struct efasim_cntr_ent *c, int which)
{
	/* with c->mx held */
	const struct efasim_cntr_loc *l = &c->loc[which];
	uint64_t v = c->val[which];
	int bad;
	if (l->kind == MK_HOST && c->pid == sim.pid) {
		__atomic_store_n((uint64_t *)(uintptr_t)l->addr, v, __ATOMIC_RELEASE);
		return;
	}
	if (l->kind == MK_HOST) {
		struct iovec a = {&v, sizeof(v)}, b = {(void *)(uintptr_t)l->addr, sizeof(v)};
		bad = process_vm_writev(c->pid, &a, 1, &b, 1, 0) != (ssize_t)sizeof(v);
	} else {
		struct mk_ref dst = {MK_CUDA, c->pid, l->addr, l->mr, NULL}, src = {MK_HOST, sim.pid, (uintptr_t)&v, -1, NULL};
		bad = mk_copy(dst, src, sizeof(v)) != 0;
	}
	if (bad)
		slog("completion counter %#x (pid %d): writing the %s value to %s %#llx failed", c->key, (int)c->pid,
		     which ? "error" : "completion", l->kind == MK_HOST ? "host" : "CUDA", (unsigned long long)l->addr);
}

/* A value past the device's max_value wraps to zero (ibv_query_comp_cntr_caps.3:
 * "A subsequent increment that would exceed this value wraps the counter to
 * zero"); in every build, the caps only in the one against rdma-core main. */
#define CC_WRAP_MAX ((UINT64_C(1) << 31) - 1)
static uint64_t cc_wrap(uint64_t v)
{
	return v % (CC_WRAP_MAX + 1);
}

/* One event on the counter key names (0: none attached). */
static void cc_event(uint32_t key, int error)
{
	if (!key)
		return;
	struct efasim_cntr_ent *c = &sim.reg->cntrs[key & 0xffff];
	robust_lock(&c->mx);
	if (c->used && c->key == key) {
		c->val[!!error] = cc_wrap(c->val[!!error] + 1);
		cc_write(c, !!error);
	}
	pthread_mutex_unlock(&c->mx);
}

void cc_sq(const struct sim_qp *q, int wr_op, int status)
{
	int op;
	switch (wr_op) {
	case OP_SEND:
	case OP_SEND_IMM: op = CC_SEND; break;
	case OP_WRITE:
	case OP_WRITE_IMM: op = CC_RDMA_WRITE; break;
	case OP_READ: op = CC_RDMA_READ; break;
	default: return;
	}
	cc_event(__atomic_load_n(&sim.reg->qps[q->slot].cntr[op], __ATOMIC_RELAXED), status != ES_OK);
}

void cc_resp(const struct efasim_qp_ent *tq, int cc_op, int status)
{
	if (status != ES_OK && cc_op != CC_RECV)
		return; /* no error event for REMOTE_RDMA_READ / REMOTE_RDMA_WRITE */
	cc_event(tq->cntr[cc_op], status != ES_OK);
}

#ifndef EFASIM_COMP_CNTR

uint32_t cc_device_caps(uint32_t caps)
{
	return caps;
}

#else /* built against rdma-core main: the API */

/* Caps (ibv_query_comp_cntr_caps): the driver reports max_event_counters / 2
 * counters and the device's event_counter_max_val; neither is published for
 * any instance. ASSUMED: 256 counters per device, and values up to 2^31 - 1,
 * libfabric's own model of the device (2.7.0a1, a pre-release snapshot:
 * prov/efa/test/efa_unit_tests.h EFA_HW_CNTR_MAX_VALUE). Not 2^64 - 1: that is
 * libfabric's software-counter value (efa_user_info.c
 * efa_user_info_set_max_cntr_value keeps UINT64_MAX "which means software
 * counter will be used"), and its fabtest fi_efa_hw_cntr
 * (fabtests/prov/efa/src/efa_hw_cntr_test.c) skips a device whose
 * max_cntr_value is UINT64_MAX as having none. */
enum { CC_MAX_COUNTERS = 256, CC_ALL_OPS = (1 << EFASIM_CC_OPS) - 1 };
#define CC_MAX_VALUE CC_WRAP_MAX

static int cc_cap_off(void)
{
	const char *e = getenv("EFASIM_COMP_CNTR");
	return e && !strcmp(e, "0");
}

uint32_t cc_device_caps(uint32_t caps)
{
	return cc_cap_off() ? caps & ~(uint32_t)SIM_CAPS_COMP_CNTR : caps;
}

static int cc_have(void)
{
	return !!(cc_device_caps(sim.caps) & SIM_CAPS_COMP_CNTR);
}

/* rdma-core main's struct efa_comp_cntr (providers/efa/efa.h): the counter,
 * its provider-internal words, and the pointers ibv_read_*comp_cntr load. */
struct sim_cntr {
	struct ibv_comp_cntr cc;
	uint64_t comp_val __attribute__((aligned(8)));
	uint64_t err_val __attribute__((aligned(8)));
	uint64_t *comp_ptr;
	uint64_t *err_ptr;
	uint32_t key;
	int dev;
	pid_t owner;
};

static struct sim_cntr *to_cntr(struct ibv_comp_cntr *cc)
{
	return container_of(cc, struct sim_cntr, cc);
}

/* [offset, offset + 8) of dma-buf fd: the CUDA device address and the MR
 * that resolves it, through a live MR of this process on the same dma-buf
 * that covers it (memkind.c's registry); else the errno. */
static int dmabuf_resolve(int fd, uint64_t offset, struct efasim_cntr_loc *loc)
{
	int slot = -1;
	uint64_t addr = 0;
	int err = mk_dmabuf_mr(fd, offset, sizeof(uint64_t), &slot, &addr);
	if (!err)
		*loc = (struct efasim_cntr_loc){.kind = MK_CUDA, .mr = slot, .addr = addr};
	else if (err == EOPNOTSUPP)
		slog("completion counter on dma-buf fd %d offset %#llx: not resolvable, EOPNOTSUPP (efasim limitation: "
		     "a dma-buf fd does not say which memory it is; register an MR of this process from the same "
		     "dma-buf covering it first)",
		     fd, (unsigned long long)offset);
	return err;
}

/* Where the device writes one value, and what ibv_read loads. */
static int cc_loc(int ext, const struct efadv_memory_location *m, uint64_t *internal, struct efasim_cntr_loc *loc,
		  uint64_t **ptr)
{
	if (!ext) { /* rdma-core's own word (comp_val / err_val) */
		*loc = (struct efasim_cntr_loc){.kind = MK_HOST, .mr = -1, .addr = (uintptr_t)internal};
		*ptr = internal;
		return 0;
	}
	if (m->type == EFADV_MEMORY_LOCATION_DMABUF) {
		*ptr = (uint64_t *)m->ptr; /* optional CPU mapping */
		int err = dmabuf_resolve(m->dmabuf.fd, m->dmabuf.offset, loc);
		if (!err && (loc->addr & 7))
			err = EINVAL;
		return err;
	}
	/* VA: the kernel pins it (ib_umem_get, LOCAL_WRITE: mapped and writable,
	 * else EFAULT) and the driver wants the DMA address 8-byte aligned */
	if (!range_pinnable(m->ptr, sizeof(uint64_t), 1) || mk_host_refused(m->ptr))
		return EFAULT;
	if ((uintptr_t)m->ptr & 7)
		return EINVAL;
	*loc = (struct efasim_cntr_loc){.kind = MK_HOST, .mr = -1, .addr = (uintptr_t)m->ptr};
	*ptr = (uint64_t *)m->ptr;
	return 0;
}

static struct ibv_comp_cntr *create_cntr(struct ibv_context *ctx, struct ibv_comp_cntr_init_attr *attr,
					 const struct efadv_comp_cntr_init_attr *ea)
{
	const uint32_t known = EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM | EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM;
	/* rdma-core main efa_create_comp_cntr_impl (providers/efa/verbs.c) */
	if (attr->comp_mask || attr->flags || attr->type != IBV_COMP_CNTR_TYPE_WRS || ea->comp_mask ||
	    (ea->flags & ~known) ||
	    (ea->comp_cntr_ext_mem.type != EFADV_MEMORY_LOCATION_VA &&
	     ea->comp_cntr_ext_mem.type != EFADV_MEMORY_LOCATION_DMABUF) ||
	    (ea->err_cntr_ext_mem.type != EFADV_MEMORY_LOCATION_VA &&
	     ea->err_cntr_ext_mem.type != EFADV_MEMORY_LOCATION_DMABUF)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!cc_have()) { /* a device without event counters (ASSUMED errno) */
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct sim_cntr *sc = calloc(1, sizeof(*sc));
	if (!sc) {
		errno = ENOMEM;
		return NULL;
	}
	struct efasim_cntr_loc loc[2];
	int err = cc_loc(!!(ea->flags & EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM), &ea->comp_cntr_ext_mem,
			 &sc->comp_val, &loc[0], &sc->comp_ptr);
	if (!err)
		err = cc_loc(!!(ea->flags & EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM), &ea->err_cntr_ext_mem,
			     &sc->err_val, &loc[1], &sc->err_ptr);
	if (err) {
		free(sc);
		errno = err;
		return NULL;
	}
	struct sim_ctx *c = to_ctx(ctx);
	struct efasim_registry *r = sim.reg;
	robust_lock(&r->lock);
	int n = 0, slot = -1;
	for (int i = 0; i < EFASIM_MAX_CNTRS; i++) {
		struct efasim_cntr_ent *e = &r->cntrs[i];
		int live = e->used && pid_alive(e->pid);
		if (live && e->dev == c->dev->gdev)
			n++;
		if (!live && slot < 0)
			slot = i;
	}
	if (slot < 0 || n >= CC_MAX_COUNTERS) {
		pthread_mutex_unlock(&r->lock);
		free(sc);
		errno = ENOMEM; /* "not enough resources" (ibv_create_comp_cntr.3) */
		return NULL;
	}
	/* Lock order: a counter's mx before the registry lock (a write to
	 * another process's CUDA memory looks its MR up under the registry
	 * lock), so the slot is claimed here and filled under mx alone. */
	struct efasim_cntr_ent *e = &r->cntrs[slot];
	if (!e->key) /* never used: a fresh lock (a reused one stays) */
		robust_init(&e->mx);
	r->cntr_gen = (r->cntr_gen + 1) & 0x7fff;
	uint32_t key = ((r->cntr_gen + 1u) << 16) | (uint32_t)slot;
	e->key = key;
	e->pid = sim.pid;
	e->dev = c->dev->gdev;
	e->used = 1;
	pthread_mutex_unlock(&r->lock);
	robust_lock(&e->mx);
	e->val[0] = e->val[1] = 0;
	e->loc[0] = loc[0];
	e->loc[1] = loc[1];
	/* ASSUMED: the device starts both values at 0 in their memory */
	cc_write(e, 0);
	cc_write(e, 1);
	pthread_mutex_unlock(&e->mx);
	sc->key = key;
	sc->dev = c->dev->gdev;
	sc->owner = sim.pid;
	sc->cc.context = ctx;
	sc->cc.handle = sc->key;
	return &sc->cc;
}

EXPORT struct ibv_comp_cntr *ibv_create_comp_cntr(struct ibv_context *ctx, struct ibv_comp_cntr_init_attr *attr)
{
	struct efadv_comp_cntr_init_attr ea = {0};
	return create_cntr(ctx, attr, &ea);
}

/* libefa.so.1's efadv_create_comp_cntr (efadv.c) */
struct ibv_comp_cntr *efasim_efadv_create_comp_cntr(struct ibv_context *ctx, struct ibv_comp_cntr_init_attr *attr,
						    struct efadv_comp_cntr_init_attr *ea, uint32_t inlen)
{
	if (!efasim_is_sim_context(ctx)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* vext_field_avail(err_cntr_ext_mem) and is_ext_cleared */
	size_t need = offsetof(struct efadv_comp_cntr_init_attr, err_cntr_ext_mem) + sizeof(ea->err_cntr_ext_mem);
	if (inlen < need) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = sizeof(*ea); i < inlen; i++)
		if (((const uint8_t *)ea)[i]) {
			errno = EINVAL;
			return NULL;
		}
	return create_cntr(ctx, attr, ea);
}

/* This process's live registry entry of a counter, locked; NULL if none. */
static struct efasim_cntr_ent *cntr_ent_lock(struct sim_cntr *sc)
{
	if (sc->owner != sim.pid)
		return NULL; /* inherited across fork: the parent's */
	struct efasim_cntr_ent *e = &sim.reg->cntrs[sc->key & 0xffff];
	robust_lock(&e->mx);
	if (!e->used || e->key != sc->key || e->pid != sim.pid) {
		pthread_mutex_unlock(&e->mx);
		return NULL;
	}
	return e;
}

EXPORT int ibv_destroy_comp_cntr(struct ibv_comp_cntr *cc)
{
	struct sim_cntr *sc = to_cntr(cc);
	if (sc->owner != sim.pid) { /* inherited: only this copy's memory */
		free(sc);
		return 0;
	}
	struct efasim_registry *r = sim.reg;
	robust_lock(&r->lock);
	int users = 0;
	for (int i = 0; i < EFASIM_MAX_QPS; i++)
		if (r->qps[i].used && r->qps[i].pid == sim.pid)
			for (int k = 0; k < EFASIM_CC_OPS; k++)
				users += r->qps[i].cntr[k] == sc->key;
	pthread_mutex_unlock(&r->lock);
	if (users) {
		ebusy_note("ibv_destroy_comp_cntr", "QP ops attached", users);
		return EBUSY; /* the core's usecnt: attached to a QP */
	}
	struct efasim_cntr_ent *e = &r->cntrs[sc->key & 0xffff];
	robust_lock(&e->mx);
	if (e->key == sc->key)
		e->used = 0;
	pthread_mutex_unlock(&e->mx);
	free(sc);
	return 0;
}

/* EFA_ADMIN_MODIFY_EVENT_COUNTER: SET or ADD on one value, written out */
static int cntr_modify(struct ibv_comp_cntr *cc, int which, int add, uint64_t v)
{
	struct efasim_cntr_ent *e = cntr_ent_lock(to_cntr(cc));
	if (!e)
		return EINVAL;
	e->val[which] = cc_wrap(add ? e->val[which] + v : v); /* ASSUMED: SET wraps too */
	cc_write(e, which);
	pthread_mutex_unlock(&e->mx);
	return 0;
}

EXPORT int ibv_set_comp_cntr(struct ibv_comp_cntr *cc, uint64_t value)
{
	return cntr_modify(cc, 0, 0, value);
}

EXPORT int ibv_set_err_comp_cntr(struct ibv_comp_cntr *cc, uint64_t value)
{
	return cntr_modify(cc, 1, 0, value);
}

EXPORT int ibv_inc_comp_cntr(struct ibv_comp_cntr *cc, uint64_t amount)
{
	return cntr_modify(cc, 0, 1, amount);
}

EXPORT int ibv_inc_err_comp_cntr(struct ibv_comp_cntr *cc, uint64_t amount)
{
	return cntr_modify(cc, 1, 1, amount);
}

/* rdma-core main efa_read_comp_cntr: a load of the pointer, no command */
EXPORT int ibv_read_comp_cntr(struct ibv_comp_cntr *cc, uint64_t *value)
{
	struct sim_cntr *sc = to_cntr(cc);
	if (!sc->comp_ptr)
		return EOPNOTSUPP;
	*value = __atomic_load_n(sc->comp_ptr, __ATOMIC_ACQUIRE);
	return 0;
}

EXPORT int ibv_read_err_comp_cntr(struct ibv_comp_cntr *cc, uint64_t *value)
{
	struct sim_cntr *sc = to_cntr(cc);
	if (!sc->err_ptr)
		return EOPNOTSUPP;
	*value = __atomic_load_n(sc->err_ptr, __ATOMIC_ACQUIRE);
	return 0;
}

EXPORT int _ibv_query_comp_cntr_caps(struct ibv_context *ctx, struct ibv_comp_cntr_caps *caps, size_t caps_size)
{
	memset(caps, 0, caps_size); /* libibverbs, before the driver */
	if (!efasim_is_sim_context(ctx))
		return EOPNOTSUPP;
	if (caps_size < sizeof(*caps))
		return EINVAL; /* ibv_cmd_query_comp_cntr_caps */
	if (!cc_have())
		return EOPNOTSUPP; /* ASSUMED: nothing to report without event counters */
	caps->max_counters = CC_MAX_COUNTERS;
	caps->max_value = CC_MAX_VALUE;
	caps->supported_qp_attach_ops = CC_ALL_OPS;
	return 0;
}

/* The core (uverbs_std_types_qp.c in the series): op_mask 0 EINVAL, an op
 * some counter already has on this QP EBUSY; the man page: a QP past INIT
 * EINVAL. rdma-core passes only the six known bits (cmd_comp_cntr.c) and no
 * comp_mask. */
EXPORT int ibv_qp_attach_comp_cntr(struct ibv_qp *qp, struct ibv_comp_cntr *cc,
				   struct ibv_qp_attach_comp_cntr_attr *attr)
{
	struct sim_qp *q = container_of(qp, struct sim_qp, qpx.qp_base);
	struct sim_cntr *sc = to_cntr(cc);
	uint32_t ops = attr->op_mask & CC_ALL_OPS;
	if (!cc_have())
		return EOPNOTSUPP;
	if (q->owner != sim.pid || sc->owner != sim.pid || sc->dev != q->ctx->dev->gdev || !ops)
		return EINVAL;
	if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT)
		return EINVAL;
	struct efasim_registry *r = sim.reg;
	robust_lock(&r->lock);
	struct efasim_qp_ent *e = &r->qps[q->slot];
	for (int k = 0; k < EFASIM_CC_OPS; k++)
		if ((ops & (1u << k)) && e->cntr[k]) {
			pthread_mutex_unlock(&r->lock);
			return EBUSY;
		}
	for (int k = 0; k < EFASIM_CC_OPS; k++)
		if (ops & (1u << k))
			__atomic_store_n(&e->cntr[k], sc->key, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

#endif /* EFASIM_COMP_CNTR */
