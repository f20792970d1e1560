/* libFuzzer target: the sweep config parser and the matrix expansion. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_config.h"
#include "efab_opts.h"
#include "rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	efab_config_t cfg;
	efab_job_t *jobs = NULL;
	size_t n = 0;
	char err[1024];
	if (size > 16384)
		return 0;
	err[0] = '\0';
	if (efab_config_parse((const char *)data, size, "fuzz.conf", &cfg, err, sizeof(err))) {
		if (strncmp(err, "fuzz.conf", 9))
			abort(); /* every refusal names the file (and line) */
		return 0;
	}
	if (efab_config_expand(&cfg, efab_bench_rows, efab_n_bench_rows, &jobs, &n, err,
			       sizeof(err)) == EFAB_OK) {
		for (size_t i = 0; i < n; i++) {
			if (!jobs[i].name[0] || !jobs[i].row || jobs[i].row->no_sweep ||
			    efab_bench_row_find(efab_bench_rows, efab_n_bench_rows, jobs[i].bench) !=
				    jobs[i].row ||
			    jobs[i].argc >= EFAB_JOB_MAXARGS || jobs[i].np < 1)
				abort();
			for (int a = 0; a < jobs[i].argc; a++)
				if (!jobs[i].argv[a])
					abort();
		}
		efab_jobs_free(jobs, n);
	} else if (strncmp(err, "fuzz.conf", 9)) {
		abort();
	}
	efab_config_free(&cfg);
	return 0;
}
