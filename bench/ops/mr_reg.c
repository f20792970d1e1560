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
 * row per k (column domains).
 *
 * This file: the operations, their timing in each regime, the rows;
 * mr_reg_setup.c: the domains, placement, bring-up, header and main. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_cuda.h"
#include "efab_endpoint.h"
#include "efab_mem.h"
#include "efab_registration.h"
#include "efab_reglog.h"
#include "efab_select.h"
#include "pattern.h"
#include "reg.h"
#include "mr_reg_int.h"

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

int efab_mr_nic_provider(const char *prov)
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

const efab_regop_t efab_mr_ops[4] = {
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

int efab_mr_gdr_state = EFAB_GDR_UNKNOWN, efab_mr_gdr_applies;
char efab_mr_gdr_why[240];

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
		 efab_reglog_gdr_suffix(&l, efab_mr_gdr_applies, efab_mr_gdr_state));
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
	efab_table_line(stdout, &r->table, &r->ri, &row);
	if (r->csv.fd >= 0)
		efab_csv_write(&r->csv, &r->ri, &row);
}

int efab_reg_table(reg_ctx_t *r, const char *more, int op_width, char *err, size_t errlen)
{
	char dflt[512];
	const char *spec = efab_table_spec(&r->o);
	snprintf(dflt, sizeof(dflt),
		 "size,op,iters,min_us,p50_us,p99_us,max_us,dereg_us_p50,first_us%s%s%s%s%s",
		 r->rt->size > 1 ? ",rank" : "", r->ndoms > 1 ? ",domains" : "",
		 efab_mem_is_device(r->kind) ? ",reg_path" : "", more ? "," : "", more ? more : "");
	int rc = efab_table_pick(&r->table, &r->ri, 1, 0, spec, dflt, "", err, errlen);
	if (rc)
		return rc;
	efab_table_width(&r->table, &r->ri, "op", op_width);
	efab_table_width(&r->table, &r->ri, "reg_path", (int)strlen("dmabuf->peermem+gdrcopy"));
	return EFAB_OK;
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

/* A fit sentence: at most 120 characters a line, whole at -v. */
static void fit_line(const reg_ctx_t *r, const char *line)
{
	efab_fold(stdout, "# ", "# ", r->o.verbose ? INT_MAX : 120, line);
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
	/* the fit in one line (the memory, fabric and NIC work are in the
	 * header); -v: the whole sentence */
	char line[512];
	if (have_fit && strcmp(op, "accumulate")) {
		fit_str(&fit, "/MiB", fs, sizeof(fs));
		int n = snprintf(line, sizeof(line), "%s%s: registration costs %s (%s, R^2 %.3f)",
				 op, kdesc, fs,
				 r->o.verbose ? "weighted by 1/y^2" : "1/y^2-weighted", fit.r2);
		if (r->o.verbose && n > 0 && (size_t)n < sizeof(line))
			snprintf(line + n, sizeof(line) - (size_t)n,
				 " for %s memory on %s (fit of p50 over %zu sizes%s; %s)",
				 efab_mem_name(r->kind), r->ri.fabric, k,
				 fit.has_ci ? ", 95% intervals" : "",
				 efab_regop_find(r, op) && efab_regop_find(r, op)->component
					 ? r->component_note
				 : r->nic_work[0] == 'y' ? "includes the NIC driver's pinning"
							 : "software bookkeeping, no NIC");
		fit_line(r, line);
	}
	if (!strcmp(op, "accumulate") && k > 0 && ms[k - 1].has_fit) {
		fit_str(&ms[k - 1].fit, "/MiB registered", fs, sizeof(fs));
		snprintf(line, sizeof(line), "accumulate (largest size): %s (%s, R^2 %.3f)", fs,
			 r->o.verbose ? "weighted by 1/y^2" : "1/y^2-weighted", ms[k - 1].fit.r2);
		fit_line(r, line);
	}
	fflush(stdout);
out:
	free(ms);
	free(x);
	free(y);
	return rc;
}
