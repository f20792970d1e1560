/* The kernel initiators of efab_shmem_lat / efab_shmem_bw (--initiator
 * thread|warp|block; the contract is bench/ops/shmem_kernels.h). Compiled
 * with nvcc -rdc=true and device-linked (nvcc -dlink) with NVSHMEM's
 * libnvshmem_device.a, as NVIDIA's perftest (perftest/device/pt-to-pt/
 * shmem_put_latency.cu, shmem_put_bw.cu) is built; the CUDA runtime
 * registers the linked image, so the device state NVSHMEM's host library
 * fills (nvshmemi_device_state_d, found by the callback that
 * nvshmemi_init_thread hands it) is the one these kernels read.
 *
 * Each kernel runs one CTA: thread (1 thread: nvshmem_putmem,
 * nvshmem_getmem, _nbi), warp (32 threads: nvshmemx_*mem_warp), block
 * (--gpu-threads threads: nvshmemx_*mem_block). After the group's
 * operations: __syncthreads, thread 0 nvshmem_quiet (latency puts and every
 * bandwidth window; a blocking get has its data when it returns),
 * __syncthreads: perftest's latency kernel. */
#include <stdint.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "shmem_kernels.h"

namespace {

__device__ __forceinline__ unsigned long long gtimer()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* put, get, put_nbi, get_nbi<G>: NVSHMEM's call of group G, thread (0:
 * nvshmem_<op>), warp (1: nvshmemx_<op>_warp) or block (2:
 * nvshmemx_<op>_block); G is a template argument, so each kernel calls one. */
#define SHK_BY_GROUP(name, op)                                                                     \
	template <int G>                                                                           \
	__device__ __forceinline__ void name(uint8_t *d, const uint8_t *s, size_t n, int pe)       \
	{                                                                                          \
		if (G == 0)                                                                        \
			nvshmem_##op(d, s, n, pe);                                                 \
		else if (G == 1)                                                                   \
			nvshmemx_##op##_warp(d, s, n, pe);                                         \
		else                                                                               \
			nvshmemx_##op##_block(d, s, n, pe);                                        \
	}
/* put_signal, put_signal_nbi<G>: the same for the put with a signal (each
 * adds 1 to the peer's word: NVSHMEM_SIGNAL_ADD) */
#define SHK_SIG_BY_GROUP(name, op)                                                                 \
	template <int G>                                                                           \
	__device__ __forceinline__ void name(uint8_t *d, const uint8_t *s, size_t n,               \
					     uint64_t *sig, int pe)                                \
	{                                                                                          \
		if (G == 0)                                                                        \
			nvshmem_##op(d, s, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe);                     \
		else if (G == 1)                                                                   \
			nvshmemx_##op##_warp(d, s, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe);             \
		else                                                                               \
			nvshmemx_##op##_block(d, s, n, sig, 1, NVSHMEM_SIGNAL_ADD, pe);            \
	}
SHK_SIG_BY_GROUP(put_signal, putmem_signal)
SHK_SIG_BY_GROUP(put_signal_nbi, putmem_signal_nbi)
#undef SHK_SIG_BY_GROUP
SHK_BY_GROUP(put, putmem)
SHK_BY_GROUP(get, getmem)
SHK_BY_GROUP(put_nbi, putmem_nbi)
SHK_BY_GROUP(get_nbi, getmem_nbi)
#undef SHK_BY_GROUP

template <int G> __global__ void shk(efab_shk_args a)
{
	const bool lead = threadIdx.x == 0;
	for (uint64_t it = 0; it < a.iters; it++) {
		unsigned long long t0 = 0;
		if (a.t && lead)
			t0 = gtimer();
		if (!a.bw && a.sig) {
			put_signal<G>(a.heap, a.local, a.size, a.sig, a.peer);
		} else if (!a.bw && a.put) {
			put<G>(a.heap, a.local, a.size, a.peer);
		} else if (!a.bw) {
			get<G>(a.local, a.heap, a.size, a.peer);
		} else {
			for (uint64_t k = 0; k < a.window; k++) {
				size_t off = (size_t)(k * a.size);
				if (a.sig)
					put_signal_nbi<G>(a.heap + off, a.local + off, a.size,
							  a.sig, a.peer);
				else if (a.put)
					put_nbi<G>(a.heap + off, a.local + off, a.size, a.peer);
				else
					get_nbi<G>(a.local + off, a.heap + off, a.size, a.peer);
			}
		}
		if (G)
			__syncthreads();
		if (lead && (a.bw || a.put))
			nvshmem_quiet();
		if (G)
			__syncthreads();
		if (a.t && lead)
			a.t[it] = gtimer() - t0;
	}
}

/* the smallest nonzero step of %globaltimer over 64 changes */
__global__ void tick(unsigned long long *out)
{
	unsigned long long best = ~0ull, prev = gtimer();
	for (int k = 0; k < 64; k++) {
		unsigned long long now;
		while ((now = gtimer()) == prev)
			;
		if (now - prev < best)
			best = now - prev;
		prev = now;
	}
	*out = best;
}

} // namespace

int efab_shk_init(unsigned flags, void *attr)
{
	int provided = 0;
	nvshmemi_version_t app = {NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
				  NVSHMEM_VENDOR_PATCH_VERSION};
	nvshmemx_init_attr_t *at = (nvshmemx_init_attr_t *)attr;
	return nvshmemi_init_thread(NVSHMEM_THREAD_SERIALIZED, &provided, flags, at, app);
}

void efab_shk_finalize(void)
{
	nvshmemi_finalize();
}

cudaError_t efab_shk_launch(const efab_shk_args *a, cudaStream_t st)
{
	if (a->group == 0)
		shk<0><<<1, 1, 0, st>>>(*a);
	else if (a->group == 1)
		shk<1><<<1, 32, 0, st>>>(*a);
	else
		shk<2><<<1, a->threads, 0, st>>>(*a);
	return cudaGetLastError();
}

double efab_shk_tick_ns(void)
{
	unsigned long long *d = nullptr, h = 0;
	if (cudaMalloc(&d, sizeof(h)) != cudaSuccess)
		return -1;
	tick<<<1, 1>>>(d);
	cudaError_t e = cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost);
	cudaFree(d);
	return e == cudaSuccess ? (double)h : -1;
}
