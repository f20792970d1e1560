/* objrules: the kernel's object rules on the simulated device, as a table of
 * bad usage. ib_uverbs refuses to destroy an object another still uses,
 * with EBUSY (drivers/infiniband/core: uverbs_free_pd in
 * uverbs_std_types.c -- a PD with MRs, QPs or AHs; ib_destroy_cq_user in
 * verbs.c -- a CQ a QP is bound to, send and receive each); rdma-core's
 * struct verbs_mr carries the MR type and access flags ibv_cmd_reg_mr fills
 * in (libibverbs/cmd.c). Each row: what is done, the errno the kernel
 * returns, what the simulator returned. Exit 0 when every row matches, 1
 * when one does not, 77 without a simulated device.
 *
 * `objrules gda`: the GPU Direct Async table instead (no GPU needed) -- the
 * refusals of efadv_create_cq with EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF as
 * rdma-core 64 (providers/efa/verbs.c efadv_create_cq, create_cq) and the
 * kernel (ib_umem_dmabuf_get, amzn-drivers efa_create_cq_umem) give them,
 * efasim's own EOPNOTSUPP for a dma-buf it cannot resolve (no MR of it), the
 * capability and EFASIM_EXT_CQ=0, and the SQ and SQ doorbell that
 * efadv_query_qp_wqs hands out: page-aligned, on pages of their own. With no
 * dma-buf exporter on a machine without a GPU, it runs itself again with
 * EFASIM_TEST_FAKE_DMABUF=1 (a memfd named "efasim-dmabuf" then passes for
 * a dma-buf), and once more with EFASIM_EXT_CQ=0 for the driver without the
 * capability. gpu_selftest does the same on a real CUDA dma-buf. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/efadv.h>
#include <infiniband/verbs.h>

static int bad;

/* who: whose answer want is ("kernel", or "efasim" for the simulator's own rules) */
static void row_of(const char *who, const char *what, int want, int got)
{
	printf("%-4s %-58s %s %-6s simulator %s\n", want == got ? "ok" : "FAIL", what, who,
	       want ? strerror(want) : "0", got ? strerror(got) : "0");
	bad |= want != got;
}

static void row(const char *what, int want, int got)
{
	row_of("kernel", what, want, got);
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

/* efadv_create_cq with external memory: 0 (created, then destroyed) or errno. */
static int ext_cq(struct ibv_context *ctx, int fd, uint64_t offset, uint64_t length, uint32_t cqe, uint32_t cq_flags,
		  uint64_t efa_comp_mask)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS};
	if (cq_flags) {
		ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		ca.flags = cq_flags;
	}
	struct efadv_cq_init_attr ea = {.comp_mask = efa_comp_mask, .wc_flags = EFADV_WC_EX_WITH_SGID,
					.flags = EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF};
	ea.ext_mem_dmabuf.buffer = NULL;
	ea.ext_mem_dmabuf.length = length;
	ea.ext_mem_dmabuf.offset = offset;
	ea.ext_mem_dmabuf.fd = fd;
	errno = 0;
	struct ibv_cq_ex *cq = efadv_create_cq(ctx, &ca, &ea, sizeof(ea));
	if (!cq)
		return errno ? errno : -1;
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	return 0;
}

static int has_ext_cap(struct ibv_context *ctx)
{
	struct efadv_device_attr da = {0};
	return !efadv_query_device(ctx, &da, sizeof(da)) && (da.device_caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF);
}

static struct ibv_qp *srd_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
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
	return efadv_create_qp_ex(ctx, &qa, &ea, sizeof(ea));
}

/* [a, a + an) and [b, b + bn) share no page */
static int pages_apart(uintptr_t a, size_t an, uintptr_t b, size_t bn, uintptr_t pg)
{
	uintptr_t a0 = a & ~(pg - 1), a1 = (a + an + pg - 1) & ~(pg - 1);
	uintptr_t b0 = b & ~(pg - 1), b1 = (b + bn + pg - 1) & ~(pg - 1);
	return a1 <= b0 || b1 <= a0;
}

static int gda_table(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq, const char *self)
{
	if (!strcmp(self, "gda-nocap")) { /* run by gda below with EFASIM_EXT_CQ=0 */
		row("EFASIM_EXT_CQ=0: CQ_WITH_EXT_MEM_DMABUF not in efadv_query_device's caps", 0,
		    has_ext_cap(ctx) ? EINVAL : 0);
		int fd = memfd_create("efasim-dmabuf", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, 1 << 20))
			row("memfd_create", 0, errno);
		row("EFASIM_EXT_CQ=0 (an older driver): ext-mem CQ", EOPNOTSUPP, ext_cq(ctx, fd, 0, 4096, 16, 0, 0));
		return bad;
	}
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	row("efadv_query_device: caps has CQ_WITH_EXT_MEM_DMABUF (a driver property)", 0, has_ext_cap(ctx) ? 0 : EINVAL);

	/* SQ and SQ doorbell of two QPs */
	struct ibv_qp *qa = srd_qp(ctx, pd, cq), *qb = srd_qp(ctx, pd, cq);
	struct efadv_wq_attr sa = {0}, ra = {0}, sb = {0}, rb = {0};
	int ea = qa ? efadv_query_qp_wqs(qa, &sa, &ra, sizeof(sa)) : errno;
	int eb = qb ? efadv_query_qp_wqs(qb, &sb, &rb, sizeof(sb)) : errno;
	row("efadv_query_qp_wqs on two QPs", 0, ea ? ea : eb);
	if (!ea && !eb) {
		size_t la = (size_t)sa.num_entries * sa.entry_size, lb = (size_t)sb.num_entries * sb.entry_size;
		row("SQ buffers page-aligned", 0, ((uintptr_t)sa.buffer | (uintptr_t)sb.buffer) & (pg - 1) ? EINVAL : 0);
		row("SQ doorbells page-aligned (first word of a page)", 0,
		    ((uintptr_t)sa.doorbell | (uintptr_t)sb.doorbell) & (pg - 1) ? EINVAL : 0);
		int apart = pages_apart((uintptr_t)sa.buffer, la, (uintptr_t)sb.buffer, lb, pg) &&
			    pages_apart((uintptr_t)sa.doorbell, 4, (uintptr_t)sb.doorbell, 4, pg);
		uintptr_t q[4][2] = {{(uintptr_t)sa.buffer, la}, {(uintptr_t)sb.buffer, lb},
				     {(uintptr_t)sa.doorbell, 4}, {(uintptr_t)sb.doorbell, 4}};
		for (int i = 0; i < 4; i++)
			for (int j = i + 1; j < 4; j++)
				apart &= pages_apart(q[i][0], q[i][1], q[j][0], q[j][1], pg);
		row("two QPs' SQs and doorbells share no page", 0, apart ? 0 : EINVAL);
		row("SQ entries 64 B, doorbell starts at 0", 0, sa.entry_size == 64 && *sa.doorbell == 0 ? 0 : EINVAL);
	}
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);

	/* efadv_create_cq with external memory: no dma-buf on this machine */
	int mfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, 1 << 20))
		row("memfd_create", 0, errno);
	row("ext-mem CQ, fd not a dma-buf (dma_buf_get)", EINVAL, ext_cq(ctx, mfd, 0, 4096, 16, 0, 0));
	int closed = dup(mfd);
	close(closed);
	row("ext-mem CQ, fd not open (dma_buf_get)", EBADF, ext_cq(ctx, closed, 0, 4096, 16, 0, 0));
	row("ext-mem CQ, ibv_cq_init_attr_ex.flags IGNORE_OVERRUN (rdma-core; kernel attr->flags)", EOPNOTSUPP,
	    ext_cq(ctx, mfd, 0, 4096, 16, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, 0));
	row("ext-mem CQ, efadv_cq_init_attr.comp_mask != 0 (rdma-core)", EINVAL, ext_cq(ctx, mfd, 0, 4096, 16, 0, 1));
	close(mfd);

	/* past the fd's checks: a memfd stands for a dma-buf (EFASIM_TEST_FAKE_DMABUF=1),
	 * sparse, 512 MiB. Each EINVAL row has a twin that differs only in the
	 * value checked and passes every kernel check, so each row shows its own
	 * check: the twin ends at efasim's resolution (EOPNOTSUPP: no MR of the
	 * dma-buf; real EFA would create the CQ) */
	const uint64_t big = 512ull << 20;
	int fd = memfd_create("efasim-dmabuf", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)big))
		row("memfd_create", 0, errno);
	struct ibv_device_attr dattr;
	uint32_t maxcqe = ibv_query_device(ctx, &dattr) ? 1u << 22 : (uint32_t)dattr.max_cqe;
	row("ext-mem CQ, offset + length past the dma-buf (ib_umem_dmabuf_get)", EINVAL,
	    ext_cq(ctx, fd, big - 4096, 8192, 16, 0, 0));
	row_of("efasim", "... offset + length at its end, no MR of the dma-buf", EOPNOTSUPP,
	       ext_cq(ctx, fd, big - 8192, 8192, 16, 0, 0));
	row("ext-mem CQ, 512 entries in 4096 bytes (External memory too small)", EINVAL, ext_cq(ctx, fd, 0, 4096, 512, 0, 0));
	row_of("efasim", "... 512 entries in 16384 bytes, no MR of the dma-buf", EOPNOTSUPP,
	       ext_cq(ctx, fd, 0, 16384, 512, 0, 0));
	row("ext-mem CQ, max_cqe + 1 entries in 512 MiB (entries > max)", EINVAL,
	    ext_cq(ctx, fd, 0, big, maxcqe + 1, 0, 0));
	row("... max_cqe entries in 512 MiB: also Non contiguous (no 2 MiB GPU page holds the ring)", EINVAL,
	    ext_cq(ctx, fd, 0, big, maxcqe, 0, 0));
	/* efa_create_cq_umem: !ib_umem_is_contiguous -> "Non contiguous CQ
	 * unsupported"; the stand-in is GPU memory in 2 MiB pages from offset 0 */
	row("ext-mem CQ, 16 entries at 2 MiB - 2048: crosses a 2 MiB GPU page (Non contiguous CQ unsupported)",
	    EINVAL, ext_cq(ctx, fd, (2u << 20) - 2048, 4096, 16, 0, 0));
	row_of("efasim", "... at 2 MiB - 4096: ends on the page, no MR of the dma-buf", EOPNOTSUPP,
	       ext_cq(ctx, fd, (2u << 20) - 4096, 4096, 16, 0, 0));
	close(fd);

	/* an older driver */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("EFASIM_EXT_CQ", "0", 1);
		execl("/proc/self/exe", "objrules", "gda-nocap", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("FAIL the EFASIM_EXT_CQ=0 run (exit %d)\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		bad = 1;
	}
	return bad;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "gda") && !getenv("EFASIM_TEST_FAKE_DMABUF")) {
		setenv("EFASIM_TEST_FAKE_DMABUF", "1", 1); /* read when the simulator loads */
		execv("/proc/self/exe", argv);
		perror("objrules: execv /proc/self/exe");
		return 1;
	}
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
	if (!strncmp(mode, "gda", 3)) {
		int r = gda_table(ctx, pd, cq, mode);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
		ibv_free_device_list(list);
		return r;
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

	struct ibv_qp *qp = srd_qp(ctx, pd, cq);
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
