#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "efab.h"
#include "efab_cuda.h"

#ifndef EFAB_HAVE_CUDA

static int no_cuda(void)
{
	static int said; /* once per process, however many callers ask */
	if (said++)
		return EFAB_SKIP;
	efab_log_error("cuda memory kinds unavailable: efabench was built without CUDA (rebuild "
		       "with CUDA_HOME=/usr/local/cuda)");
	return EFAB_SKIP;
}

int efab_cuda_count(void)
{
	return no_cuda() ? -EFAB_SKIP : 0;
}
int efab_cuda_alloc(int host_pinned, int device, size_t len, void **out)
{
	(void)host_pinned, (void)device, (void)len, (void)out;
	return no_cuda();
}
int efab_cuda_set_device(int device)
{
	(void)device;
	return no_cuda();
}
int efab_cuda_vmm_alloc(int device, size_t len, void **out, size_t *alloc_len)
{
	(void)device, (void)len, (void)out, (void)alloc_len;
	return no_cuda();
}
void efab_cuda_vmm_free(int device, void *p, size_t alloc_len)
{
	(void)device, (void)p, (void)alloc_len;
}
void efab_cuda_free(int host_pinned, int device, void *p)
{
	(void)host_pinned, (void)device, (void)p;
}
int efab_cuda_copy(void *dst, const void *src, size_t len, int to_device)
{
	(void)dst, (void)src, (void)len, (void)to_device;
	return no_cuda();
}
int efab_cuda_copy_synced(void *dst, const void *src, size_t len, int to_device)
{
	(void)dst, (void)src, (void)len, (void)to_device;
	return no_cuda();
}
int efab_cuda_bus_id(int device, char *buf, size_t len)
{
	(void)device, (void)buf, (void)len;
	return no_cuda();
}
int efab_cuda_dmabuf(void *p, size_t len, int *fd, uint64_t *offset)
{
	(void)p, (void)len, (void)fd, (void)offset;
	return no_cuda();
}
int efab_cuda_host_register(void *p, size_t len)
{
	(void)p, (void)len;
	return no_cuda();
}
int efab_cuda_host_unregister(void *p)
{
	(void)p;
	return no_cuda();
}
int efab_cuda_memset(void *dptr, int value, size_t len)
{
	(void)dptr, (void)value, (void)len;
	return no_cuda();
}
int efab_cuda_host_map(void *p, size_t len, int iomemory, void **dev, int *cu_code, char *err,
		       size_t errlen)
{
	(void)p, (void)len, (void)iomemory, (void)dev;
	*cu_code = 0;
	snprintf(err, errlen, "efabench was built without CUDA");
	return EFAB_SKIP;
}
int efab_cuda_kernel_load(int device, const void *image, const char *name, efab_cuda_kernel_t *k)
{
	(void)device, (void)image, (void)name, (void)k;
	return no_cuda();
}
int efab_cuda_kernel_launch(efab_cuda_kernel_t *k, unsigned threads, void *arg, size_t arg_size)
{
	(void)k, (void)threads, (void)arg, (void)arg_size;
	return no_cuda();
}
int efab_cuda_kernel_wait(efab_cuda_kernel_t *k, double timeout_s, int *timed_out)
{
	(void)k, (void)timeout_s;
	*timed_out = 0;
	return no_cuda();
}
void efab_cuda_kernel_unload(efab_cuda_kernel_t *k)
{
	(void)k;
}

#else /* EFAB_HAVE_CUDA */

#include <cuda.h>
#include <dlfcn.h>

/* Driver API entry points by their versioned symbol names. */
static struct {
	int loaded; /* 0 not tried, 1 ok, -1 failed (status in err) */
	int err;
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemAllocHost)(void **, size_t);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*PointerSetAttribute)(const void *, CUpointer_attribute, CUdeviceptr);
	CUresult (*MemGetHandleForAddressRange)(void *, CUdeviceptr, size_t,
						CUmemRangeHandleType, unsigned long long);
	CUresult (*MemHostRegister)(void *, size_t, unsigned);
	CUresult (*MemHostUnregister)(void *);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				 unsigned, CUstream, void **, void **);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamQuery)(CUstream);
	/* VMM (CUDA >= 10.2; optional: only --mem cuda-vmm needs them) */
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			      unsigned long long);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
						CUmemAllocationGranularity_flags);
} cu;

static const char *cu_str(CUresult r)
{
	const char *s = NULL;
	if (cu.GetErrorString && cu.GetErrorString(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "unknown CUDA error";
}

#define SYM(field, name)                                                                  \
	do {                                                                              \
		*(void **)&cu.field = dlsym(h, name);                                     \
		if (!cu.field) {                                                          \
			efab_log_error("CUDA driver lacks %s", name);                     \
			goto fail;                                                        \
		}                                                                         \
	} while (0)

static int cu_load(void)
{
	if (cu.loaded)
		return cu.loaded > 0 ? EFAB_OK : cu.err;
	cu.loaded = -1;
	cu.err = EFAB_SKIP;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		efab_log_error("cuda memory kinds unavailable: no CUDA driver on this machine (%s)",
			       dlerror());
		return EFAB_SKIP;
	}
	SYM(Init, "cuInit");
	SYM(DeviceGetCount, "cuDeviceGetCount");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent");
	SYM(CtxSynchronize, "cuCtxSynchronize");
	SYM(MemAlloc, "cuMemAlloc_v2");
	SYM(MemFree, "cuMemFree_v2");
	SYM(MemAllocHost, "cuMemAllocHost_v2");
	SYM(MemFreeHost, "cuMemFreeHost");
	SYM(MemcpyHtoD, "cuMemcpyHtoD_v2");
	SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(DeviceGetPCIBusId, "cuDeviceGetPCIBusId");
	SYM(GetErrorString, "cuGetErrorString");
	SYM(PointerSetAttribute, "cuPointerSetAttribute");
	SYM(MemHostRegister, "cuMemHostRegister_v2");
	SYM(MemHostUnregister, "cuMemHostUnregister");
	SYM(MemsetD8, "cuMemsetD8_v2");
	SYM(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
	SYM(ModuleLoadData, "cuModuleLoadData");
	SYM(ModuleUnload, "cuModuleUnload");
	SYM(ModuleGetFunction, "cuModuleGetFunction");
	SYM(LaunchKernel, "cuLaunchKernel");
	SYM(StreamCreate, "cuStreamCreate");
	SYM(StreamDestroy, "cuStreamDestroy_v2");
	SYM(StreamQuery, "cuStreamQuery");
	/* Optional: CUDA >= 11.7 */
	*(void **)&cu.MemGetHandleForAddressRange = dlsym(h, "cuMemGetHandleForAddressRange");
	/* Optional: CUDA >= 10.2 (cuda-vmm) */
	*(void **)&cu.DeviceGetAttribute = dlsym(h, "cuDeviceGetAttribute");
	*(void **)&cu.MemCreate = dlsym(h, "cuMemCreate");
	*(void **)&cu.MemRelease = dlsym(h, "cuMemRelease");
	*(void **)&cu.MemAddressReserve = dlsym(h, "cuMemAddressReserve");
	*(void **)&cu.MemAddressFree = dlsym(h, "cuMemAddressFree");
	*(void **)&cu.MemMap = dlsym(h, "cuMemMap");
	*(void **)&cu.MemUnmap = dlsym(h, "cuMemUnmap");
	*(void **)&cu.MemSetAccess = dlsym(h, "cuMemSetAccess");
	*(void **)&cu.MemGetAllocationGranularity = dlsym(h, "cuMemGetAllocationGranularity");
	CUresult r = cu.Init(0);
	if (r != CUDA_SUCCESS) {
		efab_log_error("cuda memory kinds unavailable: cuInit: %s (no GPU visible?)",
			       cu_str(r));
		return EFAB_SKIP;
	}
	cu.loaded = 1;
	return EFAB_OK;
fail:
	return EFAB_SKIP;
}

static int cu_use(int device)
{
	int rc = cu_load();
	if (rc)
		return rc;
	int n = 0;
	CUresult r = cu.DeviceGetCount(&n);
	if (r != CUDA_SUCCESS || n == 0) {
		efab_log_error("cuda memory kinds unavailable: no GPU visible (%s)",
			       r ? cu_str(r) : "0 devices");
		return EFAB_SKIP;
	}
	if (device < 0 || device >= n) {
		efab_log_error("GPU %d does not exist: %d visible (CUDA_VISIBLE_DEVICES honoured)",
			       device, n);
		return EFAB_EUSAGE;
	}
	CUdevice dev;
	CUcontext ctx;
	if ((r = cu.DeviceGet(&dev, device)) || (r = cu.PrimaryCtxRetain(&ctx, dev)) ||
	    (r = cu.CtxSetCurrent(ctx))) {
		efab_log_error("cannot make GPU %d current: %s", device, cu_str(r));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_cuda_set_device(int device)
{
	return cu_use(device);
}

int efab_cuda_count(void)
{
	int rc = cu_load();
	if (rc)
		return -rc;
	int n = 0;
	if (cu.DeviceGetCount(&n) != CUDA_SUCCESS)
		return 0;
	return n;
}

int efab_cuda_alloc(int host_pinned, int device, size_t len, void **out)
{
	int rc = cu_use(device);
	if (rc)
		return rc;
	CUresult r;
	if (host_pinned) {
		void *p;
		if ((r = cu.MemAllocHost(&p, len))) {
			efab_log_error("cuMemAllocHost(%zu bytes): %s", len, cu_str(r));
			return EFAB_ERR;
		}
		memset(p, 0, len);
		*out = p;
		return EFAB_OK;
	}
	CUdeviceptr d;
	if ((r = cu.MemAlloc(&d, len))) {
		efab_log_error("cuMemAlloc(%zu bytes) on GPU %d: %s", len, device, cu_str(r));
		return EFAB_ERR;
	}
	/* RDMA into device memory must be ordered with CUDA copies (GPUDirect RDMA docs). */
	unsigned one = 1;
	cu.PointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d);
	*out = (void *)(uintptr_t)d;
	return EFAB_OK;
}

void efab_cuda_free(int host_pinned, int device, void *p)
{
	if (cu_use(device))
		return;
	if (host_pinned)
		cu.MemFreeHost(p);
	else
		cu.MemFree((CUdeviceptr)(uintptr_t)p);
}

/* A device attribute, or -1 where it cannot be read. */
static int dev_attr(CUdevice dev, CUdevice_attribute a)
{
	int v = 0;
	return cu.DeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : -1;
}

int efab_cuda_vmm_alloc(int device, size_t len, void **out, size_t *alloc_len)
{
	int rc = cu_use(device);
	if (rc)
		return rc;
	if (!cu.DeviceGetAttribute || !cu.MemCreate || !cu.MemRelease || !cu.MemAddressReserve ||
	    !cu.MemAddressFree || !cu.MemMap || !cu.MemUnmap || !cu.MemSetAccess ||
	    !cu.MemGetAllocationGranularity) {
		efab_log_error("cuda-vmm unavailable: the CUDA driver has no VMM API (cuMemCreate; needs "
			       "CUDA >= 10.2)");
		return EFAB_SKIP;
	}
	CUdevice dev;
	CUresult r = cu.DeviceGet(&dev, device);
	if (r) {
		efab_log_error("cuDeviceGet(%d): %s", device, cu_str(r));
		return EFAB_ERR;
	}
	if (dev_attr(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) != 1 ||
	    dev_attr(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1) {
		efab_log_error("cuda-vmm unavailable: GPU %d has no CUDA VMM with POSIX fd handles "
			       "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED / "
			       "HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)", device);
		return EFAB_SKIP;
	}
	/* What NCCL (ncclCuMemAlloc), NVSHMEM and PyTorch's expandable segments
	 * do: ask for GPUDirect RDMA where the device offers it with VMM. Without
	 * it the memory is not meant for a NIC, so the kind is not offered. */
	const char *knob = getenv("EFAB_VMM_NO_RDMA_FLAG");
	int no_flag = knob && *knob && strcmp(knob, "0");
	if (!no_flag && dev_attr(dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED) != 1) {
		efab_log_error("cuda-vmm unavailable: GPU %d does not support GPUDirect RDMA with CUDA VMM "
			       "(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 0)", device);
		return EFAB_SKIP;
	}
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.allocFlags.gpuDirectRDMACapable = no_flag ? 0 : 1;
	static int said;
	if (no_flag && !said++)
		fprintf(stderr, "# EFAB_VMM_NO_RDMA_FLAG=%s: cuda-vmm memory allocated without "
				"allocFlags.gpuDirectRDMACapable (a test knob)\n", knob);
	size_t gran = 0;
	if ((r = cu.MemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) ||
	    !gran) {
		efab_log_error("cuMemGetAllocationGranularity (GPU %d): %s", device,
			       r ? cu_str(r) : "granularity 0");
		return EFAB_ERR;
	}
	size_t size = (len + gran - 1) / gran * gran;
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr d = 0;
	if ((r = cu.MemCreate(&h, size, &prop, 0))) {
		efab_log_error("cuMemCreate(%zu bytes, GPU %d%s): %s", size, device,
			       no_flag ? "" : ", gpuDirectRDMACapable", cu_str(r));
		return EFAB_ERR;
	}
	if ((r = cu.MemAddressReserve(&d, size, gran, 0, 0))) {
		efab_log_error("cuMemAddressReserve(%zu bytes): %s", size, cu_str(r));
		goto release;
	}
	if ((r = cu.MemMap(d, size, 0, h, 0))) {
		efab_log_error("cuMemMap(%zu bytes): %s", size, cu_str(r));
		goto address_free;
	}
	CUmemAccessDesc acc;
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = dev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if ((r = cu.MemSetAccess(d, size, &acc, 1))) {
		efab_log_error("cuMemSetAccess(%zu bytes, GPU %d read-write): %s", size, device, cu_str(r));
		goto unmap;
	}
	if ((r = cu.MemsetD8(d, 0, size))) {
		efab_log_error("cuMemsetD8 (cuda-vmm, %zu bytes): %s", size, cu_str(r));
		goto unmap;
	}
	cu.MemRelease(h); /* the mapping keeps the allocation until cuMemUnmap */
	*out = (void *)(uintptr_t)d;
	*alloc_len = size;
	return EFAB_OK;
unmap:
	cu.MemUnmap(d, size);
address_free:
	cu.MemAddressFree(d, size);
release:
	cu.MemRelease(h);
	return EFAB_ERR;
}

void efab_cuda_vmm_free(int device, void *p, size_t alloc_len)
{
	if (cu_use(device) || !cu.MemUnmap)
		return;
	cu.MemUnmap((CUdeviceptr)(uintptr_t)p, alloc_len);
	cu.MemAddressFree((CUdeviceptr)(uintptr_t)p, alloc_len);
}

int efab_cuda_copy(void *dst, const void *src, size_t len, int to_device)
{
	if (cu_load())
		return EFAB_ERR;
	CUresult r = to_device ? cu.MemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, len)
			       : cu.MemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, len);
	if (r) {
		efab_log_error("cuMemcpy%s (%zu bytes): %s", to_device ? "HtoD" : "DtoH", len,
			       cu_str(r));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

/* A copy between host memory and device memory that CU_POINTER_ATTRIBUTE_
 * SYNC_MEMOPS cannot be set on (CUDA VMM memory: cuPointerSetAttribute
 * answers CUDA_ERROR_NOT_SUPPORTED): a cuMemcpyHtoD from pageable memory may
 * return once the bytes are staged, before the DMA to the device is done
 * (CUDA "API synchronization behavior"), so a NIC reading the buffer after
 * the post can see the bytes it held before; the context is synchronized
 * before the copy (what a NIC wrote is ordered before the read) and after it
 * (the bytes are in device memory before the caller posts). On the H200
 * machine efasim read the old bytes of --mem cuda-vmm's fill otherwise (-c
 * counted 1-58 wrong messages per size). */
static int ctx_sync(void)
{
	CUresult r = cu.CtxSynchronize();
	if (r)
		efab_log_error("cuCtxSynchronize: %s", cu_str(r));
	return r ? EFAB_ERR : EFAB_OK;
}

int efab_cuda_copy_synced(void *dst, const void *src, size_t len, int to_device)
{
	if (cu_load() || ctx_sync() || efab_cuda_copy(dst, src, len, to_device))
		return EFAB_ERR;
	return ctx_sync();
}

int efab_cuda_bus_id(int device, char *buf, size_t len)
{
	int rc = cu_use(device);
	if (rc)
		return rc;
	CUdevice dev;
	CUresult r = cu.DeviceGet(&dev, device);
	if (!r)
		r = cu.DeviceGetPCIBusId(buf, (int)len, dev);
	if (r) {
		efab_log_error("cuDeviceGetPCIBusId(%d): %s", device, cu_str(r));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_cuda_dmabuf(void *p, size_t len, int *fd, uint64_t *offset)
{
	if (cu_load())
		return EFAB_SKIP;
	if (!cu.MemGetHandleForAddressRange) {
		efab_log_error("--dmabuf: the CUDA driver has no cuMemGetHandleForAddressRange "
			       "(needs CUDA >= 11.7)");
		return EFAB_SKIP;
	}
	/* The range must be page aligned: export the enclosing pages, report the offset. */
	uintptr_t base = (uintptr_t)p & ~(uintptr_t)0xffff;
	size_t span = ((uintptr_t)p - base + len + 0xffff) & ~(size_t)0xffff;
	int f = -1;
	CUresult r = cu.MemGetHandleForAddressRange(&f, (CUdeviceptr)base, span,
						    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r) {
		efab_log_error("--dmabuf: cuMemGetHandleForAddressRange: %s (driver or kernel "
			       "without dmabuf support?)", cu_str(r));
		return EFAB_SKIP;
	}
	*fd = f;
	*offset = (uint64_t)((uintptr_t)p - base);
	return EFAB_OK;
}

int efab_cuda_host_register(void *p, size_t len)
{
	int rc = cu_use(0);
	if (rc)
		return rc;
	CUresult r = cu.MemHostRegister(p, len, 0);
	if (r) {
		efab_log_error("cuMemHostRegister(%zu bytes): %s", len, cu_str(r));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_cuda_host_unregister(void *p)
{
	CUresult r = cu.MemHostUnregister(p);
	if (r) {
		efab_log_error("cuMemHostUnregister: %s", cu_str(r));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_cuda_memset(void *dptr, int value, size_t len)
{
	if (cu_load())
		return EFAB_ERR;
	CUresult r = cu.MemsetD8((CUdeviceptr)(uintptr_t)dptr, (unsigned char)value, len);
	if (r) {
		efab_log_error("cuMemsetD8 (%zu bytes): %s", len, cu_str(r));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_cuda_host_map(void *p, size_t len, int iomemory, void **dev, int *cu_code, char *err,
		       size_t errlen)
{
	*cu_code = 0;
	if (cu_load()) {
		snprintf(err, errlen, "no CUDA driver");
		return EFAB_SKIP;
	}
	unsigned flags = CU_MEMHOSTREGISTER_DEVICEMAP | (iomemory ? CU_MEMHOSTREGISTER_IOMEMORY : 0);
	CUresult r = cu.MemHostRegister(p, len, flags);
	if (r) {
		*cu_code = (int)r;
		snprintf(err, errlen, "cuMemHostRegister(%zu bytes, DEVICEMAP%s): %s", len,
			 iomemory ? "|IOMEMORY" : "", cu_str(r));
		return EFAB_ERR;
	}
	CUdeviceptr d = 0;
	r = cu.MemHostGetDevicePointer(&d, p, 0);
	if (r) {
		*cu_code = (int)r;
		snprintf(err, errlen, "cuMemHostGetDevicePointer: %s", cu_str(r));
		cu.MemHostUnregister(p);
		return EFAB_ERR;
	}
	*dev = (void *)(uintptr_t)d;
	return EFAB_OK;
}

int efab_cuda_kernel_load(int device, const void *image, const char *name, efab_cuda_kernel_t *k)
{
	int rc = cu_use(device);
	if (rc)
		return rc;
	memset(k, 0, sizeof(*k));
	CUmodule m;
	CUfunction f;
	CUstream s;
	CUresult r = cu.ModuleLoadData(&m, image);
	if (r) {
		efab_log_error("cuModuleLoadData (efabench's GPU kernels, sm_90 + PTX): %s", cu_str(r));
		return EFAB_ERR;
	}
	if ((r = cu.ModuleGetFunction(&f, m, name)) || (r = cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING))) {
		efab_log_error("loading kernel %s: %s", name, cu_str(r));
		cu.ModuleUnload(m);
		return EFAB_ERR;
	}
	k->module = m;
	k->fn = f;
	k->stream = s;
	return EFAB_OK;
}

int efab_cuda_kernel_launch(efab_cuda_kernel_t *k, unsigned threads, void *arg, size_t arg_size)
{
	(void)arg_size;
	void *params[] = {arg};
	CUresult r = cu.LaunchKernel((CUfunction)k->fn, 1, 1, 1, threads, 1, 1, 0, (CUstream)k->stream,
				     params, NULL);
	if (r) {
		efab_log_error("cuLaunchKernel (%u threads): %s", threads, cu_str(r));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_cuda_kernel_wait(efab_cuda_kernel_t *k, double timeout_s, int *timed_out)
{
	struct timespec t0, t, nap = {0, 20000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*timed_out = 0;
	for (;;) {
		CUresult r = cu.StreamQuery((CUstream)k->stream);
		if (r == CUDA_SUCCESS)
			return EFAB_OK;
		if (r != CUDA_ERROR_NOT_READY) {
			efab_log_error("GPU kernel failed: %s", cu_str(r));
			return EFAB_ERR;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > timeout_s) {
			*timed_out = 1;
			return EFAB_ERR;
		}
		nanosleep(&nap, NULL);
	}
}

void efab_cuda_kernel_unload(efab_cuda_kernel_t *k)
{
	if (k->stream)
		cu.StreamDestroy((CUstream)k->stream);
	if (k->module)
		cu.ModuleUnload((CUmodule)k->module);
	memset(k, 0, sizeof(*k));
}

#endif

int efab_gpu_pick(int requested, int local_rank, int *gpu)
{
	int n = efab_cuda_count();
	if (n < 0)
		return -n; /* said where it was born (no CUDA, no driver) */
	if (n == 0) {
		efab_log_error("cuda memory kinds unavailable: no GPU visible");
		return EFAB_SKIP;
	}
	*gpu = requested >= 0 ? requested : (local_rank < 0 ? 0 : local_rank) % n;
	return EFAB_OK;
}
