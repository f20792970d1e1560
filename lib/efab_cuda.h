/* Internal: the CUDA driver API, loaded with dlopen on first use. Without
 * EFAB_HAVE_CUDA every entry point reports "built without CUDA" (EFAB_SKIP). */
#ifndef EFAB_CUDA_H
#define EFAB_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int efab_cuda_count(void);
/* The GPU of this process: requested (--gpu N) if >= 0, else the local rank
 * modulo the visible GPUs (--gpu auto). EFAB_OK with *gpu set, EFAB_SKIP
 * when no GPU is visible or CUDA is missing, else an error; logged. */
int efab_gpu_pick(int requested, int local_rank, int *gpu);
/* Make GPU device current (its primary context): for libraries that use the
 * CUDA runtime on this thread, such as NVSHMEM. */
int efab_cuda_set_device(int device);
int efab_cuda_alloc(int host_pinned, int device, size_t len, void **out);
void efab_cuda_free(int host_pinned, int device, void *p);
/* CUDA VMM device memory: cuMemCreate (pinned, on the device, shareable as a
 * POSIX fd, gpuDirectRDMACapable where the device supports GPUDirect RDMA
 * with VMM; EFAB_VMM_NO_RDMA_FLAG=1 leaves the flag out, a test knob), mapped
 * read-write for the device at an address of its own (cuMemAddressReserve +
 * cuMemMap + cuMemSetAccess). *alloc_len: len rounded up to the allocation
 * granularity. EFAB_SKIP (one line said) where the driver or GPU cannot. */
int efab_cuda_vmm_alloc(int device, size_t len, void **out, size_t *alloc_len);
void efab_cuda_vmm_free(int device, void *p, size_t alloc_len);
/* to_device: dst is device memory and src host, else the reverse. */
int efab_cuda_copy(void *dst, const void *src, size_t len, int to_device);
/* The same, the context synchronized before and after: memory without
 * CU_POINTER_ATTRIBUTE_SYNC_MEMOPS (CUDA VMM) that a NIC reads or writes. */
int efab_cuda_copy_synced(void *dst, const void *src, size_t len, int to_device);
int efab_cuda_bus_id(int device, char *buf, size_t len);
/* dmabuf fd for [p, p+len) of device memory (cuMemGetHandleForAddressRange). */
int efab_cuda_dmabuf(void *p, size_t len, int *fd, uint64_t *offset);

/* Page-lock host memory for the GPU (cuMemHostRegister = cudaHostRegister). */
int efab_cuda_host_register(void *p, size_t len);
int efab_cuda_host_unregister(void *p);

/* ---- the GPU initiator (issue 37; bench/engine/gda.c) ---- */
int efab_cuda_memset(void *dptr, int value, size_t len);
/* cuMemHostRegister(p, len, DEVICEMAP [| IOMEMORY]) and the device pointer
 * of p; quiet: on failure *cu_code is the CUresult and the string is in err. */
int efab_cuda_host_map(void *p, size_t len, int iomemory, void **dev, int *cu_code, char *err,
		       size_t errlen);
enum { EFAB_CU_NOT_PERMITTED = 800, EFAB_CU_NOT_SUPPORTED = 801 };
/* A kernel of a fatbin/cubin image in memory, with its own non-blocking stream. */
typedef struct efab_cuda_kernel {
	void *module, *fn, *stream;
} efab_cuda_kernel_t;
int efab_cuda_kernel_load(int device, const void *image, const char *name, efab_cuda_kernel_t *k);
/* One block of threads, one argument (a struct passed by value). */
int efab_cuda_kernel_launch(efab_cuda_kernel_t *k, unsigned threads, void *arg, size_t arg_size);
/* Wait for the kernel, polling; EFAB_ERR with *timed_out = 1 after timeout_s
 * (the kernel cannot be stopped: the caller must end the process). */
int efab_cuda_kernel_wait(efab_cuda_kernel_t *k, double timeout_s, int *timed_out);
void efab_cuda_kernel_unload(efab_cuda_kernel_t *k);

#ifdef __cplusplus
}
#endif

#endif
