/* The host side of the GPU initiator (efab_gda.h). Every step that can be
 * missing on a host is a skip with its reason, checked before any timing:
 * libfabric without FI_EFA_GDA_OPS (< 2.3) or not efa-direct; the ops built
 * without rdma-core's queries (-FI_ENOSYS: rdma-core < 59); a device or
 * driver without CQs in external memory (-FI_EOPNOTSUPP: EFA driver < 2.17);
 * 128-byte WQEs; CUDA without dma-buf export; the NVIDIA driver refusing to
 * map the NIC's queue pages into the GPU. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "efab.h"
#include "efab_abi.h"
#include "efab_cuda.h"
#include "efab_gda.h"

#if defined(__has_include)
#if __has_include(<rdma/fi_ext_efa.h>)
#include <rdma/fi_ext_efa.h>
#endif
#endif

#if defined(EFAB_HAVE_CUDA) && defined(FI_EFA_GDA_OPS)
#define EFAB_GDA_BUILT 1
#endif

#define PAGE 4096ul
#define PAGE_ALIGN(x) (((x) + PAGE - 1) & ~(PAGE - 1))

#ifndef EFAB_GDA_BUILT

int efab_gda_compiled(const char **why)
{
#ifndef EFAB_HAVE_CUDA
	*why = "efabench was built without CUDA (cuda.h: set CUDA_HOME)";
#else
	*why = "efabench was built against a libfabric without rdma/fi_ext_efa.h's FI_EFA_GDA_OPS "
	       "(libfabric >= 2.3 with the efa provider)";
#endif
	return 0;
}

int efab_gda_open(efab_gda_t *g, efab_fabric_t *fab, int device, struct fid_mr *data_mr,
		  uint32_t rx_entries, int simulated, unsigned wqe_bytes)
{
	const char *why;
	(void)fab, (void)device, (void)data_mr, (void)rx_entries, (void)simulated, (void)wqe_bytes;
	efab_gda_compiled(&why);
	snprintf(g->why, sizeof(g->why), "%s", why);
	return EFAB_SKIP;
}

int efab_gda_connect(efab_gda_t *g, efab_fabric_t *fab, const void *name, size_t namelen,
		     uint64_t rkey)
{
	(void)g, (void)fab, (void)name, (void)namelen, (void)rkey;
	return EFAB_ERR;
}

void efab_gda_close(efab_gda_t *g)
{
	(void)g;
}

#else

int efab_gda_compiled(const char **why)
{
	*why = NULL;
	return 1;
}

#define OPS(g) ((struct fi_efa_ops_gda *)(g)->ops)
#define GDA_AGAIN 3 /* open_ext_cq: EINVAL while the depth is probed */

static uint32_t pow2_at_least(uint64_t v)
{
	uint32_t n = 1;
	while (n < v && n < (1u << 30))
		n <<= 1;
	return n;
}


static int skip(efab_gda_t *g, const char *fmt, const char *what, int ret)
{
	snprintf(g->why, sizeof(g->why), fmt, what, fi_strerror(-ret), ret);
	return EFAB_SKIP;
}

/* A CQ whose ring is entries x 32 B at ring_off of the arena. */
static int open_ext_cq(efab_gda_t *g, efab_fabric_t *fab, uint32_t entries, size_t ring_off,
		       size_t ring_len, struct fid_cq **cq, uint32_t *got, const char *which)
{
	struct fi_cq_attr attr = {.size = entries, .format = FI_CQ_FORMAT_DATA,
				  .wait_obj = FI_WAIT_NONE};
	struct fi_efa_cq_init_attr ext = {.flags = FI_EFA_CQ_INIT_FLAGS_EXT_MEM_DMABUF};
	ext.ext_mem_dmabuf.buffer = NULL; /* GPU memory: no CPU address, the CPU never polls it */
	ext.ext_mem_dmabuf.length = ring_len;
	ext.ext_mem_dmabuf.offset = g->fd_off + ring_off;
	ext.ext_mem_dmabuf.fd = (uint32_t)g->fd;
	int ret = OPS(g)->cq_open_ext(fab->domain, &attr, &ext, cq, NULL);
	if (ret == -FI_EINVAL && g->depth_probe)
		return GDA_AGAIN; /* more entries than the device's max_cq_depth? (the caller halves) */
	if (ret == -FI_ENOSYS)
		return skip(g, "cq_open_ext (%s CQ): %s (%d): this libfabric's efa provider was built "
			       "without rdma-core's external-memory CQ (rdma-core >= 59)", which, ret);
	if (ret == -FI_EOPNOTSUPP)
		return skip(g, "cq_open_ext (%s CQ): %s (%d): the EFA device/driver does not offer CQs "
			       "in external memory (EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF: EFA "
			       "driver >= 2.17)", which, ret);
	if (ret) {
		efab_log_error("cq_open_ext (%s CQ, %u entries, dma-buf offset %llu, %zu bytes): %s (%d)",
			       which, entries, (unsigned long long)ext.ext_mem_dmabuf.offset, ring_len,
			       fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	struct fi_efa_cq_attr qa;
	ret = OPS(g)->query_cq(*cq, &qa);
	if (ret) {
		efab_log_error("query_cq (%s CQ): %s (%d)", which, fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	if (qa.entry_size != EFAB_GDA_CQE_BYTES || efab_gda_log2(qa.num_entries) > 31 ||
	    (size_t)qa.num_entries * qa.entry_size > ring_len) {
		efab_log_error("query_cq (%s CQ): %u entries of %u B do not fit the %zu-byte ring or "
			       "are not 32-byte entries in a power of two", which, qa.num_entries,
			       qa.entry_size, ring_len);
		return EFAB_ERR;
	}
	*got = qa.num_entries;
	g->cqe_size = qa.entry_size;
	return EFAB_OK;
}

/* The page range [p, p+len) mapped into the GPU: as I/O memory first (a real
 * EFA's LLQ and doorbell are BAR pages), then, only on the simulated device
 * (whose queues are process memory), as plain host memory. */
static int map_pages(efab_gda_t *g, void *p, size_t len, int simulated, void **reg, size_t *reg_len,
		     void **dev, const char *what)
{
	uintptr_t a = (uintptr_t)p & ~(PAGE - 1);
	size_t l = PAGE_ALIGN((uintptr_t)p + len - a);
	char err[256];
	int code = 0;
	void *d = NULL;
	int rc = efab_cuda_host_map((void *)a, l, 1, &d, &code, err, sizeof(err));
	if (rc == EFAB_OK) {
		g->iomemory = 1;
	} else if (simulated && rc == EFAB_ERR) {
		char err2[256];
		rc = efab_cuda_host_map((void *)a, l, 0, &d, &code, err2, sizeof(err2));
		if (rc) {
			efab_log_error("mapping the %s into the GPU: %s; %s", what, err, err2);
			return EFAB_ERR;
		}
		snprintf(g->map_note, sizeof(g->map_note),
			 "SQ and doorbell mapped with cuMemHostRegister(DEVICEMAP) without IOMEMORY: the "
			 "simulated device's queues are process memory (%s)", err);
	} else if (rc == EFAB_ERR) {
		/* CUDA's documentation of CU_MEMHOSTREGISTER_IOMEMORY: "It may return
		 * CUDA_ERROR_NOT_PERMITTED if run as an unprivileged user,
		 * CUDA_ERROR_NOT_SUPPORTED on older Linux kernel versions". A root
		 * process refused is not a privilege matter: the NVIDIA driver then
		 * refuses to map a third-party device's BAR (the nvidia module's
		 * PeerMappingOverride=1 registry key lifts that check). */
		const char *hint;
		if (code == EFAB_CU_NOT_PERMITTED && geteuid() != 0)
			hint = "CUDA refuses I/O memory mappings to an unprivileged user: run as root";
		else if (code == EFAB_CU_NOT_PERMITTED)
			hint = "refused although running as root: the NVIDIA driver does not map this "
			       "device's BAR into the GPU (load the nvidia module with "
			       "NVreg_RegistryDwords=\"PeerMappingOverride=1;\")";
		else if (code == EFAB_CU_NOT_SUPPORTED)
			hint = "CUDA has no I/O memory mappings here (CUDA documents this for older Linux "
			       "kernels; also the answer where the platform offers no GPU peer mappings "
			       "of PCIe BARs)";
		else
			hint = "the NVIDIA driver refuses the I/O mapping (see CUDA's error above)";
		snprintf(g->why, sizeof(g->why), "mapping the NIC's %s into the GPU: %s: %s", what, err,
			 hint);
		return EFAB_SKIP;
	} else {
		snprintf(g->why, sizeof(g->why), "mapping the %s into the GPU: %s", what, err);
		return EFAB_SKIP;
	}
	*reg = (void *)a;
	*reg_len = l;
	*dev = (uint8_t *)d + ((uintptr_t)p - a);
	return EFAB_OK;
}

/* The fi_info of a GPU endpoint whose QP takes 128-byte WQEs: fab's, with an
 * inject size of 80 B (efa_io_tx_wqe_128's inline room, rdma-core's
 * EFA_IO_TX_DESC_INLINE_MAX_SIZE_128) asked anew, so libfabric >= 2.7 sizes the
 * queue for it (efa_user_info.c: efadv_get_max_sq_depth) and creates the QP
 * with inline RDMA writes. NULL and g->why when not offered. */
static struct fi_info *wide_wqe_info(efab_gda_t *g, efab_fabric_t *fab)
{
	struct fi_info *hints = fi_dupinfo(fab->info), *info = NULL;
	if (!hints) {
		snprintf(g->why, sizeof(g->why), "fi_dupinfo: out of memory");
		return NULL;
	}
	hints->tx_attr->inject_size = 80;
	hints->tx_attr->size = 0;
	int ret = fi_getinfo(efab_fi_api_version(), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret || !info || info->tx_attr->inject_size < 80) {
		snprintf(g->why, sizeof(g->why), "--gpu-wqe 128: fi_getinfo with an inject size of 80 B "
			 "on %s: %s: 128-byte WQEs need libfabric >= 2.7 (efa-direct's inject size from "
			 "the device) and a device whose inline_buf_size_ex is 80",
			 fab->info->domain_attr->name, ret ? fi_strerror(-ret) : "a smaller inject size");
		fi_freeinfo(info);
		return NULL;
	}
	return info;
}

int efab_gda_open(efab_gda_t *g, efab_fabric_t *fab, int device, struct fid_mr *data_mr,
		  uint32_t rx_entries, int simulated, unsigned wqe_bytes)
{
	memset(g, 0, sizeof(*g));
	g->fd = -1;
	g->device = device;
	uint32_t v = fi_version();
	if (FI_VERSION_LT(v, FI_VERSION(2, 3))) {
		snprintf(g->why, sizeof(g->why), "the running libfabric %u.%u has no GDA ops "
			 "(FI_EFA_GDA_OPS: libfabric >= 2.3)", FI_MAJOR(v), FI_MINOR(v));
		return EFAB_SKIP;
	}
	int ret = fi_open_ops(&fab->domain->fid, FI_EFA_GDA_OPS, 0, &g->ops, NULL);
	if (ret) {
		snprintf(g->why, sizeof(g->why), "fi_open_ops(\"%s\") on fabric %s: %s (%d): GPU-initiated "
			 "operations need the efa provider's efa-direct fabric", FI_EFA_GDA_OPS,
			 fab->info->fabric_attr->name, fi_strerror(-ret), ret);
		return EFAB_SKIP;
	}
	if (!(fab->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)) {
		snprintf(g->why, sizeof(g->why), "the domain's mr_mode lacks FI_MR_VIRT_ADDR: the WQE's "
			 "remote address would not be a virtual address");
		return EFAB_SKIP;
	}
	uint64_t lkey = OPS(g)->get_mr_lkey(data_mr);
	if (lkey == FI_KEY_NOTAVAIL) {
		efab_log_error("get_mr_lkey: the data buffer's registration has no lkey");
		return EFAB_ERR;
	}
	g->lkey = (uint32_t)lkey;
	/* the CQ rings: zeroed GPU memory (phase 0 everywhere: nothing valid), one
	 * dma-buf over all of it, registered from that fd */
	uint32_t tx_want = pow2_at_least(fab->info->tx_attr->size ? fab->info->tx_attr->size : 256);
	uint32_t rx_want = pow2_at_least(rx_entries ? rx_entries : 256);
	size_t tx_len = PAGE_ALIGN((size_t)tx_want * EFAB_GDA_CQE_BYTES),
	       rx_len = PAGE_ALIGN((size_t)rx_want * EFAB_GDA_CQE_BYTES);
	if (tx_len > EFAB_GDA_GPU_PAGE || rx_len > EFAB_GDA_GPU_PAGE) {
		snprintf(g->why, sizeof(g->why), "a CQ ring of %zu bytes (%u send, %u receive entries x "
			 "32 B) is larger than one 2 MiB GPU page: the EFA driver takes only "
			 "DMA-contiguous CQ memory (\"Non contiguous CQ unsupported\")",
			 tx_len > rx_len ? tx_len : rx_len, tx_want, rx_want);
		return EFAB_SKIP;
	}
	/* each ring inside one 2 MiB-aligned window of GPU memory (contiguous) */
	g->arena_len = tx_len + rx_len + 2 * EFAB_GDA_GPU_PAGE;
	int rc = efab_cuda_alloc(0, device, g->arena_len, &g->arena);
	if (rc) {
		snprintf(g->why, sizeof(g->why), "no GPU memory for the CQ rings (see above)");
		return rc;
	}
	uint64_t tx_off = 0, rx_off = 0, used = 0;
	if (efab_gda_place_rings((uint64_t)(uintptr_t)g->arena, tx_len, rx_len, &tx_off, &rx_off, &used) ||
	    used > g->arena_len) {
		efab_log_error("placing the CQ rings in the GPU arena failed (%zu + %zu bytes)", tx_len, rx_len);
		return EFAB_ERR;
	}
	if (efab_cuda_memset(g->arena, 0, g->arena_len))
		return EFAB_ERR;
	rc = efab_cuda_dmabuf(g->arena, g->arena_len, &g->fd, &g->fd_off);
	if (rc) {
		snprintf(g->why, sizeof(g->why), "cannot export the CQ rings' GPU memory as a dma-buf "
			 "(see above): cq_open_ext takes a dma-buf");
		return rc;
	}
	/* Real EFA needs no MR of the rings: the driver imports the dma-buf for
	 * the CQ itself. The simulated device learns which GPU memory a dma-buf
	 * covers only from an MR of it (tests/efasim/memkind.c): there, one MR
	 * with local access only. */
	if (simulated) {
		efab_mr_dmabuf_t dmabuf = {.fd = g->fd, .offset = g->fd_off, .len = g->arena_len,
					   .base_addr = (void *)((uintptr_t)g->arena - g->fd_off)};
		efab_mr_attr_t attr = {.dmabuf = &dmabuf, .iov_count = 1, .access = FI_READ | FI_WRITE,
				       .requested_key = fab->next_key++, .iface = FI_HMEM_CUDA};
		attr.device.cuda = device;
		ret = fi_mr_regattr(fab->domain, (const struct fi_mr_attr *)&attr, EFAB_FI_MR_DMABUF,
				    &g->arena_mr);
		if (ret) {
			efab_log_error("fi_mr_regattr(FI_MR_DMABUF) of the CQ rings' GPU memory (%zu bytes, "
				       "for the simulated device): %s (%d)", g->arena_len, fi_strerror(-ret), ret);
			g->arena_mr = NULL;
			return EFAB_ERR;
		}
	}
	rc = open_ext_cq(g, fab, tx_want, tx_off, tx_len, &g->tx_cq, &g->tx_n, "send");
	/* the receive ring asks for rx_entries; a device whose max_cq_depth is
	 * smaller refuses it with EINVAL (efa_create_cq: entries > max_cq_depth):
	 * halve down to 256, and say so (writedata launches are cut to the ring) */
	for (g->depth_probe = 1; !rc;) {
		int r = open_ext_cq(g, fab, rx_want, rx_off, PAGE_ALIGN((size_t)rx_want * EFAB_GDA_CQE_BYTES),
				    &g->rx_cq, &g->rx_n, "receive");
		if (r != GDA_AGAIN) {
			rc = r;
			break;
		}
		if (rx_want <= 256) {
			g->depth_probe = 0;
			rc = open_ext_cq(g, fab, rx_want, rx_off, PAGE_ALIGN((size_t)rx_want * EFAB_GDA_CQE_BYTES),
					 &g->rx_cq, &g->rx_n, "receive");
			break;
		}
		rx_want /= 2;
		snprintf(g->depth_note, sizeof(g->depth_note), "the receive CQ ring has %u entries: the "
			 "device refused %u (EINVAL: its max_cq_depth)", rx_want, rx_want * 2);
	}
	g->depth_probe = 0;
	if (rc)
		return rc;
	g->tx_ring = (uint8_t *)g->arena + tx_off;
	g->rx_ring = (uint8_t *)g->arena + rx_off;
	/* the GPU's endpoint: fab's domain and AV, its own CQs; libfabric posts
	 * nothing on it (its own direct path on the same QP would share the
	 * producer index) */
	struct fi_info *ep_info = fab->info;
	if (wqe_bytes == EFAB_GDA_WQE_BYTES_WIDE && !(ep_info = wide_wqe_info(g, fab)))
		return EFAB_SKIP;
	ret = fi_endpoint(fab->domain, ep_info, &g->ep, NULL);
	if (ep_info != fab->info)
		fi_freeinfo(ep_info);
	if (ret ||
	    (ret = fi_ep_bind(g->ep, &fab->av->fid, 0)) ||
	    (ret = fi_ep_bind(g->ep, &g->tx_cq->fid, FI_TRANSMIT)) ||
	    (ret = fi_ep_bind(g->ep, &g->rx_cq->fid, FI_RECV)) || (ret = fi_enable(g->ep))) {
		efab_log_error("the GPU's endpoint (fi_endpoint/fi_ep_bind/fi_enable): %s (%d)",
			       fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	g->namelen = sizeof(g->name);
	if ((ret = fi_getname(&g->ep->fid, g->name, &g->namelen))) {
		efab_log_error("fi_getname (the GPU's endpoint): %s (%d)", fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	/* zeroed: libfabric < 2.7 leaves the bytes where 2.7 puts caps alone */
	struct fi_efa_wq_attr sq, rq;
	_Static_assert(offsetof(struct fi_efa_wq_attr, max_batch) == 24 && sizeof(struct fi_efa_wq_attr) == 32,
		       "fi_efa_wq_attr: caps (libfabric >= 2.7) is read at byte 28");
	memset(&sq, 0, sizeof(sq));
	memset(&rq, 0, sizeof(rq));
	ret = OPS(g)->query_qp_wqs(g->ep, &sq, &rq);
	if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP)
		return skip(g, "query_qp_wqs%s: %s (%d): this libfabric/rdma-core cannot hand out the "
			       "send queue (efadv_query_qp_wqs: rdma-core >= 59)", "", ret);
	if (ret) {
		efab_log_error("query_qp_wqs: %s (%d)", fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	/* rdma-core >= 65 on a device with them: every WQE and send completion
	 * carries a 64-bit request id (req_id + req_id_ex); the kernels number
	 * theirs by producer count and check the whole id that comes back */
	g->req64 = !!(efab_gda_wq_caps(&sq, sizeof(sq)) & EFAB_GDA_WQ_CAPS_64_BIT_REQ_ID);
	if (sq.entry_size != EFAB_GDA_WQE_BYTES && sq.entry_size != EFAB_GDA_WQE_BYTES_WIDE) {
		snprintf(g->why, sizeof(g->why), "the send queue's entries are %u bytes (the kernels "
			 "write efa_io_tx_wqe, 64 bytes, or efa_io_tx_wqe_128)", sq.entry_size);
		return EFAB_SKIP;
	}
	if (efab_gda_log2(sq.num_entries) > 16 || !sq.max_batch || !sq.doorbell || !sq.buffer) {
		efab_log_error("query_qp_wqs: send queue of %u entries, max_batch %u, doorbell %p: not "
			       "usable", sq.num_entries, sq.max_batch, (void *)sq.doorbell);
		return EFAB_ERR;
	}
	g->sq_buf = sq.buffer;
	g->sq_db = sq.doorbell;
	g->sq_n = sq.num_entries;
	g->sq_entry = sq.entry_size;
	g->max_batch = sq.max_batch;
	size_t dummy = 0;
	void *dev;
	rc = map_pages(g, g->sq_buf, (size_t)g->sq_n * g->sq_entry, simulated, &g->sq_reg,
		       &g->sq_reg_len, &dev, "send queue");
	if (rc)
		return rc;
	g->sq_dev = dev;
	uintptr_t db = (uintptr_t)g->sq_db, s0 = (uintptr_t)g->sq_reg;
	if (db >= s0 && db + sizeof(uint32_t) <= s0 + g->sq_reg_len) { /* on a page mapped already */
		g->db_dev = (uint32_t *)(void *)(g->sq_dev - ((uintptr_t)g->sq_buf - s0) + (db - s0));
		return EFAB_OK;
	}
	rc = map_pages(g, g->sq_db, sizeof(uint32_t), simulated, &g->db_reg, &dummy, &dev,
		       "send queue doorbell");
	if (rc)
		return rc;
	g->db_dev = dev;
	return EFAB_OK;
}

int efab_gda_connect(efab_gda_t *g, efab_fabric_t *fab, const void *name, size_t namelen,
		     uint64_t rkey)
{
	(void)namelen;
	int ret = fi_av_insert(fab->av, name, 1, &g->peer, 0, NULL);
	if (ret != 1) {
		efab_log_error("fi_av_insert (the peer's GPU endpoint): %s (%d)",
			       fi_strerror(ret < 0 ? -ret : FI_EINVAL), ret);
		return EFAB_ERR;
	}
	uint16_t ahn = 0, qpn = 0;
	uint32_t qkey = 0;
	ret = OPS(g)->query_addr(g->ep, g->peer, &ahn, &qpn, &qkey);
	if (ret) {
		efab_log_error("query_addr: %s (%d)", fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	if (rkey >> 32) {
		efab_log_error("the peer's MR key %#llx does not fit the WQE's 32-bit rkey",
			       (unsigned long long)rkey);
		return EFAB_ERR;
	}
	g->dest = (efab_gda_dest_t){.ahn = ahn, .qpn = qpn, .qkey = qkey, .rkey = (uint32_t)rkey,
				    .lkey = g->lkey};
	return EFAB_OK;
}

void efab_gda_close(efab_gda_t *g)
{
	/* the kernel is done; the mappings go first, the QP before its CQs */
	if (g->sq_reg)
		efab_cuda_host_unregister(g->sq_reg);
	if (g->db_reg && g->db_reg != g->sq_reg)
		efab_cuda_host_unregister(g->db_reg);
	if (g->ep)
		fi_close(&g->ep->fid);
	if (g->tx_cq)
		fi_close(&g->tx_cq->fid);
	if (g->rx_cq)
		fi_close(&g->rx_cq->fid);
	if (g->arena_mr)
		fi_close(&g->arena_mr->fid);
	if (g->fd >= 0)
		close(g->fd);
	if (g->arena)
		efab_cuda_free(0, g->device, g->arena);
	memset(g, 0, sizeof(*g));
	g->fd = -1;
}

#endif
