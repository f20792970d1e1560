/* efab_mr_reg's set-up and main: the NIC fan-out (--domains: sibling
 * domains, or those near the GPU by topology), the locked-memory check,
 * placement (--domain auto, GPU memory), the fabric's bring-up, the header
 * (GDRCopy, placement, the domains) and the regimes in order. The start,
 * init and CSV of reg.h are shared with efab_shmem_reg. */
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_clock.h"
#include "efab_cuda.h"
#include "efab_endpoint.h"
#include "efab_mem.h"
#include "efab_reglog.h"
#include "efab_select.h"
#include "efab_topo.h"
#include "reg.h"
#include "rows.h"
#include "runtime.h"
#include "mr_reg_int.h"

/* Topology placement (--domain auto, GPU memory, --domains local|gpu-pair). */
static efab_topo_t topo;
static int have_topo;
static efab_pairing_t pairing;
static char place_note[384];

/* ---- NIC fan-out (--domains) ---- */

/* Domains of the selected provider other than the one in use, in fi_getinfo
 * order: those of the same fabric; where that fabric has only the one (tcp
 * names a fabric per interface) and -f was not given, those of the provider's
 * other fabrics, each domain name once. */
static size_t sibling_domains(const struct fi_info *sel, int fabric_given, char names[][128],
			      char fabrics[][128], size_t max)
{
	struct fi_info *all = NULL;
	size_t n = 0;
	if (efab_getinfo_all(&all))
		return 0;
	for (int widen = 0; widen < 2 && n == 0; widen++) {
		if (widen && fabric_given)
			break;
		for (const struct fi_info *i = all; i && n < max; i = i->next) {
			const char *d = i->domain_attr->name;
			if (strcmp(i->fabric_attr->prov_name, sel->fabric_attr->prov_name) ||
			    (!widen && strcmp(i->fabric_attr->name, sel->fabric_attr->name)) ||
			    !strcmp(d, sel->domain_attr->name))
				continue;
			int seen = 0;
			for (size_t k = 0; k < n; k++)
				seen |= !strcmp(names[k], d);
			if (!seen) {
				/* its fabric too: EFA names each domain under efa-direct and
				 * efa, and a domain alone selects the first (efa-direct) */
				snprintf(fabrics[n], 128, "%s", i->fabric_attr->name);
				snprintf(names[n++], 128, "%s", d);
			}
		}
	}
	fi_freeinfo(all);
	return n;
}

static int near_set(const char *d)
{
	return !strcmp(d, "local") || !strcmp(d, "gpu-pair");
}

/* --domains local|gpu-pair: the domains (of the fabric in use) of the GPU's
 * NICs by topology: local = every NIC on its PCIe switch, gpu-pair = the
 * share exclusive to it (efab_topo_gpu_nics), in bus order, the domain in
 * use first; names gets the others. The count, 0 with the reason in why
 * when the topology names no GPU or NIC (local = the domain in use), or
 * EFAB_EUSAGE (said) when the domain in use is not one of them or one of
 * them has no domain here. */
static int near_domains(reg_ctx_t *r, const char *d, char names[][128], size_t max, size_t *want,
			char *why, size_t len)
{
	int idx[16], n;
	*want = 1;
	if (!have_topo || pairing.gpu < 0 ||
	    (n = efab_topo_gpu_nics(&topo, pairing.gpu,
				    !strcmp(d, "local") ? EFAB_NICS_LOCAL : EFAB_NICS_PAIR, idx,
				    16)) < 1) {
		snprintf(why, len, "%s: %s = the domain in use",
			 !have_topo ? "no topology" : "no GPU with NICs near it in the topology",
			 d);
		return EFAB_OK;
	}
	const struct fi_info *use = r->fab.info;
	struct fi_info *all = NULL;
	if (efab_getinfo_all(&all))
		return EFAB_ERR;
	int in_set = 0, rc = EFAB_OK;
	size_t k = 0;
	char list[512] = "";
	for (int j = 0, o = 0; j < n && o < (int)sizeof(list); j++)
		o += snprintf(list + o, sizeof(list) - (size_t)o, "%s%s", j ? ", " : "",
			      topo.nics[idx[j]].name);
	for (int j = 0; j < n && !rc; j++) {
		const efab_topo_dev_t *nic = &topo.nics[idx[j]];
		const struct fi_info *i = all;
		for (; i; i = i->next)
			if (!strcmp(i->fabric_attr->prov_name, use->fabric_attr->prov_name) &&
			    !strcmp(i->fabric_attr->name, use->fabric_attr->name) &&
			    efab_info_is_nic(i, nic->busid, nic->name))
				break;
		if (!i) {
			efab_log_error(
				"--domains %s: GPU %s's NIC %s (%s) has no %s domain of fabric %s "
				"here",
				d, pairing.gpu_busid, nic->name, nic->busid,
				use->fabric_attr->prov_name, use->fabric_attr->name);
			rc = EFAB_EUSAGE;
		} else if (!strcmp(i->domain_attr->name, use->domain_attr->name)) {
			in_set = 1;
		} else if (k < max) {
			snprintf(names[k++], 128, "%s", i->domain_attr->name);
		}
	}
	fi_freeinfo(all);
	if (!rc && !in_set) {
		efab_log_error(
			"--domains %s: the domain in use, %s, is not one of GPU %s's NICs (%s): "
			"use --domain auto (the default with --domains %s) or name one of them",
			d, use->domain_attr->name, pairing.gpu_busid, list, d);
		rc = EFAB_EUSAGE;
	}
	if (!rc) {
		*want = k + 1;
		snprintf(why, len, "%s = GPU %s's NICs by topology: %s", d, pairing.gpu_busid,
			 list);
	}
	return rc;
}

/* Open the K - 1 further domains (fabric, domain: no endpoint) --domains asks
 * for. EFAB_EUSAGE when the provider has fewer than asked (the message lists
 * them). */
static int open_domains(reg_ctx_t *r, const efab_fabric_req_t *req, char *note, size_t len)
{
	static char names[EFAB_MAX_DOMAINS][128], fabrics[EFAB_MAX_DOMAINS][128];
	static efab_fabric_t extra[EFAB_MAX_DOMAINS];
	const char *d = r->o.domains;
	size_t want;
	char why[160] = "";
	r->doms[0] = &r->fab;
	r->ndoms = 1;
	size_t nsib;
	int near = near_set(d);
	if (near) {
		int rc = near_domains(r, d, names, EFAB_MAX_DOMAINS - 1, &want, why, sizeof(why));
		if (rc)
			return rc;
		nsib = want - 1;
	} else {
		nsib = sibling_domains(r->fab.info, r->o.fabric[0] != 0, names, fabrics,
				       EFAB_MAX_DOMAINS - 1);
	}
	if (near) {
		/* want set by near_domains */
	} else if (!strcmp(d, "all")) {
		want = nsib + 1;
	} else {
		char *end;
		unsigned long v = strtoul(d, &end, 10);
		if (!*d || *end || v < 1 || v > EFAB_MAX_DOMAINS) {
			efab_log_error(
				"--domains '%s': expected local, gpu-pair, all or a count 1..%d", d,
				EFAB_MAX_DOMAINS);
			return EFAB_EUSAGE;
		}
		want = v;
	}
	if (want > nsib + 1) {
		char list[1024] = "";
		size_t o =
			(size_t)snprintf(list, sizeof(list), "%s", r->fab.info->domain_attr->name);
		for (size_t i = 0; i < nsib && o < sizeof(list); i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, ", %s", names[i]);
		efab_log_error("--domains %s: %zu domains asked, provider %s has %zu here: %s", d,
			       want, r->fab.info->fabric_attr->prov_name, nsib + 1, list);
		return EFAB_EUSAGE;
	}
	for (size_t i = 1; i < want; i++) {
		efab_fabric_req_t q = *req;
		q.domain = names[i - 1];
		/* the fabric in use (local, gpu-pair, and siblings of that fabric:
		 * efa and efa-direct name the same domains, and a domain alone
		 * would select efa-direct's for -f efa); a sibling of another
		 * fabric (tcp: one per interface) its own */
		q.fabric = near ? r->fab.info->fabric_attr->name : fabrics[i - 1];
		q.nic_busid = q.nic_name = NULL;
		struct fi_info *info = NULL;
		int rc = efab_fabric_select(&q, &info);
		if (rc)
			return rc;
		efab_fabric_t *f = &extra[i];
		memset(f, 0, sizeof(*f));
		f->info = info;
		f->next_key = 1;
		f->rt = r->rt;
		f->timeout_s = r->o.timeout_s;
		if (info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
			efab_log_error(
				"--domains: %s requires FI_MR_ENDPOINT (MRs bound to an endpoint); "
				"fan-out registers on domains without endpoints",
				info->domain_attr->name);
			fi_freeinfo(info);
			return EFAB_SKIP;
		}
		int ret = fi_fabric(info->fabric_attr, &f->fabric, NULL);
		if (!ret)
			ret = fi_domain(f->fabric, info, &f->domain, NULL);
		if (ret) {
			efab_log_error("--domains: opening domain %s failed: %s", names[i - 1],
				       fi_strerror(-ret));
			efab_fabric_close(f);
			return EFAB_ERR;
		}
		r->doms[r->ndoms++] = f;
	}
	size_t o = (size_t)snprintf(note, len, "--domains %s: K = %zu (%s", d, r->ndoms,
				    r->fab.info->domain_attr->name);
	const char *fab0 = r->fab.info->fabric_attr->name;
	int one_fabric = 1;
	for (size_t i = 1; i < r->ndoms; i++)
		one_fabric &= !strcmp(r->doms[i]->info->fabric_attr->name, fab0);
	for (size_t i = 1; i < r->ndoms && o < len; i++)
		o += (size_t)snprintf(note + o, len - o, ", %s%s%s%s",
				      r->doms[i]->info->domain_attr->name, one_fabric ? "" : " [",
				      one_fabric ? "" : r->doms[i]->info->fabric_attr->name,
				      one_fabric ? "" : "]");
	if (one_fabric && r->ndoms > 1 && o < len)
		o += (size_t)snprintf(note + o, len - o, "; all on fabric %s", fab0);
	snprintf(note + (o < len ? o : len - 1), o < len ? len - o : 1,
		 "); rows for k = 1, 2, 4, ... and K: each buffer registered on k of them in turn, "
		 "lat_us_* the time of all k%s%s",
		 why[0] ? "; " : "", why);
	return EFAB_OK;
}

/* Host memory registered with a NIC is pinned by the kernel and charged to
 * RLIMIT_MEMLOCK (ib_umem_get, drivers/infiniband/core/umem.c: the pages of
 * every registration are added to mm->pinned_vm; past the limit ENOMEM,
 * unless the process has CAP_IPC_LOCK). CUDA memory is not charged (dma-buf:
 * ib_umem_dmabuf_get; peer memory: the peer client). The most this run
 * holds at once is checked against it before anything is registered:
 * accumulate keeps n x size (n = -n or 64, within --max-total), fresh and
 * same one buffer of the largest size, each on k domains. Exit 2 (the
 * options ask for more than this host allows, as --window above the tx
 * queue), with the limit, the amount and the fix. */
/* The first "Key: value" line of /proc/self/status that fmt (a sscanf
 * format for it) reads into *v; 0 when none. */
static unsigned long long status_field(const char *fmt)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long v = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

static int cap_ipc_lock(void)
{
	return (int)((status_field("CapEff: %llx") >> 14) & 1); /* CAP_IPC_LOCK */
}

static uint64_t pinned_now(void) /* VmPin: this process's mm->pinned_vm */
{
	return (uint64_t)status_field("VmPin: %llu kB") << 10;
}

static int check_memlock(const reg_ctx_t *r)
{
	struct rlimit rl;
	if (r->nic_work[0] != 'y' || efab_mem_is_device(r->kind) ||
	    getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY || cap_ipc_lock())
		return EFAB_OK;
	uint64_t most = 0, at = 0;
	const char *what = "";
	for (size_t i = 0; i < efab_sizes_count(&r->o.sizes); i++) {
		uint64_t size = efab_sizes_at(&r->o.sizes, i), n = r->o.iters ? r->o.iters : 64;
		if (n > r->o.max_total / size)
			n = r->o.max_total / size;
		if ((r->o.regime == EFAB_REGIME_ALL || r->o.regime == EFAB_REGIME_ACCUMULATE) &&
		    n >= 2 && n * size > most) {
			most = n * size, at = size, what = "accumulate";
		}
		if (r->o.regime != EFAB_REGIME_ACCUMULATE && size > most)
			most = size, at = size,
			what = r->o.regime == EFAB_REGIME_SAME ? "same" : "fresh";
	}
	most *= r->ndoms;
	uint64_t pinned = pinned_now();
	if (pinned + most <= rl.rlim_cur)
		return EFAB_OK;
	efab_log_error(
		"RLIMIT_MEMLOCK %.1f MiB (%.1f MiB pinned already) is below the %.1f MiB of %s "
		"memory this run pins at once (%s at %llu B%s, --max-total %.1f MiB): raise it "
		"(ulimit -l unlimited; limits.conf memlock) or lower --max-total / -m",
		(double)rl.rlim_cur / 1048576.0, (double)pinned / 1048576.0,
		(double)most / 1048576.0, efab_mem_name(r->kind), what, (unsigned long long)at,
		r->ndoms > 1 ? " on every domain" : "", (double)r->o.max_total / 1048576.0);
	return EFAB_EUSAGE;
}

static void close_domains(reg_ctx_t *r)
{
	for (size_t i = 1; i < r->ndoms; i++)
		efab_fabric_close(r->doms[i]);
	r->ndoms = 0;
}

/* --domain auto (or --domains local|gpu-pair without --domain), or GPU
 * memory: the GPU and the NIC nearest it by topology (efab_topo_pair, the
 * GPU by CUDA's bus id where there is one), the process bound to the GPU's
 * cpuset, and for auto the domain of that NIC (req). As the harness's
 * place() does for the other benchmarks. */
static int place(reg_ctx_t *r, efab_fabric_req_t *req)
{
	int gpu_kind = efab_mem_is_gpu(r->kind), near = near_set(r->o.domains);
	int want_auto = !strcmp(r->o.domain, "auto") || (near && !r->o.domain[0]);
	char busid[32] = "";
	int g;
	if (!want_auto && !gpu_kind && !near)
		return EFAB_OK;
	if (gpu_kind && efab_cuda_device_count() > 0 &&
	    efab_gpu_pick(r->o.gpu, r->rt->local_rank, &g) == EFAB_OK)
		efab_cuda_pci_bus_id(g, busid, sizeof(busid));
	if (efab_topo_load(NULL, &topo)) {
		if (!want_auto)
			return EFAB_OK;
		efab_log_error("--domain auto: no topology (hwloc) to find the NIC near the GPU");
		return EFAB_ERR;
	}
	have_topo = 1;
	if (efab_topo_pair(&topo, r->rt->local_rank, r->o.gpu, busid, &pairing)) {
		snprintf(place_note, sizeof(place_note),
			 "placement: no GPU and no NIC in the topology%s",
			 want_auto ? "; --domain auto: the first matching domain" : "");
		return EFAB_OK;
	}
	int bound = efab_topo_bind(&topo, &pairing) == EFAB_OK;
	snprintf(place_note, sizeof(place_note),
		 "placement (rank %d): GPU %s, NIC %s (%s), NUMA node %d, %s cpuset %s%s",
		 r->rt->rank, pairing.gpu_busid[0] ? pairing.gpu_busid : "-",
		 pairing.nic_name[0] ? pairing.nic_name : "-",
		 pairing.nic_busid[0] ? pairing.nic_busid : "-", pairing.numa,
		 bound ? "bound to" : "NOT bound to", pairing.cpuset,
		 want_auto ? (pairing.nic >= 0 ? "; --domain auto: that NIC's domain"
					       : "; --domain auto: no NIC near the GPU, the first "
						 "matching domain")
			   : "");
	if (want_auto && pairing.nic >= 0) {
		req->domain = "auto";
		req->nic_busid = pairing.nic_busid;
		req->nic_name = pairing.nic_name;
	}
	return EFAB_OK;
}

/* Fabric selected and opened (and --domains' further ones), the GPU. */
static int bring_up(reg_ctx_t *r, const efab_bench_row_t *row, struct fi_info **info, char *note3,
		    size_t len)
{
	efab_fabric_req_t req = {.provider = r->o.provider,
				 .fabric = r->o.fabric,
				 .domain = r->o.domain,
				 .caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
					 FI_REMOTE_WRITE,
				 .hmem = efab_mem_is_gpu(r->kind)};
	int rc = place(r, &req);
	if (!rc)
		rc = efab_fabric_select(&req, info);
	if (rc)
		return rc;
	efab_run_info_fabric(&r->ri, *info, &r->o);
	efab_mr_gdr_applies =
		efab_gdr_applies((*info)->fabric_attr->prov_name, (*info)->fabric_attr->name,
				 efab_mem_iface(r->kind) == FI_HMEM_CUDA, r->o.dmabuf);
	r->cache_na = efab_mr_cache_scope(*info);
	snprintf(r->ri.mem_local, sizeof(r->ri.mem_local), "%s", efab_mem_name(r->kind));
	snprintf(r->ri.mem_remote, sizeof(r->ri.mem_remote), "-");
	efab_reg_columns(&r->ri);
	efab_run_info_begin(&r->ri, row->csv_name, r->rt->size);
	r->nic_work = efab_mr_nic_provider((*info)->fabric_attr->prov_name) ? "yes" : "no";
	if ((rc = efab_fabric_open(*info, r->rt, r->o.timeout_s, &r->fab)))
		return rc;
	efab_clock_init(); /* before the first timed call */
	r->doms[0] = &r->fab;
	r->ndoms = 1;
	if (r->o.domains[0] && (rc = open_domains(r, &req, note3, len)))
		return rc;
	r->gpu = -1;
	if (efab_mem_is_gpu(r->kind))
		rc = efab_gpu_pick(r->o.gpu, r->rt->local_rank, &r->gpu);
	return rc;
}

reg_ctx_t *efab_reg_start(const char *name, int argc, char **argv, int *rc)
{
	static reg_ctx_t ctx;
	reg_ctx_t *r = &ctx;
	r->row = efab_row(name);
	*rc = efab_opts_main(&r->o, r->row->options, r->row->name, r->row->summary, argc, argv);
	if (*rc >= 0)
		return NULL;
	if (!r->o.sizes_given)
		r->o.sizes = (efab_sizes_t){4096, 1ull << 30, 2};
	return r;
}

void efab_reg_init(reg_ctx_t *r, efab_rt_t *rt, const efab_regop_t *ops, size_t nops,
		   const char *nic_work, const char *component_note)
{
	r->rt = rt;
	r->csv.fd = -1;
	r->ops = ops;
	r->nops = nops;
	r->nic_work = nic_work;
	r->component_note = component_note;
}

int efab_reg_open_csv(reg_ctx_t *r)
{
	int rc = EFAB_OK;
	if (r->o.csv[0] && r->rt->rank == 0)
		rc = efab_csv_open(r->o.csv, &r->ri, &r->csv);
	rc = efab_rt_agree(r->rt, rc); /* rank 0's verdict for all: none waits alone */
	if (!rc && r->o.csv[0] && r->rt->rank)
		rc = efab_csv_open(r->o.csv, &r->ri, &r->csv);
	return rc;
}

static const char *mr_cache_word(const reg_ctx_t *r)
{
	return r->o.mr_cache == EFAB_ON ? "on" : r->o.mr_cache == EFAB_OFF ? "off" : "default";
}

static const char *gdr_word(void)
{
	return efab_mr_gdr_state == EFAB_GDR_ON    ? "on"
	       : efab_mr_gdr_state == EFAB_GDR_OFF ? "off"
						   : "unknown";
}

static void print_header(const reg_ctx_t *r, const struct fi_info *info, const char *note3)
{
	char mrm[256], note1[1024], note2[256];
	efab_mr_mode_str(info->domain_attr->mr_mode, mrm, sizeof(mrm));
	snprintf(note1, sizeof(note1),
		 "mr_mode %s; access %s; mr cache %s (FI_MR_CACHE_MAX_COUNT=%s "
		 "FI_EFA_MR_CACHE_ENABLE=%s)%s%s%s",
		 mrm, r->o.access ? "local" : "remote", mr_cache_word(r),
		 getenv("FI_MR_CACHE_MAX_COUNT") ? getenv("FI_MR_CACHE_MAX_COUNT") : "unset",
		 getenv("FI_EFA_MR_CACHE_ENABLE") ? getenv("FI_EFA_MR_CACHE_ENABLE") : "unset",
		 r->o.dmabuf ? "; registered through dmabuf (FI_MR_DMABUF)" : "",
		 r->cache_na ? "; mr_cache column n/a: " : "", r->cache_na ? r->cache_na : "");
	snprintf(
		note2, sizeof(note2),
		"lat_us_* = fi_mr_regattr time, dereg_us_* = fi_close time, microseconds, over n "
		"calls after the first; first_us = the first call of the size and regime, alone; %s",
		r->nic_work[0] == 'y' ? "this provider's registration includes NIC driver work"
				      : "no NIC here: registration is software bookkeeping");
	const char *note4 =
		"reg_path = how libfabric registered a buffer of the size, from its own MR "
		"log (fi_import_log; FI_LOG_MR at info) around one untimed registration made "
		"before the timed ones, given back before them (-v: its lines): dmabuf "
		"(\"Registering dmabuf MR\": ibv_reg_dmabuf_mr), peermem (ibv_reg_mr on the "
		"GPU address: nvidia-peermem or the EFA driver's efa-nv-peermem; libfabric "
		"said \"Registered memory\" and no dma-buf), dmabuf->peermem (dma-buf refused, "
		"then ibv_reg_mr), efabench-dmabuf (efabench's own FI_MR_DMABUF, --dmabuf), "
		"unknown (nothing said, or the log not taken), host (host memory), - (no NIC "
		"registration); +gdrcopy: the efa fabric also pinned the CUDA buffer through "
		"GDRCopy (+gdrcopy-failed: it tried and warned, +gdrcopy-unknown: libfabric's "
		"GDRCopy state unknown)";
	/* GDRCopy: libfabric's statement, with the rows it concerns */
	char note5[640] = "";
	if (efab_reglog_nic_provider(info->fabric_attr->prov_name) &&
	    efab_mem_iface(r->kind) == FI_HMEM_CUDA)
		snprintf(
			note5, sizeof(note5), "GDRCopy %s (%s): %s", gdr_word(), efab_mr_gdr_why,
			!efab_mr_gdr_applies
				? (r->o.dmabuf
					   ? "FI_MR_DMABUF registrations skip it (efa_rdm_mr_hmem_setup)"
					   : "this fabric's registration has no GDRCopy step")
			: efab_mr_gdr_state == EFAB_GDR_OFF
				? "these registrations make no GDRCopy pin"
				: "on the efa fabric every fi_mr_regattr of CUDA memory without FI_MR_DMABUF "
				  "also pins and maps the buffer through GDRCopy (gdr_pin_buffer + gdr_map; "
				  "fi_close: gdr_unmap + gdr_unpin_buffer; libfabric efa_rdm_mr_hmem_setup), "
				  "so these rows carry it and --dmabuf's do not: reg_path +gdrcopy; control "
				  "run FI_HMEM_CUDA_USE_GDRCOPY=0");
	const char *notes[6];
	size_t nn = 0;
	notes[nn++] = note1;
	notes[nn++] = note2;
	if (note3[0])
		notes[nn++] = note3;
	notes[nn++] = note4;
	if (place_note[0])
		notes[nn++] = place_note;
	if (note5[0])
		notes[nn++] = note5;
	/* the short header: the settings, the metric, where the buffers were
	 * registered, and GDRCopy's state where it concerns the rows */
	char b1[512], b2[320], b5[160] = "";
	snprintf(b1, sizeof(b1), "mr_mode %s; access %s; mr cache %s%s%s%s; %s", mrm,
		 r->o.access ? "local" : "remote", mr_cache_word(r),
		 r->o.dmabuf ? "; through dmabuf (FI_MR_DMABUF)" : "",
		 r->cache_na ? "; mr_cache n/a: " : "", r->cache_na ? r->cache_na : "",
		 r->nic_work[0] == 'y' ? "registration includes NIC driver work"
				       : "no NIC: registration is software bookkeeping");
	snprintf(b2, sizeof(b2),
		 "*_us = fi_mr_regattr time (dereg: fi_close) in us over n calls after the first, "
		 "first_us the first alone%s",
		 efab_mem_is_device(r->kind) ? "; reg_path = the path libfabric's MR log named"
					     : "");
	if (note5[0])
		snprintf(
			b5, sizeof(b5), "GDRCopy %s: %s", gdr_word(),
			!efab_mr_gdr_applies ? "not in these registrations"
			: efab_mr_gdr_state == EFAB_GDR_OFF
				? "no GDRCopy pin in these registrations"
				: "each registration also pins through GDRCopy (reg_path +gdrcopy)");
	const char *lines[] = {b1, b2, note3, place_note, b5};
	efab_table_top(stdout, &r->table, &r->ri, r->o.verbose, lines, EFAB_ARRAY_SIZE(lines),
		       notes, nn);
}

/* Every regime (registrations through a dmabuf are rows of their own: op
 * fresh_dmabuf), with --domains for k = 1, 2, 4, ... and K; then the
 * components. */
static int run_regimes(reg_ctx_t *r)
{
	static const char *const regimes[] = {"fresh", "same", "accumulate"};
	int rc = EFAB_OK;
	for (size_t k = 1; k <= r->ndoms && !rc;
	     k = k * 2 > r->ndoms && k < r->ndoms ? r->ndoms : k * 2) {
		r->k = k;
		for (int g = 1; g <= 3 && !rc; g++)
			if (r->o.regime == EFAB_REGIME_ALL || r->o.regime == g)
				rc = efab_reg_run_regime(r, g == 1 && r->o.dmabuf ? "fresh_dmabuf"
										  : regimes[g - 1]);
	}
	r->k = 1;
	if (!rc && r->o.components) {
		if (efab_mem_is_device(r->kind))
			rc = efab_reg_run_regime(r, "dmabuf_export");
		else if (r->kind == EFAB_MEM_HOST || r->kind == EFAB_MEM_HOST_HUGE)
			rc = efab_reg_run_regime(r, "cuMemHostRegister");
	}
	return rc;
}

int efab_mr_reg_main(int argc, char **argv)
{
	struct fi_info *info = NULL;
	char note3[1024] = "";
	int rc;
	reg_ctx_t *r = efab_reg_start("efab_mr_reg", argc, argv, &rc);
	if (!r)
		return rc;
	r->kind = r->o.mem_local;
	if (r->o.dmabuf && !efab_mem_is_device(r->kind)) {
		efab_log_error("--dmabuf registers cuda memory: add --mem cuda or --mem cuda-vmm");
		return EFAB_EUSAGE;
	}
	efab_mr_cache_env(r->o.mr_cache); /* before libfabric reads its environment */
	/* libfabric says whether GDRCopy is in use only as it initialises (the
	 * first fi_getinfo): its core log is tapped until bring_up is done */
	static efab_gdrlog_t gl;
	efab_gdrlog_begin(&gl);
	if (efab_runtime_up(&r->run, EFAB_RUNTIME_AUTO, r->row->name, &argc, &argv)) {
		efab_gdrlog_end(&gl);
		return EFAB_ERR;
	}
	/* nic_work follows the provider (bring_up) */
	efab_reg_init(r, r->run.rt, efab_mr_ops, EFAB_ARRAY_SIZE(efab_mr_ops), "no",
		      "CUDA only, no NIC");
	r->access = FI_READ | FI_WRITE | (r->o.access ? 0 : FI_REMOTE_READ | FI_REMOTE_WRITE);
	rc = bring_up(r, r->row, &info, note3, sizeof(note3));
	efab_gdrlog_end(&gl);
	efab_mr_gdr_state =
		efab_gdr_state(&gl, getenv("FI_HMEM_CUDA_USE_GDRCOPY"), efab_libgdrapi_mapped(),
			       efab_mr_gdr_why, sizeof(efab_mr_gdr_why));
	if (r->o.verbose)
		for (size_t i = 0; i < gl.n; i++)
			fprintf(stderr, "# libfabric gdrcopy: %s\n", gl.line[i]);
	if (!rc)
		rc = efab_rt_agree(r->rt, check_memlock(r));
	char err[1024];
	/* the op column: the regimes, and with --components the components' names */
	int opw = (int)strlen("fresh_dmabuf");
	for (size_t i = 0; r->o.components && i < r->nops; i++)
		if ((int)strlen(r->ops[i].name) > opw)
			opw = (int)strlen(r->ops[i].name);
	if (!rc && (rc = efab_reg_table(r, NULL, opw, err, sizeof(err))))
		efab_log_error("%s", err);
	if (!rc && !(rc = efab_reg_open_csv(r))) {
		print_header(r, info, note3);
		rc = run_regimes(r);
		efab_csv_close(&r->csv);
	}
	close_domains(r);
	if (have_topo)
		efab_topo_free(&topo);
	if (r->fab.ep)
		efab_fabric_close(&r->fab); /* frees info */
	else
		fi_freeinfo(info);
	free(r->reg);
	free(r->dereg);
	return efab_runtime_down(&r->run, rc);
}
