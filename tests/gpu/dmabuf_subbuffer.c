/* --dmabuf on a CUDA sub-buffer that does not start its dmabuf range: the MR
 * must start at the buffer. fi_mr_dmabuf.base_addr is the address of the
 * range's first byte and offset where the buffer lies in it (providers
 * register base_addr + offset; efa: iova = base_addr + offset). A host buffer
 * is written into the sub-buffer through libfabric (shm, one process) and
 * read back with cuMemcpy. The same write into an MR registered the old way
 * (base_addr = the buffer itself) is done too: it must fail or land elsewhere,
 * which shows the test can fail.
 * Needs a GPU and a libfabric with CUDA and FI_MR_DMABUF (>= 1.20): exit 77
 * otherwise. Built and run by `make gpu-check`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab.h"
#include "efab_cuda.h"
#include "efab_endpoint.h"
#include "efab_mem.h"
#include "efab_ops.h"
#include "efab_registration.h"
#include "efab_rt.h"
#include "efab_select.h"

#ifdef FI_MR_DMABUF
#define SUB 0x3000 /* a non-zero offset inside the first 64 KiB of the allocation */
#define LEN 4096

static int write_and_check(efab_fabric_t *fab, efab_mem_t *gpu, uint8_t *h, efab_mr_t *hmr,
			   uint64_t key, const char *what)
{
	efab_waitfor_t w = {"completion", "write", LEN, 0, 0};
	uint8_t zero[LEN] = {0}, back[LEN];
	efab_mem_write(gpu, SUB, zero, LEN);
	uint64_t addr = (fab->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
				? (uint64_t)(uintptr_t)((char *)gpu->ptr + SUB) : 0;
	int rc = efab_post_write(fab, 0, h, LEN, hmr->desc, addr, key, 0, 0, &w);
	if (!rc)
		rc = efab_wait_tx(fab, fab->tx_posted, &w);
	if (!rc)
		rc = efab_mem_read(gpu, SUB, back, LEN);
	int ok = !rc && !memcmp(back, h, LEN);
	printf("%s: %s\n", what, ok ? "data landed at the sub-buffer" : rc ? "write failed" : "data landed elsewhere");
	return ok;
}

#endif

int main(void)
{
#ifndef FI_MR_DMABUF
	printf("libfabric headers %d.%d have no FI_MR_DMABUF\n", FI_MAJOR_VERSION, FI_MINOR_VERSION);
	return 77;
#else
	efab_mem_t gpu, host;
	if (efab_mem_alloc(EFAB_MEM_CUDA, 0, 1 << 20, &gpu) != EFAB_OK)
		return 77;
	efab_fabric_req_t req = {.provider = "shm", .caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
							 FI_REMOTE_WRITE, .hmem = 1};
	struct fi_info *info = NULL;
	efab_fabric_t fab;
	int rc = efab_fabric_select(&req, &info);
	if (rc)
		return rc;
	if (efab_fabric_open(info, efab_rt_single(), 10.0, &fab) || efab_mem_alloc(EFAB_MEM_HOST, 0, LEN, &host))
		return 1;
	uint8_t *h = host.ptr;
	for (int i = 0; i < LEN; i++)
		h[i] = (uint8_t)(i * 13 + 5);
	efab_mr_t hmr, gmr;
	if (efab_mr_register(&fab, h, LEN, FI_HMEM_SYSTEM, 0, FI_WRITE | FI_READ, &hmr))
		return 1;
	const uint64_t acc = FI_REMOTE_WRITE | FI_REMOTE_READ | FI_WRITE | FI_READ;
	if ((rc = efab_mr_register_dmabuf(&fab, (char *)gpu.ptr + SUB, LEN, 0, acc, &gmr)))
		return rc;
	int good = write_and_check(&fab, &gpu, h, &hmr, gmr.key,
				   "efab_mr_register_dmabuf (base_addr = range start)");
	efab_mr_dereg(&gmr);

	/* the old registration: base_addr = the buffer, offset inside the range */
	int fd;
	uint64_t off;
	struct fid_mr *mr = NULL;
	int old_ok = 0;
	if (efab_cuda_dmabuf((char *)gpu.ptr + SUB, LEN, &fd, &off) == 0) {
		struct fi_mr_dmabuf d = {.fd = fd, .offset = off, .len = LEN, .base_addr = (char *)gpu.ptr + SUB};
		struct fi_mr_attr attr = {.dmabuf = &d, .iov_count = 1, .access = acc,
					  .requested_key = 77, .iface = FI_HMEM_CUDA};
		int ret = fi_mr_regattr(fab.domain, &attr, FI_MR_DMABUF, &mr);
		close(fd);
		printf("old registration (offset %llu): fi_mr_regattr %s\n", (unsigned long long)off,
		       ret ? fi_strerror(-ret) : "ok");
		if (!ret) {
			old_ok = write_and_check(&fab, &gpu, h, &hmr, fi_mr_key(mr), "old registration");
			fi_close(&mr->fid);
		}
		if (off == 0)
			printf("dmabuf offset 0: this allocation cannot show the old bug\n");
	}
	efab_mr_dereg(&hmr);
	efab_mem_free(&host);
	efab_mem_free(&gpu);
	efab_fabric_close(&fab);
	printf("result: new %s, old %s\n", good ? "correct" : "WRONG", old_ok ? "correct" : "wrong (as expected)");
	return good ? 0 : 1;
#endif
}
