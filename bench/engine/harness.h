/* The MPI harness shared by every benchmark executable. A benchmark is a row
 * (efab_bench_t): what it needs from the fabric and a function that measures
 * one size. The harness does options, fabric bring-up, memory, keys, the size
 * loop, output and exit codes. */
#ifndef EFAB_HARNESS_H
#define EFAB_HARNESS_H

#include "efab.h"
#include "efab_fabric.h"
#include "efab_mem.h"
#include "efab_opts.h"
#include "efab_result.h"
#include "efab_stats.h"
#include "efab_topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efab_ctx efab_ctx_t;

typedef struct efab_bench {
	const char *name;    /* executable name */
	const char *csv_name; /* value of the 'bench' column */
	unsigned mask;       /* EFAB_B_* */
	const char *summary; /* first lines of --help */
	const char *definition; /* the metric, printed in the header block */
	int default_op;
	unsigned ops;        /* allowed ops, bit (1 << EFAB_OP_*) */
	int exact_ranks;     /* 2: exactly two ranks; 0: an even number >= 2; -1: any number >= 2 */
	int show_lat, show_bw;
	const char *const *extra_cols;
	size_t n_extra;
	/* Region bytes per rank for the largest size (default: 4 * max size). */
	size_t (*region)(const efab_ctx_t *c, uint64_t max_size);
	/* Once, after keys are exchanged; may add header notes. */
	int (*setup)(efab_ctx_t *c);
	/* Measure one size; fill row (rank 0's row is printed). Returns efab_status;
	 * errors here end the job (MPI_Abort), validation mismatches go to row->errors. */
	int (*run)(efab_ctx_t *c, uint64_t size, efab_row_t *row);
	void (*teardown)(efab_ctx_t *c);
	/* Optional, collective: before fabric selection, may narrow the request
	 * (efab_scan gives each rank its own NIC). */
	int (*plan)(efab_ctx_t *c, efab_fabric_req_t *req);
	/* Optional: replaces the size loop, the table and the CSV rows (efab_scan
	 * pairs ranks itself, round by round); returns the exit status. */
	int (*drive)(efab_ctx_t *c);
} efab_bench_t;

#define EFAB_MAX_NOTES 12

struct efab_ctx {
	const efab_bench_t *b;
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
	efab_rkey_t *rkeys; /* by rank */
	void *ldesc;        /* desc to pass for local buffers (NULL with --src-unregistered) */
	uint64_t seq;       /* runs across sizes, so stale data never matches */
	int use_inject;     /* per size, set by the bench */
	double *samples;
	size_t max_samples;
	efab_run_info_t ri;
	efab_topo_t topo;
	int have_topo;
	efab_pairing_t pairing;
	char notes[EFAB_MAX_NOTES][256];
	size_t nnotes;
	/* Test hooks from the environment, read once at start (efab_faults_read):
	 * the tests prove that checks, limits and timeouts work. */
	struct efab_faults {
		uint64_t corrupt_every; /* EFAB_FAULT_CORRUPT=N: every Nth checked message damaged */
		int inject_rma_set;     /* EFAB_FAULT_INJECT_RMA=N: act as if the endpoint's */
		uint64_t inject_rma;    /* RMA inject limit were N (efa-direct's is 0) */
		int stall_rank;         /* EFAB_FAULT_STALL=R: rank R stops answering; -1 none */
	} faults;
	uint64_t nverified;
	uint64_t late; /* messages whose bytes landed after their tag */
	efab_row_t *more_rows; /* rows after the main one (--per-pair), rank 0 */
	size_t n_more_rows;
	uint8_t *bounce;     /* host staging for fills/checks of GPU memory */
	double own_bw_MBps, own_Mops; /* this rank's figures in the last bandwidth run (0: passive) */
	/* rank 0: the nodes of the job and what differs between them ("" if nothing) */
	int nnodes;
	char nodes_summary[512];
	char nodes_mismatch[512];
	void *priv; /* the bench's own state */
};

int efab_bench_main(int argc, char **argv, const efab_bench_t *b);

/* The MPI implementation of the runtime (after MPI_Init). */
int efab_mpi_rt_init(efab_rt_t *rt);
/* Collective over parent: a runtime over the ranks that gave the same color
 * (MPI_Comm_split); a rank with color < 0 gets an empty one (impl NULL,
 * size 0). local_rank/local_size stay the parent's. */
int efab_mpi_rt_sub(const efab_rt_t *parent, int color, efab_rt_t *sub);
void efab_mpi_rt_sub_free(efab_rt_t *sub);
/* A barrier that sleeps while it waits (1 ms polls): for ranks with no
 * traffic to drive, so that they leave the cores to those measuring. EFAB_ERR
 * after timeout_s. */
int efab_mpi_idle_barrier(efab_rt_t *rt, double timeout_s);

/* Header note, printf-style. */
void efab_note(efab_ctx_t *c, const char *fmt, ...) EFAB_PRINTF(2, 3);

/* Iterations and warmup for size: -n/-w as given, else 1000/50 scaled down
 * linearly above 64 KiB (at least 20 and 2). */
uint64_t efab_iters_for(const efab_ctx_t *c, uint64_t size);
uint64_t efab_warmup_for(const efab_ctx_t *c, uint64_t size);

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

/* Queue a row to print after this size's main row (rank 0 only). */
int efab_more_row(efab_ctx_t *c, const efab_row_t *row);

/* A runtime failure inside a measurement: the peer may be blocked on us, so
 * the job ends now (MPI_Abort), exit 1. */
void efab_fail(efab_ctx_t *c) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
