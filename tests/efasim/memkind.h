/* efasim's memory kinds, private to memkind*.c (sim.h declares what the
 * rest of the device calls). memkind.c: the dma-buf records, the host copy
 * and the build without CUDA; with CUDA, memkind_cuda.c (the driver,
 * contexts, streams, the staging buffer, registration of device memory) and
 * memkind_copy.c (other processes' memory opened, mk_copy) on top of it. */
#ifndef EFASIM_MEMKIND_H
#define EFASIM_MEMKIND_H

#include "sim.h" /* first: it defines _GNU_SOURCE */

#include <sys/stat.h>

/* memkind.c */
int dmabuf_size(int fd, uint64_t *size);
int dmabuf_find(const struct stat *st, uint64_t offset, uint64_t len, uint64_t *start, int *slot,
		struct efasim_mem_info *mr_mem);
int dmabuf_unresolved(int fd, uint64_t offset);
/* Host to host: memmove here, process_vm_readv/writev to another process. */
int host_copy(struct mk_ref dst, struct mk_ref src, size_t n);

#ifdef EFASIM_HAVE_CUDA
#include <cuda.h>
#include <sys/syscall.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* A VMM allocation's ticket in efasim_mem_info.ipc: the exporting process's
 * fd of it and CUDA's buffer id (unique in that process's lifetime). */
struct mk_vmm_ref {
	int32_t fd;
	int32_t pad;
	uint64_t buffer_id;
};

/* The CUDA driver (dlopen'ed on the first device pointer) and efasim's state in it. */
struct mk_cuda {
	pthread_once_t once;
	pthread_mutex_t lock; /* contexts, streams, IPC cache, staging buffer */
	int ok;
	CUresult (*Init)(unsigned);
	CUresult (*PointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
	CUresult (*MemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
	CUresult (*IpcGetMemHandle)(CUipcMemHandle *, CUdeviceptr);
	CUresult (*IpcOpenMemHandle)(CUdeviceptr *, CUipcMemHandle, unsigned);
	CUresult (*CtxPushCurrent)(CUcontext);
	CUresult (*CtxPopCurrent)(CUcontext *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*PrimaryCtxGetState)(CUdevice, unsigned *, int *);
	CUresult (*CtxGetDevice)(CUdevice *);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*MemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemFreeHost)(void *);
	CUresult (*GetErrorString)(CUresult, const char **);
	/* VMM, optional (CUDA >= 10.2; IS_GPU_DIRECT_RDMA_CAPABLE >= 11.x) */
	CUresult (*MemRetainAllocationHandle)(CUmemGenericAllocationHandle *, void *);
	CUresult (*MemExportToShareableHandle)(void *, CUmemGenericAllocationHandle,
					       CUmemAllocationHandleType, unsigned long long);
	CUresult (*MemImportFromShareableHandle)(CUmemGenericAllocationHandle *, void *,
						 CUmemAllocationHandleType);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
				      unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			   unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	int vmm;                           /* all of the above found */
	CUresult (*StreamQuery)(CUstream); /* optional: EFASIM_CUDA_WAIT=query */
	int wait_query;                    /* EFASIM_CUDA_WAIT=query (and cuStreamQuery found) */
	CUresult (*CtxCreate)(CUcontext *, unsigned,
			      CUdevice); /* optional: EFASIM_CUDA_COPY=ownctx */
	int own_mode;                    /* EFASIM_CUDA_COPY=ownctx (and cuCtxCreate_v2 found) */
	CUcontext own[16];               /* efasim's own context per device ordinal (own_mode) */
	char own_failed
		[16]; /* its cuCtxCreate failed (said once): copies stay in the memory's context */
	struct {
		CUcontext ctx;
		CUstream stream;
		int refs; /* live registrations that prepared copies in ctx (ctx_uses) */
	} streams[16];
	int nstreams;
	CUcontext primary[16]; /* by device ordinal, for opened IPC handles */
	void *stage;
	size_t stage_len;
	CUcontext stage_ctx; /* the context the staging buffer was allocated in */
};
extern struct mk_cuda cu;

/* memkind_cuda.c */
const char *cu_str(CUresult r);
int cu_up(void);
CUstream stream_of(CUcontext ctx);
int stage_locked(CUcontext ctx);
CUcontext copy_ctx_locked(CUcontext ctx);
CUcontext primary_of(int ordinal);
int ctx_of(CUdeviceptr p, CUcontext *ctx);

#endif /* EFASIM_HAVE_CUDA */
#endif
