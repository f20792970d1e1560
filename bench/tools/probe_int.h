/* efab_probe's own interface (private to bench/tools/probe*.c): the column,
 * one provider/fabric/domain as a list of property/value pairs, and the parts
 * that fill and print it. probe.c (the main) calls each part; the parts call
 * nothing of each other:
 *   probe_caps.c    the capability matrix (fi_getinfo, the NIC, the stack)
 *   probe_live.c    --live: each operation really run between two ranks
 *   probe_put.c     --live's put matrix (probe_put.h)
 *   probe_print.c   the writers: table, JSON, CSV (long format)
 *   probe_diff.c    --diff (probe_diff.h: the outputs it reads back) */
#ifndef PROBE_INT_H
#define PROBE_INT_H

#include <stdarg.h>
#include <stdio.h>
#include <rdma/fabric.h>

#include "efab.h"
#include "efab_rt.h"

#define MAX_COLS 64
#define MAX_PROPS 80

typedef struct prop {
	char name[32];
	char value[1024];
} prop_t;

typedef struct column {
	struct fi_info *info; /* dup */
	prop_t props[MAX_PROPS];
	size_t nprops;
	char verdict[512];
} column_t;

/* A property of the column (dropped past MAX_PROPS). */
static inline void add(column_t *c, const char *name, const char *fmt, ...) EFAB_PRINTF(3, 4);
static inline void add(column_t *c, const char *name, const char *fmt, ...)
{
	if (c->nprops >= MAX_PROPS)
		return;
	prop_t *p = &c->props[c->nprops++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->value, sizeof(p->value), fmt, ap);
	va_end(ap);
}

/* probe_caps.c: every static property of the column and its verdict */
void probe_describe(column_t *col);

/* probe_live.c: the live tests, in this order (probe_live_names: their rows) */
enum { LIVE_PUT, LIVE_PUT_UNREG, LIVE_WRITEDATA, LIVE_READ, LIVE_ATOMIC, LIVE_N };
extern const char *const probe_live_names[LIVE_N];
void probe_live_one(efab_rt_t *rt, const struct fi_info *col, int which, double timeout,
		    char *result, size_t rlen);

/* probe_print.c */
void probe_print_table(column_t *cols, size_t n, int verbose);
void probe_print_json(FILE *f, column_t *cols, size_t n);
int probe_write_csv(const char *path, column_t *cols, size_t n);

/* probe_diff.c: efab_probe --diff A B [--json] (no MPI, no libfabric calls) */
int probe_diff_main(int argc, char **argv);

#endif
