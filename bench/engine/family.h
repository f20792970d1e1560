/* An operation family: what an operation supplies to the engine (one
 * struct of callbacks per family, bench/ops/), and the registry that maps a
 * row's family field to it (families.c). The callbacks receive the context
 * (context.h) and hand the patterns their operation (pattern.h); the
 * lifecycle (harness.c) calls them through c->fam. */
#ifndef EFAB_FAMILY_H
#define EFAB_FAMILY_H

#include "context.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every callback is optional. */
typedef struct efab_family {
	/* before anything opens, every rank (rank 0 speaks): defaults and checks
	 * that need the family's knowledge; may allocate c->priv */
	int (*check_opts)(efab_ctx_t *c);
	/* collective, before fabric selection: may narrow the request */
	int (*plan)(efab_ctx_t *c, efab_fabric_req_t *req);
	/* region bytes per rank for the largest size (default 4 x max size) */
	size_t (*region)(const efab_ctx_t *c, uint64_t max_size);
	/* once, after keys are exchanged: limits, header notes */
	int (*setup)(efab_ctx_t *c);
	/* the value of the 'op' column */
	void (*op_label)(const efab_ctx_t *c, char *buf, size_t len);
	/* the operation under the row's pattern (pattern.h) */
	const efab_pingpong_ops_t *(*pingpong)(const efab_ctx_t *c);
	const efab_stream_ops_t *(*stream)(const efab_ctx_t *c);
	/* replaces the size loop, the table and the CSV rows (efab_scan pairs
	 * ranks itself, round by round); returns the exit status */
	int (*drive)(efab_ctx_t *c);
	void (*teardown)(efab_ctx_t *c);
} efab_family_t;

/* The families (bench/ops/): each executable's main hands its own to
 * efab_bench_main (harness.h), so a binary links only the family it runs. */
extern const efab_family_t efab_family_rma, efab_family_atomic, efab_family_connect,
	efab_family_scan;

#ifdef __cplusplus
}
#endif

#endif
