/* libFuzzer target: the size-list parser ("MIN:MAX[:xF]", K/M/G/T suffixes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[256], err[256];
	efab_sizes_t r;
	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (efab_sizes_parse(s, &r, err, sizeof(err)) != EFAB_OK) {
		if (!err[0])
			abort(); /* every refusal says why */
		return 0;
	}
	/* what the benchmarks rely on */
	if (r.min < 1 || r.min > r.max || r.max > EFAB_SIZE_LIMIT || r.factor < 2)
		abort();
	size_t n = efab_sizes_count(&r);
	if (n < 1 || n > 64)
		abort();
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = efab_sizes_at(&r, i);
		char b[32];
		if (v <= prev || v > r.max)
			abort();
		efab_size_str(v, b, sizeof(b));
		prev = v;
	}
	return 0;
}
