/* efab_probe --diff's two sides, as probe_diff_load.c reads them from a
 * --json output or a --csv long-format file; probe_diff.c matches and
 * compares them (private to bench/tools/probe_diff*.c). */
#ifndef PROBE_DIFF_H
#define PROBE_DIFF_H

#include <stddef.h>

typedef struct dprop {
	char *name, *value;
} dprop_t;

typedef struct dcol {
	char *key[3]; /* provider, fabric, domain */
	dprop_t *p;
	size_t n, cap;
	long peer;       /* the matched column on the other side, -1 none */
	int by_position; /* matched by position: the domains differ in the NIC name only */
} dcol_t;

typedef struct dside {
	const char *path;
	const char *format; /* "JSON" or "CSV" */
	dcol_t *c;
	size_t n, cap;
	char err[700];
} dside_t;

/* Reads s->path into s (either format, told apart by the content); -1 with
 * s->err saying where and what is wrong. */
int probe_diff_load(dside_t *s);
void probe_dside_free(dside_t *s);
/* The value of property name in column c, NULL where it has none. */
const char *dcol_get(const dcol_t *c, const char *name);
/* "provider/fabric/domain" (a static buffer; the last two calls' stay valid) */
char *dcol_key(const dcol_t *c);

#endif
