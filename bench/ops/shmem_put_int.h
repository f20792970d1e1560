/* efab_shmem_lat / efab_shmem_bw's own interface (private to
 * bench/ops/shmem_put*.cc): the run's state (struct shput), the watchdog and
 * the sizes' measurements of shmem_put_time.cc that shmem_put.cc (options,
 * bring-up, set-up, the header, the size loop, the main) calls. C++ because
 * NVSHMEM's headers are. */
#ifndef SHMEM_PUT_INT_H
#define SHMEM_PUT_INT_H

#include <atomic>
#include <stdint.h>

#include <cuda_runtime.h>
#include <nvshmem.h>

#include "efab_fitrace.h"
#include "efab_nvtune.h"
#include "runtime.h"

namespace efab_shput
{

/* stream bandwidth: windows whose events are in flight before the host reads
 * their times (a full ring costs one wait for the oldest window) */
enum { RING = 256 };

struct shput {
	const efab_bench_row_t *row;
	efab_opts_t o;
	efab_runtime_t run;
	efab_rt_t *rt;
	int bw;   /* efab_shmem_bw: windows; else one operation at a time */
	int init; /* PE 0: issues every operation */
	int peer;
	int gpu;
	int put;        /* -o put or put-signal (else get) */
	int sig;        /* -o put-signal: each put adds 1 to sigw at PE 1 (NVSHMEM_SIGNAL_ADD) */
	uint64_t *sigw; /* the signal word: nvshmem_malloc(8), PE 1's is the target */
	uint64_t sig_expect;            /* -c: what PE 1's word must hold after this iteration */
	uint64_t sig_ops, signal_every; /* put-signals issued; EFAB_FAULT_SIGNAL */
	int nbi;          /* efab_shmem_lat --nbi: the _nbi form + the quiet (bandwidth: always) */
	int on_stream;    /* --initiator stream, or a kernel initiator (its stream and events) */
	int kern;         /* --initiator thread|warp|block: efab_shk_args.group + 1 */
	unsigned threads; /* the kernel's CTA */
	unsigned long long *dt, *ht; /* kernel: device times (ns), on the GPU and a host copy */
	size_t dcap;                 /* their entries */
	double tick_ns;              /* %globaltimer's smallest step seen */
	int shk_up;                  /* NVSHMEM started by efab_shk_init */
	int check;                   /* -c */
	uint64_t window;             /* operations per window (1 for latency) */
	size_t span;                 /* bytes of the local buffer and of the heap */
	uint8_t *local;              /* PE 0's buffer; NULL on PE 1 */
	uint8_t *heap;               /* nvshmem_malloc(span): PE 1's is the target */
	int heap_host; /* the heap is host memory (SYSMEM): read and written by the CPU */
	int registered;
	uint8_t *bounce; /* -c: host staging of fills and checks (span bytes) */
	cudaStream_t st;
	cudaEvent_t e0, e1; /* around one iteration, the batch, or an unmeasured window */
	cudaEvent_t ws[RING], we[RING]; /* measured windows on a stream: start and end */
	cudaEvent_t loop0;              /* before the first measured window */
	int events;                     /* they were created */
	uint64_t wi, harvested;         /* measured windows enqueued, and their times read */
	double *ev_out; /* where post() puts a stream iteration's event time, or NULL */
	uint64_t seq;   /* message number, alike on both PEs, across sizes */
	uint64_t corrupt_every, nverified;
	uint64_t errors;           /* this size's mismatches on this PE */
	uint64_t size;             /* the size being measured */
	double *samples, *host_us; /* n each */
	size_t cap;
	efab_fitrace_read_fn trace;
	efab_run_info_t ri;
	efab_table_t table; /* rank 0: the terminal table's columns */
	efab_csv_t csv;
	char nv_version[32], transport[96], fab[128], mrm[32], heap_kind[32];
	int nv_maj,
		nv_min; /* nvshmem_info_get_version: the OpenSHMEM spec's (1.3), not NVSHMEM's */
	char nv_name[NVSHMEM_MAX_NAME_LEN];
	int nv_known[EFAB_NV_N_KNOBS]; /* the knobs an NVSHMEM library of this run reads */
};

/* ---- shmem_put_time.cc ---- */

/* The watchdog (-t): the stage being run, for its message; its limit. */
extern std::atomic<const char *> wd_stage;
extern double wd_timeout;
/* Each PE's loops name their stage and size (and beat per iteration). */
void stage(const char *what, uint64_t size);
/* The watchdog thread: a beat missing for wd_timeout seconds ends the process. */
void *watchdog(void *);
/* One size: its rows (the aggregate's extra columns through row_set). */
int lat_size(shput *s, efab_row_t *row);
int bw_size(shput *s, efab_row_t *row);
void row_set(const shput *s, efab_row_t *row, const char *name, const char *fmt, ...)
	EFAB_PRINTF(4, 5);

} // namespace efab_shput

#endif
