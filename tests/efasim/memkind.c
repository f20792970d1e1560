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
 * driver refuses it).
 *
 * This file: the dma-buf records, the host copy and the build without
 * CUDA; memkind_cuda.c and memkind_copy.c the CUDA side (memkind.h). */
#include "memkind.h"

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
int dmabuf_size(int fd, uint64_t *size)
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
int dmabuf_find(const struct stat *st, uint64_t offset, uint64_t len, uint64_t *start, int *slot,
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

int dmabuf_unresolved(int fd, uint64_t offset)
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

int mk_copy(struct mk_ref dst, struct mk_ref src, size_t n)
{
	if (dst.kind != MK_HOST || src.kind != MK_HOST)
		return -1;
	return host_copy(dst, src, n);
}

#endif /* !EFASIM_HAVE_CUDA */

/* Host to host: memmove here, process_vm_readv/writev to another process. */
int host_copy(struct mk_ref dst, struct mk_ref src, size_t n)
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
