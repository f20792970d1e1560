/* libFuzzer target: the option table parser (getopt_long over the table). The
 * input is split into argv words at NUL and newline bytes; its first byte
 * picks the benchmark row. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_opts.h"
#include "rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[1024], err[512], *argv[64];
	int argc = 0;
	efab_opts_t o;
	if (size < 1 || size >= sizeof(buf))
		return 0;
	unsigned options = efab_bench_rows[data[0] % efab_n_bench_rows].options;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	argv[argc++] = "fuzz";
	char *p = buf, *end = buf + size - 1;
	while (p < end && argc < 63) {
		argv[argc++] = p;
		while (p < end && *p && *p != '\n')
			p++;
		*p++ = '\0';
	}
	argv[argc] = NULL;
	efab_opts_init(&o);
	err[0] = '\0';
	int rc = efab_opts_parse(&o, options, argc, argv, err, sizeof(err));
	if (rc == EFAB_EUSAGE && !err[0])
		abort();
	if (rc == EFAB_PARSE_OK) {
		if (o.sizes.min < 1 || o.sizes.min > o.sizes.max || o.window < 1 || o.window > 65536 ||
		    !(o.timeout_s >= 0.01 && o.timeout_s <= 86400) || o.mem_local < 0 ||
		    o.mem_local >= EFAB_MEM_N_KINDS || o.mem_remote < 0 ||
		    o.mem_remote >= EFAB_MEM_N_KINDS || memchr(o.provider, 0, sizeof(o.provider)) == NULL ||
		    memchr(o.csv, 0, sizeof(o.csv)) == NULL)
			abort();
	}
	return 0;
}
