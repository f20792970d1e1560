#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>
#include <unistd.h>

#include <rdma/fi_ext.h>

#include "efab_cuda.h"
#include "efab_fabric.h"
#include "efab_opts.h"
#include "efab_result.h"
#include "efab_topo.h"

#define EFAB_ADDR_MAX 256
#define EFAB_RAWKEY_MAX 64
#define EFAB_RX_CQ_DATA_DEPTH 256
#define EFAB_RX_BUF_SIZE 64 /* remote-CQ-data writes place nothing in it */

static struct {
	int installed, on;
	int env_level; /* FI_LOG_LEVEL as libfabric reads it: -1 = off */
	char first[400], keyed[400];
	const char *key;
} plog = {.env_level = -1};

static int plog_enabled(const struct fi_provider *prov, enum fi_log_level level,
			enum fi_log_subsys subsys, uint64_t flags)
{
	(void)prov, (void)subsys, (void)flags;
	return (plog.on && level <= FI_LOG_WARN) || (int)level <= plog.env_level;
}

static int plog_ready(const struct fi_provider *prov, enum fi_log_level level,
		      enum fi_log_subsys subsys, uint64_t flags, uint64_t *showtime)
{
	(void)showtime;
	return plog_enabled(prov, level, subsys, flags);
}

static void plog_log(const struct fi_provider *prov, enum fi_log_level level,
		     enum fi_log_subsys subsys, const char *func, int line, const char *msg)
{
	(void)subsys;
	if ((int)level <= plog.env_level)
		fprintf(stderr, "libfabric:%d:%s:%s():%d %s", (int)getpid(), prov ? prov->name : "core",
			func, line, msg);
	if (!plog.on || level > FI_LOG_WARN)
		return;
	char one[400];
	snprintf(one, sizeof(one), "%s(): %s", func, msg);
	one[strcspn(one, "\n")] = '\0';
	if (!plog.first[0])
		snprintf(plog.first, sizeof(plog.first), "%s", one);
	if (plog.key && !plog.keyed[0] && strstr(one, plog.key))
		snprintf(plog.keyed, sizeof(plog.keyed), "%s", one);
}

int efab_provider_log_capture(int on, const char *key, char *buf, size_t len)
{
	if (!plog.installed) {
		static struct fi_ops_log ops = {.enabled = plog_enabled, .ready = plog_ready,
						.log = plog_log};
		static struct fid_logging fid = {.ops = &ops};
		const char *lvl = getenv("FI_LOG_LEVEL");
		static const char *const names[] = {"warn", "trace", "info", "debug"};
		for (int i = 0; lvl && i < 4; i++)
			if (!strcasecmp(lvl, names[i]))
				plog.env_level = i;
		int ret = fi_import_log(EFAB_FI_VERSION, 0, &fid);
		if (ret) {
			efab_log_fi("fi_import_log", ret);
			return EFAB_ERR;
		}
		plog.installed = 1;
	}
	if (on) {
		plog.first[0] = plog.keyed[0] = '\0';
		plog.key = key;
		plog.on = 1;
		return EFAB_OK;
	}
	plog.on = 0;
	if (buf && len)
		snprintf(buf, len, "%s", plog.keyed[0] ? plog.keyed : plog.first);
	return EFAB_OK;
}

void efab_mr_cache_env(int mode)
{
	if (mode == EFAB_ON) {
		setenv("FI_EFA_MR_CACHE_ENABLE", "1", 1);
		unsetenv("FI_MR_CACHE_MAX_COUNT");
	} else if (mode == EFAB_OFF) {
		setenv("FI_EFA_MR_CACHE_ENABLE", "0", 1);
		setenv("FI_MR_CACHE_MAX_COUNT", "0", 1);
	}
}

const char *efab_mr_cache_scope(const struct fi_info *info)
{
	if (!efab_prov_matches("efa", info->fabric_attr->prov_name))
		return NULL;
	if (fi_version() >= FI_VERSION(2, 4))
		return "efa caches only its own registrations of unregistered buffers, never "
		       "fi_mr_regattr (libfabric >= 2.4; measure its cache with efab_put_lat -f efa "
		       "--src-unregistered --mr-cache on|off)";
	if (info->domain_attr->mr_mode & FI_MR_LOCAL)
		return "efa opens no MR cache under FI_MR_LOCAL";
	return NULL;
}

void efab_log_fi(const char *call, int ret)
{
	efab_log_error("%s failed: %s (%d)", call, fi_strerror(ret < 0 ? -ret : ret), ret);
}

struct fi_info *efab_hints_build(const efab_fabric_req_t *req)
{
	struct fi_info *h = fi_allocinfo();
	if (!h)
		return NULL;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = req->caps;
	if (req->hmem)
		h->caps |= FI_HMEM;
	h->mode = (FI_CONTEXT | FI_CONTEXT2) & ~req->mode_off;
	if (req->rx_cq_data) {
		h->mode |= FI_RX_CQ_DATA;
		if (req->cq_data)
			h->caps |= FI_MSG; /* remote CQ data then consumes receives we post */
	}
	h->domain_attr->mr_mode = (int)(EFAB_MR_MODE_SUPPORTED & ~req->mr_mode_off);
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	if (req->cq_data)
		h->domain_attr->cq_data_size = 4;
	if (req->provider && *req->provider)
		h->fabric_attr->prov_name = strdup(req->provider);
	if (req->fabric && *req->fabric)
		h->fabric_attr->name = strdup(req->fabric);
	if (req->domain && *req->domain && strcmp(req->domain, "auto") != 0)
		h->domain_attr->name = strdup(req->domain);
	if ((req->provider && *req->provider && !h->fabric_attr->prov_name) ||
	    (req->fabric && *req->fabric && !h->fabric_attr->name)) {
		fi_freeinfo(h);
		return NULL;
	}
	return h;
}

int efab_prov_matches(const char *user, const char *prov)
{
	if (!user || !*user)
		return 1;
	if (!prov)
		return 0;
	if (strcasecmp(user, prov) == 0)
		return 1;
	/* "tcp" selects "tcp;ofi_rxm"; "ofi_rxm" selects it too. */
	size_t n = strlen(user);
	const char *p = prov;
	while (p && *p) {
		if (strncasecmp(p, user, n) == 0 && (p[n] == ';' || p[n] == '\0'))
			return 1;
		p = strchr(p, ';');
		if (p)
			p++;
	}
	return 0;
}

static int name_matches(const char *user, const char *have)
{
	if (!user || !*user || !strcmp(user, "auto"))
		return 1;
	return have && strcmp(user, have) == 0;
}

static int info_matches(const struct fi_info *i, const efab_fabric_req_t *req)
{
	if (!i->ep_attr || i->ep_attr->type != FI_EP_RDM)
		return 0;
	if (req->domain && !strcmp(req->domain, "auto") && (req->nic_busid || req->nic_name) &&
	    !efab_info_is_nic(i, req->nic_busid, req->nic_name))
		return 0;
	return efab_prov_matches(req->provider, i->fabric_attr->prov_name) &&
	       name_matches(req->fabric, i->fabric_attr->name) &&
	       name_matches(req->domain, i->domain_attr->name);
}

const struct fi_info *efab_info_match(const struct fi_info *list, const efab_fabric_req_t *req)
{
	for (const struct fi_info *i = list; i; i = i->next)
		if (info_matches(i, req))
			return i;
	return NULL;
}

/* Everything RDM the host offers, whatever the caps: hints ask only for the
 * endpoint type and accept every mode and mr_mode bit. */
int efab_getinfo_all(struct fi_info **out)
{
	struct fi_info *h = fi_allocinfo();
	if (!h)
		return -FI_ENOMEM;
	h->ep_attr->type = FI_EP_RDM;
	h->mode = ~0ull;
	h->domain_attr->mr_mode = EFAB_MR_MODE_SUPPORTED;
	h->caps = 0;
	int ret = fi_getinfo(EFAB_FI_VERSION, NULL, NULL, 0, h, out);
	fi_freeinfo(h);
	return ret;
}

void efab_fabric_list(char *buf, size_t len)
{
	struct fi_info *all = NULL;
	size_t n = 0;
	buf[0] = '\0';
	if (efab_getinfo_all(&all) || !all) {
		snprintf(buf, len, "(none)");
		return;
	}
	for (struct fi_info *i = all; i && n + 1 < len; i = i->next) {
		char item[384];
		snprintf(item, sizeof(item), "%s/%s/%s", i->fabric_attr->prov_name,
			 i->fabric_attr->name, i->domain_attr->name);
		if (strstr(buf, item)) /* same triple listed for several caps sets */
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", item);
	}
	fi_freeinfo(all);
}

static const struct {
	uint64_t bit;
	const char *name;
} cap_names[] = {
	{FI_RMA, "FI_RMA"},     {FI_READ, "FI_READ"},   {FI_WRITE, "FI_WRITE"},
	{FI_REMOTE_READ, "FI_REMOTE_READ"}, {FI_REMOTE_WRITE, "FI_REMOTE_WRITE"},
	{FI_ATOMIC, "FI_ATOMIC"}, {FI_HMEM, "FI_HMEM"}, {FI_MSG, "FI_MSG"},
	{FI_TAGGED, "FI_TAGGED"},
};

void efab_explain_unsupported(const struct fi_info *info, const efab_fabric_req_t *req, char *buf,
			      size_t len)
{
	uint64_t want = req->caps | (req->hmem ? FI_HMEM : 0);
	uint64_t missing = want & ~info->caps;
	const char *fab = info->fabric_attr->name;
	char names[256] = "";
	size_t n = 0;

	for (size_t k = 0; k < EFAB_ARRAY_SIZE(cap_names); k++)
		if (missing & cap_names[k].bit)
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "",
					      cap_names[k].name);
	if (missing & FI_ATOMIC) {
		snprintf(buf, len, "%s provides no FI_ATOMIC%s", fab,
			 !strcmp(fab, "efa-direct") ? "; use -f efa" : "");
	} else if (missing & FI_HMEM) {
		snprintf(buf, len,
			 "%s (provider %s) offers no FI_HMEM: GPU memory cannot be used on it (on "
			 "efa-direct usually no GPU peer-to-peer support: nvidia-peermem or dmabuf; "
			 "otherwise a libfabric built without CUDA)", fab, info->fabric_attr->prov_name);
	} else if (missing) {
		snprintf(buf, len, "%s (provider %s) does not provide %s", fab,
			 info->fabric_attr->prov_name, names);
	} else if ((req->mr_mode_off & FI_MR_LOCAL) && (info->domain_attr->mr_mode & FI_MR_LOCAL)) {
		snprintf(buf, len,
			 "%s (provider %s) requires FI_MR_LOCAL: every local buffer must be registered "
			 "(fi_mr_regattr) and its fi_mr_desc passed to each operation, so an unregistered "
			 "source cannot be used there%s", fab, info->fabric_attr->prov_name,
			 !strcmp(fab, "efa-direct") ? "; -f efa accepts one (registered or bounced by "
						      "the provider)" : "");
	} else if (req->cq_data && info->domain_attr->cq_data_size < 4) {
		snprintf(buf, len, "%s offers %zu bytes of remote CQ data; writedata needs 4", fab,
			 info->domain_attr->cq_data_size);
	} else {
		uint64_t mr_extra = info->domain_attr->mr_mode & ~(uint64_t)EFAB_MR_MODE_SUPPORTED;
		if (mr_extra)
			snprintf(buf, len, "%s requires mr_mode bits 0x%llx that efabench cannot honour",
				 fab, (unsigned long long)mr_extra);
		else
			snprintf(buf, len, "%s rejected the requested attributes (caps, mode, mr_mode)",
				 fab);
	}
}

/* fi_getinfo for req and the first match: 0 with *out, 1 when nothing
 * matches, -1 on a libfabric failure (logged). */
static int getinfo_match(const efab_fabric_req_t *req, struct fi_info **out)
{
	struct fi_info *hints = efab_hints_build(req), *list = NULL;
	int rc = -1;
	if (!hints) {
		efab_log_error("out of memory building fi_getinfo hints");
		return -1;
	}
	int ret = fi_getinfo(EFAB_FI_VERSION, NULL, NULL, 0, hints, &list);
	if (ret == 0) {
		const struct fi_info *m = efab_info_match(list, req);
		rc = 1;
		if (m) {
			*out = fi_dupinfo(m);
			rc = *out ? 0 : -1;
			if (!*out)
				efab_log_error("fi_dupinfo: out of memory");
		}
	} else if (ret == -FI_ENODATA) {
		rc = 1;
	} else {
		efab_log_fi("fi_getinfo", ret);
	}
	fi_freeinfo(list);
	fi_freeinfo(hints);
	return rc;
}

int efab_fabric_select(const efab_fabric_req_t *req, struct fi_info **out)
{
	struct fi_info *all = NULL;
	int rc;
	char msg[1024];

	/* Without FI_RX_CQ_DATA first: efa-direct (libfabric >= 2.4) echoes it when
	 * offered, and then every remote-CQ-data write consumes a posted receive.
	 * Offered only when refused without it (e.g. efa-direct on a device
	 * without unsolicited write receive). */
	efab_fabric_req_t r = *req;
	r.rx_cq_data = 0;
	rc = getinfo_match(&r, out);
	if (rc == 1) {
		r.rx_cq_data = 1;
		rc = getinfo_match(&r, out);
	}
	if (rc <= 0)
		return rc == 0 ? EFAB_OK : EFAB_ERR;

	/* Nothing fits: does the named provider/fabric/domain exist at all? */
	int ret = efab_getinfo_all(&all);
	if (ret && ret != -FI_ENODATA) {
		efab_log_fi("fi_getinfo", ret);
		return EFAB_ERR;
	}
	const struct fi_info *exists = efab_info_match(all, req);
	if (!exists) {
		efab_fabric_list(msg, sizeof(msg));
		if (req->nic_name || req->nic_busid)
			efab_log_error("--domain auto: no RDM domain on NIC %s (%s), the one nearest this "
				       "rank's GPU; available here: %s", req->nic_name ? req->nic_name : "?",
				       req->nic_busid ? req->nic_busid : "?", msg);
		else
		efab_log_error("no RDM fabric matches provider '%s' fabric '%s' domain '%s'; available "
			       "here: %s",
			       req->provider && *req->provider ? req->provider : "*",
			       req->fabric && *req->fabric ? req->fabric : "*",
			       req->domain && *req->domain ? req->domain : "*", msg);
		rc = EFAB_EUSAGE;
	} else {
		efab_explain_unsupported(exists, req, msg, sizeof(msg));
		efab_log_error("%s", msg);
		rc = EFAB_SKIP;
	}
	fi_freeinfo(all);
	return rc;
}

int efab_info_simulated(const struct fi_info *info)
{
	return info && info->nic && info->nic->device_attr && info->nic->device_attr->firmware &&
	       !strncmp(info->nic->device_attr->firmware, "efasim", 6);
}

void efab_run_info_libfabric(efab_run_info_t *ri)
{
	uint32_t v = fi_version(), a = efab_fi_api_version();
	snprintf(ri->libfabric_version, sizeof(ri->libfabric_version), "%u.%u", FI_MAJOR(v),
		 FI_MINOR(v));
	snprintf(ri->libfabric_built, sizeof(ri->libfabric_built), "%d.%d", FI_MAJOR_VERSION,
		 FI_MINOR_VERSION);
	snprintf(ri->libfabric_api, sizeof(ri->libfabric_api), "%u.%u", FI_MAJOR(a), FI_MINOR(a));
	efab_libfabric_path(ri->libfabric_path, sizeof(ri->libfabric_path));
	efab_efa_installer_of(ri->libfabric_path, ri->efa_installer, sizeof(ri->efa_installer));
}

void efab_run_info_from_fi(const struct fi_info *info, efab_run_info_t *ri)
{
	uint32_t pv = info->fabric_attr->prov_version;
	efab_run_info_libfabric(ri);
	snprintf(ri->provider_version, sizeof(ri->provider_version), "%u.%u%s", FI_MAJOR(pv),
		 FI_MINOR(pv), efab_info_simulated(info) ? " simulated" : "");
	snprintf(ri->provider, sizeof(ri->provider), "%s", info->fabric_attr->prov_name);
	snprintf(ri->fabric, sizeof(ri->fabric), "%s", info->fabric_attr->name);
	snprintf(ri->domain, sizeof(ri->domain), "%s", info->domain_attr->name);
}

double efab_info_link_gbps(const struct fi_info *info)
{
	if (!info->nic || !info->nic->link_attr || !info->nic->link_attr->speed)
		return 0.0;
	return (double)info->nic->link_attr->speed / 1e9;
}

double efab_pct_of_link(double bw_MBps, double links_gbps)
{
	if (links_gbps <= 0)
		return 0.0;
	return 100.0 * (bw_MBps * 8.0 / 1000.0) / links_gbps;
}

int efab_check_src_unregistered(const struct fi_info *info, char *msg, size_t len)
{
	if (!(info->domain_attr->mr_mode & FI_MR_LOCAL))
		return EFAB_OK;
	snprintf(msg, len,
		 "--src-unregistered: fabric %s requires FI_MR_LOCAL: every local buffer must be "
		 "registered (fi_mr_regattr) and its fi_mr_desc passed to each operation",
		 info->fabric_attr->name);
	return EFAB_SKIP;
}

int efab_info_progress(const struct fi_info *info)
{
	/* libfabric 2.0 made data_progress and progress one field (a union in
	 * include/rdma/fabric.h), so this reads the 2.x progress attribute also
	 * when built against 1.x headers */
	return (int)info->domain_attr->data_progress;
}

const char *efab_progress_name(int p)
{
	switch (p) {
	case FI_PROGRESS_AUTO: return "auto";
	case FI_PROGRESS_MANUAL: return "manual";
	case EFAB_FI_PROGRESS_CONTROL_UNIFIED: return "control_unified";
	default: return "unspec";
	}
}

int efab_fabric_manual_progress(const efab_fabric_t *fab)
{
	return efab_info_progress(fab->info) != FI_PROGRESS_AUTO;
}

void efab_mr_mode_str(uint64_t m, char *buf, size_t len)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {
		{FI_MR_LOCAL, "FI_MR_LOCAL"},         {FI_MR_RAW, "FI_MR_RAW"},
		{FI_MR_VIRT_ADDR, "FI_MR_VIRT_ADDR"}, {FI_MR_ALLOCATED, "FI_MR_ALLOCATED"},
		{FI_MR_PROV_KEY, "FI_MR_PROV_KEY"},   {FI_MR_MMU_NOTIFY, "FI_MR_MMU_NOTIFY"},
		{FI_MR_RMA_EVENT, "FI_MR_RMA_EVENT"}, {FI_MR_ENDPOINT, "FI_MR_ENDPOINT"},
		{FI_MR_HMEM, "FI_MR_HMEM"},
	};
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(bits); i++)
		if (m & bits[i].bit)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "|" : "",
					      bits[i].name);
	if (n == 0)
		snprintf(buf, len, "none");
}

/* Receive slot i's context: the top EFAB_RX_CQ_DATA_DEPTH entries of ctx. */
static struct fi_context2 *rx_slot_ctx(efab_fabric_t *fab, size_t i)
{
	return &fab->ctx[fab->nctx - EFAB_RX_CQ_DATA_DEPTH + i];
}

/* The receive slot a completion's op_context names, or -1. */
static long rx_slot_of(const efab_fabric_t *fab, const void *op_context)
{
	const struct fi_context2 *first = &fab->ctx[fab->nctx - EFAB_RX_CQ_DATA_DEPTH];
	const struct fi_context2 *c = op_context;
	if (c < first || c >= fab->ctx + fab->nctx)
		return -1;
	return (long)(c - first);
}

/* Receives for FI_RX_CQ_DATA: on a registered buffer with its descriptor
 * (efa-direct rejects a receive without one under FI_MR_LOCAL, as any
 * FI_MR_LOCAL provider may); every posted slot is off the free list until a
 * completion names it. */
static int post_rx_cq_data(efab_fabric_t *fab)
{
	while (fab->rx_nfree > 0) {
		size_t slot = fab->rx_free[fab->rx_nfree - 1];
		int ret = (int)fi_recv(fab->ep, fab->rx_buf, EFAB_RX_BUF_SIZE, fab->rx_mr.desc,
				       FI_ADDR_UNSPEC, rx_slot_ctx(fab, slot));
		if (ret == -FI_EAGAIN)
			return 0; /* reposted from efab_progress as completions come */
		if (ret) {
			efab_log_fi("fi_recv (receive for FI_RX_CQ_DATA)", ret);
			return EFAB_ERR;
		}
		fab->rx_nfree--;
		fab->rx_posted++;
	}
	return 0;
}

static int uses_rx_cq_data(const efab_fabric_t *fab)
{
	return (fab->info->mode & FI_RX_CQ_DATA) && (fab->info->caps & FI_MSG);
}

/* Set up the receive slots and their buffer, then post them. */
static int rx_cq_data_start(efab_fabric_t *fab)
{
	fab->rx_free = calloc(EFAB_RX_CQ_DATA_DEPTH, sizeof(*fab->rx_free));
	fab->rx_buf = aligned_alloc(4096, 4096);
	if (!fab->rx_free || !fab->rx_buf) {
		efab_log_error("out of memory for FI_RX_CQ_DATA receives");
		return EFAB_ERR;
	}
	memset(fab->rx_buf, 0, 4096);
	for (size_t i = 0; i < EFAB_RX_CQ_DATA_DEPTH; i++)
		fab->rx_free[fab->rx_nfree++] = EFAB_RX_CQ_DATA_DEPTH - 1 - i;
	if (efab_mr_reg(fab, fab->rx_buf, 4096, FI_HMEM_SYSTEM, 0, FI_RECV, &fab->rx_mr))
		return EFAB_ERR;
	return post_rx_cq_data(fab);
}

efab_limit_t efab_limit_pick(int rc, size_t optval, const char *optname, size_t attr,
			     const char *attrname)
{
	efab_limit_t l = {attr, attrname, 0};
	if (rc == 0 && optval <= attr)
		l = (efab_limit_t){optval, optname, 1};
	return l;
}

/* fi_getopt of a size_t endpoint option; -FI_ENOPROTOOPT without an endpoint. */
static int ep_size_opt(struct fid_ep *ep, int opt, size_t *v)
{
	size_t len = sizeof(*v);
	*v = 0;
	return ep ? fi_getopt(&ep->fid, FI_OPT_ENDPOINT, opt, v, &len) : -FI_ENOPROTOOPT;
}

void efab_ep_rma_limits(struct fid_ep *ep, const struct fi_info *info, efab_limit_t *inject,
			efab_limit_t *max)
{
	/* the options exist from libfabric 2.0 on, whatever headers we were built
	 * with; an older library is not asked (its option numbers mean nothing) */
	if (!efab_fi_has_rma_size_opts())
		ep = NULL;
	size_t v;
	int rc = ep_size_opt(ep, EFAB_FI_OPT_INJECT_RMA_SIZE, &v);
	*inject = efab_limit_pick(rc, v, "FI_OPT_INJECT_RMA_SIZE", info->tx_attr->inject_size,
				  "tx_attr->inject_size");
	rc = ep_size_opt(ep, EFAB_FI_OPT_MAX_RMA_SIZE, &v);
	*max = efab_limit_pick(rc, v, "FI_OPT_MAX_RMA_SIZE", info->ep_attr->max_msg_size,
			       "ep_attr->max_msg_size");
}

void efab_info_rma_limits(const struct fi_info *info, efab_limit_t *inject, efab_limit_t *max)
{
	efab_ep_rma_limits(NULL, info, inject, max);
	if (!efab_fi_has_rma_size_opts())
		return;
	/* the benchmarks' own bring-up on one rank, quietly: some providers'
	 * getopt (shm's) needs an enabled endpoint, and a fabric that cannot be
	 * opened here keeps the attributes */
	struct fi_info *dup = fi_dupinfo(info);
	efab_fabric_t fab;
	int verbose = efab_log_verbose();
	if (!dup)
		return;
	efab_log_set_verbose(-1);
	int rc = efab_fabric_open(dup, efab_rt_single(), 5.0, &fab);
	efab_log_set_verbose(verbose);
	if (rc) {
		fi_freeinfo(dup);
		return;
	}
	*inject = fab.inject_rma;
	*max = fab.max_rma;
	efab_fabric_close(&fab);
}

int efab_fabric_open(struct fi_info *info, efab_rt_t *rt, double timeout_s, efab_fabric_t *out)
{
	efab_fabric_t fab;
	int ret;
	char *names = NULL;
	char myname[EFAB_ADDR_MAX + sizeof(size_t)];

	memset(&fab, 0, sizeof(fab));
	fab.info = info;
	fab.rt = rt;
	fab.timeout_s = timeout_s;
	fab.next_key = 1;
	fab.nctx = 2 * (info->tx_attr->size > 512 ? info->tx_attr->size : 512) +
		   EFAB_RX_CQ_DATA_DEPTH;
	fab.ctx = calloc(fab.nctx, sizeof(*fab.ctx));
	fab.peers = calloc((size_t)rt->size, sizeof(*fab.peers));
	if (!fab.ctx || !fab.peers) {
		efab_log_error("out of memory allocating endpoint state");
		goto free_arrays;
	}

	ret = fi_fabric(info->fabric_attr, &fab.fabric, NULL);
	if (ret) {
		efab_log_fi("fi_fabric", ret);
		goto free_arrays;
	}
	ret = fi_domain(fab.fabric, info, &fab.domain, NULL);
	if (ret) {
		efab_log_fi("fi_domain", ret);
		goto close_fabric;
	}
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_NONE,
		.size = info->tx_attr->size + info->rx_attr->size,
	};
	ret = fi_cq_open(fab.domain, &cq_attr, &fab.cq, NULL);
	if (ret) {
		efab_log_fi("fi_cq_open", ret);
		goto close_domain;
	}
	struct fi_av_attr av_attr = {
		.type = info->domain_attr->av_type != FI_AV_UNSPEC ? info->domain_attr->av_type
								   : FI_AV_TABLE,
		.count = (size_t)rt->size,
	};
	ret = fi_av_open(fab.domain, &av_attr, &fab.av, NULL);
	if (ret) {
		efab_log_fi("fi_av_open", ret);
		goto close_cq;
	}
	ret = fi_endpoint(fab.domain, info, &fab.ep, NULL);
	if (ret) {
		efab_log_fi("fi_endpoint", ret);
		goto close_av;
	}
	ret = fi_ep_bind(fab.ep, &fab.av->fid, 0);
	if (ret) {
		efab_log_fi("fi_ep_bind (av)", ret);
		goto close_ep;
	}
	ret = fi_ep_bind(fab.ep, &fab.cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret) {
		efab_log_fi("fi_ep_bind (cq)", ret);
		goto close_ep;
	}
	size_t addrlen = EFAB_ADDR_MAX;
	memset(myname, 0, sizeof(myname));
	ret = fi_enable(fab.ep);
	if (ret == -FI_EBUSY && efab_prov_matches("shm", info->fabric_attr->prov_name))
		efab_log_error("fi_enable failed: %s: shm's endpoint name is taken (a /dev/shm/<pid>:0:0 "
			       "left by a killed process with this pid?)", fi_strerror(-ret));
	else if (ret)
		efab_log_fi("fi_enable", ret);
	if (!ret) {
		/* after fi_enable: shm's getopt dereferences state that enable creates */
		efab_ep_rma_limits(fab.ep, info, &fab.inject_rma, &fab.max_rma);
		ret = fi_getname(&fab.ep->fid, myname + sizeof(size_t), &addrlen);
		if (ret)
			efab_log_fi("fi_getname", ret);
	}
	/* every rank learns whether all got this far before the collective
	 * exchange, so a rank that failed never leaves the others waiting in it */
	double failed = ret != 0, any = 0;
	if (rt->allreduce(rt, &failed, &any, 1, EFAB_RT_MAX) || any)
		goto close_ep;
	memcpy(myname, &addrlen, sizeof(size_t));
	names = malloc(sizeof(myname) * (size_t)rt->size);
	if (!names) {
		efab_log_error("out of memory for the address exchange");
		goto close_ep;
	}
	if (rt->allgather(rt, myname, names, sizeof(myname))) {
		efab_log_error("address exchange failed");
		goto free_names;
	}
	for (int r = 0; r < rt->size; r++) {
		const char *slot = names + sizeof(myname) * (size_t)r;
		ret = fi_av_insert(fab.av, slot + sizeof(size_t), 1, &fab.peers[r], 0, NULL);
		if (ret != 1) {
			efab_log_fi("fi_av_insert", ret < 0 ? ret : -FI_EINVAL);
			goto free_names;
		}
	}
	free(names);
	if (uses_rx_cq_data(&fab) && rx_cq_data_start(&fab))
		goto close_rx;
	if (rt->barrier(rt)) {
		efab_log_error("barrier after endpoint bring-up failed");
		goto close_rx;
	}
	*out = fab;
	return EFAB_OK;

free_names:
	free(names);
	goto close_ep;
close_rx:
	efab_mr_dereg(&fab.rx_mr);
	free(fab.rx_buf);
	free(fab.rx_free);
close_ep:
	fi_close(&fab.ep->fid);
close_av:
	fi_close(&fab.av->fid);
close_cq:
	fi_close(&fab.cq->fid);
close_domain:
	fi_close(&fab.domain->fid);
close_fabric:
	fi_close(&fab.fabric->fid);
free_arrays:
	free(fab.peers);
	free(fab.ctx);
	return EFAB_ERR;
}

int efab_ep_open(const efab_fabric_t *fab, size_t av_count, efab_fabric_t *out, void *name,
		 size_t *namelen)
{
	efab_fabric_t e;
	const struct fi_info *info = fab->info;
	int ret;
	memset(&e, 0, sizeof(e));
	e.info = fab->info;
	e.fabric = fab->fabric;
	e.domain = fab->domain;
	e.rt = fab->rt;
	e.timeout_s = fab->timeout_s;
	e.next_key = fab->next_key;
	e.inject_rma = fab->inject_rma;
	e.max_rma = fab->max_rma;
	e.nctx = 2 * (info->tx_attr->size > 512 ? info->tx_attr->size : 512);
	e.ctx = calloc(e.nctx, sizeof(*e.ctx));
	e.peers = calloc((size_t)fab->rt->size, sizeof(*e.peers));
	if (!e.ctx || !e.peers) {
		efab_log_error("out of memory allocating endpoint state");
		goto fail;
	}
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_NONE,
		.size = info->tx_attr->size + info->rx_attr->size,
	};
	struct fi_av_attr av_attr = {
		.type = info->domain_attr->av_type != FI_AV_UNSPEC ? info->domain_attr->av_type
								   : FI_AV_TABLE,
		.count = av_count ? av_count : 1,
	};
	if ((ret = fi_cq_open(e.domain, &cq_attr, &e.cq, NULL))) {
		efab_log_fi("fi_cq_open", ret);
		goto fail;
	}
	if ((ret = fi_av_open(e.domain, &av_attr, &e.av, NULL))) {
		efab_log_fi("fi_av_open", ret);
		goto fail;
	}
	if ((ret = fi_endpoint(e.domain, (struct fi_info *)info, &e.ep, NULL))) {
		efab_log_fi("fi_endpoint", ret);
		goto fail;
	}
	if ((ret = fi_ep_bind(e.ep, &e.av->fid, 0)) ||
	    (ret = fi_ep_bind(e.ep, &e.cq->fid, FI_TRANSMIT | FI_RECV))) {
		efab_log_fi("fi_ep_bind", ret);
		goto fail;
	}
	if ((ret = fi_enable(e.ep))) {
		efab_log_fi("fi_enable", ret);
		goto fail;
	}
	if ((ret = fi_getname(&e.ep->fid, name, namelen))) {
		efab_log_fi("fi_getname", ret);
		goto fail;
	}
	*out = e;
	return EFAB_OK;
fail:
	efab_ep_close(&e);
	return EFAB_ERR;
}

void efab_ep_close(efab_fabric_t *e)
{
	if (e->ep)
		fi_close(&e->ep->fid);
	if (e->av)
		fi_close(&e->av->fid);
	if (e->cq)
		fi_close(&e->cq->fid);
	free(e->peers);
	free(e->ctx);
	memset(e, 0, sizeof(*e));
}

void efab_fabric_close(efab_fabric_t *fab)
{
	efab_mr_dereg(&fab->rx_mr);
	if (fab->ep)
		fi_close(&fab->ep->fid);
	if (fab->av)
		fi_close(&fab->av->fid);
	if (fab->cq)
		fi_close(&fab->cq->fid);
	if (fab->domain)
		fi_close(&fab->domain->fid);
	if (fab->fabric)
		fi_close(&fab->fabric->fid);
	free(fab->peers);
	free(fab->ctx);
	free(fab->rx_buf);
	free(fab->rx_free);
	fi_freeinfo(fab->info);
	memset(fab, 0, sizeof(*fab));
}

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

int efab_mr_reg(efab_fabric_t *fab, void *buf, size_t len, int iface, int device,
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
		efab_log_error("fi_mr_regattr (%zu bytes) failed: %s (%d)", len, fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	return finish_mr(fab, mr, buf, len, out);
}

uint64_t efab_dmabuf_base(const void *buf, uint64_t offset)
{
	return (uint64_t)(uintptr_t)buf - offset;
}

int efab_mr_reg_dmabuf(efab_fabric_t *fab, void *buf, size_t len, int device, uint64_t access,
		       efab_mr_t *out)
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

struct wire_key {
	uint64_t base, key, len, raw_len;
	uint8_t raw[EFAB_RAWKEY_MAX];
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

int efab_progress(efab_fabric_t *fab)
{
	struct fi_cq_data_entry ent[16];
	ssize_t n = fi_cq_read(fab->cq, ent, EFAB_ARRAY_SIZE(ent));
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		efab_cq_err_entry_t err; /* API >= 1.20 writes src_addr too */
		char pbuf[256];
		memset(&err, 0, sizeof(err));
		ssize_t r = fi_cq_readerr(fab->cq, (struct fi_cq_err_entry *)&err, 0);
		if (r == -FI_EAGAIN)
			return 0; /* another reader took it; nothing to report */
		if (r < 0) {
			efab_log_fi("fi_cq_readerr", (int)r);
			return -1;
		}
		const char *perr = fi_cq_strerror(fab->cq, err.prov_errno, err.err_data, pbuf,
						  sizeof(pbuf));
		efab_log_error("completion error: %s (%d); provider: %s (%d)", fi_strerror(err.err),
			       err.err, perr ? perr : "-", err.prov_errno);
		return -1;
	}
	if (n < 0) {
		efab_log_fi("fi_cq_read", (int)n);
		return -1;
	}
	for (ssize_t i = 0; i < n; i++) {
		/* A completion that names a receive slot consumed that receive, whatever
		 * its flags: efa-direct reports FI_REMOTE_CQ_DATA|FI_RMA|FI_REMOTE_WRITE
		 * without FI_RECV. */
		long slot = rx_slot_of(fab, ent[i].op_context);
		if (slot >= 0 && fab->rx_free) {
			fab->rx_free[fab->rx_nfree++] = (size_t)slot;
			fab->rx_posted--;
		}
		if (ent[i].flags & FI_REMOTE_CQ_DATA) {
			fab->rx_data_count++;
			fab->rx_data_last = ent[i].data;
		} else if (slot < 0 && !(ent[i].flags & FI_RECV)) {
			fab->tx_done++;
		}
	}
	if (uses_rx_cq_data(fab) && fab->rx_nfree >= EFAB_RX_CQ_DATA_DEPTH / 2 &&
	    post_rx_cq_data(fab))
		return -1;
	return (int)n;
}

void efab_timeout_report(const efab_fabric_t *fab, const efab_waitfor_t *w)
{
	efab_log_error("timeout after %.1f s waiting for %s (op %s, %llu bytes, peer rank %d, "
		       "iteration %llu); the peer may have died or the fabric stalled",
		       fab->timeout_s, w->what, w->op, (unsigned long long)w->size, w->peer,
		       (unsigned long long)w->iter);
}

static volatile int *stop_flag;

void efab_set_stop_flag(volatile int *flag)
{
	stop_flag = flag;
}

/* The clock is read once per 256 polls: cheap, and still precise to well
 * under a millisecond on any of these loops. */
#define WAIT_LOOP(cond)                                                                      \
	do {                                                                                 \
		uint64_t deadline = efab_now_ns() + (uint64_t)(fab->timeout_s * 1e9);        \
		unsigned spins = 0;                                                          \
		while (!(cond)) {                                                            \
			if (efab_progress(fab) < 0)                                          \
				return EFAB_ERR;                                             \
			if (++spins % 256 == 0 && efab_now_ns() > deadline) {                \
				efab_timeout_report(fab, w);                                 \
				return EFAB_ERR;                                             \
			}                                                                    \
			if (stop_flag && *stop_flag)                                         \
				return EFAB_ERR;                                             \
		}                                                                            \
		return EFAB_OK;                                                              \
	} while (0)

int efab_wait_tx(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w)
{
	WAIT_LOOP(fab->tx_done >= target);
}

int efab_wait_rxdata(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w)
{
	WAIT_LOOP(fab->rx_data_count >= target);
}

int efab_wait_byte(efab_fabric_t *fab, volatile uint8_t *p, uint8_t v, const efab_waitfor_t *w)
{
	WAIT_LOOP(*p == v);
}

int efab_barrier_progress(efab_fabric_t *fab, const efab_waitfor_t *w)
{
	void *req;
	int done = 0;
	/* Own operations first: their completion may need the peer's progress,
	 * which it drives while it waits here too. */
	if (efab_wait_tx(fab, fab->tx_posted, w))
		return EFAB_ERR;
	if (fab->rt->ibarrier(fab->rt, &req)) {
		efab_log_error("barrier failed");
		return EFAB_ERR;
	}
	uint64_t deadline = efab_now_ns() + (uint64_t)(fab->timeout_s * 1e9);
	for (unsigned spins = 1;; spins++) {
		/* the fabric first: a target that serves a window of one-sided
		 * traffic waits here, and an MPI_Test per CQ read took a sixth of
		 * shm's 8 B message rate; the barrier is looked at every 16th turn */
		if (efab_progress(fab) < 0)
			return EFAB_ERR;
		if (spins % 16)
			continue;
		if (fab->rt->ibarrier_test(fab->rt, req, &done)) {
			efab_log_error("barrier failed");
			return EFAB_ERR;
		}
		if (done)
			return EFAB_OK;
		if (spins % 256 == 0 && efab_now_ns() > deadline) {
			efab_timeout_report(fab, w);
			return EFAB_ERR;
		}
	}
}

static void *next_ctx(efab_fabric_t *fab)
{
	/* The top EFAB_RX_CQ_DATA_DEPTH slots belong to receives. */
	size_t ring = fab->nctx - EFAB_RX_CQ_DATA_DEPTH;
	return &fab->ctx[fab->tx_posted % ring];
}

/* Keep in-flight ops below the context ring. */
static int reserve_slot(efab_fabric_t *fab, const efab_waitfor_t *w)
{
	size_t ring = fab->nctx - EFAB_RX_CQ_DATA_DEPTH;
	if (fab->tx_posted - fab->tx_done >= ring)
		return efab_wait_tx(fab, fab->tx_posted - ring + 1, w);
	return EFAB_OK;
}

#define POST_LOOP(call, name)                                                                \
	do {                                                                                 \
		uint64_t deadline = 0;                                                       \
		for (;;) {                                                                   \
			ssize_t ret = (call);                                                \
			if (ret == 0)                                                        \
				break;                                                       \
			if (ret != -FI_EAGAIN) {                                             \
				efab_log_error("%s (%llu bytes to rank %d) failed: %s (%zd)", \
					       name, (unsigned long long)len, peer,          \
					       fi_strerror((int)-ret), ret);                 \
				return EFAB_ERR;                                             \
			}                                                                    \
			if (!deadline)                                                       \
				deadline = efab_now_ns() + (uint64_t)(fab->timeout_s * 1e9); \
			if (efab_progress(fab) < 0)                                          \
				return EFAB_ERR;                                             \
			if (efab_now_ns() > deadline) {                                      \
				efab_timeout_report(fab, w);                                 \
				return EFAB_ERR;                                             \
			}                                                                    \
		}                                                                            \
	} while (0)

int efab_post_write(efab_fabric_t *fab, int peer, const void *buf, size_t len, void *desc,
		    uint64_t raddr, uint64_t rkey, uint64_t data, uint64_t flags,
		    const efab_waitfor_t *w)
{
	fi_addr_t dest = fab->peers[peer];
	if (flags & FI_INJECT) {
		if (flags & FI_REMOTE_CQ_DATA)
			POST_LOOP(fi_inject_writedata(fab->ep, buf, len, data, dest, raddr, rkey),
				  "fi_inject_writedata");
		else
			POST_LOOP(fi_inject_write(fab->ep, buf, len, dest, raddr, rkey),
				  "fi_inject_write");
		return EFAB_OK;
	}
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	void *ctx = next_ctx(fab);
	if (flags & FI_REMOTE_CQ_DATA)
		POST_LOOP(fi_writedata(fab->ep, buf, len, desc, data, dest, raddr, rkey, ctx),
			  "fi_writedata");
	else
		POST_LOOP(fi_write(fab->ep, buf, len, desc, dest, raddr, rkey, ctx), "fi_write");
	fab->tx_posted++;
	return EFAB_OK;
}

int efab_post_read(efab_fabric_t *fab, int peer, void *buf, size_t len, void *desc,
		   uint64_t raddr, uint64_t rkey, const efab_waitfor_t *w)
{
	fi_addr_t dest = fab->peers[peer];
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	void *ctx = next_ctx(fab);
	POST_LOOP(fi_read(fab->ep, buf, len, desc, dest, raddr, rkey, ctx), "fi_read");
	fab->tx_posted++;
	return EFAB_OK;
}

int efab_atomic_query(struct fid_domain *domain, int kind, enum fi_datatype dt, enum fi_op op,
		      size_t *max_count)
{
	struct fi_atomic_attr attr;
	uint64_t flags = kind == EFAB_ATOMIC_FETCH ? FI_FETCH_ATOMIC
			 : kind == EFAB_ATOMIC_COMPARE ? FI_COMPARE_ATOMIC : 0;
	memset(&attr, 0, sizeof(attr));
	int ret = fi_query_atomic(domain, dt, op, &attr, flags);
	if (ret)
		return ret < 0 ? ret : -ret;
	if (attr.count == 0)
		return -FI_EOPNOTSUPP;
	*max_count = attr.count;
	return 0;
}

const char *efab_fi_op_name(enum fi_op op)
{
	switch (op) {
	case FI_MIN: return "FI_MIN";
	case FI_MAX: return "FI_MAX";
	case FI_SUM: return "FI_SUM";
	case FI_BOR: return "FI_BOR";
	case FI_BAND: return "FI_BAND";
	case FI_BXOR: return "FI_BXOR";
	case FI_ATOMIC_WRITE: return "FI_ATOMIC_WRITE";
	case FI_CSWAP: return "FI_CSWAP";
	default: return "FI_OP?";
	}
}

const char *efab_fi_datatype_name(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT32: return "FI_INT32";
	case FI_UINT32: return "FI_UINT32";
	case FI_INT64: return "FI_INT64";
	case FI_UINT64: return "FI_UINT64";
	case FI_FLOAT: return "FI_FLOAT";
	case FI_DOUBLE: return "FI_DOUBLE";
	default: return "FI_DATATYPE?";
	}
}

int efab_post_atomic(efab_fabric_t *fab, int peer, int kind, const void *buf, size_t count,
		     void *desc, const void *compare, void *compare_desc, void *result,
		     void *result_desc, uint64_t raddr, uint64_t rkey, enum fi_datatype dt,
		     enum fi_op op, const efab_waitfor_t *w)
{
	fi_addr_t dest = fab->peers[peer];
	size_t len = count;
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	void *ctx = next_ctx(fab);
	switch (kind) {
	case EFAB_ATOMIC_PLAIN:
		POST_LOOP(fi_atomic(fab->ep, buf, count, desc, dest, raddr, rkey, dt, op, ctx),
			  "fi_atomic");
		break;
	case EFAB_ATOMIC_FETCH:
		POST_LOOP(fi_fetch_atomic(fab->ep, buf, count, desc, result, result_desc, dest, raddr,
					  rkey, dt, op, ctx),
			  "fi_fetch_atomic");
		break;
	default:
		POST_LOOP(fi_compare_atomic(fab->ep, buf, count, desc, compare, compare_desc, result,
					    result_desc, dest, raddr, rkey, dt, op, ctx),
			  "fi_compare_atomic");
		break;
	}
	fab->tx_posted++;
	return EFAB_OK;
}
