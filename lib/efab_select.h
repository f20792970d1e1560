/* Fabric selection (select.c): fi_getinfo hints from a request, matching
 * fi_info lists, why a fabric cannot serve a request, what a run records
 * about its fabric, the provider log capture and the MR cache environment. */
#ifndef EFAB_SELECT_H
#define EFAB_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

#include "efab_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A setting that may be left to the provider (--mr-cache). */
enum efab_tristate { EFAB_DEFAULT = 0, EFAB_ON, EFAB_OFF };
/* Traffic classes (--tclass), in FI_TC_* order. */
enum efab_tclass {
	EFAB_TC_UNSPEC = 0,
	EFAB_TC_BEST_EFFORT,
	EFAB_TC_LOW_LATENCY,
	EFAB_TC_DEDICATED_ACCESS,
	EFAB_TC_BULK_DATA,
	EFAB_TC_SCAVENGER,
	EFAB_TC_NETWORK_CTRL
};

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
	int msg;              /* messages (fi_send to posted receives): adds FI_MSG */
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
	/* tx_attr->tclass to ask for (FI_TC_*; 0 = FI_TC_UNSPEC) */
	uint32_t tclass;
} efab_fabric_req_t;

/* The FI_TC_* value of an efab_tclass (opts --tclass). */
uint32_t efab_tclass_value(int tclass);
/* "FI_TC_LOW_LATENCY", ... for a FI_TC_* value ("0x..." if unknown). */
const char *efab_tclass_fi_name(uint32_t v, char *buf, size_t len);

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

/* The progress model info offers (FI_PROGRESS_*) and its name. */
int efab_info_progress(const struct fi_info *info);
const char *efab_progress_name(int progress);
/* Link speed the provider reports (nic->link_attr->speed), in Gbit/s; 0 when unknown. */
double efab_info_link_gbps(const struct fi_info *info);
/* Percent of line rate: bw in 10^6 B/s against links_gbps (already summed over
 * the links and directions in use). 0 when the link speed is unknown. */
double efab_pct_of_link(double bw_MBps, double links_gbps);

/* The NIC is efasim's simulated EFA device (its firmware string says so):
 * timings there measure the simulator, never EFA. */
/* GPU peer-to-peer (GPUDirect RDMA) on this EFA NIC, as the efa provider
 * decided it: efa-direct offers FI_HMEM on the domain only when its probe
 * registered a CUDA buffer with the NIC (efa_prov_info.c). 1 yes, 0 no (the efa
 * fabric offers FI_HMEM, efa-direct is there without it), -1 unknown (no GPU memory
 * on the efa fabric at all, or no efa-direct: libfabric < 2.1). */
int efab_efa_p2p(const struct fi_info *info);
int efab_info_simulated(const struct fi_info *info);

/* "FI_MR_LOCAL|FI_MR_VIRT_ADDR" */
void efab_mr_mode_str(uint64_t mr_mode, char *buf, size_t len);

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
 * not change what the registration benchmark measures). efa opens no cache
 * under FI_MR_LOCAL, and from libfabric 2.4 caches only its internal
 * registrations (the path of an unregistered buffer), never the application's. */
const char *efab_mr_cache_scope(const struct fi_info *info);

/* Logs "what: <fi_strerror>" for a failed call. */
void efab_log_fi(const char *call, int ret);

#ifdef __cplusplus
}
#endif

#endif
