/* Fabric selection: hints from a request, matching fi_info lists, why a
 * fabric cannot serve a request, what a run records about its fabric, the
 * provider log capture and the MR cache environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>
#include <unistd.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>

#include "efab.h"
#include "efab_abi.h"
#include "efab_filog.h"
#include "efab_select.h"
#include "efab_topo.h"

/* The probe's tap on libfabric's log (filog.c): while on, the first warning
 * and the first naming key. */
static struct {
	char first[400], keyed[400];
	const char *key;
	int on;
	efab_filog_tap_t tap;
} plog;

static int plog_wants(void *arg, int level, int subsys)
{
	(void)arg, (void)subsys;
	return level <= FI_LOG_WARN;
}

static void plog_take(void *arg, int level, int subsys, const char *func,
		      const char *msg)
{
	(void)arg, (void)level, (void)subsys;
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
	if (on) {
		if (plog.on)
			efab_filog_detach(&plog.tap);
		plog.first[0] = plog.keyed[0] = '\0';
		plog.key = key;
		plog.tap.wants = plog_wants;
		plog.tap.take = plog_take;
		char why[200];
		if (efab_filog_attach(&plog.tap, why, sizeof(why))) {
			efab_log_error("taking libfabric's log: %s", why);
			return EFAB_ERR;
		}
		plog.on = 1;
		return EFAB_OK;
	}
	if (plog.on)
		efab_filog_detach(&plog.tap);
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
		       "fi_mr_regattr (libfabric >= 2.4; measure its cache with a put benchmark, -f efa "
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
	if (req->msg)
		h->caps |= FI_MSG;
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
	h->tx_attr->tclass = req->tclass;
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

uint32_t efab_tclass_value(int tclass)
{
	static const uint32_t v[] = {
		[EFAB_TC_UNSPEC] = FI_TC_UNSPEC,
		[EFAB_TC_BEST_EFFORT] = FI_TC_BEST_EFFORT,
		[EFAB_TC_LOW_LATENCY] = FI_TC_LOW_LATENCY,
		[EFAB_TC_DEDICATED_ACCESS] = FI_TC_DEDICATED_ACCESS,
		[EFAB_TC_BULK_DATA] = FI_TC_BULK_DATA,
		[EFAB_TC_SCAVENGER] = FI_TC_SCAVENGER,
		[EFAB_TC_NETWORK_CTRL] = FI_TC_NETWORK_CTRL,
	};
	return tclass > 0 && (size_t)tclass < EFAB_ARRAY_SIZE(v) ? v[tclass] : FI_TC_UNSPEC;
}

const char *efab_tclass_fi_name(uint32_t v, char *buf, size_t len)
{
	static const char *const names[] = {"FI_TC_UNSPEC",	   "FI_TC_BEST_EFFORT",
					    "FI_TC_LOW_LATENCY",   "FI_TC_DEDICATED_ACCESS",
					    "FI_TC_BULK_DATA",	   "FI_TC_SCAVENGER",
					    "FI_TC_NETWORK_CTRL"};
	for (int t = 0; t <= EFAB_TC_NETWORK_CTRL; t++)
		if (efab_tclass_value(t) == v) {
			snprintf(buf, len, "%s", names[t]);
			return buf;
		}
	snprintf(buf, len, "0x%x", v);
	return buf;
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

/* The FI_MR_LOCAL refusal of an unregistered source, in the provider's words. */
static void mr_local_reason(char *buf, size_t len, const char *fab, const struct fi_info *info)
{
	snprintf(buf, len,
		 "%s (provider %s) requires FI_MR_LOCAL: every local buffer must be registered "
		 "(fi_mr_regattr) and its fi_mr_desc passed to each operation, so an unregistered "
		 "source cannot be used there%s", fab, info->fabric_attr->prov_name,
		 !strcmp(fab, "efa-direct") ? "; -f efa accepts one (registered or bounced by "
					      "the provider)" : "");
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
	uint64_t want = req->caps | (req->hmem ? FI_HMEM : 0) | (req->msg ? FI_MSG : 0);
	uint64_t missing = want & ~info->caps;
	const char *fab = info->fabric_attr->name;
	char names[256] = "";
	size_t n = 0;

	for (size_t k = 0; k < EFAB_ARRAY_SIZE(cap_names); k++)
		if (missing & cap_names[k].bit)
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "",
					      cap_names[k].name);
	/* an unregistered source on a fabric that requires FI_MR_LOCAL: that is the
	 * reason, whatever else the listing (asked without FI_HMEM) lacks */
	if ((req->mr_mode_off & FI_MR_LOCAL) && (info->domain_attr->mr_mode & FI_MR_LOCAL) &&
	    !(missing & FI_ATOMIC)) {
		mr_local_reason(buf, len, fab, info);
	} else if (missing & FI_ATOMIC) {
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
		mr_local_reason(buf, len, fab, info);
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

int efab_efa_p2p(const struct fi_info *info)
{
	efab_fabric_req_t q = {.provider = "efa", .fabric = "efa-direct",
			       .domain = info->domain_attr ? info->domain_attr->name : NULL,
			       .caps = FI_RMA, .hmem = 1};
	struct fi_info *o = NULL;
	int rc = getinfo_match(&q, &o);
	fi_freeinfo(o);
	if (rc <= 0)
		return rc == 0 ? 1 : -1;
	/* the efa fabric must offer GPU memory at all (a libfabric with CUDA on a
	 * host with a GPU), else efa-direct's lack of it says nothing about P2P */
	o = NULL;
	q.fabric = "efa";
	rc = getinfo_match(&q, &o);
	fi_freeinfo(o);
	if (rc != 0)
		return -1;
	o = NULL;
	q.fabric = "efa-direct";
	q.hmem = 0;
	rc = getinfo_match(&q, &o);
	fi_freeinfo(o);
	return rc == 0 ? 0 : -1;
}

int efab_info_simulated(const struct fi_info *info)
{
	return info && info->nic && info->nic->device_attr && info->nic->device_attr->firmware &&
	       !strncmp(info->nic->device_attr->firmware, "efasim", 6);
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
