/* efasim's memory kinds, the copy with CUDA (memkind.c says what it models):
 * another process's CUDA memory opened here (a legacy IPC handle, or a VMM
 * allocation's fd through pidfd_getfd), cached by (pid, handle), and
 * mk_copy, the one copy of the data path, between any two (kind, process,
 * address) places, on memkind_cuda.c's streams. */
#include "memkind.h"

#ifdef EFASIM_HAVE_CUDA

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
		slog("GPU memory: pidfd_%s(pid %d, fd %d) for its VMM allocation: %s",
		     pfd < 0 ? "open" : "getfd", (int)pid, ref.fd, strerror(errno));
		return -1;
	}
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr d = 0;
	size_t size = m->alloc_size;
	const char *what = "cuCtxPushCurrent";
	CUresult r = cu.CtxPushCurrent(ctx);
	if (r == CUDA_SUCCESS) {
		what = "cuMemImportFromShareableHandle";
		r = cu.MemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
						    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
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
		const struct efasim_mr_ent *e =
			r->mr >= 0 && r->mr < EFASIM_MAX_MRS ? &sim.reg->mrs[r->mr] : NULL;
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
		    (m.vmm ? !memcmp(o->h + 8, m.ipc + 8, 8) /* the buffer id */
			   : !memcmp(o->h, m.ipc, sizeof(o->h))))
			break;
	if (o && (o->alloc_base != m.alloc_base || o->alloc_size != m.alloc_size))
		slog("GPU memory: pid %d's %s %#llx (%zu bytes) found opened as %#llx (%zu bytes) at %#llx here",
		     (int)r->pid, m.vmm ? "VMM allocation" : "allocation",
		     (unsigned long long)m.alloc_base, (size_t)m.alloc_size,
		     (unsigned long long)o->alloc_base, o->alloc_size, (unsigned long long)o->base);
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
			slog("GPU memory: cuIpcOpenMemHandle (pid %d): %s", (int)r->pid,
			     cu_str(res));
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
			     "(cuStreamQuery: not ready)",
			     n, (void *)s, waited);
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
		     rd < 0 ? "destination" : "source", n,
		     (rd < 0 ? dst.kind : src.kind) == MK_HOST ? "host" : "CUDA",
		     (int)(rd < 0 ? dst.pid : src.pid),
		     (unsigned long long)(rd < 0 ? dst.addr : src.addr));
		goto out;
	}
	CUcontext ctx = copy_ctx_locked(dctx ? dctx : sctx);
	if (!rd && !rs) {
		ret = cu_memcpy(ctx, d, s, n);
		goto out;
	}
	/* one side is another process's host memory: stage through pinned memory */
	if (stage_locked(ctx)) {
		slog("GPU memory: no staging buffer (context %p) for %zu bytes %s pid %d's host memory",
		     (void *)ctx, n, rd ? "to" : "from", (int)(rd ? dst.pid : src.pid));
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
					slog("GPU memory: process_vm_writev of %zu staged bytes to pid %d at %#llx: %s",
					     k, (int)dst.pid, (unsigned long long)(d + o),
					     v < 0 ? strerror(errno) : "short");
				goto out;
			}
		} else { /* remote host -> stage -> device */
			struct iovec r = {(void *)(uintptr_t)(s + o), k};
			if ((v = process_vm_readv(src.pid, &l, 1, &r, 1, 0)) != (ssize_t)k ||
			    cu_memcpy(ctx, d + o, (CUdeviceptr)(uintptr_t)cu.stage, k)) {
				if (v != (ssize_t)k)
					slog("GPU memory: process_vm_readv of %zu bytes from pid %d at %#llx: %s",
					     k, (int)src.pid, (unsigned long long)(s + o),
					     v < 0 ? strerror(errno) : "short");
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
