/* efab_probe's writers: the table (LABEL_W + COL_W columns, wrapped by
 * fabric, then --live's put matrix), JSON and CSV (long format:
 * provider,fabric,domain,property,value). probe_diff_load.c reads the last
 * two back. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "efab_json.h"
#include "efab_result.h"
#include "probe_put.h"
#include "hostfacts.h"
#include "rows.h"
#include "probe_int.h"

#define LABEL_W 22
#define COL_W 24

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
			       "force), the outcome.\n",
			       PROBE_PUT_BYTES);
		printf("\n%s/%s/%s (hints naming no fabric get: with FI_MR_LOCAL %s, without %s)\n",
		       i->fabric_attr->prov_name, i->fabric_attr->name, i->domain_attr->name, first,
		       first_no);
		printf("  %-5s %-12s %-13s %s\n", "mem", "FI_MR_LOCAL", "source",
		       "fabric: outcome");
		for (size_t k = 0; k < probe_put_nrows; k++) {
			const probe_put_row_t *r = &probe_put_rows[k];
			const char *v = col_prop(&cols[c], r->name);
			printf("  %-5s %-12s %-13s %s\n", efab_mem_name(r->mem),
			       r->mr_local ? "in hints" : "not in hints",
			       r->registered ? "registered" : "unregistered", v ? v : "-");
		}
	}
}

/* A line of at most 120 characters: longer text is folded at spaces, the
 * continuation indented by two (verbose: one line, whatever its length). */
static void print_folded(int verbose, const char *fmt, ...)
{
	char text[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	efab_fold(stdout, "", "  ", verbose ? INT_MAX : 120, text);
}

/* A cell of the matrix: cut to COL_W - 1 characters, a cut one ending in
 * '~' (--json and --csv hold every value whole). */
static void print_cell(const char *v)
{
	if ((int)strlen(v) > COL_W - 1)
		printf(" %.*s~", COL_W - 2, v);
	else
		printf(" %-*s", COL_W - 1, v);
}

void probe_print_table(column_t *cols, size_t n, int verbose)
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
				print_cell(v);
			}
			printf("\n");
		}
		printf("\n");
	}
	for (size_t c = 0; c < n; c++)
		print_folded(verbose, "verdict (provider %s, domain %s) %s",
			     cols[c].info->fabric_attr->prov_name, cols[c].info->domain_attr->name,
			     cols[c].verdict);
	/* each NIC's counters once (its fabrics share them) */
	for (size_t c = 0; c < n; c++) {
		const char *dev = cols[c].info->nic && cols[c].info->nic->device_attr
					  ? cols[c].info->nic->device_attr->name
					  : NULL;
		int seen = 0;
		for (size_t q = 0; q < c && dev && !seen; q++)
			seen = cols[q].info->nic && cols[q].info->nic->device_attr &&
			       cols[q].info->nic->device_attr->name &&
			       !strcmp(cols[q].info->nic->device_attr->name, dev);
		for (size_t p = 0; dev && !seen && p < cols[c].nprops; p++)
			if (!strcmp(cols[c].props[p].name, "hw_counters") &&
			    strcmp(cols[c].props[p].value, "-"))
				print_folded(verbose, "hw_counters of %s: %s", dev,
					     cols[c].props[p].value);
		for (size_t p = 0; dev && !seen && p < cols[c].nprops; p++)
			if (!strcmp(cols[c].props[p].name, "hw_counter_names") &&
			    strcmp(cols[c].props[p].value, "-"))
				print_folded(verbose, "hw_counter_names of %s: %s", dev,
					     cols[c].props[p].value);
	}
	for (size_t c = 0; c < n; c++)
		for (size_t p = 0; p < cols[c].nprops; p++)
			if (!strncmp(cols[c].props[p].name, "live_", 5) &&
			    !probe_put_is_row(cols[c].props[p].name) &&
			    strcmp(cols[c].props[p].value, "OK"))
				print_folded(verbose, "%s %s/%s: %s", cols[c].props[p].name,
					     cols[c].info->fabric_attr->prov_name,
					     cols[c].info->fabric_attr->name,
					     cols[c].props[p].value);
	print_put_matrix(cols, n);
}

void probe_print_json(FILE *f, column_t *cols, size_t n)
{
	fprintf(f, "{\"efabench\": \"%s\", \"host\": {", EFAB_VERSION);
	efab_host_facts_json(f, "", ", "); /* the node it ran on (efab_sweep's meta.json) */
	fprintf(f, "}, \"fabrics\": [");
	for (size_t c = 0; c < n; c++) {
		fprintf(f, "%s\n  {", c ? "," : "");
		for (size_t p = 0; p < cols[c].nprops; p++)
			efab_json_kv(f, p ? ", " : "", cols[c].props[p].name,
				     cols[c].props[p].value);
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
}

int probe_write_csv(const char *path, column_t *cols, size_t n)
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
