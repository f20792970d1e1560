/* compcntr_test: completion counters on the simulated device (compcntr.c),
 * through rdma-core main's API (ibv_*comp_cntr*, efadv_create_comp_cntr),
 * which no libfabric release can drive (README). Built only against rdma-core
 * main's headers (tests/efasim/build V main).
 *   compcntr_test                 the API's rules (caps, refusals, set / inc /
 *                                 read, attach, destroy), then traffic from
 *                                 this process to a forked target process,
 *                                 once on the verbs path and once with WQEs
 *                                 written to the direct path's SQ, with the
 *                                 exact counter values on both sides
 *                                 and, where a GPU is, counters in a CUDA
 *                                 dma-buf (else a "skip GPU" line)
 *   EFASIM_COMP_CNTR=0 compcntr_test   a device without the cap: every
 *                                 counter verb refuses with EOPNOTSUPP
 * Each check prints a row "ok"/"FAIL"; exit 0 when every row is ok, 1 when
 * one is not, 77 without a simulated device. Run under tests/efasim/run
 * with LD_LIBRARY_PATH naming the sim-main libraries first. */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/efadv.h>
#include <infiniband/verbs.h>

static int failures;
static const char *who = "";

static void row(const char *what, int want, int got)
{
	printf("%s%-4s %-70s want %-10s got %s\n", who, want == got ? "ok" : "FAIL", what, want ? strerror(want) : "0",
	       got ? strerror(got) : "0");
	fflush(stdout);
	failures += want != got;
}

static void val(const char *what, uint64_t want, uint64_t got)
{
	printf("%s%-4s %-70s want %-10llu got %llu\n", who, want == got ? "ok" : "FAIL", what, (unsigned long long)want,
	       (unsigned long long)got);
	fflush(stdout);
	failures += want != got;
}

static void die(const char *what)
{
	printf("%sFAIL %s: %s\n", who, what, strerror(errno));
	exit(1);
}

/* errno of a create (0 on success, the counter destroyed again) */
static int create_errno(struct ibv_context *ctx, struct ibv_comp_cntr_init_attr *a,
			struct efadv_comp_cntr_init_attr *ea, uint32_t inlen)
{
	errno = 0;
	struct ibv_comp_cntr *c = ea ? efadv_create_comp_cntr(ctx, a, ea, inlen) : ibv_create_comp_cntr(ctx, a);
	if (c) {
		ibv_destroy_comp_cntr(c);
		return 0;
	}
	return errno ? errno : -1;
}

static uint64_t rd(struct ibv_comp_cntr *c, int err)
{
	uint64_t v = UINT64_MAX;
	int rc = err ? ibv_read_err_comp_cntr(c, &v) : ibv_read_comp_cntr(c, &v);
	return rc ? UINT64_MAX - (uint64_t)rc : v;
}

static struct ibv_cq_ex *make_cq(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct efadv_cq_init_attr eca = {0};
	struct ibv_cq_ex *cq = efadv_create_cq(ctx, &ca, &eca, sizeof(eca));
	if (!cq)
		die("efadv_create_cq");
	return cq;
}

static struct ibv_qp *make_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq_ex *cq)
{
	struct ibv_qp_init_attr_ex qa = {0};
	qa.qp_type = IBV_QPT_DRIVER;
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(cq);
	qa.pd = pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 32;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	struct efadv_qp_init_attr ea = {0};
	ea.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD;
	struct ibv_qp *qp = efadv_create_qp_ex(ctx, &qa, &ea, sizeof(ea));
	if (!qp)
		die("efadv_create_qp_ex");
	return qp;
}

enum { QKEY = 0x11111 };

static int qp_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = {.qp_state = s, .qkey = QKEY};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | (s == IBV_QPS_INIT ? IBV_QP_QKEY : 0));
}

static void to_rts(struct ibv_qp *qp)
{
	if (qp_state(qp, IBV_QPS_INIT) || qp_state(qp, IBV_QPS_RTR) || qp_state(qp, IBV_QPS_RTS))
		die("ibv_modify_qp");
}

static int attach(struct ibv_qp *qp, struct ibv_comp_cntr *c, uint32_t ops)
{
	struct ibv_qp_attach_comp_cntr_attr a = {.op_mask = ops};
	return ibv_qp_attach_comp_cntr(qp, c, &a);
}

/* a counter with both values in the caller's host memory (VA) */
static struct ibv_comp_cntr *va_cntr(struct ibv_context *ctx, uint64_t *comp, uint64_t *err)
{
	struct ibv_comp_cntr_init_attr a = {.type = IBV_COMP_CNTR_TYPE_WRS};
	struct efadv_comp_cntr_init_attr ea = {0};
	ea.flags = EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM | EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM;
	ea.comp_cntr_ext_mem.type = EFADV_MEMORY_LOCATION_VA;
	ea.comp_cntr_ext_mem.ptr = (uint8_t *)comp;
	ea.err_cntr_ext_mem.type = EFADV_MEMORY_LOCATION_VA;
	ea.err_cntr_ext_mem.ptr = (uint8_t *)err;
	return efadv_create_comp_cntr(ctx, &a, &ea, sizeof(ea));
}

/* ------------------------------------------------------ the API's rules */

static void api_rules(struct ibv_context *ctx, struct ibv_context *ctx2, struct ibv_pd *pd)
{
	struct ibv_comp_cntr_caps caps;
	row("ibv_query_comp_cntr_caps", 0, ibv_query_comp_cntr_caps(ctx, &caps));
	printf("     caps: max_counters %u, max_value %#llx, supported_qp_attach_ops %#x (values ASSUMED)\n",
	       caps.max_counters, (unsigned long long)caps.max_value, caps.supported_qp_attach_ops);
	val("caps: supported_qp_attach_ops = the six ops", 0x3f, caps.supported_qp_attach_ops);
	val("caps: max_counters > 0", 1, caps.max_counters > 0);
	row("_ibv_query_comp_cntr_caps with a short caps struct", EINVAL, _ibv_query_comp_cntr_caps(ctx, &caps, 8));

	struct ibv_comp_cntr_init_attr a = {.type = IBV_COMP_CNTR_TYPE_WRS};
	struct ibv_comp_cntr_init_attr bytes = {.type = IBV_COMP_CNTR_TYPE_BYTES};
	struct ibv_comp_cntr_init_attr flags = {.type = IBV_COMP_CNTR_TYPE_WRS, .flags = 1};
	struct ibv_comp_cntr_init_attr mask = {.comp_mask = 1, .type = IBV_COMP_CNTR_TYPE_WRS};
	row("ibv_create_comp_cntr", 0, create_errno(ctx, &a, NULL, 0));
	row("ibv_create_comp_cntr type BYTES (rdma-core: WRS only)", EOPNOTSUPP, create_errno(ctx, &bytes, NULL, 0));
	row("ibv_create_comp_cntr flags 1", EOPNOTSUPP, create_errno(ctx, &flags, NULL, 0));
	row("ibv_create_comp_cntr comp_mask 1", EOPNOTSUPP, create_errno(ctx, &mask, NULL, 0));

	struct {
		struct efadv_comp_cntr_init_attr ea;
		uint64_t tail;
	} big = {{0}, 1};
	struct efadv_comp_cntr_init_attr ea = {0};
	row("efadv_create_comp_cntr, internal memory", 0, create_errno(ctx, &a, &ea, sizeof(ea)));
	row("efadv_create_comp_cntr inlen short of err_cntr_ext_mem", EINVAL,
	    create_errno(ctx, &a, &ea, offsetof(struct efadv_comp_cntr_init_attr, err_cntr_ext_mem)));
	row("efadv_create_comp_cntr inlen past the struct, non-zero tail", EINVAL,
	    create_errno(ctx, &a, &big.ea, sizeof(big)));
	big.tail = 0;
	row("efadv_create_comp_cntr inlen past the struct, zero tail", 0, create_errno(ctx, &a, &big.ea, sizeof(big)));
	ea.comp_mask = 1;
	row("efadv_create_comp_cntr comp_mask 1", EOPNOTSUPP, create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.comp_mask = 0;
	ea.flags = 1u << 2;
	row("efadv_create_comp_cntr unknown flag", EOPNOTSUPP, create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.flags = 0;
	ea.err_cntr_ext_mem.type = 2;
	row("efadv_create_comp_cntr unknown memory type (flag unset: checked anyway)", EOPNOTSUPP,
	    create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.err_cntr_ext_mem.type = EFADV_MEMORY_LOCATION_VA;

	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *gone = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED || ro == MAP_FAILED)
		die("mmap");
	munmap(gone, (size_t)pg);
	static uint64_t words[4] __attribute__((aligned(64)));
	ea.flags = EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM;
	ea.comp_cntr_ext_mem.ptr = gone;
	row("VA counter memory unmapped (the kernel's pin)", EFAULT, create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.comp_cntr_ext_mem.ptr = ro;
	row("VA counter memory read-only (pinned for LOCAL_WRITE)", EFAULT, create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.comp_cntr_ext_mem.ptr = (uint8_t *)words + 4;
	row("VA counter memory not 8-byte aligned (the driver)", EINVAL, create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.comp_cntr_ext_mem.type = EFADV_MEMORY_LOCATION_DMABUF;
	ea.comp_cntr_ext_mem.ptr = NULL;
	ea.comp_cntr_ext_mem.dmabuf.fd = -1;
	row("DMABUF counter memory, fd -1", EBADF, create_errno(ctx, &a, &ea, sizeof(ea)));
	int devnull = open("/dev/null", O_RDWR);
	ea.comp_cntr_ext_mem.dmabuf.fd = devnull;
	row("DMABUF counter memory, fd that is no dma-buf", EINVAL, create_errno(ctx, &a, &ea, sizeof(ea)));
	close(devnull);
	/* a dma-buf without a GPU: a memfd named efasim-dmabuf passes for one of
	 * its size (EFASIM_TEST_FAKE_DMABUF=1, set by main): the kernel's import
	 * checks, then efasim's registry (no MR of it: its limitation) */
	int fake = memfd_create("efasim-dmabuf", MFD_CLOEXEC);
	if (fake < 0 || ftruncate(fake, 4096))
		die("memfd_create");
	ea.comp_cntr_ext_mem.dmabuf.fd = fake;
	ea.comp_cntr_ext_mem.dmabuf.offset = 4096;
	row("DMABUF counter memory past the dma-buf's end (ib_umem_dmabuf_get)", EINVAL,
	    create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.comp_cntr_ext_mem.dmabuf.offset = 8;
	row("DMABUF counter memory, no MR of its dma-buf (efasim cannot resolve it)", EOPNOTSUPP,
	    create_errno(ctx, &a, &ea, sizeof(ea)));
	ea.comp_cntr_ext_mem.dmabuf.offset = 0;
	close(fake);
	munmap(ro, (size_t)pg);

	/* set / inc / read: rdma-core's internal words */
	struct ibv_comp_cntr *c = ibv_create_comp_cntr(ctx, &a);
	if (!c)
		die("ibv_create_comp_cntr");
	val("internal: read after create", 0, rd(c, 0));
	val("internal: read_err after create", 0, rd(c, 1));
	row("ibv_set_comp_cntr 5", 0, ibv_set_comp_cntr(c, 5));
	row("ibv_inc_comp_cntr 3", 0, ibv_inc_comp_cntr(c, 3));
	val("internal: read", 8, rd(c, 0));
	row("ibv_set_err_comp_cntr 7", 0, ibv_set_err_comp_cntr(c, 7));
	row("ibv_inc_err_comp_cntr 2", 0, ibv_inc_err_comp_cntr(c, 2));
	val("internal: read_err", 9, rd(c, 1));
	val("internal: read unchanged by the error count", 8, rd(c, 0));

	/* VA: the values are in the caller's words */
	words[0] = words[1] = 0xdeadbeef;
	struct ibv_comp_cntr *v = va_cntr(ctx, &words[0], &words[1]);
	if (!v)
		die("efadv_create_comp_cntr VA");
	val("VA: the device wrote 0 to the completion word at create (ASSUMED)", 0, words[0]);
	val("VA: ... and to the error word", 0, words[1]);
	ibv_set_comp_cntr(v, 11);
	ibv_inc_err_comp_cntr(v, 4);
	val("VA: set 11 lands in the completion word", 11, words[0]);
	val("VA: inc_err 4 lands in the error word", 4, words[1]);
	val("VA: ibv_read_comp_cntr loads the word", 11, rd(v, 0));
	words[0] = 42; /* read is a load, not a command */
	val("VA: ibv_read_comp_cntr after a store by the application", 42, rd(v, 0));

	/* attach */
	struct ibv_cq_ex *cq = make_cq(ctx);
	struct ibv_qp *qp = make_qp(ctx, pd, cq);
	row("attach op_mask 0", EINVAL, attach(qp, c, 0));
	row("attach op_mask 1<<6 only (rdma-core drops unknown bits: 0)", EINVAL, attach(qp, c, 1u << 6));
	row("attach SEND in RESET", 0, attach(qp, c, IBV_QP_ATTACH_COMP_CNTR_OP_SEND));
	row("attach another counter SEND|RECV: SEND taken", EBUSY,
	    attach(qp, v, IBV_QP_ATTACH_COMP_CNTR_OP_SEND | IBV_QP_ATTACH_COMP_CNTR_OP_RECV));
	row("attach the same counter SEND again", EBUSY, attach(qp, c, IBV_QP_ATTACH_COMP_CNTR_OP_SEND));
	qp_state(qp, IBV_QPS_INIT);
	row("attach another counter RECV in INIT", 0, attach(qp, v, IBV_QP_ATTACH_COMP_CNTR_OP_RECV));
	qp_state(qp, IBV_QPS_RTR);
	row("attach RDMA_READ in RTR", EINVAL, attach(qp, c, IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_READ));
	qp_state(qp, IBV_QPS_RTS);
	row("attach RDMA_WRITE in RTS", EINVAL, attach(qp, c, IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_WRITE));
	if (ctx2) {
		struct ibv_pd *pd2 = ibv_alloc_pd(ctx2);
		struct ibv_cq_ex *cq2 = make_cq(ctx2);
		struct ibv_qp *qp2 = make_qp(ctx2, pd2, cq2);
		row("attach a counter of NIC 0 to a QP of NIC 1 (ASSUMED EINVAL)", EINVAL,
		    attach(qp2, c, IBV_QP_ATTACH_COMP_CNTR_OP_SEND));
		ibv_destroy_qp(qp2);
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq2));
		ibv_dealloc_pd(pd2);
	}
	row("ibv_destroy_comp_cntr attached to a QP", EBUSY, ibv_destroy_comp_cntr(c));
	row("ibv_destroy_qp", 0, ibv_destroy_qp(qp));
	row("ibv_destroy_comp_cntr once its QP is gone", 0, ibv_destroy_comp_cntr(c));
	row("ibv_destroy_comp_cntr (VA)", 0, ibv_destroy_comp_cntr(v));
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));

	/* as many as the caps say, then ENOMEM */
	struct ibv_comp_cntr **all = calloc(caps.max_counters + 1, sizeof(*all));
	uint32_t n = 0;
	while (n < caps.max_counters && (all[n] = ibv_create_comp_cntr(ctx, &a)))
		n++;
	val("counters created up to caps.max_counters", caps.max_counters, n);
	errno = 0;
	all[n] = ibv_create_comp_cntr(ctx, &a);
	row("one more", ENOMEM, all[n] ? 0 : errno);
	if (all[n])
		n++;
	for (uint32_t i = 0; i < n; i++)
		ibv_destroy_comp_cntr(all[i]);
	free(all);
}

/* -------------------------------------------------------------- traffic */

/* what the target tells the initiator, and back */
struct info {
	uint8_t gid[16];
	uint32_t qpn, rkey;
	uint64_t addr;
};
struct target_vals {
	uint64_t recv[2], rem[2];
	uint32_t rx_ok, rx_err;
};

enum { MSG = 64, RBUF = 256, NRECV = 5, BAD_LKEY = 0xdead00 };

static void xwrite(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		die("pipe write");
}

static int xread(int fd, void *p, size_t n)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	if (poll(&pf, 1, 30000) != 1)
		return -1; /* the other side is gone or stuck */
	return read(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static struct ibv_context *open_nic(int i)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	if (!l || n <= i)
		return NULL;
	struct ibv_context *c = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	return c;
}

static struct ibv_ah *make_ah(struct ibv_pd *pd, const uint8_t gid[16])
{
	struct ibv_ah_attr aa = {0};
	aa.is_global = 1;
	aa.port_num = 1;
	memcpy(aa.grh.dgid.raw, gid, 16);
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	if (!ah)
		die("ibv_create_ah");
	return ah;
}

/* The target: a QP per round with a RECV counter (rdma-core's words) and a
 * REMOTE_RDMA_READ|REMOTE_RDMA_WRITE counter (VA words); the initiator's
 * process writes both. 5 receives per round: 3 good, 1 with a bad lkey
 * (the 4th send fails on it), 1 for the write with immediate. */
static int target(int to_init, int from_init)
{
	who = "target: ";
	struct ibv_context *ctx = open_nic(0);
	if (!ctx)
		die("ibv_open_device");
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	size_t len = 1 << 16;
	char *buf = aligned_alloc(4096, len);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!pd || !buf || !mr)
		die("target setup");
	union ibv_gid gid;
	ibv_query_gid(ctx, 1, 0, &gid);
	struct ibv_ah *ah = make_ah(pd, gid.raw); /* the requester's (same simulated host): RDMA needs it */
	struct ibv_cq_ex *cq = make_cq(ctx);
	struct ibv_comp_cntr_init_attr a = {.type = IBV_COMP_CNTR_TYPE_WRS};
	struct ibv_comp_cntr *recv_c = ibv_create_comp_cntr(ctx, &a);
	static uint64_t rem_w[2] __attribute__((aligned(8)));
	struct ibv_comp_cntr *rem_c = va_cntr(ctx, &rem_w[0], &rem_w[1]);
	if (!recv_c || !rem_c)
		die("target counters");
	struct ibv_qp *qps[2];
	for (int round = 0; round < 2; round++) {
		struct ibv_qp *qp = qps[round] = make_qp(ctx, pd, cq);
		if (attach(qp, recv_c, IBV_QP_ATTACH_COMP_CNTR_OP_RECV) ||
		    attach(qp, rem_c, IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_READ |
					      IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_WRITE))
			die("target attach");
		to_rts(qp);
		for (int i = 0; i < NRECV; i++) {
			struct ibv_sge s = {(uintptr_t)buf + (size_t)i * RBUF, RBUF, i == 3 ? BAD_LKEY : mr->lkey};
			struct ibv_recv_wr w = {.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1}, *bad;
			if (ibv_post_recv(qp, &w, &bad))
				die("ibv_post_recv");
		}
		struct info in = {.qpn = qp->qp_num, .rkey = mr->rkey, .addr = (uintptr_t)buf + 4096};
		memcpy(in.gid, gid.raw, 16);
		xwrite(to_init, &in, sizeof(in));
		char go;
		if (xread(from_init, &go, 1))
			die("waiting for the initiator");
		struct target_vals tv = {.recv = {rd(recv_c, 0), rd(recv_c, 1)}, .rem = {rd(rem_c, 0), rd(rem_c, 1)}};
		struct ibv_poll_cq_attr pa = {0};
		int rc = ibv_start_poll(cq, &pa);
		while (rc == 0) {
			if (cq->status == IBV_WC_SUCCESS)
				tv.rx_ok++;
			else
				tv.rx_err++;
			rc = ibv_next_poll(cq);
		}
		if (rc != ENOENT || tv.rx_ok + tv.rx_err)
			ibv_end_poll(cq);
		xwrite(to_init, &tv, sizeof(tv));
	}
	row("destroy the RECV counter while attached", EBUSY, ibv_destroy_comp_cntr(recv_c));
	for (int round = 0; round < 2; round++)
		row("ibv_destroy_qp", 0, ibv_destroy_qp(qps[round]));
	row("destroy the RECV counter", 0, ibv_destroy_comp_cntr(recv_c));
	row("destroy the REMOTE counter", 0, ibv_destroy_comp_cntr(rem_c));
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return failures ? 1 : 0;
}

/* --- the initiator's two ways to post: verbs (ibv_wr_*) and direct WQEs */

enum { W_SEND, W_WRITE, W_WRITE_IMM, W_READ, W_BAD_WQE };

struct peer {
	struct ibv_ah *ah;
	uint32_t ahn, qpn, rkey;
	uint64_t raddr;
	uint32_t lkey;
	uint64_t laddr;
};

static void post_verbs(struct ibv_qp *qp, const struct peer *p, int op, uint32_t rkey, uint64_t id)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case W_SEND: ibv_wr_send(x); break;
	case W_WRITE: ibv_wr_rdma_write(x, rkey, p->raddr); break;
	case W_WRITE_IMM: ibv_wr_rdma_write_imm(x, rkey, p->raddr, htobe32(7)); break;
	case W_READ: ibv_wr_rdma_read(x, rkey, p->raddr); break;
	}
	ibv_wr_set_ud_addr(x, p->ah, p->qpn, QKEY);
	ibv_wr_set_sge(x, p->lkey, p->laddr, MSG);
	if (ibv_wr_complete(x))
		die("ibv_wr_complete");
}

/* rdma-core 64's efa_io_tx_wqe (providers/efa/efa_io_defs.h), as efasim's direct.c */
struct tx_buf {
	uint32_t length, lkey, lo, hi;
};
struct tx_wqe {
	uint16_t req_id;
	uint8_t ctrl1, ctrl2;
	uint16_t dest_qp_num, length;
	uint32_t immediate_data;
	uint16_t ah;
	uint8_t ctrl3, reserved;
	uint32_t qkey;
	uint8_t reserved2[12];
	union {
		struct tx_buf sgl[2];
		struct {
			struct tx_buf remote, local;
		} rdma;
	} d;
};
_Static_assert(sizeof(struct tx_wqe) == 64, "efa_io_tx_wqe is 64 bytes");

struct direct {
	struct efadv_wq_attr sq;
	struct efadv_cq_attr cq;
	uint32_t pc, cc;
};

static void post_direct(struct direct *d, const struct peer *p, int op, uint32_t rkey, uint16_t id)
{
	struct tx_wqe w;
	memset(&w, 0, sizeof(w));
	uint32_t n = d->sq.num_entries;
	w.req_id = id;
	w.ctrl1 = 0x80; /* meta_desc */
	w.ctrl2 = (uint8_t)(((d->pc / n) & 1) | 1u << 2 | 1u << 3 | 1u << 4); /* phase, first, last, comp_req */
	w.dest_qp_num = (uint16_t)p->qpn;
	w.ah = (uint16_t)p->ahn;
	w.qkey = QKEY;
	struct tx_buf local = {MSG, p->lkey, (uint32_t)p->laddr, (uint32_t)(p->laddr >> 32)};
	struct tx_buf remote = {MSG, rkey, (uint32_t)p->raddr, (uint32_t)(p->raddr >> 32)};
	if (op == W_SEND) {
		w.length = 1;
		w.d.sgl[0] = local;
	} else {
		w.ctrl1 |= op == W_READ ? 1 : 2;
		if (op == W_WRITE_IMM) {
			w.ctrl1 |= 1u << 4;
			w.immediate_data = 7;
		}
		w.length = op == W_BAD_WQE ? 2 : 1; /* RDMA takes one local buffer */
		w.d.rdma.remote = remote;
		w.d.rdma.local = local;
	}
	memcpy(d->sq.buffer + (size_t)(d->pc & (n - 1)) * sizeof(w), &w, sizeof(w));
	d->pc++;
	__atomic_store_n(d->sq.doorbell, (uint16_t)d->pc, __ATOMIC_RELEASE);
}

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* n completions, on the verbs CQ or the direct CQ's buffer; the errors */
static int wait_completions(struct ibv_cq_ex *cq, struct direct *d, int n, int *errors)
{
	int got = 0;
	*errors = 0;
	uint64_t end = now_ms() + 20000;
	while (got < n && now_ms() < end) {
		if (d) {
			uint32_t m = d->cq.num_entries;
			const uint8_t *e = d->cq.buffer + (size_t)(d->cc & (m - 1)) * d->cq.entry_size;
			uint8_t phase = (uint8_t)(((d->cc / m) & 1) ^ 1);
			if ((__atomic_load_n(e + 3, __ATOMIC_ACQUIRE) & 1) != phase) {
				usleep(100);
				continue;
			}
			*errors += e[2] != 0; /* efa_io_cdesc_common.status */
			d->cc++;
			got++;
			continue;
		}
		struct ibv_poll_cq_attr pa = {0};
		if (ibv_start_poll(cq, &pa)) {
			usleep(100);
			continue;
		}
		do {
			*errors += cq->status != IBV_WC_SUCCESS;
			got++;
		} while (ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return got;
}

static int initiator(int to_tgt, int from_tgt, pid_t child)
{
	who = "";
	struct ibv_context *ctx = open_nic(0);
	if (!ctx)
		die("ibv_open_device");
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 1 << 16);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 1 << 16,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!pd || !buf || !mr)
		die("initiator setup");
	memset(buf, 'x', 1 << 16);
	struct ibv_comp_cntr_init_attr a = {.type = IBV_COMP_CNTR_TYPE_WRS};
	struct ibv_comp_cntr *send_c = ibv_create_comp_cntr(ctx, &a);
	static uint64_t rdma_w[2] __attribute__((aligned(8)));
	struct ibv_comp_cntr *rdma_c = va_cntr(ctx, &rdma_w[0], &rdma_w[1]);
	if (!send_c || !rdma_c)
		die("initiator counters");
	struct ibv_qp *qps[2];
	struct ibv_cq_ex *cqs[2];
	struct ibv_ah *ah = NULL;
	/* per round: SEND comp/err, RDMA comp/err, RECV comp/err, REMOTE comp */
	uint64_t want[7] = {0};
	for (int round = 0; round < 2; round++) {
		const char *path = round ? "direct" : "verbs";
		struct info in;
		if (xread(from_tgt, &in, sizeof(in)))
			die("the target's QP");
		if (!ah)
			ah = make_ah(pd, in.gid);
		struct efadv_ah_attr aa = {0};
		efadv_query_ah(ah, &aa, sizeof(aa));
		struct peer p = {ah, aa.ahn, in.qpn, in.rkey, in.addr, mr->lkey, (uintptr_t)buf};
		struct ibv_cq_ex *cq = cqs[round] = make_cq(ctx);
		struct ibv_qp *qp = qps[round] = make_qp(ctx, pd, cq);
		/* both counters on both QPs: several QPs may share a counter */
		if (attach(qp, send_c, IBV_QP_ATTACH_COMP_CNTR_OP_SEND) ||
		    attach(qp, rdma_c, IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_READ | IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_WRITE))
			die("initiator attach");
		to_rts(qp); /* rnr_retry 0: a send that finds no receive fails at once */
		struct direct d = {0};
		if (round) {
			if (efadv_query_qp_wqs(qp, &d.sq, &(struct efadv_wq_attr){0}, sizeof(d.sq)) ||
			    efadv_query_cq(ibv_cq_ex_to_cq(cq), &d.cq, sizeof(d.cq)))
				die("the direct path's queues");
		}
		/* 3 sends, 1 send onto the bad receive, 4 writes, 1 write with
		 * immediate (the 5th receive), 2 reads, a write and a read with a
		 * bad rkey, 1 send with no receive left (RNR), and on the direct
		 * path 1 malformed RDMA WQE (2 local buffers) */
		static const int ops[] = {W_SEND, W_SEND, W_SEND, W_SEND, W_WRITE, W_WRITE, W_WRITE, W_WRITE,
					  W_WRITE_IMM, W_READ, W_READ, W_WRITE, W_READ, W_SEND, W_BAD_WQE};
		int nops = round ? 15 : 14;
		for (int i = 0; i < nops; i++) {
			uint32_t rkey = i == 11 || i == 12 ? in.rkey ^ 0x5a0000 : in.rkey;
			if (round)
				post_direct(&d, &p, ops[i], rkey, (uint16_t)i);
			else
				post_verbs(qp, &p, ops[i], rkey, (uint64_t)i);
		}
		int errors = 0, got = wait_completions(cq, round ? &d : NULL, nops, &errors);
		char what[128];
		snprintf(what, sizeof(what), "%s path: completions (errors)", path);
		val(what, (uint64_t)nops * 100 + (round ? 5 : 4), (uint64_t)got * 100 + (uint64_t)errors);
		want[0] += 3; /* SEND: 3 good sends */
		want[1] += 2; /* the send onto the bad receive, the RNR */
		want[2] += 7; /* RDMA_WRITE/READ: 4 writes, 1 with immediate, 2 reads */
		want[3] += round ? 3 : 2; /* bad rkey write, bad rkey read, the malformed WQE */
		want[4] += 3; /* RECV at the target: 3 good sends */
		want[5] += 1; /* the send onto the bad receive */
		want[6] += 7; /* REMOTE_RDMA_*: 4 writes, 1 with immediate, 2 reads; no errors */
		snprintf(what, sizeof(what), "%s path: initiator SEND counter, completions", path);
		val(what, want[0], rd(send_c, 0));
		snprintf(what, sizeof(what), "%s path: initiator SEND counter, errors", path);
		val(what, want[1], rd(send_c, 1));
		snprintf(what, sizeof(what), "%s path: initiator RDMA_READ|RDMA_WRITE counter (VA), completions", path);
		val(what, want[2], rd(rdma_c, 0));
		snprintf(what, sizeof(what), "%s path: ... its memory word", path);
		val(what, want[2], rdma_w[0]);
		snprintf(what, sizeof(what), "%s path: initiator RDMA_READ|RDMA_WRITE counter (VA), errors", path);
		val(what, want[3], rd(rdma_c, 1));
		xwrite(to_tgt, "g", 1);
		struct target_vals tv;
		if (xread(from_tgt, &tv, sizeof(tv)))
			die("the target's counters");
		snprintf(what, sizeof(what), "%s path: target RECV counter, completions", path);
		val(what, want[4], tv.recv[0]);
		snprintf(what, sizeof(what), "%s path: target RECV counter, errors", path);
		val(what, want[5], tv.recv[1]);
		snprintf(what, sizeof(what), "%s path: target REMOTE_RDMA_READ|REMOTE_RDMA_WRITE counter (VA), completions",
			 path);
		val(what, want[6], tv.rem[0]);
		snprintf(what, sizeof(what), "%s path: target REMOTE_* counter, errors (none for REMOTE ops)", path);
		val(what, 0, tv.rem[1]);
		snprintf(what, sizeof(what), "%s path: target receive completions ok/errors this round", path);
		val(what, 401, (uint64_t)tv.rx_ok * 100 + tv.rx_err);
	}
	row("destroy the SEND counter while two QPs have it", EBUSY, ibv_destroy_comp_cntr(send_c));
	row("ibv_destroy_qp (verbs round)", 0, ibv_destroy_qp(qps[0]));
	row("destroy the SEND counter while one QP has it", EBUSY, ibv_destroy_comp_cntr(send_c));
	row("ibv_destroy_qp (direct round)", 0, ibv_destroy_qp(qps[1]));
	row("destroy the SEND counter", 0, ibv_destroy_comp_cntr(send_c));
	row("destroy the RDMA counter", 0, ibv_destroy_comp_cntr(rdma_c));
	for (int i = 0; i < 2; i++)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqs[i]));
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	int st = 0;
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("FAIL the target process: status %#x\n", st);
		failures++;
	}
	return failures;
}

/* ------------------------------------------- GPU memory (a CUDA dma-buf) */

#ifdef EFASIM_HAVE_CUDA
#include <cuda.h>
#include <dlfcn.h>

/* Counters in GPU memory, in this process: a DMABUF counter without a CPU
 * mapping (read EOPNOTSUPP), its values checked with cuMemcpyDtoH after
 * set / inc and after loopback traffic (SEND and REMOTE_RDMA_WRITE). */
static void gpu_counters(void)
{
	struct {
		CUresult (*Init)(unsigned);
		CUresult (*DeviceGetCount)(int *);
		CUresult (*DeviceGet)(CUdevice *, int);
		CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
		CUresult (*CtxSetCurrent)(CUcontext);
		CUresult (*MemAlloc)(CUdeviceptr *, size_t);
		CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
		CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
		CUresult (*MemGetHandleForAddressRange)(void *, CUdeviceptr, size_t, CUmemRangeHandleType,
							unsigned long long);
	} cu;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		printf("skip GPU (dma-buf) counters: no CUDA driver here (%s)\n", dlerror());
		return;
	}
#define SYM(f, n)                                                                                          \
	if (!(*(void **)&cu.f = dlsym(h, n))) {                                                            \
		printf("skip GPU (dma-buf) counters: libcuda.so.1 lacks %s\n", n);                        \
		return;                                                                                    \
	}
	SYM(Init, "cuInit");
	SYM(DeviceGetCount, "cuDeviceGetCount");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent");
	SYM(MemAlloc, "cuMemAlloc_v2");
	SYM(MemsetD8, "cuMemsetD8_v2");
	SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(MemGetHandleForAddressRange, "cuMemGetHandleForAddressRange");
#undef SYM
	int ngpu = 0;
	CUdevice dev;
	CUcontext cctx;
	CUdeviceptr d = 0;
	const size_t len = 2 << 20;
	int fd = -1;
	if (cu.Init(0) || cu.DeviceGetCount(&ngpu) || ngpu < 1 || cu.DeviceGet(&dev, 0) ||
	    cu.PrimaryCtxRetain(&cctx, dev) || cu.CtxSetCurrent(cctx) || cu.MemAlloc(&d, len) ||
	    cu.MemsetD8(d, 0xab, len) ||
	    cu.MemGetHandleForAddressRange(&fd, d, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0)) {
		printf("skip GPU (dma-buf) counters: no usable GPU or no CUDA dma-buf here\n");
		return;
	}
	struct ibv_context *ctx = open_nic(0);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_comp_cntr_init_attr a = {.type = IBV_COMP_CNTR_TYPE_WRS};
	struct efadv_comp_cntr_init_attr ea[2];
	for (int i = 0; i < 2; i++) {
		memset(&ea[i], 0, sizeof(ea[i]));
		ea[i].flags = EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM | EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM;
		ea[i].comp_cntr_ext_mem.type = ea[i].err_cntr_ext_mem.type = EFADV_MEMORY_LOCATION_DMABUF;
		ea[i].comp_cntr_ext_mem.dmabuf.fd = ea[i].err_cntr_ext_mem.dmabuf.fd = fd;
		ea[i].comp_cntr_ext_mem.dmabuf.offset = 0x1000 + 16 * (uint64_t)i;
		ea[i].err_cntr_ext_mem.dmabuf.offset = 0x1008 + 16 * (uint64_t)i;
	}
	row("GPU: DMABUF counter before an MR of its dma-buf (efasim cannot resolve it)", EOPNOTSUPP,
	    create_errno(ctx, &a, &ea[0], sizeof(ea[0])));
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_mr *gmr = ibv_reg_dmabuf_mr(pd, 0, len, d, fd, acc);
	if (!gmr) {
		row("GPU: ibv_reg_dmabuf_mr of the whole allocation", 0, errno);
		return;
	}
	struct ibv_comp_cntr *send_c = efadv_create_comp_cntr(ctx, &a, &ea[0], sizeof(ea[0]));
	struct ibv_comp_cntr *rem_c = efadv_create_comp_cntr(ctx, &a, &ea[1], sizeof(ea[1]));
	row("GPU: DMABUF counters (no CPU mapping) once an MR covers them", 0, send_c && rem_c ? 0 : errno);
	if (!send_c || !rem_c)
		return;
	uint64_t w[4] = {1, 1, 1, 1};
	cu.MemcpyDtoH(w, d + 0x1000, sizeof(w));
	val("GPU: the device wrote 0 to all four words at create (ASSUMED)", 0, w[0] | w[1] | w[2] | w[3]);
	uint64_t v;
	row("GPU: ibv_read_comp_cntr without a CPU mapping", EOPNOTSUPP, ibv_read_comp_cntr(send_c, &v));
	row("GPU: ibv_read_err_comp_cntr without a CPU mapping", EOPNOTSUPP, ibv_read_err_comp_cntr(send_c, &v));
	ibv_set_comp_cntr(send_c, 5);
	ibv_inc_err_comp_cntr(send_c, 2);
	cu.MemcpyDtoH(w, d + 0x1000, 16);
	val("GPU: set 5 lands in GPU memory", 5, w[0]);
	val("GPU: inc_err 2 lands in GPU memory", 2, w[1]);

	/* loopback: QP a sends and writes to QP b of this process */
	struct ibv_cq_ex *cq = make_cq(ctx);
	struct ibv_qp *qa = make_qp(ctx, pd, cq), *qb = make_qp(ctx, pd, cq);
	attach(qa, send_c, IBV_QP_ATTACH_COMP_CNTR_OP_SEND);
	attach(qb, rem_c, IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_WRITE);
	to_rts(qa);
	to_rts(qb);
	char *hb = aligned_alloc(4096, 1 << 16);
	struct ibv_mr *hmr = ibv_reg_mr(pd, hb, 1 << 16, acc);
	union ibv_gid gid;
	ibv_query_gid(ctx, 1, 0, &gid);
	struct ibv_ah *ah = make_ah(pd, gid.raw);
	for (int i = 0; i < 3; i++) {
		struct ibv_sge s = {(uintptr_t)hb + 8192 + (size_t)i * RBUF, RBUF, hmr->lkey};
		struct ibv_recv_wr rw = {.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1}, *bad;
		ibv_post_recv(qb, &rw, &bad);
	}
	struct peer p = {ah, 0, qb->qp_num, gmr->rkey, (uintptr_t)d + 65536, hmr->lkey, (uintptr_t)hb};
	for (int i = 0; i < 3; i++)
		post_verbs(qa, &p, W_SEND, 0, (uint64_t)i);
	for (int i = 0; i < 2; i++)
		post_verbs(qa, &p, W_WRITE, gmr->rkey, (uint64_t)(10 + i));
	int errors = 0;
	val("GPU: loopback completions, 3 sends and their receives, 2 writes into GPU memory", 8,
	    (uint64_t)wait_completions(cq, NULL, 8, &errors));
	val("GPU: ... errors", 0, (uint64_t)errors);
	cu.MemcpyDtoH(w, d + 0x1000, sizeof(w));
	val("GPU: SEND counter in GPU memory: 5 + 3 sends", 8, w[0]);
	val("GPU: REMOTE_RDMA_WRITE counter in GPU memory", 2, w[2]);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	row("GPU: destroy the DMABUF counters", 0, ibv_destroy_comp_cntr(send_c) | ibv_destroy_comp_cntr(rem_c));
	ibv_destroy_ah(ah);
	ibv_dereg_mr(hmr);
	ibv_dereg_mr(gmr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	close(fd);
}
#else
static void gpu_counters(void)
{
	printf("skip GPU (dma-buf) counters: built without cuda.h\n");
}
#endif

/* --------------------------------------------------- without the cap */

static int no_cap(struct ibv_context *ctx)
{
	struct efadv_device_attr da = {0};
	efadv_query_device(ctx, &da, sizeof(da));
	val("EFASIM_COMP_CNTR=0: efadv_query_device has no COMP_CNTR cap", 0,
	    da.device_caps & EFADV_DEVICE_ATTR_CAPS_COMP_CNTR);
	struct ibv_comp_cntr_caps caps;
	row("EFASIM_COMP_CNTR=0: ibv_query_comp_cntr_caps (ASSUMED)", EOPNOTSUPP, ibv_query_comp_cntr_caps(ctx, &caps));
	struct ibv_comp_cntr_init_attr a = {.type = IBV_COMP_CNTR_TYPE_WRS};
	struct efadv_comp_cntr_init_attr ea = {0};
	row("EFASIM_COMP_CNTR=0: ibv_create_comp_cntr", EOPNOTSUPP, create_errno(ctx, &a, NULL, 0));
	row("EFASIM_COMP_CNTR=0: efadv_create_comp_cntr", EOPNOTSUPP, create_errno(ctx, &a, &ea, sizeof(ea)));
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *fake = getenv("EFASIM_TEST_FAKE_DMABUF");
	if (!fake || strcmp(fake, "1")) { /* read when the simulator loads: before main */
		setenv("EFASIM_TEST_FAKE_DMABUF", "1", 1);
		execv("/proc/self/exe", argv);
		die("execv /proc/self/exe");
	}
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || !n) {
		printf("no simulated device (run under tests/efasim/run with the sim-main libraries)\n");
		return 77;
	}
	ibv_free_device_list(list);
	const char *e = getenv("EFASIM_COMP_CNTR");
	if (e && !strcmp(e, "0")) {
		struct ibv_context *ctx = open_nic(0);
		if (!ctx)
			die("ibv_open_device");
		return no_cap(ctx);
	}
	struct ibv_context *ctx = open_nic(0), *ctx2 = open_nic(1);
	if (!ctx)
		die("ibv_open_device");
	struct efadv_device_attr da = {0};
	efadv_query_device(ctx, &da, sizeof(da));
	val("efadv_query_device: EFADV_DEVICE_ATTR_CAPS_COMP_CNTR", EFADV_DEVICE_ATTR_CAPS_COMP_CNTR,
	    da.device_caps & EFADV_DEVICE_ATTR_CAPS_COMP_CNTR);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	api_rules(ctx, ctx2, pd); /* before the target exists: the counter limit is the NIC's */
	ibv_dealloc_pd(pd);
	if (ctx2)
		ibv_close_device(ctx2);
	ibv_close_device(ctx);
	int up[2], down[2];
	if (pipe(up) || pipe(down))
		die("pipe");
	pid_t child = fork(); /* the target: a process of its own on the same simulated host */
	if (child < 0)
		die("fork");
	if (child == 0) {
		close(up[0]);
		close(down[1]);
		_exit(target(up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	initiator(down[1], up[0], child);
	gpu_counters(); /* after the target is gone: CUDA is loaded only here */
	printf("compcntr_test: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
