/* One binary for every libfabric from the one it was built with to the newest.
 *
 * libfabric.so.1 keeps its ABI across 1.x and 2.x, and an application tells it
 * which API version it speaks in fi_getinfo: the library then reads and writes
 * the application's own structures (fi_mr_attr, fi_cq_err_entry) in that
 * version's layout. efabench therefore does not ask for the version of the
 * headers it was compiled with but for efab_fi_api_version(): the running
 * library's version, capped at EFAB_FI_ABI_MAX, the newest version whose
 * application-allocated structures are mirrored below. Features newer than the
 * build headers (FI_MR_DMABUF, the endpoint's FI_OPT_*_RMA_SIZE, the 2.x
 * progress attribute) are then decided at run time from that version and the
 * provider's answers; their ABI constants are defined here, each citing the
 * libfabric header it mirrors, and checked against the headers when the
 * headers have them. */
#ifndef EFAB_ABI_H
#define EFAB_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The headers this binary was compiled with. */
#define EFAB_FI_BUILT FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
/* The newest API version whose structure layouts efabench mirrors (checked in
 * libfabric 2.6.0's include/rdma/fi_domain.h and fi_eq.h). Raise it only after
 * comparing the new release's headers with the mirrors below. */
#define EFAB_FI_ABI_MAX FI_VERSION(2, 6)

/* The API version efabench asks for: min(fi_version(), EFAB_FI_ABI_MAX). */
uint32_t efab_fi_api_version(void);

/* include/rdma/fi_endpoint.h (libfabric >= 2.0), enum of FI_OPT_ENDPOINT
 * options: FI_OPT_MAX_RMA_SIZE and FI_OPT_INJECT_RMA_SIZE (size_t). */
#define EFAB_FI_OPT_MAX_RMA_SIZE 14
#define EFAB_FI_OPT_INJECT_RMA_SIZE 18
/* the same enum, libfabric >= 1.18: FI_OPT_CUDA_API_PERMITTED (bool) */
#define EFAB_FI_OPT_CUDA_API_PERMITTED 10
/* include/rdma/fi_domain.h (libfabric >= 1.20): fi_mr_regattr flag. */
#define EFAB_FI_MR_DMABUF (1ULL << 40)
/* include/rdma/fabric.h (libfabric >= 2.0), enum fi_progress. */
#define EFAB_FI_PROGRESS_CONTROL_UNIFIED 3

/* Runtime features: the API version asked for (hence the running library)
 * has them. A provider may still refuse: the caller honours its answer. */
static inline int efab_fi_has_rma_size_opts(void)
{
	return efab_fi_api_version() >= FI_VERSION(2, 0);
}
static inline int efab_fi_has_dmabuf(void)
{
	return efab_fi_api_version() >= FI_VERSION(1, 20);
}

/* struct fi_mr_dmabuf, include/rdma/fi_domain.h (libfabric >= 1.20). */
typedef struct efab_mr_dmabuf {
	int fd;
	uint64_t offset;
	size_t len;
	void *base_addr;
} efab_mr_dmabuf_t;

/* struct fi_mr_attr as of include/rdma/fi_domain.h in libfabric 2.0..2.6
 * (dmabuf 1.20, hmem_data 1.19, page_size 1.22, base_mr/sub_mr_cnt 2.0). The
 * library reads only the fields of the API version asked for, so the tail
 * stays zero. Passed to fi_mr_regattr cast to struct fi_mr_attr. */
typedef struct efab_mr_attr {
	union {
		const struct iovec *mr_iov;
		const efab_mr_dmabuf_t *dmabuf;
	};
	size_t iov_count;
	uint64_t access;
	uint64_t offset;
	uint64_t requested_key;
	void *context;
	size_t auth_key_size;
	uint8_t *auth_key;
	enum fi_hmem_iface iface;
	union {
		uint64_t reserved;
		int cuda;
		int ze;
		int neuron;
		int synapseai;
		int rocr;
	} device;
	void *hmem_data;
	size_t page_size;
	const struct fid_mr *base_mr;
	size_t sub_mr_cnt;
} efab_mr_attr_t;

/* struct fi_cq_err_entry as of include/rdma/fi_eq.h in libfabric 1.20..2.6:
 * from API 1.20 on, fi_cq_readerr writes src_addr too (ofi_cq_err_memcpy),
 * past the end of the 1.17 structure. */
typedef struct efab_cq_err_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	size_t olen;
	int err;
	int prov_errno;
	void *err_data;
	size_t err_data_size;
	fi_addr_t src_addr;
} efab_cq_err_entry_t;

/* The running libfabric: the file libfabric.so.1 was loaded from (dladdr),
 * "" when unknown. */
void efab_libfabric_path(char *buf, size_t len);
/* The EFA installer version of the install holding lib_path (a file in
 * <prefix>/lib or lib64), from <prefix>/../efa_installed_packages, as the installer
 * writes it (/opt/amazon/efa -> /opt/amazon/efa_installed_packages); "" when
 * the library is not from an EFA installer. */
void efab_efa_installer_of(const char *lib_path, char *buf, size_t len);
/* The version from an efa_installed_packages text: "1.38.0" from
 * "# EFA installer version: 1.38.0"; "" when absent. */
void efab_efa_installer_parse(const char *text, char *buf, size_t len);
/* The Version of <libdir>/pkgconfig/libfabric.pc: "2.6.0", "2.7.0a1",
 * "2.7.0amzn2.0"; "" when there is none. A snapshot's fi_version() can lag its
 * release (2.7.0a1 answers 2.6). */
void efab_libfabric_pc_version(const char *libdir, char *out, size_t len);

/* The rest of the EFA stack under libfabric, which an EFA installer ships and
 * which is system-wide (an LD_LIBRARY_PATH swap of libfabric keeps it):
 * - rdma-core: the release of the libibverbs loaded in this process, from its
 *   file name (rdma-core's libibverbs/CMakeLists.txt installs
 *   libibverbs.so.1.<abi>.<release>, e.g. libibverbs.so.1.14.44.0 = 44.0;
 *   providers/efa/CMakeLists.txt libefa.so.1.<abi>.<release>). ver: "64.0",
 *   "efasim" for the simulated device's libibverbs, "" when no libibverbs is
 *   loaded (call it after fi_getinfo) or its name carries no release; detail:
 *   the files, for a row or a log. Either may be NULL. */
void efab_rdma_core_version(char *ver, size_t vlen, char *detail, size_t dlen);
/* The rdma-core release in a libibverbs/libefa file name: "44.0" from
 * ".../libibverbs.so.1.14.44.0"; "" when the name carries none. */
void efab_rdma_core_release_of(const char *path, char *out, size_t len);
/* - the EFA kernel driver: ${SYSFS_PATH:-/sys}/module/efa/version (the
 *   module's MODULE_VERSION; rdma-core reads sysfs under SYSFS_PATH too, and so
 *   the simulated device offers it there); "" without the module. */
void efab_efa_driver_version(char *buf, size_t len);
/* - the device firmware of an RDMA device (ibv name, "rdmap79s0"; a libfabric
 *   domain name with its "-rdm"/"-dgrm" suffix is accepted):
 *   ${SYSFS_PATH:-/sys}/class/infiniband/<dev>/fw_ver; "" when absent. */
void efab_ib_fw_ver(const char *dev, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
