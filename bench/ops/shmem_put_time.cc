/* efab_shmem_lat and efab_shmem_bw's measurement (shmem_put.cc says what
 * they measure and how): the watchdog (-t), the payload and its checks (-c),
 * one iteration or window on both PEs, the timed loops (host, stream, and the
 * kernel initiators of shmem_kernels.cu), and one size's rows for latency
 * (lat_size) and bandwidth (bw_size). */
#include <atomic>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "efab_cuda.h"
#include "pattern.h"
#include "shmem_kernels.h"
#include "shmem_put_int.h"

namespace efab_shput
{

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
			efab_log_error(
				"timeout: %s (size %llu, iteration %llu): nothing returned for %.0f s "
				"(-t %g)",
				what, (unsigned long long)wd_size.load(),
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
		efab_log_error(
			"cudaStreamSynchronize: %s (an NVSHMEM operation on the stream failed)",
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

/* -o put-signal -c, PE 1: the iteration's signals. Its word is read (a copy
 * from GPU memory, or the host heap) until it holds at least the count
 * expected (every put-signal adds 1; the watchdog ends a wait for a signal
 * that never comes, naming this stage); a count other than the one expected
 * is one error (a lost, doubled or wrong signal), and the count goes on from
 * what arrived. Only then is the payload checked: data that is not there
 * when its signal is breaks NVSHMEM's promise and counts as errors. */
int signal_wait(shput *s)
{
	uint64_t want = s->sig_expect + s->window, got = 0;
	stage("the signal at PE 1 (-o put-signal -c)", s->size);
	for (;;) {
		if (s->heap_host)
			got = *(volatile uint64_t *)s->sigw;
		else if (efab_cuda_copy(&got, s->sigw, sizeof(got), 0))
			return copy_failed("the signal word to the host");
		if (got >= want)
			break;
	}
	if (got != want)
		s->errors++;
	s->sig_expect = got;
	return EFAB_OK;
}

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
		if (s->sig) { /* the signal first, then the payload it announces */
			if (!s->init && !rc && !(rc = signal_wait(s)))
				rc = check(s, s->heap, s->heap_host, s->window, &s->errors);
			nvshmem_barrier_all();
		} else if (s->put) {
			nvshmem_barrier_all();
			if (!s->init && !rc)
				rc = check(s, s->heap, s->heap_host, s->window, &s->errors);
		} else if (s->init && !rc) {
			rc = check(s, s->local, s->o.shmem_src == EFAB_SHMEM_SRC_HOST, s->window,
				   &s->errors);
		}
		nvshmem_barrier_all();
	}
	s->seq += s->window;
	beat(iter);
	return rc;
}

/* -o put-signal: what the next put-signal adds to PE 1's word: 1, or 2 for
 * every EFAB_FAULT_SIGNAL-th (a wrong signal that -c must count) */
uint64_t sig_add(shput *s)
{
	s->sig_ops++;
	return s->signal_every && s->sig_ops % s->signal_every == 0 ? 2 : 1;
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
		if (s->sig && s->nbi)
			nvshmemx_putmem_signal_nbi_on_stream(s->heap, s->local, n, s->sigw,
							     sig_add(s), NVSHMEM_SIGNAL_ADD, pe,
							     s->st);
		else if (s->sig)
			nvshmemx_putmem_signal_on_stream(s->heap, s->local, n, s->sigw, sig_add(s),
							 NVSHMEM_SIGNAL_ADD, pe, s->st);
		else if (s->put && s->nbi)
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
			if (s->on_stream && s->sig)
				nvshmemx_putmem_signal_nbi_on_stream(s->heap + off, s->local + off,
								     n, s->sigw, sig_add(s),
								     NVSHMEM_SIGNAL_ADD, pe, s->st);
			else if (s->on_stream && s->put)
				nvshmemx_putmem_nbi_on_stream(s->heap + off, s->local + off, n, pe,
							      s->st);
			else if (s->on_stream)
				nvshmemx_getmem_nbi_on_stream(s->local + off, s->heap + off, n, pe,
							      s->st);
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
			efab_log_error(
				"cudaEventSynchronize (window %llu): %s (an NVSHMEM operation on the "
				"stream failed)",
				(unsigned long long)s->harvested, cudaGetErrorString(e));
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

/* What efab_time_once hands batch() (latency) and loop() (bandwidth): the
 * run and how many iterations (windows) to issue. */
struct iters_arg {
	shput *s;
	uint64_t n;
};

/* n iterations issued back to back (stream: between e0 and e1, one stream
 * synchronize at the end; -c's lockstep work included, as put_lat's batch) */
int batch(void *arg)
{
	iters_arg *b = (iters_arg *)arg;
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

uint64_t iters_of(const shput *s, uint64_t size)
{
	const efab_counts_t *k = &s->row->counts;
	return s->o.iters ? s->o.iters : efab_scaled_count(k->iters, k->pivot, size, k->floor);
}

void row_set(const shput *s, efab_row_t *row, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	efab_row_vset(&s->ri, row, name, fmt, ap);
	va_end(ap);
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
	a.sig = s->sig ? s->sigw : nullptr;
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
		efab_log_error("launching the %s kernel: %s",
			       efab_shmem_initiator_name(s->o.shmem_initiator),
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
			if (checked_begin(s) || kern_launch(s, 1, t ? t + i : nullptr) ||
			    checked_end(s, i))
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

/* A size's three kernel phases, latency and bandwidth alike: the first
 * iteration (window) alone into *first, the warmup (one launch, no timer
 * reads), the n measured into s->samples; phase[] names each for the
 * watchdog. */
int kern_phases(shput *s, uint64_t warm, uint64_t n, double *first, const char *const phase[3])
{
	stage(phase[0], s->size);
	if (kern_iters(s, 1, first))
		return EFAB_ERR;
	stage(phase[1], s->size);
	if (kern_iters(s, warm - 1, nullptr))
		return EFAB_ERR;
	stage(phase[2], s->size);
	return kern_iters(s, n, s->samples) ? EFAB_ERR : EFAB_OK;
}

/* efab_shmem_lat's size for a kernel initiator: iteration 0 alone
 * (first_us, its device time), warmup (one launch, no timer reads), n
 * samples (device times), the batch (a launch of n without timer reads,
 * cudaEvents around it / n) */
int kern_lat_size(shput *s, efab_row_t *row)
{
	uint64_t n = iters_of(s, s->size), warm = efab_pingpong_warmup_of(&s->o, s->size);
	double first = 0;
	if (room(s, n > warm ? n : warm))
		return EFAB_ERR;
	if (!s->init) {
		if (s->check)
			stage("PE 1's share of the checked iterations", s->size);
		return target_iters(s, warm + 2 * n);
	}
	static const char *const phases[3] = {"the first operation (a kernel)", "warmup (a kernel)",
					      "the timed iterations (a kernel)"};
	if (kern_phases(s, warm, n, &first, phases))
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
	uint64_t n = iters_of(s, s->size), warm = efab_pingpong_warmup_of(&s->o, s->size);
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
	iters_arg b = {s, n};
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

/* The measured windows (efab_time_once times them as the loop). Host: each
 * window timed by the pattern; stream: enqueued between ring events after
 * loop0, then every one waited for (the loop ends at the last window's
 * quiet on the stream). */
int loop(void *arg)
{
	iters_arg *l = (iters_arg *)arg;
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
	uint64_t n = iters_of(s, s->size), warm = efab_stream_warmup_of(s->row, &s->o, s->size);
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
		static const char *const phases[3] = {"the first window (a kernel)",
						      "warmup windows (a kernel)",
						      "the measured windows (a kernel)"};
		if (kern_phases(s, warm, n, &first_ev, phases))
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
		iters_arg l = {s, n};
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
	row_set(s, row, "end_confirm", "%s",
		s->on_stream && !s->kern ? "nvshmemx_quiet_on_stream" : "nvshmem_quiet");
	return EFAB_OK;
}

} // namespace efab_shput
