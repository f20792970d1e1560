/* efab_probe: the capability and requirements matrix of every RDM fabric on
 * this host, and (--live, under mpirun -np 2) what each operation really does
 * there, then the put matrix (probe_put.c: each case in child processes, so
 * a provider crash is a verdict). The static part needs no MPI: MPI is
 * initialised only for --live.
 *
 * Data first (a list of columns, each a list of property/value pairs), then
 * three writers: the table (120 columns, wrapped by fabric), CSV (long
 * format) and JSON. */
#define _GNU_SOURCE /* dladdr, Dl_info */
#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "efab_atomic.h"
#include "efab_endpoint.h"
#include "efab_json.h"
#include "efab_ops.h"
#include "efab_registration.h"
#include "efab_hwc.h"
#include "efab_select.h"
#include "probe_put.h"
#include "hostfacts.h"
#include "rows.h"
#include "runtime.h"

#define MAX_COLS 64
#define MAX_PROPS 80
#define LABEL_W 22
#define COL_W 24

typedef struct prop {
	char name[32];
	char value[1024];
} prop_t;

typedef struct column {
	struct fi_info *info; /* dup */
	prop_t props[MAX_PROPS];
	size_t nprops;
	char verdict[512];
} column_t;

static void add(column_t *c, const char *name, const char *fmt, ...) EFAB_PRINTF(3, 4);
static void add(column_t *c, const char *name, const char *fmt, ...)
{
	if (c->nprops >= MAX_PROPS)
		return;
	prop_t *p = &c->props[c->nprops++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->value, sizeof(p->value), fmt, ap);
	va_end(ap);
}

static const char *yesno(int b)
{
	return b ? "yes" : "no";
}

static const char *const aops[] = {"add", "fadd", "cswap", "swap", "min",
				   "max", "bor", "band", "bxor"};
static const int dtypes[] = {EFAB_DT_U64, EFAB_DT_U32, EFAB_DT_I64, EFAB_DT_I32, EFAB_DT_F64,
			     EFAB_DT_F32};

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
			if (efab_atomic_query(domain, kind, efab_fi_dtype(dtypes[d]), op, &count) == 0)
				len += (size_t)snprintf(v + len, sizeof(v) - len, "%s%s", len ? " " : "",
							efab_dtype_name(dtypes[d]));
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
	} mr_rows[] = {{FI_MR_LOCAL, "mr_FI_MR_LOCAL"},		{FI_MR_PROV_KEY, "mr_FI_MR_PROV_KEY"},
		       {FI_MR_VIRT_ADDR, "mr_FI_MR_VIRT_ADDR"}, {FI_MR_ALLOCATED, "mr_FI_MR_ALLOCATED"},
		       {FI_MR_ENDPOINT, "mr_FI_MR_ENDPOINT"},   {FI_MR_HMEM, "mr_FI_MR_HMEM"},
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
	static const int need[] = {EFAB_HWC_rdma_write_bytes, EFAB_HWC_rdma_read_bytes, EFAB_HWC_send_bytes};
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(need); k++)
		if (!(h.present & (1u << need[k])))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 missing[0] ? " " : "", efab_hwc_names[need[k]]);
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
			    !strncmp((const char *)m + str->sh_offset + sy[j].st_name, sym, str->sh_size - sy[j].st_name))
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
		snprintf(out, len, "no (rdma-core cannot ask: no ibv_query_comp_cntr_caps, rdma-core <= 64.0)");
	else if (err)
		snprintf(out, len, "no (ibv_query_comp_cntr_caps: %s)", strerror(err));
	else if (!c.max_counters)
		snprintf(out, len, "no (0 counters)");
	else {
		snprintf(out, len, "yes (%u counters, max value %llu, attach ops 0x%x)", c.max_counters,
			 (unsigned long long)c.max_value, c.supported_qp_attach_ops);
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
		add(col, "wqe_128", "no (the device's inline_buf_size_ex %u is its inline_buf_size: 64-byte WQEs only)",
		    a.inline_buf_size_ex);
	else if (maj < 2 || (maj == 2 && min < 7))
		add(col, "wqe_128", "device only (inline_buf_size_ex %u; libfabric %u.%u does not read it: inject size %u, "
		    "64-byte WQEs; 2.7 offers efa-direct up to %u B inline with 128-byte WQEs)",
		    a.inline_buf_size_ex, maj, min, a.inline_buf_size, a.inline_buf_size_ex);
	else if (strcmp(i->fabric_attr->name, "efa-direct"))
		add(col, "wqe_128", "device only (inline_buf_size_ex %u; the %s fabric's QPs keep 64-byte WQEs: "
		    "max_inline_data is inline_buf_size, efa_base_ep.c; efa-direct's can have 128)",
		    a.inline_buf_size_ex, i->fabric_attr->name);
	else
		add(col, "wqe_128", "yes (inline_buf_size_ex %u: efa-direct asked an inject size above %u B gets "
		    "128-byte WQEs, half the queue depth, inline RDMA writes)", a.inline_buf_size_ex,
		    a.inline_buf_size);
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
		   : efa ? "no (libefa without efadv_create_comp_cntr: rdma-core <= 64.0)" : "- (libefa not loaded)");
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
		add(col, "comp_cntr_libfabric", "no (the %s fabric's fi_cntr is software: rdm/efa_rdm_cntr.c)", fab);
	else if (maj < 2 || (maj == 2 && min < 6))
		add(col, "comp_cntr_libfabric", "no (libfabric %u.%u: hardware counters from 2.6)", maj, min);
	else if (built == 0)
		add(col, "comp_cntr_libfabric", "no (libfabric %u.%u built without efadv_create_comp_cntr)", maj, min);
	else if (!on)
		add(col, "comp_cntr_libfabric", "no (FI_EFA_USE_HW_CNTR=0%s)",
		    env ? " in the environment" : ", the default before libfabric 2.7");
	else if (strncmp(d, "yes", 3))
		add(col, "comp_cntr_libfabric", "no (FI_EFA_USE_HW_CNTR=1, but the device offers none: software fi_cntr)");
#if FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) >= FI_VERSION(2, 5) /* fi_domain_attr's max_cntr_value */
	else if (fi_version() >= FI_VERSION(2, 5) && i->domain_attr->max_cntr_value > dev_max)
		/* efa_hw_cntr_check_attr: the domain's max_cntr_value, the device's
		 * limit only for API >= 2.5 (efa_user_info_set_max_cntr_value) */
		add(col, "comp_cntr_libfabric", "no (max_cntr_value %llu above the device's %llu: API < 2.5, software fi_cntr)",
		    (unsigned long long)i->domain_attr->max_cntr_value, (unsigned long long)dev_max);
#endif
	else
		add(col, "comp_cntr_libfabric", "yes (efa-direct's fi_cntr is a device counter: FI_EFA_USE_HW_CNTR=1%s)",
		    env ? " in the environment" : ", libfabric 2.7's default");
	describe_wide_wqe(col, i, maj, min);
}

/* The verdict: what efabench (and an application) can do here. */
static void describe_verdict(column_t *col, const struct fi_info *i, const struct fi_info *rma,
			     int nops, int need_mr_local, int hmem)
{
	int rma_ok = rma && (rma->caps & FI_READ) && (rma->caps & FI_WRITE);
	size_t n = (size_t)snprintf(col->verdict, sizeof(col->verdict), "%s: RMA %s, atomics %s",
				    i->fabric_attr->name, yesno(rma_ok),
				    nops > 0 ? "yes" : "no");
	if (nops > 0)
		n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n, " (%d ops)", nops);
	n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n, ", %s",
			      need_mr_local
				      ? "every local buffer must be registered (FI_MR_LOCAL)"
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
	case 1:
		return "yes (efa-direct offers FI_HMEM on this NIC)";
	case 0:
		return "no (efa-direct offers no FI_HMEM: efa bounces GPU memory, host<->CUDA RDMA refused)";
	default:
		return "unknown (no GPU memory on efa here, or no efa-direct: libfabric < 2.1)";
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
	add(col, "efa_driver", "%s", drv[0] ? drv : "- (no module/efa/version under SYSFS_PATH or /sys)");
	if (i->nic && i->nic->device_attr && i->nic->device_attr->firmware)
		snprintf(fw, sizeof(fw), "%s", i->nic->device_attr->firmware);
	else
		efab_ib_fw_ver(i->domain_attr->name, fw, sizeof(fw));
	add(col, "firmware", "%s", fw[0] ? fw : "-");
}

static void describe(column_t *col)
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
	add(col, "libfabric_release", "%s", rel[0] ? rel : "- (no pkgconfig/libfabric.pc beside libfabric.so)");
	add(col, "simulated", "%s", efab_info_simulated(i) ? "yes (efasim: not EFA hardware)" : "no");
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
	add(col, "hmem_mr_FI_MR_HMEM", "%s", hmem ? yesno(hmem->domain_attr->mr_mode & FI_MR_HMEM) : "-");
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

/* ---- --live ---- */

enum { LIVE_PUT, LIVE_PUT_UNREG, LIVE_WRITEDATA, LIVE_READ, LIVE_ATOMIC, LIVE_N };
static const char *const live_names[] = {"live_put_registered", "live_put_unregistered",
					 "live_writedata", "live_read", "live_atomic_fadd_u64"};

/* One live test's state, shared by its steps and its teardown. stage counts
 * the steps passed: 1 fabric open, 2 memory registered, 3 keys exchanged,
 * 4 the operation ran. */
typedef struct live {
	efab_rt_t *rt;
	const struct fi_info *col;
	int which;
	int stage;
	double ok, all_ok; /* this rank's verdict, and every rank's */
	efab_fabric_t fab;
	efab_mr_t mr;
	efab_rkey_t rk[2];
	uint64_t *buf;
	efab_waitfor_t w;
	char err[400];     /* what the library logged (efab_log_capture) */
	char skipped[200]; /* why the test was not run */
	char refused[400]; /* rank 0's refused post, in its own words */
} live_t;

/* Every rank's verdict on a collective step: whether all may go on. */
static int live_agree(live_t *lv, int rc)
{
	lv->ok = rc == 0;
	lv->rt->allreduce(lv->rt, &lv->ok, &lv->all_ok, 1, EFAB_RT_MIN);
	return lv->all_ok != 0;
}

static int live_open(live_t *lv, double timeout)
{
	const struct fi_info *col = lv->col;
	efab_fabric_req_t req = {
		.provider = col->fabric_attr->prov_name,
		.fabric = col->fabric_attr->name,
		.domain = col->domain_attr->name,
		.caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
		.cq_data = lv->which == LIVE_WRITEDATA,
	};
	if (lv->which == LIVE_ATOMIC)
		req.caps = FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	struct fi_info *info = NULL;
	int rc;
	/* The unregistered put asks without FI_MR_LOCAL, as an application with an
	 * unregistered buffer would; a fabric that requires it (efa-direct) drops
	 * out, and then the put runs with it in force, to record what the provider
	 * says to a missing descriptor. */
	if (lv->which == LIVE_PUT_UNREG) {
		req.mr_mode_off = FI_MR_LOCAL;
		rc = efab_fabric_select(&req, &info);
		if (rc == EFAB_SKIP) {
			req.mr_mode_off = 0;
			lv->err[0] = '\0';
			rc = efab_fabric_select(&req, &info);
		}
	} else {
		rc = efab_fabric_select(&req, &info);
	}
	if (rc) {
		fi_freeinfo(info);
		return rc;
	}
	lv->stage = 1;
	return efab_fabric_open(info, lv->rt, timeout, &lv->fab);
}

static int live_register(live_t *lv)
{
	lv->buf = aligned_alloc(4096, 4096);
	memset(lv->buf, 0, 4096);
	/* layout: [0,64) source, [64,128) destination, [128,136) atomic word, [256,264) result.
	 * The sources are filled before the key exchange (collective): rank 0's read of
	 * rank 1's [0,64) may land as soon as it has the key (before, a read could find
	 * zeros: "the data read differ", seen on efasim 2.6.0's efa-direct). */
	for (int k = 0; k < 64; k++)
		((uint8_t *)lv->buf)[k] = (uint8_t)(lv->rt->rank == 1 ? 0xa0 + k : 0x10 + k);
	return efab_mr_register(&lv->fab, lv->buf, 4096, FI_HMEM_SYSTEM, 0,
				FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, &lv->mr);
}

/* libfabric < 2.4's efa-direct dereferences a NULL descriptor (an assert
 * compiled out in release builds, efa_rma.c) instead of refusing it. */
static int live_unsafe(live_t *lv)
{
	if (lv->which != LIVE_PUT_UNREG || !efab_prov_matches("efa", lv->col->fabric_attr->prov_name) ||
	    !(lv->fab.info->domain_attr->mr_mode & FI_MR_LOCAL) || fi_version() >= FI_VERSION(2, 4))
		return 0;
	snprintf(lv->skipped, sizeof(lv->skipped),
		 "skipped: libfabric %u.%u's efa provider dereferences the NULL "
		 "descriptor of an unregistered source under FI_MR_LOCAL (checked from 2.4 on)",
		 FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	return 1;
}

static int live_post_op(live_t *lv)
{
	uint8_t *b = (uint8_t *)lv->buf;
	efab_rkey_t *peer = &lv->rk[1];
	switch (lv->which) {
	case LIVE_PUT:
	case LIVE_PUT_UNREG:
	case LIVE_WRITEDATA:
		return efab_post_write(&lv->fab, 1, b, 64, lv->which == LIVE_PUT_UNREG ? NULL : lv->mr.desc,
				       peer->base + 64, peer->key, 7,
				       lv->which == LIVE_WRITEDATA ? FI_REMOTE_CQ_DATA : 0, &lv->w);
	case LIVE_READ:
		return efab_post_read(&lv->fab, 1, b + 64, 64, lv->mr.desc, peer->base, peer->key, &lv->w);
	default: {
		uint64_t one = 1;
		memcpy(b, &one, 8);
		return efab_post_atomic(&lv->fab, 1, EFAB_ATOMIC_FETCH, b, 1, lv->mr.desc, NULL, NULL,
					b + 256, lv->mr.desc, peer->base + 128, peer->key, FI_UINT64,
					FI_SUM, &lv->w);
	}
	}
}

/* Rank 0: post, and wait for its completion. */
static int live_initiate(live_t *lv)
{
	/* the provider's own words for a refused post (warn level) */
	efab_provider_log_capture(1, "FI_MR_LOCAL", NULL, 0);
	int rc = live_post_op(lv);
	char said[400];
	efab_provider_log_capture(0, NULL, said, sizeof(said));
	if (rc) { /* the post's own words: what follows (the peer's wait) must not replace them */
		snprintf(lv->refused, sizeof(lv->refused), "%s%s%s", lv->err,
			 said[0] ? " | provider: " : "", said);
		return rc;
	}
	return efab_wait_tx(&lv->fab, lv->fab.tx_posted, &lv->w);
}

/* Rank 1 waits for the data itself: a local completion at the initiator may
 * only mean "sent" (tcp), not "placed". */
static int live_await(live_t *lv)
{
	uint8_t *b = (uint8_t *)lv->buf;
	if (lv->which == LIVE_PUT || lv->which == LIVE_PUT_UNREG) {
		lv->w.what = "the written data";
		return efab_wait_byte(&lv->fab, b + 64 + 63, (uint8_t)(0x10 + 63), &lv->w);
	}
	if (lv->which == LIVE_WRITEDATA) {
		lv->w.what = "the remote CQ data";
		return efab_wait_rxdata(&lv->fab, 1, &lv->w);
	}
	return 0;
}

/* Whether the 64 bytes at p count up from first. */
static int counts_up(const uint8_t *p, uint8_t first)
{
	for (int k = 0; k < 64; k++)
		if (p[k] != (uint8_t)(first + k))
			return 0;
	return 1;
}

/* The data where it landed; on a mismatch, err says what differs. */
static int live_data_ok(live_t *lv)
{
	const uint8_t *b = (const uint8_t *)lv->buf;
	int rank = lv->rt->rank, which = lv->which;
	if (rank == 1 && which <= LIVE_WRITEDATA && !counts_up(b + 64, 0x10)) {
		snprintf(lv->err, sizeof(lv->err), "completed, but the data at the target differ");
		return 0;
	}
	if (rank == 1 && which == LIVE_WRITEDATA && lv->fab.rx_data_count != 1) {
		snprintf(lv->err, sizeof(lv->err), "completed, but no remote CQ data arrived");
		return 0;
	}
	if (rank == 0 && which == LIVE_READ && !counts_up(b + 64, 0xa0)) {
		snprintf(lv->err, sizeof(lv->err), "completed, but the data read differ");
		return 0;
	}
	if (rank == 1 && which == LIVE_ATOMIC && lv->buf[16] != 1) {
		snprintf(lv->err, sizeof(lv->err), "completed, but the target word is %llu, not 1",
			 (unsigned long long)lv->buf[16]);
		return 0;
	}
	return 1;
}

/* The operation from rank 0 to rank 1, then both ranks' verdict. */
static void live_run(live_t *lv)
{
	if (lv->rt->rank == 0)
		lv->ok = live_initiate(lv) == 0;
	if (lv->rt->rank == 1 && live_await(lv))
		lv->ok = 0;
	lv->w.what = "the other rank";
	if (efab_barrier_progress(&lv->fab, &lv->w))
		lv->ok = 0;
	if (lv->ok && !live_data_ok(lv))
		lv->ok = 0;
	lv->rt->allreduce(lv->rt, &lv->ok, &lv->all_ok, 1, EFAB_RT_MIN);
}

/* Rank 0 reports; if only rank 1 saw the failure, its words travel. */
static void live_result(live_t *lv, char *result, size_t rlen)
{
	struct {
		double ok; /* this rank's own verdict */
		char err[400];
	} mine, both[2];
	mine.ok = lv->ok;
	snprintf(mine.err, sizeof(mine.err), "%s", lv->err[0] ? lv->err : "failed without a message");
	lv->rt->allgather(lv->rt, &mine, both, sizeof(mine));
	if (lv->skipped[0])
		snprintf(result, rlen, "%s", lv->skipped);
	else if (lv->refused[0]) /* rank 0's post was refused: rank 1 only timed out waiting for it */
		snprintf(result, rlen, "%s", lv->refused);
	else if (both[0].ok && both[1].ok && (lv->stage < 4 || lv->all_ok))
		snprintf(result, rlen, lv->stage == 4 ? "OK" : "failed during setup");
	else if (!both[0].ok)
		snprintf(result, rlen, "%s", both[0].err);
	else
		snprintf(result, rlen, "rank 1: %s", both[1].err);
}

static void live_close(live_t *lv)
{
	if (lv->stage >= 3)
		efab_rkeys_release(&lv->fab, lv->rk, 2);
	efab_mr_dereg(&lv->mr);
	if (lv->fab.ep)
		efab_fabric_close(&lv->fab);
	free(lv->buf);
}

/* One operation from rank 0 to rank 1 on a fresh endpoint; the result is
 * "OK" or the first error, word for word. Every rank reaches the same
 * verdict before the next step, so a failure never leaves a rank waiting. */
static void live_one(efab_rt_t *rt, const struct fi_info *col, int which, double timeout,
		     char *result, size_t rlen)
{
	live_t lv;
	memset(&lv, 0, sizeof(lv));
	lv.rt = rt;
	lv.col = col;
	lv.which = which;
	lv.ok = 1;
	lv.w = (efab_waitfor_t){"live test completion", live_names[which], 64, 1, 0};
	efab_log_capture(lv.err, sizeof(lv.err));
	/* collective steps only while every rank is still fine */
	int go_on = live_agree(&lv, live_open(&lv, timeout));
	if (go_on) {
		lv.stage = 2;
		go_on = live_agree(&lv, live_register(&lv)) && !efab_mr_exchange(&lv.fab, &lv.mr, lv.rk);
	}
	if (go_on) {
		lv.stage = 3;
		go_on = !live_unsafe(&lv);
	}
	if (go_on) {
		live_run(&lv);
		lv.stage = 4;
	}
	efab_log_capture(NULL, 0);
	live_result(&lv, result, rlen);
	live_close(&lv);
}

/* ---- writers ---- */

static const char *col_prop(const column_t *c, const char *name)
{
	for (size_t p = 0; p < c->nprops; p++)
		if (!strcmp(c->props[p].name, name))
			return c->props[p].value;
	return NULL;
}

/* --live's put matrix (probe_put.c), one block per column that ran it. */
static void print_put_matrix(const column_t *cols, size_t n)
{
	int any = 0;
	for (size_t c = 0; c < n; c++) {
		const struct fi_info *i = cols[c].info;
		const char *first = col_prop(&cols[c], PROBE_PUT_FIRST_MRLOCAL);
		const char *first_no = col_prop(&cols[c], PROBE_PUT_FIRST_NOMRLOCAL);
		if (!first || !first_no)
			continue;
		if (!any++)
			printf("\nlive put matrix: a %d B fi_write from rank 0's source (registered, or not: "
			       "desc = NULL) into rank 1's\nregistered buffer of the same memory kind, every "
			       "byte checked at rank 1; hints name the provider,\nfabric and domain, with or "
			       "without FI_MR_LOCAL; each case in its own pair of processes (a crash\nor a "
			       "hang is its verdict). Value: the fabric fi_getinfo returned (FI_MR_LOCAL: in "
			       "force), the outcome.\n", PROBE_PUT_BYTES);
		printf("\n%s/%s/%s (hints naming no fabric get: with FI_MR_LOCAL %s, without %s)\n",
		       i->fabric_attr->prov_name, i->fabric_attr->name, i->domain_attr->name, first,
		       first_no);
		printf("  %-5s %-12s %-13s %s\n", "mem", "FI_MR_LOCAL", "source", "fabric: outcome");
		for (size_t k = 0; k < probe_put_nrows; k++) {
			const probe_put_row_t *r = &probe_put_rows[k];
			const char *v = col_prop(&cols[c], r->name);
			printf("  %-5s %-12s %-13s %s\n", efab_mem_name(r->mem),
			       r->mr_local ? "in hints" : "not in hints",
			       r->registered ? "registered" : "unregistered", v ? v : "-");
		}
	}
}

static void print_table(column_t *cols, size_t n)
{
	size_t per = (120 - LABEL_W) / COL_W;
	for (size_t start = 0; start < n; start += per) {
		size_t end = start + per < n ? start + per : n;
		for (size_t p = 0; p < cols[start].nprops; p++) {
			const char *name = cols[start].props[p].name;
			if (!strcmp(name, "verdict") || probe_put_is_row(name))
				continue; /* the put matrix has a section of its own */
			printf("%-*s", LABEL_W, name);
			for (size_t c = start; c < end; c++) {
				const char *v = p < cols[c].nprops ? cols[c].props[p].value : "";
				if (!strncmp(name, "live_", 5) && strcmp(v, "OK"))
					v = "FAILED (below)";
				if (!strcmp(name, "hw_counter_names") && strcmp(v, "-"))
					v = "(below)";
				printf(" %-*.*s", COL_W - 1, COL_W - 1, v);
			}
			printf("\n");
		}
		printf("\n");
	}
	for (size_t c = 0; c < n; c++)
		printf("verdict (provider %s, domain %s) %s\n", cols[c].info->fabric_attr->prov_name,
		       cols[c].info->domain_attr->name, cols[c].verdict);
	/* each NIC's counters once (its fabrics share them) */
	for (size_t c = 0; c < n; c++) {
		const char *dev = cols[c].info->nic && cols[c].info->nic->device_attr
					  ? cols[c].info->nic->device_attr->name : NULL;
		int seen = 0;
		for (size_t q = 0; q < c && dev && !seen; q++)
			seen = cols[q].info->nic && cols[q].info->nic->device_attr &&
			       cols[q].info->nic->device_attr->name &&
			       !strcmp(cols[q].info->nic->device_attr->name, dev);
		for (size_t p = 0; dev && !seen && p < cols[c].nprops; p++)
			if (!strcmp(cols[c].props[p].name, "hw_counters") && strcmp(cols[c].props[p].value, "-"))
				printf("hw_counters of %s: %s\n", dev, cols[c].props[p].value);
		for (size_t p = 0; dev && !seen && p < cols[c].nprops; p++)
			if (!strcmp(cols[c].props[p].name, "hw_counter_names") &&
			    strcmp(cols[c].props[p].value, "-"))
				printf("hw_counter_names of %s: %s\n", dev, cols[c].props[p].value);
	}
	for (size_t c = 0; c < n; c++)
		for (size_t p = 0; p < cols[c].nprops; p++)
			if (!strncmp(cols[c].props[p].name, "live_", 5) &&
			    !probe_put_is_row(cols[c].props[p].name) && strcmp(cols[c].props[p].value, "OK"))
				printf("%s %s/%s: %s\n", cols[c].props[p].name,
				       cols[c].info->fabric_attr->prov_name,
				       cols[c].info->fabric_attr->name, cols[c].props[p].value);
	print_put_matrix(cols, n);
}

static void print_json(FILE *f, column_t *cols, size_t n)
{
	fprintf(f, "{\"efabench\": \"%s\", \"host\": {", EFAB_VERSION);
	efab_host_facts_json(f, "", ", "); /* the node it ran on (efab_sweep's meta.json) */
	fprintf(f, "}, \"fabrics\": [");
	for (size_t c = 0; c < n; c++) {
		fprintf(f, "%s\n  {", c ? "," : "");
		for (size_t p = 0; p < cols[c].nprops; p++)
			efab_json_kv(f, p ? ", " : "", cols[c].props[p].name, cols[c].props[p].value);
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
}

static int write_csv(const char *path, column_t *cols, size_t n)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		efab_log_error("cannot open CSV file '%s': %m", path);
		return EFAB_EUSAGE;
	}
	fprintf(f, "provider,fabric,domain,property,value\n");
	for (size_t c = 0; c < n; c++)
		for (size_t p = 0; p < cols[c].nprops; p++) {
			const struct fi_info *i = cols[c].info;
			const char *fields[] = {i->fabric_attr->prov_name, i->fabric_attr->name,
						i->domain_attr->name, cols[c].props[p].name,
						cols[c].props[p].value};
			for (size_t k = 0; k < 5; k++) {
				const char *s = fields[k];
				if (strpbrk(s, ",\"\n")) {
					fputc('"', f);
					for (; *s; s++) {
						if (*s == '"')
							fputc('"', f);
						fputc(*s, f);
					}
					fputc('"', f);
				} else {
					fputs(s, f);
				}
				fputc(k < 4 ? ',' : '\n', f);
			}
		}
	if (fclose(f)) {
		efab_log_error("cannot write CSV file '%s'", path);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

/* ---- --diff: two probe outputs compared (no MPI, no libfabric calls) ----
 *
 * efab_probe --diff A B [--json]: A and B are --json outputs or --csv long
 * format files, told apart by their content. Columns are matched by
 * provider/fabric/domain; a column left over is matched to the column at the
 * same position among the other side's columns of its provider/fabric when
 * the two domains differ only in the NIC name (another node's rdmap names),
 * and the output says so. Every property is compared except those in diff_ignored[];
 * atomic_<op> rows are compared as sets of datatypes. Exit 0 identical, 1
 * different, 2 bad input (one line: the file and what is wrong). This is the
 * one definition of a capability difference: efab_plot runs it. */

#define DIFF_MAX_BYTES (64u << 20)
#define DIFF_MAX_COLS 4096
#define DIFF_MAX_PROPS 1024

/* Not compared: the verdict is a sentence made of rows that are compared
 * (fabric, rma_*, atomic_*, mr_FI_MR_LOCAL, remote_cq_data, hmem, progress),
 * and its wording may change between efabench versions. */
static const char *const diff_ignored[] = {"verdict"};

static const char diff_usage[] =
	"Usage: efab_probe --diff A B [--json]\n"
	"Compare two efab_probe outputs (--json output or --csv long format, told apart by their\n"
	"content), e.g. before and after an EFA installer upgrade, or two nodes. Columns are\n"
	"matched by provider/fabric/domain; where the domain names differ only in the NIC name\n"
	"(two nodes with different rdmap names) by position within the provider/fabric, and the\n"
	"output says so. One line per change: column, property, A value -> B value; fabrics that\n"
	"vanished or appeared; for atomic_<op> rows the datatypes that appeared or vanished.\n"
	"Not compared: the verdict (made of the rows that are). No MPI, no libfabric calls.\n"
	"  --json    print the differences as JSON\n"
	"Exit status: 0 identical, 1 something differs, 2 bad usage or an unreadable file.\n";

typedef struct dbuf {
	char *s;
	size_t n, cap;
} dbuf_t;

static int dbuf_add(dbuf_t *b, const char *p, size_t k)
{
	if (b->n + k + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		while (cap < b->n + k + 1)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return -1;
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->n, p, k);
	b->n += k;
	b->s[b->n] = '\0';
	return 0;
}

/* Hands the string over (never NULL on success: "" for an empty buffer). */
static char *dbuf_take(dbuf_t *b)
{
	char *s = b->s ? b->s : strdup("");
	b->s = NULL;
	b->n = b->cap = 0;
	return s;
}

typedef struct dprop {
	char *name, *value;
} dprop_t;

typedef struct dcol {
	char *key[3]; /* provider, fabric, domain */
	dprop_t *p;
	size_t n, cap;
	long peer;	 /* the matched column on the other side, -1 none */
	int by_position; /* matched by position: the domains differ in the NIC name only */
} dcol_t;

typedef struct dside {
	const char *path;
	const char *format; /* "JSON" or "CSV" */
	dcol_t *c;
	size_t n, cap;
	char err[700];
} dside_t;

static int diff_fail(dside_t *s, long line, const char *fmt, ...) EFAB_PRINTF(3, 4);
static int diff_fail(dside_t *s, long line, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(s->err, sizeof(s->err), "%s:%ld: %s", s->path, line, what);
	else
		snprintf(s->err, sizeof(s->err), "%s: %s", s->path, what);
	return -1;
}

static void dside_free(dside_t *s)
{
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->c[i].n; k++) {
			free(s->c[i].p[k].name);
			free(s->c[i].p[k].value);
		}
		free(s->c[i].p);
		for (int k = 0; k < 3; k++)
			free(s->c[i].key[k]);
	}
	free(s->c);
	s->c = NULL;
	s->n = s->cap = 0;
}

static dcol_t *col_new(dside_t *s)
{
	if (s->n >= DIFF_MAX_COLS) {
		diff_fail(s, 0, "more than %d columns: not an efab_probe output", DIFF_MAX_COLS);
		return NULL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		dcol_t *c = realloc(s->c, cap * sizeof(*c));
		if (!c) {
			diff_fail(s, 0, "out of memory");
			return NULL;
		}
		s->c = c;
		s->cap = cap;
	}
	dcol_t *c = &s->c[s->n++];
	memset(c, 0, sizeof(*c));
	c->peer = -1;
	return c;
}

static const char *col_get(const dcol_t *c, const char *name)
{
	for (size_t k = 0; k < c->n; k++)
		if (!strcmp(c->p[k].name, name))
			return c->p[k].value;
	return NULL;
}

/* Takes name and value (freed on failure). 1: the property is there already
 * (the caller says where), -1: other failure (s->err set). */
static int col_put(dside_t *s, dcol_t *c, char *name, char *value)
{
	int rc = 0;
	if (col_get(c, name)) {
		rc = 1;
	} else if (c->n >= DIFF_MAX_PROPS) {
		rc = diff_fail(s, 0, "a column with more than %d properties: not an efab_probe output",
			       DIFF_MAX_PROPS);
	} else if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		dprop_t *p = realloc(c->p, cap * sizeof(*p));
		if (!p) {
			rc = diff_fail(s, 0, "out of memory");
		} else {
			c->p = p;
			c->cap = cap;
		}
	}
	if (rc) {
		free(name);
		free(value);
		return rc;
	}
	c->p[c->n].name = name;
	c->p[c->n].value = value;
	c->n++;
	return 0;
}

static char *col_key(const dcol_t *c)
{
	static char buf[2][600];
	static int k;
	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s/%s", c->key[0], c->key[1], c->key[2]);
	return buf[k];
}

/* -- JSON (what print_json writes, or any JSON of that shape) -- */

typedef struct jcur {
	const char *s, *end;
	long line; /* raw newlines only occur between tokens */
	dside_t *side;
} jcur_t;

static int jpeek(jcur_t *j)
{
	while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r'))
		j->line += *j->s++ == '\n';
	return j->s < j->end ? (unsigned char)*j->s : -1;
}

static int jfail(jcur_t *j, const char *what)
{
	if (jpeek(j) < 0)
		return diff_fail(j->side, j->line, "not valid JSON: the file ends early (truncated?)");
	return diff_fail(j->side, j->line, "not valid JSON: %s", what);
}

static int jexpect(jcur_t *j, char ch, const char *what)
{
	if (jpeek(j) != ch)
		return jfail(j, what);
	j->s++;
	return 0;
}

/* After a member or an element: 0 past a ',' (another follows), 1 past
 * close (the object or array ends), -1 with what as the error otherwise. */
static int jnext(jcur_t *j, int close, const char *what)
{
	int ch = jpeek(j);
	if (ch != ',' && ch != close)
		return jfail(j, what);
	j->s++;
	return ch == close;
}

static int hex4(const char *p, unsigned *out)
{
	*out = 0;
	for (int k = 0; k < 4; k++) {
		int c = (unsigned char)p[k], d = isdigit(c) ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		*out = *out * 16 + (unsigned)d;
	}
	return 0;
}

/* Code point u as UTF-8 into enc (4 bytes of room); returns its length. */
static size_t utf8_encode(unsigned u, char *enc)
{
	if (u < 0x80) {
		enc[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		enc[0] = (char)(0xc0 | u >> 6);
		enc[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		enc[0] = (char)(0xe0 | u >> 12);
		enc[1] = (char)(0x80 | (u >> 6 & 0x3f));
		enc[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	enc[0] = (char)(0xf0 | u >> 18);
	enc[1] = (char)(0x80 | (u >> 12 & 0x3f));
	enc[2] = (char)(0x80 | (u >> 6 & 0x3f));
	enc[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/* The code point of a \u escape (j->s past the 'u'), a surrogate pair
 * joined; NULL, or what is wrong with it. */
static const char *junicode(jcur_t *j, unsigned *u)
{
	unsigned lo;
	if (j->end - j->s < 4 || hex4(j->s, u))
		return "bad \\u escape";
	j->s += 4;
	if (*u >= 0xd800 && *u < 0xdc00) {
		if (j->end - j->s < 6 || j->s[0] != '\\' || j->s[1] != 'u' || hex4(j->s + 2, &lo) ||
		    lo < 0xdc00 || lo > 0xdfff)
			return "unpaired surrogate in a \\u escape";
		j->s += 6;
		*u = 0x10000 + ((*u - 0xd800) << 10) + (lo - 0xdc00);
	} else if (*u >= 0xdc00 && *u < 0xe000) {
		return "unpaired surrogate in a \\u escape";
	} else if (*u == 0) {
		return "\\u0000 inside a string";
	}
	return NULL;
}

/* The escape after a backslash (j->s at its letter), decoded into enc and
 * its length into *k; NULL, or what is wrong with it. */
static const char *jescape(jcur_t *j, char *enc, size_t *k)
{
	static const char letters[] = "\"\\/bfnrt", chars[] = "\"\\/\b\f\n\r\t";
	if (j->s >= j->end)
		return "unterminated string";
	char e = *j->s++;
	const char *hit = e ? strchr(letters, e) : NULL;
	if (hit) {
		enc[0] = chars[hit - letters];
		*k = 1;
		return NULL;
	}
	if (e != 'u')
		return "unknown escape in a string";
	unsigned u;
	const char *bad = junicode(j, &u);
	if (!bad)
		*k = utf8_encode(u, enc);
	return bad;
}

/* A string, decoded to UTF-8 into *out (malloc'd) unless out is NULL. */
static int jstring(jcur_t *j, char **out)
{
	dbuf_t b = {0};
	const char *bad = NULL;
	if (jpeek(j) != '"')
		return jfail(j, "expected a string");
	j->s++;
	for (;;) {
		if (j->s >= j->end) {
			bad = "unterminated string";
			break;
		}
		unsigned char ch = (unsigned char)*j->s++;
		char enc[4];
		size_t k = 0;
		if (ch == '"')
			break;
		if (ch < 0x20) {
			bad = "control character inside a string";
			break;
		}
		if (ch != '\\')
			enc[k++] = (char)ch;
		else if ((bad = jescape(j, enc, &k)))
			break;
		if (out && dbuf_add(&b, enc, k)) {
			free(b.s);
			return diff_fail(j->side, 0, "out of memory");
		}
	}
	if (bad) {
		free(b.s);
		return jfail(j, bad);
	}
	if (out && !(*out = dbuf_take(&b)))
		return diff_fail(j->side, 0, "out of memory");
	return 0;
}

/* An object key and its ':', the key into *out (malloc'd) unless out is NULL. */
static int jkey(jcur_t *j, char **out)
{
	if (jstring(j, out))
		return -1;
	if (jexpect(j, ':', "expected ':' after an object key")) {
		if (out) {
			free(*out);
			*out = NULL;
		}
		return -1;
	}
	return 0;
}

static int jnumber(jcur_t *j, char **out)
{
	const char *p = j->s;
	if (p < j->end && *p == '-')
		p++;
	if (p >= j->end || !isdigit((unsigned char)*p))
		return jfail(j, "bad number");
	while (p < j->end && (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
			      *p == '+' || *p == '-'))
		p++;
	if (out && !(*out = strndup(j->s, (size_t)(p - j->s))))
		return diff_fail(j->side, 0, "out of memory");
	j->s = p;
	return 0;
}

static int jskip(jcur_t *j, int depth)
{
	int ch = jpeek(j);
	if (depth > 64)
		return jfail(j, "nested too deeply");
	if (ch == '"')
		return jstring(j, NULL);
	if (ch == '{' || ch == '[') {
		int close = ch == '{' ? '}' : ']';
		j->s++;
		if (jpeek(j) == close) {
			j->s++;
			return 0;
		}
		int end = 0;
		while (!end) {
			if ((ch == '{' && jkey(j, NULL)) || jskip(j, depth + 1))
				return -1;
			end = jnext(j, close, ch == '{' ? "expected ',' or '}' in an object"
						     : "expected ',' or ']' in an array");
		}
		return end < 0 ? -1 : 0;
	}
	if (ch == '-' || (ch >= '0' && ch <= '9'))
		return jnumber(j, NULL);
	static const char *const lit[] = {"true", "false", "null"};
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(lit); k++) {
		size_t l = strlen(lit[k]);
		if ((size_t)(j->end - j->s) >= l && !memcmp(j->s, lit[k], l)) {
			j->s += l;
			return 0;
		}
	}
	return jfail(j, ch < 0 ? "unexpected end of file" : "expected a value");
}

static const char *const diff_keys[3] = {"provider", "fabric", "domain"};

/* One entry of "fabrics": an object of property -> string. */
static int json_fabric(jcur_t *j, size_t idx)
{
	long line = (jpeek(j), j->line);
	if (jpeek(j) != '{')
		return jpeek(j) < 0 ? jfail(j, "")
				    : diff_fail(j->side, line, "entry %zu of \"fabrics\" is not an object", idx);
	j->s++;
	dcol_t *c = col_new(j->side);
	if (!c)
		return -1;
	if (jpeek(j) == '}') {
		j->s++;
	} else {
		int end = 0;
		while (!end) {
			char *name = NULL, *value = NULL;
			if (jkey(j, &name))
				return -1;
			int ch = jpeek(j), rc;
			if (ch == '"')
				rc = jstring(j, &value);
			else if (ch == '-' || (ch >= '0' && ch <= '9'))
				rc = jnumber(j, &value);
			else if (ch < 0)
				rc = jfail(j, "");
			else
				rc = diff_fail(j->side, j->line,
					       "entry %zu of \"fabrics\": the value of \"%s\" is not a string",
					       idx, name);
			if (rc) {
				free(name);
				return -1;
			}
			char dup[64];
			snprintf(dup, sizeof(dup), "%s", name);
			rc = col_put(j->side, c, name, value);
			if (rc > 0)
				return diff_fail(j->side, j->line,
						 "entry %zu of \"fabrics\" has \"%s\" twice", idx, dup);
			if (rc)
				return -1;
			end = jnext(j, '}', "expected ',' or '}' in an object");
		}
		if (end < 0)
			return -1;
	}
	for (int k = 0; k < 3; k++) {
		const char *v = col_get(c, diff_keys[k]);
		if (!v)
			return diff_fail(j->side, line, "entry %zu of \"fabrics\" has no \"%s\"", idx,
					 diff_keys[k]);
		if (!(c->key[k] = strdup(v)))
			return diff_fail(j->side, 0, "out of memory");
	}
	return 0;
}

/* The value of "fabrics": an array of json_fabric entries. */
static int json_fabrics(jcur_t *j)
{
	if (jpeek(j) != '[')
		return jpeek(j) < 0 ? jfail(j, "")
				    : diff_fail(j->side, j->line, "\"fabrics\" is not an array");
	j->s++;
	if (jpeek(j) == ']') {
		j->s++;
		return 0;
	}
	int end = 0;
	for (size_t idx = 1; !end; idx++) {
		if (json_fabric(j, idx))
			return -1;
		end = jnext(j, ']', "expected ',' or ']' in \"fabrics\"");
	}
	return end < 0 ? -1 : 0;
}

static int parse_json(dside_t *s, const char *buf, size_t len)
{
	jcur_t j = {buf, buf + len, 1, s};
	int have = 0;
	if (jexpect(&j, '{', "expected '{'"))
		return -1;
	if (jpeek(&j) == '}') {
		j.s++;
	} else {
		int end = 0;
		while (!end) {
			char *key = NULL;
			if (jkey(&j, &key))
				return -1;
			int fabrics = !strcmp(key, "fabrics");
			free(key);
			if (fabrics && have)
				return diff_fail(s, j.line, "\"fabrics\" appears twice");
			have |= fabrics;
			if (fabrics ? json_fabrics(&j) : jskip(&j, 0))
				return -1;
			end = jnext(&j, '}', "expected ',' or '}' in an object");
		}
		if (end < 0)
			return -1;
	}
	if (jpeek(&j) != -1)
		return jfail(&j, "text after the JSON object");
	if (!have)
		return diff_fail(s, 0, "JSON without a \"fabrics\" array: not efab_probe --json output");
	return 0;
}

/* -- CSV long format (what write_csv writes) -- */

static const char csv_header[] = "provider,fabric,domain,property,value";

/* Where the CSV reader stands: line counts raw newlines, quoted ones too. */
typedef struct ccur {
	const char *p, *end;
	long line;
	dside_t *side;
} ccur_t;

/* A quoted field (c->p at its opening quote; "" is one quote) into b. */
static int csv_quoted(ccur_t *c, long rline, dbuf_t *b)
{
	for (c->p++;; c->p++) {
		if (c->p >= c->end)
			return diff_fail(c->side, rline, "unterminated quoted field");
		if (*c->p == '"' && !(c->p + 1 < c->end && c->p[1] == '"'))
			break;
		c->p += *c->p == '"';
		c->line += *c->p == '\n';
		if (dbuf_add(b, c->p, 1))
			return diff_fail(c->side, 0, "out of memory");
	}
	if (++c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
		return diff_fail(c->side, c->line, "text after the closing quote of a field");
	return 0;
}

/* One field, quoted or not, into *out (malloc'd). */
static int csv_field(ccur_t *c, long rline, char **out)
{
	dbuf_t b = {0};
	int rc = 0;
	if (c->p < c->end && *c->p == '"') {
		rc = csv_quoted(c, rline, &b);
	} else {
		const char *q = c->p;
		while (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
			c->p++;
		if (dbuf_add(&b, q, (size_t)(c->p - q)))
			rc = diff_fail(c->side, 0, "out of memory");
	}
	*out = rc ? NULL : dbuf_take(&b);
	free(b.s);
	if (!rc && !*out)
		rc = diff_fail(c->side, 0, "out of memory");
	return rc;
}

/* One record and its line end: the first five fields into f (the caller
 * frees them), how many there were into *nf. */
static int csv_record(ccur_t *c, long rline, char *f[5], int *nf)
{
	for (;;) {
		char *field;
		if (csv_field(c, rline, &field))
			return -1;
		if (*nf < 5)
			f[*nf] = field;
		else
			free(field);
		(*nf)++;
		if (c->p >= c->end || *c->p != ',')
			break;
		c->p++;
	}
	c->p += c->p < c->end && *c->p == '\r';
	if (c->p < c->end && *c->p == '\n') {
		c->p++;
		c->line++;
	}
	return 0;
}

static int same_column(const dcol_t *c, char *const f[3])
{
	return !strcmp(c->key[0], f[0]) && !strcmp(c->key[1], f[1]) && !strcmp(c->key[2], f[2]);
}

/* The column of provider/fabric/domain f[0..2]: the previous record's (rows
 * come grouped), an earlier one, or a new one that takes over the keys. */
static dcol_t *csv_column(dside_t *s, char *f[5], long last)
{
	if (last >= 0 && same_column(&s->c[last], f))
		return &s->c[last];
	for (size_t i = 0; i < s->n; i++)
		if (same_column(&s->c[i], f))
			return &s->c[i];
	dcol_t *c = col_new(s);
	for (int k = 0; c && k < 3; k++) {
		c->key[k] = f[k];
		f[k] = NULL;
	}
	return c;
}

/* A record's property into its column (f[3], f[4] taken over). */
static int csv_put(dside_t *s, char *f[5], long rline, long *last)
{
	dcol_t *c = csv_column(s, f, *last);
	if (!c)
		return -1;
	*last = c - s->c;
	char dup[64];
	snprintf(dup, sizeof(dup), "%s", f[3]);
	int rc = col_put(s, c, f[3], f[4]);
	f[3] = f[4] = NULL;
	if (rc > 0)
		rc = diff_fail(s, rline, "property '%s' of %s appears twice", dup, col_key(c));
	return rc;
}

static int parse_csv(dside_t *s, const char *buf, size_t len)
{
	ccur_t c = {buf, buf + len, 2, s};
	size_t hl = strlen(csv_header);
	long last = -1;
	if (len < hl || memcmp(buf, csv_header, hl) || (len > hl && buf[hl] != '\n' && buf[hl] != '\r'))
		return diff_fail(s, 1, "expected the header '%s'", csv_header);
	c.p += hl;
	c.p += c.p < c.end && *c.p == '\r';
	c.p += c.p < c.end && *c.p == '\n';
	while (c.p < c.end) {
		long rline = c.line;
		char *f[5] = {0};
		int nf = 0;
		if (*c.p == '\n' || *c.p == '\r') { /* a blank line */
			c.line += *c.p++ == '\n';
			continue;
		}
		int rc = csv_record(&c, rline, f, &nf);
		if (!rc && nf != 5)
			rc = diff_fail(s, rline, "%d fields, expected 5 (%s)", nf, csv_header);
		if (!rc)
			rc = csv_put(s, f, rline, &last);
		for (int k = 0; k < 5; k++)
			free(f[k]);
		if (rc)
			return -1;
	}
	return 0;
}

static int diff_load(dside_t *s)
{
	FILE *f = fopen(s->path, "rb");
	if (!f)
		return diff_fail(s, 0, "cannot open: %s", strerror(errno));
	dbuf_t b = {0};
	char chunk[65536];
	size_t k;
	int rc = 0;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b.n + k > DIFF_MAX_BYTES) {
			rc = diff_fail(s, 0, "larger than %u MiB: not an efab_probe output",
				       DIFF_MAX_BYTES >> 20);
			break;
		}
		if (dbuf_add(&b, chunk, k)) {
			rc = diff_fail(s, 0, "out of memory");
			break;
		}
	}
	if (!rc && ferror(f))
		rc = diff_fail(s, 0, "cannot read: %s", strerror(errno));
	fclose(f);
	const char *p = b.s ? b.s : "", *end = p + b.n;
	if (!rc && memchr(p, '\0', b.n))
		rc = diff_fail(s, 0, "contains NUL bytes: not an efab_probe output (JSON or CSV text)");
	if (!rc) {
		if (end - p >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark */
			p += 3;
		const char *q = p;
		while (q < end && isspace((unsigned char)*q))
			q++;
		if (q == end) {
			rc = diff_fail(s, 0, "empty: expected efab_probe --json output or its --csv file");
		} else if (*q == '{') {
			s->format = "JSON";
			rc = parse_json(s, p, (size_t)(end - p));
		} else if (!strncmp(p, csv_header, 9)) { /* "provider," */
			s->format = "CSV";
			rc = parse_csv(s, p, (size_t)(end - p));
		} else if (!strncmp(q, "provider ", 9)) {
			rc = diff_fail(s, 0, "efab_probe's table, not its --json output or --csv file");
		} else {
			char head[41];
			size_t n = 0;
			for (; q < end && *q != '\n' && n < sizeof(head) - 1; q++)
				head[n++] = isprint((unsigned char)*q) ? *q : '?';
			head[n] = '\0';
			rc = diff_fail(s, 0, "neither efab_probe --json output nor its --csv long format "
					     "(it begins '%s')", head);
		}
	}
	free(b.s);
	for (size_t i = 0; !rc && i < s->n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->c[i].key[0], s->c[j].key[0]) && !strcmp(s->c[i].key[1], s->c[j].key[1]) &&
			    !strcmp(s->c[i].key[2], s->c[j].key[2])) {
				rc = diff_fail(s, 0, "column %s appears twice (%s entries %zu and %zu)",
					       col_key(&s->c[i]), s->format[0] == 'J' ? "fabrics" : "column",
					       j + 1, i + 1);
				break;
			}
	return rc;
}

/* -- matching and comparing -- */

/* The domain name with its NIC name cut out (malloc'd), or NULL when the NIC
 * name is unknown or not part of it. */
static char *domain_template(const dcol_t *c)
{
	const char *nic = col_get(c, "nic_name"), *dom = c->key[2], *hit;
	if (!nic || !nic[0] || !strcmp(nic, "-") || !(hit = strstr(dom, nic)))
		return NULL;
	size_t pre = (size_t)(hit - dom), nl = strlen(nic);
	char *t = malloc(strlen(dom) - nl + 2);
	if (t) {
		memcpy(t, dom, pre);
		t[pre] = '\x01';
		strcpy(t + pre + 1, hit + nl);
	}
	return t;
}

static void diff_match(dside_t *A, dside_t *B)
{
	for (size_t i = 0; i < A->n; i++)
		for (size_t j = 0; j < B->n; j++)
			if (B->c[j].peer < 0 && !strcmp(A->c[i].key[0], B->c[j].key[0]) &&
			    !strcmp(A->c[i].key[1], B->c[j].key[1]) && !strcmp(A->c[i].key[2], B->c[j].key[2])) {
				A->c[i].peer = (long)j;
				B->c[j].peer = (long)i;
				break;
			}
	/* left over: the column at the same position among the other side's
	 * columns of this provider/fabric, when its domain is the same apart
	 * from the NIC name */
	for (size_t i = 0; i < A->n; i++) {
		char *ta = A->c[i].peer < 0 ? domain_template(&A->c[i]) : NULL;
		size_t pos = 0, posb = 0;
		for (size_t k = 0; ta && k < i; k++)
			pos += !strcmp(A->c[k].key[0], A->c[i].key[0]) && !strcmp(A->c[k].key[1], A->c[i].key[1]);
		for (size_t j = 0; ta && j < B->n; j++) {
			if (strcmp(A->c[i].key[0], B->c[j].key[0]) || strcmp(A->c[i].key[1], B->c[j].key[1]))
				continue;
			if (posb++ != pos)
				continue;
			if (B->c[j].peer >= 0)
				break;
			char *tb = domain_template(&B->c[j]);
			int same = tb && !strcmp(ta, tb);
			free(tb);
			if (same) {
				A->c[i].peer = (long)j;
				B->c[j].peer = (long)i;
				A->c[i].by_position = B->c[j].by_position = 1;
			}
			break;
		}
		free(ta);
	}
}

/* A datatype list of an atomic_<op> row ("u64 u32 ..."; "-" = none)? */
static int dt_list(const char *name, const char *v)
{
	if (strncmp(name, "atomic_", 7))
		return 0;
	if (!strcmp(v, "-"))
		return 1;
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != ' ')
			return 0;
	return v[0] != '\0';
}

static int dt_has(const char *list, const char *tok, size_t tl)
{
	for (const char *p = list; *p;) {
		p += strspn(p, " ");
		size_t l = strcspn(p, " ");
		if (l == tl && !strncmp(p, tok, tl))
			return 1;
		p += l;
	}
	return 0;
}

/* The datatypes of x that y lacks, space-separated. */
static void dt_minus(const char *x, const char *y, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (const char *p = x; *p;) {
		p += strspn(p, " ");
		size_t l = strcspn(p, " ");
		if (l && strncmp(p, "-", l) && !dt_has(y, p, l) && n + l + 2 < len) {
			n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? " " : "", (int)l, p);
		}
		p += l;
	}
}

typedef struct dchange {
	const dcol_t *a, *b;   /* NULL: the column is absent on that side */
	const char *prop;      /* NULL: the column itself vanished or appeared */
	const char *va, *vb;   /* NULL: the property is absent on that side */
	char appeared[160], vanished[160]; /* atomic_<op>: the datatypes */
	int dt;		       /* both values are datatype lists */
} dchange_t;

static int diff_ignored_prop(const char *name)
{
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(diff_ignored); k++)
		if (!strcmp(diff_ignored[k], name))
			return 1;
	return 0;
}

static dchange_t *change_add(dchange_t **ch, size_t *n, size_t *cap, const dcol_t *a,
			     const dcol_t *b, const char *prop, const char *va, const char *vb)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		dchange_t *p = realloc(*ch, nc * sizeof(*p));
		if (!p)
			return NULL;
		*ch = p;
		*cap = nc;
	}
	dchange_t *c = &(*ch)[(*n)++];
	memset(c, 0, sizeof(*c));
	c->a = a;
	c->b = b;
	c->prop = prop;
	c->va = va;
	c->vb = vb;
	return c;
}

static int diff_compare(const dside_t *A, const dside_t *B, dchange_t **ch, size_t *n)
{
	size_t cap = 0;
	*ch = NULL;
	*n = 0;
	for (size_t i = 0; i < A->n; i++) {
		const dcol_t *a = &A->c[i], *b = a->peer >= 0 ? &B->c[a->peer] : NULL;
		if (!b) {
			if (!change_add(ch, n, &cap, a, NULL, NULL, NULL, NULL))
				return -1;
			continue;
		}
		for (size_t k = 0; k < a->n; k++) {
			const char *name = a->p[k].name, *va = a->p[k].value, *vb = col_get(b, name);
			if (diff_ignored_prop(name) || (vb && !strcmp(va, vb)))
				continue;
			char app[160] = "", van[160] = "";
			int dt = vb && dt_list(name, va) && dt_list(name, vb);
			if (dt) {
				dt_minus(vb, va, app, sizeof(app));
				dt_minus(va, vb, van, sizeof(van));
				if (!app[0] && !van[0])
					continue; /* the same datatypes in another order */
			}
			dchange_t *c = change_add(ch, n, &cap, a, b, name, va, vb);
			if (!c)
				return -1;
			c->dt = dt;
			memcpy(c->appeared, app, sizeof(app));
			memcpy(c->vanished, van, sizeof(van));
		}
		for (size_t k = 0; k < b->n; k++)
			if (!diff_ignored_prop(b->p[k].name) && !col_get(a, b->p[k].name) &&
			    !change_add(ch, n, &cap, a, b, b->p[k].name, NULL, b->p[k].value))
				return -1;
	}
	for (size_t j = 0; j < B->n; j++)
		if (B->c[j].peer < 0 && !change_add(ch, n, &cap, NULL, &B->c[j], NULL, NULL, NULL))
			return -1;
	return 0;
}

static void json_dt_array(FILE *f, const char *list)
{
	fputc('[', f);
	int first = 1;
	for (const char *p = list; *p;) {
		p += strspn(p, " ");
		size_t l = strcspn(p, " ");
		if (l) {
			fprintf(f, "%s\"%.*s\"", first ? "" : ", ", (int)l, p);
			first = 0;
		}
		p += l;
	}
	fputc(']', f);
}

/* efab_json_kv, with null for a NULL value (what one side lacks) */
static void json_kv_or_null(FILE *f, const char *sep, const char *key, const char *value)
{
	if (value) {
		efab_json_kv(f, sep, key, value);
		return;
	}
	fputs(sep, f);
	efab_json_str(f, key);
	fputs(": null", f);
}

/* The members that name a column of the diff: provider and fabric (the same
 * on both sides), then each side's domain, null on a side without it. */
static void json_col_ids(const dcol_t *any, const dcol_t *a, const dcol_t *b)
{
	efab_json_kv(stdout, "", "provider", any->key[0]);
	efab_json_kv(stdout, ", ", "fabric", any->key[1]);
	json_kv_or_null(stdout, ", ", "a_domain", a ? a->key[2] : NULL);
	json_kv_or_null(stdout, ", ", "b_domain", b ? b->key[2] : NULL);
}

static void diff_print_json(const dside_t *A, const dside_t *B, const dchange_t *ch, size_t n)
{
	const dside_t *sides[2] = {A, B};
	printf("{");
	for (int k = 0; k < 2; k++) {
		printf("%s\"%s\": {", k ? ",\n " : "", k ? "b" : "a");
		efab_json_kv(stdout, "", "file", sides[k]->path);
		printf(", \"format\": \"%s\", \"columns\": %zu}", sides[k]->format, sides[k]->n);
	}
	printf(",\n \"identical\": %s,\n \"differences\": %zu,\n \"matched_by_position\": [",
	       n ? "false" : "true", n);
	int first = 1;
	for (size_t i = 0; i < A->n; i++) {
		const dcol_t *a = &A->c[i];
		if (!a->by_position)
			continue;
		const dcol_t *b = &B->c[a->peer];
		printf("%s\n  {", first ? "" : ",");
		json_col_ids(a, a, b);
		json_kv_or_null(stdout, ", ", "a_nic", col_get(a, "nic_name"));
		json_kv_or_null(stdout, ", ", "b_nic", col_get(b, "nic_name"));
		printf("}");
		first = 0;
	}
	printf("%s],\n \"changes\": [", first ? "" : "\n ");
	for (size_t i = 0; i < n; i++) {
		const dchange_t *c = &ch[i];
		const dcol_t *any = c->a ? c->a : c->b;
		const char *kind = !c->prop ? (c->a ? "column_vanished" : "column_appeared")
				   : !c->vb  ? "property_vanished"
				   : !c->va  ? "property_appeared"
					     : "changed";
		printf("%s\n  {", i ? "," : "");
		json_col_ids(any, c->a, c->b);
		efab_json_kv(stdout, ", ", "kind", kind);
		json_kv_or_null(stdout, ", ", "property", c->prop);
		json_kv_or_null(stdout, ", ", "a", c->prop ? c->va : c->a ? "present" : NULL);
		json_kv_or_null(stdout, ", ", "b", c->prop ? c->vb : c->b ? "present" : NULL);
		if (c->dt) {
			printf(", \"datatypes_appeared\": ");
			json_dt_array(stdout, c->appeared);
			printf(", \"datatypes_vanished\": ");
			json_dt_array(stdout, c->vanished);
		}
		printf("}");
	}
	printf("%s]}\n", n ? "\n " : "");
}

static void diff_print_table(const dside_t *A, const dside_t *B, const dchange_t *ch, size_t n)
{
	printf("efab_probe --diff: A = %s (%s, %zu columns), B = %s (%s, %zu columns)\n", A->path,
	       A->format, A->n, B->path, B->format, B->n);
	for (size_t i = 0; i < A->n; i++) {
		const dcol_t *a = &A->c[i];
		if (!a->by_position)
			continue;
		const dcol_t *b = &B->c[a->peer];
		const char *na = col_get(a, "nic_name"), *nb = col_get(b, "nic_name");
		printf("note: %s/%s: domain %s of A matched to %s of B by position (the domain names "
		       "differ only in the NIC name, %s -> %s)\n", a->key[0], a->key[1], a->key[2],
		       b->key[2], na ? na : "?", nb ? nb : "?");
	}
	int kw = 8, pw = 8;
	for (size_t i = 0; i < n; i++) {
		int l = (int)strlen(col_key(ch[i].a ? ch[i].a : ch[i].b));
		kw = l > kw ? (l < 44 ? l : 44) : kw;
		l = ch[i].prop ? (int)strlen(ch[i].prop) : 8;
		pw = l > pw ? (l < 24 ? l : 24) : pw;
	}
	size_t gone = 0, came = 0;
	for (size_t i = 0; i < n; i++) {
		const dchange_t *c = &ch[i];
		printf("%-*s  %-*s  ", kw, col_key(c->a ? c->a : c->b), pw, c->prop ? c->prop : "(column)");
		if (!c->prop) {
			printf(c->a ? "present -> absent (vanished in B)\n" : "absent -> present (appeared in B)\n");
			gone += c->a != NULL;
			came += c->a == NULL;
			continue;
		}
		printf("%s -> %s", c->va ? c->va : "(absent)", c->vb ? c->vb : "(absent)");
		if (c->appeared[0] || c->vanished[0])
			printf(" (%s%s%s%s%s)", c->appeared[0] ? "appeared: " : "", c->appeared,
			       c->appeared[0] && c->vanished[0] ? "; " : "",
			       c->vanished[0] ? "vanished: " : "", c->vanished);
		printf("\n");
	}
	if (!n)
		printf("no differences\n");
	else
		printf("%zu difference%s: %zu column%s vanished, %zu appeared, %zu propert%s changed\n", n,
		       n == 1 ? "" : "s", gone, gone == 1 ? "" : "s", came, n - gone - came,
		       n - gone - came == 1 ? "y" : "ies");
}

static int probe_diff_main(int argc, char **argv)
{
	const char *files[2] = {NULL, NULL};
	int nfiles = 0, json = 0;
	efab_log_set_prefix("efab_probe");
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (!strcmp(a, "--diff"))
			continue;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(diff_usage, stdout);
			return EFAB_OK;
		}
		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (a[0] == '-' && a[1]) {
			efab_log_error("--diff: '%s' is not an option of --diff (usage: efab_probe --diff A B "
				       "[--json])", a);
			return EFAB_EUSAGE;
		} else if (nfiles < 2) {
			files[nfiles++] = a;
		} else {
			nfiles++;
		}
	}
	if (nfiles != 2) {
		efab_log_error("--diff needs two files, got %d (usage: efab_probe --diff A B [--json])",
			       nfiles);
		return EFAB_EUSAGE;
	}
	static dside_t A, B;
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	A.path = files[0];
	B.path = files[1];
	int rc = EFAB_EUSAGE;
	dchange_t *ch = NULL;
	size_t n = 0;
	if (diff_load(&A)) {
		efab_log_error("%s", A.err);
	} else if (diff_load(&B)) {
		efab_log_error("%s", B.err);
	} else {
		diff_match(&A, &B);
		if (diff_compare(&A, &B, &ch, &n)) {
			efab_log_error("--diff: out of memory");
			rc = EFAB_ERR;
		} else {
			if (json)
				diff_print_json(&A, &B, ch, n);
			else
				diff_print_table(&A, &B, ch, n);
			rc = n ? EFAB_ERR : EFAB_OK;
		}
	}
	free(ch);
	dside_free(&A);
	dside_free(&B);
	return rc;
}

/* fi_getinfo may list a provider/fabric/domain more than once; its first
 * entry is its column. */
static int same_fabric(const struct fi_info *a, const struct fi_info *b)
{
	return !strcmp(a->fabric_attr->prov_name, b->fabric_attr->prov_name) &&
	       !strcmp(a->fabric_attr->name, b->fabric_attr->name) &&
	       !strcmp(a->domain_attr->name, b->domain_attr->name);
}

/* One column per provider/fabric/domain that the options select. */
static int collect_columns(struct fi_info *all, const efab_opts_t *o, column_t *cols, size_t *n)
{
	efab_fabric_req_t filter = {.provider = o->provider, .fabric = o->fabric, .domain = o->domain};
	for (struct fi_info *i = all; i && *n < MAX_COLS; i = i->next) {
		if (efab_info_match(i, &filter) != i)
			continue;
		int dup = 0;
		for (size_t c = 0; c < *n; c++)
			dup |= same_fabric(cols[c].info, i);
		if (dup)
			continue;
		memset(&cols[*n], 0, sizeof(cols[*n]));
		cols[*n].info = fi_dupinfo(i);
		if (!cols[*n].info) {
			efab_log_error("fi_dupinfo: out of memory");
			return EFAB_ERR;
		}
		(*n)++;
	}
	return EFAB_OK;
}

static int no_fabric_matches(const efab_rt_t *rt, const efab_opts_t *o)
{
	char err[512];
	efab_fabric_list(err, sizeof(err));
	if (rt->rank == 0)
		efab_log_error("no RDM fabric matches provider '%s' fabric '%s' domain '%s'; "
			       "available here: %s", o->provider[0] ? o->provider : "*",
			       o->fabric[0] ? o->fabric : "*", o->domain[0] ? o->domain : "*", err);
	return EFAB_EUSAGE;
}

static void add_row(void *col, const char *name, const char *value)
{
	add(col, name, "%s", value);
}

/* Describe every column, run the live tests if asked, and report (rank 0). */
static int probe_columns(efab_rt_t *rt, const efab_opts_t *o, column_t *cols, size_t n)
{
	double live_timeout = o->timeout_s < 10 ? o->timeout_s : 10;
	for (size_t c = 0; c < n; c++)
		describe(&cols[c]);
	for (size_t c = 0; o->live && c < n; c++) {
		for (int k = 0; k < LIVE_N; k++) {
			char res[512];
			live_one(rt, cols[c].info, k, live_timeout, res, sizeof(res));
			add(&cols[c], live_names[k], "%s", res);
		}
		probe_put_matrix(rt, cols[c].info, live_timeout, add_row, &cols[c]);
	}
	if (rt->rank != 0)
		return EFAB_OK;
	if (o->json)
		print_json(stdout, cols, n);
	else
		print_table(cols, n);
	return o->csv[0] ? write_csv(o->csv, cols, n) : EFAB_OK;
}

int efab_probe_main(int argc, char **argv)
{
	efab_opts_t o;
	struct fi_info *all = NULL;
	static column_t cols[MAX_COLS];
	size_t n = 0;
	int rc;
	efab_runtime_t run;
	const efab_bench_row_t *row = efab_row("efab_probe");

	/* a case of --live's put matrix, started by --live itself: no MPI */
	if (argc > 1 && !strcmp(argv[1], "--live-child"))
		return probe_put_child_main(argc, argv);
	/* --diff compares two files: neither MPI nor libfabric */
	for (int k = 1; k < argc; k++)
		if (!strcmp(argv[k], "--diff"))
			return probe_diff_main(argc, argv);
	if ((rc = efab_opts_main(&o, row->options, row->name, row->summary, argc, argv)) >= 0)
		return rc;
	/* MPI only for --live: the matrix alone runs anywhere */
	if (efab_runtime_up(&run, o.live ? EFAB_RUNTIME_MPI : EFAB_RUNTIME_SINGLE, row->name, &argc,
			    &argv))
		return EFAB_ERR;
	efab_rt_t *rt = run.rt;
	if (o.live && rt->size != 2) {
		if (rt->rank == 0)
			efab_log_error("--live needs exactly 2 ranks (mpirun -np 2), got %d",
				       rt->size);
		return efab_runtime_down(&run, EFAB_EUSAGE);
	}
	int ret = efab_getinfo_all(&all);
	if (ret && ret != -FI_ENODATA) {
		efab_log_fi("fi_getinfo", ret);
		return efab_runtime_down(&run, EFAB_ERR);
	}
	rc = collect_columns(all, &o, cols, &n);
	if (!rc && n == 0)
		rc = no_fabric_matches(rt, &o);
	if (!rc)
		rc = probe_columns(rt, &o, cols, n);
	for (size_t c = 0; c < n; c++)
		fi_freeinfo(cols[c].info);
	fi_freeinfo(all);
	return efab_runtime_down(&run, rc);
}
