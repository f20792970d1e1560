/* efab_probe's capability matrix: what fi_getinfo offers and requires for a
 * column (limits, ordering, atomics per datatype, mode and mr_mode bits
 * efabench must honour), the NIC's hardware counters and completion
 * counters (read through the libibverbs libfabric loaded), the installed
 * stack, and the verdict. Static: no MPI, no traffic. */
#define _GNU_SOURCE /* dladdr, Dl_info */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "efab_atomic.h"
#include "efab_endpoint.h"
#include "efab_ops.h"
#include "efab_hwc.h"
#include "efab_opts.h"
#include "efab_select.h"
#include "probe_int.h"

static const char *yesno(int b)
{
	return b ? "yes" : "no";
}

static const char *const aops[] = {"add", "fadd", "cswap", "swap", "min",
				   "max", "bor",  "band",  "bxor"};
static const int dtypes[] = {EFAB_DT_U64, EFAB_DT_U32, EFAB_DT_I64,
			     EFAB_DT_I32, EFAB_DT_F64, EFAB_DT_F32};

/* Atomics supported per op: the datatypes fi_query_atomic accepts. Needs a
 * domain; returns the number of ops with at least one datatype. */
static int probe_atomics(column_t *col, const struct fi_info *info)
{
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	int nops = 0;
	if (!info) {
		for (size_t a = 0; a < EFAB_ARRAY_SIZE(aops); a++) {
			char n[32];
			snprintf(n, sizeof(n), "atomic_%s", aops[a]);
			add(col, n, "-");
		}
		return 0;
	}
	int ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	if (!ret) {
		ret = fi_domain(fabric, (struct fi_info *)info, &domain, NULL);
		if (ret)
			fi_close(&fabric->fid);
	}
	if (ret) { /* keep the rows aligned: every column has every property */
		for (size_t a = 0; a < EFAB_ARRAY_SIZE(aops); a++) {
			char n[32];
			snprintf(n, sizeof(n), "atomic_%s", aops[a]);
			add(col, n, "? (%s)", fi_strerror(-ret));
		}
		return 0;
	}
	for (size_t a = 0; a < EFAB_ARRAY_SIZE(aops); a++) {
		char n[32], v[128] = "";
		size_t len = 0;
		int kind;
		enum fi_op op;
		efab_aop_map((int)a, &kind, &op);
		for (size_t d = 0; d < EFAB_ARRAY_SIZE(dtypes); d++) {
			size_t count;
			if (efab_atomic_query(domain, kind, efab_fi_dtype(dtypes[d]), op, &count) ==
			    0)
				len += (size_t)snprintf(v + len, sizeof(v) - len, "%s%s",
							len ? " " : "", efab_dtype_name(dtypes[d]));
		}
		snprintf(n, sizeof(n), "atomic_%s", aops[a]);
		add(col, n, "%s", len ? v : "-");
		nops += len > 0;
	}
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	return nops;
}

static void order_str(uint64_t o, char *buf, size_t len)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {{FI_ORDER_RAR, "RAR"}, {FI_ORDER_RAW, "RAW"}, {FI_ORDER_WAR, "WAR"},
		    {FI_ORDER_WAW, "WAW"}, {FI_ORDER_SAW, "SAW"}, {FI_ORDER_SAS, "SAS"}};
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(bits); i++)
		if (o & bits[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", bits[i].name);
	if (!n)
		snprintf(buf, len, "none");
}

/* What fi_getinfo answers when efabench asks this provider/fabric/domain for
 * caps (with its usual mode and mr_mode): NULL when it cannot. The caps of
 * an unfiltered query understate some providers (tcp;ofi_rxm offers
 * atomics only when asked), so every capability row comes from such a query. */
static struct fi_info *query(const struct fi_info *col, uint64_t caps, int hmem, uint64_t mode_off,
			     uint64_t mr_mode_off, int rx_cq_data)
{
	efab_fabric_req_t req = {.provider = col->fabric_attr->prov_name,
				 .fabric = col->fabric_attr->name,
				 .domain = col->domain_attr->name,
				 .caps = caps,
				 .hmem = hmem,
				 .mode_off = mode_off,
				 .mr_mode_off = mr_mode_off,
				 .rx_cq_data = rx_cq_data};
	struct fi_info *hints = efab_hints_build(&req), *list = NULL, *out = NULL;
	if (hints && fi_getinfo(EFAB_FI_VERSION, NULL, NULL, 0, hints, &list) == 0) {
		const struct fi_info *m = efab_info_match(list, &req);
		if (m)
			out = fi_dupinfo(m);
	}
	fi_freeinfo(list);
	fi_freeinfo(hints);
	return out;
}

/* As efab_fabric_select asks: without FI_RX_CQ_DATA, then with it. */
static struct fi_info *query_caps(const struct fi_info *col, uint64_t caps, int hmem)
{
	struct fi_info *i = query(col, caps, hmem, 0, 0, 0);
	return i ? i : query(col, caps, hmem, 0, 0, 1);
}

/* Whether the fabric requires a mode or mr_mode bit efabench offers: asked
 * without it (everything else as efabench asks for RMA), it drops out. What
 * a provider echoes when offered a bit is no requirement (efa returns
 * FI_MR_LOCAL when asked for it, but does not need it). */
static const char *required(const struct fi_info *col, const struct fi_info *offered, uint64_t caps,
			    uint64_t mode_off, uint64_t mr_mode_off)
{
	if (!offered)
		return "-"; /* not offered for RMA at all */
	struct fi_info *without = query(col, caps, 0, mode_off, mr_mode_off, 0);
	if (!without)
		without = query(col, caps, 0, mode_off, mr_mode_off, 1);
	const char *r = without ? "no" : "yes";
	fi_freeinfo(without);
	return r;
}

/* FI_RX_CQ_DATA is required when a remote-CQ-data request is refused without it. */
static const char *rx_cq_data_required(const struct fi_info *col, uint64_t caps)
{
	struct fi_info *without = query(col, caps | FI_MSG, 0, 0, 0, 0);
	struct fi_info *with = without ? NULL : query(col, caps | FI_MSG, 0, 0, 0, 1);
	const char *r = without ? "no" : with ? "yes" : "-";
	fi_freeinfo(without);
	fi_freeinfo(with);
	return r;
}

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

/* What the fabric requires: "yes" = it drops out when asked without the bit.
 * Returns whether it requires FI_MR_LOCAL. */
static int describe_requirements(column_t *col, const struct fi_info *rma)
{
	static const struct {
		uint64_t bit;
		const char *row;
	} mr_rows[] = {{FI_MR_LOCAL, "mr_FI_MR_LOCAL"},
		       {FI_MR_PROV_KEY, "mr_FI_MR_PROV_KEY"},
		       {FI_MR_VIRT_ADDR, "mr_FI_MR_VIRT_ADDR"},
		       {FI_MR_ALLOCATED, "mr_FI_MR_ALLOCATED"},
		       {FI_MR_ENDPOINT, "mr_FI_MR_ENDPOINT"},
		       {FI_MR_HMEM, "mr_FI_MR_HMEM"},
		       {FI_MR_RAW, "mr_FI_MR_RAW"}};
	int need_mr_local = 0;
	add(col, "mode_FI_CONTEXT", "%s", required(col->info, rma, RMA_CAPS, FI_CONTEXT, 0));
	add(col, "mode_FI_CONTEXT2", "%s", required(col->info, rma, RMA_CAPS, FI_CONTEXT2, 0));
	add(col, "mode_FI_RX_CQ_DATA", "%s", rx_cq_data_required(col->info, RMA_CAPS));
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(mr_rows); k++) {
		const char *r = required(col->info, rma, RMA_CAPS, 0, mr_rows[k].bit);
		add(col, mr_rows[k].row, "%s", r);
		if (mr_rows[k].bit == FI_MR_LOCAL)
			need_mr_local = !strcmp(r, "yes");
	}
	return need_mr_local;
}

/* Sizes, queue depths, progress, ordering, link speed and the NIC. */
static void describe_counters(column_t *col, const struct fi_info *i);

static void describe_limits(column_t *col, const struct fi_info *i)
{
	char buf[256];
	add(col, "inject_size", "%zu", i->tx_attr->inject_size);
	add(col, "max_msg_size", "%zu", i->ep_attr->max_msg_size);
	/* the endpoint's own RMA limits (FI_OPT_*_RMA_SIZE, libfabric >= 2.0):
	 * efa-direct injects no RMA at all although its inject_size is not 0 */
	efab_limit_t inj, mx;
	efab_info_rma_limits(i, &inj, &mx);
	if (inj.from_ep)
		add(col, "inject_rma_size", "%zu", inj.value);
	else
		add(col, "inject_rma_size", "%s", "= inject_size");
	if (mx.from_ep)
		add(col, "max_rma_size", "%zu", mx.value);
	else
		add(col, "max_rma_size", "%s", "= max_msg_size");
	add(col, "tx_size", "%zu", i->tx_attr->size);
	add(col, "rx_size", "%zu", i->rx_attr->size);
	add(col, "progress", "%s", efab_progress_name(efab_info_progress(i)));
	order_str(i->tx_attr->msg_order, buf, sizeof(buf));
	add(col, "msg_order", "%s", buf);
	double gbps = efab_info_link_gbps(i);
	if (gbps > 0)
		add(col, "link_Gbps", "%.1f", gbps);
	else
		add(col, "link_Gbps", "-");
	if (i->nic && i->nic->device_attr && i->nic->device_attr->name)
		add(col, "nic_name", "%s", i->nic->device_attr->name);
	else
		add(col, "nic_name", "-");
	if (i->nic && i->nic->bus_attr && i->nic->bus_attr->bus_type == FI_BUS_PCI) {
		const struct fi_pci_attr *p = &i->nic->bus_attr->attr.pci;
		add(col, "pci_bus_id", "%04x:%02x:%02x.%x", p->domain_id, p->bus_id, p->device_id,
		    p->function_id);
	} else {
		add(col, "pci_bus_id", "-");
	}
	describe_counters(col, i);
}

/* The NIC's hardware counters (lib/hwc.c): what the benchmarks' proof of
 * path reads, and whether the three it names the path by are there. */
static void describe_counters(column_t *col, const struct fi_info *i)
{
	efab_hwc_t h;
	const char *dev = i->nic && i->nic->device_attr ? i->nic->device_attr->name : NULL;
	if (!dev || efab_hwc_open(dev, &h) != EFAB_OK) {
		add(col, "hw_counters", "-");
		add(col, "hw_counter_names", "-");
		add(col, "hw_path_counters", "-");
		return;
	}
	char names[sizeof(col->props[0].value)], missing[128] = "";
	efab_hwc_list(&h, names, sizeof(names));
	add(col, "hw_counters", "%d, lifespan %u ms, %s", h.nfiles, h.lifespan_ms, h.dir);
	add(col, "hw_counter_names", "%s", names);
	static const int need[] = {EFAB_HWC_rdma_write_bytes, EFAB_HWC_rdma_read_bytes,
				   EFAB_HWC_send_bytes};
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(need); k++)
		if (!(h.present & (1u << need[k])))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s%s", missing[0] ? " " : "", efab_hwc_names[need[k]]);
	if (missing[0])
		add(col, "hw_path_counters", "missing %s", missing);
	else
		add(col, "hw_path_counters", "yes");
}

/* ---- completion counters ----
 * Hardware completion counters: rdma-core's verbs after 64.0 (rdma-core main,
 * 65.0: ibv_query_comp_cntr_caps, ibv_create_comp_cntr, efadv_create_comp_cntr)
 * and libfabric's efa provider, which makes efa-direct's fi_cntr a device
 * counter (prov/efa/src/efa_cntr.c efa_cntr_open -> efa_hw_cntr.c
 * efa_hw_cntr_open) when it was built against such an rdma-core
 * (HAVE_EFADV_CREATE_COMP_CNTR), FI_EFA_USE_HW_CNTR is 1 (efa_env.c: 0 in
 * 2.6, 1 from 2.7) and efadv_create_comp_cntr succeeds; else a software
 * counter, progressed by polling the CQ. The efa fabric's counters are
 * software (rdm/efa_rdm_cntr.c). Three rows: what rdma-core offers, what the
 * device offers, whether libfabric uses them. */

/* ibv_comp_cntr_caps of rdma-core main's verbs.h; the call takes its size */
struct probe_cc_caps {
	uint64_t max_value;
	uint32_t max_counters;
	uint32_t supported_qp_attach_ops;
};

/* Whether the ELF file PATH imports SYM (an undefined .dynsym entry): 1 yes,
 * 0 no, -1 unreadable. */
static int elf_imports(const char *path, const char *sym)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = -1;
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	size_t sz = (size_t)st.st_size;
	const unsigned char *m = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	const Elf64_Ehdr *eh = (const void *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > sz)
		goto out;
	const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
	for (unsigned k = 0; k < eh->e_shnum; k++) {
		if (sh[k].sh_type != SHT_DYNSYM || sh[k].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[k].sh_link];
		if (sh[k].sh_offset + sh[k].sh_size > sz || str->sh_offset + str->sh_size > sz)
			goto out;
		const Elf64_Sym *sy = (const void *)(m + sh[k].sh_offset);
		size_t n = sh[k].sh_size / sizeof(*sy);
		r = 0;
		for (size_t j = 0; j < n && !r; j++)
			if (sy[j].st_shndx == SHN_UNDEF && sy[j].st_name < str->sh_size &&
			    !strncmp((const char *)m + str->sh_offset + sy[j].st_name, sym,
				     str->sh_size - sy[j].st_name))
				r = 1;
	}
out:
	munmap((void *)m, sz);
	return r;
}

/* The Version of the libfabric.pc beside the loaded libfabric.so (LIB's
 * directory/pkgconfig): "2.7.0a1", "2.7.0amzn2.0"; "" when there is none. */
static void libfabric_pc_version(const char *lib, char *out, size_t len)
{
	char dir[4096];
	out[0] = 0;
	snprintf(dir, sizeof(dir), "%s", lib);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	efab_libfabric_pc_version(dir, out, len);
}

/* Open NIC dev through the libibverbs libfabric's efa provider loaded and
 * call fn(ctx, arg, out, len) on it: what fn says, or "- (why not)" in out. */
typedef void (*with_ctx_fn)(void *ibv, void *ctx, void *arg, char *out, size_t len);
static void with_device(const char *dev, with_ctx_fn fn, void *arg, char *out, size_t len)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		snprintf(out, len, "- (libibverbs not loaded)");
		return;
	}
	typedef void *(*get_list_t)(int *);
	typedef const char *(*get_name_t)(void *);
	typedef void *(*open_t)(void *);
	typedef int (*close_t)(void *);
	typedef void (*free_list_t)(void *);
	get_list_t get_list = (get_list_t)dlsym(h, "ibv_get_device_list");
	get_name_t get_name = (get_name_t)dlsym(h, "ibv_get_device_name");
	open_t op = (open_t)dlsym(h, "ibv_open_device");
	close_t cl = (close_t)dlsym(h, "ibv_close_device");
	free_list_t fr = (free_list_t)dlsym(h, "ibv_free_device_list");
	if (!get_list || !get_name || !op || !cl || !fr) {
		snprintf(out, len, "- (libibverbs without the device list calls)");
	} else {
		int n = 0;
		void **l = get_list(&n);
		void *ctx = NULL;
		for (int k = 0; l && k < n && !ctx; k++)
			if (!strcmp(get_name(l[k]), dev))
				ctx = op(l[k]);
		if (!ctx)
			snprintf(out, len, "- (cannot open %s: %s)", dev, strerror(errno));
		else {
			fn(h, ctx, arg, out, len);
			cl(ctx);
		}
		if (l)
			fr(l);
	}
	dlclose(h);
}

/* The device's completion counters (rdma-core main's ibv_query_comp_cntr_caps):
 * "yes (N counters, ...)", or "no (why)"; arg: the max value (0 if none). */
static void comp_cntr_caps(void *ibv, void *ctx, void *arg, char *out, size_t len)
{
	typedef int (*caps_t)(void *, struct probe_cc_caps *, size_t);
	caps_t caps = (caps_t)dlsym(ibv, "_ibv_query_comp_cntr_caps");
	struct probe_cc_caps c;
	int err = caps ? caps(ctx, &c, sizeof(c)) : 0;
	if (!caps)
		snprintf(
			out, len,
			"no (rdma-core cannot ask: no ibv_query_comp_cntr_caps, rdma-core <= 64.0)");
	else if (err)
		snprintf(out, len, "no (ibv_query_comp_cntr_caps: %s)", strerror(err));
	else if (!c.max_counters)
		snprintf(out, len, "no (0 counters)");
	else {
		snprintf(out, len, "yes (%u counters, max value %llu, attach ops 0x%x)",
			 c.max_counters, (unsigned long long)c.max_value,
			 c.supported_qp_attach_ops);
		*(uint64_t *)arg = c.max_value;
	}
}

static void comp_cntr_device(const char *dev, char *out, size_t len, uint64_t *max_value)
{
	*max_value = 0;
	with_device(dev, comp_cntr_caps, max_value, out, len);
}

/* efadv_device_attr of rdma-core >= 60 (the call takes its size) */
struct probe_efadv_attr {
	uint64_t comp_mask;
	uint32_t max_sq_wr, max_rq_wr;
	uint16_t max_sq_sge, max_rq_sge, inline_buf_size, inline_buf_size_ex;
	uint32_t device_caps, max_rdma_size;
};

/* 128-byte WQEs (efa_io_tx_wqe_128): the device's inline_buf_size_ex above
 * its inline_buf_size (efadv_query_device through the loaded libefa), and
 * whether this libfabric reads it (2.7: efa-direct's inject size up to it,
 * efa_prov_info.c; the QP then gets 128-byte WQEs with inline RDMA writes). */
/* efadv_query_device on an open device: "ok" in out and the attributes in arg */
static void efadv_attr(void *ibv, void *ctx, void *arg, char *out, size_t len)
{
	(void)ibv;
	typedef int (*query_t)(void *, struct probe_efadv_attr *, uint32_t);
	void *efa = dlopen("libefa.so.1", RTLD_NOW | RTLD_NOLOAD);
	query_t q = efa ? (query_t)dlsym(efa, "efadv_query_device") : NULL;
	int err = q ? q(ctx, arg, sizeof(struct probe_efadv_attr)) : 0;
	if (!q)
		snprintf(out, len, "- (libefa not loaded)");
	else if (err)
		snprintf(out, len, "- (efadv_query_device: %s)", strerror(err));
	else
		snprintf(out, len, "ok");
	if (efa)
		dlclose(efa);
}

static void describe_wide_wqe(column_t *col, const struct fi_info *i, unsigned maj, unsigned min)
{
	const char *dev = i->nic && i->nic->device_attr ? i->nic->device_attr->name : NULL;
	if (!i->fabric_attr->prov_name || strcmp(i->fabric_attr->prov_name, "efa") || !dev) {
		add(col, "wqe_128", "-");
		return;
	}
	char d[160];
	struct probe_efadv_attr a;
	memset(&a, 0, sizeof(a));
	with_device(dev, efadv_attr, &a, d, sizeof(d));
	int ok = !strcmp(d, "ok");
	if (!ok)
		add(col, "wqe_128", "%s", d);
	else if (!a.inline_buf_size_ex || a.inline_buf_size_ex <= a.inline_buf_size)
		add(col, "wqe_128",
		    "no (the device's inline_buf_size_ex %u is its inline_buf_size: 64-byte WQEs only)",
		    a.inline_buf_size_ex);
	else if (maj < 2 || (maj == 2 && min < 7))
		add(col, "wqe_128",
		    "device only (inline_buf_size_ex %u; libfabric %u.%u does not read it: inject size %u, "
		    "64-byte WQEs; 2.7 offers efa-direct up to %u B inline with 128-byte WQEs)",
		    a.inline_buf_size_ex, maj, min, a.inline_buf_size, a.inline_buf_size_ex);
	else if (strcmp(i->fabric_attr->name, "efa-direct"))
		add(col, "wqe_128",
		    "device only (inline_buf_size_ex %u; the %s fabric's QPs keep 64-byte WQEs: "
		    "max_inline_data is inline_buf_size, efa_base_ep.c; efa-direct's can have 128)",
		    a.inline_buf_size_ex, i->fabric_attr->name);
	else
		add(col, "wqe_128",
		    "yes (inline_buf_size_ex %u: efa-direct asked an inject size above %u B gets "
		    "128-byte WQEs, half the queue depth, inline RDMA writes)",
		    a.inline_buf_size_ex, a.inline_buf_size);
}

static void describe_comp_counters(column_t *col, const struct fi_info *i)
{
	const char *prov = i->fabric_attr->prov_name, *fab = i->fabric_attr->name;
	const char *dev = i->nic && i->nic->device_attr ? i->nic->device_attr->name : NULL;
	if (!prov || strcmp(prov, "efa") || !dev) {
		add(col, "comp_cntr_rdma_core", "-");
		add(col, "comp_cntr_device", "-");
		add(col, "comp_cntr_libfabric", "-");
		add(col, "wqe_128", "-");
		return;
	}
	void *efa = dlopen("libefa.so.1", RTLD_NOW | RTLD_NOLOAD);
	int rc_has = efa && dlsym(efa, "efadv_create_comp_cntr");
	if (efa)
		dlclose(efa);
	add(col, "comp_cntr_rdma_core", "%s",
	    rc_has ? "yes (efadv_create_comp_cntr)"
	    : efa  ? "no (libefa without efadv_create_comp_cntr: rdma-core <= 64.0)"
		   : "- (libefa not loaded)");
	char d[200];
	uint64_t dev_max;
	comp_cntr_device(dev, d, sizeof(d), &dev_max);
	add(col, "comp_cntr_device", "%s", d);

	/* libfabric's release: fi_version() is the API of its headers, which a
	 * snapshot may not have bumped yet (2.7.0a1 answers 2.6) */
	unsigned maj = 0, min = 0;
	Dl_info dl;
	int found = dladdr((void *)fi_getinfo, &dl) && dl.dli_fname;
	char rel[64] = "";
	if (found)
		libfabric_pc_version(dl.dli_fname, rel, sizeof(rel));
	if (!rel[0] || sscanf(rel, "%u.%u", &maj, &min) != 2) {
		maj = FI_MAJOR(fi_version());
		min = FI_MINOR(fi_version());
	}
	const char *env = getenv("FI_EFA_USE_HW_CNTR");
	int dflt = maj > 2 || (maj == 2 && min >= 7);
	int on = env ? atoi(env) != 0 : dflt;
	int built = found ? elf_imports(dl.dli_fname, "efadv_create_comp_cntr") : -1;
	if (strcmp(fab, "efa-direct"))
		add(col, "comp_cntr_libfabric",
		    "no (the %s fabric's fi_cntr is software: rdm/efa_rdm_cntr.c)", fab);
	else if (maj < 2 || (maj == 2 && min < 6))
		add(col, "comp_cntr_libfabric", "no (libfabric %u.%u: hardware counters from 2.6)",
		    maj, min);
	else if (built == 0)
		add(col, "comp_cntr_libfabric",
		    "no (libfabric %u.%u built without efadv_create_comp_cntr)", maj, min);
	else if (!on)
		add(col, "comp_cntr_libfabric", "no (FI_EFA_USE_HW_CNTR=0%s)",
		    env ? " in the environment" : ", the default before libfabric 2.7");
	else if (strncmp(d, "yes", 3))
		add(col, "comp_cntr_libfabric",
		    "no (FI_EFA_USE_HW_CNTR=1, but the device offers none: software fi_cntr)");
#if FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) >=                                              \
	FI_VERSION(2, 5) /* fi_domain_attr's max_cntr_value */
	else if (fi_version() >= FI_VERSION(2, 5) && i->domain_attr->max_cntr_value > dev_max)
		/* efa_hw_cntr_check_attr: the domain's max_cntr_value, the device's
		 * limit only for API >= 2.5 (efa_user_info_set_max_cntr_value) */
		add(col, "comp_cntr_libfabric",
		    "no (max_cntr_value %llu above the device's %llu: API < 2.5, software fi_cntr)",
		    (unsigned long long)i->domain_attr->max_cntr_value,
		    (unsigned long long)dev_max);
#endif
	else
		add(col, "comp_cntr_libfabric",
		    "yes (efa-direct's fi_cntr is a device counter: FI_EFA_USE_HW_CNTR=1%s)",
		    env ? " in the environment" : ", libfabric 2.7's default");
	describe_wide_wqe(col, i, maj, min);
}

/* The verdict: what efabench (and an application) can do here. */
static void describe_verdict(column_t *col, const struct fi_info *i, const struct fi_info *rma,
			     int nops, int need_mr_local, int hmem)
{
	int rma_ok = rma && (rma->caps & FI_READ) && (rma->caps & FI_WRITE);
	size_t n = (size_t)snprintf(col->verdict, sizeof(col->verdict), "%s: RMA %s, atomics %s",
				    i->fabric_attr->name, yesno(rma_ok), nops > 0 ? "yes" : "no");
	if (nops > 0)
		n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n, " (%d ops)",
				      nops);
	n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n, ", %s",
			      need_mr_local ? "every local buffer must be registered (FI_MR_LOCAL)"
					    : "unregistered local buffers accepted");
	n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n,
			      ", remote CQ data %s, GPU memory %s, %s progress",
			      yesno(i->domain_attr->cq_data_size >= 4), yesno(hmem),
			      efab_progress_name(efab_info_progress(i)));
	add(col, "verdict", "%s", col->verdict);
}

/* GPU peer-to-peer (GPUDirect RDMA) of an EFA NIC as the efa provider decided
 * it (efab_efa_p2p); "-" for other providers. */
static const char *gpu_p2p(const struct fi_info *i)
{
	if (!i->fabric_attr->prov_name || strcmp(i->fabric_attr->prov_name, "efa"))
		return "-";
	switch (efab_efa_p2p(i)) {
	case 1: return "yes (efa-direct offers FI_HMEM on this NIC)";
	case 0:
		return "no (efa-direct offers no FI_HMEM: efa bounces GPU memory, host<->CUDA RDMA refused)";
	default: return "unknown (no GPU memory on efa here, or no efa-direct: libfabric < 2.1)";
	}
}

/* What an EFA installer ships besides libfabric, all system-wide (an
 * LD_LIBRARY_PATH swap of libfabric keeps them): rdma-core (the libibverbs and
 * libefa this process loaded), the kernel driver and the device firmware.
 * --diff of two nodes' or installers' probes shows each. */
static void describe_stack(column_t *col, const struct fi_info *i)
{
	char v[64], files[2 * PATH_MAX + 8], drv[64], fw[96] = "";
	efab_rdma_core_version(v, sizeof(v), files, sizeof(files));
	add(col, "rdma_core", "%s", v[0] ? v : "- (no release in the libibverbs file name)");
	add(col, "rdma_core_libs", "%s", files);
	efab_efa_driver_version(drv, sizeof(drv));
	add(col, "efa_driver", "%s",
	    drv[0] ? drv : "- (no module/efa/version under SYSFS_PATH or /sys)");
	if (i->nic && i->nic->device_attr && i->nic->device_attr->firmware)
		snprintf(fw, sizeof(fw), "%s", i->nic->device_attr->firmware);
	else
		efab_ib_fw_ver(i->domain_attr->name, fw, sizeof(fw));
	add(col, "firmware", "%s", fw[0] ? fw : "-");
}

void probe_describe(column_t *col)
{
	struct fi_info *rma = query_caps(col->info, RMA_CAPS, 0);
	struct fi_info *atom = query_caps(col->info, FI_ATOMIC | FI_READ | FI_WRITE, 0);
	struct fi_info *hmem = query_caps(col->info, RMA_CAPS, 1);
	/* requirements as they stand when efabench asks for RMA */
	const struct fi_info *i = rma ? rma : col->info;
	uint32_t v = fi_version(), pv = i->fabric_attr->prov_version;

	add(col, "provider", "%s", i->fabric_attr->prov_name);
	add(col, "fabric", "%s", i->fabric_attr->name);
	add(col, "domain", "%s", i->domain_attr->name);
	add(col, "provider_version", "%u.%u", FI_MAJOR(pv), FI_MINOR(pv));
	add(col, "api_version", "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	/* the release as installed: a snapshot's API may lag it (2.7.0a1: 2.6) */
	char rel[64] = "";
	Dl_info dl;
	if (dladdr((void *)fi_getinfo, &dl) && dl.dli_fname)
		libfabric_pc_version(dl.dli_fname, rel, sizeof(rel));
	add(col, "libfabric_release", "%s",
	    rel[0] ? rel : "- (no pkgconfig/libfabric.pc beside libfabric.so)");
	add(col, "simulated", "%s",
	    efab_info_simulated(i) ? "yes (efasim: not EFA hardware)" : "no");
	describe_stack(col, i);
	int need_mr_local = describe_requirements(col, rma);
	add(col, "rma_read", "%s", yesno(rma && (rma->caps & FI_READ)));
	add(col, "rma_write", "%s", yesno(rma && (rma->caps & FI_WRITE)));
	if (i->domain_attr->cq_data_size)
		add(col, "remote_cq_data", "yes (%zu B)", i->domain_attr->cq_data_size);
	else
		add(col, "remote_cq_data", "no");
	add(col, "atomic", "%s", yesno(atom != NULL));
	add(col, "hmem", "%s", yesno(hmem != NULL));
	/* mr_mode as it stands when GPU memory is asked (efa adds FI_MR_HMEM then) */
	add(col, "hmem_mr_FI_MR_HMEM", "%s",
	    hmem ? yesno(hmem->domain_attr->mr_mode & FI_MR_HMEM) : "-");
	add(col, "gpu_p2p", "%s", gpu_p2p(i));
	add(col, "msg", "%s", yesno((col->info->caps | i->caps) & FI_MSG));
	add(col, "tagged", "%s", yesno((col->info->caps | i->caps) & FI_TAGGED));
	describe_limits(col, i);
	describe_comp_counters(col, i);
	int nops = probe_atomics(col, atom);
	describe_verdict(col, i, rma, nops, need_mr_local, hmem != NULL);
	fi_freeinfo(rma);
	fi_freeinfo(atom);
	fi_freeinfo(hmem);
}
