/* The registration-cost engine shared by efab_mr_reg and efab_shmem_reg:
 * per size, N register/deregister pairs timed apart, rows with a fit. */
#ifndef EFAB_REG_H
#define EFAB_REG_H

#include "efab.h"
#include "efab_endpoint.h"
#include "efab_opts.h"
#include "efab_result.h"
#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct reg_ctx reg_ctx_t;

#define EFAB_MAX_DOMAINS 32

/* One thing to time: reg gets a fresh buffer of the run's (or its own)
 * memory kind when alloc is set, else NULL (it allocates itself). */
typedef struct efab_regop {
	const char *name;
	int (*reg)(reg_ctx_t *r, void *buf, size_t len, void **handle);
	int (*dereg)(reg_ctx_t *r, void *handle);
	int alloc;
	int kind;      /* memory kind for alloc; -1 = the run's --mem */
	int component; /* not a libfabric registration: no NIC work */
} efab_regop_t;

struct reg_ctx {
	const efab_bench_row_t *row;
	efab_runtime_t run;
	efab_opts_t o;
	efab_rt_t *rt;
	efab_fabric_t fab;
	const char *cache_na; /* why the provider's MR cache cannot serve fi_mr_regattr here, or NULL */
	int kind, gpu;
	uint64_t access;
	efab_run_info_t ri;
	efab_table_t table; /* the terminal table's columns (efab_reg_table) */
	efab_csv_t csv;
	double *reg, *dereg;
	size_t cap;
	const char *nic_work;
	const char *component_note;
	const efab_regop_t *ops;
	size_t nops;
	/* NIC fan-out (--domains): doms[0] is &fab, the others opened on
	 * further domains of the provider; every fi_mr_regattr of a row is made
	 * on doms[0..k) one after the other (k = 0 counts as 1) */
	efab_fabric_t *doms[EFAB_MAX_DOMAINS];
	size_t ndoms;
	size_t k;
	/* A program's own columns after the registration columns (it appends
	 * their names to ri.extra_cols after efab_reg_columns): filled into
	 * row->extra[first..] for each row of op, or NULL. */
	void (*row_more)(reg_ctx_t *r, const char *op, efab_row_t *row, size_t first);
};

/* The run's context (one per process) with the options of executable name
 * parsed (default sizes 4K:1G); NULL when the program ends here with *rc
 * (help, version, a usage error said). */
reg_ctx_t *efab_reg_start(const char *name, int argc, char **argv, int *rc);
/* The context of a run: its runtime, the ops it may time, what the rows say
 * of NIC work and of component (non-libfabric) ops. */
void efab_reg_init(reg_ctx_t *r, efab_rt_t *rt, const efab_regop_t *ops, size_t nops,
		   const char *nic_work, const char *component_note);
/* Collective: rank 0 writes the CSV header, the others append whole rows
 * after it (rank 0's verdict for every rank, so none waits alone). */
int efab_reg_open_csv(reg_ctx_t *r);
/* The registration CSV columns after the common ones (docs/csv.md, group reg). */
void efab_reg_columns(efab_run_info_t *ri);
/* The terminal table's columns: --columns, -v (all), else size, op, iters,
 * the latency figures, dereg_us_p50, first_us, then rank (more than one),
 * domains (--domains), reg_path (GPU memory) and the program's own more
 * (a comma list, or NULL); the op column op_width wide (the longest regime or
 * component name the run can print). A name --columns gives that the run
 * lacks: a usage error in err. */
int efab_reg_table(reg_ctx_t *r, const char *more, int op_width, char *err, size_t errlen);
const efab_regop_t *efab_regop_find(const reg_ctx_t *r, const char *name);
/* Every size of one regime (an op name, or fresh/same/accumulate for MRs);
 * rows and the fit sentence go to stdout and the CSV. */
int efab_reg_run_regime(reg_ctx_t *r, const char *op);

#ifdef __cplusplus
}
#endif

#endif
