/* efasim's libefa.so.1: the efadv_* entry points, forwarded to the device
 * model in efasim's libibverbs.so.1. */
#include "efasim.h"

#include <errno.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int efadv_query_device(struct ibv_context *ctx, struct efadv_device_attr *attr, uint32_t inlen)
{
	return efasim_efadv_query_device(ctx, attr, inlen);
}

EXPORT int efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr, uint32_t inlen)
{
	return efasim_efadv_query_ah(ah, attr, inlen);
}

EXPORT struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
					 struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	return efasim_efadv_create_qp_ex(ctx, attr, efa_attr, inlen);
}

EXPORT struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr, uint32_t type)
{
	(void)pd, (void)attr, (void)type;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
					 struct efadv_cq_init_attr *efa_attr, uint32_t inlen)
{
	return efasim_efadv_create_cq(ctx, attr, efa_attr, inlen);
}

EXPORT struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cq)
{
	return efasim_efadv_cq_from_ibv_cq_ex(cq);
}

EXPORT int efadv_query_mr(struct ibv_mr *mr, struct efadv_mr_attr *attr, uint32_t inlen)
{
	return efasim_efadv_query_mr(mr, attr, inlen);
}

/* The direct (MMIO) data path: the simulated device's queue memory (direct.c). */
EXPORT int efadv_query_qp_wqs(struct ibv_qp *qp, struct efadv_wq_attr *sq, struct efadv_wq_attr *rq, uint32_t inlen)
{
	return efasim_efadv_query_qp_wqs(qp, sq, rq, inlen);
}

EXPORT int efadv_query_cq(struct ibv_cq *cq, struct efadv_cq_attr *attr, uint32_t inlen)
{
	return efasim_efadv_query_cq(cq, attr, inlen);
}

EXPORT struct efadv_qp *efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	return efasim_efadv_qp_from_ibv_qp_ex(qp);
}

EXPORT int efadv_get_max_sq_depth(struct ibv_context *ctx, struct efadv_sq_depth_attr *attr, uint32_t inlen)
{
	return efasim_efadv_get_max_sq_depth(ctx, attr, inlen);
}

EXPORT int efadv_get_max_rq_depth(struct ibv_context *ctx, struct efadv_rq_depth_attr *attr, uint32_t inlen)
{
	(void)ctx, (void)attr, (void)inlen;
	return EOPNOTSUPP;
}

#ifdef EFASIM_COMP_CNTR
/* rdma-core main (EFA_1.7): completion counters (compcntr.c). */
EXPORT struct ibv_comp_cntr *efadv_create_comp_cntr(struct ibv_context *ctx, struct ibv_comp_cntr_init_attr *attr,
						    struct efadv_comp_cntr_init_attr *efa_attr, uint32_t inlen)
{
	return efasim_efadv_create_comp_cntr(ctx, attr, efa_attr, inlen);
}
#endif
