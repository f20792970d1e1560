/* efasim: memory kinds. An EFA NIC with GPUDirect RDMA registers CUDA device
 * memory (ibv_reg_mr on a device pointer through the nvidia peer-memory
 * client, or ibv_reg_dmabuf_mr on a CUDA dmabuf) and moves bytes to and from
 * it with no help from either process. The simulator does the same from the
 * initiator's process:
 * - registration records the range's kind; for CUDA memory it exports a legacy
 *   CUDA IPC handle of the allocation (cuIpcGetMemHandle of its base, the
 *   range's offset from cuMemGetAddressRange) into the shared registry;
 * - an initiator that meets another process's CUDA range opens that handle
 *   once (cuIpcOpenMemHandle) and keeps it in a cache;
 * - every byte of the data path goes through mk_copy(), a copy between two
 *   (kind, process, address) places: host to host stays memmove or
 *   process_vm_readv/writev; anything with a CUDA side is a cuMemcpyAsync on a
 *   private non-blocking stream of the memory's context, synchronised before
 *   the caller writes a completion; where the other side is another process's
 *   host memory, the bytes are staged through pinned host memory of this
 *   process (CUDA cannot reach another process's pageable memory).
 * CUDA is reached only through dlopen("libcuda.so.1"): a registration asks it
 * only where the process has loaded libcuda itself (RTLD_NOLOAD; libfabric built
 * with CUDA does, at fi_getinfo), whether the host pin refused the range (is it
 * device memory?) or accepted it (is it managed memory?); a remote CUDA range
 * makes the initiator load it. A process that never loads libcuda never touches
 * CUDA, and a build without cuda.h models host memory only. EFASIM_P2P=0 turns GPU registration off (the device of an
 * instance without GPUDirect: a device pointer fails the pin with EFAULT and
 * dmabuf answers EOPNOTSUPP).
 * CUDA VMM memory (cuMemCreate + cuMemMap: PyTorch's expandable segments,
 * NCCL's and NVSHMEM's buffers) has no legacy IPC handle
 * (CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 0). Its registration is
 * accepted where the allocation was made for GPUDirect RDMA
 * (CUmemAllocationProp.allocFlags.gpuDirectRDMACapable = 1, which CUDA reports
 * as CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE) and refused with EFAULT,
 * logged, where not: "for [cuMemCreate], memory must be explicitly allocated
 * with GPUDirect RDMA support" (NVIDIA, gdrcopy issue #177); the errno of the
 * peer-memory pin (ibv_reg_mr) is that of any GPU range the driver will not
 * pin; that of the dma-buf path is assumed (where CUDA itself refuses the
 * export, cuMemGetHandleForAddressRange, the registration never gets here).
 * To reach it from another process the registering process exports the
 * allocation as a POSIX fd (cuMemRetainAllocationHandle +
 * cuMemExportToShareableHandle, which needs CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
 * in the allocation's requestedHandleTypes: without it the registration is
 * refused, logged, an efasim limitation) and keeps the fd open while an MR
 * of it lives; the initiator takes a copy of that fd with pidfd_getfd(2) (the
 * same ptrace permission process_vm_readv needs, which efasim grants, config.c)
 * and maps the allocation once (cuMemImportFromShareableHandle,
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess), cached by (pid, buffer id).
 * Not modelled: a registered range spanning several VMM allocations (refused:
 * cuMemGetAddressRange's allocation must hold it), several GPUs with
 * different ordinals per process (the handle is opened on the exporter's device
 * ordinal), CUDA managed memory (refused with EFAULT, as the pin of the real
 * driver refuses it). */
#include "sim.h"

#include <dlfcn.h>

int mk_p2p_enabled(void)
{
	return sim.p2p;
}

/* dma-buf files name their exporter in fdinfo ("exp_name:"); their size is
 * where lseek(SEEK_END) lands. Which exporter it is does not matter here:
 * CUDA decides whether the iova is its device memory. EFASIM_TEST_FAKE_DMABUF=1
 * (tests only: no dma-buf exporter on a machine without a GPU) lets a memfd
 * named "efasim-dmabuf" pass for one, of its size. */
static int dmabuf_size(int fd, uint64_t *size)
{
	char path[64], buf[1024];
	if (sim.fake_dmabuf) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t k = readlink(path, buf, sizeof(buf) - 1);
		struct stat st;
		if (k > 0 && (buf[k] = 0, !strncmp(buf, "/memfd:efasim-dmabuf", 20)) && !fstat(fd, &st) && st.st_size > 0) {
			*size = (uint64_t)st.st_size;
			return 0;
		}
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	int f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return EBADF; /* dma_buf_get: no such file */
	ssize_t n = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[n > 0 ? n : 0] = 0;
	char *x = strstr(buf, "exp_name:");
	if (!x)
		return EINVAL; /* not a dma-buf (the kernel: dma_buf_get fails) */
	off_t end = lseek(fd, 0, SEEK_END);
	if (end <= 0) {
		slog("GPU memory: dma-buf fd %d: lseek(SEEK_END) = %lld (%s)", fd, (long long)end, strerror(errno));
		return EINVAL;
	}
	*size = (uint64_t)end;
	return 0;
}

/* ib_umem_dmabuf_get: offset + len overflowing or beyond the dma-buf EINVAL,
 * an fd that is none EBADF, a file that is no dma-buf EINVAL. */
int mk_dmabuf_check(int fd, uint64_t offset, uint64_t len)
{
	if (offset + len < offset)
		return EINVAL;
	uint64_t size = 0;
	int e = dmabuf_size(fd, &size);
	if (e)
		return e;
	return offset + len > size ? EINVAL : 0;
}

/* The dma-bufs this process registered (ibv_reg_dmabuf_mr), one registry
 * for the ext-mem CQs (cq.c) and the completion counters (compcntr.c). A
 * dma-buf fd does not say which device address it covers; the registration's
 * iova does (libfabric passes the device address of the registered range), so
 * the dma-buf starts at iova - offset. Keyed by the dma-buf file (st_dev,
 * st_ino), so another fd of the same dma-buf (dup, SCM_RIGHTS) finds it too; a
 * record counts while its MR is registered (registry slot and key still this
 * process's). */
struct dmabuf_rec {
	dev_t dev;
	ino_t ino;
	uint64_t start;       /* device address of the dma-buf's offset 0 */
	uint64_t offset, len; /* the registered range */
	int slot;
	uint32_t key;
	struct dmabuf_rec *next;
};
static struct dmabuf_rec *dmabufs;
static pthread_mutex_t dmabuf_lock = PTHREAD_MUTEX_INITIALIZER;

void mk_dmabuf_note(int fd, uint64_t offset, uint64_t len, uint64_t iova, int mr_slot, uint32_t key)
{
	struct stat st;
	struct dmabuf_rec *d = malloc(sizeof(*d));
	if (!d || fstat(fd, &st)) {
		free(d);
		return;
	}
	*d = (struct dmabuf_rec){st.st_dev, st.st_ino, iova - offset, offset, len, mr_slot, key, NULL};
	pthread_mutex_lock(&dmabuf_lock);
	d->next = dmabufs;
	dmabufs = d;
	pthread_mutex_unlock(&dmabuf_lock);
}

/* A live MR of this process on the dma-buf of fd (st); with len > 0 one whose
 * registered range covers [offset, offset + len). Its record's start, slot
 * and memory; records of deregistered MRs are dropped on the way. */
static int dmabuf_find(const struct stat *st, uint64_t offset, uint64_t len, uint64_t *start, int *slot,
		       struct efasim_mem_info *mr_mem)
{
	int found = 0;
	pthread_mutex_lock(&dmabuf_lock);
	for (struct dmabuf_rec **pp = &dmabufs, *d; (d = *pp) && !found;) {
		robust_lock(&sim.reg->lock);
		const struct efasim_mr_ent *e = &sim.reg->mrs[d->slot];
		int live = e->used && e->key == d->key && e->pid == sim.pid;
		struct efasim_mem_info mk = e->mk;
		pthread_mutex_unlock(&sim.reg->lock);
		if (!live) {
			*pp = d->next;
			free(d);
			continue;
		}
		if (d->dev == st->st_dev && d->ino == st->st_ino &&
		    (!len || (offset >= d->offset && len <= d->len && offset - d->offset <= d->len - len))) {
			*start = d->start;
			*slot = d->slot;
			*mr_mem = mk;
			found = 1;
		}
		pp = &d->next;
	}
	pthread_mutex_unlock(&dmabuf_lock);
	return found ? 0 : ENOENT;
}

int mk_dmabuf_mr(int fd, uint64_t offset, uint64_t len, int *slot, uint64_t *addr)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		return EBADF;
	int e = mk_dmabuf_check(fd, offset, len);
	if (e)
		return e;
	uint64_t start = 0;
	struct efasim_mem_info mk = {0};
	if (dmabuf_find(&st, offset, len, &start, slot, &mk) || mk.kind != MK_CUDA)
		return EOPNOTSUPP;
	*addr = start + offset;
	return 0;
}

/* The device address of [offset] of dma-buf fd, for the kernel's contiguity
 * check: through an MR of that dma-buf (its iova), or, for the test stand-in
 * (EFASIM_TEST_FAKE_DMABUF's memfd "efasim-dmabuf"), the offset itself: the
 * stand-in is taken as GPU memory that starts on a 2 MiB page. ENOENT when
 * neither (efasim's resolution then refuses it anyway). */
int mk_dmabuf_devaddr(int fd, uint64_t offset, uint64_t *dev)
{
	struct stat st;
	uint64_t start = 0;
	int slot;
	struct efasim_mem_info mk;
	if (fstat(fd, &st))
		return EBADF;
	if (!dmabuf_find(&st, 0, 0, &start, &slot, &mk)) {
		*dev = start + offset;
		return 0;
	}
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t k = sim.fake_dmabuf ? readlink(path, buf, sizeof(buf) - 1) : -1;
	if (k > 0 && (buf[k] = 0, !strncmp(buf, "/memfd:efasim-dmabuf", 20))) {
		*dev = offset;
		return 0;
	}
	return ENOENT;
}

static int dmabuf_unresolved(int fd, uint64_t offset)
{
	struct stat st;
	unsigned long ino = fstat(fd, &st) ? 0 : (unsigned long)st.st_ino;
	slog("ext-mem CQ: dma-buf fd %d (inode %lu), offset %llu: efasim cannot tell which device memory a dma-buf "
	     "covers without an MR of it: register an MR from the same dma-buf fd first (ibv_reg_dmabuf_mr / "
	     "FI_MR_DMABUF; an efasim limitation, real EFA accepts it): EOPNOTSUPP",
	     fd, ino, (unsigned long long)offset);
	return EOPNOTSUPP;
}

#ifndef EFASIM_HAVE_CUDA

int mk_reg_device(const void *addr, size_t len, struct efasim_mem_info *out)
{
	(void)addr, (void)len, (void)out;
	return EFAULT;
}

int mk_host_refused(const void *addr)
{
	(void)addr;
	return 0;
}

void mk_unreg(const struct efasim_mem_info *mi)
{
	(void)mi;
}

int mk_reg_dmabuf(int fd, uint64_t offset, size_t len, uint64_t iova, struct efasim_mem_info *out)
{
	(void)fd, (void)offset, (void)len, (void)iova, (void)out;
	return EOPNOTSUPP; /* built without cuda.h: no exporter known */
}

int mk_kind_local(const void *addr)
{
	(void)addr;
	return MK_HOST;
}

int mk_dmabuf_resolve(int fd, uint64_t offset, uint64_t len, uint64_t *dev, struct efasim_mem_info *out)
{
	(void)len, (void)dev, (void)out;
	return dmabuf_unresolved(fd, offset); /* built without cuda.h: no MR of a dma-buf can exist */
}

static int host_copy(struct mk_ref dst, struct mk_ref src, size_t n);

int mk_copy(struct mk_ref dst, struct mk_ref src, size_t n)
{
	if (dst.kind != MK_HOST || src.kind != MK_HOST)
		return -1;
	return host_copy(dst, src, n);
}

#else

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

static struct {
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
	CUresult (*MemExportToShareableHandle)(void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
					       unsigned long long);
	CUresult (*MemImportFromShareableHandle)(CUmemGenericAllocationHandle *, void *,
						 CUmemAllocationHandleType);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	int vmm; /* all of the above found */
	CUresult (*StreamQuery)(CUstream); /* optional: EFASIM_CUDA_WAIT=query */
	int wait_query;                    /* EFASIM_CUDA_WAIT=query (and cuStreamQuery found) */
	CUresult (*CtxCreate)(CUcontext *, unsigned, CUdevice); /* optional: EFASIM_CUDA_COPY=ownctx */
	int own_mode;          /* EFASIM_CUDA_COPY=ownctx (and cuCtxCreate_v2 found) */
	CUcontext own[16];     /* efasim's own context per device ordinal (own_mode) */
	char own_failed[16];   /* its cuCtxCreate failed (said once): copies stay in the memory's context */
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
} cu = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

enum { STAGE_BYTES = 4 << 20 };

static const char *cu_str(CUresult r)
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
#define SYM(f, name)                                                                                       \
	do {                                                                                               \
		*(void **)&cu.f = dlsym(h, name);                                                          \
		if (!cu.f) {                                                                               \
			slog("GPU memory: libcuda.so.1 lacks %s", name);                                  \
			return;                                                                            \
		}                                                                                          \
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
	cu.vmm = cu.MemRetainAllocationHandle && cu.MemExportToShareableHandle && cu.MemImportFromShareableHandle &&
		 cu.MemRelease && cu.MemAddressReserve && cu.MemAddressFree && cu.MemMap && cu.MemUnmap &&
		 cu.MemSetAccess;
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
static int cu_up(void)
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
static CUstream stream_of(CUcontext ctx)
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
static int stage_locked(CUcontext ctx)
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
	slog("GPU memory: EFASIM_CUDA_COPY=ownctx: copies of device %d's memory in efasim's own context %p", (int)dev,
	     (void *)c);
	return c;
}

/* The context efasim's copy of ctx's memory is made in. */
static CUcontext copy_ctx_locked(CUcontext ctx)
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
			(void)stream_of(o); /* its stream too, here rather than in the engine's thread */
	}
	if (!stream_of(ctx))
		return; /* no entry to hold the staging buffer's context: made at the first copy */
	(void)stage_locked(ctx);
	struct ctx_use *u = malloc(sizeof(*u));
	if (!u)
		return; /* then never released: what every context got before */
	cu.streams[slot_of(ctx)].refs++; /* stream_of made the entry */
	*u = (struct ctx_use){alloc_base, ctx, ctx_uses};
	ctx_uses = u;
}

static CUcontext primary_of(int ordinal);

/* Is ctx its device's primary context? Asked only where the primary is
 * active already (cuDevicePrimaryCtxGetState), so that asking creates none. */
static int is_primary_locked(CUcontext ctx)
{
	CUdevice dev = 0;
	unsigned flags = 0;
	int active = 0;
	if (ctx_device_locked(ctx, &dev) || cu.PrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active)
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
	slog("GPU memory: the last registration in context %p is gone: its stream%s released", (void *)ctx,
	     stage ? " and the staging buffer" : "");
	for (int k = 0; stage && k < cu.nstreams; k++)
		if (cu.streams[k].refs > 0 && !stage_locked(cu.streams[k].ctx))
			break;
}

static CUcontext primary_of(int ordinal)
{
	if (ordinal < 0 || ordinal >= 16)
		return NULL;
	if (!cu.primary[ordinal]) {
		CUdevice d;
		if (cu.DeviceGet(&d, ordinal) != CUDA_SUCCESS || cu.PrimaryCtxRetain(&cu.primary[ordinal], d) != CUDA_SUCCESS)
			return NULL;
	}
	return cu.primary[ordinal];
}

/* The context whose stream copies p: the one CUDA names for it, else (VMM
 * memory belongs to no context) the primary context of its device; with
 * cu.lock. */
static int ctx_of(CUdeviceptr p, CUcontext *ctx)
{
	int ordinal = -1;
	*ctx = NULL;
	if (cu.PointerGetAttribute(ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p) == CUDA_SUCCESS && *ctx)
		return 0;
	if (cu.PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) != CUDA_SUCCESS)
		return -1;
	*ctx = primary_of(ordinal);
	return *ctx ? 0 : -1;
}

/* What the driver says of a device pointer: its context, device, allocation. */
static int cu_describe(CUdeviceptr p, size_t len, CUcontext *ctx, int *ordinal, CUdeviceptr *base, size_t *size)
{
	unsigned mtype = 0, managed = 0;
	if (cu.PointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS ||
	    mtype != CU_MEMORYTYPE_DEVICE)
		return EFAULT; /* host, pinned host (the pin handles that) or unknown to CUDA */
	if (cu.PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p) == CUDA_SUCCESS && managed)
		return EFAULT; /* the GPU driver's pin refuses managed memory */
	if (cu.PointerGetAttribute(ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) != CUDA_SUCCESS ||
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
	CUresult r = cu.PointerGetAttribute(&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p);
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
		     r != CUDA_SUCCESS ? cu_str(r) : (!cu.vmm ? "; libcuda lacks the VMM export API" : ""));
		*verdict = 0;
		return EFAULT;
	}
	if ((r = cu.PointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p)) != CUDA_SUCCESS) {
		slog("GPU memory: cuPointerGetAttribute BUFFER_ID (%#llx): %s: EFAULT", (unsigned long long)p,
		     cu_str(r));
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
			r = cu.MemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
			cu.MemRelease(h);
		}
		x = r == CUDA_SUCCESS ? calloc(1, sizeof(*x)) : NULL;
		if (!x) {
			pthread_mutex_unlock(&cu.lock);
			if (fd >= 0)
				close(fd);
			slog("GPU memory: exporting CUDA VMM allocation %#llx as a POSIX fd: %s: EFAULT",
			     (unsigned long long)base, r != CUDA_SUCCESS ? cu_str(r) : "out of memory");
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
	if (cu.PointerGetAttribute(&legacy, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p) == CUDA_SUCCESS &&
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
		slog("GPU memory: cuIpcGetMemHandle(%#llx): %s: not simulated, EFAULT", (unsigned long long)base,
		     cu_str(r));
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
	if (cu.PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)(uintptr_t)addr) ==
		    CUDA_SUCCESS &&
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
int mk_dmabuf_resolve(int fd, uint64_t offset, uint64_t len, uint64_t *dev, struct efasim_mem_info *out)
{
	uint64_t start = 0;
	int slot;
	struct efasim_mem_info mr_mem;
	struct stat st;
	if (!sim.p2p || fstat(fd, &st) || dmabuf_find(&st, 0, 0, &start, &slot, &mr_mem) || !cu_in_process() ||
	    !cu_up())
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
		     fd, (unsigned long long)offset, (unsigned long long)(start + offset), (unsigned long long)len);
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
	if (cu.PointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)addr) ==
		    CUDA_SUCCESS &&
	    mtype == CU_MEMORYTYPE_DEVICE)
		return MK_CUDA;
	return MK_HOST;
}

/* Opened IPC handles of other processes: (pid, handle) -> address here. */
struct ipc_open {
	pid_t pid;
	int vmm; /* h is a struct mk_vmm_ref: keyed by its buffer id */
	uint8_t h[64];
	CUdeviceptr base;
	CUdeviceptr alloc_base; /* the allocation in its process when opened */
	size_t alloc_size;
	struct ipc_open *next;
};
static struct ipc_open *ipc_cache;

/* Another process's VMM allocation mapped here: its fd taken with
 * pidfd_getfd(2), imported, mapped at an address of this process, made
 * read-write for the device; with cu.lock. */
static int import_vmm(pid_t pid, const struct efasim_mem_info *m, CUcontext ctx, CUdeviceptr *out)
{
	struct mk_vmm_ref ref;
	memcpy(&ref, m->ipc, sizeof(ref));
	if (!cu.vmm) {
		slog("GPU memory: libcuda lacks the VMM import API (cuMemImportFromShareableHandle): cannot reach "
		     "pid %d's VMM memory",
		     (int)pid);
		return -1;
	}
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), fd = -1;
	if (pfd >= 0) {
		fd = (int)syscall(SYS_pidfd_getfd, pfd, ref.fd, 0);
		int e = errno;
		close(pfd);
		errno = e;
	}
	if (fd < 0) {
		slog("GPU memory: pidfd_%s(pid %d, fd %d) for its VMM allocation: %s", pfd < 0 ? "open" : "getfd",
		     (int)pid, ref.fd, strerror(errno));
		return -1;
	}
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr d = 0;
	size_t size = m->alloc_size;
	const char *what = "cuCtxPushCurrent";
	CUresult r = cu.CtxPushCurrent(ctx);
	if (r == CUDA_SUCCESS) {
		what = "cuMemImportFromShareableHandle";
		r = cu.MemImportFromShareableHandle(&h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
		if (r == CUDA_SUCCESS) {
			what = "cuMemAddressReserve";
			if ((r = cu.MemAddressReserve(&d, size, 0, 0, 0)) == CUDA_SUCCESS) {
				what = "cuMemMap";
				if ((r = cu.MemMap(d, size, 0, h, 0)) == CUDA_SUCCESS) {
					CUmemAccessDesc a;
					memset(&a, 0, sizeof(a));
					a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
					a.location.id = m->cu_dev;
					a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
					what = "cuMemSetAccess";
					if ((r = cu.MemSetAccess(d, size, &a, 1)) != CUDA_SUCCESS)
						cu.MemUnmap(d, size);
				}
				if (r != CUDA_SUCCESS)
					cu.MemAddressFree(d, size);
			}
			cu.MemRelease(h); /* the mapping holds the allocation */
		}
		CUcontext dummy;
		cu.CtxPopCurrent(&dummy);
	}
	close(fd);
	if (r != CUDA_SUCCESS) {
		slog("GPU memory: mapping pid %d's VMM allocation (%llu bytes): %s: %s", (int)pid,
		     (unsigned long long)size, what, cu_str(r));
		return -1;
	}
	*out = d;
	return 0;
}

static unsigned long long vmm_id(const struct efasim_mem_info *m)
{
	struct mk_vmm_ref ref;
	memcpy(&ref, m->ipc, sizeof(ref));
	return (unsigned long long)ref.buffer_id;
}

/* The address in this process of another process's CUDA range: its
 * allocation from the MR's registry slot, or from r->mi (an ext-mem CQ ring's
 * header); with cu.lock. */
static int resolve_remote(const struct mk_ref *r, CUdeviceptr *p, CUcontext *ctx)
{
	struct efasim_mem_info m;
	int ok;
	if (r->mi) {
		m = *r->mi;
		ok = m.kind == MK_CUDA;
	} else {
		robust_lock(&sim.reg->lock);
		const struct efasim_mr_ent *e = r->mr >= 0 && r->mr < EFASIM_MAX_MRS ? &sim.reg->mrs[r->mr] : NULL;
		ok = e && e->used && e->pid == r->pid && e->mk.kind == MK_CUDA;
		if (ok)
			m = e->mk;
		pthread_mutex_unlock(&sim.reg->lock);
	}
	if (!ok || r->addr < m.alloc_base || r->addr - m.alloc_base >= m.alloc_size)
		return -1;
	*ctx = primary_of(m.cu_dev);
	if (!*ctx)
		return -1;
	struct ipc_open *o;
	for (o = ipc_cache; o; o = o->next)
		if (o->pid == r->pid && o->vmm == m.vmm &&
		    (m.vmm ? !memcmp(o->h + 8, m.ipc + 8, 8) /* the buffer id */ : !memcmp(o->h, m.ipc, sizeof(o->h))))
			break;
	if (o && (o->alloc_base != m.alloc_base || o->alloc_size != m.alloc_size))
		slog("GPU memory: pid %d's %s %#llx (%zu bytes) found opened as %#llx (%zu bytes) at %#llx here",
		     (int)r->pid, m.vmm ? "VMM allocation" : "allocation", (unsigned long long)m.alloc_base,
		     (size_t)m.alloc_size, (unsigned long long)o->alloc_base, o->alloc_size,
		     (unsigned long long)o->base);
	if (!o && m.vmm) {
		CUdeviceptr base = 0;
		if (import_vmm(r->pid, &m, *ctx, &base))
			return -1;
		slog("GPU memory: pid %d's VMM allocation %#llx (%zu bytes, buffer id %llu) mapped here at %#llx",
		     (int)r->pid, (unsigned long long)m.alloc_base, (size_t)m.alloc_size,
		     (unsigned long long)vmm_id(&m), (unsigned long long)base);
		o = calloc(1, sizeof(*o));
		if (!o)
			return -1;
		o->pid = r->pid;
		o->vmm = 1;
		memcpy(o->h, m.ipc, sizeof(o->h));
		o->base = base;
		o->alloc_base = m.alloc_base;
		o->alloc_size = m.alloc_size;
		o->next = ipc_cache;
		ipc_cache = o;
	}
	if (!o) {
		CUipcMemHandle h;
		memcpy(&h, m.ipc, sizeof(h));
		CUdeviceptr base = 0;
		CUresult res = cu.CtxPushCurrent(*ctx);
		if (res == CUDA_SUCCESS) {
			res = cu.IpcOpenMemHandle(&base, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
			CUcontext dummy;
			cu.CtxPopCurrent(&dummy);
		}
		if (res != CUDA_SUCCESS) {
			slog("GPU memory: cuIpcOpenMemHandle (pid %d): %s", (int)r->pid, cu_str(res));
			return -1;
		}
		o = calloc(1, sizeof(*o));
		if (!o)
			return -1;
		o->pid = r->pid;
		memcpy(o->h, m.ipc, sizeof(o->h));
		o->base = base;
		o->alloc_base = m.alloc_base;
		o->alloc_size = m.alloc_size;
		o->next = ipc_cache;
		ipc_cache = o;
	}
	*p = o->base + (r->addr - m.alloc_base);
	return 0;
}

/* A CUDA-reachable address for r; host memory of another process is not. */
static int resolve(const struct mk_ref *r, CUdeviceptr *p, CUcontext *ctx)
{
	*ctx = NULL;
	if (r->kind == MK_HOST) {
		*p = r->addr; /* pageable or pinned host memory of this process */
		return r->pid == sim.pid ? 0 : 1;
	}
	if (r->pid != sim.pid)
		return resolve_remote(r, p, ctx);
	*p = r->addr;
	return ctx_of(r->addr, ctx);
}

/* The copy's end, before the caller writes the completion: cuStreamSynchronize,
 * or with EFASIM_CUDA_WAIT=query (a diagnostic: issue 47's blocking on-stream
 * hang, where the engine thread never came back from cuStreamSynchronize)
 * cuStreamQuery polled between sched_yield()s, with one logged line per
 * 5 s the copy is still not done (EFASIM_LOG). */
static CUresult copy_wait(CUstream s, size_t n)
{
	if (!cu.wait_query)
		return cu.StreamSynchronize(s);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long said = 0;
	CUresult r;
	while ((r = cu.StreamQuery(s)) == CUDA_ERROR_NOT_READY) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		long waited = (long)(t.tv_sec - t0.tv_sec);
		if (waited >= 5 && waited / 5 > said) {
			said = waited / 5;
			slog("GPU memory: a %zu-byte copy on efasim's stream %p is not done after %ld s "
			     "(cuStreamQuery: not ready)", n, (void *)s, waited);
		}
	}
	return r;
}

static int cu_memcpy(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	CUstream s = stream_of(ctx);
	if (!s || cu.CtxPushCurrent(ctx) != CUDA_SUCCESS)
		return -1;
	CUresult r = cu.MemcpyAsync(dst, src, n, s);
	if (r == CUDA_SUCCESS)
		r = copy_wait(s, n);
	CUcontext dummy;
	cu.CtxPopCurrent(&dummy);
	if (r != CUDA_SUCCESS) {
		slog("GPU memory: copy of %zu bytes %#llx -> %#llx: %s", n, (unsigned long long)src,
		     (unsigned long long)dst, cu_str(r));
		return -1;
	}
	return 0;
}

static int host_copy(struct mk_ref dst, struct mk_ref src, size_t n);

int mk_copy(struct mk_ref dst, struct mk_ref src, size_t n)
{
	if (!n)
		return 0;
	if (dst.kind == MK_HOST && src.kind == MK_HOST)
		return host_copy(dst, src, n);
	if (!cu_up())
		return -1;
	pthread_mutex_lock(&cu.lock);
	CUdeviceptr d = 0, s = 0;
	CUcontext dctx = NULL, sctx = NULL;
	int rd = resolve(&dst, &d, &dctx), rs = resolve(&src, &s, &sctx);
	int ret = -1;
	if (rd < 0 || rs < 0) {
		slog("GPU memory: cannot reach the %s of a %zu-byte copy (%s pid %d at %#llx)",
		     rd < 0 ? "destination" : "source", n, (rd < 0 ? dst.kind : src.kind) == MK_HOST ? "host" : "CUDA",
		     (int)(rd < 0 ? dst.pid : src.pid), (unsigned long long)(rd < 0 ? dst.addr : src.addr));
		goto out;
	}
	CUcontext ctx = copy_ctx_locked(dctx ? dctx : sctx);
	if (!rd && !rs) {
		ret = cu_memcpy(ctx, d, s, n);
		goto out;
	}
	/* one side is another process's host memory: stage through pinned memory */
	if (stage_locked(ctx)) {
		slog("GPU memory: no staging buffer (context %p) for %zu bytes %s pid %d's host memory", (void *)ctx,
		     n, rd ? "to" : "from", (int)(rd ? dst.pid : src.pid));
		goto out;
	}
	for (size_t o = 0; o < n; o += cu.stage_len) {
		size_t k = n - o < cu.stage_len ? n - o : cu.stage_len;
		struct iovec l = {cu.stage, k};
		ssize_t v = (ssize_t)k;
		if (rd) { /* device -> stage -> remote host */
			struct iovec r = {(void *)(uintptr_t)(d + o), k};
			if (cu_memcpy(ctx, (CUdeviceptr)(uintptr_t)cu.stage, s + o, k) ||
			    (v = process_vm_writev(dst.pid, &l, 1, &r, 1, 0)) != (ssize_t)k) {
				if (v != (ssize_t)k)
					slog("GPU memory: process_vm_writev of %zu staged bytes to pid %d at %#llx: %s", k,
					     (int)dst.pid, (unsigned long long)(d + o), v < 0 ? strerror(errno) : "short");
				goto out;
			}
		} else { /* remote host -> stage -> device */
			struct iovec r = {(void *)(uintptr_t)(s + o), k};
			if ((v = process_vm_readv(src.pid, &l, 1, &r, 1, 0)) != (ssize_t)k ||
			    cu_memcpy(ctx, d + o, (CUdeviceptr)(uintptr_t)cu.stage, k)) {
				if (v != (ssize_t)k)
					slog("GPU memory: process_vm_readv of %zu bytes from pid %d at %#llx: %s", k,
					     (int)src.pid, (unsigned long long)(s + o), v < 0 ? strerror(errno) : "short");
				goto out;
			}
		}
	}
	ret = 0;
out:
	pthread_mutex_unlock(&cu.lock);
	return ret;
}

#endif /* EFASIM_HAVE_CUDA */

/* Host to host: memmove here, process_vm_readv/writev to another process. */
static int host_copy(struct mk_ref dst, struct mk_ref src, size_t n)
{
	if (dst.pid == sim.pid && src.pid == sim.pid) {
		memmove((void *)(uintptr_t)dst.addr, (const void *)(uintptr_t)src.addr, n);
		return 0;
	}
	struct iovec a = {(void *)(uintptr_t)(dst.pid == sim.pid ? dst.addr : src.addr), n};
	struct iovec b = {(void *)(uintptr_t)(dst.pid == sim.pid ? src.addr : dst.addr), n};
	if (dst.pid != sim.pid && src.pid != sim.pid)
		return -1;
	ssize_t k = dst.pid == sim.pid ? process_vm_readv(src.pid, &a, 1, &b, 1, 0)
				       : process_vm_writev(dst.pid, &a, 1, &b, 1, 0);
	return k == (ssize_t)n ? 0 : -1;
}
