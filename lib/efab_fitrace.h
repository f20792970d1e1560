/* libefab_fitrace.so (bench/tools/fitrace.c): an LD_PRELOAD interposer
 * around libfabric that counts, below whoever uses libfabric (NVSHMEM's
 * libfabric transport, NCCL's OFI plugin), the memory registrations each
 * domain receives (fi_mr_reg, fi_mr_regv, fi_mr_regattr) and records the
 * fabric, provider and mr_mode each domain was opened with. A program reads
 * it through efab_fitrace_read, found with dlsym(RTLD_DEFAULT, ...): absent
 * when the interposer is not preloaded. */
#ifndef EFAB_FITRACE_H
#define EFAB_FITRACE_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
#define EFAB_FITRACE_MAX_DOMAINS 64
typedef struct efab_fitrace_dom {
	const void *fid;   /* the struct fid_domain (identity only) */
	char fabric[64];   /* fabric_attr->name of the domain's fi_info */
	char prov[32];     /* fabric_attr->prov_name */
	char name[64];     /* domain_attr->name */
	int mr_mode;       /* domain_attr->mr_mode */
	int simulated;     /* the NIC is efasim's (fi_info nic firmware "efasim...") */
	int inner;         /* opened by a provider while it opened another domain
			    * (rxm's core domain, the efa fabric's shm peer domain):
			    * its registrations are the provider's own */
	uint64_t regs;     /* fi_mr_reg + fi_mr_regv + fi_mr_regattr calls on it */
	uint64_t regattr;  /* of which fi_mr_regattr */
	uint64_t failed;   /* of which returned an error */
} efab_fitrace_dom_t;
/* Copies up to max domains (in the order they were opened) into out; returns
 * how many domains were opened in all. */
typedef size_t (*efab_fitrace_read_fn)(efab_fitrace_dom_t *out, size_t max);
#define EFAB_FITRACE_READ "efab_fitrace_read"

/* struct fi_info as libfabric's 1.3 ABI lays it out (src/abi_1_0.c, struct
 * fi_info_1_3): today's first fields, nic last. */
typedef struct efab_fi_info_1_3 {
	void *next;
	uint64_t caps, mode;
	uint32_t addr_format;
	size_t src_addrlen, dest_addrlen;
	void *src_addr, *dest_addr, *handle;
	void *tx_attr, *rx_attr, *ep_attr, *domain_attr, *fabric_attr;
	void *nic;
} efab_fi_info_1_3_t;
#ifdef __cplusplus
}
#endif
#endif
