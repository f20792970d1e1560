/* Memory registration and keys (registration.c): fi_mr_regattr of host and
 * CUDA memory (dmabuf too), and the collective exchange of every rank's
 * (address, key, length). */
#ifndef EFAB_REGISTRATION_H
#define EFAB_REGISTRATION_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fi_domain.h>

#ifdef __cplusplus
extern "C" {
#endif

/* efab_endpoint.h: its efab_fabric_t holds an efab_mr_t. */
struct efab_fabric;

typedef struct efab_mr {
	struct fid_mr *mr;
	void *desc; /* NULL unless FI_MR_LOCAL (still valid to pass either way) */
	uint64_t key;
	void *buf;
	size_t len;
} efab_mr_t;

/* iface: FI_HMEM_SYSTEM or FI_HMEM_CUDA, device: CUDA ordinal. */
int efab_mr_register(struct efab_fabric *fab, void *buf, size_t len, int iface, int device,
		     uint64_t access, efab_mr_t *out);
/* Register CUDA memory through a dmabuf fd (FI_MR_DMABUF, libfabric >=
 * 1.20); EFAB_SKIP with the missing piece named when unavailable. */
int efab_mr_register_dmabuf(struct efab_fabric *fab, void *buf, size_t len, int device,
			    uint64_t access, efab_mr_t *out);
void efab_mr_dereg(efab_mr_t *mr);
/* fi_mr_dmabuf.base_addr for buf, which lies offset bytes into its dmabuf:
 * the address of the dmabuf's first byte (the provider registers the region
 * at base_addr + offset; efa: iova = base_addr + offset). */
uint64_t efab_dmabuf_base(const void *buf, uint64_t offset);

/* A peer's buffer as this rank addresses it. */
typedef struct efab_rkey {
	uint64_t base; /* address to add offsets to: the VA under FI_MR_VIRT_ADDR, else 0 */
	uint64_t key;
	uint64_t len;
	int mapped; /* from fi_mr_map_raw: release with fi_mr_unmap_key */
} efab_rkey_t;

/* Collective: every rank learns every rank's (base, key, len) of its mr.
 * out has rt->size entries. */
int efab_mr_exchange(struct efab_fabric *fab, const efab_mr_t *mr, efab_rkey_t *out);
void efab_rkeys_release(struct efab_fabric *fab, efab_rkey_t *keys, size_t n);

#ifdef __cplusplus
}
#endif

#endif
