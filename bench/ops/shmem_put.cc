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
 * C++ because NVSHMEM's headers are.
 *
 * This file: the options, bring-up, set-up and teardown, the header, the
 * size loop and the main; shmem_put_time.cc the measurement of a size
 * (shmem_put_int.h). */
#include <atomic>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "efab_cuda.h"
#include "efab_nvtune.h"
#include "faults.h"
#include "runtime.h"
#include "shmem_kernels.h"
#include "shmem_put.h"
#include "shmem_up.h"
#include "shmem_put_int.h"

#ifndef EFAB_SHMEM_KERNELS
/* not built (no nvcc or no libnvshmem_device.a): check_opts refuses the
 * kernel initiators before any of these could be called */
int efab_shk_init(unsigned, void *) { return -1; }
void efab_shk_finalize(void) {}
cudaError_t efab_shk_launch(const struct efab_shk_args *, cudaStream_t) { return cudaErrorNotSupported; }
double efab_shk_tick_ns(void) { return -1; }
#endif

namespace efab_shput
{

/* the most bytes of each side (W x the largest size for bandwidth) */
const uint64_t SPAN_LIMIT = 1ull << 34;

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
	if (o.shmem_op == EFAB_SHMEM_PUT_SIGNAL && o.shmem_initiator == EFAB_SHMEM_HOST) {
		efab_log_error("-o put-signal: NVSHMEM has no put with signal from the host "
			       "(nvshmem_putmem_signal is device code; its host forms are "
			       "nvshmemx_putmem_signal*_on_stream): use --initiator stream or "
			       "thread|warp|block");
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
	if (s->sig) { /* -o put-signal: the signal word, collective like the heap, zeroed on
		       * every PE before any PE signals */
		s->sigw = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
		if (!s->sigw) {
			efab_log_error("nvshmem_malloc of the signal word failed");
			rc = EFAB_ERR;
		} else if (s->heap_host) {
			*(volatile uint64_t *)s->sigw = 0;
		} else if (cudaMemset(s->sigw, 0, sizeof(uint64_t)) != cudaSuccess ||
			   cudaDeviceSynchronize() != cudaSuccess) {
			efab_log_error("zeroing the signal word: %s",
				       cudaGetErrorString(cudaGetLastError()));
			rc = EFAB_ERR;
		}
		if (!(rc = efab_rt_agree(s->rt, rc)))
			nvshmem_barrier_all();
	}
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
	if (s->sigw)
		nvshmem_free(s->sigw);
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
	char err[2048];
	const char *spec = efab_table_spec(&s->o);
	/* every PE decides (a --columns name the run lacks ends them all) */
	rc = efab_table_pick(&s->table, &s->ri, b->show_lat, b->show_bw, spec, b->table_cols, "",
			     err, sizeof(err));
	if (rc && s->rt->rank == 0)
		efab_log_error("%s", err);
	if (!rc && s->rt->rank == 0 && s->o.csv[0])
		rc = efab_csv_open(s->o.csv, &s->ri, &s->csv);
	if ((rc = efab_rt_agree(s->rt, rc)) || s->rt->rank)
		return rc;
	const char *op = s->put ? "put" : "get";
	const char *asked = getenv("NVSHMEM_REMOTE_TRANSPORT"), *heap = getenv("NVSHMEM_SYMMETRIC_SIZE");
	char n1[1024], n2[512], n3[1024], n4[512], n5[512], n6[512], n7[512];
	snprintf(
		n1, sizeof(n1),
		"NVSHMEM %s (%s; OpenSHMEM %d.%d), PE 0 -> PE 1, GPU %d, symmetric heap %s B "
		"(NVSHMEM_SYMMETRIC_SIZE); remote transport loaded: %s (NVSHMEM_REMOTE_TRANSPORT %s); "
		"libfabric under it: fabric %s, mr_mode %s%s",
		s->nv_version, s->nv_name, s->nv_maj, s->nv_min, s->gpu, heap ? heap : "?",
		s->transport, asked && *asked ? asked : "unset", s->fab, s->mrm,
		s->trace ? " (libefab_fitrace.so)"
			 : " (not traced: libefab_fitrace.so not preloaded)");
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
	char n8[512] = "";
	if (s->sig)
		snprintf(
			n8, sizeof(n8),
			"-o put-signal: every put is the put with a signal (%s), adding 1 "
			"to PE 1's signal word (nvshmem_malloc'd, NVSHMEM_SIGNAL_ADD) in the same call; "
			"-c: PE 1 reads the word until it holds the iteration's count, then checks the payload "
			"(data missing when its signal is there, or a count off, are errors)",
			s->kern  ? "nvshmem[x]_putmem_signal[_nbi][_warp|_block] in the kernel"
			: s->nbi ? "nvshmemx_putmem_signal_nbi_on_stream"
				 : "nvshmemx_putmem_signal_on_stream");
	const char *notes[] = {n1, b->definition, n2, n3, n4, n5, n6, n7, n8};
	/* the short header: what ran and on what, the metric; the rest at -v */
	char b1[512], b2[512];
	snprintf(b1, sizeof(b1),
		 "NVSHMEM %s, PE 0 -> PE 1, GPU %d; transport %s (libfabric fabric %s, mr_mode %s)",
		 s->nv_version, s->gpu, s->transport, s->fab, s->mrm);
	snprintf(b2, sizeof(b2), "initiator %s, %s; local %s%s, remote PE 1's symmetric heap (%s)",
		 efab_shmem_initiator_name(s->o.shmem_initiator), s->nbi ? "nbi" : "blocking",
		 efab_shmem_src_name(s->o.shmem_src), s->registered ? " (registered)" : "",
		 s->heap_kind);
	const char *lines[] = {
		b1, b2, b->brief,
		s->sig ? "put-signal: each put adds 1 to PE 1's signal word in the same "
			 "call (-v: the calls)"
		       : "",
		s->check ? "" : n5};
	efab_table_top(stdout, &s->table, &s->ri, s->o.verbose, lines, EFAB_ARRAY_SIZE(lines),
		       notes, EFAB_ARRAY_SIZE(notes));
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
		efab_table_line(stdout, &s->table, &s->ri, &row);
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

} // namespace efab_shput

using namespace efab_shput;

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
	s->put = s->o.shmem_op == EFAB_SHMEM_PUT || s->o.shmem_op == EFAB_SHMEM_PUT_SIGNAL;
	s->sig = s->o.shmem_op == EFAB_SHMEM_PUT_SIGNAL;
	s->nbi = s->bw || s->o.shmem_nbi;
	s->on_stream = s->o.shmem_initiator == EFAB_SHMEM_STREAM || s->kern;
	s->check = s->o.check;
	efab_faults_t faults; /* the test hooks, read where the engine reads them */
	efab_faults_read(&faults);
	s->corrupt_every = faults.corrupt_every;
	s->signal_every = faults.signal_every;
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
