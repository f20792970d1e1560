/* gda_ops_test: libfabric's GDA ops (fi_open_ops(FI_EFA_GDA_OPS), fi_ext_efa.h)
 * on the simulated device with rdma-core 64.0 (the default build), as the
 * efa provider of libfabric 2.6.0 implements them (prov/efa/src/efa_domain.c):
 *   - cntr_open_ext answers -FI_ENOSYS: libfabric was built against an
 *     rdma-core without efadv_create_comp_cntr (HAVE_EFADV_CREATE_COMP_CNTR 0),
 *     so the provider reports the absence of completion counters; built
 *     against rdma-core main (GDA_COMP_CNTR: libfabric 2.7.0a1, both pre-release
 *     snapshots) it opens a device counter in the words given (and fails with
 *     EFASIM_COMP_CNTR=0, a device without counters);
 *   - with libfabric >= 2.7's fi_efa_wq_attr.caps (GDA_WQ_CAPS): the SQ's
 *     64-bit request ids as efasim's device has them (EFASIM_REQ_ID_64);
 *   - query_qp_wqs on an enabled endpoint: the SQ of 64-byte WQEs and the RQ of
 *     16-byte descriptors with their doorbells; query_cq: 32-byte CQEs;
 *   - query_addr: the AH number efadv_query_ah gave the provider at AV insert
 *     (seen here by interposing efadv_query_ah), the peer's QPN and qkey;
 *   - cq_open_ext: wait_obj other than FI_WAIT_NONE -FI_ENOSYS, without
 *     FI_EFA_CQ_INIT_FLAGS_EXT_MEM_DMABUF -FI_EINVAL, length 0 -FI_EINVAL (all
 *     before any device call; a valid request depends on the device's
 *     external-memory CQ cap and is not checked here);
 *   - get_mr_lkey of a registered MR.
 * No GPU needed. Exit 0 all ok, 1 a check failed, 77 no efa-direct here.
 * Run under tests/efasim/run 2.6.0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/efadv.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_efa.h>

static int failures;

static void check(const char *what, long long want, long long got)
{
	printf("%-4s %-66s want %-6lld got %lld%s%s\n", want == got ? "ok" : "FAIL", what, want, got,
	       got < 0 ? " " : "", got < 0 ? fi_strerror((int)-got) : "");
	failures += want != got;
}

/* The provider's efadv_query_ah calls land here first (the executable's
 * definition interposes libefa's): the last AH number handed out. */
static int last_ahn = -1;
int efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr, uint32_t inlen)
{
	static int (*real)(struct ibv_ah *, struct efadv_ah_attr *, uint32_t);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "efadv_query_ah");
	if (!real)
		return EOPNOTSUPP;
	int rc = real(ah, attr, inlen);
	if (!rc)
		last_ahn = attr->ahn;
	return rc;
}

/* libfabric 2.6.0 prov/efa/src/efa_av.h: what fi_getname gives for an efa endpoint */
struct efa_ep_addr_head {
	uint8_t raw[16];
	uint16_t qpn;
	uint16_t pad;
	uint32_t qkey;
};

static int is_pow2(uint32_t n)
{
	return n && !(n & (n - 1));
}

#define TRY(call)                                                                                          \
	do {                                                                                               \
		int rc_ = (call);                                                                          \
		if (rc_) {                                                                                 \
			printf("FAIL %s: %s (%d)\n", #call, fi_strerror(-rc_), rc_);                      \
			return 1;                                                                          \
		}                                                                                          \
	} while (0)

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("efa");
	hints->fabric_attr->name = strdup("efa-direct");
	int rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (rc || !info) {
		printf("no efa-direct fabric here (fi_getinfo: %s): run under tests/efasim/run 2.6.0\n", fi_strerror(-rc));
		return 77;
	}
	printf("libfabric %u.%u, fabric %s, domain %s\n", FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
	       info->fabric_attr->name, info->domain_attr->name);
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
	TRY(fi_domain(fabric, info, &domain, NULL));
	struct fi_efa_ops_gda *gda = NULL;
	check("fi_open_ops(FI_EFA_GDA_OPS) on efa-direct", 0,
	      fi_open_ops(&domain->fid, FI_EFA_GDA_OPS, 0, (void **)&gda, NULL));
	if (!gda)
		return 1;

	/* completion counters: absent from rdma-core 64, so from this libfabric */
	static uint64_t words[2];
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
	struct fi_efa_comp_cntr_init_attr cc = {0};
	cc.flags = FI_EFA_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM | FI_EFA_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM;
	cc.comp_cntr_ext_mem.type = FI_EFA_MEMORY_LOCATION_VA;
	cc.comp_cntr_ext_mem.ptr = (uint8_t *)&words[0];
	cc.err_cntr_ext_mem.type = FI_EFA_MEMORY_LOCATION_VA;
	cc.err_cntr_ext_mem.ptr = (uint8_t *)&words[1];
	struct fid_cntr *cntr = NULL;
#ifdef GDA_COMP_CNTR
	/* built against rdma-core main (a pre-release snapshot: libfabric
	 * 2.7.0a1): a device counter whose values live in the words given */
	if (getenv("EFASIM_COMP_CNTR") && !strcmp(getenv("EFASIM_COMP_CNTR"), "0"))
		check("cntr_open_ext (a device without completion counters)", 1,
		      gda->cntr_open_ext(domain, &cattr, &cntr, NULL, &cc) < 0);
	else {
		check("cntr_open_ext (rdma-core with efadv_create_comp_cntr, external memory)", 0,
		      gda->cntr_open_ext(domain, &cattr, &cntr, NULL, &cc));
		if (cntr)
			check("fi_close of that counter", 0, fi_close(&cntr->fid));
	}
#else
	check("cntr_open_ext (rdma-core without efadv_create_comp_cntr)", -FI_ENOSYS,
	      gda->cntr_open_ext(domain, &cattr, &cntr, NULL, &cc));
#endif

	/* cq_open_ext's argument checks, which come before the device's */
	struct fi_cq_attr qattr = {.size = 64, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD};
	struct fi_efa_cq_init_attr ext = {0};
	ext.flags = FI_EFA_CQ_INIT_FLAGS_EXT_MEM_DMABUF;
	ext.ext_mem_dmabuf.length = 4096;
	struct fid_cq *xcq = NULL;
	check("cq_open_ext with wait_obj FI_WAIT_FD", -FI_ENOSYS, gda->cq_open_ext(domain, &qattr, &ext, &xcq, NULL));
	qattr.wait_obj = FI_WAIT_UNSPEC;
	check("cq_open_ext with wait_obj FI_WAIT_UNSPEC", -FI_ENOSYS, gda->cq_open_ext(domain, &qattr, &ext, &xcq, NULL));
	qattr.wait_obj = FI_WAIT_NONE;
	ext.flags = 0;
	check("cq_open_ext without FI_EFA_CQ_INIT_FLAGS_EXT_MEM_DMABUF", -FI_EINVAL,
	      gda->cq_open_ext(domain, &qattr, &ext, &xcq, NULL));
	ext.flags = FI_EFA_CQ_INIT_FLAGS_EXT_MEM_DMABUF;
	ext.ext_mem_dmabuf.length = 0;
	check("cq_open_ext with ext_mem_dmabuf.length 0", -FI_EINVAL, gda->cq_open_ext(domain, &qattr, &ext, &xcq, NULL));

	/* two endpoints on one CQ and AV, enabled: their QPs exist */
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep[2];
	struct fi_av_attr aattr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cqa = {.size = 64, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
	TRY(fi_av_open(domain, &aattr, &av, NULL));
	TRY(fi_cq_open(domain, &cqa, &cq, NULL));
	for (int i = 0; i < 2; i++) {
		TRY(fi_endpoint(domain, info, &ep[i], NULL));
		TRY(fi_ep_bind(ep[i], &av->fid, 0));
		TRY(fi_ep_bind(ep[i], &cq->fid, FI_TRANSMIT | FI_RECV));
		TRY(fi_enable(ep[i]));
	}
	struct fi_efa_wq_attr sq, rq;
	check("query_qp_wqs on an enabled endpoint", 0, gda->query_qp_wqs(ep[0], &sq, &rq));
	printf("     SQ %u x %u B, max_batch %u; RQ %u x %u B\n", sq.num_entries, sq.entry_size, sq.max_batch,
	       rq.num_entries, rq.entry_size);
	check("SQ entry_size (efa_io_tx_wqe)", 64, sq.entry_size);
#ifdef GDA_WQ_CAPS
	/* libfabric >= 2.7 (2.7.0a1, a pre-release snapshot) passes rdma-core's
	 * efadv_wq_attr.caps on: 64-bit request ids unless EFASIM_REQ_ID_64=0 */
	int want64 = !(getenv("EFASIM_REQ_ID_64") && !strcmp(getenv("EFASIM_REQ_ID_64"), "0"));
#ifndef GDA_COMP_CNTR
	want64 = 0; /* rdma-core 64's headers: no caps to pass on */
#endif
	check("SQ caps FI_EFA_WQ_CAPS_64_BIT_REQ_ID as the device has them", want64,
	      !!(sq.caps & FI_EFA_WQ_CAPS_64_BIT_REQ_ID));
	check("RQ caps none", 0, rq.caps);
#endif
	check("SQ num_entries is a power of two", 1, is_pow2(sq.num_entries));
	check("SQ buffer and doorbell handed out", 1, sq.buffer && sq.doorbell);
	check("SQ max_batch in 1..num_entries", 1, sq.max_batch >= 1 && sq.max_batch <= sq.num_entries);
	check("RQ entry_size (efa_io_rx_desc)", 16, rq.entry_size);
	check("RQ num_entries is a power of two", 1, is_pow2(rq.num_entries));
	check("RQ buffer and doorbell handed out", 1, rq.buffer && rq.doorbell);
	struct fi_efa_cq_attr ca;
	check("query_cq", 0, gda->query_cq(cq, &ca));
	printf("     CQ %u x %u B\n", ca.num_entries, ca.entry_size);
	check("CQ entry_size (efa_io_rx_cdesc_ex, with SGID)", 32, ca.entry_size);
	check("CQ num_entries is a power of two, buffer handed out", 1, is_pow2(ca.num_entries) && ca.buffer);

	/* query_addr: endpoint 1 inserted into the AV, as endpoint 0 sees it */
	struct efa_ep_addr_head name[2];
	size_t len = sizeof(name);
	TRY(fi_getname(&ep[1]->fid, name, &len));
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	last_ahn = -1;
	check("fi_av_insert of endpoint 1", 1, fi_av_insert(av, name, 1, &fa, 0, NULL));
	check("the provider called efadv_query_ah at AV insert", 1, last_ahn >= 0);
	uint16_t ahn = 0, qpn = 0;
	uint32_t qkey = 0;
	check("query_addr", 0, gda->query_addr(ep[0], fa, &ahn, &qpn, &qkey));
	check("query_addr: the AH number efadv_query_ah gave", last_ahn, ahn);
	check("query_addr: endpoint 1's QPN (fi_getname)", name[0].qpn, qpn);
	check("query_addr: endpoint 1's qkey (fi_getname)", name[0].qkey, qkey);
	check("query_addr of an address not in the AV", -FI_EINVAL,
	      gda->query_addr(ep[0], FI_ADDR_NOTAVAIL, &ahn, &qpn, &qkey));

	/* get_mr_lkey */
	static char buf[4096];
	struct fid_mr *mr;
	TRY(fi_mr_reg(domain, buf, sizeof(buf), FI_SEND | FI_RECV | FI_READ | FI_WRITE, 0, 0, 0, &mr, NULL));
	uint64_t lkey = gda->get_mr_lkey(mr);
	printf("     MR lkey %#llx, fi_mr_key %#llx\n", (unsigned long long)lkey, (unsigned long long)fi_mr_key(mr));
	check("get_mr_lkey of a registered MR is a key", 1, lkey != FI_KEY_NOTAVAIL);

	fi_close(&mr->fid);
	for (int i = 0; i < 2; i++)
		fi_close(&ep[i]->fid);
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	printf("gda_ops_test: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
