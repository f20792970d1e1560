/* efab_shmem_lat and efab_shmem_bw: NVSHMEM's own RMA, measured with the
 * rows, options, header and CSV of efab_put_lat / efab_put_bw so that its
 * rows sit beside the raw fabric's. PE 0 issues, PE 1's symmetric heap
 * (nvshmem_malloc) is the remote side; PE 0's local buffer is cuMemAlloc'd
 * (--src cuda) or malloc'd (--src host), nvshmemx_buffer_register'ed with
 * --register. NVSHMEM starts as for efab_shmem_reg (shmem_up.h: unique-id
 * bootstrap over MPI, host library only), with libefab_fitrace.so preloaded
 * for the lf_fabric / lf_mr_mode columns and the "simulated" label.
 *
 * Initiators: host (nvshmem_putmem/getmem and their _nbi forms from the CPU,
 * nvshmem_quiet) and stream (nvshmemx_*_on_stream and
 * nvshmemx_quiet_on_stream on a CUDA stream of this process, timed with
 * cudaEvents on it), and the kernel initiators (--initiator
 * thread|warp|block: bench/ops/shmem_kernels.cu, one CTA of 1, 32 or
 * --gpu-threads threads issuing nvshmem_putmem / nvshmemx_putmem_warp /
 * nvshmemx_putmem_block, the get forms, the _nbi forms in windows, thread 0
 * nvshmem_quiet), built where the Makefile finds nvcc and NVSHMEM's
 * libnvshmem_device.a (EFAB_SHMEM_KERNELS; else they exit 77 saying so).
 * For them NVSHMEM starts through nvshmemi_init_thread of the device
 * library (what nvshmemx_init_attr calls: the host library and the device
 * state the kernels read), not nvshmemx_hostlib_init_attr, and ends with
 * nvshmemi_finalize. Their timing, as NVIDIA's perftest times its device
 * tests: without -c one launch runs all n iterations (windows) inside the
 * kernel; each sample is the kernel's own clock (%globaltimer, ns, thread 0,
 * from before the operation to after its quiet); lat_us_batch and the
 * bandwidth loop are cudaEvents around a launch of n (perftest's figure).
 * With -c one launch per iteration (window), in the lockstep below; the
 * samples are the same device times, the events then span the lockstep.
 *
 * Where the patterns (bench/engine/pattern.c) cannot run (they drive a
 * libfabric endpoint of efabench's own), this file keeps their conventions:
 * iteration 0 timed alone (first_us), warmup, n samples, a batch of n more
 * timed as a whole (lat_us_batch); windows with their times and the loop's
 * elapsed time; -c in lockstep with the payload pattern of context.h and
 * EFAB_FAULT_CORRUPT; the host clock read only by the single-shot pattern
 * (efab_time_each / efab_time_once), the stream's time by cudaEvents.
 * C++ because NVSHMEM's headers are. */
#include <atomic>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "efab_cuda.h"
#include "efab_fitrace.h"
#include "efab_nvtune.h"
#include "efab_select.h"
#include "pattern.h"
#include "rows.h"
#include "runtime.h"
#include "shmem_kernels.h"
#include "shmem_put.h"
#include "shmem_up.h"

#ifndef EFAB_SHMEM_KERNELS
/* not built (no nvcc or no libnvshmem_device.a): check_opts refuses the
 * kernel initiators before any of these could be called */
int efab_shk_init(unsigned, void *) { return -1; }
void efab_shk_finalize(void) {}
cudaError_t efab_shk_launch(const struct efab_shk_args *, cudaStream_t) { return cudaErrorNotSupported; }
double efab_shk_tick_ns(void) { return -1; }
#endif

namespace {

/* stream bandwidth: windows whose events are in flight before the host reads
 * their times (a full ring costs one wait for the oldest window) */
enum { RING = 256 };
/* the most bytes of each side (W x the largest size for bandwidth) */
const uint64_t SPAN_LIMIT = 1ull << 34;

struct shput {
	const efab_bench_row_t *row;
	efab_opts_t o;
	efab_runtime_t run;
	efab_rt_t *rt;
	int bw;          /* efab_shmem_bw: windows; else one operation at a time */
	int init;        /* PE 0: issues every operation */
	int peer;
	int gpu;
	int put;         /* -o put (else get) */
	int nbi;         /* efab_shmem_lat --nbi: the _nbi form + the quiet (bandwidth: always) */
	int on_stream;   /* --initiator stream, or a kernel initiator (its stream and events) */
	int kern;        /* --initiator thread|warp|block: efab_shk_args.group + 1 */
	unsigned threads; /* the kernel's CTA */
	unsigned long long *dt, *ht; /* kernel: device times (ns), on the GPU and a host copy */
	size_t dcap;     /* their entries */
	double tick_ns;  /* %globaltimer's smallest step seen */
	int shk_up;      /* NVSHMEM started by efab_shk_init */
	int check;       /* -c */
	uint64_t window; /* operations per window (1 for latency) */
	size_t span;     /* bytes of the local buffer and of the heap */
	uint8_t *local;  /* PE 0's buffer; NULL on PE 1 */
	uint8_t *heap;   /* nvshmem_malloc(span): PE 1's is the target */
	int heap_host;   /* the heap is host memory (SYSMEM): read and written by the CPU */
	int registered;
	uint8_t *bounce; /* -c: host staging of fills and checks (span bytes) */
	cudaStream_t st;
	cudaEvent_t e0, e1;           /* around one iteration, the batch, or an unmeasured window */
	cudaEvent_t ws[RING], we[RING]; /* measured windows on a stream: start and end */
	cudaEvent_t loop0;            /* before the first measured window */
	int events;                   /* they were created */
	uint64_t wi, harvested;       /* measured windows enqueued, and their times read */
	double *ev_out;               /* where post() puts a stream iteration's event time, or NULL */
	uint64_t seq;                 /* message number, alike on both PEs, across sizes */
	uint64_t corrupt_every, nverified;
	uint64_t errors;              /* this size's mismatches on this PE */
	uint64_t size;                /* the size being measured */
	double *samples, *host_us;    /* n each */
	size_t cap;
	efab_fitrace_read_fn trace;
	efab_run_info_t ri;
	efab_csv_t csv;
	char nv_version[32], transport[96], fab[128], mrm[32], heap_kind[32];
	int nv_maj, nv_min;                /* NVSHMEM's version and name, as it reports them */
	char nv_name[NVSHMEM_MAX_NAME_LEN];
	int nv_known[EFAB_NV_N_KNOBS]; /* the knobs an NVSHMEM library of this run reads */
};

/* ---- the watchdog (-t): NVSHMEM's calls cannot time out ----
 * PE's loops beat after every iteration or window; a beat missing for
 * --timeout seconds ends the process (mpirun then ends the job) with one
 * line naming the stage, size and iteration. */
std::atomic<uint64_t> wd_beat{0}, wd_size{0}, wd_iter{0};
std::atomic<const char *> wd_stage{nullptr};
double wd_timeout = 30;

void beat(uint64_t iter)
{
	wd_iter.store(iter, std::memory_order_relaxed);
	wd_beat.fetch_add(1, std::memory_order_relaxed);
}

void stage(const char *what, uint64_t size)
{
	wd_size.store(size, std::memory_order_relaxed);
	wd_stage.store(what);
	beat(0);
}

void *watchdog(void *)
{
	uint64_t last = wd_beat.load();
	double idle = 0;
	for (;;) {
		usleep(100000);
		uint64_t b = wd_beat.load();
		const char *what = wd_stage.load();
		if (b != last || !what) {
			last = b;
			idle = 0;
			continue;
		}
		idle += 0.1;
		if (idle >= wd_timeout) {
			efab_log_error("timeout: %s (size %llu, iteration %llu): nothing returned for %.0f s "
				       "(-t %g)", what, (unsigned long long)wd_size.load(),
				       (unsigned long long)wd_iter.load(), idle, wd_timeout);
			fflush(stderr);
			_exit(EFAB_ERR);
		}
	}
	return nullptr;
}

/* ---- the payload (context.h's pattern and tag; -c) ---- */

void pattern_into(uint8_t *p, size_t len, uint64_t seq)
{
	for (size_t j = 0; j + 1 < len; j++)
		p[j] = efab_pattern(seq, j);
	p[len - 1] = efab_tag(seq);
}

/* 1 when the copy at p differs from message seq; EFAB_FAULT_CORRUPT=N flips
 * one byte of every Nth checked message first (the tests' proof that -c
 * catches damage). */
uint64_t message_bad(shput *s, uint8_t *p, size_t len, uint64_t seq)
{
	if (s->corrupt_every && ++s->nverified % s->corrupt_every == 0)
		p[len / 2] ^= 0x01;
	uint64_t bad = p[len - 1] != efab_tag(seq);
	for (size_t j = 0; j + 1 < len; j++)
		bad += p[j] != efab_pattern(seq, j);
	if (bad && efab_log_verbose())
		efab_log_error("payload check: %llu of %zu bytes differ (message %llu)",
			       (unsigned long long)bad, len, (unsigned long long)seq);
	return bad ? 1 : 0;
}

int copy_failed(const char *what)
{
	efab_log_error("-c: copying %s failed", what);
	return EFAB_ERR;
}

/* nmsg messages seq, seq+1, ... at offsets 0, size, 2 x size into the
 * local buffer (PE 0, puts) or the heap (PE 1, gets), and every copy done
 * before the operation reads them (a pageable cuMemcpyHtoD may return
 * before its DMA ends: the device is synchronized). */
int fill(shput *s, uint8_t *dst, int dst_host, uint64_t nmsg)
{
	size_t len = (size_t)(nmsg * s->size);
	uint8_t *p = dst_host ? dst : s->bounce;
	for (uint64_t k = 0; k < nmsg; k++)
		pattern_into(p + k * s->size, (size_t)s->size, s->seq + k);
	if (dst_host)
		return EFAB_OK;
	if (efab_cuda_copy(dst, s->bounce, len, 1) || cudaDeviceSynchronize() != cudaSuccess)
		return copy_failed("the pattern to GPU memory");
	return EFAB_OK;
}

/* The nmsg messages at src (the heap on PE 1 after puts, the local buffer on
 * PE 0 after gets), compared on a host copy: mismatching messages. */
int check(shput *s, const uint8_t *src, int src_host, uint64_t nmsg, uint64_t *bad)
{
	size_t len = (size_t)(nmsg * s->size);
	if (src_host)
		memcpy(s->bounce, src, len);
	else if (efab_cuda_copy(s->bounce, src, len, 0))
		return copy_failed("GPU memory back to the host");
	for (uint64_t k = 0; k < nmsg; k++)
		*bad += message_bad(s, s->bounce + k * s->size, (size_t)s->size, s->seq + k);
	return EFAB_OK;
}

int stream_sync(shput *s)
{
	cudaError_t e = cudaStreamSynchronize(s->st);
	if (e != cudaSuccess) {
		efab_log_error("cudaStreamSynchronize: %s (an NVSHMEM operation on the stream failed)",
			       cudaGetErrorString(e));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

/* ---- one iteration (latency) or window (bandwidth) on both PEs ----
 * Without -c PE 1 takes no part until the size's closing barrier. With -c
 * both PEs run every iteration in lockstep, untimed around the operation:
 * begin (puts: PE 0 fills its slots; gets: PE 1 fills its heap, then a
 * barrier) and end (puts: a barrier, PE 1 checks its heap, a barrier;
 * gets: PE 0 checks its buffer, a barrier). The barriers are
 * nvshmem_barrier_all: NVSHMEM's own promise that what was put is visible. */

int checked_begin(shput *s)
{
	if (!s->check)
		return EFAB_OK;
	int rc = EFAB_OK;
	if (s->put && s->init)
		rc = fill(s, s->local, s->o.shmem_src == EFAB_SHMEM_SRC_HOST, s->window);
	if (!s->put) {
		if (!s->init)
			rc = fill(s, s->heap, s->heap_host, s->window);
		nvshmem_barrier_all();
	}
	return rc;
}

int checked_end(shput *s, uint64_t iter)
{
	int rc = EFAB_OK;
	if (s->check) {
		if (s->init && s->on_stream)
			rc = stream_sync(s);
		if (s->put) {
			nvshmem_barrier_all();
			if (!s->init && !rc)
				rc = check(s, s->heap, s->heap_host, s->window, &s->errors);
		} else if (s->init && !rc) {
			rc = check(s, s->local, s->o.shmem_src == EFAB_SHMEM_SRC_HOST, s->window, &s->errors);
		}
		nvshmem_barrier_all();
	}
	s->seq += s->window;
	beat(iter);
	return rc;
}

/* The operations of one iteration or window, PE 0. Host: complete when this
 * returns (latency puts: nvshmem_quiet, so the put has arrived; gets: the
 * data is here). Stream: enqueued, the quiet too. */
void issue(shput *s)
{
	size_t n = (size_t)s->size;
	int pe = s->peer;
	if (!s->bw && !s->on_stream) {
		if (s->put && s->nbi)
			nvshmem_putmem_nbi(s->heap, s->local, n, pe);
		else if (s->put)
			nvshmem_putmem(s->heap, s->local, n, pe);
		else if (s->nbi)
			nvshmem_getmem_nbi(s->local, s->heap, n, pe);
		else
			nvshmem_getmem(s->local, s->heap, n, pe);
		if (s->put || s->nbi)
			nvshmem_quiet();
	} else if (!s->bw) {
		if (s->put && s->nbi)
			nvshmemx_putmem_nbi_on_stream(s->heap, s->local, n, pe, s->st);
		else if (s->put)
			nvshmemx_putmem_on_stream(s->heap, s->local, n, pe, s->st);
		else if (s->nbi)
			nvshmemx_getmem_nbi_on_stream(s->local, s->heap, n, pe, s->st);
		else
			nvshmemx_getmem_on_stream(s->local, s->heap, n, pe, s->st);
		nvshmemx_quiet_on_stream(s->st);
	} else {
		/* op k at offset k x size on both sides (footprint window) */
		for (uint64_t k = 0; k < s->window; k++) {
			size_t off = (size_t)(k * s->size);
			if (s->on_stream && s->put)
				nvshmemx_putmem_nbi_on_stream(s->heap + off, s->local + off, n, pe, s->st);
			else if (s->on_stream)
				nvshmemx_getmem_nbi_on_stream(s->local + off, s->heap + off, n, pe, s->st);
			else if (s->put)
				nvshmem_putmem_nbi(s->heap + off, s->local + off, n, pe);
			else
				nvshmem_getmem_nbi(s->local + off, s->heap + off, n, pe);
		}
		if (s->on_stream)
			nvshmemx_quiet_on_stream(s->st);
		else
			nvshmem_quiet();
	}
}

/* One timed iteration or unmeasured window, PE 0 (efab_time_each's fn):
 * on a stream between e0 and e1, the stream synchronized (one in flight). */
int one(void *arg, size_t)
{
	shput *s = (shput *)arg;
	if (!s->on_stream) {
		issue(s);
		return EFAB_OK;
	}
	cudaEventRecord(s->e0, s->st);
	issue(s);
	cudaEventRecord(s->e1, s->st);
	return stream_sync(s);
}

/* The measured windows' times on a stream, read from the ring in order up
 * to window upto (each waited for: the host beats while the GPU drains). */
int harvest(shput *s, uint64_t upto)
{
	for (; s->harvested < upto; s->harvested++) {
		size_t k = (size_t)(s->harvested % RING);
		cudaError_t e = cudaEventSynchronize(s->we[k]);
		if (e != cudaSuccess) {
			efab_log_error("cudaEventSynchronize (window %llu): %s (an NVSHMEM operation on the "
				       "stream failed)", (unsigned long long)s->harvested, cudaGetErrorString(e));
			return EFAB_ERR;
		}
		float ms = 0;
		cudaEventElapsedTime(&ms, s->ws[k], s->we[k]);
		if (s->harvested < s->cap)
			s->samples[s->harvested] = ms * 1e3;
		beat(s->harvested);
	}
	return EFAB_OK;
}

/* A measured window on a stream: enqueued between its ring events; the host
 * waits only where the ring is full (for its oldest window), or for -c. */
int stream_window(void *arg, size_t)
{
	shput *s = (shput *)arg;
	if (s->wi - s->harvested == RING && harvest(s, s->harvested + 1))
		return EFAB_ERR;
	size_t k = (size_t)(s->wi % RING);
	cudaEventRecord(s->ws[k], s->st);
	issue(s);
	cudaEventRecord(s->we[k], s->st);
	s->wi++;
	return EFAB_OK;
}

int prep(void *arg, size_t)
{
	return checked_begin((shput *)arg);
}

/* After an iteration, PE 0: a stream iteration's event time where wanted */
int post(void *arg, size_t i)
{
	shput *s = (shput *)arg;
	if (s->ev_out) {
		float ms = 0;
		cudaEventElapsedTime(&ms, s->e0, s->e1);
		s->ev_out[i] = ms * 1e3;
	}
	return checked_end(s, i);
}

/* PE 1 with -c: its share of n iterations; without -c nothing */
int target_iters(shput *s, uint64_t n)
{
	for (uint64_t i = 0; s->check && i < n; i++)
		if (checked_begin(s) || checked_end(s, i))
			return EFAB_ERR;
	return EFAB_OK;
}

/* PE 0: n iterations through the single-shot pattern, host times into us,
 * stream event times into ev (NULL: not kept) */
int timed_iters(shput *s, uint64_t n, double *us, double *ev)
{
	size_t done;
	s->ev_out = s->on_stream ? ev : nullptr;
	int rc = efab_time_each((size_t)n, prep, one, post, s, us, &done);
	s->ev_out = nullptr;
	return rc;
}

/* ---- latency ---- */

struct batch_arg {
	shput *s;
	uint64_t n;
};

/* n iterations issued back to back (stream: between e0 and e1, one stream
 * synchronize at the end; -c's lockstep work included, as put_lat's batch) */
int batch(void *arg)
{
	batch_arg *b = (batch_arg *)arg;
	shput *s = b->s;
	if (s->on_stream)
		cudaEventRecord(s->e0, s->st);
	for (uint64_t i = 0; i < b->n; i++) {
		if (checked_begin(s))
			return EFAB_ERR;
		issue(s);
		if (checked_end(s, i))
			return EFAB_ERR;
	}
	if (!s->on_stream)
		return EFAB_OK;
	cudaEventRecord(s->e1, s->st);
	return stream_sync(s);
}

uint64_t lat_warmup(const shput *s, uint64_t size)
{
	uint64_t w = s->o.warmup; /* as the ping-pong: scaled down above 64 KiB unless -n was given */
	if (!s->o.iters && size > 65536) {
		w = s->o.warmup * 65536 / size;
		if (w < 2 && s->o.warmup >= 2)
			w = 2;
	}
	return w ? w : 1;
}

uint64_t bw_warmup(const shput *s, uint64_t size)
{
	uint64_t cap = s->row->counts.warmup_cap, w = s->o.warmup;
	if (cap && w > cap)
		w = cap;
	if (size > (1u << 20) && w > 2)
		w = 2;
	return w ? w : 1;
}

uint64_t iters_of(const shput *s, uint64_t size)
{
	const efab_counts_t *k = &s->row->counts;
	return s->o.iters ? s->o.iters : efab_scaled_count(k->iters, k->pivot, size, k->floor);
}

void row_set(const shput *s, efab_row_t *row, const char *name, const char *fmt, ...)
	EFAB_PRINTF(4, 5);
void row_set(const shput *s, efab_row_t *row, const char *name, const char *fmt, ...)
{
	for (size_t i = 0; i < s->ri.n_extra; i++)
		if (!strcmp(s->ri.extra_cols[i], name)) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(row->extra[i], sizeof(row->extra[0]), fmt, ap);
			va_end(ap);
			return;
		}
}

int room(shput *s, uint64_t n)
{
	if (n <= s->cap)
		return EFAB_OK;
	double *a = (double *)realloc(s->samples, n * sizeof(double));
	if (a)
		s->samples = a;
	double *b = a ? (double *)realloc(s->host_us, n * sizeof(double)) : nullptr;
	if (b)
		s->host_us = b;
	if (!a || !b) {
		efab_log_error("out of memory for %llu samples (-n)", (unsigned long long)n);
		return EFAB_ERR;
	}
	s->cap = n;
	return EFAB_OK;
}

/* ---- the kernel initiators (shmem_kernels.cu) ---- */

/* room for n device times, on the GPU and on the host */
int kern_room(shput *s, uint64_t n)
{
	if (n <= s->dcap)
		return EFAB_OK;
	cudaFree(s->dt);
	free(s->ht);
	s->dcap = 0;
	s->ht = (unsigned long long *)malloc(n * sizeof(*s->ht));
	if (cudaMalloc(&s->dt, n * sizeof(*s->dt)) != cudaSuccess || !s->ht) {
		efab_log_error("room for %llu device times (-n): %s", (unsigned long long)n,
			       cudaGetErrorString(cudaGetLastError()));
		s->dt = nullptr;
		return EFAB_ERR;
	}
	s->dcap = (size_t)n;
	return EFAB_OK;
}

/* One launch of iters iterations (windows) on the stream; t: their device
 * times, or NULL */
int kern_launch(shput *s, uint64_t iters, unsigned long long *t)
{
	efab_shk_args a;
	memset(&a, 0, sizeof(a));
	a.group = s->kern - 1;
	a.put = s->put;
	a.bw = s->nbi; /* the _nbi forms + the quiet: a window (of 1 for efab_shmem_lat --nbi) */
	a.heap = s->heap;
	a.local = s->local;
	a.size = (size_t)s->size;
	a.window = s->window;
	a.iters = iters;
	a.peer = s->peer;
	a.threads = s->threads;
	a.t = t;
	cudaError_t e = efab_shk_launch(&a, s->st);
	if (e != cudaSuccess) {
		efab_log_error("launching the %s kernel: %s", efab_shmem_initiator_name(s->o.shmem_initiator),
			       cudaGetErrorString(e));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

/* PE 0: n iterations (windows) between the events e0 and e1: without -c one
 * launch running all n, with -c one launch each inside checked_begin /
 * checked_end (PE 1's target_iters is its share). us: the device times in
 * microseconds (NULL: no timer reads in the kernel). */
int kern_iters(shput *s, uint64_t n, double *us)
{
	if (!n)
		return EFAB_OK;
	if (us && kern_room(s, n))
		return EFAB_ERR;
	unsigned long long *t = us ? s->dt : nullptr;
	cudaEventRecord(s->e0, s->st);
	if (!s->check) {
		if (kern_launch(s, n, t))
			return EFAB_ERR;
	} else {
		for (uint64_t i = 0; i < n; i++)
			if (checked_begin(s) || kern_launch(s, 1, t ? t + i : nullptr) || checked_end(s, i))
				return EFAB_ERR;
	}
	cudaEventRecord(s->e1, s->st);
	if (stream_sync(s))
		return EFAB_ERR;
	if (!s->check) {
		s->seq += n * s->window;
		beat(n);
	}
	if (!us)
		return EFAB_OK;
	if (cudaMemcpy(s->ht, s->dt, n * sizeof(*s->ht), cudaMemcpyDeviceToHost) != cudaSuccess)
		return copy_failed("the kernel's times to the host");
	for (uint64_t i = 0; i < n; i++)
		us[i] = (double)s->ht[i] / 1e3;
	return EFAB_OK;
}

/* the events' time of the last kern_iters, microseconds */
double kern_elapsed_us(shput *s)
{
	float ms = 0;
	cudaEventElapsedTime(&ms, s->e0, s->e1);
	return ms * 1e3;
}

/* efab_shmem_lat's size for a kernel initiator: iteration 0 alone
 * (first_us, its device time), warmup (one launch, no timer reads), n
 * samples (device times), the batch (a launch of n without timer reads,
 * cudaEvents around it / n) */
int kern_lat_size(shput *s, efab_row_t *row)
{
	uint64_t n = iters_of(s, s->size), warm = lat_warmup(s, s->size);
	double first = 0;
	if (room(s, n > warm ? n : warm))
		return EFAB_ERR;
	if (!s->init) {
		if (s->check)
			stage("PE 1's share of the checked iterations", s->size);
		return target_iters(s, warm + 2 * n);
	}
	stage("the first operation (a kernel)", s->size);
	if (kern_iters(s, 1, &first))
		return EFAB_ERR;
	stage("warmup (a kernel)", s->size);
	if (kern_iters(s, warm - 1, nullptr))
		return EFAB_ERR;
	stage("the timed iterations (a kernel)", s->size);
	if (kern_iters(s, n, s->samples))
		return EFAB_ERR;
	efab_stats_t st = {};
	efab_stats_compute(s->samples, (size_t)n, &st);
	stage("the batch (a kernel)", s->size);
	if (kern_iters(s, n, nullptr))
		return EFAB_ERR;
	row->iters = n;
	row->has_lat = 1;
	row->lat = st;
	row_set(s, row, "first_us", "%.3f", first);
	row_set(s, row, "lat_us_batch", "%.3f", kern_elapsed_us(s) / (double)n);
	row_set(s, row, "lat_us_p25", "%.3f", st.p25);
	row_set(s, row, "lat_us_p75", "%.3f", st.p75);
	return EFAB_OK;
}

/* One size of efab_shmem_lat: iteration 0 alone (first_us), warmup, n
 * samples, a batch of n. PE 0's figures fill row. */
int lat_size(shput *s, efab_row_t *row)
{
	uint64_t n = iters_of(s, s->size), warm = lat_warmup(s, s->size);
	double first_host = 0, first_ev = 0, batch_us = 0;
	if (s->kern)
		return kern_lat_size(s, row);
	if (room(s, n > warm ? n : warm))
		return EFAB_ERR;
	if (!s->init) {
		if (s->check)
			stage("PE 1's share of the checked iterations", s->size);
		return target_iters(s, warm + 2 * n);
	}
	stage("the first operation", s->size);
	if (timed_iters(s, 1, &first_host, &first_ev))
		return EFAB_ERR;
	stage("warmup", s->size);
	if (warm > 1 && timed_iters(s, warm - 1, s->host_us, nullptr))
		return EFAB_ERR;
	stage("the timed iterations", s->size);
	if (timed_iters(s, n, s->host_us, s->samples))
		return EFAB_ERR;
	double *lat = s->on_stream ? s->samples : s->host_us;
	efab_stats_t st = {}, host = {};
	if (s->on_stream)
		efab_stats_compute(s->host_us, (size_t)n, &host);
	efab_stats_compute(lat, (size_t)n, &st);
	stage("the batch", s->size);
	batch_arg b = {s, n};
	if (efab_time_once(batch, &b, &batch_us))
		return EFAB_ERR;
	if (s->on_stream) {
		float ms = 0;
		cudaEventElapsedTime(&ms, s->e0, s->e1);
		batch_us = ms * 1e3;
	}
	row->iters = n;
	row->has_lat = 1;
	row->lat = st;
	row_set(s, row, "first_us", "%.3f", s->on_stream ? first_ev : first_host);
	row_set(s, row, "lat_us_batch", "%.3f", batch_us / (double)n);
	row_set(s, row, "lat_us_p25", "%.3f", st.p25);
	row_set(s, row, "lat_us_p75", "%.3f", st.p75);
	if (s->on_stream) {
		row_set(s, row, "sync_us_p50", "%.3f", host.p50);
		row_set(s, row, "sync_us_p99", "%.3f", host.p99);
	}
	return EFAB_OK;
}

/* ---- bandwidth ---- */

struct loop_arg {
	shput *s;
	uint64_t n;
};

/* The measured windows (efab_time_once times them as the loop). Host: each
 * window timed by the pattern; stream: enqueued between ring events after
 * loop0, then every one waited for (the loop ends at the last window's
 * quiet on the stream). */
int loop(void *arg)
{
	loop_arg *l = (loop_arg *)arg;
	shput *s = l->s;
	size_t done;
	if (!s->on_stream)
		return efab_time_each((size_t)l->n, prep, one, post, s, s->samples, &done);
	s->wi = s->harvested = 0;
	cudaEventRecord(s->loop0, s->st);
	int rc = efab_time_each((size_t)l->n, prep, stream_window, post, s, s->host_us, &done);
	return rc ? rc : harvest(s, s->wi);
}

/* One size of efab_shmem_bw: window 0 alone (first_us), warmup, n measured
 * windows; bandwidth over the loop's elapsed time, *_windows over the sum
 * of window times. */
int bw_size(shput *s, efab_row_t *row)
{
	uint64_t n = iters_of(s, s->size), warm = bw_warmup(s, s->size);
	double first_host = 0, first_ev = 0, loop_us = 0;
	if (room(s, n > warm ? n : warm))
		return EFAB_ERR;
	if (!s->init) {
		if (s->check)
			stage("PE 1's share of the checked windows", s->size);
		return target_iters(s, warm + n);
	}
	if (s->kern) {
		/* window 0 alone (its device time), warmup (one launch, no timer
		 * reads), the measured windows: device times per window, the loop
		 * = cudaEvents around their launch (with -c: their launches) */
		stage("the first window (a kernel)", s->size);
		if (kern_iters(s, 1, &first_ev))
			return EFAB_ERR;
		stage("warmup windows (a kernel)", s->size);
		if (kern_iters(s, warm - 1, nullptr))
			return EFAB_ERR;
		stage("the measured windows (a kernel)", s->size);
		if (kern_iters(s, n, s->samples))
			return EFAB_ERR;
		loop_us = kern_elapsed_us(s);
	} else {
		stage("the first window", s->size);
		if (timed_iters(s, 1, &first_host, &first_ev))
			return EFAB_ERR;
		stage("warmup windows", s->size);
		if (warm > 1 && timed_iters(s, warm - 1, s->host_us, nullptr))
			return EFAB_ERR;
		stage("the measured windows", s->size);
		loop_arg l = {s, n};
		if (efab_time_once(loop, &l, &loop_us))
			return EFAB_ERR;
	}
	if (s->on_stream && !s->kern) {
		float ms = 0;
		cudaEventElapsedTime(&ms, s->loop0, s->we[(s->wi - 1) % RING]);
		loop_us = ms * 1e3;
	}
	double sum = 0, ops = (double)n * (double)s->window, bytes = ops * (double)s->size;
	for (uint64_t i = 0; i < n; i++)
		sum += s->samples[i];
	efab_stats_t ws;
	efab_stats_compute(s->samples, (size_t)n, &ws);
	row->iters = n;
	row->window = s->window;
	row->has_bw = 1;
	row->bw_MBps = loop_us > 0 ? bytes / loop_us : 0;
	row->msg_rate_Mops = loop_us > 0 ? ops / loop_us : 0;
	row_set(s, row, "window_us_p50", "%.3f", ws.p50);
	row_set(s, row, "window_us_p99", "%.3f", ws.p99);
	row_set(s, row, "window_us_p25", "%.3f", ws.p25);
	row_set(s, row, "window_us_p75", "%.3f", ws.p75);
	row_set(s, row, "first_us", "%.3f", s->on_stream ? first_ev : first_host);
	row_set(s, row, "footprint", "window");
	if (sum > 0) {
		row_set(s, row, "bw_MBps_windows", "%.3f", bytes / sum);
		row_set(s, row, "msg_rate_Mops_windows", "%.6f", ops / sum);
	}
	row_set(s, row, "end_confirm", "%s", s->on_stream && !s->kern ? "nvshmemx_quiet_on_stream" : "nvshmem_quiet");
	return EFAB_OK;
}

/* ---- the run ---- */

/* Usage checks that need no MPI and no GPU: the initiators not built, the
 * options of the other row's pattern, the buffers' size. */
int check_opts(shput *s)
{
	const efab_opts_t &o = s->o;
	const char *ini = efab_shmem_initiator_name(o.shmem_initiator);
	if (o.gpu_threads && o.shmem_initiator != EFAB_SHMEM_BLOCK) {
		efab_log_error("--gpu-threads: the CTA of --initiator block; %s's is fixed (thread 1, "
			       "warp 32; host and stream launch none)", ini);
		return EFAB_EUSAGE;
	}
	if (o.shmem_initiator >= EFAB_SHMEM_THREAD && o.shmem_src == EFAB_SHMEM_SRC_HOST) {
		efab_log_error("--initiator %s --src host: a kernel's operand must be GPU memory "
			       "(--src cuda)", ini);
		return EFAB_EUSAGE;
	}
#ifndef EFAB_SHMEM_KERNELS
	if (o.shmem_initiator >= EFAB_SHMEM_THREAD) {
		efab_log_error("--initiator %s (kernel-initiated NVSHMEM) is not built: make found no nvcc "
			       "or no $NVSHMEM_HOME/lib/libnvshmem_device.a (the device library the kernels "
			       "are device-linked with); use host or stream", ini);
		return EFAB_SKIP;
	}
#endif
	if (o.shmem_initiator >= EFAB_SHMEM_THREAD) {
		s->kern = o.shmem_initiator - EFAB_SHMEM_THREAD + 1;
		s->threads = o.shmem_initiator == EFAB_SHMEM_THREAD ? 1 :
			     o.shmem_initiator == EFAB_SHMEM_WARP ? 32 :
			     o.gpu_threads ? (unsigned)o.gpu_threads : 128;
	}
	if (o.time_s > 0) {
		efab_log_error("--time: %s counts windows (-n); it has no calibrated loop", s->row->name);
		return EFAB_EUSAGE;
	}
	s->window = s->bw ? o.window : 1;
	uint64_t span = s->window * o.sizes.max;
	if (o.sizes.max > SPAN_LIMIT || span > SPAN_LIMIT) {
		char a[32], b[32];
		efab_size_str(span, a, sizeof(a));
		efab_size_str(SPAN_LIMIT, b, sizeof(b));
		efab_log_error("--sizes%s: %s a side (the window's operations each at their own offset) is "
			       "above the %s allowed", s->bw ? " x -W" : "", a, b);
		return EFAB_EUSAGE;
	}
	s->span = (size_t)span;
	/* NVSHMEM's knobs: its environment, before MPI and NVSHMEM start */
	char err[512];
	int rc = efab_nv_tune_apply(&o, err, sizeof(err));
	if (rc)
		efab_log_error("%s", err);
	return rc;
}

/* GPU, PE count, then NVSHMEM, agreed by both PEs (rank 0 speaks). */
int bring_up(shput *s)
{
	efab_rt_t *rt = s->rt;
	if (rt->rank)
		efab_log_set_verbose(-1);
	int rc = efab_gpu_pick(s->o.gpu, rt->local_rank, &s->gpu);
	efab_log_set_verbose(s->o.verbose);
	if ((rc = efab_rt_agree(rt, rc)))
		return rc;
	if (rt->size != 2) {
		if (rt->rank == 0)
			efab_log_error("%s needs exactly 2 PEs (mpirun -np 2), got %d", s->row->name, rt->size);
		return EFAB_SKIP;
	}
	if ((rc = efab_rt_agree(rt, efab_cuda_set_device(s->gpu))))
		return rc;
	uint64_t want = s->span + (256ull << 20);
	if ((rc = efab_rt_agree(rt, efab_nvshmem_up(rt->rank, rt->size, want < (1ull << 30) ? 1ull << 30 : want,
						   s->kern ? efab_shk_init : nullptr))))
		return rc;
	s->shk_up = s->kern;
	s->init = rt->rank == 0;
	s->peer = 1 - rt->rank;
	return EFAB_OK;
}

/* The heap, PE 0's buffer and its registration, the stream and events,
 * -c's staging; agreed. */
int setup(shput *s)
{
	int rc = EFAB_OK;
	/* which of NVSHMEM's knobs this NVSHMEM reads: an asked one it ignores
	 * would change nothing, so nothing is measured (exit 77) */
	char libs[512], err[1024];
	nvshmem_info_get_version(&s->nv_maj, &s->nv_min);
	nvshmem_info_get_name(s->nv_name);
	efab_nvshmem_version_of(s->nv_name, s->nv_maj, s->nv_min, s->nv_version, sizeof(s->nv_version));
	efab_nv_tune_scan(nullptr, s->nv_known, libs, sizeof(libs));
	if ((rc = efab_nv_tune_check(&s->o, s->nv_known, libs, s->nv_version, err, sizeof(err))) &&
	    s->rt->rank == 0)
		efab_log_error("%s", err);
	if ((rc = efab_rt_agree(s->rt, rc)))
		return rc;
	s->heap = (uint8_t *)nvshmem_malloc(s->span); /* collective */
	if (!s->heap) {
		efab_log_error("nvshmem_malloc(%zu bytes) failed (symmetric heap too small? "
			       "NVSHMEM_SYMMETRIC_SIZE)", s->span);
		rc = EFAB_ERR;
	}
	/* where the heap is: GPU memory (VIDMEM, NVSHMEM's default) or host
	 * memory (NVSHMEM_HEAP_KIND=SYSMEM), as CUDA sees the pointer */
	cudaPointerAttributes pa;
	memset(&pa, 0, sizeof(pa));
	if (!rc && cudaPointerGetAttributes(&pa, s->heap) != cudaSuccess) {
		cudaGetLastError(); /* an unknown pointer: plain host memory */
		pa.type = cudaMemoryTypeUnregistered;
	}
	s->heap_host = !rc && pa.type != cudaMemoryTypeDevice;
	const char *hk = getenv("NVSHMEM_HEAP_KIND");
	snprintf(s->heap_kind, sizeof(s->heap_kind), "%s%s%s", s->heap_host ? "host" : "cuda",
		 hk && *hk ? " NVSHMEM_HEAP_KIND=" : "", hk && *hk ? hk : "");
	if (!rc && s->init) {
		if (s->o.shmem_src == EFAB_SHMEM_SRC_HOST) {
			s->local = (uint8_t *)aligned_alloc(4096, (s->span + 4095) & ~(size_t)4095);
			if (!s->local) {
				efab_log_error("out of memory (%zu bytes, --src host)", s->span);
				rc = EFAB_ERR;
			} else {
				memset(s->local, 0, s->span);
			}
		} else {
			void *p = nullptr;
			rc = efab_cuda_alloc(0, s->gpu, s->span, &p);
			s->local = (uint8_t *)p;
		}
		int e;
		if (!rc && s->o.shmem_register && (e = nvshmemx_buffer_register(s->local, s->span))) {
			efab_log_error("nvshmemx_buffer_register(%zu bytes) failed: %d", s->span, e);
			rc = EFAB_ERR;
		}
		s->registered = !rc && s->o.shmem_register;
	}
	if (!rc && s->init && s->on_stream) {
		if (cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking) != cudaSuccess ||
		    cudaEventCreate(&s->e0) != cudaSuccess || cudaEventCreate(&s->e1) != cudaSuccess ||
		    cudaEventCreate(&s->loop0) != cudaSuccess) {
			efab_log_error("a CUDA stream or event: %s", cudaGetErrorString(cudaGetLastError()));
			rc = EFAB_ERR;
		}
		for (int k = 0; !rc && s->bw && k < RING; k++)
			if (cudaEventCreate(&s->ws[k]) != cudaSuccess || cudaEventCreate(&s->we[k]) != cudaSuccess) {
				efab_log_error("cudaEventCreate: %s", cudaGetErrorString(cudaGetLastError()));
				rc = EFAB_ERR;
			}
		s->events = 1;
	}
	if (!rc && s->init && s->kern && (s->tick_ns = efab_shk_tick_ns()) < 0) {
		efab_log_error("the kernel initiator's timer probe: %s", cudaGetErrorString(cudaGetLastError()));
		rc = EFAB_ERR;
	}
	if (!rc && s->check && !(s->bounce = (uint8_t *)malloc(s->span))) {
		efab_log_error("out of memory (%zu bytes of -c staging)", s->span);
		rc = EFAB_ERR;
	}
	return efab_rt_agree(s->rt, rc);
}

void teardown(shput *s)
{
	if (s->events) {
		cudaStreamSynchronize(s->st);
		for (int k = 0; s->bw && k < RING; k++) {
			cudaEventDestroy(s->ws[k]);
			cudaEventDestroy(s->we[k]);
		}
		cudaEventDestroy(s->e0);
		cudaEventDestroy(s->e1);
		cudaEventDestroy(s->loop0);
		cudaStreamDestroy(s->st);
	}
	if (s->registered)
		nvshmemx_buffer_unregister(s->local);
	if (s->local && s->o.shmem_src == EFAB_SHMEM_SRC_HOST)
		free(s->local);
	else if (s->local)
		efab_cuda_free(0, s->gpu, s->local);
	if (s->heap)
		nvshmem_free(s->heap);
	if (s->dt)
		cudaFree(s->dt);
	free(s->ht);
	free(s->bounce);
	free(s->samples);
	free(s->host_us);
}

/* The run's columns and header (rank 0 prints), and the CSV (rank 0's
 * verdict for both). */
int begin_report(shput *s)
{
	const efab_bench_row_t *b = s->row;
	int rc = EFAB_OK;
	efab_run_info_begin(&s->ri, b->csv_name, s->rt->size);
	for (size_t i = 0; i < b->n_extra && i < EFAB_MAX_EXTRA; i++)
		s->ri.extra_cols[s->ri.n_extra++] = b->extra_cols[i];
	efab_nvshmem_ran_on(&s->ri, s->trace, s->gpu, s->transport, sizeof(s->transport));
	efab_fitrace_fabric(s->trace, s->fab, sizeof(s->fab), s->mrm, sizeof(s->mrm));
	snprintf(s->ri.mem_local, sizeof(s->ri.mem_local), "%s", efab_shmem_src_name(s->o.shmem_src));
	snprintf(s->ri.mem_remote, sizeof(s->ri.mem_remote), "%s", s->heap_host ? "host" : "cuda");
	if (s->rt->rank == 0 && s->o.csv[0])
		rc = efab_csv_open(s->o.csv, &s->ri, &s->csv);
	if ((rc = efab_rt_agree(s->rt, rc)) || s->rt->rank)
		return rc;
	const char *op = s->put ? "put" : "get";
	const char *asked = getenv("NVSHMEM_REMOTE_TRANSPORT"), *heap = getenv("NVSHMEM_SYMMETRIC_SIZE");
	char n1[1024], n2[512], n3[1024], n4[512], n5[512], n6[512], n7[512];
	snprintf(n1, sizeof(n1),
		 "NVSHMEM %d.%d (%s), PE 0 -> PE 1, GPU %d, symmetric heap %s B (NVSHMEM_SYMMETRIC_SIZE); "
		 "remote transport loaded: %s (NVSHMEM_REMOTE_TRANSPORT %s); libfabric under it: fabric %s, "
		 "mr_mode %s%s", s->nv_maj, s->nv_min, s->nv_name, s->gpu, heap ? heap : "?", s->transport,
		 asked && *asked ? asked : "unset", s->fab, s->mrm,
		 s->trace ? " (libefab_fitrace.so)" : " (not traced: libefab_fitrace.so not preloaded)");
	snprintf(n2, sizeof(n2),
		 "local buffer (PE 0): %s, %s; remote: PE 1's symmetric heap (nvshmem_malloc), %s memory "
		 "(%s)", s->o.shmem_src == EFAB_SHMEM_SRC_HOST ? "malloc'd host memory" : "cuMemAlloc'd GPU memory",
		 s->registered ? "nvshmemx_buffer_register'ed before measuring" : "never registered",
		 s->heap_host ? "host" : "GPU", s->heap_kind);
	static const char *const grp[] = {"", "nvshmem_%smem%s (1 thread)", "nvshmemx_%smem%s_warp (32 threads)",
					  "nvshmemx_%smem%s_block (%u threads)"};
	char call[128];
	if (s->kern)
		snprintf(call, sizeof(call), grp[s->kern], op, s->nbi ? "_nbi" : "", s->threads);
	if (s->kern && !s->bw)
		snprintf(n3, sizeof(n3), "initiator %s: in a CUDA kernel (one CTA), one %s%s; the sample = "
			 "the kernel's own clock (%%globaltimer, step seen %.0f ns; thread 0) from before the "
			 "operation to after it%s; %s; lat_us_batch = cudaEvents around a launch of n "
			 "iterations without timer reads / n (NVSHMEM perftest's shmem_%s_latency)",
			 efab_shmem_initiator_name(s->o.shmem_initiator), call,
			 !s->put && !s->nbi ? " (blocking: the data is here)" : s->kern > 1 ?
			 " + __syncthreads + nvshmem_quiet by thread 0" : " + nvshmem_quiet",
			 s->tick_ns, s->put || s->nbi ? "'s quiet" : "", s->check ? "-c: one launch per iteration" :
			 "one launch runs the n timed iterations", op);
	else if (s->kern)
		snprintf(n3, sizeof(n3), "initiator %s: in a CUDA kernel (one CTA), a window = %llu %s (op k "
			 "at offset k x size on both sides) + nvshmem_quiet by thread 0 (warp, block: between "
			 "__syncthreads); window "
			 "times = the kernel's own clock (%%globaltimer, step seen %.0f ns; thread 0); the loop = "
			 "cudaEvents around %s (NVSHMEM perftest's shmem_%s_bw times its launch so)",
			 efab_shmem_initiator_name(s->o.shmem_initiator), (unsigned long long)s->window, call,
			 s->tick_ns, s->check ? "the n measured windows, one launch each (-c)" :
			 "one launch running the n measured windows back to back", op);
	else if (!s->bw && !s->on_stream)
		snprintf(n3, sizeof(n3), "initiator host: one %s, host clock; lat_us_batch = n more issued "
			 "back to back / n", s->put && s->nbi ? "nvshmem_putmem_nbi + nvshmem_quiet (--nbi; the "
			 "put complete at PE 1 when the quiet returns)" : s->put ? "nvshmem_putmem + nvshmem_quiet "
			 "(the put complete at PE 1: a blocking put returns when its source may be reused, the "
			 "quiet when it has arrived)" : s->nbi ? "nvshmem_getmem_nbi + nvshmem_quiet (--nbi: the "
			 "data is here when the quiet returns)" : "nvshmem_getmem (blocking: the data should be "
			 "here when it returns; over NVSHMEM's libfabric transport it is not, an NVSHMEM bug: "
			 "docs/nvshmem.md; --nbi times nvshmem_getmem_nbi + nvshmem_quiet)");
	else if (!s->bw)
		snprintf(n3, sizeof(n3), "initiator stream: one nvshmemx_%smem%s_on_stream + "
			 "nvshmemx_quiet_on_stream between two cudaEvents on a non-blocking stream, the stream "
			 "synchronized after each (one in flight); sync_us_* = the host's time of the same "
			 "iteration, enqueue to cudaStreamSynchronize returned; lat_us_batch = n issued back "
			 "to back between two events, one stream synchronize, / n", op, s->nbi ? "_nbi" : "");
	else if (!s->on_stream)
		snprintf(n3, sizeof(n3), "initiator host: a window = %llu nvshmem_%smem_nbi (op k at "
			 "offset k x size on both sides) + nvshmem_quiet, host clock; the loop = the measured "
			 "windows back to back", (unsigned long long)s->window, op);
	else
		snprintf(n3, sizeof(n3), "initiator stream: a window = %llu nvshmemx_%smem_nbi_on_stream "
			 "(op k at offset k x size on both sides) + nvshmemx_quiet_on_stream between two "
			 "cudaEvents; the loop = from an event before the first measured window to the last "
			 "one's end event, windows enqueued back to back (the host waits only every %d "
			 "windows, to read their events)", (unsigned long long)s->window, op, (int)RING);
	snprintf(n4, sizeof(n4), "first_us = the first %s of each size alone (for the first size the "
		 "first operation to PE 1), never among the %s", s->bw ? "window" : "iteration",
		 s->bw ? "windows measured" : "samples");
	if (s->check)
		snprintf(n5, sizeof(n5), "-c: every payload checked (%s), a distinct pattern per message; "
			 "in lockstep: fills, checks and nvshmem_barrier_all around every %s, outside its "
			 "time but inside %s", s->put ? "puts by PE 1 in its heap" : "gets by PE 0 in its buffer",
			 s->bw ? "window" : "iteration",
			 s->bw ? "the loop's elapsed time (bw_MBps; bw_MBps_windows excludes them)" : "lat_us_batch");
	else
		snprintf(n5, sizeof(n5), "-c not given: payloads not checked (errors 0 means unchecked)");
	snprintf(n6, sizeof(n6), "rows: provider nvshmem, fabric = the transport NVSHMEM loaded, domain = "
		 "the GPU; columns nvshmem_version, transport, lf_fabric, lf_mr_mode, initiator, mode, src, "
		 "registered, heap_kind, form, nv_*");
	size_t u = (size_t)snprintf(n7, sizeof(n7), "NVSHMEM's knobs as it started (columns nv_*; "
				    "\"default\": unset, NVSHMEM's own value):");
	for (int k = 0; k < EFAB_NV_N_KNOBS; k++) {
		char c[64];
		efab_nv_knob_cell(k, s->nv_known, c, sizeof(c));
		u += (size_t)snprintf(n7 + u, u < sizeof(n7) ? sizeof(n7) - u : 0, " %s=%s",
				      efab_nv_knob_env(k), c);
	}
	const char *notes[] = {n1, b->definition, n2, n3, n4, n5, n6, n7};
	efab_table_begin(stdout, &s->ri, notes, EFAB_ARRAY_SIZE(notes), b->show_lat, b->show_bw);
	return EFAB_OK;
}

/* Every size: measured, its errors summed over the PEs (each PE checks its
 * side), the closing barrier, rank 0's row. */
int run_sizes(shput *s)
{
	uint64_t total = 0;
	for (size_t i = 0; i < efab_sizes_count(&s->o.sizes); i++) {
		efab_row_t row;
		memset(&row, 0, sizeof(row));
		s->size = efab_sizes_at(&s->o.sizes, i);
		s->errors = 0;
		row.size = s->size;
		row.pairs = 1;
		snprintf(row.op, sizeof(row.op), "%s", efab_shmem_op_name(s->o.shmem_op));
		int rc = s->bw ? bw_size(s, &row) : lat_size(s, &row);
		if (rc) /* the peer may be inside a barrier: end the job */
			s->rt->abort(s->rt, EFAB_ERR);
		/* PE 1 without -c waits here while PE 0 measures: only PE 0's
		 * watchdog, which sees its operations return, is armed */
		if (s->init || s->check)
			stage("the size's closing barrier", s->size);
		else
			wd_stage.store(nullptr);
		nvshmem_barrier_all();
		double e = (double)s->errors, esum = 0;
		s->rt->allreduce(s->rt, &e, &esum, 1, EFAB_RT_SUM);
		row.errors = (uint64_t)esum;
		total += row.errors;
		if (s->rt->rank)
			continue;
		row_set(s, &row, "nvshmem_version", "%s", s->nv_version);
		row_set(s, &row, "transport", "%s", s->transport);
		row_set(s, &row, "lf_fabric", "%s", s->fab);
		row_set(s, &row, "lf_mr_mode", "%s", s->mrm);
		row_set(s, &row, "initiator", "%s", efab_shmem_initiator_name(s->o.shmem_initiator));
		row_set(s, &row, "mode", "%s", s->bw ? "bw" : "lat");
		row_set(s, &row, "src", "%s", efab_shmem_src_name(s->o.shmem_src));
		row_set(s, &row, "registered", "%s", s->registered ? "yes" : "no");
		row_set(s, &row, "heap_kind", "%s", s->heap_kind);
		row_set(s, &row, "form", "%s", s->nbi ? "nbi" : "blocking");
		for (int k = 0; k < EFAB_NV_N_KNOBS; k++) {
			char c[64];
			efab_nv_knob_cell(k, s->nv_known, c, sizeof(c));
			row_set(s, &row, efab_nv_knob_column(k), "%s", c);
		}
		efab_table_row(stdout, &s->ri, &row, s->row->show_lat, s->row->show_bw);
		if (s->csv.fd >= 0 && efab_csv_write(&s->csv, &s->ri, &row))
			s->rt->abort(s->rt, EFAB_ERR);
	}
	wd_stage.store(nullptr);
	if (total) {
		if (s->rt->rank == 0)
			efab_log_error("validation failed: %llu errors (see the errors column)",
				       (unsigned long long)total);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

} // namespace

int efab_shmem_put_main(int argc, char **argv, const efab_bench_row_t *row)
{
	static shput sp;
	shput *s = &sp;
	int rc;
	s->row = row;
	s->csv.fd = -1;
	s->bw = row->show_bw;
	rc = efab_opts_main(&s->o, row->options, row->name, row->summary, argc, argv);
	if (rc >= 0)
		return rc;
	if ((rc = check_opts(s)))
		return rc;
	s->put = s->o.shmem_op == EFAB_SHMEM_PUT;
	s->nbi = s->bw || s->o.shmem_nbi;
	s->on_stream = s->o.shmem_initiator == EFAB_SHMEM_STREAM || s->kern;
	s->check = s->o.check;
	const char *v = getenv("EFAB_FAULT_CORRUPT");
	s->corrupt_every = v ? strtoull(v, nullptr, 10) : 0;
	/* before MPI: it may start the program again with the interposer preloaded */
	s->trace = efab_fitrace_up(argv);
	/* MPI even for the usage checks above it: NVSHMEM's bootstrap goes over it */
	if (efab_runtime_up(&s->run, EFAB_RUNTIME_MPI, row->name, &argc, &argv))
		return EFAB_ERR;
	s->rt = s->run.rt;
	efab_log_set_verbose(s->o.verbose);
	if (!(rc = bring_up(s))) {
		if (!(rc = setup(s)) && !(rc = begin_report(s))) {
			pthread_t wd;
			wd_timeout = s->o.timeout_s;
			if (pthread_create(&wd, nullptr, watchdog, nullptr) == 0)
				pthread_detach(wd);
			rc = run_sizes(s);
		}
		efab_csv_close(&s->csv);
		teardown(s);
		if (s->shk_up)
			efab_shk_finalize();
		else
			nvshmemx_hostlib_finalize();
	}
	return efab_runtime_down(&s->run, rc);
}
