/* The engine's bottom rung: the context every part of a benchmark reads and
 * writes (efab_ctx_t), and what every part does with it: header notes, the
 * size's row cells and extra rows, the payload pattern and its checks, the
 * job's end on a failure. It includes lib/ headers only; nothing here calls
 * a pattern, the evidence, an operation family or the lifecycle (harness.c)
 * — they call it (tests/layers.conf). */
#ifndef EFAB_CONTEXT_H
#define EFAB_CONTEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "efab.h"
#include "efab_endpoint.h"
#include "efab_hwc.h"
#include "faults.h"
#include "efab_mem.h"
#include "efab_ops.h"
#include "efab_opts.h"
#include "efab_registration.h"
#include "efab_result.h"
#include "efab_rt.h"
#include "efab_select.h"
#include "efab_stats.h"
#include "efab_topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efab_ctx efab_ctx_t;
/* Defined above this rung: a row's operation family (family.h) and a
 * stream's callbacks (pattern.h). The context holds pointers to them. */
struct efab_family;
struct efab_stream_ops;

#define EFAB_MAX_NOTES 24
/* The stream's confirm area past the family's region: 4 flag slots and 4
 * spare words, then 8 credit words the peer writes, then 8 sources of this
 * rank's own credit returns (rma.c) */
#define EFAB_CONFIRM_BYTES 192

struct efab_ctx {
	const efab_bench_row_t *row;
	const struct efab_family *fam;
	efab_opts_t o;
	efab_rt_t *rt;
	efab_fabric_t fab;
	int op;
	/* pairing: ranks [0, N) initiate towards [N, 2N) */
	int npairs, pair, peer, initiator;
	int mem_kind; /* this rank's kind */
	int gpu;      /* CUDA ordinal in use, -1 none */
	efab_mem_t mem;
	efab_mr_t mr;
	char reg_path[24];  /* the path libfabric reported for mr (bench/cli/reglog.c) */
	efab_rkey_t *rkeys; /* by rank */
	void *ldesc;        /* desc to pass for local buffers (NULL with --src-unregistered) */
	uint64_t seq;       /* runs across sizes, so stale data never matches */
	int use_inject;     /* per size, set by the family's begin */
	double *samples;    /* the pattern's, this size */
	/* software cost per operation (ns) of each sampled iteration or measured
	 * window: in the post calls, and per completion in the CQ reads that
	 * returned some (pattern.c; their medians go into the row) */
	double *cost_post, *cost_poll;
	size_t ncost_post, ncost_poll;
	uint64_t planned;   /* stream: windows every initiator posts this size (0: not known) */
	/* efab_scan: a fabric failure (timeout, completion error) ends the
	 * measurement on this rank, never the job (tolerate): the pattern stops
	 * its operations, still joins every collective of the size, and the row
	 * says failed. failed: it happened here; set before a pattern runs it
	 * means this rank must not post (its pair failed already). budget:
	 * --time is a deadline for the size's windows (posting stops once it has
	 * passed), not a calibrated count. */
	int tolerate, failed, budget;
	size_t max_samples;
	efab_run_info_t ri;
	efab_topo_t topo;
	int have_topo;
	efab_pairing_t pairing;
	efab_table_t table; /* rank 0: the terminal table's columns (harness.c) */
	char notes[EFAB_MAX_NOTES][512];
	size_t nnotes;
	unsigned char note_brief[EFAB_MAX_NOTES]; /* shown at default verbosity too */
	efab_faults_t faults; /* the test hooks (faults.h), read once at start */
	uint64_t nverified;
	uint64_t late; /* messages whose bytes landed after their tag */
	uint64_t late_bytes; /* their bytes not there when the tag was (CPU check) */
	uint64_t late_row, late_bytes_row; /* late, late_bytes at the last row (pattern.c) */
	efab_row_t *more_rows; /* rows after the main one (--per-pair), rank 0 */
	size_t n_more_rows;
	uint8_t *bounce;     /* host staging for fills/checks of GPU memory */
	double own_bw_MBps, own_Mops; /* this rank's figures in the last bandwidth run (0: passive) */
	const struct efab_stream_ops *stream_ops; /* the stream of the size being measured */
	/* EFAB_CONFIRM_BYTES past the family's region, 64-aligned and zeroed:
	 * where a stream's confirm exchanges its end flags and its target
	 * returns credits (rma.c) */
	size_t confirm_off;
	/* rank 0: the nodes of the job and what differs between them ("" if nothing) */
	int nnodes;
	char nodes_summary[512];
	char nodes_mismatch[512];
	/* proof of path (evidence.c): this rank's NIC counters around a
	 * pattern's timed phase */
	struct efab_evidence {
		int on;   /* counters are read in this run (some rank has them, not tolerant) */
		int have; /* this rank's NIC has a counter directory */
		efab_hwc_t h;
		efab_hwc_snap_t before, delta;
		int settled; /* both snapshots settled (two reads agreed) */
		char note[64];
	} ev;
	void *priv; /* the family's own state */
	struct efab_gda_run *gda; /* --initiator gpu (gda.c) */
};

/* ---- notes and rows ---- */

/* Header note, printf-style (at most EFAB_MAX_NOTES; later ones are dropped). */
void efab_note(efab_ctx_t *c, const char *fmt, ...) EFAB_PRINTF(2, 3);
/* The same, also in the short default header: a mode that changes what is
 * measured (warnings, beginning "WARNING", are there anyway). */
void efab_note_brief(efab_ctx_t *c, const char *fmt, ...) EFAB_PRINTF(2, 3);

/* Set the row's column called name, if the run's columns (c->ri) have one. */
void efab_row_set(const efab_ctx_t *c, efab_row_t *row, const char *name, const char *fmt, ...)
	EFAB_PRINTF(4, 5);
/* The same on the columns ri (a program without a context: efab_shmem_lat/bw). */
void efab_row_vset(const efab_run_info_t *ri, efab_row_t *row, const char *name, const char *fmt,
		   va_list ap) EFAB_PRINTF(4, 0);

/* The terminal table's columns into c->table (--columns, all at -v, else the
 * row's table_cols with pair under --per-pair and path where NIC counters
 * are read; "all" leaves out what cannot apply to the run: the GPU
 * initiator's columns on a CPU run, lat_lower_bound where the provider
 * reports no MTU, late_* without -c). EFAB_EUSAGE: a name the run lacks. */
int efab_table_columns(efab_ctx_t *c, char *err, size_t errlen);
/* Rank 0: the header above the table (at default verbosity at most a few
 * short lines: what ran (op), on what, the row's brief, any warning; at -v
 * every note), then the column names. */
void efab_table_header(efab_ctx_t *c, const char *op, const char *const *notes, size_t nnotes);

/* Queue a row to print after this size's main row (rank 0 only). */
int efab_more_row(efab_ctx_t *c, const efab_row_t *row);

/* A runtime failure inside a measurement: the peer may be blocked on us, so
 * the job ends now (c->rt->abort: MPI_Abort), exit 1. */
void efab_fail(efab_ctx_t *c) __attribute__((noreturn));

/* ---- the payload ---- */

/* Payload pattern: byte j of message seq. */
static inline uint8_t efab_pattern(uint64_t seq, size_t j)
{
	return (uint8_t)((seq * 131u + j * 7u + (j >> 8) * 13u) & 0xff);
}
/* Last-byte tag for message seq: never 0, differs from seq +- 1 and +- 2. */
static inline uint8_t efab_tag(uint64_t seq)
{
	return (uint8_t)(seq % 255u + 1u);
}

/* Fill local region [off, off+len) with pattern seq and the tag in the last
 * byte; count mismatches of the same against the region. Work on any memory
 * kind (GPU through a bounce buffer). */
int efab_fill(efab_ctx_t *c, size_t off, size_t len, uint64_t seq);
uint64_t efab_verify(efab_ctx_t *c, size_t off, size_t len, uint64_t seq);
/* The same for data whose arrival was detected by its last byte: bytes still
 * landing get a bounded moment (counted in ctx->late) before they count. */
uint64_t efab_verify_settled(efab_ctx_t *c, size_t off, size_t len, uint64_t seq);

static inline uint8_t *efab_local(efab_ctx_t *c, size_t off)
{
	return (uint8_t *)c->mem.ptr + off;
}
static inline uint64_t efab_raddr(efab_ctx_t *c, int rank, size_t off)
{
	return c->rkeys[rank].base + off;
}

#ifdef __cplusplus
}
#endif

#endif
