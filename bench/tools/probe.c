/* efab_probe: the capability and requirements matrix of every RDM fabric on
 * this host, and (--live, under mpirun -np 2) what each operation really does
 * there, then the put matrix (probe_put.c: each case in child processes, so
 * a provider crash is a verdict). The static part needs no MPI: MPI is
 * initialised only for --live.
 *
 * Data first (a list of columns, each a list of property/value pairs), then
 * three writers: the table (120 columns, wrapped by fabric), CSV (long
 * format) and JSON. This file: the main, the columns the options select, and
 * the order of the parts (probe_int.h names each). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "efab_select.h"
#include "probe_put.h"
#include "rows.h"
#include "runtime.h"
#include "probe_int.h"

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
		probe_describe(&cols[c]);
	for (size_t c = 0; o->live && c < n; c++) {
		for (int k = 0; k < LIVE_N; k++) {
			char res[512];
			probe_live_one(rt, cols[c].info, k, live_timeout, res, sizeof(res));
			add(&cols[c], probe_live_names[k], "%s", res);
		}
		probe_put_matrix(rt, cols[c].info, live_timeout, add_row, &cols[c]);
	}
	if (rt->rank != 0)
		return EFAB_OK;
	if (o->json)
		probe_print_json(stdout, cols, n);
	else
		probe_print_table(cols, n, o->verbose);
	return o->csv[0] ? probe_write_csv(o->csv, cols, n) : EFAB_OK;
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
