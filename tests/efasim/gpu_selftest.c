/* efasim GPU self-test: the simulated device's registration of CUDA memory
 * (memkind.c), through the verbs API the efa provider calls.
 *   gpu_selftest        with GPUDirect (EFASIM_P2P unset or 1): a cuMemAlloc
 *                       range registers; managed memory and an unmapped address
 *                       fail with EFAULT; a CUDA dmabuf registers at an offset
 *                       (mr->addr = offset, as rdma-core), and one whose offset
 *                       + length runs past the dma-buf fails with EINVAL
 *   EFASIM_P2P=0 gpu_selftest   the device pointer fails with EFAULT and the
 *                       dmabuf with EOPNOTSUPP (an instance without GPUDirect)
 * Then GPU Direct Async (what libfabric 2.6's GDA ops reach, README "GPU Direct
 * Async"): a CQ in external memory (efadv_create_cq with EXT_MEM_DMABUF) in a
 * cuMemAlloc'd dma-buf -- refused before an MR of that dma-buf exists (efasim
 * limitation), with a short length, past the dma-buf; created once the dma-buf
 * is registered; efadv_query_cq gives no buffer and no doorbell -- then a QP on
 * it: one RDMA-write WQE written by the CPU into the SQ of efadv_query_qp_wqs,
 * the doorbell rung, and the CQE read out of GPU memory (cuMemcpyDtoH) until
 * its phase is 1; then another process (this program again, "gda-writer")
 * writes with immediate into the QP, and the unsolicited receive CQE it leaves
 * in the GPU ring is checked the same way (the IPC path: the writer's process
 * opens the ring's handle); last, a CUDA kernel does what a GDA initiator does:
 * it writes an RDMA-write WQE into the SQ and rings the doorbell through
 * cuMemHostRegister'd mappings of them (DEVICEMAP, plain host memory here),
 * then spins on the CQE's phase bit in GPU memory while the simulated device
 * writes it. With EFASIM_P2P=0 the ext CQ is EOPNOTSUPP.
 * Last (stage_checks), another process ("stage-writer") first does what
 * libfabric >= 2.7's efa provider does at start (a CUDA context of its own, a
 * buffer in it registered, deregistered and freed, the context destroyed),
 * then writes 8 KiB from GPU memory of its primary context into this process's
 * host memory, which efasim stages through pinned memory: its per-context
 * stream and staging buffer must not have died with the probe's context.
 * Exit 0 all checks passed, 1 a check failed, 77 no GPU here (the reason on the
 * last line). Runs under tests/efasim/run (the simulator's libibverbs). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef EFASIM_HAVE_CUDA
int main(void)
{
	printf("gpu_selftest: built without cuda.h: the simulator models host memory only\n");
	return 77;
}
#else
#include <cuda.h>

static int failures;
#define CHECK(cond, ...)                                                                                   \
	do {                                                                                               \
		if (cond) {                                                                                \
			printf("ok   ");                                                                     \
		} else {                                                                                   \
			printf("FAIL ");                                                                     \
			failures++;                                                                        \
		}                                                                                          \
		printf(__VA_ARGS__);                                                                       \
		putchar('\n');                                                                             \
	} while (0)


static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemAllocManaged)(CUdeviceptr *, size_t, unsigned);
	CUresult (*MemGetHandleForAddressRange)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemHostRegister)(void *, size_t, unsigned);
	CUresult (*MemHostUnregister)(void *);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				 CUstream, void **, void **);
	CUresult (*CtxSynchronize)(void);
	CUresult (*CtxCreate)(CUcontext *, unsigned, CUdevice);
	CUresult (*CtxDestroy)(CUcontext);
} cu;

static int skip(const char *why)
{
	printf("gpu_selftest: %s\n", why);
	return 77;
}

/* ------------------------------------------------- GPU Direct Async */

/* rdma-core 64 providers/efa/efa_io_defs.h (not installed): the 64-byte send
 * WQE and the 32-byte CQE, as tests/efasim/direct.c parses and writes them. */
struct wqe {
	uint16_t req_id;
	uint8_t ctrl1;           /* 3:0 op_type, 4 has_imm, 7 meta_desc */
	uint8_t ctrl2;           /* 0 phase, 2 first, 3 last, 4 comp_req */
	uint16_t dest_qp_num;
	uint16_t length;         /* 1 buffer descriptor for RDMA */
	uint32_t immediate_data;
	uint16_t ah;
	uint8_t ctrl3, reserved;
	uint32_t qkey;
	uint8_t reserved2[12];
	uint32_t r_length, rkey, r_addr_lo, r_addr_hi; /* efa_io_remote_mem_addr */
	uint32_t l_length, lkey, l_addr_lo, l_addr_hi; /* efa_io_tx_buf_desc */
};
struct cqe {
	uint16_t req_id;
	uint8_t status;
	uint8_t flags;           /* 0 phase, 2:1 q_type (SQ 1, RQ 2), 3 has_imm, 6:4 op_type, 7 unsolicited */
	uint16_t qp_num;
	uint16_t length;
	uint16_t ah;
	uint16_t src_qp_num;
	uint32_t imm;
	uint16_t length_hi;
	uint8_t rest[14];
};
_Static_assert(sizeof(struct wqe) == 64 && offsetof(struct wqe, r_length) == 32, "efa_io_tx_wqe");
_Static_assert(sizeof(struct cqe) == 32 && offsetof(struct cqe, imm) == 12, "efa_io_rx_cdesc_ex");
enum { OP_RDMA_WRITE = 2, QT_SQ = 1, QT_RQ = 2, GDA_QKEY = 0x11111111 };

/* gda_post(wqe, slot, db, db_val, flags, phase, out): one thread copies the
 * 64-byte WQE at wqe (GPU memory) into the SQ slot with eight 8-byte volatile
 * stores, fence.sc.sys, stores db_val to the doorbell, fence.sc.sys, then spins
 * on the CQE's flags byte until its phase bit is phase (10 s of %globaltimer at
 * most); out[0] = 1 (came) or 2 (timed out), out[1] = polls. As EFA GDA
 * initiators order it (docs/gda-design.md section 3); checked with ptxas. */
static const char gda_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".visible .entry gda_post(\n"
	"	.param .u64 p_wqe,\n"
	"	.param .u64 p_slot,\n"
	"	.param .u64 p_db,\n"
	"	.param .u32 p_db_val,\n"
	"	.param .u64 p_flags,\n"
	"	.param .u32 p_phase,\n"
	"	.param .u64 p_out)\n"
	"{\n"
	"	.reg .pred %p<3>;\n"
	"	.reg .b32 %r<6>;\n"
	"	.reg .b64 %rd<32>;\n"
	"	ld.param.u64 %rd1, [p_wqe];\n"
	"	ld.param.u64 %rd2, [p_slot];\n"
	"	ld.param.u64 %rd3, [p_db];\n"
	"	ld.param.u32 %r1, [p_db_val];\n"
	"	ld.param.u64 %rd4, [p_flags];\n"
	"	ld.param.u32 %r2, [p_phase];\n"
	"	ld.param.u64 %rd5, [p_out];\n"
	"	ld.global.u64 %rd10, [%rd1];\n"
	"	ld.global.u64 %rd11, [%rd1+8];\n"
	"	ld.global.u64 %rd12, [%rd1+16];\n"
	"	ld.global.u64 %rd13, [%rd1+24];\n"
	"	ld.global.u64 %rd14, [%rd1+32];\n"
	"	ld.global.u64 %rd15, [%rd1+40];\n"
	"	ld.global.u64 %rd16, [%rd1+48];\n"
	"	ld.global.u64 %rd17, [%rd1+56];\n"
	"	st.volatile.global.u64 [%rd2], %rd10;\n"
	"	st.volatile.global.u64 [%rd2+8], %rd11;\n"
	"	st.volatile.global.u64 [%rd2+16], %rd12;\n"
	"	st.volatile.global.u64 [%rd2+24], %rd13;\n"
	"	st.volatile.global.u64 [%rd2+32], %rd14;\n"
	"	st.volatile.global.u64 [%rd2+40], %rd15;\n"
	"	st.volatile.global.u64 [%rd2+48], %rd16;\n"
	"	st.volatile.global.u64 [%rd2+56], %rd17;\n"
	"	fence.sc.sys;\n"
	"	st.volatile.global.u32 [%rd3], %r1;\n"
	"	fence.sc.sys;\n"
	"	mov.u64 %rd20, %globaltimer;\n"
	"	mov.u64 %rd21, 0;\n"
	"LOOP:\n"
	"	add.u64 %rd21, %rd21, 1;\n"
	"	ld.volatile.global.u8 %r3, [%rd4];\n"
	"	and.b32 %r4, %r3, 1;\n"
	"	setp.eq.u32 %p1, %r4, %r2;\n"
	"	@%p1 bra DONE;\n"
	"	mov.u64 %rd22, %globaltimer;\n"
	"	sub.u64 %rd23, %rd22, %rd20;\n"
	"	setp.lt.u64 %p2, %rd23, 10000000000;\n"
	"	@%p2 bra LOOP;\n"
	"	mov.u64 %rd24, 2;\n"
	"	bra OUT;\n"
	"DONE:\n"
	"	mov.u64 %rd24, 1;\n"
	"OUT:\n"
	"	st.global.u64 [%rd5], %rd24;\n"
	"	st.global.u64 [%rd5+8], %rd21;\n"
	"	ret;\n"
	"}\n";

static struct ibv_qp *gda_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_cq *cq, int unsolicited)
{
	struct ibv_qp_init_attr_ex qa = {0};
	qa.qp_type = IBV_QPT_DRIVER;
	qa.send_cq = qa.recv_cq = cq;
	qa.pd = pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	struct efadv_qp_init_attr ea = {0};
	ea.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD;
	if (unsolicited)
		ea.flags = EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV;
	struct ibv_qp *qp = efadv_create_qp_ex(c, &qa, &ea, sizeof(ea));
	if (!qp)
		return NULL;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = GDA_QKEY};
	struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTR};
	struct ibv_qp_attr t = {.qp_state = IBV_QPS_RTS, .sq_psn = 0, .rnr_retry = 7};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) ||
	    ibv_modify_qp(qp, &r, IBV_QP_STATE) || ibv_modify_qp(qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RNR_RETRY)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static struct ibv_ah *self_ah(struct ibv_context *c, struct ibv_pd *pd)
{
	union ibv_gid gid;
	if (ibv_query_gid(c, 1, 0, &gid))
		return NULL;
	struct ibv_ah_attr aa = {0};
	aa.is_global = 1;
	aa.grh.dgid = gid;
	aa.port_num = 1;
	return ibv_create_ah(pd, &aa);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Entry i of the GPU ring, read with cuMemcpyDtoH until its phase bit is
 * `phase` (10 s at most); 0 when it came. */
static int ring_wait(CUdeviceptr ring, unsigned i, unsigned phase, struct cqe *out)
{
	double t0 = now_s();
	do {
		if (cu.MemcpyDtoH(out, ring + (CUdeviceptr)i * sizeof(*out), sizeof(*out)))
			return -1;
		if ((out->flags & 1u) == phase)
			return 0;
		usleep(1000);
	} while (now_s() - t0 < 10);
	return -1;
}

/* "gda-writer QPN RKEY RADDR IMM": another process writes 64 bytes with
 * immediate into that QP (same simulated host, so the same GID); exit 0 when
 * its own completion says success. */
/* The writers' one RDMA write (with immediate where imm_on) of [addr, +len)
 * (lkey) to raddr (rkey) at QP qpn through ah, then its completion polled for
 * 10 s at most: 0 when it completed successfully, else 1 (said on stderr,
 * prefixed who). */
static int write_wait(const char *who, struct ibv_qp *qp, struct ibv_ah *ah, struct ibv_cq_ex *cq, uint32_t qpn,
		      uint32_t rkey, uint64_t raddr, int imm_on, uint32_t imm, uint32_t lkey, uint64_t addr, size_t len)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	x->wr_id = 7;
	x->wr_flags = IBV_SEND_SIGNALED;
	if (imm_on)
		ibv_wr_rdma_write_imm(x, rkey, raddr, htobe32(imm));
	else
		ibv_wr_rdma_write(x, rkey, raddr);
	ibv_wr_set_ud_addr(x, ah, qpn, GDA_QKEY);
	ibv_wr_set_sge(x, lkey, addr, (uint32_t)len);
	if (ibv_wr_complete(x)) {
		fprintf(stderr, "%s: ibv_wr_complete: %s\n", who, strerror(errno));
		return 1;
	}
	struct ibv_poll_cq_attr pa = {0};
	double t0 = now_s();
	int rc;
	while ((rc = ibv_start_poll(cq, &pa)) == ENOENT && now_s() - t0 < 10)
		usleep(1000);
	if (rc) {
		fprintf(stderr, "%s: no completion (%d)\n", who, rc);
		return 1;
	}
	int ok = cq->status == IBV_WC_SUCCESS;
	if (!ok)
		fprintf(stderr, "%s: completion status %d (vendor %u)\n", who, cq->status, ibv_wc_read_vendor_err(cq));
	ibv_end_poll(cq);
	return ok ? 0 : 1;
}

static int gda_writer(char **argv)
{
	uint32_t qpn = (uint32_t)strtoul(argv[2], NULL, 0), rkey = (uint32_t)strtoul(argv[3], NULL, 0);
	uint64_t raddr = strtoull(argv[4], NULL, 0);
	uint32_t imm = (uint32_t)strtoul(argv[5], NULL, 0);
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *c = list && n ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct efadv_cq_init_attr ea = {.wc_flags = EFADV_WC_EX_WITH_SGID};
	struct ibv_cq_ex *cq = pd ? efadv_create_cq(c, &ca, &ea, sizeof(ea)) : NULL;
	struct ibv_qp *qp = cq ? gda_qp(c, pd, ibv_cq_ex_to_cq(cq), 0) : NULL;
	struct ibv_ah *ah = qp ? self_ah(c, pd) : NULL;
	static char buf[64];
	for (int i = 0; i < 64; i++)
		buf[i] = (char)(0xa0 + i);
	struct ibv_mr *mr = ah ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr) {
		fprintf(stderr, "gda-writer: setup failed: %s\n", strerror(errno));
		return 1;
	}
	return write_wait("gda-writer", qp, ah, cq, qpn, rkey, raddr, 1, imm, mr->lkey,
			  (uintptr_t)buf, sizeof(buf));
}

/* The GPU as the initiator: w (the last WQE the CPU wrote) again with req_id
 * 0x5678 into SQ slot 1, to dst_off of the arena, posted by gda_post. */
static void gda_kernel(struct wqe *w, const struct efadv_wq_attr *sq, CUdeviceptr d, size_t ring_off, size_t dst_off,
		       const uint8_t *src, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t sq_len = ((size_t)sq->num_entries * sq->entry_size + (size_t)pg - 1) & ~((size_t)pg - 1);
	void *db_page = (void *)((uintptr_t)sq->doorbell & ~((uintptr_t)pg - 1));
	CUdeviceptr sq_dev = 0, db_dev = 0;
	CUresult r1 = cu.MemHostRegister(sq->buffer, sq_len, CU_MEMHOSTREGISTER_DEVICEMAP);
	CUresult r2 = r1 ? r1 : cu.MemHostRegister(db_page, (size_t)pg, CU_MEMHOSTREGISTER_DEVICEMAP);
	int db_reg = !r1 && !r2;
	if (!r2) {
		r2 = cu.MemHostGetDevicePointer(&sq_dev, sq->buffer, 0);
		if (!r2)
			r2 = cu.MemHostGetDevicePointer(&db_dev, db_page, 0);
	}
	CHECK(!r1 && !r2, "GDA: cuMemHostRegister(DEVICEMAP) of the SQ (%zu B) and of the doorbell's page (%d, %d)",
	      sq_len, (int)r1, (int)r2);
	if (r1 || r2)
		goto out;
	db_dev += (uintptr_t)sq->doorbell - (uintptr_t)db_page;
	CUmodule mod;
	CUfunction f;
	CUresult r = cu.ModuleLoadData(&mod, gda_ptx);
	if (!r)
		r = cu.ModuleGetFunction(&f, mod, "gda_post");
	CHECK(!r, "GDA: the gda_post kernel (PTX, JIT) loads (%d)", (int)r);
	if (r)
		goto out;
	uint64_t ra = d + dst_off;
	w->req_id = 0x5678;
	w->ctrl2 = 0 /* phase 0: SQ slot 1 of the first pass */ | (1u << 2) | (1u << 3) | (1u << 4);
	w->r_addr_lo = (uint32_t)ra;
	w->r_addr_hi = (uint32_t)(ra >> 32);
	const size_t wqe_off = 192 << 10, out_off = wqe_off + 64;
	uint64_t out[2] = {0, 0};
	cu.MemcpyHtoD(d + wqe_off, w, sizeof(*w));
	cu.MemcpyHtoD(d + out_off, out, sizeof(out));
	CUdeviceptr a_wqe = d + wqe_off, a_slot = sq_dev + 1 * sizeof(*w), a_flags = d + ring_off + 2 * 32 + 3,
		    a_out = d + out_off;
	unsigned db_val = 2, phase = 1;
	void *args[] = {&a_wqe, &a_slot, &db_dev, &db_val, &a_flags, &phase, &a_out};
	r = cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
	if (!r)
		r = cu.CtxSynchronize();
	cu.MemcpyDtoH(out, d + out_off, sizeof(out));
	CHECK(!r && out[0] == 1,
	      "GDA: a CUDA kernel wrote a WQE into the mapped SQ, rang the mapped doorbell and saw its CQE's phase "
	      "turn in GPU memory (launch %d, result %llu after %llu polls)",
	      (int)r, (unsigned long long)out[0], (unsigned long long)out[1]);
	struct cqe e;
	cu.MemcpyDtoH(&e, d + ring_off + 2 * 32, sizeof(e));
	CHECK((e.flags & 1) && e.status == 0 && e.req_id == 0x5678 && ((e.flags >> 1) & 3) == QT_SQ,
	      "GDA: its CQE: phase 1, status 0, req_id 0x5678, SQ (flags %#x status %u req_id %#x)", e.flags, e.status,
	      e.req_id);
	static uint8_t back[4096];
	cu.MemcpyDtoH(back, d + dst_off, len < sizeof(back) ? len : sizeof(back));
	CHECK(!memcmp(back, src, len < sizeof(back) ? len : sizeof(back)), "GDA: the kernel-posted write landed");
out:
	/* before the QP's destroy unmaps them */
	if (db_reg)
		cu.MemHostUnregister(db_page);
	if (!r1)
		cu.MemHostUnregister(sq->buffer);
}

static void gda_checks(struct ibv_context *c, struct ibv_pd *pd, int p2p)
{
	const size_t arena = 2 << 20, ring_off = 1 << 20, data_off = 64 << 10, remote_off = 128 << 10;
	const uint32_t entries = 16;
	const uint64_t ring_len = 4096; /* PAGE_ALIGN(32 * 16) */
	CUdeviceptr d = 0;
	if (cu.MemAlloc(&d, arena) || cu.MemsetD8(d, 0, arena)) {
		printf("skip GDA checks: cuMemAlloc/cuMemsetD8 of 2 MiB failed\n");
		return;
	}
	int fd = -1;
	if (cu.MemGetHandleForAddressRange(&fd, d, arena, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0)) {
		printf("skip GDA checks: no dma-buf of the arena on this driver\n");
		cu.MemFree(d);
		return;
	}
	struct ibv_cq_init_attr_ex ca = {.cqe = entries, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct efadv_cq_init_attr ea = {.wc_flags = EFADV_WC_EX_WITH_SGID, .flags = EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF};
	ea.ext_mem_dmabuf.buffer = NULL;
	ea.ext_mem_dmabuf.length = ring_len;
	ea.ext_mem_dmabuf.offset = ring_off;
	ea.ext_mem_dmabuf.fd = fd;
	errno = 0;
	struct ibv_cq_ex *cq = efadv_create_cq(c, &ca, &ea, sizeof(ea));
	CHECK(!cq && errno == EOPNOTSUPP,
	      "GDA: ext-mem CQ in a dma-buf with no MR of it: EOPNOTSUPP (efasim limitation; got %s)",
	      cq ? "success" : strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	errno = 0;
	struct ibv_mr *dmr = ibv_reg_dmabuf_mr(pd, 0, arena, d, fd, acc);
	if (!p2p) {
		CHECK(!dmr, "EFASIM_P2P=0: the arena's dma-buf does not register (got %s)", dmr ? "success" : strerror(errno));
		errno = 0;
		cq = efadv_create_cq(c, &ca, &ea, sizeof(ea));
		CHECK(!cq && errno == EOPNOTSUPP, "EFASIM_P2P=0: ext-mem CQ: EOPNOTSUPP (got %s)",
		      cq ? "success" : strerror(errno));
		goto out_fd;
	}
	CHECK(dmr != NULL, "GDA: ibv_reg_dmabuf_mr of the 2 MiB arena (%s)", dmr ? "" : strerror(errno));
	if (!dmr)
		goto out_fd;
	ea.ext_mem_dmabuf.length = ring_len / 2;
	errno = 0;
	cq = efadv_create_cq(c, &ca, &ea, sizeof(ea));
	CHECK(!cq && errno == EINVAL, "GDA: ext-mem CQ of 16 entries in 2048 bytes: EINVAL (got %s)",
	      cq ? "success" : strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ea.ext_mem_dmabuf.length = ring_len;
	ea.ext_mem_dmabuf.offset = arena - ring_len / 2;
	errno = 0;
	cq = efadv_create_cq(c, &ca, &ea, sizeof(ea));
	CHECK(!cq && errno == EINVAL, "GDA: ext-mem CQ running past the dma-buf: EINVAL (got %s)",
	      cq ? "success" : strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	/* 3 entries: 4, no 16-entry minimum for external memory */
	ea.ext_mem_dmabuf.offset = ring_off + ring_len;
	ca.cqe = 3;
	struct efadv_cq_attr qa = {0};
	cq = efadv_create_cq(c, &ca, &ea, sizeof(ea));
	int qr = cq ? efadv_query_cq(ibv_cq_ex_to_cq(cq), &qa, sizeof(qa)) : errno;
	CHECK(cq && !qr && qa.num_entries == 4, "GDA: ext-mem CQ of 3 entries has 4 (got %s, %u)",
	      cq ? "created" : strerror(errno), qa.num_entries);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));

	ca.cqe = entries;
	ea.ext_mem_dmabuf.offset = ring_off;
	errno = 0;
	cq = efadv_create_cq(c, &ca, &ea, sizeof(ea));
	CHECK(cq != NULL, "GDA: ext-mem CQ of 16 entries at dma-buf offset 1 MiB, once an MR of the dma-buf exists (%s)",
	      cq ? "" : strerror(errno));
	if (!cq)
		goto out_mr;
	struct ibv_cq *cq1 = ibv_cq_ex_to_cq(cq);
	memset(&qa, 0, sizeof(qa));
	qr = efadv_query_cq(cq1, &qa, sizeof(qa));
	CHECK(!qr && qa.buffer == NULL && qa.entry_size == 32 && qa.num_entries == entries && qa.doorbell == NULL,
	      "GDA: efadv_query_cq: buffer NULL, 32 B entries, 16 of them, no doorbell (got %d: %p, %u, %u, %p)", qr,
	      (void *)qa.buffer, qa.entry_size, qa.num_entries, (void *)qa.doorbell);
	struct ibv_poll_cq_attr pa = {0};
	CHECK(ibv_start_poll(cq, &pa) == ENOENT, "GDA: ibv_start_poll on the ext-mem CQ: ENOENT");

	struct efadv_device_attr da = {0};
	efadv_query_device(c, &da, sizeof(da));
	int unsol = !!(da.device_caps & EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV);
	struct ibv_qp *qp = gda_qp(c, pd, cq1, unsol);
	struct ibv_ah *ah = qp ? self_ah(c, pd) : NULL;
	struct efadv_ah_attr aha = {0};
	struct efadv_wq_attr sq = {0}, rq = {0};
	int wr = ah ? efadv_query_ah(ah, &aha, sizeof(aha)) : -1;
	if (!wr)
		wr = efadv_query_qp_wqs(qp, &sq, &rq, sizeof(sq));
	CHECK(!wr && sq.entry_size == 64 && sq.buffer && sq.doorbell,
	      "GDA: QP on the ext-mem CQ, AH to itself, efadv_query_qp_wqs (%d: SQ %u x %u B)", wr, sq.num_entries,
	      sq.entry_size);
	if (wr)
		goto out_qp;
	long pg = sysconf(_SC_PAGESIZE);
	CHECK(!((uintptr_t)sq.buffer % (uintptr_t)pg) && !((uintptr_t)sq.doorbell % (uintptr_t)pg),
	      "GDA: SQ buffer and doorbell page-aligned (cuMemHostRegister-able alone)");

	static uint8_t src[4096];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 3);
	struct ibv_mr *smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	if (!smr) {
		CHECK(0, "GDA: ibv_reg_mr of the source: %s", strerror(errno));
		goto out_qp;
	}
	/* one RDMA-write WQE, written by the CPU as a GPU kernel would, then the doorbell */
	struct wqe w = {0};
	uint64_t la = (uintptr_t)src, ra = d + data_off;
	w.req_id = 0x1234;
	w.ctrl1 = OP_RDMA_WRITE | (1u << 7);
	w.ctrl2 = 0 /* phase 0 */ | (1u << 2) | (1u << 3) | (1u << 4);
	w.dest_qp_num = (uint16_t)qp->qp_num;
	w.length = 1;
	w.ah = aha.ahn;
	w.qkey = GDA_QKEY;
	w.r_length = w.l_length = sizeof(src);
	w.rkey = dmr->rkey;
	w.r_addr_lo = (uint32_t)ra;
	w.r_addr_hi = (uint32_t)(ra >> 32);
	w.lkey = smr->lkey & 0xffffff;
	w.l_addr_lo = (uint32_t)la;
	w.l_addr_hi = (uint32_t)(la >> 32);
	memcpy(sq.buffer, &w, sizeof(w));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(sq.doorbell, 1u, __ATOMIC_RELEASE);
	struct cqe e;
	int got = ring_wait(d + ring_off, 0, 1, &e);
	CHECK(!got && e.status == 0 && e.req_id == 0x1234 && ((e.flags >> 1) & 3) == QT_SQ &&
		      ((e.flags >> 4) & 7) == OP_RDMA_WRITE && e.qp_num == (uint16_t)qp->qp_num,
	      "GDA: send CQE in GPU memory: phase 1, status 0, req_id 0x1234, SQ, RDMA write (%s: flags %#x status %u "
	      "req_id %#x)",
	      got ? "timed out" : "came", e.flags, e.status, e.req_id);
	static uint8_t back[4096];
	cu.MemcpyDtoH(back, d + data_off, sizeof(back));
	CHECK(!memcmp(back, src, sizeof(src)), "GDA: the 4 KiB landed in GPU memory");

	/* another process writes with immediate: the target's receive CQE goes
	 * into this process's GPU ring from there (through its IPC handle) */
	if (!unsol) {
		printf("skip GDA remote writedata: this profile has no unsolicited write receive (EFASIM_PROFILE=p5en has)\n");
		goto out_smr;
	}
	char a_qpn[16], a_rkey[16], a_raddr[32], a_imm[16];
	snprintf(a_qpn, sizeof(a_qpn), "%u", qp->qp_num);
	snprintf(a_rkey, sizeof(a_rkey), "%u", dmr->rkey);
	snprintf(a_raddr, sizeof(a_raddr), "%llu", (unsigned long long)(d + remote_off));
	snprintf(a_imm, sizeof(a_imm), "%u", 0xabcd1234u);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "gpu_selftest", "gda-writer", a_qpn, a_rkey, a_raddr, a_imm, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	int wrote = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	CHECK(wrote, "GDA: another process wrote 64 B with immediate into the QP (exit %d)",
	      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	got = ring_wait(d + ring_off, 1, 1, &e);
	CHECK(!got && e.status == 0 && ((e.flags >> 1) & 3) == QT_RQ && (e.flags & (1u << 3)) &&
		      ((e.flags >> 4) & 7) == OP_RDMA_WRITE && (e.flags & (1u << 7)) && e.imm == 0xabcd1234u &&
		      e.length == 64 && e.length_hi == 0 && e.qp_num == (uint16_t)qp->qp_num && e.ah == aha.ahn,
	      "GDA: receive CQE written by the other process: phase 1, RQ, has_imm, unsolicited, imm, 64 B, our AH "
	      "(%s: flags %#x status %u imm %#x length %u ah %u)",
	      got ? "timed out" : "came", e.flags, e.status, e.imm, e.length, e.ah);
	cu.MemcpyDtoH(back, d + remote_off, 64);
	int same = 1;
	for (int i = 0; i < 64; i++)
		same &= back[i] == (uint8_t)(0xa0 + i);
	CHECK(same, "GDA: the other process's 64 B landed in GPU memory");

	/* a CUDA kernel posts the next WQE (SQ slot 1, phase 0, doorbell 2) through
	 * the mapped SQ and doorbell pages and spins on CQ entry 2 in GPU memory */
	gda_kernel(&w, &sq, d, ring_off, data_off + sizeof(src), src, sizeof(src));
out_smr:
	ibv_dereg_mr(smr);
out_qp:
	if (ah)
		ibv_destroy_ah(ah);
	if (qp)
		CHECK(!ibv_destroy_qp(qp), "GDA: QP destroyed (its SQ and doorbell unmapped)");
	CHECK(!ibv_destroy_cq(cq1), "GDA: ext-mem CQ destroyed after its QP");
out_mr:
	ibv_dereg_mr(dmr);
out_fd:
	close(fd);
	cu.MemFree(d);
}

/* ------------------------------------------- a context that goes away */

/* The other process of stage_checks: first what libfabric >= 2.7 does when
 * its efa provider starts (efa_hmem_info_check_p2p_support_cuda): a CUDA
 * context of its own, a buffer in it registered and deregistered, the buffer
 * freed and the context destroyed; then, in the primary context, 8 KiB of GPU
 * memory written into the first process's host memory (argv: qpn, rkey,
 * raddr), which efasim stages through pinned host memory. Exit 0 when the
 * write completed successfully. */
static int stage_writer(char **argv)
{
	uint32_t qpn = (uint32_t)strtoul(argv[2], NULL, 0), rkey = (uint32_t)strtoul(argv[3], NULL, 0);
	uint64_t raddr = strtoull(argv[4], NULL, 0);
	int n = 0;
	CUdevice dev;
	CUcontext probe, ctx;
	CUdeviceptr p = 0, d = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *c = list && n ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
	if (!pd || cu.Init(0) || cu.DeviceGet(&dev, 0) || cu.CtxCreate(&probe, 0, dev) || cu.MemAlloc(&p, 4096)) {
		fprintf(stderr, "stage-writer: device, PD or the probe's context and buffer failed\n");
		return 1;
	}
	struct ibv_mr *pmr = ibv_reg_mr(pd, (void *)(uintptr_t)p, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!pmr) {
		fprintf(stderr, "stage-writer: the probe's registration: %s\n", strerror(errno));
		return 1;
	}
	ibv_dereg_mr(pmr);
	cu.MemFree(p);
	cu.CtxDestroy(probe);
	static uint8_t pat[8192];
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	if (cu.PrimaryCtxRetain(&ctx, dev) || cu.CtxSetCurrent(ctx) || cu.MemAlloc(&d, sizeof(pat)) ||
	    cu.MemcpyHtoD(d, pat, sizeof(pat)) || cu.CtxSynchronize()) {
		fprintf(stderr, "stage-writer: the primary context's buffer failed\n");
		return 1;
	}
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct efadv_cq_init_attr ea = {.wc_flags = EFADV_WC_EX_WITH_SGID};
	struct ibv_cq_ex *cq = efadv_create_cq(c, &ca, &ea, sizeof(ea));
	struct ibv_qp *qp = cq ? gda_qp(c, pd, ibv_cq_ex_to_cq(cq), 0) : NULL;
	struct ibv_ah *ah = qp ? self_ah(c, pd) : NULL;
	struct ibv_mr *mr = ah ? ibv_reg_mr(pd, (void *)(uintptr_t)d, sizeof(pat), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr) {
		fprintf(stderr, "stage-writer: setup failed: %s\n", strerror(errno));
		return 1;
	}
	return write_wait("stage-writer", qp, ah, cq, qpn, rkey, raddr, 0, 0, mr->lkey, d, sizeof(pat));
}

/* GPU memory written into another process's host memory after a context
 * that registered memory was destroyed (stage_writer): efasim's per-context
 * stream and staging buffer must not outlive that context. */
static void stage_checks(struct ibv_context *c, struct ibv_pd *pd, int p2p)
{
	if (!p2p) {
		printf("skip stage: EFASIM_P2P=0 (no GPU registration)\n");
		return;
	}
	static uint8_t buf[8192];
	memset(buf, 0, sizeof(buf));
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct efadv_cq_init_attr ea = {.wc_flags = EFADV_WC_EX_WITH_SGID};
	struct ibv_cq_ex *cqx = efadv_create_cq(c, &ca, &ea, sizeof(ea));
	struct ibv_cq *cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	struct ibv_qp *qp = cq ? gda_qp(c, pd, cq, 0) : NULL;
	/* the responder needs an AH for the requester: the writer is on this host */
	struct ibv_ah *ah = qp ? self_ah(c, pd) : NULL;
	struct ibv_mr *mr = ah ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	CHECK(mr != NULL, "stage: a QP, an AH and 8 KiB of host memory registered for the other process's write%s%s",
	      mr ? "" : ": ", mr ? "" : strerror(errno));
	if (mr) {
		char a_qpn[16], a_rkey[16], a_raddr[32];
		snprintf(a_qpn, sizeof(a_qpn), "%u", qp->qp_num);
		snprintf(a_rkey, sizeof(a_rkey), "%u", mr->rkey);
		snprintf(a_raddr, sizeof(a_raddr), "%llu", (unsigned long long)(uintptr_t)buf);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", "gpu_selftest", "stage-writer", a_qpn, a_rkey, a_raddr, (char *)NULL);
			_exit(127);
		}
		int st = 0;
		int wrote = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		CHECK(wrote,
		      "stage: after a context that registered a buffer was destroyed (libfabric 2.7's p2p probe), "
		      "another process wrote 8 KiB from GPU memory into this one's host memory (%s %d)",
		      WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		int same = 1;
		for (size_t i = 0; i < sizeof(buf); i++)
			same &= buf[i] == (uint8_t)(i * 7 + 3);
		CHECK(same, "stage: the 8 KiB landed");
		ibv_dereg_mr(mr);
	}
	if (ah)
		ibv_destroy_ah(ah);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	if (argc > 5 && !strcmp(argv[1], "gda-writer"))
		return gda_writer(argv);
	const char *p2p_env = getenv("EFASIM_P2P");
	int p2p = !(p2p_env && !strcmp(p2p_env, "0"));
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		char why[512];
		snprintf(why, sizeof(why), "no CUDA driver here (dlopen libcuda.so.1: %s): the GPU checks need a GPU",
			 dlerror());
		return skip(why);
	}
#define SYM(f, n)                                                                                          \
	if (!(*(void **)&cu.f = dlsym(h, n)))                                                              \
		return skip("libcuda.so.1 lacks " n);
	SYM(Init, "cuInit");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(DeviceGetCount, "cuDeviceGetCount");
	SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent");
	SYM(MemAlloc, "cuMemAlloc_v2");
	SYM(MemAllocManaged, "cuMemAllocManaged");
	SYM(MemGetHandleForAddressRange, "cuMemGetHandleForAddressRange");
	SYM(MemsetD8, "cuMemsetD8_v2");
	SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(MemFree, "cuMemFree_v2");
	SYM(MemcpyHtoD, "cuMemcpyHtoD_v2");
	SYM(MemHostRegister, "cuMemHostRegister_v2");
	SYM(MemHostUnregister, "cuMemHostUnregister");
	SYM(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
	SYM(ModuleLoadData, "cuModuleLoadData");
	SYM(ModuleGetFunction, "cuModuleGetFunction");
	SYM(LaunchKernel, "cuLaunchKernel");
	SYM(CtxSynchronize, "cuCtxSynchronize");
	SYM(CtxCreate, "cuCtxCreate_v2");
	SYM(CtxDestroy, "cuCtxDestroy_v2");
	if (argc > 4 && !strcmp(argv[1], "stage-writer"))
		return stage_writer(argv);
	int n = 0;
	CUdevice dev;
	CUcontext ctx;
	if (cu.Init(0) || cu.DeviceGetCount(&n) || n < 1)
		return skip("cuInit or cuDeviceGetCount failed: no usable GPU here");
	if (cu.DeviceGet(&dev, 0) || cu.PrimaryCtxRetain(&ctx, dev) || cu.CtxSetCurrent(ctx))
		return skip("no context on GPU 0");

	int num = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	if (!list || num < 1) {
		printf("FAIL no simulated device (run under tests/efasim/run)\n");
		return 1;
	}
	struct ibv_context *c = ibv_open_device(list[0]);
	struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
	if (!pd) {
		printf("FAIL ibv_open_device/ibv_alloc_pd\n");
		return 1;
	}
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	printf("simulated device %s, EFASIM_P2P=%d\n", ibv_get_device_name(list[0]), p2p);

	const size_t len = 2 << 20;
	CUdeviceptr d = 0;
	if (cu.MemAlloc(&d, len))
		return skip("cuMemAlloc failed");
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(pd, (void *)(uintptr_t)(d + 4096), 65536, acc);
	if (p2p)
		CHECK(mr && mr->addr == (void *)(uintptr_t)(d + 4096) && mr->length == 65536,
		      "ibv_reg_mr on cuMemAlloc memory (+4 KiB, 64 KiB): registered (%s)", mr ? "" : strerror(errno));
	else
		CHECK(!mr && errno == EFAULT, "EFASIM_P2P=0: ibv_reg_mr on cuMemAlloc memory: EFAULT (got %s)",
		      mr ? "success" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)(d + len - 4096), 8192, acc);
	CHECK(!mr && errno == EFAULT, "ibv_reg_mr running past the end of its CUDA allocation: EFAULT (got %s)",
	      mr ? "success" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);

	CUdeviceptr m = 0;
	if (!cu.MemAllocManaged(&m, 65536, CU_MEM_ATTACH_GLOBAL)) {
		errno = 0;
		mr = ibv_reg_mr(pd, (void *)(uintptr_t)m, 65536, acc);
		/* host-mapped, but nvidia-uvm's VM_IO mapping fails the kernel's pin */
		CHECK(!mr && errno == EFAULT, "ibv_reg_mr on CUDA managed memory: EFAULT (got %s)",
		      mr ? "success" : strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
	}
	errno = 0;
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)0x10000, 4096, acc);
	CHECK(!mr && errno == EFAULT, "ibv_reg_mr on an unmapped address: EFAULT (got %s)",
	      mr ? "success" : strerror(errno));

	int fd = -1;
	CUresult r = cu.MemGetHandleForAddressRange(&fd, d, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r) {
		printf("skip dmabuf checks: cuMemGetHandleForAddressRange(DMA_BUF_FD) = %d on this driver\n", (int)r);
	} else {
		char path[64], info[512] = "";
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		FILE *fi = fopen(path, "r");
		if (fi) {
			size_t k = fread(info, 1, sizeof(info) - 1, fi);
			info[k] = 0;
			fclose(fi);
		}
		char *x = strstr(info, "exp_name:");
		if (x)
			x[strcspn(x, "\n")] = 0;
		printf("dma-buf of the 2 MiB allocation: %s, lseek(SEEK_END) %lld\n", x ? x : "(no exp_name in fdinfo)",
		       (long long)lseek(fd, 0, SEEK_END));
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pd, 12288, 65536, d + 12288, fd, acc);
		if (p2p)
			CHECK(mr && mr->addr == (void *)(uintptr_t)12288 && mr->length == 65536,
			      "ibv_reg_dmabuf_mr(offset 12 KiB, 64 KiB, iova = the device address): registered, "
			      "mr->addr = offset (%s)",
			      mr ? "" : strerror(errno));
		else
			CHECK(!mr && errno == EOPNOTSUPP, "EFASIM_P2P=0: ibv_reg_dmabuf_mr: EOPNOTSUPP (got %s)",
			      mr ? "success" : strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pd, len - 4096, 8192, d + len - 4096, fd, acc);
		CHECK(!mr && errno == (p2p ? EINVAL : EOPNOTSUPP),
		      "ibv_reg_dmabuf_mr with offset + length past the dma-buf: %s (got %s)",
		      p2p ? "EINVAL" : "EOPNOTSUPP", mr ? "success" : strerror(errno));
		close(fd);
	}
	gda_checks(c, pd, p2p);
	stage_checks(c, pd, p2p);
	printf("gpu_selftest: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
#endif
