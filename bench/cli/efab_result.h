/* Results are a struct; the human table and the CSV are separate writers. */
#ifndef EFAB_RESULT_H
#define EFAB_RESULT_H

#include <stdint.h>
#include <stdio.h>

#include "efab_opts.h"
#include "efab_stats.h"

struct fi_info;

#ifdef __cplusplus
extern "C" {
#endif

/* mr_reg and shmem_reg use 19; traffic rows up to 13 of their own plus the
 * 51 of the proof of path (bench/engine/evidence.c) */
#define EFAB_MAX_EXTRA 72

/* What is constant across the rows of one run. */
typedef struct efab_run_info {
	char run_id[96];
	char timestamp[32]; /* ISO 8601 UTC */
	char bench[32];
	char provider[64];
	char fabric[128];
	char domain[128];
	char libfabric_version[32]; /* running (fi_version) */
	char provider_version[32];
	/* what was asked (-p/-f as given, "" = not asked); series across runs and
	 * libfabric versions are matched by these, not by the names returned */
	char provider_req[64];
	char fabric_req[128];
	char libfabric_built[16]; /* headers compiled against */
	char libfabric_api[16];   /* API version asked for (efab_fi_api_version) */
	char libfabric_path[512]; /* the libfabric.so.1 loaded */
	char efa_installer[32];   /* of that library's install, "" if none */
	char mem_local[16];
	char mem_remote[16];
	int ranks;
	/* bench-specific columns after the common ones (documented in docs/csv.md) */
	const char *extra_cols[EFAB_MAX_EXTRA];
	size_t n_extra;
} efab_run_info_t;

typedef struct efab_row {
	char op[32];
	int pairs;
	uint64_t window;
	uint64_t size;
	uint64_t iters;
	int has_lat;
	efab_stats_t lat; /* microseconds */
	int has_bw;
	double bw_MBps;       /* 10^6 bytes per second */
	double msg_rate_Mops; /* 10^6 operations per second */
	uint64_t errors;
	int failed; /* a rank's fabric failed during it (efab_scan's tolerant runs only) */
	char extra[EFAB_MAX_EXTRA][64]; /* "" = empty cell */
} efab_row_t;

/* Record the request (-p/-f as given; NULL or "" = not asked). What the run
 * ran on comes from libfabric: efab_run_info_from_fi and friends (efab_select.h). */
void efab_run_info_request(efab_run_info_t *ri, const char *provider, const char *fabric);
/* The start of every run's info: bench (the CSV name), ranks, run_id and
 * timestamp. */
void efab_run_info_begin(efab_run_info_t *ri, const char *bench, int ranks);

/* Fill run_id (EFAB_RUN_ID from the environment, else time-host-pid) and timestamp. */
void efab_run_info_stamp(efab_run_info_t *ri);

/* CSV. The header is written once; appending to a file whose header differs
 * is refused (EFAB_EUSAGE), so a file never mixes schemas. Each row goes out
 * in one write(2) on an O_APPEND descriptor: never a torn line. Text cells
 * are quoted where they need it (a comma, quote or line break), the same
 * way in every CSV we write. */
typedef struct efab_csv {
	int fd;
	char path[4096];
} efab_csv_t;

/* The efabench CSV (schema EFAB_CSV_SCHEMA, docs/csv.md): the header of ri's
 * columns, rows from efab_row_t. A file that holds rows of another schema
 * (the same header: schema 1) is refused too. */
int efab_csv_open(const char *path, const efab_run_info_t *ri, efab_csv_t *out);
int efab_csv_write(efab_csv_t *csv, const efab_run_info_t *ri, const efab_row_t *row);
/* Any other layout (a scan's per-pair rows): header is the first line
 * without its newline; a row is ncells cells, already formatted as text
 * ("" = empty). */
int efab_csv_open_with_header(const char *path, const char *header, efab_csv_t *out);
int efab_csv_write_cells(efab_csv_t *csv, const char *const *cells, size_t ncells);
void efab_csv_close(efab_csv_t *csv);
/* The header line (without newline) for ri. */
void efab_csv_header(const efab_run_info_t *ri, char *buf, size_t len);
/* One row (with newline); returns its length, or -1 if it did not fit. */
int efab_csv_format(const efab_run_info_t *ri, const efab_row_t *row, char *buf, size_t len);
int efab_csv_format_cells(const char *const *cells, size_t ncells, char *buf, size_t len);

/* pct_of_link above this is no share of a link (payload cannot outrun its
 * port) but a reported link speed below the port's: the table prints ">100?"
 * (bench/cli/result.c), the CSV the figure. */
#define EFAB_PCT_OF_LINK_MAX 100.0

/* The header line of a run on efasim (never dropped from a header). */
#define EFAB_SIMULATED_NOTE                                                                        \
	"SIMULATED EFA device (efasim): these figures measure the simulator, never EFA hardware"

/* The last line of every default header: where the rest is. */
#define EFAB_MORE_NOTE                                                                                \
	"more: -v (every note: provenance, clock, definitions), --columns all|a,b,c; --csv FILE has " \
	"every column"

/* text folded at spaces into lines of at most width characters, the first
 * begun with first, the others with more (a word longer than a line stays
 * whole). */
void efab_fold(FILE *f, const char *first, const char *more, int width, const char *text);
/* "# " + text, folded at spaces into lines of at most 120 characters. */
void efab_header_line(FILE *f, const char *text);
/* The first lines of a default header: what ran ("efabench V: bench", with
 * ", op OP" unless op is NULL), on what (provider, fabric, domain, libfabric),
 * the memory and ranks (", pairs N" where pairs >= 0). */
void efab_table_brief_head(FILE *f, const efab_run_info_t *ri, const char *op, int pairs);
/* The default header of a table (at most a few short lines): what ran, on
 * what (provider, fabric, domain, libfabric; memory and ranks), the
 * simulated note where the provider is efasim, the caller's lines (NULL or
 * empty ones skipped: the metric's definition, warnings), then where the
 * rest is (EFAB_MORE_NOTE). -v prints efab_table_notes instead. */
void efab_table_brief(FILE *f, const efab_run_info_t *ri, const char *const *lines, size_t n);

/* The terminal table of the engine's benchmarks: its columns are chosen once
 * per run (efab_table_pick) from the built-in ones (size, op, iters, the
 * latency figures, MB/s, Mops/s, errors) and the run's extra columns, each
 * printed in a fixed width, right-aligned, units in the header's names. The
 * CSV keeps every column whatever the table shows. */
#define EFAB_TABLE_MAX (16 + EFAB_MAX_EXTRA)
typedef struct efab_table {
	size_t n;
	int col[EFAB_TABLE_MAX]; /* >= 0: a built-in column; < 0: extra column -(col + 1) */
	int width[EFAB_TABLE_MAX];
} efab_table_t;

/* spec: "" (the default: dflt), "all" (every column of the run but the NIC
 * counter details and those named in skip, comma lists) or a comma list
 * of column names (the table's or the CSV's). Names of dflt that the run
 * lacks are left out; a name of spec that it lacks is a usage error
 * (EFAB_EUSAGE, err names the columns available). */
int efab_table_pick(efab_table_t *t, const efab_run_info_t *ri, int show_lat, int show_bw,
		    const char *spec, const char *dflt, const char *skip, char *err, size_t errlen);
/* The columns a run's options ask for: --columns, else "all" at -v, else ""
 * (the default). */
const char *efab_table_spec(const efab_opts_t *o);
/* Above the rows: every note at -v (efab_table_notes), else the short header
 * with lines (efab_table_brief); then t's column names. */
void efab_table_top(FILE *f, const efab_table_t *t, const efab_run_info_t *ri, int verbose,
		    const char *const *lines, size_t nlines, const char *const *notes,
		    size_t nnotes);
/* Widen the column called name (the table's name) to at least width. */
void efab_table_width(efab_table_t *t, const efab_run_info_t *ri, const char *name, int width);
/* The header line of t's columns, then one line per row. */
void efab_table_head(FILE *f, const efab_table_t *t, const efab_run_info_t *ri);
void efab_table_line(FILE *f, const efab_table_t *t, const efab_run_info_t *ri,
		     const efab_row_t *row);
/* The header notes at -v (every note, the provenance and the clock): what
 * -v prints above the column names (efab_table_brief at default). */
void efab_table_notes(FILE *f, const efab_run_info_t *ri, const char *const *notes, size_t nnotes);

/* runinfo.c */
/* libfabric_version, _built, _api, _path and efa_installer of the running
 * library. */
void efab_run_info_libfabric(efab_run_info_t *ri);
/* What a run ran on, by name (a run on fi_info: efab_run_info_from_fi), with
 * the running libfabric as above. */
void efab_run_info_ran_on(efab_run_info_t *ri, const char *provider, const char *fabric,
			  const char *domain, const char *provider_version);
/* provider, fabric, domain, libfabric and provider versions of a run from the
 * fi_info it uses; a simulated NIC's provider version reads "206.0 simulated". */
void efab_run_info_from_fi(const struct fi_info *info, efab_run_info_t *ri);
/* The same, and what was asked (o's -p/-f): the run info of a run on info. */
void efab_run_info_fabric(efab_run_info_t *ri, const struct fi_info *info, const efab_opts_t *o);

#ifdef __cplusplus
}
#endif

#endif
