/* Memory registration (fi_mr_regattr, dmabuf) and the exchange of keys. */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <rdma/fi_domain.h>

#include "efab.h"
#include "efab_abi.h"
#include "efab_cuda.h"
#include "efab_endpoint.h"
#include "efab_registration.h"
#include "efab_rt.h"
#include "efab_select.h"

/* What every registration needs once fi_mr_regattr succeeded: binding and
 * enabling under FI_MR_ENDPOINT, the next requested key, the outputs. */
static int finish_mr(efab_fabric_t *fab, struct fid_mr *mr, void *buf, size_t len, efab_mr_t *out)
{
	int ret;
	if (fab->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
		ret = fi_mr_bind(mr, &fab->ep->fid, 0);
		if (ret) {
			efab_log_fi("fi_mr_bind", ret);
			goto close_mr;
		}
		ret = fi_mr_enable(mr);
		if (ret) {
			efab_log_fi("fi_mr_enable", ret);
			goto close_mr;
		}
	}
	fab->next_key++;
	out->mr = mr;
	out->desc = fi_mr_desc(mr);
	out->key = fi_mr_key(mr);
	out->buf = buf;
	out->len = len;
	return EFAB_OK;

close_mr:
	fi_close(&mr->fid);
	return EFAB_ERR;
}

int efab_mr_register(efab_fabric_t *fab, void *buf, size_t len, int iface, int device,
		     uint64_t access, efab_mr_t *out)
{
	struct iovec iov = {buf, len};
	efab_mr_attr_t attr = {
		.mr_iov = &iov,
		.iov_count = 1,
		.access = access,
		.requested_key = fab->next_key,
		.iface = (enum fi_hmem_iface)iface,
	};
	struct fid_mr *mr;
	if (iface == FI_HMEM_CUDA)
		attr.device.cuda = device;
	int ret = fi_mr_regattr(fab->domain, (const struct fi_mr_attr *)&attr, 0, &mr);
	if (ret && iface != FI_HMEM_SYSTEM &&
	    (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP || ret == -FI_EINVAL)) {
		/* not ours to fix: on an RDMA NIC usually no GPU peer-memory/dmabuf path */
		efab_log_error("fi_mr_regattr cannot register GPU memory on %s: %s (%d); on an RDMA "
			       "NIC (efa) the kernel usually lacks GPU peer memory or dmabuf support "
			       "(nvidia-peermem, or a driver/kernel with dmabuf: try --dmabuf), "
			       "otherwise this libfabric was built without CUDA (FI_HMEM_CUDA)",
			       fab->info->fabric_attr->name, fi_strerror(-ret), ret);
		return EFAB_SKIP;
	}
	if (ret) {
		/* host memory on an RDMA NIC: the kernel pins it against
		 * RLIMIT_MEMLOCK (ib_umem_get answers ENOMEM past it) */
		efab_log_error("fi_mr_regattr (%zu bytes) failed: %s (%d)%s", len, fi_strerror(-ret), ret,
			       ret == -FI_ENOMEM && iface == FI_HMEM_SYSTEM
				       ? "; host memory is pinned against RLIMIT_MEMLOCK: check ulimit -l"
				       : "");
		return EFAB_ERR;
	}
	return finish_mr(fab, mr, buf, len, out);
}

uint64_t efab_dmabuf_base(const void *buf, uint64_t offset)
{
	return (uint64_t)(uintptr_t)buf - offset;
}

int efab_mr_register_dmabuf(efab_fabric_t *fab, void *buf, size_t len, int device,
			    uint64_t access, efab_mr_t *out)
{
	/* decided by the running library, not the headers: FI_MR_DMABUF and the
	 * dmabuf member of fi_mr_attr are read from API 1.20 on */
	if (!efab_fi_has_dmabuf()) {
		uint32_t v = fi_version();
		efab_log_error("--dmabuf: the running libfabric %u.%u has no FI_MR_DMABUF (needs >= "
			       "1.20)", FI_MAJOR(v), FI_MINOR(v));
		return EFAB_SKIP;
	}
	int fd;
	uint64_t offset;
	int rc = efab_cuda_dmabuf(buf, len, &fd, &offset);
	if (rc)
		return rc;
	efab_mr_dmabuf_t dmabuf = {.fd = fd, .offset = offset, .len = len,
				   .base_addr = (void *)(uintptr_t)efab_dmabuf_base(buf, offset)};
	efab_mr_attr_t attr = {
		.dmabuf = &dmabuf,
		.iov_count = 1,
		.access = access,
		.requested_key = fab->next_key,
		.iface = FI_HMEM_CUDA,
	};
	attr.device.cuda = device;
	struct fid_mr *mr;
	int ret = fi_mr_regattr(fab->domain, (const struct fi_mr_attr *)&attr, EFAB_FI_MR_DMABUF,
				&mr);
	close(fd); /* the provider imported it (or failed to) */
	if (ret) {
		efab_log_error("fi_mr_regattr(FI_MR_DMABUF, %zu bytes) failed: %s (%d)", len,
			       fi_strerror(-ret), ret);
		return ret == -FI_EOPNOTSUPP || ret == -FI_ENOSYS || ret == -FI_EBADFLAGS ? EFAB_SKIP
											   : EFAB_ERR;
	}
	return finish_mr(fab, mr, buf, len, out);
}

void efab_mr_dereg(efab_mr_t *mr)
{
	if (mr->mr)
		fi_close(&mr->mr->fid);
	memset(mr, 0, sizeof(*mr));
}

/* One rank's key on the wire; raw holds an FI_MR_RAW key (fi_mr_raw_attr). */
struct wire_key {
	uint64_t base, key, len, raw_len;
	uint8_t raw[64];
};

int efab_mr_exchange(efab_fabric_t *fab, const efab_mr_t *mr, efab_rkey_t *out)
{
	efab_rt_t *rt = fab->rt;
	uint64_t mr_mode = fab->info->domain_attr->mr_mode;
	struct wire_key mine;
	memset(&mine, 0, sizeof(mine));
	mine.base = (mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)mr->buf : 0;
	mine.key = mr->key;
	mine.len = mr->len;
	if (mr_mode & FI_MR_RAW) {
		size_t klen = sizeof(mine.raw);
		uint64_t base;
		int ret = fi_mr_raw_attr(mr->mr, &base, mine.raw, &klen, 0);
		if (ret) {
			efab_log_fi("fi_mr_raw_attr", ret);
			return EFAB_ERR;
		}
		mine.base = base;
		mine.raw_len = klen;
	}
	struct wire_key *all = calloc((size_t)rt->size, sizeof(*all));
	if (!all) {
		efab_log_error("out of memory for the key exchange");
		return EFAB_ERR;
	}
	if (rt->allgather(rt, &mine, all, sizeof(mine))) {
		efab_log_error("memory key exchange failed");
		free(all);
		return EFAB_ERR;
	}
	for (int r = 0; r < rt->size; r++) {
		out[r] = (efab_rkey_t){all[r].base, all[r].key, all[r].len, 0};
		if (mr_mode & FI_MR_RAW) {
			uint64_t key;
			int ret = fi_mr_map_raw(fab->domain, all[r].base, all[r].raw, all[r].raw_len,
						&key, 0);
			if (ret) {
				efab_log_fi("fi_mr_map_raw", ret);
				efab_rkeys_release(fab, out, (size_t)r);
				free(all);
				return EFAB_ERR;
			}
			out[r].key = key;
			out[r].mapped = 1;
		}
	}
	free(all);
	return EFAB_OK;
}

void efab_rkeys_release(efab_fabric_t *fab, efab_rkey_t *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keys[i].mapped) {
			fi_mr_unmap_key(fab->domain, keys[i].key);
			keys[i].mapped = 0;
		}
}
