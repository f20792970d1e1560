/* efab_mr_reg: what registering memory costs, per call and per byte.
 *
 * Regimes, each over the size sweep:
 *   fresh       a new buffer every time (allocated and first-touched before
 *               the clock starts): fi_mr_regattr and fi_close timed apart
 *   same        the same buffer registered again and again (MR caches show)
 *   accumulate  registrations kept alive up to --max-total; each
 *               registration's cost against what was already registered
 * and with --components the parts that exist on any GPU host without an
 * RDMA NIC: cuMemHostRegister/Unregister (page pinning, what NVSHMEM does
 * for unregistered host buffers) and the dmabuf export of cuda memory.
 *
 * On shm and tcp registration is software bookkeeping; on EFA (and verbs)
 * the NIC driver pins pages or imports a dmabuf: the includes_nic_work
 * column says which a row measured. Single process, or one result per rank
 * under mpirun.
 *
 * The first call of every size and regime is timed apart (first_us) and never
 * among the samples: n steady calls follow it. --domains registers each
 * buffer on k domains (NICs) of the provider, k = 1, 2, 4, ... up to K, one
 * row per k (column domains). */
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_clock.h"
#include "efab_cuda.h"
#include "efab_endpoint.h"
#include "efab_mem.h"
#include "efab_registration.h"
#include "efab_reglog.h"
#include "efab_select.h"
#include "efab_topo.h"
#include "pattern.h"
#include "reg.h"
#include "rows.h"
#include "runtime.h"

/* The fit columns' 95 % intervals come after fit_r2 so that older columns
 * keep their places. */
enum { C_RANK, C_DEREG50, C_DEREG99, C_REGBEFORE, C_CACHE, C_ACCESS, C_NIC, C_FITX, C_FIXED,
       C_SLOPE, C_R2, C_FIXED_LO, C_FIXED_HI, C_SLOPE_LO, C_SLOPE_HI, C_DOMAINS, C_FIRST, C_P25, C_P75,
       C_REGPATH, C_N };
static const char *const cols[C_N] = {"rank", "dereg_us_p50", "dereg_us_p99",
				      "registered_before_MiB", "mr_cache", "access",
				      "includes_nic_work", "fit_x", "fit_fixed_us",
				      "fit_us_per_MiB", "fit_r2", "fit_fixed_us_lo",
				      "fit_fixed_us_hi", "fit_us_per_MiB_lo",
				      "fit_us_per_MiB_hi", "domains", "first_us",
				      "lat_us_p25", "lat_us_p75", "reg_path"};
_Static_assert(C_N <= EFAB_MAX_EXTRA, "registration columns exceed EFAB_MAX_EXTRA");

static int nic_provider(const char *prov)
{
	static const char *const hw[] = {"efa", "verbs", "psm3", "cxi", "opx", "usnic"};
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(hw); i++)
		if (efab_prov_matches(hw[i], prov))
			return 1;
	return 0;
}

static uint64_t iters_for(const reg_ctx_t *r, uint64_t size)
{
	return r->o.iters ? r->o.iters : efab_scaled_count(50, 1u << 20, size, 3);
}

static size_t k_of(const reg_ctx_t *r)
{
	return r->k ? r->k : 1;
}

/* One buffer's registrations: one per domain in use. */
typedef struct mrset {
	efab_mr_t mr[EFAB_MAX_DOMAINS];
	size_t n;
} mrset_t;

static void dereg_set(mrset_t *set)
{
	for (size_t d = 0; d < set->n; d++)
		efab_mr_dereg(&set->mr[d]);
	set->n = 0;
}

static int reg_one(reg_ctx_t *r, void *buf, size_t len, mrset_t *set)
{
	set->n = 0;
	for (size_t d = 0; d < k_of(r); d++) {
		efab_fabric_t *f = r->doms[d] ? r->doms[d] : &r->fab;
		int rc = r->o.dmabuf
				 ? efab_mr_register_dmabuf(f, buf, len, r->gpu, r->access, &set->mr[d])
				 : efab_mr_register(f, buf, len, efab_mem_iface(r->kind),
						    r->gpu < 0 ? 0 : r->gpu, r->access, &set->mr[d]);
		if (rc) {
			dereg_set(set);
			return rc;
		}
		set->n = d + 1;
	}
	return EFAB_OK;
}

static int fi_reg_cb(reg_ctx_t *r, void *buf, size_t len, void **h)
{
	mrset_t *set = malloc(sizeof(*set));
	if (!set)
		return EFAB_ERR;
	int rc = reg_one(r, buf, len, set);
	if (rc)
		free(set);
	else
		*h = set;
	return rc;
}

static int fi_dereg_cb(reg_ctx_t *r, void *h)
{
	(void)r;
	dereg_set(h);
	free(h);
	return EFAB_OK;
}

static int pin_cb(reg_ctx_t *r, void *buf, size_t len, void **h)
{
	(void)r;
	*h = buf;
	return efab_cuda_host_register(buf, len);
}

static int unpin_cb(reg_ctx_t *r, void *h)
{
	(void)r;
	return efab_cuda_host_unregister(h);
}

static int export_cb(reg_ctx_t *r, void *buf, size_t len, void **h)
{
	int fd;
	uint64_t off;
	(void)r;
	int rc = efab_cuda_dmabuf(buf, len, &fd, &off);
	if (!rc)
		*h = (void *)(intptr_t)fd;
	return rc;
}

static int close_cb(reg_ctx_t *r, void *h)
{
	(void)r;
	close((int)(intptr_t)h);
	return EFAB_OK;
}

static const efab_regop_t mr_ops[] = {
	{"fresh", fi_reg_cb, fi_dereg_cb, 1, -1, 0},
	{"fresh_dmabuf", fi_reg_cb, fi_dereg_cb, 1, -1, 0},
	{"cuMemHostRegister", pin_cb, unpin_cb, 1, -1, 1},
	{"dmabuf_export", export_cb, close_cb, 1, -1, 1},
};

const efab_regop_t *efab_regop_find(const reg_ctx_t *r, const char *name)
{
	for (size_t i = 0; i < r->nops; i++)
		if (!strcmp(r->ops[i].name, name))
			return &r->ops[i];
	return NULL;
}

void efab_reg_columns(efab_run_info_t *ri)
{
	for (size_t i = 0; i < C_N; i++)
		ri->extra_cols[ri->n_extra++] = cols[i];
}

typedef struct meas {
	const char *op;
	uint64_t size, n;
	efab_stats_t reg, dereg;
	double first_us; /* the first call of this size and regime, apart from the samples */
	double before_MiB;
	efab_fit_t fit; /* accumulate: cost vs registered before */
	int has_fit;
	char reg_path[48]; /* the path libfabric said it took (probe_path); "" = "-" */
} meas_t;

/* GDRCopy as libfabric set it up in this process (efab_reglog.h), taken
 * around the first fi_getinfo; gdr_applies: this run's registrations take the
 * step when it is on (efa fabric, CUDA memory, no --dmabuf). */
static int gdr_state = EFAB_GDR_UNKNOWN, gdr_applies;
static char gdr_why[240];

/* Topology placement (--domain auto, GPU memory, --domains local|gpu-pair). */
static efab_topo_t topo;
static int have_topo;
static efab_pairing_t pairing;
static char place_note[384];

/* What the single-shot pattern's calls work on (pattern.h times them). */
typedef struct shot {
	reg_ctx_t *r;
	const efab_regop_t *cb;
	uint64_t size, n;
	efab_mem_t mem; /* regop: this call's buffer; same: the one buffer */
	void *h;
	mrset_t *set;
	efab_mem_t *mems; /* accumulate: every buffer, and its registrations */
	mrset_t *mrs;
	double *x;
	uint64_t done;
} shot_t;

static int regop_alloc(void *arg, size_t i)
{
	shot_t *sh = arg;
	(void)i;
	sh->mem = (efab_mem_t){0};
	if (!sh->cb->alloc)
		return EFAB_OK;
	return efab_mem_alloc(sh->cb->kind >= 0 ? sh->cb->kind : sh->r->kind, sh->r->gpu, sh->size,
			      &sh->mem);
}

static int regop_reg(void *arg, size_t i)
{
	shot_t *sh = arg;
	(void)i;
	return sh->cb->reg(sh->r, sh->mem.ptr, sh->size, &sh->h);
}

static int regop_dereg(void *arg, size_t i)
{
	shot_t *sh = arg;
	(void)i;
	return sh->cb->dereg(sh->r, sh->h);
}

static int regop_free(void *arg, size_t i)
{
	shot_t *sh = arg;
	(void)i;
	if (sh->cb->alloc)
		efab_mem_free(&sh->mem);
	return EFAB_OK;
}

/* An op of the table: a fresh buffer each call, register and deregister
 * timed apart. */
static int time_regop(shot_t *sh, uint64_t calls)
{
	size_t done;
	int rc = efab_time_pairs(calls, regop_alloc, regop_reg, regop_dereg, regop_free, sh,
				 sh->r->reg, sh->r->dereg, &done);
	if (rc)
		regop_free(sh, done);
	return rc;
}

static int same_reg(void *arg, size_t i)
{
	shot_t *sh = arg;
	(void)i;
	return reg_one(sh->r, sh->mem.ptr, sh->size, sh->set);
}

static int same_dereg(void *arg, size_t i)
{
	shot_t *sh = arg;
	(void)i;
	dereg_set(sh->set);
	return EFAB_OK;
}

/* same: one buffer registered again and again (what MR caches serve). */
static int time_same(shot_t *sh, uint64_t calls)
{
	size_t done;
	int rc = efab_mem_alloc(sh->r->kind, sh->r->gpu, sh->size, &sh->mem);
	if (rc)
		return rc;
	sh->set = malloc(sizeof(*sh->set));
	if (!sh->set) {
		efab_mem_free(&sh->mem);
		return EFAB_ERR;
	}
	rc = efab_time_pairs(calls, NULL, same_reg, same_dereg, NULL, sh, sh->r->reg, sh->r->dereg,
			     &done);
	free(sh->set);
	efab_mem_free(&sh->mem);
	return rc;
}

static int acc_alloc(void *arg, size_t i)
{
	shot_t *sh = arg;
	sh->x[i] = (double)(i * sh->size) / 1048576.0;
	return efab_mem_alloc(sh->r->kind, sh->r->gpu, sh->size, &sh->mems[i]);
}

static int acc_reg(void *arg, size_t i)
{
	shot_t *sh = arg;
	int rc = reg_one(sh->r, sh->mems[i].ptr, sh->size, &sh->mrs[i]);
	if (rc)
		efab_mem_free(&sh->mems[i]);
	return rc;
}

/* last registered, first released: the i-th release sees done-1-i others */
static int acc_dereg(void *arg, size_t i)
{
	shot_t *sh = arg;
	dereg_set(&sh->mrs[sh->done - 1 - i]);
	return EFAB_OK;
}

static int acc_free(void *arg, size_t i)
{
	shot_t *sh = arg;
	efab_mem_free(&sh->mems[sh->done - 1 - i]);
	return EFAB_OK;
}

/* accumulate: n buffers registered and kept, then released; the fit is the
 * cost against what is already registered. */
static int time_accumulate(shot_t *sh, meas_t *m)
{
	reg_ctx_t *r = sh->r;
	uint64_t n = sh->n;
	size_t done = 0, undone;
	int rc = EFAB_OK;
	sh->mems = calloc(n, sizeof(*sh->mems));
	sh->mrs = calloc(n, sizeof(*sh->mrs));
	sh->x = calloc(n, sizeof(double));
	double *rev = calloc(n, sizeof(double));
	if (!sh->mems || !sh->mrs || !sh->x || !rev) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
	}
	if (!rc)
		rc = efab_time_each(n, acc_alloc, acc_reg, NULL, sh, r->reg, &done);
	/* the first registration (nothing registered before) is the cold one:
	 * apart, as in every regime; the fit is over the others */
	if (!rc && efab_linfit_rel(sh->x + 1, r->reg + 1, n - 1, &m->fit) == 0)
		m->has_fit = 1;
	m->before_MiB = (double)((n - 1) * sh->size) / 1048576.0;
	sh->done = done;
	efab_time_each(done, NULL, acc_dereg, acc_free, sh, rev, &undone);
	for (size_t i = 0; i < undone; i++)
		r->dereg[done - 1 - i] = rev[i];
	free(rev);
	free(sh->mems);
	free(sh->mrs);
	free(sh->x);
	return rc;
}

/* reg_path: one untimed registration of the size, made like the timed ones
 * (same memory kind, --dmabuf, k domains) on a buffer of its own before
 * them, with libfabric's log taken (reglog.c) and given back before the
 * clock starts; the row says the path libfabric reported for it. Only where
 * the registration is libfabric's and on a NIC (shm and tcp: "-"). */
static int probe_path(reg_ctx_t *r, const char *op, const efab_regop_t *cb, uint64_t size,
		      meas_t *m)
{
	int nic = r->nic_work[0] == 'y', cuda = efab_mem_is_device(r->kind);
	if ((cb && cb->reg != fi_reg_cb) || !nic) {
		snprintf(m->reg_path, sizeof(m->reg_path), "%s", EFAB_REGPATH_NONE);
		return EFAB_OK;
	}
	static int said;
	efab_mem_t mem = {0};
	mrset_t set;
	efab_reglog_t l;
	int rc = efab_mem_alloc(r->kind, r->gpu, size, &mem);
	if (rc)
		return rc;
	int cap = efab_reglog_begin(&l);
	rc = reg_one(r, mem.ptr, size, &set);
	efab_reglog_end(&l);
	if (!rc)
		dereg_set(&set);
	efab_mem_free(&mem);
	if (rc)
		return rc;
	snprintf(m->reg_path, sizeof(m->reg_path), "%s%s",
		 efab_reglog_classify(&l, cuda, r->o.dmabuf, nic),
		 efab_reglog_gdr_suffix(&l, gdr_applies, gdr_state));
	if (cap && !said++)
		efab_log_info("reg_path: libfabric's log could not be taken (%s): the path reads "
			      "unknown", l.why);
	if (r->o.verbose) {
		fprintf(stderr, "# reg_path %s %llu B: %s (libfabric said %zu MR line%s%s%s)\n",
			op, (unsigned long long)size, m->reg_path, l.n,
			l.n == 1 ? "" : "s", l.n ? "; deciding: " : "", efab_reglog_evidence(&l));
		for (size_t i = 0; i < l.n; i++)
			fprintf(stderr, "#   libfabric mr: %s\n", l.line[i]);
	}
	return EFAB_OK;
}

/* One size of one regime (or component). */
static int measure(reg_ctx_t *r, const char *op, uint64_t size, meas_t *m)
{
	uint64_t n = iters_for(r, size);
	int rc = EFAB_OK;
	memset(m, 0, sizeof(*m));
	m->op = op;
	m->size = size;
	uint64_t calls = n + 1; /* call 0 is the first, timed apart */
	if (!strcmp(op, "accumulate")) {
		n = r->o.iters ? r->o.iters : 64;
		if (n > r->o.max_total / size)
			n = r->o.max_total / size;
		if (n < 2)
			return EFAB_SKIP; /* no "already registered" to speak of */
		calls = n; /* within --max-total: the first is one of them */
	}
	if (calls > r->cap) {
		double *a = realloc(r->reg, calls * sizeof(double)),
		       *b = a ? realloc(r->dereg, calls * sizeof(double)) : NULL;
		if (!a || !b) {
			if (a)
				r->reg = a;
			efab_log_error("out of memory for %llu samples", (unsigned long long)n);
			return EFAB_ERR;
		}
		r->reg = a;
		r->dereg = b;
		r->cap = calls;
	}
	const efab_regop_t *cb = efab_regop_find(r, op);
	if ((rc = probe_path(r, op, cb, size, m))) /* untimed, before the clock */
		return rc;
	shot_t sh = {.r = r, .cb = cb, .size = size, .n = n};
	if (cb)
		rc = time_regop(&sh, calls);
	else if (!strcmp(op, "same"))
		rc = time_same(&sh, calls);
	else
		rc = time_accumulate(&sh, m);
	if (rc)
		return rc;
	/* accumulate keeps n registrations (the first among them), the other
	 * regimes made n + 1 calls: either way the first stands apart */
	m->n = calls - 1;
	efab_stats_split_first(r->reg, calls, &m->first_us, &m->reg);
	double first_dereg;
	efab_stats_split_first(r->dereg, calls, &first_dereg, &m->dereg);
	return EFAB_OK;
}

static void emit(reg_ctx_t *r, const meas_t *m, const efab_fit_t *fit, const char *fit_x)
{
	efab_row_t row;
	memset(&row, 0, sizeof(row));
	snprintf(row.op, sizeof(row.op), "%s", m->op);
	row.pairs = 0;
	row.size = m->size;
	row.iters = m->n;
	row.has_lat = 1;
	row.lat = m->reg;
	const char *cache = r->cache_na ? "n/a"
			    : r->o.mr_cache == EFAB_ON ? "on" : r->o.mr_cache == EFAB_OFF ? "off"
											     : "default";
	const efab_regop_t *cb = efab_regop_find(r, m->op);
	int component = cb && cb->component;
	snprintf(row.extra[C_RANK], sizeof(row.extra[0]), "%d", r->rt->rank);
	snprintf(row.extra[C_DEREG50], sizeof(row.extra[0]), "%.3f", m->dereg.p50);
	snprintf(row.extra[C_DEREG99], sizeof(row.extra[0]), "%.3f", m->dereg.p99);
	if (!strcmp(m->op, "accumulate"))
		snprintf(row.extra[C_REGBEFORE], sizeof(row.extra[0]), "%.1f", m->before_MiB);
	snprintf(row.extra[C_CACHE], sizeof(row.extra[0]), "%s", component ? "-" : cache);
	snprintf(row.extra[C_ACCESS], sizeof(row.extra[0]), "%s", component ? "-" : r->o.access ? "local" : "remote");
	snprintf(row.extra[C_NIC], sizeof(row.extra[0]), "%s", component ? "no" : r->nic_work);
	if (component)
		snprintf(row.extra[C_DOMAINS], sizeof(row.extra[0]), "-");
	else
		snprintf(row.extra[C_DOMAINS], sizeof(row.extra[0]), "%zu", k_of(r));
	snprintf(row.extra[C_FIRST], sizeof(row.extra[0]), "%.3f", m->first_us);
	if (m->reg.n) { /* the quartiles: the robust spread efab_plot compares with */
		snprintf(row.extra[C_P25], sizeof(row.extra[0]), "%.3f", m->reg.p25);
		snprintf(row.extra[C_P75], sizeof(row.extra[0]), "%.3f", m->reg.p75);
	}
	snprintf(row.extra[C_REGPATH], sizeof(row.extra[0]), "%s", m->reg_path[0] ? m->reg_path : "-");
	if (fit) {
		snprintf(row.extra[C_FITX], sizeof(row.extra[0]), "%s", fit_x);
		snprintf(row.extra[C_FIXED], sizeof(row.extra[0]), "%.4f", fit->intercept);
		snprintf(row.extra[C_SLOPE], sizeof(row.extra[0]), "%.6f", fit->slope);
		snprintf(row.extra[C_R2], sizeof(row.extra[0]), "%.4f", fit->r2);
		if (fit->has_ci) { /* two sizes: a line, but no interval */
			snprintf(row.extra[C_FIXED_LO], sizeof(row.extra[0]), "%.4f", fit->intercept_lo);
			snprintf(row.extra[C_FIXED_HI], sizeof(row.extra[0]), "%.4f", fit->intercept_hi);
			snprintf(row.extra[C_SLOPE_LO], sizeof(row.extra[0]), "%.6f", fit->slope_lo);
			snprintf(row.extra[C_SLOPE_HI], sizeof(row.extra[0]), "%.6f", fit->slope_hi);
		}
	}
	if (r->row_more)
		r->row_more(r, m->op, &row, C_N);
	efab_table_row(stdout, &r->ri, &row, 1, 0);
	if (r->csv.fd >= 0)
		efab_csv_write(&r->csv, &r->ri, &row);
}

/* "1.23 us [1.01, 1.45] + 0.0495 us/MiB [0.0470, 0.0520]" (per_what "/MiB"),
 * the brackets the 95 % intervals, left out where the fit has none. */
static void fit_str(const efab_fit_t *f, const char *per_what, char *buf, size_t len)
{
	if (f->has_ci)
		snprintf(buf, len, "%.2f us [%.2f, %.2f] + %.4f us%s [%.4f, %.4f]", f->intercept,
			 f->intercept_lo, f->intercept_hi, f->slope, per_what, f->slope_lo,
			 f->slope_hi);
	else
		snprintf(buf, len, "%.2f us + %.4f us%s (no interval from 2 points)", f->intercept,
			 f->slope, per_what);
}

/* Every size of one regime; rows go out with the regime's fit filled in. */
int efab_reg_run_regime(reg_ctx_t *r, const char *op)
{
	size_t ns = efab_sizes_count(&r->o.sizes), k = 0;
	meas_t *ms = calloc(ns, sizeof(*ms));
	double *x = calloc(ns, sizeof(double)), *y = calloc(ns, sizeof(double));
	int rc = EFAB_OK;
	if (!ms || !x || !y) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
		goto out;
	}
	for (size_t i = 0; i < ns; i++) {
		uint64_t size = efab_sizes_at(&r->o.sizes, i);
		if (efab_regop_find(r, op) && size > r->o.max_total)
			continue;
		int m = measure(r, op, size, &ms[k]);
		if (m == EFAB_SKIP && !strcmp(op, "accumulate"))
			continue;
		if (m) {
			rc = m;
			goto out;
		}
		x[k] = (double)size / 1048576.0;
		y[k] = ms[k].reg.p50;
		k++;
	}
	/* weighted by 1/y^2: the small sizes set the fixed cost, the large the slope */
	efab_fit_t fit;
	int have_fit = efab_linfit_rel(x, y, k, &fit) == 0;
	char fs[160], kdesc[48] = "";
	if (r->ndoms > 1 && !(efab_regop_find(r, op) && efab_regop_find(r, op)->component))
		snprintf(kdesc, sizeof(kdesc), " on %zu domain%s", k_of(r), k_of(r) > 1 ? "s" : "");
	for (size_t i = 0; i < k; i++) {
		if (!strcmp(op, "accumulate"))
			emit(r, &ms[i], ms[i].has_fit ? &ms[i].fit : NULL, "registered_before");
		else
			emit(r, &ms[i], have_fit ? &fit : NULL, "size");
	}
	if (have_fit && strcmp(op, "accumulate")) {
		fit_str(&fit, "/MiB", fs, sizeof(fs));
		printf("# %s%s: registration costs %s (weighted by 1/y^2, R^2 %.3f) for %s memory on "
		       "%s (fit of p50 over %zu sizes%s; %s)\n",
		       op, kdesc, fs, fit.r2, efab_mem_name(r->kind), r->ri.fabric, k,
		       fit.has_ci ? ", 95% intervals" : "",
		       efab_regop_find(r, op) && efab_regop_find(r, op)->component
			       ? r->component_note
		       : r->nic_work[0] == 'y' ? "includes the NIC driver's pinning"
					       : "software bookkeeping, no NIC");
	}
	if (!strcmp(op, "accumulate") && k > 0 && ms[k - 1].has_fit) {
		fit_str(&ms[k - 1].fit, " per MiB already registered", fs, sizeof(fs));
		printf("# accumulate: at the largest size a registration costs %s (weighted by "
		       "1/y^2, R^2 %.3f)\n", fs, ms[k - 1].fit.r2);
	}
	fflush(stdout);
out:
	free(ms);
	free(x);
	free(y);
	return rc;
}

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
	    (n = efab_topo_gpu_nics(&topo, pairing.gpu, !strcmp(d, "local") ? EFAB_NICS_LOCAL
									   : EFAB_NICS_PAIR,
				    idx, 16)) < 1) {
		snprintf(why, len, "%s: %s = the domain in use", !have_topo ? "no topology"
				   : "no GPU with NICs near it in the topology", d);
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
			efab_log_error("--domains %s: GPU %s's NIC %s (%s) has no %s domain of fabric %s "
				       "here", d, pairing.gpu_busid, nic->name, nic->busid,
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
		efab_log_error("--domains %s: the domain in use, %s, is not one of GPU %s's NICs (%s): "
			       "use --domain auto (the default with --domains %s) or name one of them",
			       d, use->domain_attr->name, pairing.gpu_busid, list, d);
		rc = EFAB_EUSAGE;
	}
	if (!rc) {
		*want = k + 1;
		snprintf(why, len, "%s = GPU %s's NICs by topology: %s", d, pairing.gpu_busid, list);
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
			efab_log_error("--domains '%s': expected local, gpu-pair, all or a count 1..%d",
				       d, EFAB_MAX_DOMAINS);
			return EFAB_EUSAGE;
		}
		want = v;
	}
	if (want > nsib + 1) {
		char list[1024] = "";
		size_t o = (size_t)snprintf(list, sizeof(list), "%s", r->fab.info->domain_attr->name);
		for (size_t i = 0; i < nsib && o < sizeof(list); i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, ", %s", names[i]);
		efab_log_error("--domains %s: %zu domains asked, provider %s has %zu here: %s", d, want,
			       r->fab.info->fabric_attr->prov_name, nsib + 1, list);
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
			efab_log_error("--domains: %s requires FI_MR_ENDPOINT (MRs bound to an endpoint); "
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
		 "lat_us_* the time of all k%s%s", why[0] ? "; " : "", why);
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
	if (r->nic_work[0] != 'y' || efab_mem_is_device(r->kind) || getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY || cap_ipc_lock())
		return EFAB_OK;
	uint64_t most = 0, at = 0;
	const char *what = "";
	for (size_t i = 0; i < efab_sizes_count(&r->o.sizes); i++) {
		uint64_t size = efab_sizes_at(&r->o.sizes, i), n = r->o.iters ? r->o.iters : 64;
		if (n > r->o.max_total / size)
			n = r->o.max_total / size;
		if ((r->o.regime == EFAB_REGIME_ALL || r->o.regime == EFAB_REGIME_ACCUMULATE) && n >= 2 &&
		    n * size > most) {
			most = n * size, at = size, what = "accumulate";
		}
		if (r->o.regime != EFAB_REGIME_ACCUMULATE && size > most)
			most = size, at = size, what = r->o.regime == EFAB_REGIME_SAME ? "same" : "fresh";
	}
	most *= r->ndoms;
	uint64_t pinned = pinned_now();
	if (pinned + most <= rl.rlim_cur)
		return EFAB_OK;
	efab_log_error("RLIMIT_MEMLOCK %.1f MiB (%.1f MiB pinned already) is below the %.1f MiB of %s "
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
		snprintf(place_note, sizeof(place_note), "placement: no GPU and no NIC in the topology%s",
			 want_auto ? "; --domain auto: the first matching domain" : "");
		return EFAB_OK;
	}
	int bound = efab_topo_bind(&topo, &pairing) == EFAB_OK;
	snprintf(place_note, sizeof(place_note),
		 "placement (rank %d): GPU %s, NIC %s (%s), NUMA node %d, %s cpuset %s%s", r->rt->rank,
		 pairing.gpu_busid[0] ? pairing.gpu_busid : "-",
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
static int bring_up(reg_ctx_t *r, const efab_bench_row_t *row, struct fi_info **info,
		    char *note3, size_t len)
{
	efab_fabric_req_t req = {.provider = r->o.provider, .fabric = r->o.fabric,
				 .domain = r->o.domain,
				 .caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
				 .hmem = efab_mem_is_gpu(r->kind)};
	int rc = place(r, &req);
	if (!rc)
		rc = efab_fabric_select(&req, info);
	if (rc)
		return rc;
	efab_run_info_fabric(&r->ri, *info, &r->o);
	gdr_applies = efab_gdr_applies((*info)->fabric_attr->prov_name, (*info)->fabric_attr->name,
				       efab_mem_iface(r->kind) == FI_HMEM_CUDA, r->o.dmabuf);
	r->cache_na = efab_mr_cache_scope(*info);
	snprintf(r->ri.mem_local, sizeof(r->ri.mem_local), "%s", efab_mem_name(r->kind));
	snprintf(r->ri.mem_remote, sizeof(r->ri.mem_remote), "-");
	efab_reg_columns(&r->ri);
	efab_run_info_begin(&r->ri, row->csv_name, r->rt->size);
	r->nic_work = nic_provider((*info)->fabric_attr->prov_name) ? "yes" : "no";
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

static void print_header(const reg_ctx_t *r, const struct fi_info *info, const char *note3)
{
	char mrm[256], note1[1024], note2[256];
	efab_mr_mode_str(info->domain_attr->mr_mode, mrm, sizeof(mrm));
	snprintf(note1, sizeof(note1),
		 "mr_mode %s; access %s; mr cache %s (FI_MR_CACHE_MAX_COUNT=%s "
		 "FI_EFA_MR_CACHE_ENABLE=%s)%s%s%s", mrm, r->o.access ? "local" : "remote",
		 r->o.mr_cache == EFAB_ON ? "on" : r->o.mr_cache == EFAB_OFF ? "off" : "default",
		 getenv("FI_MR_CACHE_MAX_COUNT") ? getenv("FI_MR_CACHE_MAX_COUNT") : "unset",
		 getenv("FI_EFA_MR_CACHE_ENABLE") ? getenv("FI_EFA_MR_CACHE_ENABLE") : "unset",
		 r->o.dmabuf ? "; registered through dmabuf (FI_MR_DMABUF)" : "",
		 r->cache_na ? "; mr_cache column n/a: " : "", r->cache_na ? r->cache_na : "");
	snprintf(note2, sizeof(note2),
		 "lat_us_* = fi_mr_regattr time, dereg_us_* = fi_close time, microseconds, over n "
		 "calls after the first; first_us = the first call of the size and regime, alone; %s",
		 r->nic_work[0] == 'y' ? "this provider's registration includes NIC driver work"
				       : "no NIC here: registration is software bookkeeping");
	const char *note4 = "reg_path = how libfabric registered a buffer of the size, from its own MR "
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
		snprintf(note5, sizeof(note5),
			 "GDRCopy %s (%s): %s", gdr_state == EFAB_GDR_ON ? "on"
					       : gdr_state == EFAB_GDR_OFF ? "off" : "unknown",
			 gdr_why,
			 !gdr_applies
				 ? (r->o.dmabuf ? "FI_MR_DMABUF registrations skip it (efa_rdm_mr_hmem_setup)"
						: "this fabric's registration has no GDRCopy step")
			 : gdr_state == EFAB_GDR_OFF
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
	efab_table_begin(stdout, &r->ri, notes, nn, 1, 0);
}

/* Every regime (registrations through a dmabuf are rows of their own: op
 * fresh_dmabuf), with --domains for k = 1, 2, 4, ... and K; then the
 * components. */
static int run_regimes(reg_ctx_t *r)
{
	static const char *const regimes[] = {"fresh", "same", "accumulate"};
	int rc = EFAB_OK;
	for (size_t k = 1; k <= r->ndoms && !rc; k = k * 2 > r->ndoms && k < r->ndoms ? r->ndoms : k * 2) {
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
	efab_reg_init(r, r->run.rt, mr_ops, EFAB_ARRAY_SIZE(mr_ops), "no", "CUDA only, no NIC");
	r->access = FI_READ | FI_WRITE | (r->o.access ? 0 : FI_REMOTE_READ | FI_REMOTE_WRITE);
	rc = bring_up(r, r->row, &info, note3, sizeof(note3));
	efab_gdrlog_end(&gl);
	gdr_state = efab_gdr_state(&gl, getenv("FI_HMEM_CUDA_USE_GDRCOPY"), efab_libgdrapi_mapped(),
				   gdr_why, sizeof(gdr_why));
	if (r->o.verbose)
		for (size_t i = 0; i < gl.n; i++)
			fprintf(stderr, "# libfabric gdrcopy: %s\n", gl.line[i]);
	if (!rc)
		rc = efab_rt_agree(r->rt, check_memlock(r));
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
