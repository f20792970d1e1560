/* objrules: the kernel's object rules on the simulated device, as a table of
 * bad usage. ib_uverbs refuses to destroy an object another still uses,
 * with EBUSY (drivers/infiniband/core: uverbs_free_pd in
 * uverbs_std_types.c -- a PD with MRs, QPs or AHs; ib_destroy_cq_user in
 * verbs.c -- a CQ a QP is bound to, send and receive each); rdma-core's
 * struct verbs_mr carries the MR type and access flags ibv_cmd_reg_mr fills
 * in (libibverbs/cmd.c). Each row: what is done, the errno the kernel
 * returns, what the simulator returned. Exit 0 when every row matches, 1
 * when one does not, 77 without a simulated device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/efadv.h>
#include <infiniband/verbs.h>

static int bad;

static void row(const char *what, int want, int got)
{
	printf("%-4s %-58s kernel %-6s simulator %s\n", want == got ? "ok" : "FAIL", what,
	       want ? strerror(want) : "0", got ? strerror(got) : "0");
	bad |= want != got;
}

/* rdma-core 64 libibverbs/driver.h (not an installed header): struct
 * verbs_mr, enum ibv_mr_type { IBV_MR_TYPE_MR, IBV_MR_TYPE_NULL_MR,
 * IBV_MR_TYPE_IMPORTED_MR, IBV_MR_TYPE_DMABUF_MR } */
struct verbs_mr_layout {
	struct ibv_mr ibv_mr;
	int mr_type;
	int access;
};
enum { MR_TYPE_MR = 0 };

int main(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || !n) {
		printf("no simulated device (run under tests/efasim/run)\n");
		return 77;
	}
	struct ibv_context *ctx = ibv_open_device(list[0]);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct efadv_cq_init_attr eca = {0};
	struct ibv_cq_ex *cqx = ctx ? efadv_create_cq(ctx, &ca, &eca, sizeof(eca)) : NULL;
	struct ibv_cq *cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	if (!pd || !cq) {
		printf("FAIL setting up (device, PD, CQ)\n");
		return 1;
	}
	static char buf[8192];
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), acc);
	if (!mr) {
		printf("FAIL ibv_reg_mr: %s\n", strerror(errno));
		return 1;
	}
	struct verbs_mr_layout *vmr = (struct verbs_mr_layout *)mr;
	row("ibv_reg_mr: verbs_mr.mr_type is IBV_MR_TYPE_MR", 0, vmr->mr_type == MR_TYPE_MR ? 0 : EINVAL);
	row("ibv_reg_mr: verbs_mr.access is the access asked", 0, vmr->access == acc ? 0 : EINVAL);
	row("ibv_dealloc_pd with an MR on it", EBUSY, ibv_dealloc_pd(pd));
	row("ibv_dereg_mr", 0, ibv_dereg_mr(mr));

	struct ibv_qp_init_attr_ex qa = {0};
	qa.qp_type = IBV_QPT_DRIVER;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.pd = pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 8;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	struct efadv_qp_init_attr ea = {0};
	ea.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD;
	struct ibv_qp *qp = efadv_create_qp_ex(ctx, &qa, &ea, sizeof(ea));
	if (!qp) {
		printf("FAIL efadv_create_qp_ex: %s\n", strerror(errno));
		return 1;
	}
	row("ibv_destroy_cq with a QP bound to it (send and recv)", EBUSY, ibv_destroy_cq(cq));
	row("ibv_dealloc_pd with a QP on it", EBUSY, ibv_dealloc_pd(pd));
	row("ibv_destroy_qp", 0, ibv_destroy_qp(qp));

	union ibv_gid gid;
	struct ibv_ah_attr aa = {0};
	if (!ibv_query_gid(ctx, 1, 0, &gid)) {
		aa.is_global = 1;
		aa.grh.dgid = gid;
		aa.port_num = 1;
		struct ibv_ah *ah = ibv_create_ah(pd, &aa);
		if (ah) {
			row("ibv_dealloc_pd with an AH on it", EBUSY, ibv_dealloc_pd(pd));
			row("ibv_destroy_ah", 0, ibv_destroy_ah(ah));
		} else
			row("ibv_create_ah on the device's own GID", 0, errno);
	}
	row("ibv_destroy_cq once its QP is gone", 0, ibv_destroy_cq(cq));
	row("ibv_dealloc_pd once it is empty", 0, ibv_dealloc_pd(pd));
	row("ibv_close_device", 0, ibv_close_device(ctx));
	ibv_free_device_list(list);
	return bad;
}
