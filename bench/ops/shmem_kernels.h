/* The kernel initiators of efab_shmem_lat / efab_shmem_bw (--initiator
 * thread|warp|block): CUDA kernels in bench/ops/shmem_kernels.cu, compiled
 * with nvcc -rdc=true and device-linked with NVSHMEM's libnvshmem_device.a
 * into those two executables when the Makefile finds nvcc and
 * $(NVSHMEM_HOME)/lib/libnvshmem_device.a (then EFAB_SHMEM_KERNELS is
 * defined for bench/ops/shmem_put.cc). No NVSHMEM header here: shmem_put.cc
 * includes it with the host compiler. */
#ifndef EFAB_SHMEM_KERNELS_H
#define EFAB_SHMEM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

/* One launch: iters iterations (latency: one blocking operation, the put's
 * nvshmem_quiet) or windows (window x the _nbi form, op k at offset
 * k x size on both sides, then nvshmem_quiet by thread 0), one CTA of
 * threads threads (thread: 1, warp: 32, block: --gpu-threads). t: per
 * iteration, the device's %globaltimer (ns) from before the operation to
 * after its quiet, read by thread 0; NULL: no timer reads. */
struct efab_shk_args {
	int group;     /* 0 thread, 1 warp, 2 block */
	int put;       /* else get */
	uint64_t *sig; /* -o put-signal: the peer's signal word (each put adds 1), or NULL */
	int bw;        /* _nbi forms in windows + nvshmem_quiet */
	uint8_t *heap; /* the peer's symmetric address */
	uint8_t *local;
	size_t size;
	uint64_t window;
	uint64_t iters;
	int peer;
	unsigned threads;
	unsigned long long *t;
};

/* NVSHMEM up with its device state (nvshmemi_init_thread of
 * libnvshmem_device.a: what nvshmemx_init_attr calls, without its exit(-1)),
 * as nvshmemx_hostlib_init_attr would start the host library alone: 0 or
 * NVSHMEM's status. */
int efab_shk_init(unsigned flags, void *nvshmemx_init_attr);
/* nvshmemi_finalize (the device state unregistered, then the host library's
 * finalize) */
void efab_shk_finalize(void);
/* One launch on st (asynchronous): cudaSuccess or the launch's error. */
cudaError_t efab_shk_launch(const struct efab_shk_args *a, cudaStream_t st);
/* The smallest step of %globaltimer seen on this GPU (ns), by a probe
 * kernel, synchronized; -1 on a CUDA error. */
double efab_shk_tick_ns(void);

#endif
