/* The libfabric layer, one header for four sources (select.c, endpoint.c,
 * registration.c, ops.c): fabric selection, endpoint bring-up, memory
 * registration and completion
 * waits. Everything one rank needs travels in an efab_fabric_t: no globals. */
#ifndef EFAB_FABRIC_H
#define EFAB_FABRIC_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "efab.h"
#include "efab_abi.h"
#include "efab_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The API version every fi_getinfo/fi_import asks for: the running library's,
 * capped at the newest layout efabench mirrors (efab_abi.h), not the headers'. */
#define EFAB_FI_VERSION efab_fi_api_version()

/* Every mr_mode bit efabench honours. FI_MR_HMEM is honoured always (we
 * register every buffer we use), FI_MR_RAW through fi_mr_raw_attr/map_raw. */
#define EFAB_MR_MODE_SUPPORTED                                                               \
	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT |     \
	 FI_MR_HMEM | FI_MR_RAW)

typedef struct efab_fabric_req {
	const char *provider; /* NULL or "" = any */
	const char *fabric;
	const char *domain;   /* NULL, "" or "auto" = any (topology picks "auto" upstream) */
	uint64_t caps;        /* FI_RMA | FI_READ ... ; FI_ATOMIC only for atomic benchmarks */
	int hmem;             /* GPU memory in use: adds FI_HMEM */
	int cq_data;          /* remote CQ data needed (writedata) */
	/* Bits efabench normally offers but must not offer now: an unregistered
	 * source needs mr_mode without FI_MR_LOCAL; the probe asks without one
	 * bit at a time to learn what a fabric requires. */
	uint64_t mode_off, mr_mode_off;
	/* Offer FI_RX_CQ_DATA: efab_fabric_select asks without it first and adds it
	 * only when nothing matched (a provider that echoes it would otherwise make
	 * every remote-CQ-data write consume a posted receive). */
	int rx_cq_data;
	/* domain "auto": the NIC the topology chose (PCI bus id, OS name) */
	const char *nic_busid;
	const char *nic_name;
} efab_fabric_req_t;

/* Hints for req (fi_freeinfo them). NULL on allocation failure. */
struct fi_info *efab_hints_build(const efab_fabric_req_t *req);

/* True when prov (e.g. "tcp;ofi_rxm") is selected by the name a user gave
 * ("tcp", "tcp;ofi_rxm", "ofi_rxm"). */
int efab_prov_matches(const char *user, const char *prov);

/* Pick the first fi_info in list that matches req's names; NULL if none. */
const struct fi_info *efab_info_match(const struct fi_info *list, const efab_fabric_req_t *req);

/* fi_getinfo + classification: EFAB_OK with *out (fi_freeinfo it), EFAB_EUSAGE
 * when no provider/fabric/domain of that name exists (the message lists those
 * that do), EFAB_SKIP when it exists but lacks what req needs (the message says
 * what), EFAB_ERR for libfabric failures. */
int efab_fabric_select(const efab_fabric_req_t *req, struct fi_info **out);

/* Why a fabric that exists cannot serve req; writes a sentence into buf.
 * Exposed for tests on constructed fi_info. */
void efab_explain_unsupported(const struct fi_info *info, const efab_fabric_req_t *req, char *buf,
			      size_t len);

/* Every RDM fi_info the host offers, whatever its caps (hints: endpoint type
 * only, every mode and mr_mode bit accepted). */
int efab_getinfo_all(struct fi_info **out);

/* --src-unregistered: EFAB_SKIP with the reason in msg when the fabric's
 * mr_mode requires registered local buffers (FI_MR_LOCAL), detected from the
 * mr_mode, never from the fabric's name; EFAB_OK otherwise. */
int efab_check_src_unregistered(const struct fi_info *info, char *msg, size_t len);

/* One-line list of RDM "provider/fabric/domain" names available here. */
void efab_fabric_list(char *buf, size_t len);

/* A size limit of the endpoint and where it came from. */
typedef struct efab_limit {
	size_t value;
	const char *source; /* "FI_OPT_INJECT_RMA_SIZE", "tx_attr->inject_size", ... */
	int from_ep;        /* the endpoint answered the FI_OPT_* query */
} efab_limit_t;

/* The endpoint's answer to an FI_OPT_* size option (rc from fi_getopt) when it
 * gave one within the fi_info attribute (the man page's contract), else the
 * attribute. efa-direct answers FI_OPT_INJECT_RMA_SIZE = 0 while its
 * tx_attr->inject_size is the device's inline size: fi_inject_write there
 * returns -FI_ENOSYS for any non-empty buffer. */
efab_limit_t efab_limit_pick(int rc, size_t optval, const char *optname, size_t attr,
			     const char *attrname);

/* RMA inject and maximum sizes of an enabled ep (FI_OPT_INJECT_RMA_SIZE, FI_OPT_MAX_RMA_SIZE
 * on libfabric >= 2.0; otherwise, and for providers that do not implement
 * them, tx_attr->inject_size and ep_attr->max_msg_size). */
void efab_ep_rma_limits(struct fid_ep *ep, const struct fi_info *info, efab_limit_t *inject,
			efab_limit_t *max);
/* The same for info without an endpoint of the caller's: a quiet one-rank
 * efab_fabric_open (some providers answer only on an enabled endpoint),
 * closed again; on any failure, and on libfabric < 2.0, the attributes. */
void efab_info_rma_limits(const struct fi_info *info, efab_limit_t *inject, efab_limit_t *max);

typedef struct efab_mr {
	struct fid_mr *mr;
	void *desc; /* NULL unless FI_MR_LOCAL (still valid to pass either way) */
	uint64_t key;
	void *buf;
	size_t len;
} efab_mr_t;

typedef struct efab_fabric {
	struct fi_info *info; /* owned */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t *peers; /* by rank */
	efab_rt_t *rt;
	double timeout_s;
	uint64_t next_key; /* requested keys when not FI_MR_PROV_KEY */
	/* completion accounting, driven by efab_progress() */
	uint64_t tx_posted, tx_done;
	uint64_t rx_data_count; /* remote CQ data arrivals */
	uint64_t rx_data_last;
	size_t rx_posted;       /* receives posted for FI_RX_CQ_DATA */
	/* Receive slots for FI_RX_CQ_DATA: their contexts are the top slots of ctx;
	 * a free list, because a completion consumes whichever receive the
	 * provider matched, and a slot must not be reposted while live. */
	size_t *rx_free;
	size_t rx_nfree;
	void *rx_buf;           /* registered (FI_MR_LOCAL) landing buffer for them */
	efab_mr_t rx_mr;
	struct fi_context2 *ctx; /* ring of op contexts */
	size_t nctx;
	efab_limit_t inject_rma, max_rma; /* efab_ep_rma_limits of ep */
} efab_fabric_t;

/* Bring up fabric, domain, CQ, AV and endpoint for info (ownership passes to
 * fab), then exchange addresses through rt. */
int efab_fabric_open(struct fi_info *info, efab_rt_t *rt, double timeout_s, efab_fabric_t *fab);
void efab_fabric_close(efab_fabric_t *fab);

/* A further endpoint on fab's domain (connection setup: a new endpoint has no
 * peers yet): its own CQ, AV (room for av_count) and endpoint, enabled, its
 * name in name/namelen (EFAB_ADDR_MAX bytes are enough); fabric, domain and
 * info are fab's (not owned). No addresses are inserted and no FI_RX_CQ_DATA
 * receives posted: plain writes and reads only. Close with efab_ep_close. */
int efab_ep_open(const efab_fabric_t *fab, size_t av_count, efab_fabric_t *out, void *name,
		 size_t *namelen);
void efab_ep_close(efab_fabric_t *ep);

int efab_fabric_manual_progress(const efab_fabric_t *fab);
const char *efab_progress_name(int progress);
int efab_info_progress(const struct fi_info *info);
/* Link speed the provider reports (nic->link_attr->speed), in Gbit/s; 0 when unknown. */
double efab_info_link_gbps(const struct fi_info *info);
/* Percent of line rate: bw in 10^6 B/s against links_gbps (already summed over
 * the links and directions in use). 0 when the link speed is unknown. */
double efab_pct_of_link(double bw_MBps, double links_gbps);

/* The NIC is efasim's simulated EFA device (its firmware string says so):
 * timings there measure the simulator, never EFA. */
int efab_info_simulated(const struct fi_info *info);

/* provider, fabric, domain, libfabric and provider versions of a run from the
 * fi_info it uses; a simulated NIC's provider version reads "206.0 simulated". */
struct efab_run_info;
void efab_run_info_from_fi(const struct fi_info *info, struct efab_run_info *ri);
/* The same, and what was asked (o's -p/-f): the run info of a run on info. */
struct efab_opts;
void efab_run_info_fabric(struct efab_run_info *ri, const struct fi_info *info,
			  const struct efab_opts *o);

/* "FI_MR_LOCAL|FI_MR_VIRT_ADDR" */
void efab_mr_mode_str(uint64_t mr_mode, char *buf, size_t len);

/* iface: FI_HMEM_SYSTEM or FI_HMEM_CUDA, device: CUDA ordinal. */
int efab_mr_reg(efab_fabric_t *fab, void *buf, size_t len, int iface, int device,
		uint64_t access, efab_mr_t *out);
/* Register CUDA memory through a dmabuf fd (FI_MR_DMABUF, libfabric >=
 * 1.20); EFAB_SKIP with the missing piece named when unavailable. */
int efab_mr_reg_dmabuf(efab_fabric_t *fab, void *buf, size_t len, int device, uint64_t access,
		       efab_mr_t *out);
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
int efab_mr_exchange(efab_fabric_t *fab, const efab_mr_t *mr, efab_rkey_t *out);
void efab_rkeys_release(efab_fabric_t *fab, efab_rkey_t *keys, size_t n);

/* What a wait is for, so a timeout can say it. */
typedef struct efab_waitfor {
	const char *what; /* "write completion", "pong", ... */
	const char *op;
	uint64_t size;
	int peer;
	uint64_t iter;
} efab_waitfor_t;

/* Read the CQ once (drives manual progress). <0 on a CQ error (logged). */
int efab_progress(efab_fabric_t *fab);
/* Wait until tx_done >= target. */
int efab_wait_tx(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w);
/* Wait until rx_data_count >= target. */
int efab_wait_rxdata(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w);
/* Poll *p until it equals v, driving progress meanwhile. */
int efab_wait_byte(efab_fabric_t *fab, volatile uint8_t *p, uint8_t v, const efab_waitfor_t *w);

/* Wait for this rank's own operations, then a barrier that keeps driving
 * progress while it waits (the target side of one-sided traffic needs it on
 * manual-progress providers); bounded by the timeout. Every benchmark ends a
 * size with this before any blocking collective. */
int efab_barrier_progress(efab_fabric_t *fab, const efab_waitfor_t *w);

/* Post one RMA op; retries -FI_EAGAIN while driving progress, bounded by the
 * timeout. flags: FI_INJECT (no completion is generated), FI_REMOTE_CQ_DATA. */
int efab_post_write(efab_fabric_t *fab, int peer, const void *buf, size_t len, void *desc,
		    uint64_t raddr, uint64_t rkey, uint64_t data, uint64_t flags,
		    const efab_waitfor_t *w);
int efab_post_read(efab_fabric_t *fab, int peer, void *buf, size_t len, void *desc,
		   uint64_t raddr, uint64_t rkey, const efab_waitfor_t *w);

enum efab_atomic_kind { EFAB_ATOMIC_PLAIN = 0, EFAB_ATOMIC_FETCH, EFAB_ATOMIC_COMPARE };

/* fi_query_atomic / fi_fetch_atomicvalid / fi_compare_atomicvalid in one:
 * 0 and the provider's max element count, or the negative libfabric error. */
int efab_atomic_query(struct fid_domain *domain, int kind, enum fi_datatype dt, enum fi_op op,
		      size_t *max_count);
const char *efab_fi_op_name(enum fi_op op);
const char *efab_fi_datatype_name(enum fi_datatype dt);

/* Post one atomic (retrying -FI_EAGAIN like the RMA posts). compare is used
 * by EFAB_ATOMIC_COMPARE only, result by FETCH and COMPARE. */
int efab_post_atomic(efab_fabric_t *fab, int peer, int kind, const void *buf, size_t count,
		     void *desc, const void *compare, void *compare_desc, void *result,
		     void *result_desc, uint64_t raddr, uint64_t rkey, enum fi_datatype dt,
		     enum fi_op op, const efab_waitfor_t *w);

/* Capture the provider's own log lines (warn level and above) while on:
 * libfabric's words for a failure the application sees only as an errno
 * (efa-direct: "EFA direct requires FI_MR_LOCAL but application does not
 * provide a valid desc"). Installs a logger through fi_import_log on first
 * use; outside a capture it prints what FI_LOG_LEVEL asks for, as libfabric
 * would. off: returns the captured line preferring one that names key (or the
 * first warning) in buf. */
int efab_provider_log_capture(int on, const char *key, char *buf, size_t len);

/* --mr-cache on|off: FI_EFA_MR_CACHE_ENABLE and FI_MR_CACHE_MAX_COUNT for this
 * process, set before libfabric reads its environment (first fi_getinfo).
 * mode: EFAB_ON, EFAB_OFF, anything else leaves the environment alone. */
void efab_mr_cache_env(int mode);
/* NULL when the provider's MR cache can serve the application's own
 * fi_mr_regattr calls on info; otherwise why it cannot (then --mr-cache does
 * not change what mr_reg measures). efa opens no cache under FI_MR_LOCAL, and
 * from libfabric 2.4 caches only its internal registrations (the path of an
 * unregistered buffer), never the application's. */
const char *efab_mr_cache_scope(const struct fi_info *info);

/* Logs "what: <fi_strerror>" for a failed call. */
void efab_log_fi(const char *call, int ret);

/* A flag (set by a signal handler) that ends every wait early with
 * EFAB_ERR, so a signalled rank stops within a few microseconds instead of
 * finishing the size it was measuring. NULL disables. */
void efab_set_stop_flag(volatile int *flag);

/* Called by waits on timeout; default prints and returns EFAB_ERR. The
 * harness installs one that aborts the job. */
void efab_timeout_report(const efab_fabric_t *fab, const efab_waitfor_t *w);

#ifdef __cplusplus
}
#endif

#endif
