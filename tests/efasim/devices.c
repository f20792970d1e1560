/* efasim: Devices and contexts: the device list, ibv_open_device, device, port and
 * GID queries, efadv_query_device, fork status. */
#include "sim.h"

int efasim_is_sim_context(struct ibv_context *c)
{
	return c && c->abi_compat == __VERBS_ABI_IS_EXTENDED;
}

EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
	if (num)
		*num = 0;
	if (!sim_init()) {
		errno = ENOSYS;
		return NULL;
	}
	struct ibv_device **l = calloc((size_t)sim.nnics + 1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < sim.nnics; i++)
		l[i] = &sim.devs[i].ibdev;
	if (num)
		*num = sim.nnics;
	return l;
}

EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

EXPORT const char *ibv_get_device_name(struct ibv_device *d)
{
	return d->name;
}

static int sim_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len);
static int sim_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *attr, size_t size);

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *d)
{
	if (!sim_init()) {
		errno = ENODEV;
		return NULL;
	}
	struct sim_device *sd = container_of(d, struct sim_device, ibdev);
	struct sim_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = sd;
	c->next_ahn = 1;
	pthread_mutex_init(&c->lock, NULL);
	struct verbs_context *v = &c->vctx;
	v->sz = sizeof(*v);
	v->query_port = sim_query_port;
	v->create_cq_ex = sim_create_cq_ex;
	v->create_qp_ex = sim_create_qp_ex;
	v->query_device_ex = sim_query_device_ex;
	struct ibv_context *ctx = &v->context;
	ctx->device = d;
	ctx->cmd_fd = -1;
	ctx->async_fd = -1;
	ctx->num_comp_vectors = 4; /* the provider refuses CQ wait objects with fewer than 2 */
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = sim_poll_cq;
	ctx->ops.req_notify_cq = sim_req_notify;
	ctx->ops.post_recv = sim_post_recv;
	ctx->ops.post_send = sim_post_send;
	pthread_mutex_init(&ctx->mutex, NULL);
	return ctx;
}

EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	struct sim_ctx *c = to_ctx(ctx);
	free(c->ahs);
	free(c);
	return 0;
}

static void fill_device_attr(struct sim_ctx *c, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "efasim-%s", sim.prof->name);
	a->max_mr_size = 1ull << 39;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0x1d0f;
	a->vendor_part_id = sim.prof->vendor_part_id;
	a->hw_ver = sim.prof->vendor_part_id;
	a->max_qp = EFASIM_QP_TABLE;
	a->max_qp_wr = sim.prof->max_sq_wr;
	a->max_sge = MAX_SQ_SGE;
	a->max_cq = 512;
	a->max_cqe = (int)sim.max_cqe;
	a->max_mr = MAX_MR;
	a->max_pd = MAX_PD;
	a->max_ah = MAX_AH;
	a->phys_port_cnt = 1;
	memcpy(&a->node_guid, c->dev->gid + 8, 8);
}

EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	fill_device_attr(to_ctx(ctx), a);
	return 0;
}

static int sim_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *attr, size_t size)
{
	(void)in;
	memset(attr, 0, size);
	fill_device_attr(to_ctx(ctx), &attr->orig_attr);
	return 0;
}

static int sim_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	(void)ctx;
	if (port != 1)
		return EINVAL;
	memset(a, 0, len < sizeof(*a) ? len : sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = IBV_MTU_4096;
	a->gid_tbl_len = 1;
	a->max_msg_sz = sim.prof->max_msg_sz;
	a->pkey_tbl_len = 1;
	a->lmc = 1;
	a->active_width = sim.prof->width;
	a->active_speed = sim.prof->speed;
	a->phys_state = 5; /* LinkUp */
	a->link_layer = IBV_LINK_LAYER_UNSPECIFIED;
	return 0;
}

/* The compat entry point: only reached when verbs_context lacks query_port. */
EXPORT int(ibv_query_port)(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *a)
{
	return sim_query_port(ctx, port, (struct ibv_port_attr *)a, sizeof(struct ibv_port_attr));
}

EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1 || index != 0)
		return -1;
	memcpy(gid->raw, to_ctx(ctx)->dev->gid, 16);
	return 0;
}

int efasim_efadv_query_device(struct ibv_context *ctx, struct efadv_device_attr *attr, uint32_t inlen)
{
	if (!efasim_is_sim_context(ctx))
		return EOPNOTSUPP;
	struct efadv_device_attr a = {0};
	a.max_sq_wr = sim.prof->max_sq_wr;
	a.max_rq_wr = MAX_RQ_WR;
	a.max_sq_sge = MAX_SQ_SGE;
	a.max_rq_sge = MAX_RQ_SGE;
	a.inline_buf_size = sim.prof->inline_size;
	a.inline_buf_size_ex = sim.inline_ex;
	a.device_caps = cc_device_caps(sim.caps);
	a.max_rdma_size = sim.prof->max_rdma_size;
	memset(attr, 0, inlen);
	memcpy(attr, &a, inlen < sizeof(a) ? inlen : sizeof(a));
	return 0;
}

/* rdma-core efadv_get_max_sq_depth: the SQ depth a QP of that inline size
 * (and inline RDMA writes) can have: the LLQ over the WQE size, rounded down
 * to a power of two; a negative errno for bad requests. */
int efasim_efadv_get_max_sq_depth(struct ibv_context *ctx, struct efadv_sq_depth_attr *attr, uint32_t inlen)
{
	if (!efasim_is_sim_context(ctx))
		return -EOPNOTSUPP;
	if (inlen < offsetof(struct efadv_sq_depth_attr, max_inline_data) + sizeof(attr->max_inline_data) ||
	    attr->comp_mask)
		return -EINVAL;
	if (attr->max_send_sge > MAX_SQ_SGE || attr->max_rdma_sge > 1 || attr->max_inline_data > sim.inline_ex)
		return -EINVAL;
	uint32_t d = SIM_SQ_DEPTH(SIM_SQ_WQE_SIZE(attr->max_inline_data,
						  attr->flags & EFADV_SQ_DEPTH_ATTR_INLINE_WRITE)),
		 p = 1;
	while (p * 2 <= d)
		p *= 2;
	return (int)p;
}

/* Fork: the provider asks whether fork support is on; there is no kernel to ask. */
EXPORT int ibv_fork_init(void)
{
	return 0;
}

EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

