/* efasim's memory kinds, the CUDA side (memkind.c says what it models): the
 * driver loaded through dlopen, contexts and the copy streams in them, the
 * staging buffer, CUDA IPC and VMM exports of registered device memory,
 * and mk_reg_device / mk_reg_dmabuf / mk_unreg / mk_kind_local.
 * memkind_copy.c uses its contexts and streams for mk_copy. */
#include "memkind.h"

#ifdef EFASIM_HAVE_CUDA

#include <dlfcn.h>

struct mk_cuda cu = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

enum { STAGE_BYTES = 4 << 20 };

const char *cu_str(CUresult r)
{
	const char *s = NULL;
	if (cu.GetErrorString)
		cu.GetErrorString(r, &s);
	return s ? s : "unknown CUDA error";
}

static void cu_load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		slog("GPU memory: dlopen(libcuda.so.1): %s", dlerror());
		return;
	}
#define SYM(f, name)                                                                               \
	do {                                                                                       \
		*(void **)&cu.f = dlsym(h, name);                                                  \
		if (!cu.f) {                                                                       \
			slog("GPU memory: libcuda.so.1 lacks %s", name);                           \
			return;                                                                    \
		}                                                                                  \
	} while (0)
	SYM(Init, "cuInit");
	SYM(PointerGetAttribute, "cuPointerGetAttribute");
	SYM(MemGetAddressRange, "cuMemGetAddressRange_v2");
	SYM(IpcGetMemHandle, "cuIpcGetMemHandle");
	SYM(IpcOpenMemHandle, "cuIpcOpenMemHandle_v2");
	SYM(CtxPushCurrent, "cuCtxPushCurrent_v2");
	SYM(CtxPopCurrent, "cuCtxPopCurrent_v2");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(PrimaryCtxGetState, "cuDevicePrimaryCtxGetState");
	SYM(CtxGetDevice, "cuCtxGetDevice");
	SYM(StreamCreate, "cuStreamCreate");
	SYM(StreamDestroy, "cuStreamDestroy_v2");
	SYM(StreamSynchronize, "cuStreamSynchronize");
	SYM(MemcpyAsync, "cuMemcpyAsync");
	SYM(MemHostAlloc, "cuMemHostAlloc");
	SYM(MemFreeHost, "cuMemFreeHost");
	SYM(GetErrorString, "cuGetErrorString");
#undef SYM
	*(void **)&cu.MemRetainAllocationHandle = dlsym(h, "cuMemRetainAllocationHandle");
	*(void **)&cu.MemExportToShareableHandle = dlsym(h, "cuMemExportToShareableHandle");
	*(void **)&cu.MemImportFromShareableHandle = dlsym(h, "cuMemImportFromShareableHandle");
	*(void **)&cu.MemRelease = dlsym(h, "cuMemRelease");
	*(void **)&cu.MemAddressReserve = dlsym(h, "cuMemAddressReserve");
	*(void **)&cu.MemAddressFree = dlsym(h, "cuMemAddressFree");
	*(void **)&cu.MemMap = dlsym(h, "cuMemMap");
	*(void **)&cu.MemUnmap = dlsym(h, "cuMemUnmap");
	*(void **)&cu.MemSetAccess = dlsym(h, "cuMemSetAccess");
	cu.vmm = cu.MemRetainAllocationHandle && cu.MemExportToShareableHandle &&
		 cu.MemImportFromShareableHandle && cu.MemRelease && cu.MemAddressReserve &&
		 cu.MemAddressFree && cu.MemMap && cu.MemUnmap && cu.MemSetAccess;
	*(void **)&cu.StreamQuery = dlsym(h, "cuStreamQuery");
	const char *w = getenv("EFASIM_CUDA_WAIT");
	cu.wait_query = w && !strcmp(w, "query") && cu.StreamQuery;
	*(void **)&cu.CtxCreate = dlsym(h, "cuCtxCreate_v2");
	const char *oc = getenv("EFASIM_CUDA_COPY");
	cu.own_mode = oc && !strcmp(oc, "ownctx") && cu.CtxCreate;
	if (oc && !strcmp(oc, "ownctx") && !cu.CtxCreate)
		slog("GPU memory: EFASIM_CUDA_COPY=ownctx: libcuda.so.1 lacks cuCtxCreate_v2; copies stay in the memory's context");
	CUresult r = cu.Init(0);
	if (r != CUDA_SUCCESS) {
		slog("GPU memory: cuInit: %s", cu_str(r));
		return;
	}
	cu.ok = 1;
}

/* CUDA for this process; 0 when it cannot be had. */
int cu_up(void)
{
	pthread_once(&cu.once, cu_load);
	return cu.ok;
}

/* Is libcuda already in this process? (Only then can a pointer be CUDA's.) */
static int cu_in_process(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return 0;
	dlclose(h);
	return 1;
}

/* ctx's entry in cu.streams, -1 if none; with cu.lock held. */
static int slot_of(CUcontext ctx)
{
	for (int i = 0; i < cu.nstreams; i++)
		if (cu.streams[i].ctx == ctx)
			return i;
	return -1;
}

/* A private non-blocking stream of ctx; with cu.lock held. */
CUstream stream_of(CUcontext ctx)
{
	int i = slot_of(ctx);
	if (i >= 0)
		return cu.streams[i].stream;
	if (cu.nstreams == (int)(sizeof(cu.streams) / sizeof(cu.streams[0])))
		return NULL;
	CUstream s = NULL;
	if (cu.CtxPushCurrent(ctx) != CUDA_SUCCESS)
		return NULL;
	CUresult r = cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING);
	CUcontext dummy;
	cu.CtxPopCurrent(&dummy);
	if (r != CUDA_SUCCESS) {
		slog("GPU memory: cuStreamCreate: %s", cu_str(r));
		return NULL;
	}
	cu.streams[cu.nstreams].ctx = ctx;
	cu.streams[cu.nstreams++].stream = s;
	return s;
}

/* The pinned staging buffer for copies between GPU memory and another
 * process's host memory; with cu.lock held. */
int stage_locked(CUcontext ctx)
{
	if (cu.stage)
		return 0;
	if (cu.CtxPushCurrent(ctx) != CUDA_SUCCESS)
		return -1;
	CUresult r = cu.MemHostAlloc(&cu.stage, STAGE_BYTES, CU_MEMHOSTALLOC_PORTABLE);
	CUcontext dummy;
	cu.CtxPopCurrent(&dummy);
	if (r != CUDA_SUCCESS) {
		slog("GPU memory: cuMemHostAlloc: %s", cu_str(r));
		cu.stage = NULL;
		return -1;
	}
	cu.stage_len = STAGE_BYTES;
	cu.stage_ctx = ctx;
	return 0;
}

/* ctx's device; 0 when found. With cu.lock held. */
static int ctx_device_locked(CUcontext ctx, CUdevice *dev)
{
	if (cu.CtxPushCurrent(ctx) != CUDA_SUCCESS)
		return -1;
	CUresult r = cu.CtxGetDevice(dev);
	CUcontext dummy;
	cu.CtxPopCurrent(&dummy);
	return r == CUDA_SUCCESS ? 0 : -1;
}

/* EFASIM_CUDA_COPY=ownctx (a diagnostic, issue 47's blocking on-stream
 * hang): efasim's copies of ctx's memory are made in a context of efasim's
 * own on the same device (created once, never the application's), so that
 * nothing the application has queued in its context can stand between the
 * copy and the GPU's copy engine. NULL when it cannot be had (the copy then
 * stays in ctx, said once in the log). With cu.lock held. */
static CUcontext own_ctx_locked(CUcontext ctx)
{
	CUdevice dev = 0;
	if (ctx_device_locked(ctx, &dev) || dev < 0 || dev >= 16)
		return NULL;
	if (cu.own[dev] || cu.own_failed[dev])
		return cu.own[dev];
	CUcontext c = NULL, dummy;
	CUresult r = cu.CtxCreate(&c, 0, dev); /* made current on this thread: popped below */
	if (r != CUDA_SUCCESS) {
		slog("GPU memory: EFASIM_CUDA_COPY=ownctx: cuCtxCreate (device %d): %s; copies stay in the memory's context",
		     (int)dev, cu_str(r));
		cu.own_failed[dev] = 1;
		return NULL;
	}
	cu.CtxPopCurrent(&dummy);
	cu.own[dev] = c;
	slog("GPU memory: EFASIM_CUDA_COPY=ownctx: copies of device %d's memory in efasim's own context %p",
	     (int)dev, (void *)c);
	return c;
}

/* The context efasim's copy of ctx's memory is made in. */
CUcontext copy_ctx_locked(CUcontext ctx)
{
	CUcontext o = cu.own_mode && ctx ? own_ctx_locked(ctx) : NULL;
	return o ? o : ctx;
}

/* The context each live CUDA registration prepared copies in. */
struct ctx_use {
	CUdeviceptr alloc_base;
	CUcontext ctx;
	struct ctx_use *next;
};
static struct ctx_use *ctx_uses;

/* What copies of ctx's memory need (its stream, the staging buffer), made
 * when the memory is registered, in the registering thread, not by the first
 * copy in the device engine's thread: there, cuStreamCreate (and
 * cuMemHostAlloc) can wait for the context while the application's kernel
 * spins until that very copy lands. NVSHMEM >= 3.6's on-stream put does
 * exactly that (nvshmemx_putmem_nbi_on_stream + quiet_on_stream, then
 * cudaStreamSynchronize): on the H200 machine the engine thread sat in
 * cuStreamCreate (memkind.c stream_of) for the 40 s until the run was killed.
 * A real NIC moves the bytes by DMA and makes no CUDA call at all.
 * With cu.lock held. */
static void copy_ready_locked(CUcontext ctx, CUdeviceptr alloc_base)
{
	if (cu.own_mode) {
		CUcontext o = copy_ctx_locked(ctx);
		if (o != ctx)
			(void)stream_of(
				o); /* its stream too, here rather than in the engine's thread */
	}
	if (!stream_of(ctx))
		return; /* no entry to hold the staging buffer's context: made at the first copy */
	(void)stage_locked(ctx);
	struct ctx_use *u = malloc(sizeof(*u));
	if (!u)
		return;                  /* then never released: what every context got before */
	cu.streams[slot_of(ctx)].refs++; /* stream_of made the entry */
	*u = (struct ctx_use){alloc_base, ctx, ctx_uses};
	ctx_uses = u;
}

/* Is ctx its device's primary context? Asked only where the primary is
 * active already (cuDevicePrimaryCtxGetState), so that asking creates none. */
static int is_primary_locked(CUcontext ctx)
{
	CUdevice dev = 0;
	unsigned flags = 0;
	int active = 0;
	if (ctx_device_locked(ctx, &dev) ||
	    cu.PrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active)
		return 0;
	return primary_of((int)dev) == ctx;
}

/* The last registration in ctx is gone: its stream, and the staging buffer
 * if ctx made it, go before the application can destroy ctx (whose
 * destruction would free them under efasim: a stale stream and a staging
 * buffer no longer mapped, as libfabric >= 2.7's p2p probe left them, which
 * registers a buffer of a context it creates and destroys,
 * efa_hmem_info_check_p2p_support_cuda). A staging buffer still wanted is
 * made again now, in a context with registrations, not in the engine's
 * thread. With cu.lock held. */
static void ctx_release_locked(CUcontext ctx)
{
	int i = slot_of(ctx);
	if (i < 0 || --cu.streams[i].refs > 0)
		return;
	/* a device's primary context (the CUDA runtime's, the application's as a
	 * rule) lives until the process ends: its stream and staging buffer stay
	 * (not remade at each fresh registration, which efab_mr_reg times) */
	if (is_primary_locked(ctx))
		return;
	int stage = cu.stage && cu.stage_ctx == ctx;
	if (cu.CtxPushCurrent(ctx) == CUDA_SUCCESS) {
		cu.StreamDestroy(cu.streams[i].stream);
		if (stage)
			cu.MemFreeHost(cu.stage);
		CUcontext dummy;
		cu.CtxPopCurrent(&dummy);
	}
	cu.streams[i] = cu.streams[--cu.nstreams];
	if (stage) {
		cu.stage = NULL;
		cu.stage_len = 0;
		cu.stage_ctx = NULL;
	}
	slog("GPU memory: the last registration in context %p is gone: its stream%s released",
	     (void *)ctx, stage ? " and the staging buffer" : "");
	for (int k = 0; stage && k < cu.nstreams; k++)
		if (cu.streams[k].refs > 0 && !stage_locked(cu.streams[k].ctx))
			break;
}

CUcontext primary_of(int ordinal)
{
	if (ordinal < 0 || ordinal >= 16)
		return NULL;
	if (!cu.primary[ordinal]) {
		CUdevice d;
		if (cu.DeviceGet(&d, ordinal) != CUDA_SUCCESS ||
		    cu.PrimaryCtxRetain(&cu.primary[ordinal], d) != CUDA_SUCCESS)
			return NULL;
	}
	return cu.primary[ordinal];
}

/* The context whose stream copies p: the one CUDA names for it, else (VMM
 * memory belongs to no context) the primary context of its device; with
 * cu.lock. */
int ctx_of(CUdeviceptr p, CUcontext *ctx)
{
	int ordinal = -1;
	*ctx = NULL;
	if (cu.PointerGetAttribute(ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p) == CUDA_SUCCESS && *ctx)
		return 0;
	if (cu.PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) !=
	    CUDA_SUCCESS)
		return -1;
	*ctx = primary_of(ordinal);
	return *ctx ? 0 : -1;
}

/* What the driver says of a device pointer: its context, device, allocation. */
static int cu_describe(CUdeviceptr p, size_t len, CUcontext *ctx, int *ordinal, CUdeviceptr *base,
		       size_t *size)
{
	unsigned mtype = 0, managed = 0;
	if (cu.PointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS ||
	    mtype != CU_MEMORYTYPE_DEVICE)
		return EFAULT; /* host, pinned host (the pin handles that) or unknown to CUDA */
	if (cu.PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p) == CUDA_SUCCESS &&
	    managed)
		return EFAULT; /* the GPU driver's pin refuses managed memory */
	if (cu.PointerGetAttribute(ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) !=
		    CUDA_SUCCESS ||
	    cu.MemGetAddressRange(base, size, p) != CUDA_SUCCESS)
		return EFAULT;
	pthread_mutex_lock(&cu.lock);
	int e = ctx_of(p, ctx);
	pthread_mutex_unlock(&cu.lock);
	if (e)
		return EFAULT;
	if (p + len > *base + *size)
		return EFAULT; /* the range runs past its allocation */
	return 0;
}

/* The VMM allocations this process exported for its MRs: the fd stays open
 * while an MR of the allocation lives (another process takes its copy). */
struct vmm_export {
	uint64_t buffer_id;
	int fd;
	int refs;
	struct vmm_export *next;
};
static struct vmm_export *vmm_exports;

/* CUDA VMM memory (see the header): accepted where the allocation is
 * GPUDirect RDMA capable and exportable as a POSIX fd. *verdict: the errno
 * stands for the dma-buf path too (the refusal is about the memory, not
 * about what the address is). */
static int export_vmm(CUdeviceptr p, CUcontext ctx, int ordinal, CUdeviceptr base, size_t size,
		      struct efasim_mem_info *out, int *verdict)
{
	unsigned rdma = 0;
	unsigned long long types = 0, id = 0;
	*verdict = 1;
	CUresult r =
		cu.PointerGetAttribute(&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p);
	if (r != CUDA_SUCCESS || !rdma) {
		if (r != CUDA_SUCCESS)
			slog("GPU memory: %#llx is CUDA VMM memory (cuMemCreate) whose GPUDirect RDMA capability "
			     "CUDA does not say (cuPointerGetAttribute IS_GPU_DIRECT_RDMA_CAPABLE: %s): EFAULT",
			     (unsigned long long)p, cu_str(r));
		else
			slog("GPU memory: %#llx is CUDA VMM memory (cuMemCreate) allocated without "
			     "allocFlags.gpuDirectRDMACapable (IS_GPU_DIRECT_RDMA_CAPABLE = 0): the GPU driver lets no "
			     "NIC at it: EFAULT",
			     (unsigned long long)p);
		return EFAULT;
	}
	r = cu.PointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p);
	if (!cu.vmm || r != CUDA_SUCCESS || !(types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		slog("GPU memory: %#llx is CUDA memory without a legacy IPC handle (VMM, cuMemCreate, or a "
		     "memory pool) and without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in its requestedHandleTypes (allowed handle types %#llx%s%s): efasim cannot reach it from another "
		     "process (an efasim limitation; a real NIC would register it): EFAULT",
		     (unsigned long long)p, types, r != CUDA_SUCCESS ? ", not said: " : "",
		     r != CUDA_SUCCESS ? cu_str(r)
				       : (!cu.vmm ? "; libcuda lacks the VMM export API" : ""));
		*verdict = 0;
		return EFAULT;
	}
	if ((r = cu.PointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p)) != CUDA_SUCCESS) {
		slog("GPU memory: cuPointerGetAttribute BUFFER_ID (%#llx): %s: EFAULT",
		     (unsigned long long)p, cu_str(r));
		return EFAULT;
	}
	pthread_mutex_lock(&cu.lock);
	struct vmm_export *x;
	for (x = vmm_exports; x && x->buffer_id != id; x = x->next)
		;
	if (!x) {
		CUmemGenericAllocationHandle h = 0;
		int fd = -1;
		r = cu.MemRetainAllocationHandle(&h, (void *)(uintptr_t)p);
		if (r == CUDA_SUCCESS) {
			r = cu.MemExportToShareableHandle(
				&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
			cu.MemRelease(h);
		}
		x = r == CUDA_SUCCESS ? calloc(1, sizeof(*x)) : NULL;
		if (!x) {
			pthread_mutex_unlock(&cu.lock);
			if (fd >= 0)
				close(fd);
			slog("GPU memory: exporting CUDA VMM allocation %#llx as a POSIX fd: %s: EFAULT",
			     (unsigned long long)base,
			     r != CUDA_SUCCESS ? cu_str(r) : "out of memory");
			return EFAULT;
		}
		*x = (struct vmm_export){id, fd, 0, vmm_exports};
		vmm_exports = x;
		slog("GPU memory: VMM allocation %#llx (%zu bytes, buffer id %llu) exported as fd %d",
		     (unsigned long long)base, size, id, fd);
	}
	x->refs++;
	copy_ready_locked(ctx, base);
	struct mk_vmm_ref ref = {x->fd, 0, id};
	pthread_mutex_unlock(&cu.lock);
	memset(out, 0, sizeof(*out));
	out->kind = MK_CUDA;
	out->vmm = 1;
	out->cu_dev = ordinal;
	out->alloc_base = base;
	out->alloc_size = size;
	memcpy(out->ipc, &ref, sizeof(ref));
	return 0;
}

void mk_unreg(const struct efasim_mem_info *mi)
{
	if (mi->kind != MK_CUDA)
		return;
	pthread_mutex_lock(&cu.lock);
	for (struct ctx_use **pp = &ctx_uses, *u; (u = *pp); pp = &u->next)
		if (u->alloc_base == mi->alloc_base) {
			*pp = u->next;
			ctx_release_locked(u->ctx);
			free(u);
			break;
		}
	if (!mi->vmm) {
		pthread_mutex_unlock(&cu.lock);
		return;
	}
	struct mk_vmm_ref ref;
	memcpy(&ref, mi->ipc, sizeof(ref));
	for (struct vmm_export **pp = &vmm_exports, *x; (x = *pp); pp = &x->next)
		if (x->buffer_id == ref.buffer_id) {
			if (--x->refs <= 0) {
				*pp = x->next;
				close(x->fd);
				free(x);
			}
			break;
		}
	pthread_mutex_unlock(&cu.lock);
}

/* *verdict (may be NULL): set where a refusal is about the memory itself,
 * whichever way it is registered. */
static int export_range_v(CUdeviceptr p, size_t len, struct efasim_mem_info *out, int *verdict)
{
	CUcontext ctx = NULL;
	int ordinal = -1, v = 0;
	CUdeviceptr base = 0;
	size_t size = 0;
	if (!verdict)
		verdict = &v;
	*verdict = 0;
	int e = cu_describe(p, len, &ctx, &ordinal, &base, &size);
	if (e)
		return e;
	unsigned legacy = 1;
	if (cu.PointerGetAttribute(&legacy, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p) ==
		    CUDA_SUCCESS &&
	    !legacy)
		return export_vmm(p, ctx, ordinal, base, size, out, verdict);
	CUipcMemHandle h;
	pthread_mutex_lock(&cu.lock);
	CUresult r = cu.CtxPushCurrent(ctx);
	if (r == CUDA_SUCCESS) {
		r = cu.IpcGetMemHandle(&h, base);
		CUcontext dummy;
		cu.CtxPopCurrent(&dummy);
	}
	if (r == CUDA_SUCCESS)
		copy_ready_locked(ctx, base);
	pthread_mutex_unlock(&cu.lock);
	if (r != CUDA_SUCCESS) {
		/* e.g. a VMM allocation (cuMemCreate) without a legacy handle */
		slog("GPU memory: cuIpcGetMemHandle(%#llx): %s: not simulated, EFAULT",
		     (unsigned long long)base, cu_str(r));
		return EFAULT;
	}
	memset(out, 0, sizeof(*out));
	out->kind = MK_CUDA;
	out->cu_dev = ordinal;
	out->alloc_base = base;
	out->alloc_size = size;
	_Static_assert(sizeof(h) == sizeof(out->ipc), "CUipcMemHandle is 64 bytes");
	memcpy(out->ipc, &h, sizeof(h));
	return 0;
}

static int export_range(CUdeviceptr p, size_t len, struct efasim_mem_info *out)
{
	return export_range_v(p, len, out, NULL);
}

/* Host pages the pin accepted, but the kernel's pin would not: CUDA managed
 * memory (nvidia-uvm maps it VM_IO | VM_PFNMAP, which pin_user_pages refuses:
 * EFAULT). Asked only where libcuda is in the process. */
int mk_host_refused(const void *addr)
{
	if (!cu.ok && !cu_in_process())
		return 0;
	if (!cu_up())
		return 0;
	unsigned managed = 0;
	if (cu.PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
				   (CUdeviceptr)(uintptr_t)addr) == CUDA_SUCCESS &&
	    managed)
		return EFAULT;
	return 0;
}

int mk_reg_device(const void *addr, size_t len, struct efasim_mem_info *out)
{
	if (!sim.p2p || !cu_in_process() || !cu_up())
		return EFAULT; /* what the host pin said */
	return export_range((CUdeviceptr)(uintptr_t)addr, len, out);
}

/* ibv_reg_dmabuf_mr(pd, offset, len, iova, fd): the NIC maps [offset,
 * offset + len) of the dma-buf. The buffer's device address is what the iova
 * names: libfabric's efa provider passes the device address of the range
 * (efa_mr.c: base_addr + offset, or the buffer's address; efa_hmem.c's probe:
 * the cudaMalloc pointer), and a dma-buf fd does not say where it starts. */
int mk_reg_dmabuf(int fd, uint64_t offset, size_t len, uint64_t iova, struct efasim_mem_info *out)
{
	if (!sim.p2p)
		return EOPNOTSUPP;
	uint64_t size = 0;
	int e = dmabuf_size(fd, &size);
	if (e)
		return e;
	if (!cu_in_process() || !cu_up())
		return EOPNOTSUPP; /* no CUDA in this process: not a CUDA dma-buf */
	if (!len || offset > size || len > size - offset)
		return EINVAL; /* ib_umem_dmabuf_get: offset + len beyond the dma-buf */
	/* The dma-buf itself may start before the allocation (CUDA exports the
	 * enclosing pages of its chunk; efabench aligns down to 64 KiB): only the
	 * registered range must be the allocation's. */
	int verdict = 0;
	e = export_range_v((CUdeviceptr)iova, len, out, &verdict);
	if (e && verdict)
		return e; /* VMM memory not made for GPUDirect RDMA: refused, logged */
	if (e)
		return EOPNOTSUPP; /* the iova is no CUDA device memory: an exporter we do not model */
	return 0;
}

/* An ext-mem CQ's ring, [offset, offset + len) of dma-buf fd: CUDA device
 * memory inside one allocation (its IPC handle exported: another process
 * writes completions into it), found through an MR of that dma-buf. Not
 * checked (cannot be, here): that the range is DMA-contiguous, which the
 * kernel requires ("Non contiguous CQ unsupported"). */
int mk_dmabuf_resolve(int fd, uint64_t offset, uint64_t len, uint64_t *dev,
		      struct efasim_mem_info *out)
{
	uint64_t start = 0;
	int slot;
	struct efasim_mem_info mr_mem;
	struct stat st;
	if (!sim.p2p || fstat(fd, &st) || dmabuf_find(&st, 0, 0, &start, &slot, &mr_mem) ||
	    !cu_in_process() || !cu_up())
		return dmabuf_unresolved(fd, offset);
	int e = export_range((CUdeviceptr)(start + offset), len, out);
	/* the MR's own handle where the ring is in its allocation: another
	 * process then opens that allocation once (its IPC cache is keyed by
	 * the handle's bytes) */
	if (!e && mr_mem.kind == MK_CUDA && mr_mem.alloc_base == out->alloc_base) {
		mk_unreg(out); /* a VMM ring's own export: the MR's stands for it */
		*out = mr_mem;
	}
	if (e) {
		slog("ext-mem CQ: dma-buf fd %d at offset %llu (device address %#llx, %llu bytes) is not CUDA device "
		     "memory inside one allocation: EOPNOTSUPP",
		     fd, (unsigned long long)offset, (unsigned long long)(start + offset),
		     (unsigned long long)len);
		return EOPNOTSUPP;
	}
	*dev = start + offset;
	return 0;
}

int mk_kind_local(const void *addr)
{
	if (!cu.ok) /* no device pointer has been seen by this process */
		return MK_HOST;
	unsigned mtype = 0;
	if (cu.PointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				   (CUdeviceptr)(uintptr_t)addr) == CUDA_SUCCESS &&
	    mtype == CU_MEMORYTYPE_DEVICE)
		return MK_CUDA;
	return MK_HOST;
}

#endif /* EFASIM_HAVE_CUDA */
