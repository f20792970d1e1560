/* Sweep configs: INI files (fio-like). [global] plus one section per job;
 * keys are the benchmarks' long option names, validated through the same
 * option table as the command line, plus runner keys. Parsing and expansion
 * are pure (no I/O besides reading the text) so they are unit-tested and
 * fuzzed. */
#ifndef EFAB_CONFIG_H
#define EFAB_CONFIG_H

#include <stddef.h>

#include "efab_opts.h"

#define EFAB_CFG_KEY 64
#define EFAB_CFG_VAL 512

typedef struct efab_kv {
	char key[EFAB_CFG_KEY];
	char value[EFAB_CFG_VAL];
	int line;
} efab_kv_t;

typedef struct efab_section {
	char name[EFAB_CFG_KEY];
	int line;
	efab_kv_t *kv;
	size_t nkv;
} efab_section_t;

typedef struct efab_config {
	char path[256];
	efab_section_t *sec;
	size_t nsec;
	/* Who runs the jobs, as messages name it (the caller sets it after
	 * parsing; NULL: "the sweep"). */
	const char *runner;
} efab_config_t;

/* Parse INI text. EFAB_OK, or EFAB_EUSAGE with "path:line: reason" in err. */
int efab_config_parse(const char *text, size_t len, const char *path, efab_config_t *out,
		      char *err, size_t errlen);
void efab_config_free(efab_config_t *cfg);

#define EFAB_JOB_MAXARGS 64
#define EFAB_JOB_MAXENV 16

/* One command to run. */
typedef struct efab_job {
	char name[160];      /* section[key=value,...] */
	char section[EFAB_CFG_KEY];
	char bench[32];      /* the benchmark's executable (its row's name) */
	const efab_bench_row_t *row; /* the benchmark: its options, whether it needs MPI */
	int rep;             /* 1..repeat */
	int np, ppn, nodes;
	int mpi;             /* launched through the launcher (the row's default; key 'launcher') */
	double timeout_s;    /* whole job */
	char launcher[EFAB_CFG_VAL]; /* template, expanded */
	char *argv[EFAB_JOB_MAXARGS]; /* bench options: --key value ... (owned) */
	int argc;
	char env[EFAB_JOB_MAXENV][EFAB_CFG_VAL]; /* NAME=VALUE */
	int nenv;
	/* key 'libfabric': the install this job runs against (a prefix whose lib/,
	 * lib64/ or lib/<triplet>/ holds libfabric.so.1, or that directory), as
	 * given; "" = the libfabric the benchmarks load by default. The sweep
	 * sets LD_LIBRARY_PATH for the job and forwards it to every rank. */
	char libfabric[EFAB_CFG_VAL];
	int libfabric_line; /* config line of the key, for messages */
} efab_job_t;

/* Expand the matrix and repeats into jobs, in run order: repeat outermost
 * (A B A B, not A A B B), then sections in file order, then matrix
 * combinations. A 'libfabric' list is always crossed (each job once per
 * install); unless 'matrix' names it, it varies fastest, so the installs of
 * one job run back to back. 'bench' names one of rows[0..nrows) (not one
 * marked no_sweep); every value goes through the option table, as an option
 * of that row. EFAB_OK, or EFAB_EUSAGE with "path:line: key 'k': reason" in
 * err. */
int efab_config_expand(const efab_config_t *cfg, const efab_bench_row_t *rows, size_t nrows,
		       efab_job_t **jobs, size_t *njobs, char *err, size_t errlen);
void efab_jobs_free(efab_job_t *jobs, size_t n);

#endif
